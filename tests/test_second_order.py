"""`minimize --method bfgs|lbfgs|newton`: SciPy's methods on the engine's exact gradient
and Hessian, against SciPy called directly with its own Rosenbrock derivatives, a hand-derived
bounded minimum and a least-squares line in closed form."""

from __future__ import annotations

import json
import sys

import pytest

from nanograd_cli import _api as api
from nanograd_cli import minimize as minimize_in_python
from nanograd_cli import parse
from nanograd_cli.errors import InputError, Interrupted, NanogradError

from .helpers import in_process, nanograd

optimize = pytest.importorskip("scipy.optimize")
np = pytest.importorskip("numpy")

ROSENBROCK = "(1 - x)**2 + 100*(y - x**2)**2"
START = ("--x", "-1.2", "--y", "1")
# SciPy's methods and the options that stop them where minimize's test (the gradient's
# Euclidean norm at most tol, 1e-8) does.
SCIPY = {
    "bfgs": ("BFGS", {"gtol": 1e-8, "norm": 2}),
    "lbfgs": ("L-BFGS-B", {"gtol": 1e-8 / 2**0.5, "ftol": 0.0}),
    "newton": ("trust-exact", {"gtol": 1e-8}),
}


def scipy_rosenbrock(method: str, bounds=None):
    """SciPy alone, from the same start, with its own Rosenbrock, gradient and Hessian."""
    name, options = SCIPY[method]
    extra = {"hess": optimize.rosen_hess} if method == "newton" else {}
    return optimize.minimize(
        lambda x: (optimize.rosen(x), optimize.rosen_der(x)),
        np.array([-1.2, 1.0]),
        jac=True,
        method=name,
        options=options,
        bounds=bounds,
        **extra,
    )


@pytest.mark.parametrize("method", ["bfgs", "lbfgs", "newton"])
def test_rosenbrock_reaches_its_minimum_as_scipy_does(method):
    done = in_process("minimize", ROSENBROCK, *START, "--method", method, "--format", "json")
    assert (done.returncode, done.stderr) == (0, "")
    result = json.loads(done.stdout)
    assert result["converged"] is True and result["gradient_norm"] <= 1e-8
    assert result["inputs"]["x"] == pytest.approx(1.0, abs=1e-6)
    assert result["inputs"]["y"] == pytest.approx(1.0, abs=1e-6)
    direct = scipy_rosenbrock(method)
    assert result["steps"] == direct.nit  # 34, 38 and 25 iterations
    assert [result["inputs"]["x"], result["inputs"]["y"]] == pytest.approx(direct.x, abs=1e-9)
    assert result["value"] == pytest.approx(direct.fun, abs=1e-15)


def test_the_first_order_methods_take_thousands_of_steps_for_it():
    adam = api.minimize(parse(ROSENBROCK), {"x": -1.2, "y": 1.0}, steps=100000)
    newton = api.minimize(parse(ROSENBROCK), {"x": -1.2, "y": 1.0}, method="newton")
    assert adam.converged and newton.converged
    assert adam.steps > 100 * newton.steps  # 5,975 steps against 25


def test_a_bounded_minimum_stops_on_the_bound():
    """Rosenbrock with x at most 0.5: the minimum is at x = 0.5, y = x**2 = 0.25, where
    df/dx = -2(1 - x) - 400x(y - x**2) = -1 pushes x outwards, so the gradient projected on
    the bound is 0."""
    done = in_process("minimize", ROSENBROCK, *START, "--method", "lbfgs", "--bound",
                      "x=-2:0.5", "--format", "json")  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    result = json.loads(done.stdout)
    assert result["inputs"] == {"x": 0.5, "y": pytest.approx(0.25, abs=1e-9)}
    assert result["gradients"]["x"] == pytest.approx(-1.0, abs=1e-8)
    assert result["converged"] is True and result["gradient_norm"] <= 1e-8
    direct = scipy_rosenbrock("lbfgs", bounds=[(-2, 0.5), (None, None)])
    assert [result["inputs"]["x"], result["inputs"]["y"]] == pytest.approx(direct.x, abs=1e-9)
    # From Python, with the bound as a pair; an open side as inf.
    same = minimize_in_python(ROSENBROCK, x=-1.2, y=1, method="lbfgs", bounds={"x": (-2, 0.5)})
    assert same.inputs == result["inputs"] and same.steps == result["steps"]
    opened = in_process("minimize", "(x - 3)**2", "--x", "0", "--method", "lbfgs",
                        "--bound", "x=-inf:1", "--format", "csv")  # fmt: skip
    assert (
        opened.stdout == "value,x,d_x,gradient_norm,steps,converged,interrupted,diverged\n"
        "4.0,1.0,-4.0,0.0,1,true,false,false\n"
    )


def test_a_least_squares_line_from_rows_matches_its_closed_form(tmp_path):
    (tmp_path / "d.csv").write_text("x,y\n1,2\n2,4.1\n3,5.9\n4,8.2\n")
    xs, ys = np.array([1, 2, 3, 4.0]), np.array([2, 4.1, 5.9, 8.2])
    for method in ("bfgs", "lbfgs"):
        done = in_process("minimize", "(a*x - y)**2", "--data", "d.csv", "--a", "0",
                          "--method", method, "--format", "json", cwd=tmp_path)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["inputs"]["a"] == pytest.approx(
            (xs @ ys) / (xs @ xs), rel=1e-12
        )


def test_newton_uses_the_exact_hessian_of_the_inputs_that_move():
    """With y held, Newton's step on a quadratic in x is exact: one step to x = 1."""
    result = api.minimize(
        parse("(x - 1)**2 + x*y + (y - 2)**2"), {"x": 0.0, "y": 0.0}, method="newton", fix=["y"]
    )
    assert result.inputs == {"x": pytest.approx(1.0, abs=1e-12), "y": 0.0} and result.converged


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--method", "bfgs", "--bound", "x=0:1"], "error: --bound needs --method lbfgs "
         "(L-BFGS-B), the method that keeps to bounds: bfgs does not"),
        (["--method", "newton", "--bound", "x=0:1"], "error: --bound needs --method lbfgs "
         "(L-BFGS-B), the method that keeps to bounds: newton does not"),
        (["--bound", "x=0:1"], "error: --bound needs --method lbfgs (L-BFGS-B), the method "
         "that keeps to bounds: adam does not"),
        (["--method", "lbfgs", "--bound", "x=0:1"], "error: the start of x, -1.2, is outside "
         "its bound 0:1: start inside it"),
        (["--method", "lbfgs", "--bound", "z=0:1"], "error: --bound z: z is not a parameter "
         "(parameters: x, y)"),
        (["--method", "lbfgs", "--bound", "x=1:-1"], "error: the bound of x, 1:-1, is the wrong "
         "way round: LO must be below HI (-1:1)"),
        (["--method", "lbfgs", "--bound", "x=0"], "error: --bound x=0: give LO:HI, such as "
         "0:inf or -1:1"),
    ],
)  # fmt: skip
def test_bounds_where_a_method_cannot_keep_them_are_bad_input(args, message):
    done = in_process("minimize", ROSENBROCK, *START, *args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message + "\n")


def test_rows_by_batch_are_bad_input(tmp_path):
    (tmp_path / "d.csv").write_text("x,y\n1,2\n2,4\n")
    run = ("minimize", "(a*x - y)**2", "--data", "d.csv", "--a", "0", "--method")
    done = in_process(*run, "bfgs", "--batch", "1", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        "error: --method bfgs takes every row each step (its line search compares the loss "
        "at points): drop --batch, or take sgd, momentum or adam\n",
    )


def test_the_hessian_over_rows_is_the_mean_of_each_rows():
    """Against a hand derivation for a line, (w*x + b - y)**2: 2/n [[sum x^2, sum x],
    [sum x, n]]; and for a logistic loss, against the mean of `hessian` at each row."""
    from nanograd_cli._symbolic import hessian_over_rows

    xs, ys = np.array([1.0, 2.0, 3.5, -1.0]), np.array([2.0, 3.0, 1.0, 0.5])
    line = hessian_over_rows(parse("(w*x + b - y)**2"), {"x": xs, "y": ys})
    expected = 2 / 4 * np.array([[xs @ xs, xs.sum()], [xs.sum(), 4]])
    got = line({"w": 0.3, "b": -2.0})
    assert [[got["w"]["w"], got["w"]["b"]], [got["b"]["w"], got["b"]["b"]]] == pytest.approx(
        expected, rel=1e-15
    )
    source = "log(1 + exp(-y*(w*x + b))) + c*w**2"
    logistic = hessian_over_rows(parse(source), {"x": xs, "y": np.sign(ys - 1.5)})
    point = {"w": 0.7, "b": -0.2, "c": 0.1}
    each = [
        api.hessian(parse(source), {**point, "x": x, "y": y}).hessian
        for x, y in zip(xs, np.sign(ys - 1.5), strict=True)
    ]
    got = logistic(point)
    for a in point:
        for b in point:
            mean = sum(h[a][b] for h in each) / len(each)
            assert got[a][b] == pytest.approx(mean, rel=1e-14, abs=1e-15)


def test_newton_on_rows_minimizes_the_mean_loss_as_scipy_does(tmp_path):
    """A logistic regression over 200 rows: nanograd's Newton against SciPy's trust-exact
    given the loss, gradient and Hessian written in NumPy; and a line, against least squares
    in closed form (in 3 steps from (5, 5): the trust region widens from 1 as it goes)."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=200)
    y = np.where(rng.random(200) < 1 / (1 + np.exp(-(1.5 * x - 0.5))), 1.0, -1.0)
    (tmp_path / "d.csv").write_text(
        "x,y\n" + "".join(f"{float(a)!r},{float(b)!r}\n" for a, b in zip(x, y, strict=True))
    )
    done = in_process(
        "minimize", "log(1 + exp(-y*(w*x + b)))", "--data", "d.csv", "--w", "0", "--b", "0",
        "--method", "newton", "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    result = json.loads(done.stdout)

    def loss(p):
        margin = y * (p[0] * x + p[1])
        s = 1 / (1 + np.exp(margin))  # the derivative of log(1 + exp(-m)) is -s
        grad = np.array([np.mean(-s * y * x), np.mean(-s * y)])
        return np.mean(np.log1p(np.exp(-margin))), grad

    def hess(p):
        s = 1 / (1 + np.exp(y * (p[0] * x + p[1])))
        weight = s * (1 - s)  # y**2 = 1
        return np.array(
            [[np.mean(weight * x * x), np.mean(weight * x)], [np.mean(weight * x), np.mean(weight)]]
        )

    direct = optimize.minimize(
        loss, np.zeros(2), jac=True, hess=hess, method="trust-exact", options={"gtol": 1e-8}
    )
    assert result["converged"] is True and result["steps"] == direct.nit
    assert [result["inputs"]["w"], result["inputs"]["b"]] == pytest.approx(direct.x, abs=1e-9)
    line = api.minimize(
        parse("(w*x + b - y)**2"), {"w": 5.0, "b": 5.0}, method="newton", data={"x": x, "y": y}
    )
    fitted = np.linalg.lstsq(np.column_stack([x, np.ones_like(x)]), y, rcond=None)[0]
    assert line.converged and line.steps == 3
    assert [line.inputs["w"], line.inputs["b"]] == pytest.approx(fitted, rel=1e-12)


@pytest.mark.slow
def test_steps_that_run_out_are_a_result_and_a_nan_start_bad_input():
    """Through the installed command: the exit codes of the first-order methods."""
    done = nanograd("minimize", ROSENBROCK, *START, "--method", "bfgs", "--steps", "5")
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1].split() == ["steps", "5", "step", "limit"]
    assert done.stderr.startswith("note: did not converge: after 5 steps the gradient's norm is")
    start = nanograd("minimize", "sqrt(x)", "--x", "0", "--method", "lbfgs")
    assert (start.returncode, start.stdout) == (2, "")
    assert start.stderr == "error: the gradient by x is inf at the start: start from a point " \
        "where it is finite\n"  # fmt: skip


def test_where_scipy_stops_short_the_note_says_why():
    """log(x) has no minimum: L-BFGS-B's line search meets nan at x <= 0 and gives up."""
    result = api.minimize(parse("log(x)"), {"x": 1.0}, method="lbfgs")
    assert not result.converged and result.stopped.startswith("L-BFGS-B stopped: ABNORMAL")
    assert api.failure(result, 1e-8).endswith(result.stopped)


def test_a_descent_that_diverges_shows_and_writes_its_last_finite_point(tmp_path):
    """-x**2 has no minimum: L-BFGS-B's steps reach -inf. As for sgd, the table of the last
    finite iterate with a `diverged` row, exit 1, the files written, and one error line (a
    NumPy overflow warning from inside SciPy leaked, and no file was written)."""
    files = ["--plot", "l.svg", "--log", "l.csv", "--save", "l.json"]
    done = in_process("minimize", "-e", "-x**2", "--x", "1", "--method", "lbfgs", *files,
                      cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    last = done.stdout.splitlines()[-1].split()
    assert last[0] == "steps" and last[-1] == "diverged"
    saved = json.loads((tmp_path / "l.json").read_text())
    assert np.isfinite(saved["parameters"]["x"]) and abs(saved["parameters"]["x"]) > 1e100
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.csv", "l.json", "l.svg"]
    assert done.stderr.startswith(f"error: diverged after {int(last[1]) + 1} steps: the value")
    assert done.stderr.count("\n") == 1 and "Warning" not in done.stderr


def test_where_scipy_stops_short_the_table_says_so_not_step_limit():
    done = in_process("minimize", "-e", "-x**2", "--x", "1", "--method", "bfgs")
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1].split() == ["steps", "1", "stopped", "short"]
    assert done.stderr.startswith("note: did not converge: after 1 step the gradient's norm")
    assert "BFGS stopped: Desired error not necessarily achieved" in done.stderr


def test_without_scipy_the_message_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)  # import scipy raises ImportError
    with pytest.raises(NanogradError, match="needs SciPy, which is not installed: install it"):
        api.minimize(parse("x**2"), {"x": 1.0}, method="bfgs")
    with pytest.raises(InputError):  # bad input is found before SciPy is needed
        api.minimize(parse("x**2"), {"x": 1.0}, method="newton", bounds={"x": "0:1"})


def test_ctrl_c_gives_the_last_iterate():
    seen = []

    def on_step(taken, value):
        seen.append((taken, value))
        if taken == 3:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as stop:
        api.minimize(parse(ROSENBROCK), {"x": -1.2, "y": 1.0}, method="bfgs", on_step=on_step)
    reached = stop.value.reached
    assert reached.interrupted and reached.steps == 3 and [t for t, _ in seen] == [0, 1, 2, 3]
    assert reached.value == seen[-1][1]  # the value at the iterate reached


def test_optimizer_is_another_name_for_method():
    """Version 0.1's --optimizer still works on the command line; Python's keyword is
    method, and optimizer= says so. SGD at 0.25 halves x - 3 each step: 3 steps from 0."""
    runs = [
        in_process("minimize", "(x - 3)**2", "--x", "0", name, "sgd", "--lr", "0.25",
                   "--steps", "3", "--format", "json")
        for name in ("--method", "--optimizer")
    ]  # fmt: skip
    assert runs[0].stdout == runs[1].stdout and runs[0].returncode == runs[1].returncode == 0
    assert json.loads(runs[0].stdout)["inputs"] == {"x": 3 - 3 * 0.5**3}
    done = in_process("minimize", "x*x", "--x", "1", "--optimizer", "rmsprop")
    assert done.stderr.splitlines()[0] == (
        "error: Invalid value for '--method': 'rmsprop' is not one of 'sgd', 'momentum', "
        "'adam', 'bfgs', 'lbfgs', 'newton'."
    )
    with pytest.raises(InputError, match=r"has no option optimizer, .*; did you mean method\?"):
        minimize_in_python("x*x", x=1, optimizer="sgd")


def test_the_second_order_methods_refuse_a_rate_log_their_iterations_and_suggest_steps(tmp_path):
    for method in ["bfgs", "lbfgs", "newton"]:
        refused = in_process(
            "minimize", "(x - 1)**2", "--x", "3", "--method", method, "--lr", "0.5"
        )
        assert (refused.returncode, refused.stderr) == (
            2,
            "error: --lr, --weight-decay and --lr-schedule are for sgd, momentum and adam: "
            f"--method {method} has no rate\n",
        )
    short = in_process(
        "minimize", "(1 - x)**2 + 100*(y - x**2)**2", "--x", "-1.2", "--y", "1", "--method",
        "newton", "--steps", "3",
    )  # fmt: skip
    assert short.returncode == 0
    assert short.stderr.endswith("(more --steps may reach it)\n") and "--lr" not in short.stderr
    log = tmp_path / "steps.csv"
    done = in_process(
        "minimize", "(x - 1)**2 + y**2", "--x", "3", "--y", "1", "--method", "newton", "--log",
        str(log), "--format", "json",
    )  # fmt: skip
    rows = [line.split(",") for line in log.read_text().splitlines()]
    assert rows[0] == ["step", "loss", "gradient_norm"]
    steps = json.loads(done.stdout)["steps"]
    assert [int(r[0]) for r in rows[1:]][-1] == steps
    # the loss and the gradient's norm at each iterate: (x - 1)**2 + y**2 at the point logged
    last = rows[-1]
    assert float(last[1]) == pytest.approx(0, abs=1e-20)
    assert float(last[2]) <= 1e-8


def test_a_bound_of_an_array_bounds_each_element_as_fits_does():
    done = in_process(
        "minimize", "sum((x - [5, 5])**2)", "--x", "[1, 2]", "--bound", "x=0:3", "--method",
        "lbfgs", "--format", "json",
    )  # fmt: skip
    found = json.loads(done.stdout)
    assert found["inputs"] == {"x": [3.0, 3.0]} and found["converged"]
    one = in_process(
        "minimize", "sum((x - [5, 5])**2)", "--x", "[1, 2]", "--bound", "x[1]=0:3", "--method",
        "lbfgs", "--format", "json",
    )  # fmt: skip
    assert json.loads(one.stdout)["inputs"]["x"] == [pytest.approx(5, rel=1e-12), 3.0]
