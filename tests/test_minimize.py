"""`minimize` at a point: the compiled descent, the loop on the engine and the loop as it was
written before either (Values and the optimizers' `step`), step for step the same bits."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nanograd_cli
from nanograd_cli import _api as api
from nanograd_cli import parse
from nanograd_cli._descent import OPTIMIZERS, PointLoss, descent_source, not_finite
from nanograd_cli._descent import minimize as descend
from nanograd_cli.engine import Value
from nanograd_cli.errors import Diverged, Interrupted, MissingInputs, NanogradError
from nanograd_cli.results import Minimum

from .helpers import default_signals, expressions, in_process


def reference(
    program, start, moving, steps, lr, optimizer, tol, on_point=None, on_step=None
) -> Minimum:
    """minimize's loop as it was: a Value per parameter, the engine, the optimizer's step."""
    point = {name: Value(value) for name, value in start.items()}
    names = list(start if moving is None else moving)
    update = OPTIMIZERS[optimizer]([point[name] for name in names], lr=lr)
    taken = 0
    reached = None
    try:
        while True:
            now = {n: v.data for n, v in point.items()}
            result = program.gradients(now)
            value = result.result.data
            grads = {n: node.grad for n, node in result.inputs.items()}
            moved = {n: grads[n] for n in names}
            norm = math.hypot(*moved.values())
            if not math.isfinite(value) or not math.isfinite(norm):
                raise not_finite(value, moved, taken, reached)
            reached = Minimum(value, now, grads, norm, taken, norm <= tol)
            if on_step:
                on_step(taken, value)
            if on_point:
                on_point(now, value)
            if reached.converged or taken == steps:
                return reached
            for name, node in point.items():
                node.grad = grads[name]
            update.step()
            taken += 1
    except KeyboardInterrupt:
        if reached is None:
            raise
        raise Interrupted(
            f"interrupted at step {reached.steps}: the output is the point reached",
            dataclasses.replace(reached, interrupted=True),
        ) from None


def outcome(run) -> tuple:
    """What a descent gives, as bits: its result and every point visited, or its error (and
    the point reached, for Ctrl-C)."""
    visited: list = []
    try:
        result = run(lambda point, value: visited.append((dict(point), value)))
    except NanogradError as error:
        reached = repr(getattr(error, "reached", None))
        return ("error", type(error).__name__, str(error), reached, repr(visited))
    return (repr(result), repr(visited))


def all_three(
    program, start, moving=None, steps=60, lr=0.05, optimizer="adam", tol=1e-8, on_step=None
):
    """The reference loop, the engine's and the compiled descent, as outcomes."""
    settings = (steps, lr, optimizer, tol)

    def ours(evaluations):
        return lambda on_point: descend(
            PointLoss(program, evaluations), start, moving, *settings, on_step, on_point
        )

    return (
        outcome(lambda on_point: reference(program, start, moving, *settings, on_point, on_step)),
        outcome(ours(1)),  # too few evaluations to compile: the engine
        outcome(ours(10**9)),
    )


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    expressions(),
    st.sampled_from(sorted(OPTIMIZERS)),
    st.sampled_from([0.001, 0.05, 0.3, 3.0]),
    st.integers(0, 40),
    st.sampled_from([0.0, 1e-8, 0.5]),
    st.data(),
)
def test_compiled_descent_gives_the_loops_bits(source, optimizer, lr, steps, tol, data):
    program = parse(source)
    start = {n: data.draw(st.floats(-2, 2), label=n) for n in program.inputs}
    moving = None
    if program.inputs and data.draw(st.booleans(), label="some"):
        moving = data.draw(
            st.lists(st.sampled_from(program.inputs), min_size=1, unique=True), label="moving"
        )
    reference_outcome, engine, compiled = all_three(
        program, start, moving, steps, lr, optimizer, tol
    )
    assert engine == reference_outcome
    assert compiled == reference_outcome


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
@pytest.mark.parametrize(
    ("source", "start", "lr"),
    [
        ("(1 - x)**2 + 100*(y - x**2)**2", {"x": -1.2, "y": 1.0}, 0.002),
        ("sqrt((x - 3)**2)", {"x": 0.0}, 3.0),  # the gradient goes nan: an error at step 1
        ("x**3", {"x": 1.0}, 1.0),  # the value goes to -inf
        ("log(x) + 1/y", {"x": 1.0, "y": 1.0}, 0.5),  # log(0), 1/0 on the way: the exact path
        ("exp(x) * relu(y) + abs(x - y)", {"x": 0.5, "y": 0.0}, 0.1),  # the kinks
        ("1e200 * x**2 + 1e200 * y**2", {"x": 1.0, "y": 1.0}, 0.1),  # a norm past 1e300
        ("(x - 1)**2", {"x": math.nan}, 0.1),  # not finite at the start
    ],
)
def test_edges_of_the_descent_give_the_loops_bits(optimizer, source, start, lr):
    program = parse(source)
    reference_outcome, engine, compiled = all_three(program, start, None, 200, lr, optimizer, 1e-8)
    assert engine == reference_outcome
    assert compiled == reference_outcome


def test_converging_and_stopping_at_the_last_step_give_the_loops_bits():
    program = parse("(x - 3)**2 + (y + 1)**2")
    for steps, tol in ((10_000, 1e-8), (25, 1e-8), (25, 0.0), (0, 1e-8), (25, 100.0)):
        reference_outcome, engine, compiled = all_three(
            program, {"x": 0.0, "y": 0.0}, None, steps, 0.1, "adam", tol
        )
        assert engine == reference_outcome == compiled, (steps, tol)


def test_a_start_in_another_order_than_the_inputs_takes_the_loop():
    program = parse("x*x + 2*y*y")
    start = {"y": 1.0, "x": -1.0}
    reference_outcome, engine, compiled = all_three(program, start)
    assert engine == reference_outcome == compiled


def test_minimize_compiles_from_enough_steps_and_progress_is_reported_each_step():
    program = parse("(x - 3)**2")
    seen = []
    result = api.minimize(
        program, {"x": 0.0}, steps=200, tol=0.0, on_step=lambda k, v: seen.append(k)
    )
    assert seen == list(range(201)) and result.steps == 200
    assert PointLoss(program, 201).compiled and not PointLoss(program, 2).compiled


def test_the_descent_code_names_no_input():
    source = descent_source(parse("(__import__ - os)**2 + exec"), "adam", [0, 2], (True, True))
    plain = descent_source(parse("(a - b)**2 + c"), "adam", [0, 2], (True, True))
    assert source == plain and "import" not in source and "exec" not in source


@pytest.mark.parametrize("at", [0, 1, 7])
@pytest.mark.parametrize("moving", [None, ["y"]])
def test_ctrl_c_gives_the_point_reached_on_every_path(at, moving):
    def interrupt(taken, value):
        if taken == at:
            raise KeyboardInterrupt

    program = parse("(x - 3)**2 + (y + 1)**4")
    reference_outcome, engine, compiled = all_three(
        program, {"x": 0.0, "y": 0.0}, moving, 60, 0.1, "adam", 1e-8, interrupt
    )
    assert reference_outcome[:2] == ("error", "Interrupted")
    assert engine == reference_outcome
    assert compiled == reference_outcome


def test_a_loss_at_a_point_called_with_a_point_gives_the_engines_gradient():
    program = parse("x*x + 3*y + tanh(x*y)")
    result = program.gradients({"x": 2.0, "y": 1.0})
    expected = (result.result.data, {n: node.grad for n, node in result.inputs.items()})
    for evaluations in (1, 10**9):
        got = PointLoss(program, evaluations)({"y": 1.0, "x": 2.0})
        assert repr(got) == repr(expected)
    with pytest.raises(MissingInputs):
        PointLoss(program, 10**9)({"x": 2.0})


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["minimize", "5"], "there is nothing to move"),
        (["check", "5", "--against", "0"], "there is nothing to check"),
    ],
)
def test_a_source_with_no_inputs_is_bad_input(command, message):
    """A constant has nothing to descend on or to check: not "every input is held by --fix",
    nor an empty table."""
    done = in_process(*command)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: the source has no inputs: {message}\n"


def test_a_plot_in_a_directory_that_does_not_exist_is_refused_before_the_descent(tmp_path):
    """As fit -o: the run does not descend to fail where it writes (this descent diverges at
    its first step, which it would report)."""
    target = tmp_path / "missing" / "descent.png"
    done = in_process("minimize", "x**4", "--x", "10", "--lr", "1e300", "--method", "sgd",
                    "--plot", str(target))  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"error: cannot write {target}: No such file or directory\n"


@pytest.mark.parametrize(
    ("start", "message"),
    [
        (["--w", "0.1*uniform(2)", "--seed", "-1"],
         "invalid value for --seed: -1 is not at least 0"),
        (["--w", "uniform(2, 3)/0", "--seed", "1"],
         "--w uniform(2, 3)/0: a random start is scaled by a finite number, not 0"),
    ],
)  # fmt: skip
def test_a_random_start_with_a_bad_seed_or_scale_is_exit_2(start, message):
    done = in_process("minimize", "sum(w**2)", *start)
    assert (done.returncode, done.stderr) == (2, f"error: {message}\n")


def test_a_setting_given_as_an_input_names_the_option_and_lists_only_the_parameters(tmp_path):
    table = tmp_path / "d.csv"
    table.write_text("x1,y\n1,2\n2,4\n")
    epochs = in_process("minimize", "(y - w1*x1)**2", "--data", str(table), "--w1", "0")
    assert epochs.returncode == 0
    for name in ("epochs", "iterations", "iters", "n_steps"):
        done = in_process(
            "minimize", "(y - w1*x1)**2", "--data", str(table), "--w1", "0", f"--{name}", "5"
        )
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (
            f"error: {name} is not an input of this source (its inputs: w1); for the "
            "descent's number of steps, give --steps\n"
        )
    for name in ("learning_rate", "eta"):
        done = in_process("minimize", "(x - 1)**2", "--x", "0", f"--{name}", "0.1")
        assert (done.returncode, done.stderr) == (
            2,
            f"error: {name} is not an input of this source (its inputs: x); for the "
            "descent's learning rate, give --lr\n",
        )
    plain = in_process("minimize", "(x - 1)**2", "--x", "0", "--z", "1")
    assert plain.stderr == "error: z is not an input of this source (its inputs: x)\n"


def test_a_descent_that_ran_out_of_steps_is_a_result_with_its_plot(tmp_path):
    picture = tmp_path / "path.svg"
    done = in_process("minimize", "(x - 3)**2", "--x", "0", "--steps", "5", "--plot", str(picture))
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1].split() == ["steps", "5", "step", "limit"]
    assert done.stderr.startswith("note: did not converge: after 5 steps")
    assert picture.read_text().startswith("<?xml")


@pytest.mark.parametrize(
    ("source", "start", "last_drawn"),
    [
        ("(x - 3)**2", ["--x", "0"], "sgd, 161 steps, diverged, drawn up to step 130"),
        ("(x - 3)**2 + (y + 1)**2", ["--x", "0", "--y", "0"], "step 1455, the last drawn"),
    ],
)
def test_a_diverged_descent_is_drawn_up_to_where_a_picture_can_show_it(
    tmp_path, source, start, last_drawn
):
    """A learning rate too large: the losses grow to near the largest float, more than an
    axis can span; the plot, --save and the table are all written, the picture up to the
    last step it can show, and says so."""
    picture, saved = tmp_path / "path.svg", tmp_path / "descent.json"
    options = ["--method", "sgd", "--plot", str(picture), "--save", str(saved)]
    lr = ["--lr", "5" if len(start) == 2 else "1.1"]
    done = in_process("minimize", source, *start, *lr, *options)
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1].split()[-1] == "diverged"
    assert done.stderr.startswith("error: diverged at step ")
    assert last_drawn in picture.read_text()
    assert json.loads(saved.read_text())
    at = {name.removeprefix("--"): 0 for name in start[::2]}
    with pytest.raises(Diverged):
        nanograd_cli.minimize(
            source, **at, method="sgd", lr=float(lr[1]), plot=str(tmp_path / "python.svg")
        )
    assert last_drawn in (tmp_path / "python.svg").read_text()


def test_losses_past_a_log_axis_from_the_first_step_are_drawn_on_a_linear_one(tmp_path):
    """A loss above 1e250 at step 1 of a descent that goes on: a log axis would show step 0
    alone (an empty picture); a linear one shows every step. A descent that diverged at its
    first step is its start, drawn as a dot."""
    picture = tmp_path / "loss.svg"
    done = in_process("minimize", "x**2", "--x", "1", "--lr", "5e153", "--steps", "50",
                      "--plot", str(picture))  # fmt: skip
    assert done.returncode == 0
    drawn = picture.read_text()
    assert "adam, 50 steps<" in drawn and "drawn up to" not in drawn
    done = in_process("minimize", "x**2", "--x", "1", "--method", "sgd", "--lr", "1e200",
                      "--plot", str(picture))  # fmt: skip
    assert done.returncode == 1
    assert "sgd, 0 steps, diverged<" in picture.read_text()


@pytest.mark.parametrize(
    ("args", "unbounded"),
    [
        (["x", "--x", "1", "--steps", "100"], True),  # falls forever, at a slope of 1
        (["x**3", "--x", "-1", "--steps", "100"], True),  # falls ever faster
        (["x", "--x", "1", "--steps", "5", "--method", "newton"], True),
        (["(x - 3)**2", "--x", "0", "--steps", "5"], False),  # on its way to x = 3
        (["(x - 3)**2", "--x", "0", "--steps", "1", "--method", "bfgs"], False),
    ],
)
def test_a_loss_that_kept_falling_while_its_slope_did_not_shrink_may_have_no_minimum(
    args, unbounded
):
    """Where the steps ran out, the note says more steps may reach a minimum, or, where the
    value fell and the gradient's norm is no smaller than at the start, that there may be
    none: x from 1 has no minimum, more steps would never reach one."""
    done = in_process("minimize", *args, "--format", "json")
    result = json.loads(done.stdout)
    assert done.returncode == 0 and result["converged"] is False
    said = "the loss may have no minimum, falling without bound\n"
    assert done.stderr.endswith(said) is unbounded, done.stderr
    assert ("may reach it)" in done.stderr) is not unbounded


@pytest.mark.slow
@pytest.mark.signals
def test_ctrl_c_shows_the_point_reached_as_interrupted_and_draws_the_plot(tmp_path):
    import signal
    import subprocess

    from .helpers import wait_for_cpu

    picture = tmp_path / "path.svg"
    process = subprocess.Popen(
        [
            *("nanograd", "minimize", "(x - 3)**2 + (y - 1)**2", "--x", "0", "--y", "0"),
            *("--steps", "2000000", "--tol", "0", "--lr", "1e-12", "--plot", str(picture)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,
    )
    wait_for_cpu(process, 1.0)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130
    last = out.splitlines()[-1].split()
    assert last[0] == "steps" and last[2:] == ["interrupted"]
    assert 0 < int(last[1]) < 2000000
    assert err == f"error: interrupted at step {last[1]}: the output is the point reached\n"
    assert picture.read_text().startswith("<?xml")


@pytest.mark.parametrize(
    ("rows", "args", "message"),
    [
        (
            "x,y\n1,2\n1e308,3\n",
            ["(a*x - y)**2", "--a", "1"],
            "at the start, row 2 (x = 1e+308, y = 3.0): the loss is inf; start from a point "
            "where it is finite, or leave the row out",
        ),
        (
            "x,y\n1,2\n2,3\n",
            ["(x - y)**2"],
            "every input of the source is a column of the data: there is no parameter to move "
            "(an input that names no column is one, and needs a start)",
        ),
        (
            "x,y\n1,2\n2,3\n",
            ["(a*x - y)**2", "--a", "0", "--fix", "x"],
            "--fix x: x is a column of the data, read per row: --fix names the parameters (a)",
        ),
        (
            "x,y\n1,2\n2,3\n",
            ["(a*x - z)**2", "--a", "0"],
            "missing value for input z: give --data a column z or pass --z VALUE",
        ),
        (  # a name near a column's, or a header with units, as fit says it
            "x,y\n1,2\n2,3\n",
            ["sum((a*X - y)**2)", "--a", "0"],
            "missing value for input X: give --data a column X or pass --X VALUE; did you mean x?",
        ),
        (
            "time (s),y\n1,2\n2,3\n",
            ["(a*time - y)**2", "--a", "0"],
            "missing value for input time: give --data a column time or pass --time VALUE; the "
            "column 'time (s)' is read by its header, which is no name: rename it in the file's "
            "first line (as time_s) and write that in the source",
        ),
    ],
)
def test_minimize_data_says_what_is_wrong_with_rows_and_columns(tmp_path, rows, args, message):
    """As fit says it: the row whose loss is not finite at the start, with its data; a source
    with no parameter, not a --fix never given; a column named by --fix, as a column."""
    (tmp_path / "d.csv").write_text(rows)
    done = in_process("minimize", *args, "--data", "d.csv", "--steps", "5", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {message}\n")
