"""Beyond first derivatives: Hessians, forward mode, gradient checks, symbolic derivatives and
minimization, against hand derivations, SymPy and properties."""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import re
import signal
import subprocess
import sys

import pytest
from hypothesis import assume, given, settings

from nanograd_cli import parse
from nanograd_cli._forward import forward_gradients
from nanograd_cli._ops import OPS
from nanograd_cli._symbolic import gradient, hessian, to_source

from .helpers import (
    NANOGRAD,
    POINT,
    default_signals,
    expressions,
    in_process,
    nanograd,
    run,
    wait_for_cpu,
)
from .oracle import agrees_with_grad

ROSENBROCK = "(1 - x)**2 + 100*(y - x**2)**2"


def point_for(program):
    return {name: POINT[name] for name in program.inputs}


# Zeros of both signs, negatives, integers and not, saturation, huge, tiny, inf and nan.
EDGES = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -1.5, 3.0, 0.3, 20.0, -40.0, 400.0, 1e-300]
EDGES += [1e300, math.inf, -math.inf, math.nan]


def same_number(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-300)


@pytest.mark.slow
@pytest.mark.parametrize("op", OPS.values(), ids=lambda op: op.name)
def test_formulas_in_the_table_are_the_derivatives_at_edge_points(op):
    """Each op's formulas (docs, symbolic diff) compute what its derivative function does,
    for every argument, at all pairs (or triples) of edge points: nan where it gives nan, inf
    where inf."""
    formulas = [parse(f) for f in op.formulas]
    assert len(formulas) == op.arity
    for args in itertools.product(EDGES, repeat=op.arity):
        local = op.derivative(*args, op.forward(*args))
        env = dict(zip(op.parameters, args, strict=True))
        for k, formula in enumerate(formulas):
            value = formula.values({n: env[n] for n in formula.inputs})[formula.result]
            assert same_number(value, local[k]), (op.name, args, k, value, local[k])


def test_power_derivatives_agree_at_zero():
    """d/dx x**0 is 0 at x = 0, and at a zero base d/dy of x**y follows PyTorch's convention
    (0 for y >= 0) in grad, diff and hessian alike."""
    assert json.loads(run("grad", "x**0", "--x", "0", "--format", "json")[1])["gradients"] == {
        "x": 0.0
    }
    point = {"x": 0.0, "y": 0.0}
    assert parse("x**y").grad(point).gradients == {"x": 0.0, "y": 0.0}
    assert parse("x**y").grad(point, "forward").gradients == {"x": 0.0, "y": 0.0}
    code, out, _ = run("diff", "0**y", "--wrt", "y")
    assert code == 0
    assert json.loads(run("grad", out.strip(), "--y", "2", "--format", "json")[1])["value"] == 0.0
    h = hessian(parse("x**y"), {"x": 0.0, "y": 2.0}).hessian
    assert h["x"]["y"] == h["y"]["x"] == 0.0


def test_hessian_by_hand():
    result = hessian(parse("x*y + tanh(x)"), {"x": 2.0, "y": 3.0})
    value, grads, h = result.value, result.gradients, result.hessian
    assert (value, grads) == (6.9640275800758165, {"x": 3.0706508248531645, "y": 2.0})
    t = math.tanh(2.0)
    assert h["x"]["x"] == pytest.approx(-2 * t * (1 - t * t), rel=1e-14)
    assert (h["x"]["y"], h["y"]["x"], h["y"]["y"]) == (1.0, 1.0, 0.0)
    h = hessian(parse(ROSENBROCK), {"x": 1.0, "y": 1.0}).hessian
    assert h == {"x": {"x": 802.0, "y": -400.0}, "y": {"x": -400.0, "y": 200.0}}


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(expressions())
def test_hessian_symmetric_and_agrees_with_sympy(source):
    sympy = pytest.importorskip("sympy")
    program = parse(source)
    values = point_for(program)
    result = hessian(program, values)
    value, h = result.value, result.hessian
    assume(math.isfinite(value) and abs(value) < 1e6)
    names = program.inputs
    for a in names:
        for b in names:
            assert h[a][b] == pytest.approx(h[b][a], rel=1e-9, abs=1e-9)
    symbols = {n: sympy.Symbol(n) for n in names}
    expr = sympy.sympify(
        source.replace("sigmoid", "_sig").replace("softplus", "_sp"),
        locals={
            **symbols,
            "_sig": lambda z: 1 / (1 + sympy.exp(-z)),
            "_sp": lambda z: sympy.log(1 + sympy.exp(z)),
            "pi": sympy.pi,
        },
    )
    subs = {symbols[n]: values[n] for n in names}
    for a in names:
        for b in names:
            expected = float(sympy.diff(expr, symbols[a], symbols[b]).evalf(subs=subs))
            assert h[a][b] == pytest.approx(expected, rel=1e-7, abs=1e-9), (source, a, b)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(expressions())
def test_forward_mode_equals_reverse_mode(source):
    program = parse(source)
    values = point_for(program)
    evaluation = program.gradients(values)
    forward = forward_gradients(program, values)
    value, derivatives = forward.value, forward.gradients
    assert value == evaluation.result.data or (
        math.isnan(value) and math.isnan(evaluation.result.data)
    )
    for name, node in evaluation.inputs.items():
        # terms of order 1 that cancel (u**2 - u**2) leave 0 or a rounding error of 1e-17,
        # as the two modes add them in different orders
        assert derivatives[name] == pytest.approx(node.grad, rel=1e-12, abs=1e-13, nan_ok=True)


def test_grad_mode_forward_on_the_command_line():
    args = ("grad", "x*y+tanh(x)", "--x", "2", "--y", "3", "--format", "json")
    assert run(*args, "--mode", "forward")[:2] == run(*args)[:2]


@pytest.mark.parametrize("strict", [[], ["--strict"]])
def test_grad_mode_forward_warns_of_non_finite_results_as_reverse_mode(strict):
    args = ("grad", "x + log(y)", "--x", "1", "--y", "0", "--format", "csv", *strict)
    forward = run(*args, "--mode", "forward")
    assert forward == run(*args)
    where = "line 1, column 5: log gave -inf\n  1 | x + log(y)\n          ^\n"
    assert forward[2] == ("error: " if strict else "warning: ") + where
    assert forward[0] == (1 if strict else 0)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(expressions())
def test_diff_output_reparses_to_the_gradient(source):
    program = parse(source)
    values = point_for(program)
    evaluation = program.gradients(values)
    assume(math.isfinite(evaluation.result.data))
    for name in evaluation.inputs:
        text = to_source(gradient(program, [name]))
        assert agrees_with_grad(program, text, name, values), (source, text)


@pytest.mark.parametrize(
    ("source", "wrt", "expected"),
    [
        (
            "x*y + tanh(x)",
            ["x"],
            "y + 1/cosh(x)**2\n# loses digits for |x| > 355 (cosh's square overflows); diff "
            "--exact keeps them",
        ),
        ("x*y + tanh(x)", ["y"], "x"),
        ("x**2 + 0*y", ["x"], "2*x"),
        ("3*x + 1", ["x"], "3"),
        ("3*x**2 + 2*x + 1", ["x"], "6*x + 2"),
        ("log(x**2)", ["x"], "2/x"),
        ("sin(x)*cos(x)", ["x"], "cos(x)**2 - sin(x)**2"),
        ("x*y", [], "d_x = y\nd_y = x"),
        ("d_x = x*x; d_x", ["x"], "2*x"),
    ],
)
def test_diff_outputs(source, wrt, expected):
    args = [arg for w in wrt for arg in ("--wrt", w)]
    assert run("diff", source, *args) == (0, expected + "\n", "")


def test_diff_latex():
    code, out, _ = run("diff", "sqrt(x)/x", "--wrt", "x", "--format", "latex")
    assert code == 0
    assert out == "-\\frac{1}{2 x^{\\frac{3}{2}}}\n"


def test_check_passes_and_fails():
    code, out, err = run("check", "x*y + tanh(x)", "--x", "2", "--y", "3", "--format", "json")
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert result["pass"] is True
    assert result["checks"]["x"]["analytic"] == 3.0706508248531645
    assert result["checks"]["x"]["numeric"] == pytest.approx(3.0706508248531645, rel=1e-9)
    assert result["checks"]["y"]["rel_error"] < 1e-9
    code, out, err = run("check", "relu(x)", "--x", "0", "--format", "csv")
    kink = "a kink: the slope is 0 to the left and 1 to the right"
    assert (code, err) == (1, f"error: gradient check failed for x ({kink})\n")
    assert out == "input,analytic,numeric,abs_error,rel_error,pass\nx,0.0,0.5,0.5,1.0,false\n"


def test_minimize_rosenbrock_with_adam():
    code, out, err = run(
        "minimize", ROSENBROCK, "--x", "-1.2", "--y", "1", "--lr", "0.02", "--format", "json"
    )
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert result["converged"] is True
    assert abs(result["inputs"]["x"] - 1) < 1e-4 and abs(result["inputs"]["y"] - 1) < 1e-4
    assert result["value"] < 1e-12 and result["gradient_norm"] <= 1e-8


@pytest.mark.slow
def test_minimize_that_runs_out_of_steps_exits_0_with_the_point_reached_and_a_note(tmp_path):
    picture = tmp_path / "descent.svg"
    done = in_process("minimize", "(x - 3)**2", "--x", "0", "--steps", "10", "--format", "json",
                    "--plot", str(picture))  # fmt: skip
    result = json.loads(done.stdout)
    assert (done.returncode, result["steps"], result["converged"]) == (0, 10, False)
    x = result["inputs"]["x"]
    assert result["gradient_norm"] == pytest.approx(abs(2 * (x - 3)), rel=1e-12)
    assert done.stderr == (
        f"note: did not converge: after 10 steps the gradient's norm is "
        f"{result['gradient_norm']:.3g}, more than --tol 1e-08 (more --steps, or another --lr, "
        "may reach it)\n"
    )
    assert picture.exists()  # every descent that ran is drawn
    picture.unlink()
    # the same descent with a tolerance it meets: converged, exit 0, the picture drawn
    loose = in_process("minimize", "(x - 3)**2", "--x", "0", "--steps", "10", "--format", "json",
                     "--tol", "10", "--plot", str(picture))  # fmt: skip
    assert (loose.returncode, loose.stderr, json.loads(loose.stdout)["converged"]) == (0, "", True)
    assert picture.exists()


def test_minimize_other_optimizers_and_divergence():
    code, out, _ = run(
        "minimize",
        "(x - 3)**2",
        "--x",
        "0",
        "--method",
        "sgd",
        "--lr",
        "0.5",
        "--format",
        "csv",
    )
    assert code == 0  # x - 0.5 * 2(x - 3) = 3: one step
    assert (
        out == "value,x,d_x,gradient_norm,steps,converged,interrupted,diverged\n"
        "0.0,3.0,0.0,0.0,1,true,false,false\n"
    )
    code, out, _ = run(
        "minimize",
        "(x - 3)**2",
        "--x",
        "0",
        "--method",
        "momentum",
        "--lr",
        "0.05",
        "--format",
        "json",
    )
    assert code == 0 and json.loads(out)["inputs"]["x"] == pytest.approx(3.0, abs=1e-6)
    code, out, err = run("minimize", "x**3", "--x", "1", "--method", "sgd", "--lr", "1")
    assert code == 1  # the last point where the value and gradient were finite, then why
    assert out.splitlines()[-1].split() == ["steps", "7", "diverged"]
    assert err == "error: diverged at step 8: the value is -inf; try a smaller --lr\n"


def test_minimize_progress_goes_to_standard_error(monkeypatch):
    from nanograd_cli.render._progress import StepsProgress

    monkeypatch.setenv("FORCE_COLOR", "1")
    screen = io.StringIO()
    monkeypatch.setattr(sys, "stderr", screen)
    progress = StepsProgress(100)
    progress.update(7, 0.25)  # any step: shown by time, not every 50 steps
    progress.update(8, 0.125)  # too soon after: kept for the next
    progress.stop()
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())
    assert "step 7/100" in shown and "loss 0.25" in shown and "0.125" not in shown
    assert re.search(r"loss 0\.25 0:00:0\d elapsed, -:--:-- left", shown), shown


def test_check_fails_where_a_derivative_is_not_finite():
    """exp(709.78) is finite, so is its derivative, but exp(709.78 + h) overflows: the numeric
    derivative is inf and tells nothing, so the check fails, with --strict or without."""
    assert math.isfinite(math.exp(709.78))
    with pytest.raises(OverflowError):  # the step there: cbrt(2**-52) * 709.78, about 0.0043
        math.exp(709.78 + (2.0**-52) ** (1 / 3) * 709.78)
    for extra in ([], ["--strict"]):
        result = in_process("check", "exp(x)", "--x", "709.78", "--format", "json", *extra)
        assert (result.returncode, result.stderr) == (
            1,
            "error: gradient check failed for x (numeric is inf)\n",
        )
        check = json.loads(result.stdout)["checks"]["x"]
        assert check["analytic"] == math.exp(709.78)
        assert (check["numeric"], check["pass"]) == ("inf", False)
    # d/dx sqrt(x) = 1/(2 sqrt(x)) is inf at 0, and sqrt(-h) is nan; y's check still passes
    result = in_process("check", "sqrt(x)*y", "--x", "0", "--y", "1", "--format", "csv")
    assert result.returncode == 1
    assert result.stdout.splitlines()[1:] == ["x,inf,NaN,NaN,NaN,false", "y,0.0,0.0,0.0,0.0,true"]
    assert result.stderr == "error: gradient check failed for x (analytic is inf, numeric is nan)\n"
    # log(x) at 1e-8: the derivative is 1e8, but log(x - h) is nan, h = cbrt(2**-52)
    result = in_process("check", "log(x)", "--x", "1e-8")
    assert (result.returncode, result.stderr) == (
        1,
        "error: gradient check failed for x (numeric is nan: the source is nan a step of "
        "6.1e-06 to a side, past the edge of where it is defined; check farther from it)\n",
    )
    # nan at the point itself (log(-1)): no edge nearby is to blame
    result = in_process("check", "log(x) + log(y)", "--x", "1", "--y", "-1")
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "error: gradient check failed for x (numeric is nan: the source is nan at the point "
        "itself; check where it is a number), y (numeric is nan: the source is nan at the point "
        "itself; check where it is a number)"
    )


@pytest.mark.parametrize(
    "source, start, message",
    [
        # d/dx sqrt(x) = 1/(2 sqrt(x)): inf at 0, where the value, 0, is finite
        ("sqrt(x)", "0", "the gradient by x is inf at the start"),
        # d/dx (-2)**x = (-2)**x * log(-2): nan, where the value, 4, is finite
        ("(-2)**x", "2", "the gradient by x is nan at the start"),
        ("x**2", "1e200", "the value is inf at the start"),
        ("x", "nan", "the value is nan at the start"),
    ],
)
def test_minimize_from_a_start_that_is_not_finite_is_bad_input(source, start, message):
    """No learning rate helps where the start itself is nan or inf: exit 2, saying which."""
    result = in_process("minimize", source, "--x", start)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines()[-1] == (
        f"error: {message}: start from a point where it is finite"
    )
    assert "--lr" not in result.stderr


def test_minimize_names_a_gradient_that_goes_nan_on_the_way():
    """sqrt((x - 3)**2) = |x - 3|: from 0 the gradient is -1, one SGD step of 3 lands on 3,
    where sqrt's derivative at 0 (inf) times 2(x - 3) = 0 is nan: the start is printed."""
    result = in_process("minimize", "sqrt((x - 3)**2)", "--x", "0", "--method", "sgd", "--lr", "3")
    assert result.returncode == 1  # the start, where the value and gradient were finite
    assert result.stdout.split() == [
        *("value", "gradient", "result", "3.0", "x", "0.0", "-1.0"),
        *("gradient", "norm", "1.0", "steps", "0", "diverged"),
    ]
    assert (
        result.stderr == "error: diverged at step 1: the gradient by x is nan; try a smaller --lr\n"
    )


def _stderr_closed() -> None:
    os.close(2)


@pytest.mark.slow
def test_minimize_and_grad_points_work_with_standard_error_closed(tmp_path):
    """`2>&-`: no progress display and no warning can be shown, and the results still are."""
    result = nanograd(
        "minimize", "(x - 3)**2", "--x", "0", "--method", "sgd", "--lr", "0.5",
        "--format", "csv", preexec_fn=_stderr_closed,
    )  # fmt: skip
    assert (result.returncode, result.stderr) == (0, "")
    assert (
        result.stdout == "value,x,d_x,gradient_norm,steps,converged,interrupted,diverged\n"
        "0.0,3.0,0.0,0.0,1,true,false,false\n"
    )
    points = tmp_path / "p.csv"
    points.write_text("x\n1\n2\n")
    result = nanograd("grad", "x*x", "--points", str(points), preexec_fn=_stderr_closed)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == "x,value,d_x\n1,1.0,2.0\n2,4.0,4.0\n"
    # a warning that has nowhere to go does not change the outcome either
    result = nanograd("minimize", "sqrt(x)", "--x", "0", preexec_fn=_stderr_closed)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", "")


def test_minimize_moves_only_the_inputs_asked_for():
    source = "(x - 1)**2 + (y - 2)**2"
    for how in (["--fix", "y"], ["--wrt", "x"]):
        done = in_process(
            "minimize", source, "--x", "0", "--y", "0", "--lr", "0.1", *how, "--format", "json"
        )
        result = json.loads(done.stdout)
        assert (done.returncode, result["inputs"]["y"], result["converged"]) == (0, 0.0, True)
        assert result["inputs"]["x"] == pytest.approx(1.0, abs=1e-8)
        # the norm is the moved inputs' gradient's; the held input's gradient is reported
        assert result["gradients"]["y"] == -4.0
        assert result["gradient_norm"] == abs(result["gradients"]["x"])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--fix", "q"], "error: --fix q: q is not an input (inputs: x, y)\n"),
        (["--wrt", "q"], "error: --wrt q: q is not an input (inputs: x, y)\n"),
        (
            ["--wrt", "x,y"],
            "error: --wrt x,y: x,y is not an input (inputs: x, y); give each on its own: "
            "--wrt x --wrt y\n",
        ),
        (
            ["--fix", "x", "--fix", "y"],
            "error: every input is held by --fix: there is nothing to move\n",
        ),
        (
            ["--wrt", "x", "--fix", "y"],
            "error: give the inputs to move (--wrt) or those to hold (--fix), not both\n",
        ),
    ],
)
def test_minimize_refuses_what_it_cannot_move(options, message):
    done = in_process("minimize", "(x - 1)**2 + y", "--x", "0", "--y", "0", *options)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message)


@pytest.mark.slow
@pytest.mark.signals
def test_minimize_interrupted_prints_the_point_reached():
    command = [NANOGRAD, "minimize", "(x - 1)**2", "--x", "0", "--lr", "1e-9", "--tol", "0"]
    with subprocess.Popen(
        [*command, "--steps", "100000000", "--format", "csv"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,
    ) as process:
        wait_for_cpu(process, 1.0)  # started, and descending
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    header, row = out.splitlines()
    value, x, d_x, norm, steps, converged, interrupted, diverged = row.split(",")
    assert float(norm) == abs(float(d_x))
    assert (process.returncode, header) == (
        130,
        "value,x,d_x,gradient_norm,steps,converged,interrupted,diverged",
    )
    assert err == f"error: interrupted at step {steps}: the output is the point reached\n"
    assert int(steps) > 0 and (converged, interrupted, diverged) == ("false", "true", "false")
    assert float(value) == pytest.approx((float(x) - 1) ** 2, rel=1e-12)


# Precision edges: points where a careful float64 evaluation gets every quantity to a few
# units in the last place, on every path (grad in both modes, --points, diff read back, and
# hessian, which differentiates the symbolic gradient again).

ULP = 2.0**-52


def gradients_on_every_path(source: str, point: dict[str, float]) -> dict[str, dict]:
    """The gradient at `point` by reverse and forward mode, compiled code, the tape, and
    diff's exact derivative parsed back and evaluated."""
    from nanograd_cli._compiled import gradients_at
    from nanograd_cli._tape import batch_gradients

    program = parse(source)
    _, tape = batch_gradients(program, {n: [v] for n, v in point.items()})
    printed = {n: parse(to_source({n: e})) for n, e in gradient(program, program.inputs).items()}
    return {
        "reverse": program.grad(point).gradients,
        "forward": program.grad(point, "forward").gradients,
        "compiled": gradients_at(program, point)[1],
        "tape": {n: float(g[0]) for n, g in tape.items()},
        "diff": {
            n: p.values({m: point[m] for m in p.inputs})[p.result] if p.inputs else p.values({})[-1]
            for n, p in printed.items()
        },
    }


def close_to(got: float, want: float, ulps: float) -> bool:
    if math.isnan(want) or math.isinf(want):
        return got == want or (math.isnan(got) and math.isnan(want))
    return abs(got - want) <= ulps * ULP * abs(want)


@pytest.mark.parametrize(("name", "sign"), [("asin", 1.0), ("acos", -1.0)])
@pytest.mark.parametrize("x", [0.999999999, -0.999999999, 0.9999999999999999, 1 - 2**-30])
def test_asin_and_acos_near_one_keep_their_digits(name, sign, x):
    """1/sqrt((1 - x)*(1 + x)), not 1/sqrt(1 - x**2): at 0.999999999 the gradient was
    22360.680091199512 (2.5e-10 off) and the Hessian 11180340350621.04 (7.5e-10 off)."""
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(50):
        t = mpmath.mpf(x)
        slope = float(sign / mpmath.sqrt(1 - t * t))
        second = float(sign * t / (1 - t * t) ** 1.5)
    for path, g in gradients_on_every_path(f"{name}(x)", {"x": x}).items():
        assert close_to(g["x"], slope, 4), (path, g["x"], slope)
    assert close_to(hessian(parse(f"{name}(x)"), {"x": x}).hessian["x"]["x"], second, 8)


def test_a_zero_base_has_second_derivatives_zero_for_a_positive_exponent():
    """d/dy of 0**y is 0 for y > 0, and so is its derivative (it was nan: 0*log(0))."""
    for y in (0.5, 2.0, 7.0):
        assert hessian(parse("0.0**y"), {"y": y}).hessian == {"y": {"y": 0.0}}
    h = hessian(parse("x**y"), {"x": 0.0, "y": 2.0}).hessian
    assert h == {"x": {"x": 2.0, "y": 0.0}, "y": {"x": 0.0, "y": 0.0}}


def test_mixed_second_derivatives_of_a_power_agree():
    """At (3.1, 0) both mixed derivatives of x**y are 1/x (one was 1.0: the derivative
    through step(abs(y)), which jumps at 0), and at (2, 1023.5) both are inf (one was nan)."""
    h = hessian(parse("x**y"), {"x": 3.1, "y": 0.0}).hessian
    assert h["x"]["y"] == h["y"]["x"] == 1 / 3.1
    h = hessian(parse("x**y"), {"x": 2.0, "y": 1023.5}).hessian
    assert h["x"]["y"] == h["y"]["x"] == math.inf


def test_a_power_whose_derivative_is_subnormal_keeps_it():
    """d/dx x**y at (2, -1074) is -1074*2**-1075 = -537*2**-1074 (2**-1075 itself rounds to
    0), in both modes and on the tape (the printed y*x**(y - 1) underflows where x**(y - 1)
    does: see docs/calculus.md)."""
    point = {"x": 2.0, "y": -1074.0}
    expected = -537 * 5e-324
    for path, g in gradients_on_every_path("x**y", point).items():
        if path != "diff":
            assert g["x"] == expected, path
    assert parse("x**3").grad({"x": 1e-162}).gradients["x"] == 3 * 1e-162 * 1e-162


def test_atan2_has_symmetric_second_derivatives_and_no_overflow_in_its_printed_gradient():
    """At (2, 2) the mixed derivatives are 0 (they were 2.8e-17 and -2.8e-17); the printed
    gradient keeps its digits at (1e300, 1e300) and (1e-200, 1e-200), where y/hypot(x, y)**2
    gave 0 and inf."""
    h = hessian(parse("atan2(y, x)"), {"x": 2.0, "y": 2.0}).hessian
    assert h["x"]["y"] == h["y"]["x"] == 0.0
    assert h["x"]["x"] == -h["y"]["y"] == pytest.approx(0.125, rel=4 * ULP)
    for v in (1e300, 1e-200, 3.0, 1e-150):
        truth = 1 / (2 * v)  # d/dy atan2(y, x) = x/(x**2 + y**2) at x = y = v
        for path, g in gradients_on_every_path("atan2(y, x)", {"x": v, "y": v}).items():
            if math.isinf(truth) or truth > 1e308:
                continue
            assert close_to(g["y"], truth, 4) and close_to(g["x"], -truth, 4), (path, v, g)


def test_tanh_has_a_second_derivative_where_it_saturates():
    """d^2/dx^2 tanh(x) at 1000 is -0, and tiny but not 0 at 300 (it was nan at 1000: the
    printed 1/cosh(x)**2 differentiated through cosh's inf)."""
    mpmath = pytest.importorskip("mpmath")
    assert hessian(parse("tanh(x)"), {"x": 1000.0}).hessian["x"]["x"] == 0.0
    for x in (0.3, 20.0, 300.0, -300.0):
        with mpmath.workdps(50):
            truth = float(-2 * mpmath.tanh(x) * mpmath.sech(x) ** 2)
        assert close_to(hessian(parse("tanh(x)"), {"x": x}).hessian["x"]["x"], truth, 8), x


def test_hypot_of_subnormals_has_the_gradient_of_the_unit_vector():
    """At (5e-324, 5e-324) the gradient is (0.7071..., 0.7071...), not (1, 1): h rounds to
    5e-324 there, so x/h is 1; sign(x)/hypot(1, y/x) forms no h."""
    for path, g in gradients_on_every_path("hypot(x, y)", {"x": 5e-324, "y": 5e-324}).items():
        assert close_to(g["x"], math.sqrt(0.5), 2) and close_to(g["y"], math.sqrt(0.5), 2), path
    for path, g in gradients_on_every_path("hypot(x, y)", {"x": 3e-320, "y": -4e-320}).items():
        assert close_to(g["x"], 0.6, 4) and close_to(g["y"], -0.8, 4), path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["diff", "x**2", "--wrt", "X"],
            "error: --wrt X: X is not an input (inputs: x); did you mean x?\n",
        ),
        (
            ["grad", "alpha*x", "--alpah", "1", "--x", "2"],
            "error: alpah is not an input of this source (its inputs: alpha, x); did you mean "
            "alpha?\n",
        ),
        (["diff", "x*y", "--wrt", "z"], "error: --wrt z: z is not an input (inputs: x, y)\n"),
        (
            ["grad", "var(x, ddof=1)", "--x", "[1, 2, 3]"],
            "error: line 1, column 12: var takes no ddof: it divides by the number of elements; "
            "for n - 1, write var(x)*len(x)/(len(x) - 1)\n  1 | var(x, ddof=1)\n"
            "                 ^\n",
        ),
        (
            ["grad", "std(x, correction=1)", "--x", "[1, 2, 3]"],
            "error: line 1, column 18: std takes no correction: it divides by the number of "
            "elements; for n - 1, write sqrt(var(x)*len(x)/(len(x) - 1))\n"
            "  1 | std(x, correction=1)\n                       ^\n",
        ),
        (
            ["grad", "variance(x)", "--x", "[1, 2]"],
            "error: line 1, column 1: unknown function variance: did you mean var?\n"
            "  1 | variance(x)\n      ^\n",
        ),
    ],
)
def test_a_name_that_is_no_input_says_which_one_was_meant(args, message):
    done = in_process(*args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message)
