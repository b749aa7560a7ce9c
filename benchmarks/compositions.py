"""Which functions could be defined in the language, as compositions of others, and keep
their accuracy: values and first derivatives against mpmath, in ulps.

For each function of the operations table that is a composition of others, and for the
prelude's (nanograd_cli/_prelude.py), the composition is written in the language and expanded
as a source's own function is (so its derivative is the one its parts give), and compared with
the table's own formula, over a sweep of points: edge points (0, the tiny, the huge, the
negative, near overflow and near the kinks) and log-uniform points, all where the function is
defined and its value and derivative are finite floats. The reference is the same function in
mpmath at 60 digits, rounded to the nearest float; an error is |computed - reference| in units
of the reference's last place (a nan or inf where the reference is finite counts as "inf").

A composition is "kept" where its largest error, for the value and for the derivative, is at
most the table formula's largest plus 2 ulps: as accurate, as the issue asks of a function
defined in the language. Rows of the table are never removed by this script.

Run: python benchmarks/compositions.py [--points N]   (N log-uniform points per function,
default 400; mpmath comes with SymPy)
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mpmath
from mpmath import mp, mpf

from nanograd_cli import parse
from nanograd_cli._prelude import PRELUDE

mp.dps = 60

Real = Callable[..., mpf]


class Candidate(NamedTuple):
    """A function (`table`, as the language calls it; for the prelude, its own line), the
    composition to measure, the mathematical function in mpmath with its partial
    derivatives, and the interval of each argument to sweep."""

    table: str
    composition: str
    value: Real
    derivatives: tuple[Real, ...]
    domain: tuple[float, float] = (-math.inf, math.inf)
    # for a function with no row of its own (the prelude's): the formulas a row would have,
    # the value's and each derivative's, computed as written
    own: tuple[str, ...] = ()


def _sigmoid(x: mpf) -> mpf:
    return 1 / (1 + mpmath.exp(-x))


CANDIDATES = [
    Candidate("sigmoid(x)", "1/(1 + exp(-x))", _sigmoid, (lambda x: _sigmoid(x) * _sigmoid(-x),)),
    Candidate(
        "sigmoid(x)",
        "where(x >= 0, 1/(1 + exp(-x)), exp(x)/(1 + exp(x)))",
        _sigmoid,
        (lambda x: _sigmoid(x) * _sigmoid(-x),),
    ),
    Candidate("softplus(x)", "log(1 + exp(x))", lambda x: mpmath.log1p(mpmath.exp(x)), (_sigmoid,)),
    Candidate(
        "softplus(x)",
        "relu(x) + log1p(exp(-abs(x)))",
        lambda x: mpmath.log1p(mpmath.exp(x)),
        (_sigmoid,),
    ),
    Candidate(
        "softplus(x)",
        "where(x > 0, x + log1p(exp(-x)), log1p(exp(x)))",
        lambda x: mpmath.log1p(mpmath.exp(x)),
        (_sigmoid,),
    ),
    Candidate("tanh(x)", "2*sigmoid(2*x) - 1", mpmath.tanh, (lambda x: 1 / mpmath.cosh(x) ** 2,)),
    Candidate(
        "tanh(x)", "(exp(2*x) - 1)/(exp(2*x) + 1)", mpmath.tanh, (lambda x: mpmath.sech(x) ** 2,)
    ),
    Candidate(
        "tanh(x)", "expm1(2*x)/(expm1(2*x) + 2)", mpmath.tanh, (lambda x: mpmath.sech(x) ** 2,)
    ),
    Candidate("sinh(x)", "(exp(x) - exp(-x))/2", mpmath.sinh, (mpmath.cosh,)),
    Candidate("cosh(x)", "(exp(x) + exp(-x))/2", mpmath.cosh, (mpmath.sinh,)),
    Candidate("sech(x)", "1/cosh(x)", mpmath.sech, (lambda x: -mpmath.sech(x) * mpmath.tanh(x),)),
    Candidate("log1p(x)", "log(1 + x)", mpmath.log1p, (lambda x: 1 / (1 + x),), (-1.0, math.inf)),
    Candidate("expm1(x)", "exp(x) - 1", mpmath.expm1, (mpmath.exp,)),
    Candidate(
        "log2(x)",
        "log(x)/log(2)",
        lambda x: mpmath.log(x, 2),
        (lambda x: 1 / (x * mpmath.log(2)),),
        (0.0, math.inf),
    ),
    Candidate(
        "log10(x)",
        "log(x)/log(10)",
        mpmath.log10,
        (lambda x: 1 / (x * mpmath.log(10)),),
        (0.0, math.inf),
    ),
    Candidate(
        "sec(x)", "1/cos(x)", mpmath.sec, (lambda x: mpmath.sec(x) * mpmath.tan(x),), (-1e6, 1e6)
    ),
    Candidate(
        "cot(x)", "cos(x)/sin(x)", mpmath.cot, (lambda x: -(mpmath.csc(x) ** 2),), (-1e6, 1e6)
    ),
    Candidate(
        "asinh(x)",
        "log(x + sqrt(x**2 + 1))",
        mpmath.asinh,
        (lambda x: 1 / mpmath.sqrt(x**2 + 1),),
    ),
    Candidate(
        "atanh(x)",
        "log((1 + x)/(1 - x))/2",
        mpmath.atanh,
        (lambda x: 1 / (1 - x**2),),
        (-1.0, 1.0),
    ),
    Candidate(
        "atanh(x)",
        "log1p(2*x/(1 - x))/2",
        mpmath.atanh,
        (lambda x: 1 / (1 - x**2),),
        (-1.0, 1.0),
    ),
    Candidate(
        "erfc(x)",
        "1 - erf(x)",
        mpmath.erfc,
        (lambda x: -2 * mpmath.exp(-(x**2)) / mpmath.sqrt(mpmath.pi),),
    ),
    Candidate(
        "hypot(x, y)",
        "sqrt(x**2 + y**2)",
        lambda x, y: mpmath.sqrt(x**2 + y**2),
        (lambda x, y: x / mpmath.sqrt(x**2 + y**2), lambda x, y: y / mpmath.sqrt(x**2 + y**2)),
    ),
    Candidate(
        "logaddexp(x, y)",
        "max(x, y) + log1p(exp(-abs(x - y)))",
        # (log(exp(x) + exp(y)) as written would need more than 60 digits where they differ)
        lambda x, y: max(x, y) + mpmath.log1p(mpmath.exp(-abs(x - y))),
        (lambda x, y: _sigmoid(x - y), lambda x, y: _sigmoid(y - x)),
    ),
]

# The prelude's functions, as the plain formula they stand for and as written there, against
# the formulas a row of the table would have: the value's, and the derivative the docs show.
for _row in PRELUDE:
    if _row.name == "softsign":
        _own = ("x/(1 + abs(x))", *_row.formulas)
        _softsign = (lambda x: x / (1 + abs(x)), (lambda x: 1 / (1 + abs(x)) ** 2,))
        CANDIDATES += [
            Candidate("softsign(x)", "x/(1 + abs(x))", *_softsign, own=_own),
            Candidate("softsign(x)", _row.definition.partition(" = ")[2], *_softsign, own=_own),
        ]

EDGES = [
    0.0, 5e-324, 1e-300, 1e-200, 1e-20, 1e-8, 1e-4, 0.1, 0.5, 0.999, 1.0, 1.001, 2.0, 5.0, 10.0,
    18.0, 20.0, 30.0, 36.0, 40.0, 100.0, 700.0, 709.0, 710.0, 745.0, 800.0, 1e8, 1e16, 1e154,
    1e300, 1.7e308,
]  # fmt: skip


def sweep(domain: tuple[float, float], count: int, rng: random.Random) -> list[float]:
    """Edge points and their negatives, and log-uniform points of either sign, in `domain`
    (open), and points near its ends."""
    lo, hi = domain
    points = EDGES + [-p for p in EDGES]
    for end in (lo, hi):
        if math.isfinite(end):
            points += [end + d for d in (-1e-12, -1e-6, -1e-3, 1e-12, 1e-6, 1e-3)]
    for _ in range(count):
        magnitude = 10 ** rng.uniform(-30, 30)
        points.append(magnitude if rng.random() < 0.5 else -magnitude)
    return sorted({p for p in points if lo < p < hi})


def ulps(computed: float, exact: mpf) -> float:
    """|computed - exact| in units of the last place of exact rounded to a float."""
    reference = float(exact)
    if math.isnan(computed) or math.isinf(computed):
        return 0.0 if computed == reference else math.inf
    return float(abs(mpf(computed) - exact) / mpf(math.ulp(reference)))


class Errors(NamedTuple):
    value: list[float]
    derivative: list[float]


def measure(source: str, names: list[str], candidate: Candidate, points) -> Errors:
    """The errors of `source` (an expression in `names`) and of its gradient at `points`."""
    program = parse(source)
    value, derivative = [], []
    for point in points:
        at = dict(zip(names, point, strict=True))
        result = program.grad({n: at[n] for n in program.inputs})
        exact = candidate.value(*[mpf(p) for p in point])
        value.append(ulps(result.value, exact))
        for k, name in enumerate(names):
            slope = candidate.derivatives[k](*[mpf(p) for p in point])
            derivative.append(ulps(result.gradients.get(name, 0.0), slope))
    return Errors(value, derivative)


def measure_formulas(candidate: Candidate, points) -> Errors:
    """The errors of the formulas `candidate.own` (of one argument, x), computed as written."""
    value_formula, *slopes = [parse(f) for f in candidate.own]
    value, derivative = [], []
    for (x,) in points:
        exact = candidate.value(mpf(x))
        value.append(ulps(value_formula.values({"x": x})[value_formula.result], exact))
        for formula, slope in zip(slopes, candidate.derivatives, strict=True):
            derivative.append(ulps(formula.values({"x": x})[formula.result], slope(mpf(x))))
    return Errors(value, derivative)


def finite_points(candidate: Candidate, arity: int, count: int, rng: random.Random) -> list:
    """The points of the sweep (pairs of them for two arguments) where the value and the
    derivatives are finite floats."""
    line = sweep(candidate.domain, count, rng)
    if arity == 1:
        points = [(p,) for p in line]
    else:
        points = [(rng.choice(line), rng.choice(line)) for _ in range(len(line) * 2)]
        points += [(p, p) for p in EDGES[:12]] + [(p, -p) for p in EDGES[:12]]
    kept = []
    for point in points:
        args = [mpf(p) for p in point]
        try:
            numbers = [candidate.value(*args)] + [d(*args) for d in candidate.derivatives]
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
        if all(mpmath.isfinite(n) and math.isfinite(float(n)) for n in numbers):
            kept.append(point)
    return kept


def summary(errors: list[float]) -> str:
    worst = max(errors)
    shown = "inf" if math.isinf(worst) else f"{worst:.3g}"
    return f"{shown} / {statistics.median(errors):.2g}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=400)
    args = parser.parse_args()
    rng = random.Random(20261204)
    print("errors in ulps against mpmath at 60 digits: max / median, over the points shown")
    print()
    head = (
        f"{'function':<16} {'composition':<55} {'points':>6}  {'value: table':>16} "
        f"{'composition':>16}  {'derivative: table':>18} {'composition':>16}  kept"
    )
    print(head)
    for candidate in CANDIDATES:
        names = ["x", "y"][: len(candidate.derivatives)]
        points = finite_points(candidate, len(names), args.points, rng)
        if candidate.own:
            table = measure_formulas(candidate, points)
        else:
            table = measure(candidate.table, names, candidate, points)
        mine = measure(candidate.composition, names, candidate, points)
        kept = all(
            max(m) <= max(t) + 2
            for m, t in ((mine.value, table.value), (mine.derivative, table.derivative))
        )
        print(
            f"{candidate.table:<16} {candidate.composition:<55} {len(points):>6}  "
            f"{summary(table.value):>16} {summary(mine.value):>16}  "
            f"{summary(table.derivative):>18} {summary(mine.derivative):>16}  "
            f"{'yes' if kept else 'no'}"
        )


if __name__ == "__main__":
    main()
