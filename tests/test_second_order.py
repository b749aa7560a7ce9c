"""`minimize --optimizer bfgs|lbfgs|newton`: SciPy's methods on the engine's exact gradient
and Hessian, against SciPy called directly with its own Rosenbrock derivatives, a hand-derived
bounded minimum and a least-squares line in closed form."""

from __future__ import annotations

import json
import sys

import pytest

from nanograd_cli import api, parse
from nanograd_cli import minimize as minimize_in_python
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
    done = in_process("minimize", ROSENBROCK, *START, "--optimizer", method, "--format", "json")
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
    newton = api.minimize(parse(ROSENBROCK), {"x": -1.2, "y": 1.0}, optimizer="newton")
    assert adam.converged and newton.converged
    assert adam.steps > 100 * newton.steps  # 5,975 steps against 25


def test_a_bounded_minimum_stops_on_the_bound():
    """Rosenbrock with x at most 0.5: the minimum is at x = 0.5, y = x**2 = 0.25, where
    df/dx = -2(1 - x) - 400x(y - x**2) = -1 pushes x outwards, so the gradient projected on
    the bound is 0."""
    done = in_process("minimize", ROSENBROCK, *START, "--optimizer", "lbfgs", "--bound",
                      "x=-2:0.5", "--format", "json")  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    result = json.loads(done.stdout)
    assert result["inputs"] == {"x": 0.5, "y": pytest.approx(0.25, abs=1e-9)}
    assert result["gradients"]["x"] == pytest.approx(-1.0, abs=1e-8)
    assert result["converged"] is True and result["gradient_norm"] <= 1e-8
    direct = scipy_rosenbrock("lbfgs", bounds=[(-2, 0.5), (None, None)])
    assert [result["inputs"]["x"], result["inputs"]["y"]] == pytest.approx(direct.x, abs=1e-9)
    # From Python, with the bound as a pair; an open side as inf.
    same = minimize_in_python(ROSENBROCK, x=-1.2, y=1, optimizer="lbfgs", bounds={"x": (-2, 0.5)})
    assert same.inputs == result["inputs"] and same.steps == result["steps"]
    opened = in_process("minimize", "(x - 3)**2", "--x", "0", "--optimizer", "lbfgs",
                        "--bound", "x=-inf:1", "--format", "csv")  # fmt: skip
    assert opened.stdout == "value,x,d_x,gradient_norm,steps,converged\n4.0,1.0,-4.0,0.0,1,true\n"


def test_a_least_squares_line_from_rows_matches_its_closed_form(tmp_path):
    (tmp_path / "d.csv").write_text("x,y\n1,2\n2,4.1\n3,5.9\n4,8.2\n")
    xs, ys = np.array([1, 2, 3, 4.0]), np.array([2, 4.1, 5.9, 8.2])
    for method in ("bfgs", "lbfgs"):
        done = in_process("minimize", "(a*x - y)**2", "--data", "d.csv", "--a", "0",
                          "--optimizer", method, "--format", "json", cwd=tmp_path)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["inputs"]["a"] == pytest.approx(
            (xs @ ys) / (xs @ xs), rel=1e-12
        )


def test_newton_uses_the_exact_hessian_of_the_inputs_that_move():
    """With y held, Newton's step on a quadratic in x is exact: one step to x = 1."""
    result = api.minimize(
        parse("(x - 1)**2 + x*y + (y - 2)**2"), {"x": 0.0, "y": 0.0}, optimizer="newton", fix=["y"]
    )
    assert result.inputs == {"x": pytest.approx(1.0, abs=1e-12), "y": 0.0} and result.converged


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--optimizer", "bfgs", "--bound", "x=0:1"], "error: --bound needs --optimizer lbfgs "
         "(L-BFGS-B), the method that keeps to bounds: bfgs does not"),
        (["--optimizer", "newton", "--bound", "x=0:1"], "error: --bound needs --optimizer lbfgs "
         "(L-BFGS-B), the method that keeps to bounds: newton does not"),
        (["--bound", "x=0:1"], "error: --bound needs --optimizer lbfgs (L-BFGS-B), the method "
         "that keeps to bounds: adam does not"),
        (["--optimizer", "lbfgs", "--bound", "x=0:1"], "error: the start of x, -1.2, is outside "
         "its bound 0:1: start inside it"),
        (["--optimizer", "lbfgs", "--bound", "z=0:1"], "error: --bound z: z is not a parameter "
         "(parameters: x, y)"),
        (["--optimizer", "lbfgs", "--bound", "x=1:-1"], "error: the bound of x, 1:-1, goes from "
         "low to high (LO < HI)"),
        (["--optimizer", "lbfgs", "--bound", "x=0"], "error: --bound x=0: give LO:HI, such as "
         "0:inf or -1:1"),
    ],
)  # fmt: skip
def test_bounds_where_a_method_cannot_keep_them_are_bad_input(args, message):
    done = in_process("minimize", ROSENBROCK, *START, *args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message + "\n")


def test_rows_by_batch_and_newton_on_rows_are_bad_input(tmp_path):
    (tmp_path / "d.csv").write_text("x,y\n1,2\n2,4\n")
    run = ("minimize", "(a*x - y)**2", "--data", "d.csv", "--a", "0", "--optimizer")
    done = in_process(*run, "bfgs", "--batch", "1", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        "error: --optimizer bfgs takes every row each step (its line search compares the loss "
        "at points): drop --batch, or take sgd, momentum or adam\n",
    )
    done = in_process(*run, "newton", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        "error: --optimizer newton needs the Hessian at a point, and takes no --data: take "
        "bfgs or lbfgs, which need the gradient only\n",
    )


@pytest.mark.slow
def test_steps_that_run_out_are_a_result_and_a_nan_start_bad_input():
    """Through the installed command: the exit codes of the first-order methods."""
    done = nanograd("minimize", ROSENBROCK, *START, "--optimizer", "bfgs", "--steps", "5")
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1].split() == ["steps", "5", "step", "limit"]
    assert done.stderr.startswith("note: did not converge: after 5 steps the gradient's norm is")
    start = nanograd("minimize", "sqrt(x)", "--x", "0", "--optimizer", "lbfgs")
    assert (start.returncode, start.stdout) == (2, "")
    assert start.stderr == "error: the gradient by x is inf at the start: start from a point " \
        "where it is finite\n"  # fmt: skip


def test_where_scipy_stops_short_the_note_says_why():
    """log(x) has no minimum: L-BFGS-B's line search meets nan at x <= 0 and gives up."""
    result = api.minimize(parse("log(x)"), {"x": 1.0}, optimizer="lbfgs")
    assert not result.converged and result.stopped.startswith("L-BFGS-B stopped: ABNORMAL")
    assert api.failure(result, 1e-8).endswith(result.stopped)


def test_without_scipy_the_message_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)  # import scipy raises ImportError
    with pytest.raises(NanogradError, match="needs SciPy, which is not installed: install it"):
        api.minimize(parse("x**2"), {"x": 1.0}, optimizer="bfgs")
    with pytest.raises(InputError):  # bad input is found before SciPy is needed
        api.minimize(parse("x**2"), {"x": 1.0}, optimizer="newton", bounds={"x": "0:1"})


def test_ctrl_c_gives_the_last_iterate():
    seen = []

    def on_step(taken, value):
        seen.append((taken, value))
        if taken == 3:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as stop:
        api.minimize(parse(ROSENBROCK), {"x": -1.2, "y": 1.0}, optimizer="bfgs", on_step=on_step)
    reached = stop.value.reached
    assert reached.interrupted and reached.steps == 3 and [t for t, _ in seen] == [0, 1, 2, 3]
    assert reached.value == seen[-1][1]  # the value at the iterate reached
