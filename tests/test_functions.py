"""The functions people reach for (min, max, clamp, atan2, hypot, erf, erfc, log to a base, pow,
floor, ceil, round, log1p, expm1) and the names ln and π: values against mpmath, derivatives
against SymPy's, kinks and ties against PyTorch, and diff and hessian through them."""

from __future__ import annotations

import itertools
import json
import math
import random

import pytest

from nanograd_cli import parse
from nanograd_cli._symbolic import hessian

from .helpers import in_process, limited, run

mpmath = pytest.importorskip("mpmath")
sympy = pytest.importorskip("sympy")
A, B = sympy.symbols("a b", real=True)


def sampled(seed: int, count: int, *ranges: tuple[float, float]) -> list[tuple[float, ...]]:
    """`count` points, each coordinate uniform in its range."""
    rng = random.Random(seed)
    return [tuple(rng.uniform(lo, hi) for lo, hi in ranges) for _ in range(count)]


TINY = [(1e-300,), (-1e-300,), (1e-20,), (-3e-12,), (2e-8,), (-1e-5,)]

# name -> (source in a (and b), the function in mpmath, the same in SymPy, points)
SMOOTH = {
    "expm1": ("expm1(a)", mpmath.expm1, sympy.exp(A) - 1, TINY + sampled(1, 40, (-30, 30))),
    "log1p": ("log1p(a)", mpmath.log1p, sympy.log(1 + A), TINY + sampled(2, 40, (-0.999, 100))),
    "erf": ("erf(a)", mpmath.erf, sympy.erf(A), TINY + sampled(3, 40, (-6, 6))),
    "erfc": ("erfc(a)", mpmath.erfc, sympy.erfc(A), sampled(4, 40, (-6, 26))),
    "log(x, base)": (
        "log(a, b)",
        mpmath.log,
        sympy.log(A, B),
        sampled(5, 30, (0.01, 100), (1.01, 100)) + sampled(6, 30, (0.01, 100), (0.01, 0.99)),
    ),
    "atan2": ("atan2(a, b)", mpmath.atan2, sympy.atan2(A, B), sampled(7, 60, (-10, 10), (-10, 10))),
    "hypot": (
        "hypot(a, b)",
        mpmath.hypot,
        sympy.sqrt(A**2 + B**2),
        [*sampled(8, 40, (-10, 10), (-10, 10)), (1e200, 3e200), (1e-200, -2e-200)],
    ),
    "pow": ("pow(a, b)", mpmath.power, A**B, sampled(9, 60, (0.05, 5), (-3, 3))),
}


def derivatives(expression, symbols) -> list:
    """Each first derivative of a SymPy expression, as a function evaluated by mpmath."""
    return [sympy.lambdify(symbols, sympy.diff(expression, s), "mpmath") for s in symbols]


@pytest.mark.parametrize("name", SMOOTH)
def test_values_and_derivatives_agree_with_mpmath_and_sympy(name):
    """Every value to a few units in the last place against mpmath (log1p and expm1 at 1e-20
    too, where log(1 + x) and exp(x) - 1 lose every digit), every derivative to 1e-12 against
    SymPy's, evaluated by mpmath at 50 digits, in reverse and forward mode."""
    source, f, expression, points = SMOOTH[name]
    program = parse(source)
    exact_derivatives = derivatives(expression, [A, B][: len(program.inputs)])
    with mpmath.workdps(50):
        for point in points:
            values = dict(zip(program.inputs, point, strict=True))
            at = [mpmath.mpf(v) for v in point]
            exact = float(f(*at))
            slopes = [float(d(*at)) for d in exact_derivatives]
            for mode in ("reverse", "forward"):
                result = program.grad(values, mode)
                assert result.value == pytest.approx(exact, rel=4e-16, abs=0), (point, mode)
                for n, slope in zip(program.inputs, slopes, strict=True):
                    assert result.gradients[n] == pytest.approx(slope, rel=1e-12), (point, n)


def test_log_of_one_argument_is_natural_and_ln_is_log():
    for x in (0.3, 1.0, 8.0, 1e300):
        assert parse("ln(x)").grad({"x": x}) == parse("log(x)").grad({"x": x})
        assert parse("log(x, e)").grad({"x": x}).value == pytest.approx(math.log(x), rel=1e-15)
    assert parse("log(8, 2)").values({})[-1] == 3.0
    assert parse("log(1000, 10)").values({})[-1] == pytest.approx(3.0, rel=1e-15)


def test_rounding_functions_have_derivative_zero_and_round_halves_to_even():
    points = [-2.5, -1.5, -0.5, -0.4, 0.0, 0.4, 0.5, 1.5, 2.5, 2.7, 1e300]
    expected = {
        "floor": [-3, -2, -1, -1, 0, 0, 0, 1, 2, 2, 1e300],
        "ceil": [-2, -1, -0.0, -0.0, 0, 1, 1, 2, 3, 3, 1e300],
        "round": [-2, -2, -0.0, -0.0, 0, 0, 0, 2, 2, 3, 1e300],
    }
    for name, values in expected.items():
        program = parse(f"{name}(x)")
        for x, y in zip(points, values, strict=True):
            result = program.grad({"x": x})
            assert (result.value, result.gradients) == (y, {"x": 0.0})
            assert math.copysign(1, result.value) == math.copysign(1, y)  # -0 where C has it
        for special in (math.inf, -math.inf):
            assert program.grad({"x": special}).value == special
        assert math.isnan(program.grad({"x": math.nan}).value)


# Ties, bounds and jumps, where PyTorch's conventions decide the derivative.
KINKS = {
    "max(x, y)": [(1.0, 1.0), (0.0, -0.0), (-0.0, 0.0), (2.0, 1.0), (1.0, 2.0), (-3.0, -3.0)],
    "min(x, y)": [(1.0, 1.0), (0.0, -0.0), (2.0, 1.0), (1.0, 2.0), (1e300, 1e300)],
    "clamp(x, y, z)": [
        (x, lo, hi) for x, lo, hi in itertools.product([-1.0, 0.0, 0.5, 1.0, 2.0], repeat=3)
    ],
    "floor(x)": [(-1.0,), (-0.5,), (0.0,), (0.5,), (1.0,), (2.0,)],
    "ceil(x)": [(-1.0,), (-0.5,), (0.0,), (0.5,), (1.0,), (2.0,)],
    "round(x)": [(-1.5,), (-0.5,), (0.0,), (0.5,), (1.5,), (2.5,), (2.0,)],
    "relu(x)": [(0.0,), (-1.0,), (1.0,)],
    "abs(x)": [(0.0,), (-1.0,), (1.0,)],
}


def torch_gradients(source: str, point: tuple[float, ...]):
    torch = pytest.importorskip("torch")
    functions = {
        "max": torch.maximum,
        "min": torch.minimum,
        "clamp": torch.clamp,
        "floor": torch.floor,
        "ceil": torch.ceil,
        "round": torch.round,
        "relu": torch.relu,
        "abs": torch.abs,
    }
    args = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in point]
    y = functions[source.split("(")[0]](*args)
    y.backward()
    return y.item(), [0.0 if a.grad is None else a.grad.item() for a in args]


@pytest.mark.parametrize("source", KINKS)
def test_kinks_ties_and_bounds_follow_pytorch(source):
    """Reverse mode, forward mode and the tape give PyTorch's value and derivatives at every
    tie (max(1, 1)), bound (clamp(0, 0, 1), clamp(0, 1, 0), clamp(-1, 0, 0)) and jump."""
    from nanograd_cli._tape import batch_gradients

    program = parse(source)
    points = KINKS[source]
    columns = {n: [p[k] for p in points] for k, n in enumerate(program.inputs)}
    tape_value, tape_gradients = batch_gradients(program, columns)
    for row, point in enumerate(points):
        value, gradients = torch_gradients(source, point)
        values = dict(zip(program.inputs, point, strict=True))
        for result in (program.grad(values), program.grad(values, "forward")):
            assert result.value == value, point
            assert list(result.gradients.values()) == gradients, point
        assert tape_value[row] == value
        assert [float(tape_gradients[n][row]) for n in program.inputs] == gradients, point


def test_clamp_of_three_varying_arguments_adds_their_derivatives_as_pytorch():
    """clamp's three derivatives flow back to an input used in all of its arguments: below
    (x = 1), inside (2), at the upper bound (3), at lo = hi (0.5) and at lo > hi (0)."""
    torch = pytest.importorskip("torch")
    program = parse("clamp(x*x, x + 1, 3*x)")
    for x in (1.0, 2.0, 3.0, 0.5, 0.0):
        t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        torch.clamp(t * t, t + 1, 3 * t).backward()
        assert program.grad({"x": x}).gradients == {"x": t.grad.item()}
        assert program.grad({"x": x}, "forward").gradients == {"x": t.grad.item()}


# Functions of two and three arguments, in one source, for diff and hessian.
MIXED = "atan2(y, x)*hypot(x, y) + erf(x*y) + log(x, y) + pow(x, y) + clamp(x, y, 2) + max(x, y)"


def test_hessian_through_the_new_functions_agrees_with_sympy():
    point = {"x": 1.3, "y": 0.7}
    x, y = sympy.symbols("x y", real=True)
    # clamp(x, y, 2) and max(x, y) are x near this point, where y < x < 2
    expression = (
        sympy.atan2(y, x) * sympy.sqrt(x**2 + y**2)
        + sympy.erf(x * y)
        + sympy.log(x, y)
        + x**y
        + 2 * x
    )
    result = hessian(parse(MIXED), point)
    at = {x: sympy.Float(point["x"], 50), y: sympy.Float(point["y"], 50)}
    symbols = {"x": x, "y": y}
    for a, sa in symbols.items():
        slope = float(sympy.diff(expression, sa).evalf(50, subs=at))
        assert result.gradients[a] == pytest.approx(slope, rel=1e-12)
        for b, sb in symbols.items():
            expected = float(sympy.diff(expression, sa, sb).evalf(50, subs=at))
            assert result.hessian[a][b] == pytest.approx(expected, rel=1e-10), (a, b)


@pytest.mark.parametrize(
    ("source", "call"),
    [
        (MIXED, "log(x,y)"),
        ("x*clamp(x, y, 2)", "clamp(x,y,2)"),
        ("clamp(x*y, y - 1, x**2)", "step("),
        ("log(x, 2)*expm1(y) - log1p(x)/erfc(y)", "erfc(y)"),
        ("ln(x)*π + log(x)", "/x"),
    ],
)
def test_diff_prints_calls_of_every_arity_and_its_output_reparses_to_the_gradient(source, call):
    """`nanograd diff` prints calls of two and three arguments (log(x, y), clamp(x, y, 2)) so
    that its output, evaluated by `nanograd grad`, is the gradient `grad` computes."""
    point = [a for n in parse(source).inputs for a in (f"--{n}", {"x": "1.3", "y": "0.7"}[n])]
    grad = in_process("grad", source, *point, "--format", "json")
    assert grad.returncode == 0, grad.stderr
    inputs = json.loads(grad.stdout)["inputs"]
    printed = ""
    for name, expected in json.loads(grad.stdout)["gradients"].items():
        diff = in_process("diff", source, "--wrt", name)
        assert (diff.returncode, diff.stderr) == (0, "")
        derivative = parse(diff.stdout)
        args = [a for n in derivative.inputs for a in (f"--{n}", str(inputs[n]))]
        value = in_process("grad", diff.stdout, *args, "--format", "json")
        assert value.returncode == 0, (diff.stdout, value.stderr)
        assert json.loads(value.stdout)["value"] == pytest.approx(expected, rel=1e-12)
        printed += diff.stdout.replace(" ", "")
    assert call in printed


def test_ln_and_pi_work_on_the_command_line():
    done = in_process("grad", "ln(x) + π*x", "--x", "2", "--format", "json")
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout) == {
        "value": math.log(2) + math.pi * 2,
        "inputs": {"x": 2.0},
        "gradients": {"x": 0.5 + math.pi},
    }


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("log(x, 2, 3)", "line 1, column 12: log takes 1 or 2 arguments, not 3"),
        ("clamp(x, 1)", "line 1, column 11: clamp takes 3 arguments, not 2"),
        ("max(x, y, z)", "line 1, column 12: max takes 1 or 2 arguments, not 3"),
        ("ln = 2", "line 1, column 1: ln is a function and cannot be assigned"),
        ("π = 3", "line 1, column 1: π is a constant and cannot be assigned"),
        ("2π", "missing operator between '2' and 'π': write 2*π"),
        ("ln x", "missing operator between 'ln' and 'x': write ln(x)"),
        ("π(x)", "π is not a function; to multiply, write π*(...)"),
    ],
)
def test_wrong_calls_and_misused_names_are_clear_errors(source, message):
    done = in_process("grad", source, "--x", "1")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("error: ") and message in done.stderr.splitlines()[0]


# Comparisons, % and where: the ops that need the grammar's comparisons and its %.


def test_comparisons_are_zero_or_one_with_derivative_zero_nan_included():
    """Each comparison is 1 where it holds, else 0, as IEEE 754 compares (every comparison
    with nan is false but !=), with derivative 0, in both modes, on the tape and in diff."""
    from nanograd_cli._tape import batch_gradients

    values = [-1.0, 0.0, -0.0, 1.0, math.inf, -math.inf, math.nan]
    pairs = list(itertools.product(values, repeat=2))
    tests = {
        "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b,
        ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b,
        "==": lambda a, b: a == b,
        "!=": lambda a, b: a != b,
    }
    for name, test in tests.items():
        program = parse(f"x {name} y")
        value, _ = batch_gradients(
            program, {"x": [a for a, _ in pairs], "y": [b for _, b in pairs]}
        )
        for row, (a, b) in enumerate(pairs):
            expected = 1.0 if test(a, b) else 0.0
            for mode in ("reverse", "forward"):
                result = program.grad({"x": a, "y": b}, mode)
                assert result.value == expected, (name, a, b)
                assert result.gradients == {"x": 0.0, "y": 0.0}
            assert value[row] == expected
        code, out, _ = run("diff", f"x {name} y")
        assert (code, out) == (0, "d_x = 0\nd_y = 0\n")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("x + 1 > 2*y", 0.0),  # the comparison is loosest of all: (x + 1) > (2*y)
        ("(x < y) + (y < x)", 1.0),
        ("-(x < y)", -1.0),
        ("-7 % 3", 2.0),  # (-7) % 3, the sign of the divisor
        ("7 % -3", -2.0),
        ("2*x % 3", 2.0),  # (2*x) % 3: % is as tight as * and /, left-associative
        ("x % 3 * 2", 2.0),  # (x % 3)*2
        ("x**2 % 3", 1.0),
        ("10 % 4 % 3", 2.0),
        ("where(x < y, 10, 20) + 1", 11.0),
    ],
)
def test_comparisons_and_mod_bind_as_documented(source, expected):
    program = parse(source)
    values = {"x": 1.0, "y": 2.0}
    assert program.grad({n: values[n] for n in program.inputs}).value == expected


def floor_mod(a: float, b: float) -> float:
    """a - b*floor(a/b) in exact arithmetic, rounded once: what a % b should be."""
    from fractions import Fraction

    fa, fb = Fraction(a), Fraction(b)
    return float(fa - fb * math.floor(fa / fb))


def test_mod_is_floor_mod_as_python_and_numpy_with_the_quotient_as_its_derivative():
    """a % b against exact floor division (and NumPy's mod); d/da is 1, d/db is -floor(a/b)
    exactly (SymPy's Mod has no derivative: floor of the exact quotient is its value), in
    reverse and forward mode, on the tape and in diff read back: at (1, 0.1) the quotient is
    9, though 1/0.1 rounds to 10."""
    from fractions import Fraction

    from nanograd_cli._tape import batch_gradients

    np = pytest.importorskip("numpy")
    program = parse("x % y")
    points = [(1.0, 0.1), (-1.0, 3.0), (1.0, -3.0), (7.5, 2.0), (-7.5, 2.0), (0.3, 0.1)]
    points += [(1e17, 3.0), (-1e-20, 1.0), (5.0, 0.7), (-5.0, -0.7), (2.0, 1e-300)]
    points += sampled(11, 60, (-50, 50), (-5, 5))
    printed = run("diff", "x % y", "--wrt", "y")[1]
    columns = {"x": [a for a, _ in points], "y": [b for _, b in points]}
    tape_value, tape_gradients = batch_gradients(program, columns)
    for row, (a, b) in enumerate(points):
        assert a % b == floor_mod(a, b) == float(np.mod(a, b))
        quotient = float(math.floor(Fraction(a) / Fraction(b)))
        for mode in ("reverse", "forward"):
            result = program.grad({"x": a, "y": b}, mode)
            assert result.value == a % b
            assert result.gradients == {"x": 1.0, "y": -quotient}, (a, b)
        assert (tape_value[row], tape_gradients["y"][row]) == (a % b, -quotient)
        read_back = parse(printed).values({"x": a, "y": b})[-1]
        assert read_back == -quotient, (a, b, printed)
    assert (parse("1 % 0.1").values({})[-1], 1 // 0.1) == (0.09999999999999995, 9.0)


def test_mod_at_zero_and_the_infinities_follows_python():
    program = parse("x % y")
    cases = [
        (5.0, 0.0, math.nan),
        (math.inf, 3.0, math.nan),
        (-1.0, math.inf, math.inf),
        (1.0, math.inf, 1.0),
        (-0.0, 3.0, 0.0),
        (0.0, -3.0, -0.0),
    ]
    for a, b, expected in cases:
        value = program.grad({"x": a, "y": b}).value
        assert (math.isnan(value) and math.isnan(expected)) or (
            value == expected and math.copysign(1, value) == math.copysign(1, expected)
        ), (a, b, value)


WHERE_CASES = {
    # source: (points, the same function in SymPy)
    "where(x > 0, log(x), 0)": (
        [-1.0, -0.0, 0.0, 0.5, 2.0],
        lambda x, y: sympy.Piecewise((sympy.log(x), x > 0), (0, True)),
    ),
    "where(x > 0, sqrt(x), x*x)": (
        [-2.0, -1.0, 0.0, 0.25, 4.0],
        lambda x, y: sympy.Piecewise((sympy.sqrt(x), x > 0), (x * x, True)),
    ),
    "where(x < y, sin(x*y), x - y) + x*where(y > 1, y, 1/x)": (
        [(-1.0, 2.0), (3.0, 2.0), (0.5, 0.5), (0.3, -0.7)],
        lambda x, y: (
            sympy.Piecewise((sympy.sin(x * y), x < y), (x - y, True))
            + x * sympy.Piecewise((y, y > 1), (1 / x, True))
        ),
    ),
    "where(x > 0, where(y > 0, x*y, sin(x)), log(-x))": (
        [(-1.0, 2.0), (2.0, 3.0), (2.0, -3.0)],
        lambda x, y: sympy.Piecewise(
            (sympy.Piecewise((x * y, y > 0), (sympy.sin(x), True)), x > 0),
            (sympy.log(-x), True),
        ),
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("source", WHERE_CASES)
def test_where_differentiates_the_branch_taken_on_every_path(source):
    """where's value and gradient against SymPy's Piecewise, in reverse and forward mode, on
    the tape, in hessian and in diff read back; the branch not taken (log(x) at x = -1, nan
    there) adds nothing and makes no warning."""
    from nanograd_cli._tape import batch_gradients

    points, function = WHERE_CASES[source]
    program = parse(source)
    names = program.inputs
    x, y = sympy.symbols("x y", real=True)
    expression = function(x, y)
    symbols = {"x": x, "y": y}
    points = [p if isinstance(p, tuple) else (p,) for p in points]
    printed = {n: run("diff", source, "--wrt", n)[1] for n in names}
    columns = {n: [p[k] for p in points] for k, n in enumerate(names)}
    tape_value, tape_gradients = batch_gradients(program, columns)
    for row, point in enumerate(points):
        values = dict(zip(names, point, strict=True))
        at = {symbols[n]: sympy.Float(v, 30) for n, v in values.items()}
        exact = float(expression.evalf(30, subs=at))
        slopes = {n: float(sympy.diff(expression, symbols[n]).evalf(30, subs=at)) for n in names}
        for mode in ("reverse", "forward"):
            result = program.grad(values, mode)
            assert result.value == pytest.approx(exact, rel=1e-14), (point, mode)
            for n in names:
                assert result.gradients[n] == pytest.approx(slopes[n], rel=1e-13), (point, n)
            assert result.non_finite is None, point
        assert tape_value[row] == pytest.approx(exact, rel=1e-14)
        h = hessian(program, values)
        for n in names:
            assert tape_gradients[n][row] == pytest.approx(slopes[n], rel=1e-13)
            read_back = parse(printed[n])
            got = read_back.values({m: values[m] for m in read_back.inputs})[-1]
            assert got == pytest.approx(slopes[n], rel=1e-13), (point, printed[n])
            for m in names:
                second = sympy.diff(expression, symbols[n], symbols[m]).evalf(30, subs=at)
                assert h.hessian[n][m] == pytest.approx(float(second), rel=1e-12, abs=1e-12)
        assert h.non_finite is None


def test_where_on_the_command_line_warns_only_of_the_branch_taken():
    done = in_process("grad", "where(x > 0, log(x), 0)", "--x", "-1", "--format", "json")
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["gradients"] == {"x": 0.0}
    done = in_process("grad", "where(x < 0, log(x), 0)", "--x", "-1", "--format", "json")
    assert done.returncode == 0 and "log gave nan" in done.stderr
    done = in_process("grad", "where(x > 0, log(x), 0)", "--x", "-1", "--strict")
    assert done.returncode == 0, done.stderr
    code, out, err = run(
        "grad", "where(x > 0, sqrt(x), -x)", "--points", "-", stdin="x\n-4\n4\n0\n"
    )
    assert (code, err) == (0, "")
    assert out == "x,value,d_x\n-4,4.0,-1.0\n4,2.0,0.25\n0,-0.0,-1.0\n"


def test_where_takes_a_for_any_condition_but_zero_nan_included():
    program = parse("where(c, a, b)")
    for c, taken in [(1.0, "a"), (-2.0, "a"), (math.nan, "a"), (math.inf, "a"), (0.0, "b")]:
        for mode in ("reverse", "forward"):
            result = program.grad({"c": c, "a": 3.0, "b": 4.0}, mode)
            assert result.value == {"a": 3.0, "b": 4.0}[taken]
            assert result.gradients == {
                "c": 0.0,
                "a": float(taken == "a"),
                "b": float(taken == "b"),
            }
    assert program.grad({"c": -0.0, "a": 3.0, "b": 4.0}).value == 4.0


# The functions of the second round: values against mpmath to a few units in the last place,
# derivatives against SymPy's (evaluated by mpmath at 50 digits), in reverse and forward mode.

ULP = 2.0**-52


def negative_and_away_from(f, points, zeros_of, distance=0.05):
    """The points where `zeros_of` (an mpmath function) is not within `distance` of 0: near
    the zeros of digamma on the negative axis, its value (and gamma's derivative) is a small
    difference of large terms, whose digits are lost in any float evaluation."""
    return [p for p in points if abs(zeros_of(mpmath.mpf(p[0]))) > distance]


def _second_round():
    pi = sympy.pi
    with mpmath.workdps(30):
        negative = [(-x,) for (x,) in sampled(20, 60, (0.01, 30)) if abs(x - round(x)) > 1e-3]
        negative_digamma = negative_and_away_from(None, negative, mpmath.digamma, 0.1)
        negative_lgamma = negative_and_away_from(
            None, negative_digamma, lambda x: mpmath.log(abs(mpmath.gamma(x))), 0.1
        )
    return {
        # name: (source, mpmath function, SymPy expression, points, ulps of value, slope rel)
        "asinh": (
            "asinh(a)",
            mpmath.asinh,
            sympy.asinh(A),
            TINY + sampled(21, 40, (-30, 30)) + [(1e200,), (-1e300,)],
            2,
            1e-15,
        ),
        "acosh": (
            "acosh(a)",
            mpmath.acosh,
            sympy.acosh(A),
            [*sampled(22, 40, (1, 100)), (1 + 1e-15,), (1 + 1e-09,), (1e200,), (1e300,)],
            2,
            1e-15,
        ),
        "atanh": (
            "atanh(a)",
            mpmath.atanh,
            sympy.atanh(A),
            TINY + sampled(23, 40, (-1, 1)) + [(1 - 2**-52,), (-1 + 1e-12,)],
            2,
            1e-15,
        ),
        "sec": (
            "sec(a)",
            mpmath.sec,
            1 / sympy.cos(A),
            [*sampled(24, 40, (-1.5, 1.5)), (0.0,), (3.0,)],
            2,
            1e-14,
        ),
        "csc": (
            "csc(a)",
            mpmath.csc,
            1 / sympy.sin(A),
            TINY + sampled(25, 40, (0.05, 3.1)),
            2,
            1e-14,
        ),
        "cot": (
            "cot(a)",
            mpmath.cot,
            1 / sympy.tan(A),
            TINY + sampled(26, 40, (0.05, 3.1)) + [(math.pi / 2,)],
            2,
            1e-14,
        ),
        "sech": (
            "sech(a)",
            mpmath.sech,
            1 / sympy.cosh(A),
            [*sampled(27, 40, (-30, 30)), (700.0,), (-705.5,)],
            2,
            1e-15,
        ),
        "csch": (
            "csch(a)",
            mpmath.csch,
            1 / sympy.sinh(A),
            TINY + sampled(28, 40, (-30, 30)) + [(700.0,)],
            2,
            1e-15,
        ),
        "coth": (
            "coth(a)",
            mpmath.coth,
            1 / sympy.tanh(A),
            TINY + sampled(29, 40, (-30, 30)) + [(40.0,)],
            2,
            1e-15,
        ),
        "cbrt": (
            "cbrt(a)",
            lambda a: mpmath.sign(a) * mpmath.cbrt(abs(a)),
            sympy.Piecewise(
                (A ** sympy.Rational(1, 3), A >= 0), (-((-A) ** sympy.Rational(1, 3)), True)
            ),
            TINY + sampled(30, 40, (-100, 100)) + [(-8.0,), (1e300,), (-1e-300,)],
            2,
            1e-15,
        ),
        "sinc": (
            "sinc(a)",
            mpmath.sincpi,
            sympy.sin(pi * A) / (pi * A),
            TINY
            + sampled(31, 60, (-20, 20))
            + [(0.25,), (0.5,), (1.5,), (1e6 + 0.5,), (3.3e5 + 0.25,)],
            3,
            1e-13,
        ),
        "logaddexp": (
            "logaddexp(a, b)",
            lambda a, b: mpmath.log(mpmath.exp(a) + mpmath.exp(b)),
            sympy.log(sympy.exp(A) + sympy.exp(B)),
            [
                *sampled(32, 60, (-50, 50), (-50, 50)),
                (1000.0, 1000.0),
                (-1000.0, -999.0),
                (3.0, -3.0),
                (1e-20, -1e-20),
            ],
            2,
            1e-14,
        ),
        "gamma": (
            "gamma(a)",
            mpmath.gamma,
            sympy.gamma(A),
            [
                *sampled(33, 60, (0.01, 170)),
                (0.5,),
                (1.4616321449683622,),
                (1e-300,),
                (171.5,),
                *negative_digamma,
            ],
            10,
            1e-13,
        ),
        "lgamma": (
            "lgamma(a)",
            lambda a: mpmath.log(abs(mpmath.gamma(a))),
            sympy.loggamma(A),  # its derivative, digamma, is log|gamma|'s
            [
                *sampled(34, 60, (0.01, 20)),
                (1 + 1e-10,),
                (2 - 1e-12,),
                (1 - 3e-09,),
                (2.5,),
                (0.25,),
                (1e-300,),
                (1000000000000000.0,),
                (1e300,),
                *negative_lgamma,
            ],
            4,
            1e-13,
        ),
        "digamma": (
            "digamma(a)",
            mpmath.digamma,
            sympy.digamma(A),
            [
                *sampled(35, 60, (0.01, 50)),
                (1.4616321449683622,),
                (1.4616,),
                (1.47,),
                (1e-300,),
                (1000000000000000.0,),
                (1e300,),
                *negative_digamma,
            ],
            8,  # reflected below 0: digamma(1 - x) - pi*cot(pi*x) loses a few digits
            1e-13,
        ),
        "erfinv": (
            "erfinv(a)",
            mpmath.erfinv,
            sympy.erfinv(A),
            TINY[:4]
            + sampled(36, 60, (-1, 1))
            + [(1 - 2**-53,), (-1 + 1e-10,), (0.5,), (-0.9999,)],
            2,
            1e-13,
        ),
    }


SECOND_ROUND = _second_round()


@pytest.mark.slow
@pytest.mark.parametrize("name", SECOND_ROUND)
def test_second_round_values_and_derivatives_agree_with_mpmath_and_sympy(name):
    """Values to a few units in the last place against mpmath at 50 digits; derivatives to
    about 1e-14 against SymPy's, evaluated by SymPy to 30 digits (with the precision it
    finds it needs where terms cancel, as sinc's do near 0), in reverse and forward mode."""
    source, f, expression, points, ulps, slope_rel = SECOND_ROUND[name]
    program = parse(source)
    symbols = [A, B][: len(program.inputs)]
    exact_derivatives = [sympy.diff(expression, s) for s in symbols]
    with mpmath.workdps(50):
        for point in points:
            values = dict(zip(program.inputs, point, strict=True))
            exact = float(f(*(mpmath.mpf(v) for v in point)))
            at = {s: sympy.Float(v, 60) for s, v in zip(symbols, point, strict=True)}
            slopes = [float(sympy.re(d.evalf(30, subs=at, maxn=4000))) for d in exact_derivatives]
            for mode in ("reverse", "forward"):
                result = program.grad(values, mode)
                assert result.value == pytest.approx(exact, rel=ulps * ULP, abs=1e-320), (
                    point,
                    mode,
                )
                for n, slope in zip(program.inputs, slopes, strict=True):
                    got = result.gradients[n]
                    assert got == pytest.approx(slope, rel=slope_rel, abs=1e-320), (point, n, mode)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_polygamma_agrees_with_mpmath_and_its_derivative_is_the_next(n):
    program = parse(f"polygamma({n}, x)")
    points = [*sampled(40 + n, 40, (0.01, 40)), (1.0,), (0.001,), (100000.0,)]
    with mpmath.workdps(50):
        negative = [(-x,) for (x,) in sampled(50 + n, 30, (0.05, 20)) if abs(x - round(x)) > 0.05]
        negative = [
            p
            for p in negative
            if abs(mpmath.psi(n, p[0])) > 0.05 * abs(mpmath.psi(n + 1, p[0])) ** 0.5
        ]
        for (x,) in points + negative:
            for mode in ("reverse", "forward"):
                result = program.grad({"x": x}, mode)
                assert result.value == pytest.approx(float(mpmath.psi(n, x)), rel=2e-14), x
                assert result.gradients["x"] == pytest.approx(
                    float(mpmath.psi(n + 1, x)), rel=2e-14
                ), x


EDGE_VALUES = [
    # source, x, value, d/dx (None: not checked)
    ("cbrt(x)", -8.0, -2.0, 1 / 12),
    ("cbrt(x)", -0.0, -0.0, math.inf),
    ("cbrt(x)", math.inf, math.inf, 0.0),
    ("sinc(x)", 0.0, 1.0, 0.0),
    ("sinc(x)", 1.0, 0.0, -1.0),
    ("sinc(x)", -3.0, 0.0, None),
    ("sinc(x)", 1e6, 0.0, None),
    ("sinc(x)", 0.5, 2 / math.pi, None),
    ("sinc(x)", math.inf, 0.0, 0.0),
    ("gamma(x)", 5.0, 24.0, None),
    ("gamma(x)", 0.0, math.inf, -math.inf),
    ("gamma(x)", -0.0, -math.inf, -math.inf),
    ("gamma(x)", -1.0, math.nan, math.nan),
    ("gamma(x)", 172.0, math.inf, math.inf),
    ("lgamma(x)", 1.0, 0.0, -0.5772156649015329),
    ("lgamma(x)", 2.0, 0.0, 0.42278433509846713),
    ("lgamma(x)", 0.0, math.inf, -math.inf),
    ("lgamma(x)", -2.0, math.inf, math.nan),
    ("digamma(x)", 1.0, -0.5772156649015329, math.pi**2 / 6),
    ("digamma(x)", 0.0, -math.inf, math.inf),
    ("digamma(x)", -0.0, math.inf, math.inf),
    ("digamma(x)", -1.0, math.nan, math.inf),
    ("polygamma(2, x)", 0.0, -math.inf, math.inf),
    ("polygamma(2, x)", -0.0, math.inf, math.inf),
    ("polygamma(2, x)", -1.0, math.nan, math.inf),
    ("polygamma(0.5, x)", 1.0, math.nan, math.nan),
    ("polygamma(-1, x)", 1.0, math.nan, math.nan),  # nan everywhere, and so its derivative
    ("polygamma(-2, x)", 1.0, math.nan, math.nan),
    ("lgamma(x)", -5e-324, 744.4400719213812, math.inf),  # no sin(pi*x) rounded at subnormals
    ("lgamma(x)", -1e-310, 713.8013788281542, math.inf),
    # the slope from mpmath (grad had -8.706640038733866e-40, 7 units off, while x**2 rounded)
    ("erfc(x)", 9.49, 4.5622158423940656e-41, -8.706640038733878e-40),
    ("erfinv(x)", 1.0, math.inf, math.inf),
    ("erfinv(x)", -1.0, -math.inf, math.inf),
    ("erfinv(x)", 1.5, math.nan, math.nan),
    ("erfinv(x)", -0.0, -0.0, math.sqrt(math.pi) / 2),
    ("logaddexp(x, x)", -math.inf, -math.inf, math.nan),  # diff: 1 (x - x is 0 in algebra)
    ("logaddexp(x, 0)", -1000.0, 0.0, 0.0),
    ("logaddexp(x, 0)", 0.0, math.log(2), 0.5),
    ("logaddexp(x, 1000)", 1000.0, 1000 + math.log(2), 0.5),
    ("atanh(x)", 1.0, math.inf, math.inf),
    ("atanh(x)", -1.0, -math.inf, math.inf),
    ("atanh(x)", 1.5, math.nan, None),
    ("acosh(x)", 1.0, 0.0, math.inf),
    ("acosh(x)", 0.5, math.nan, math.nan),
    ("csch(x)", 0.0, math.inf, -math.inf),
    ("csch(x)", -0.0, -math.inf, -math.inf),
    ("coth(x)", 0.0, math.inf, -math.inf),
    ("sech(x)", 720.0, 2 * math.exp(-720), -2 * math.exp(-720)),  # where 1/cosh(x) is 0
    ("csch(x)", -720.0, -2 * math.exp(-720), -2 * math.exp(-720)),
    ("coth(x)", 300.0, 1.0, -4 * math.exp(-600)),  # not 1 - coth(x)**2, which is 0
    ("csc(x)", 0.0, math.inf, -math.inf),
    ("cot(x)", 0.0, math.inf, -math.inf),
    ("sec(x)", 0.0, 1.0, 0.0),
]


@pytest.mark.parametrize(("source", "x", "value", "slope"), EDGE_VALUES)
def test_second_round_at_their_edge_points(source, x, value, slope):
    """Poles, zeros, infinities and the signs of zero, in both modes, on the tape (with
    SciPy and without) and through diff read back."""
    from nanograd_cli import _vector_ops as vector_ops
    from nanograd_cli._tape import batch_gradients

    def same(got, want, signed=True):
        """Equal to 4 units in the last place; a zero of the same sign, where `signed`."""
        if math.isnan(want):
            return math.isnan(got)
        return got == pytest.approx(want, rel=4 * ULP, abs=0) and (
            want != 0 or not signed or math.copysign(1, got) == math.copysign(1, want)
        )

    program = parse(source)
    printed = parse(run("diff", source, "--exact")[1])
    for mode in ("reverse", "forward"):
        result = program.grad({"x": x}, mode)
        assert same(result.value, value), (mode, result.value)
        if slope is not None:
            assert same(result.gradients["x"], slope), (mode, result.gradients)
    if slope is not None and printed.inputs:  # (-0.0 for +0: dsinc is odd)
        assert same(printed.values({"x": x})[-1], slope, signed=False)
    saved = vector_ops.scipy_special()
    try:
        for scipy in (saved, None):
            vector_ops.special = scipy
            tape_value, tape_gradients = batch_gradients(program, {"x": [x, x]})
            assert same(float(tape_value[0]), value, signed=False), scipy
            if slope is not None:
                assert same(float(tape_gradients["x"][0]), slope, signed=False), scipy
    finally:
        vector_ops.special = saved


@pytest.mark.slow
def test_the_tape_takes_no_longer_below_zero_and_agrees_at_the_edges_of_its_scipy_ranges():
    """SciPy is used only on the rows it is fast and right on: digamma's derivative far below
    0 (where SciPy's zeta takes time linear in |x|), lgamma at subnormals (SciPy's gammaln
    is inf there), gamma just below 0 (-inf, as gamma(-0.0))."""
    rows = "x\n-120783205655.16643\n-1000000000.5\n"
    code, out, _ = limited("nanograd grad 'digamma(x)' --points -", rows.encode(), seconds=20)
    assert code == 0
    assert out.splitlines()[1:] == [
        "-120783205655.16643,30.968110961345793,39.581346953035364",
        "-1000000000.5,20.723265837946414,9.869604400089358",
    ]
    for source, x in [("lgamma(x)", "5e-324"), ("lgamma(x)", "1e-310"), ("gamma(x)", "-1e-310")]:
        _, single, _ = limited(f"nanograd grad '{source}' --x {x} --format csv")
        _, points, _ = limited(f"nanograd grad '{source}' --points -", f"x\n{x}\n".encode())
        assert points.splitlines()[1] == f"{x},{single.splitlines()[1]}"
    _, single, _ = limited("nanograd grad 'gamma(x)' --x -1e-310 --format csv")
    assert single == "value,d_x\n-inf,-inf\n"
