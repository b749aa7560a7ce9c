"""`nanograd minimize --data`: a loss per row, its mean minimized over the other inputs, on data
the tests write: a logistic regression against SciPy's optimum, and a two-layer network
written as a program against `nn.MLP` trained with `nn.SGD`, step for step."""

from __future__ import annotations

import json
import math
import random

import pytest

import nanograd_cli
from nanograd_cli import Value, nn
from nanograd_cli.errors import InputError

from .helpers import in_process, nanograd

LOGISTIC = "z = w1*x1 + w2*x2 + b\nsoftplus(z) - y*z  # the logistic loss, stable for any z\n"


def logistic_rows(n: int = 300, seed: int = 3) -> list[tuple[float, float, float]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        x1, x2 = rng.gauss(0, 1), rng.gauss(0, 1)
        p = 1 / (1 + math.exp(-(1.5 * x1 - 2 * x2 + 0.3)))
        rows.append((x1, x2, 1.0 if rng.random() < p else 0.0))
    return rows


def write(path, header: str, rows) -> str:
    path.write_text(header + "\n" + "".join(",".join(map(repr, r)) + "\n" for r in rows))
    return str(path)


@pytest.mark.slow
def test_logistic_regression_reaches_scipys_optimum(tmp_path):
    import numpy as np
    from scipy.optimize import minimize

    rows = logistic_rows()
    data = write(tmp_path / "d.csv", "x1,x2,y", rows)
    (tmp_path / "loss.txt").write_text(LOGISTIC)
    done = in_process(
        "minimize", str(tmp_path / "loss.txt"), "--data", data, "--w1", "0", "--w2", "0",
        "--b", "0", "--lr", "0.1", "--steps", "5000", "--format", "json",
    )  # fmt: skip
    result = json.loads(done.stdout)
    assert (done.returncode, result["converged"]) == (0, True)
    x = np.array([r[:2] for r in rows])
    y = np.array([r[2] for r in rows])

    def loss(p):
        z = x @ p[:2] + p[2]
        return np.mean(np.logaddexp(0, z) - y * z)

    best = minimize(loss, [0, 0, 0], method="BFGS", options={"gtol": 1e-12}).x
    found = [result["inputs"][n] for n in ("w1", "w2", "b")]
    assert found == pytest.approx(list(best), abs=1e-6)
    assert result["value"] == pytest.approx(loss(best), rel=1e-12)
    assert set(result["inputs"]) == {"w1", "w2", "b"}  # the columns are data, not moved


def moons(n: int = 24, seed: int = 5) -> list[tuple[float, float, float]]:
    """Two interleaved half circles, labelled -1 and 1, with a little noise."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        t = math.pi * i / (n // 2 - 1) if i < n // 2 else math.pi * (i - n // 2) / (n // 2 - 1)
        upper = i < n // 2
        x1 = math.cos(t) if upper else 1 - math.cos(t)
        x2 = math.sin(t) if upper else 0.5 - math.sin(t)
        rows.append((x1 + rng.gauss(0, 0.05), x2 + rng.gauss(0, 0.05), 1.0 if upper else -1.0))
    return rows


def network_source(hidden: int) -> str:
    """nn.MLP(2, [hidden, 1])'s forward pass and the squared error, as a program."""
    lines = [f"h{j} = tanh(b{j} + w{j}_1*x1 + w{j}_2*x2)" for j in range(hidden)]
    out = " + ".join(f"v{j}*h{j}" for j in range(hidden))
    return "\n".join([*lines, f"out = c + {out}", "(out - y)**2"]) + "\n"


def test_a_network_written_as_a_program_trains_as_nn_mlp_does(tmp_path):
    hidden, steps, lr = 4, 25, 0.2
    rows = moons()
    model = nn.MLP(2, [hidden, 1], seed=11)
    first, last = model.layers
    names = {}
    for j, neuron in enumerate(first.neurons):
        names.update({f"w{j}_1": neuron.w[0], f"w{j}_2": neuron.w[1], f"b{j}": neuron.b})
    (output,) = last.neurons
    names.update({f"v{j}": w for j, w in enumerate(output.w)} | {"c": output.b})
    starts = [f"--var={name}={value.data!r}" for name, value in names.items()]
    optimizer = nn.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        loss = sum(((model([x1, x2])[0] - y) ** 2 for x1, x2, y in rows), Value(0.0))
        (loss * (1 / len(rows))).backward()
        optimizer.step()
    (tmp_path / "net.txt").write_text(network_source(hidden))
    done = in_process(
        "minimize", str(tmp_path / "net.txt"), "--data", write(tmp_path / "m.csv", "x1,x2,y", rows),
        *starts, "--method", "sgd", "--lr", repr(lr), "--steps", str(steps), "--format", "json",
    )  # fmt: skip
    result = json.loads(done.stdout)
    # a fixed number of steps, as nn trains: the gradient is not yet small, which is a note
    assert (done.returncode, result["steps"], result["converged"]) == (0, steps, False)
    assert done.stderr.startswith(f"note: did not converge: after {steps} steps the gradient")
    for name, value in names.items():
        assert result["inputs"][name] == pytest.approx(value.data, rel=1e-9, abs=1e-12), name


def test_batches_take_n_rows_a_step_in_an_order_the_seed_repeats(tmp_path):
    data = write(tmp_path / "d.csv", "x1,x2,y", logistic_rows(100))
    (tmp_path / "loss.txt").write_text(LOGISTIC)
    run = [
        "minimize", str(tmp_path / "loss.txt"), "--data", data, "--w1", "0", "--w2", "0",
        "--b", "0", "--batch", "10", "--steps", "40", "--format", "json",
    ]  # fmt: skip
    one, again = (json.loads(nanograd(*run, "--seed", "4").stdout) for _ in range(2))
    other = json.loads(in_process(*run, "--seed", "5").stdout)
    assert one == again and one["inputs"] != other["inputs"]
    # the value reported is the loss over every row, not the last batch's: at a start that is
    # a minimum by a loose tolerance, with and without batches
    at_start = [*run[:4], "--w1", "1", "--w2", "0", "--b", "0", "--tol", "1e9", "--format", "json"]
    full = json.loads(in_process(*at_start).stdout)
    batched = json.loads(in_process(*at_start, "--batch", "10", "--seed", "4").stdout)
    assert (batched["steps"], batched["value"]) == (0, full["value"])


@pytest.mark.parametrize("batch", ["1", "2", "3"])
def test_batches_stop_where_the_loss_over_every_row_has_converged(tmp_path, batch):
    """A batch's gradient can be small (one row fitted exactly) long before the gradient over
    every row is: the descent goes on until that one is within --tol, and says converged."""
    data = write(tmp_path / "line.csv", "x,y", [(0, 1), (1, 3), (2, 5), (3, 7)])
    done = in_process(
        "minimize", "(a*x + b - y)**2", "--data", data, "--a", "0", "--b", "0", "--lr", "0.05",
        "--batch", batch, "--seed", "1", "--format", "json",
    )  # fmt: skip
    result = json.loads(done.stdout)
    assert (done.returncode, done.stderr, result["converged"]) == (0, "", True)
    assert result["gradient_norm"] <= 1e-8 and result["steps"] < 10000
    assert result["inputs"] == pytest.approx({"a": 2.0, "b": 1.0}, rel=1e-6)


def test_data_format_is_the_format_whatever_the_extension(tmp_path):
    """--data-format names the format of --data FILE, for fit and minimize, over what its
    extension says (a CSV file named .jsonl)."""
    data = write(tmp_path / "rows.jsonl", "x,y", [(1, 2), (2, 4), (3, 6)])
    fitted = in_process("fit", "a*x", "--data", data, "--a", "1", "--data-format", "csv",
                      "--format", "json")  # fmt: skip
    assert (fitted.returncode, fitted.stderr) == (0, "")
    assert json.loads(fitted.stdout)["parameters"]["a"] == pytest.approx(2.0)
    descended = in_process("minimize", "(a*x - y)**2", "--data", data, "--a", "1",
                         "--data-format", "csv", "--lr", "0.1", "--format", "json")  # fmt: skip
    assert json.loads(descended.stdout)["inputs"]["a"] == pytest.approx(2.0)
    refused = in_process("fit", "a*x", "--data", data, "--a", "1")  # read as JSON Lines
    assert refused.returncode == 2 and "not JSON" in refused.stderr


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--y", "1"], "y is a column of the data: give no start value for it"),
        (["--batch", "0"], "Invalid value for '--batch': 0 is not at least 1"),
    ],
)
def test_bad_training_input(tmp_path, options, message):
    data = write(tmp_path / "d.csv", "x1,x2,y", logistic_rows(10))
    (tmp_path / "loss.txt").write_text(LOGISTIC)
    done = in_process(
        "minimize", str(tmp_path / "loss.txt"), "--data", data, "--w1", "0", "--w2", "0",
        "--b", "0", *options,
    )  # fmt: skip
    assert (done.returncode, done.stderr.splitlines()[0]) == (2, f"error: {message}")


def test_batch_without_data_is_refused():
    done = in_process("minimize", "x*x", "--x", "1", "--batch", "4")
    assert (done.returncode, done.stderr) == (
        2,
        "error: --batch, --data-format and --drop-nan are for the rows of --data FILE\n",
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"batch": 3}, "batch and drop_nan are for the rows of data='FILE'"),
        ({"drop_nan": True}, "batch and drop_nan are for the rows of data='FILE'"),
        ({"seed": 3}, "seed orders the batches of batch='N': without batches it does nothing"),
    ],
)
def test_python_refuses_the_options_for_data_without_data_as_the_command_line_does(
    options, message
):
    with pytest.raises(InputError) as raised:
        nanograd_cli.minimize("(x - 3)**2", x=0, lr=0.1, **options)
    assert str(raised.value) == message
