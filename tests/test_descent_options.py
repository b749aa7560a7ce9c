"""minimize's training options through the command line: --weight-decay and --lr-schedule step
for step equal to torch.optim, --log, --save and every command's --load, a diverged descent's
last finite point, and a long run's --plot in bounded memory."""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

import pytest

from nanograd_cli import _api as api
from nanograd_cli import parse
from nanograd_cli._training import Schedule
from nanograd_cli.sampling import Descent

from .helpers import in_process, nanograd, on_terminal

SOURCE = "(x - 3)**2 + 0.5*(y + 1)**4 + x*y"
START = {"x": 0.5, "y": 2.0}
SCHEDULES = [
    ("constant", {}, []),
    ("step", {"step_size": 7, "gamma": 0.5}, ["--lr-step-size", "7", "--lr-gamma", "0.5"]),
    ("cosine", {"t_max": 20, "lr_min": 0.001}, ["--lr-t-max", "20", "--lr-min", "0.001"]),
]


def torch_descent(optimizer, weight_decay, kind, settings, steps, lr):
    """The points torch.optim visits on SOURCE from START, in float64."""
    torch = pytest.importorskip("torch")
    x, y = (torch.tensor(START[n], dtype=torch.float64, requires_grad=True) for n in "xy")
    if optimizer == "adam":
        step = torch.optim.Adam([x, y], lr=lr, weight_decay=weight_decay)
    else:
        momentum = 0.9 if optimizer == "momentum" else 0.0
        step = torch.optim.SGD([x, y], lr=lr, momentum=momentum, weight_decay=weight_decay)
    scheduler = None
    if kind == "step":
        scheduler = torch.optim.lr_scheduler.StepLR(step, settings["step_size"], settings["gamma"])
    elif kind == "cosine":
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(
            step, settings["t_max"], settings["lr_min"]
        )
    points = [(x.item(), y.item())]
    for _ in range(steps):
        step.zero_grad()
        ((x - 3) ** 2 + 0.5 * (y + 1) ** 4 + x * y).backward()
        step.step()
        if scheduler is not None:
            scheduler.step()
        points.append((x.item(), y.item()))
    return points


@pytest.mark.parametrize("optimizer", ["sgd", "momentum", "adam"])
@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
@pytest.mark.parametrize(("kind", "settings", "options"), SCHEDULES)
def test_each_step_is_torch_optims(optimizer, weight_decay, kind, settings, options):
    steps, lr = 50, 0.05
    expected = torch_descent(optimizer, weight_decay, kind, settings, steps, lr)
    schedule = None if kind == "constant" else Schedule(kind, **settings)
    visited: list[tuple[float, float]] = []
    api.minimize(
        parse(SOURCE),
        START,
        steps,
        lr,
        optimizer,
        0.0,
        on_point=lambda point, _: visited.append((point["x"], point["y"])),
        weight_decay=weight_decay,
        schedule=schedule,
    )
    assert len(visited) == steps + 1
    for ours, theirs in zip(visited, expected, strict=True):
        assert ours == pytest.approx(theirs, abs=1e-12, rel=1e-12)
    done = in_process(
        "minimize", SOURCE, "--x", "0.5", "--y", "2", "--method", optimizer, "--lr", "0.05",
        "--steps", "50", "--tol", "0", "--weight-decay", str(weight_decay),
        "--lr-schedule", kind, *options, "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    reached = json.loads(done.stdout)["inputs"]
    assert (reached["x"], reached["y"]) == pytest.approx(expected[-1], abs=1e-12, rel=1e-12)


def test_schedules_by_hand():
    """StepLR: the rate times gamma every step_size steps; cosine: half a cosine to lr_min
    over t_max steps, and back up."""
    step = Schedule("step", step_size=3, gamma=0.5)
    assert [step.lr(0.8, k) for k in range(7)] == [0.8, 0.8, 0.8, 0.4, 0.4, 0.4, 0.2]
    cosine = Schedule("cosine", t_max=4, lr_min=0.1)
    rates = [cosine.lr(1.1, k) for k in range(9)]
    halfway = 0.1 + 0.5 * (1 + math.cos(math.pi / 4))
    assert rates == pytest.approx([1.1, halfway, 0.6, 1.2 - halfway, 0.1, 1.2 - halfway, 0.6,
                                   halfway, 1.1])  # fmt: skip


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--lr-schedule", "step"], "--lr-schedule step needs --lr-step-size N: the number of "
         "steps between two decays of the rate"),
        (["--lr-gamma", "0.5"], "--lr-gamma is a setting of --lr-schedule step"),
        (["--lr-schedule", "step", "--lr-step-size", "2", "--lr-min", "0"],
         "--lr-min is a setting of --lr-schedule cosine"),
        (["--save", "-"], "--save writes a file: give its name (- is standard output's)"),
    ],
)  # fmt: skip
def test_settings_of_another_schedule_are_bad_input(options, message):
    done = in_process("minimize", "x**2", "--x", "1", *options)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {message}\n")


LOG = "step,loss,gradient_norm\n0,9.0,6.0\n1,2.25,3.0\n2,0.5625,1.5\n3,0.140625,0.75\n"
SGD_RUN = ["(x - 3)**2", "--x", "0", "--method", "sgd", "--lr", "0.25", "--steps", "3"]


def test_log_has_a_row_a_step_whether_or_not_stderr_is_a_terminal(tmp_path):
    """x = 0.5*x + 1.5 from 0: 1.5, 2.25, 2.625; loss (x - 3)**2 and gradient 2*(x - 3)."""
    log = tmp_path / "steps.csv"
    done = nanograd("minimize", *SGD_RUN, "--log", str(log), "--format", "csv")
    assert done.returncode == 0
    assert (
        done.stdout == "value,x,d_x,gradient_norm,steps,converged,interrupted,diverged\n"
        "0.140625,2.625,-0.75,0.75,3,false,false,false\n"
    )
    assert log.read_text() == LOG
    log.unlink()
    screen = on_terminal("minimize", *SGD_RUN, "--log", str(log))
    assert "step 0/3" in screen  # (the progress bar: standard error is the terminal)
    assert log.read_text() == LOG


def test_a_log_is_compiled_out_of_nothing_else(tmp_path):
    """With and without --log (which takes the loop that computes every norm), the same
    point, bit for bit."""
    args = ["minimize", "(1 - x)**2 + 100*(y - x**2)**2", "--x", "-1.2", "--y", "1"]
    plain = in_process(*args, "--steps", "300", "--format", "json")
    logged = in_process(*args, "--steps", "300", "--format", "json", "--log", str(tmp_path / "l"))
    assert plain.stdout == logged.stdout
    rows = (tmp_path / "l").read_text().splitlines()
    assert len(rows) == 302 and rows[-1].startswith("300,")


def test_a_diverged_descent_prints_its_last_finite_point_and_writes_its_files(tmp_path):
    """sgd at lr 1.5 on (x - 3)**2 from 0: x - 3 is multiplied by -2 each step, and the loss
    by 4: 9*4**510 is finite, 9*4**511 is not."""
    plot, log, save = (str(tmp_path / name) for name in ("d.svg", "d.csv", "d.json"))
    done = in_process(
        "minimize", "(x - 3)**2", "--x", "0", "--method", "sgd", "--lr", "1.5",
        "--plot", plot, "--log", log, "--save", save, "--format", "json",
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr == "error: diverged at step 511: the value is inf; try a smaller --lr\n"
    x = 3 - 3 * 2.0**510
    assert json.loads(done.stdout) == {
        "value": 9 * 4.0**510,
        "inputs": {"x": x},
        "gradients": {"x": 2 * (x - 3)},
        "gradient_norm": -2 * (x - 3),
        "steps": 510,
        "converged": False,
        "diverged": True,
    }
    assert 'id="loss"' in Path(plot).read_text()
    rows = Path(log).read_text().splitlines()
    assert len(rows) == 512 and rows[-1] == f"510,{9 * 4.0**510!r},{-2 * (x - 3)!r}"
    assert json.loads(Path(save).read_text())["parameters"] == {"x": x}
    table = in_process("minimize", "(x - 3)**2", "--x", "0", "--method", "sgd", "--lr", "1.5")
    assert table.stdout.splitlines()[-1].split() == ["steps", "510", "diverged"]
    csv = in_process("minimize", "(x - 3)**2", "--x", "0", "--method", "sgd", "--lr", "1.5",
                     "--format", "csv")  # fmt: skip
    assert (csv.returncode, csv.stdout) == (
        1,
        "value,x,d_x,gradient_norm,steps,converged,interrupted,diverged\n"
        f"{9 * 4.0**510!r},{x!r},{2 * (x - 3)!r},{-2 * (x - 3)!r},510,false,false,true\n",
    )


def test_a_descent_that_diverges_at_its_first_step_shows_its_start():
    done = in_process("minimize", "sqrt((x - 3)**2)", "--x", "0", "--method", "sgd", "--lr", "3")
    assert done.returncode == 1
    assert (
        done.stdout.split()
        == "value gradient result 3.0 x 0.0 -1.0 gradient norm 1.0 steps 0 diverged".split()
    )


def test_a_long_runs_plot_keeps_a_bounded_history_of_the_whole_run():
    descent = Descent(most=100)
    for step in range(100_001):
        descent.record({"x": float(step)}, float(step))
    steps, _, losses = descent.history()
    assert len(steps) <= 101 and steps[0] == 0 and steps[-1] == 100_000
    assert steps == sorted(set(steps)) and losses == [float(s) for s in steps]
    gaps = {b - a for a, b in itertools.pairwise(steps)}
    assert max(gaps) <= 2 * (100_000 // 100)  # evenly spread over the run


@pytest.mark.slow
def test_a_long_runs_plot_draws_every_step_from_a_few_thousand_points(tmp_path):
    """50,000 steps: at most 4096 points are kept, and the loss is drawn up to the last step
    (the line ends under the axis' tick 50000)."""
    descent = Descent()
    api.minimize(parse("x**4 + 1"), {"x": 1.0}, 50000, 0.001, "sgd", 0.0, on_point=descent.record)
    assert len(descent.steps) <= 4096 and descent.history()[0][-1] == 50000
    plot = tmp_path / "long.svg"
    done = in_process(
        "minimize", "x**4 + 1", "--x", "1", "--method", "sgd", "--lr", "0.001",
        "--steps", "50000", "--plot", str(plot),
    )  # fmt: skip
    assert done.returncode == 0
    svg = plot.read_text()
    line = re.search(r'<g id="loss">.*?<path d="([^"]*)"', svg, re.S)
    assert line is not None
    end = float(re.findall(r"(-?[\d.]+) (-?[\d.]+)", line[1])[-1][0])
    tick = re.search(r'x="([\d.]+)" y="[\d.]+" transform="[^"]*">50000\b', svg)
    assert tick is not None and end == pytest.approx(float(tick[1]), abs=1e-3)


def test_save_then_load_predicts_with_the_point_reached(tmp_path):
    data, saved = tmp_path / "d.csv", tmp_path / "w.json"
    data.write_text("x,y\n1,2\n2,4\n3,6\n")
    done = in_process(
        "minimize", "(w*x - y)**2", "--data", str(data), "--w", "0", "--method", "sgd",
        "--lr", "0.05", "--save", str(saved), "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0
    printed = json.loads(done.stdout)
    document = json.loads(saved.read_text())
    assert document == {
        "format": "nanograd minimize",
        "version": 1,
        "source": "(w*x - y)**2",
        "parameters": printed["inputs"],
        **printed,
    }
    w = printed["inputs"]["w"]
    assert w == pytest.approx(2, abs=1e-8)
    new = "x\n10\n20\n"
    predicted = nanograd("grad", "w*x", "--load", str(saved), "--points", "-", "--format", "csv",
                         stdin=new)  # fmt: skip
    assert predicted.returncode == 0, predicted.stderr
    assert (
        predicted.stdout == f"x,value,d_w,d_x\n10,{w * 10!r},10.0,{w!r}\n20,{w * 20!r},20.0,{w!r}\n"
    )
    # an input given on the command line wins over the file's
    done = in_process(
        "grad", "w*x", "--load", str(saved), "--w", "3", "--x", "2", "--format", "json"
    )
    assert json.loads(done.stdout) == {"value": 6.0, "inputs": {"w": 3.0, "x": 2.0},
                                       "gradients": {"w": 2.0, "x": 3.0}}  # fmt: skip


@pytest.mark.parametrize(
    "command",
    [
        ["hessian", "w*w*x", "--format", "json"],
        ["explain", "w*x", "--format", "json"],
        ["check", "w*x", "--format", "json"],
        ["taylor", "w*x", "--wrt", "x", "--format", "json"],
        ["draw", "w*x", "--format", "dot"],
        ["plot", "w*x"],
        ["check", "w*x", "--against", "w", "--wrt", "x", "--format", "json"],
        ["minimize", "(w - x)**2", "--wrt", "w", "--format", "json", "--steps", "1"],
    ],
)
def test_every_command_that_takes_inputs_loads_them(command, tmp_path):
    saved = tmp_path / "p.json"
    saved.write_text(json.dumps({"format": "nanograd minimize", "version": 1,
                                 "parameters": {"w": 1.25, "unused": 7}}))  # fmt: skip
    x = ["--x", "-1:1"] if "plot" in command or "--against" in command else ["--x", "2"]
    loaded = in_process(*command, *x, "--load", str(saved))
    given = in_process(*command, *x, "--w", "1.25")
    assert loaded.returncode == 0, loaded.stderr
    assert (loaded.stdout, loaded.stderr) == (given.stdout, given.stderr)


def test_a_fit_saved_by_fit_save_loads_as_its_parameters(tmp_path):
    fitted = tmp_path / "fit.json"
    rows = "x,y\n0,1.1\n1,2.9\n2,5.2\n3,6.8\n"
    done = in_process("fit", "a*x + b", "--data", "-", "--a", "1", "--b", "0", "--save",
                      str(fitted), "--format", "json", stdin=rows)  # fmt: skip
    assert done.returncode == 0, done.stderr
    a, b = (json.loads(done.stdout)["parameters"][n] for n in "ab")
    done = in_process("grad", "a*x + b", "--load", str(fitted), "--x", "4", "--format", "json")
    assert json.loads(done.stdout)["value"] == a * 4 + b
    # and fit's own --load reads it back as a fit still
    again = in_process("fit", "--load", str(fitted), "--format", "json")
    assert again.returncode == 0 and json.loads(again.stdout)["parameters"] == {"a": a, "b": b}


@pytest.mark.parametrize(
    ("text", "why", "code"),
    [
        ("{", "not JSON: Expecting property name enclosed in double quotes: line 1 column 2 "
         "(char 1)", 2),
        ('{"format": "other"}', 'no "format": "nanograd minimize" or "nanograd fit"', 2),
        ('{"format": "nanograd minimize", "version": 2, "parameters": {}}',
         "version 2, where this nanograd reads 1", 2),
        ('{"format": "nanograd minimize", "version": 1, "parameters": {"w": "x"}}',
         '"parameters" of w is "x", not a number', 2),
        ('{"format": "nanograd minimize", "version": 1, "parameters": {"w": 1e999}}',
         '"parameters" of w is too large for a float', 2),
        ('{"format": "nanograd minimize", "version": 1, "parameters": {"w": [1, -1e999]}}',
         '"parameters" of w is too large for a float', 2),
    ],
)  # fmt: skip
def test_a_file_that_holds_no_saved_point_is_bad_input(text, why, code, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(text)
    done = in_process("grad", "w*x", "--x", "1", "--load", str(path))
    message = (
        f"error: {path}: not a point saved by nanograd minimize --save or fit --save ({why})\n"
    )
    assert (done.returncode, done.stdout, done.stderr) == (code, "", message)


def test_a_missing_file_to_load_cannot_be_read(tmp_path):
    done = in_process("grad", "w*x", "--x", "1", "--load", str(tmp_path / "none.json"))
    assert done.returncode == 1
    assert (
        done.stderr == f"error: cannot read {tmp_path / 'none.json'}: No such file or directory\n"
    )


def test_nothing_is_written_where_the_descent_never_ran(tmp_path):
    files = [tmp_path / name for name in ("p.svg", "l.csv", "s.json")]
    done = in_process("minimize", "sqrt(x)", "--x", "0", "--plot", str(files[0]),
                      "--log", str(files[1]), "--save", str(files[2]))  # fmt: skip
    assert done.returncode == 2
    assert list(tmp_path.iterdir()) == []


def test_python_raises_diverged_with_the_last_finite_point_and_draws_the_run(tmp_path):
    import nanograd_cli
    from nanograd_cli.errors import Diverged

    picture = tmp_path / "d.svg"
    with pytest.raises(Diverged) as raised:
        nanograd_cli.minimize("(x - 3)**2", x=0, method="sgd", lr=1.5, plot=picture)
    assert raised.value.reached.steps == 510 and raised.value.reached.diverged
    assert raised.value.reached.inputs == {"x": 3 - 3 * 2.0**510}
    assert 'id="loss"' in picture.read_text()
    found = nanograd_cli.minimize(
        "(x - 3)**2", x=0, method="sgd", lr=0.1, steps=40, lr_schedule="step",
        lr_step_size=10, lr_gamma=0.5, weight_decay=0.1,
    )  # fmt: skip
    done = in_process(
        "minimize", "(x - 3)**2", "--x", "0", "--method", "sgd", "--lr", "0.1", "--steps",
        "40", "--lr-schedule", "step", "--lr-step-size", "10", "--lr-gamma", "0.5",
        "--weight-decay", "0.1", "--format", "json",
    )  # fmt: skip
    assert json.loads(done.stdout)["inputs"] == found.inputs


def test_the_repl_takes_the_schedule_and_weight_decay_and_shows_a_diverged_point():
    from nanograd_cli._session import Session

    s = Session()
    assert s.run("x = 0").status == 0
    reply = s.run(
        ":minimize (x - 3)**2 method sgd lr 0.1 steps 40 lr-schedule step lr-step-size 10 "
        "lr-gamma 0.5 weight-decay 0.1"
    )
    done = in_process(
        "minimize", "(x - 3)**2", "--x", "0", "--method", "sgd", "--lr", "0.1", "--steps",
        "40", "--lr-schedule", "step", "--lr-step-size", "10", "--lr-gamma", "0.5",
        "--weight-decay", "0.1", "--format", "json",
    )  # fmt: skip
    x = json.loads(done.stdout)["inputs"]["x"]
    assert reply.status == 0 and reply.text().split()[5] == repr(x)
    reply = s.run(":minimize (x - 3)**2 method sgd lr 1.5")
    assert reply.status == 1 and reply.text().split()[-1] == "diverged"
    assert reply.err == ["error: diverged at step 511: the value is inf; try a smaller lr"]
    reply = s.run(":minimize (x - 3)**2 lr-schedule step")
    assert (reply.status, reply.err) == (
        2,
        ["error: lr-schedule step needs lr-step-size N: the number of steps between two decays "
         "of the rate"],
    )  # fmt: skip


@pytest.mark.slow
def test_ctrl_c_writes_the_log_and_the_save_of_the_run_so_far(tmp_path):
    import signal
    import subprocess

    from .helpers import NANOGRAD, wait_for_cpu

    log, save = tmp_path / "steps.csv", tmp_path / "p.json"
    process = subprocess.Popen(
        [
            *(NANOGRAD, "minimize", "(x - 3)**2 + (y - 1)**2", "--x", "0", "--y", "0"),
            *("--steps", "2000000", "--tol", "0", "--lr", "1e-12", "--log", str(log)),
            *("--save", str(save), "--format", "json"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    wait_for_cpu(process, 1.0)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    reached = json.loads(out)
    assert reached["interrupted"] and json.loads(save.read_text())["steps"] == reached["steps"]
    rows = log.read_text().splitlines()
    assert rows[0] == "step,loss,gradient_norm" and rows[1] == "0,10.0,6.324555320336759"
    # every step up to the point reached (Ctrl-C may come before that point's row)
    assert [int(r.split(",")[0]) for r in rows[1:]] == list(range(len(rows) - 1))
    assert reached["steps"] - 1 <= int(rows[-1].split(",")[0]) <= reached["steps"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".nanograd")] == []
