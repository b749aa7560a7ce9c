"""The ops' derivative functions: written from the formulas (`_derivatives.py`) against the
ones the ops table uses (a hand-written override where a row has one), in accuracy and speed.

Run: python benchmarks/derivatives.py [--engine] [OP ...]  (needs mpmath; without OP, every op
and --engine)

For every op (or those named): at the edge points of tests/test_calculus.py (all pairs, or
triples), at the points in HARD, and at 2,000 points (log-uniform magnitudes from 1e-300 to
1e300 of both signs, and uniform in the op's test domain), how many give other bits; where
some do, the largest and the mean error of each in units in the last place against the true
derivative by mpmath at 60 digits (EXACT's formula, or else mpmath.diff of the op in mpmath);
and the time per call of each. With --engine, the time of `Value.backward` per node on three
programs with every op's written function against the functions the table uses, in turn.
An op whose functions give the same bits everywhere shows "-" for its errors.
"""

from __future__ import annotations

import gc
import itertools
import math
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mpmath as mp

from nanograd_cli import _derivatives, parse
from nanograd_cli._ops import OPS, Op

EDGES = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -1.5, 3.0, 0.3, 20.0, -40.0, 400.0, 1e-300]
EDGES += [1e300, math.inf, -math.inf, math.nan]

WRITTEN = _derivatives.derivatives({key: op.forward for key, op in OPS.items()})


def _nan_outside(f, lo, hi):
    return lambda x: f(x) if lo <= x <= hi else mp.nan


def _dsinc(x):
    return mp.mpf(0) if x == 0 else (mp.cospi(x) - mp.sincpi(x)) / x


# Each op in mpmath, for the true derivatives (mpmath.diff of these at 60 digits).
REFERENCE = {
    "**": mp.power,
    "pow": mp.power,
    "/": lambda a, b: a / b,
    "exp": mp.exp,
    "expm1": mp.expm1,
    "log": mp.log,
    "log/2": mp.log,
    "log1p": mp.log1p,
    "log2": lambda x: mp.log(x, 2),
    "log10": mp.log10,
    "sqrt": mp.sqrt,
    "cbrt": mp.cbrt,
    "sin": mp.sin,
    "cos": mp.cos,
    "tan": mp.tan,
    "sec": mp.sec,
    "csc": mp.csc,
    "cot": mp.cot,
    "sinc": mp.sincpi,
    "dsinc": _dsinc,
    "asin": mp.asin,
    "acos": mp.acos,
    "atan": mp.atan,
    "atan2": mp.atan2,
    "hypot": mp.hypot,
    "sinh": mp.sinh,
    "cosh": mp.cosh,
    "tanh": mp.tanh,
    "asinh": mp.asinh,
    "acosh": mp.acosh,
    "atanh": mp.atanh,
    "sech": mp.sech,
    "csch": mp.csch,
    "coth": mp.coth,
    "erf": mp.erf,
    "erfc": mp.erfc,
    "erfinv": mp.erfinv,
    "gamma": mp.gamma,
    "lgamma": lambda x: mp.log(abs(mp.gamma(x))),
    "digamma": mp.digamma,
    "sigmoid": lambda x: 1 / (1 + mp.exp(-x)),
    "softplus": lambda x: mp.log1p(mp.exp(x)),
    "logaddexp": lambda a, b: mp.log(mp.exp(a) + mp.exp(b)),
    "powlog": lambda a, b: mp.power(a, b) * mp.log(a),
}


def _d2sinc(x):
    """sinc's second derivative: its Taylor series below 1 (which the finite differences of
    dsinc, cancelling, cannot reach), mpmath.diff of dsinc beyond."""
    if abs(x) >= 1:
        return mp.diff(_dsinc, x, h=abs(x) * mp.mpf(10) ** -20)
    z, total, factorial = mp.pi * x, mp.mpf(0), mp.mpf(6)
    for k in range(1, 60):  # (2k + 1)! in factorial
        total += (-1) ** k * mp.pi**2 * (2 * k) * (2 * k - 1) * z ** (2 * k - 2) / factorial
        factorial *= (2 * k + 2) * (2 * k + 3)
    return total


# The true derivatives where finite differences in mpmath lose the digits (a variable far
# smaller than the other, or the cancellation in dsinc near 0).
EXACT = {
    "**": lambda a, b: [b * mp.power(a, b - 1), mp.power(a, b) * mp.log(a)],
    "pow": lambda a, b: [b * mp.power(a, b - 1), mp.power(a, b) * mp.log(a)],
    "cbrt": lambda x: [1 / (3 * mp.cbrt(x) ** 2)],
    "dsinc": lambda x: [_d2sinc(x)],
    "atan2": lambda y, x: [x / (x * x + y * y), -y / (x * x + y * y)],
    "hypot": lambda x, y: [x / mp.hypot(x, y), y / mp.hypot(x, y)],
    "tanh": lambda x: [mp.sech(x) ** 2],
    "coth": lambda x: [-(mp.csch(x) ** 2)],
}


# Points where an op's derivative is known to be hard, besides the edges.
HARD = {
    # b*a**(b - 1) where a**(b - 1) underflows but the product is a float
    "**": [(2.0, -1074.0), (2.0, -1073.5), (0.5, 1075.0), (10.0, -323.0), (1e-300, 2.0)],
    "pow": [(2.0, -1074.0), (2.0, -1073.5), (0.5, 1075.0), (10.0, -323.0), (1e-300, 2.0)],
}


def points(op: Op, count: int = 1000, seed: int = 0) -> list[tuple[float, ...]]:
    rng = random.Random(seed)
    low, high = op.domain
    found = list(itertools.product(EDGES, repeat=op.arity)) + HARD.get(op.name, [])
    for _ in range(count):
        found.append(tuple(rng.uniform(low, high) for _ in range(op.arity)))
        found.append(
            tuple(rng.choice((-1, 1)) * 10 ** rng.uniform(-300, 300) for _ in range(op.arity))
        )
    return found


def same(a: float, b: float) -> bool:
    return (a != a and b != b) or (a == b and math.copysign(1, a) == math.copysign(1, b))


def ulps(got: float, exact) -> float:
    """|got - exact| in units in the last place of the double nearest `exact`."""
    if mp.im(exact) != 0:
        return 0.0  # not a real derivative there
    exact = mp.re(exact)
    if not mp.isfinite(exact):
        return 0.0 if float(exact) == got else math.inf
    e = float(exact)
    if got != got or math.isinf(got):
        return math.inf
    step = math.ulp(e) if e != 0.0 else math.ulp(0.0)
    return float(abs(mp.mpf(got) - exact) / step)


def true_derivatives(key: str, args: tuple[float, ...]) -> list | None:
    f = REFERENCE.get(key)
    if f is None or not all(math.isfinite(a) for a in args):
        return None
    with mp.workdps(60):
        at = [mp.mpf(a) for a in args]
        try:
            value = f(*at)
            if not mp.isfinite(value) or mp.im(value) != 0:
                return None
            if key in EXACT:
                return EXACT[key](*at)
            found = []
            for k in range(len(at)):
                # a step relative to the argument: mpmath's own is absolute, too large for
                # tiny arguments and too small for huge ones
                h = max(abs(at[k]), mp.mpf(1e-300)) * mp.mpf(10) ** -20

                def along(t, k=k):
                    return f(*at[:k], t, *at[k + 1 :])

                found.append(mp.diff(along, at[k], h=h))
            return found
        except (ValueError, ZeroDivisionError, OverflowError):
            return None


def per_call_ns(function, calls: list[tuple[float, ...]], repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for args in calls:
            function(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) / len(calls) * 1e9


def compare(key: str, op: Op) -> dict:
    """Bits, ulps and time of the written function against the one the table uses."""
    written, used = WRITTEN[key], op.derivative
    differ, worst, zeros = [], {"used": 0.0, "written": 0.0}, 0
    total = {"used": 0.0, "written": 0.0, "count": 0}
    for args in points(op):
        y = op.forward(*args)
        a, b = used(*args, y), written(*args, y)
        if all(same(p, q) for p, q in zip(a, b, strict=True)):
            continue
        differ.append(args)
        if all(p == q for p, q in zip(a, b, strict=True)):
            zeros += 1  # only a zero's sign differs
            continue
        exact = true_derivatives(key, args)
        if exact is None:
            continue
        with mp.workdps(60):
            for k, e in enumerate(exact):
                if a[k] != b[k]:
                    errors = {"used": ulps(a[k], e), "written": ulps(b[k], e)}
                    for kind, error in errors.items():
                        worst[kind] = max(worst[kind], error)
                        total[kind] += error if error < math.inf else 0.0
                    total["count"] += 1
    low, high = op.domain
    calls = [
        (*(low + (high - low) * t for _ in range(op.arity)),)
        for t in (i / 997 for i in range(1, 997))
    ]
    calls = [(*c, op.forward(*c)) for c in calls]
    return {
        "differ": len(differ),
        "zeros": zeros,
        "of": len(points(op)),
        "example": differ[0] if differ else None,
        "worst": worst if differ and REFERENCE.get(key) else None,
        "mean": {k: total[k] / max(total["count"], 1) for k in ("used", "written")},
        "ns": (per_call_ns(used, calls), per_call_ns(written, calls)),
    }


def every_function_source(repeat: int) -> str:
    """Every function of one argument but the flat ones, at a point of its domain."""
    lines = ["t = x"]
    for k in range(repeat):
        for op in OPS.values():
            if op.syntax != "call" or op.arity != 1 or op.formulas == ("0",):
                continue
            low, high = op.domain
            lines.append(f"t = t + {op.name}({low + (high - low) * 0.37!r} + 0.01*sin(x*t + {k}))")
    return "\n".join(lines)


PROGRAMS = {
    "every function of one argument, 20 times": every_function_source(20),
    "tanh chain, depth 2,000": "t = x\n" + "t = tanh(t*0.9 + 0.1)\n" * 2000,
    "sigmoid, exp, log1p, sqrt, 500 times": "t = x\n"
    + "t = sigmoid(t) + log1p(exp(-t)) + sqrt(1 + t*t)\n" * 500,
}


def _use(functions: dict[str, object]) -> None:
    for key, op in OPS.items():
        op.derivative = functions[key]


def backward_ns_per_node(runs: int = 41) -> None:
    """Value.backward per node with the table's functions and with the written ones, in one
    process, in the order ABBA (so that a drift in the machine's load falls on both); the
    fastest run of each, the one least disturbed by the other processes."""
    used = {key: op.derivative for key, op in OPS.items()}
    kinds = {"used": used, "written": WRITTEN}
    for name, source in PROGRAMS.items():
        root = parse(source).gradients({"x": 0.3}).result
        nodes = len(root.topological_order())
        times: dict[str, list[float]] = {"used": [], "written": []}
        gc.disable()
        for k in range(runs):
            for kind in ("used", "written") if k % 2 else ("written", "used"):
                _use(kinds[kind])
                root.backward()  # warm
                t0 = time.perf_counter()
                root.backward()
                times[kind].append(time.perf_counter() - t0)
        gc.enable()
        _use(used)
        a, b = (min(times[k]) / nodes * 1e9 for k in ("used", "written"))
        print(f"{name}: {nodes:,} nodes, {a:.0f} ns per node with the table's, ", end="")
        print(f"{b:.0f} with the written ones ({b / a:.2f}x)")


def main(argv: list[str]) -> None:
    keys = [k for k in argv if k != "--engine"] or list(OPS)
    print(f"{'op':10} {'other bits (zero signs)':>24} {'max ulps used/written':>22} ", end="")
    print(f"{'mean ulps':>14} {'ns used/written':>16}")
    for key in keys:
        result = compare(key, OPS[key])
        worst = result["worst"]
        error = f"{worst['used']:.3g} / {worst['written']:.3g}" if worst else "-"
        mean = "{used:.3g} / {written:.3g}".format(**result["mean"]) if worst else "-"
        ns = "{:.0f} / {:.0f}".format(*result["ns"])
        counts = f"{result['differ']} of {result['of']} ({result['zeros']})"
        print(f"{key:10} {counts:>24} {error:>22} {mean:>14} {ns:>16}", end="")
        print(f"   e.g. at {result['example']}" if result["example"] else "")
    if "--engine" in argv or not argv:
        backward_ns_per_node()


if __name__ == "__main__":
    main(sys.argv[1:])
