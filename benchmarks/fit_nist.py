"""The 54 NIST StRD nonlinear regression fits (27 problems, each from its 2 starting points),
by nanograd's fit at its defaults and by SciPy and lmfit at theirs.

A fit passes when every parameter matches its certified value to at least 6 significant
digits and every standard error its certified value to at least 4 (the log relative error,
-log10(|estimate - certified| / |certified|), of each). The contenders:

* nanograd: `nanograd_cli.fitting.fit` (exact derivatives from the tape), at its defaults;
* curve_fit: `scipy.optimize.curve_fit`, finite differences, its defaults (lm);
* least_squares lm: `scipy.optimize.least_squares(method="lm")`, finite differences;
* lmfit: `lmfit.minimize` (leastsq), its defaults and its standard errors;
* least_squares trf exact: `least_squares` (trf, its default) with the exact Jacobian.

For the SciPy contenders the standard errors are sqrt(diag((JᵀJ)⁻¹) · RSS/(n-k)) from the
Jacobian they end with (curve_fit's own covariance for curve_fit).

Run: python benchmarks/fit_nist.py [--only NAME ...] [--contender NAME ...] [--details]
     python benchmarks/fit_nist.py --stages trf,lm --tolerance 1e-15   (other defaults for
     nanograd, to measure them: the first and second stage methods, their tolerances, and
     x_scale)

Prints the pass count of each contender (the issue's figures: curve_fit 26, least_squares lm
29, lmfit 29, least_squares trf exact 33), and for nanograd how many fits it called
converged whose values were wrong, how many had the values right but the standard errors
short of 4 digits, and how many right ones it did not call converged.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT / "tests" / "data" / "nist"

from nanograd_cli import fitting  # noqa: E402
from nanograd_cli._language import parse  # noqa: E402
from nanograd_cli._tape import Tape  # noqa: E402


def problems() -> list[dict]:
    return json.loads((DATA / "problems.json").read_text())


def columns(problem: dict) -> dict[str, np.ndarray]:
    with open(DATA / problem["data"], newline="") as f:
        rows = list(csv.DictReader(f))
    return {name: np.array([float(r[name]) for r in rows]) for name in rows[0]}


def lre(estimate: float, certified: float) -> float:
    """Log relative error: the number of significant digits that agree (up to 15)."""
    if not math.isfinite(estimate):
        return 0.0
    if estimate == certified:
        return 15.0
    return max(0.0, min(15.0, -math.log10(abs(estimate - certified) / abs(certified))))


def passes(problem: dict, values, errors) -> tuple[bool, float, float]:
    """(passed, least LRE of the values, least LRE of the standard errors)."""
    if values is None:
        return False, 0.0, 0.0
    digits = min(lre(v, c) for v, c in zip(values, problem["certified"], strict=True))
    if errors is None:
        return False, digits, 0.0
    se_digits = min(lre(e, c) for e, c in zip(errors, problem["stderr"], strict=True))
    return digits >= 6 and se_digits >= 4, digits, se_digits


class Model:
    """A problem's model and target as NumPy functions of the parameters, through the tape
    (values, and the exact Jacobian for the contenders that take one)."""

    def __init__(self, problem: dict):
        self.program = parse(problem["model"])
        self.names = problem["parameters"]
        self.data = columns(problem)
        target = parse(problem.get("target", "y"))
        self.observed = np.array(_values(target, self.data), dtype=np.float64)
        self.tape = Tape(self.program)
        self.n = self.observed.size

    def run(self, b):
        inputs = {name: self.data[name] for name in self.program.inputs if name in self.data}
        inputs.update((name, np.full(self.n, v)) for name, v in zip(self.names, b, strict=True))
        (value, gradients), *_ = self.tape.run(inputs, self.n)
        jac = np.column_stack([np.broadcast_to(gradients[name], (self.n,)) for name in self.names])
        return np.array(value, dtype=np.float64), jac

    def residuals(self, b):
        with np.errstate(all="ignore"):
            return self.observed - self.run(b)[0]

    def jacobian(self, b):
        with np.errstate(all="ignore"):
            return -self.run(b)[1]

    def model(self, x, *b):
        with np.errstate(all="ignore"):
            return self.run(b)[0]


def _values(program, data):
    from nanograd_cli._tape import batch_gradients

    return batch_gradients(program, {n: data[n] for n in program.inputs})[0]


def standard_errors(jac: np.ndarray, rss: float, n: int) -> np.ndarray | None:
    k = jac.shape[1]
    if not np.all(np.isfinite(jac)) or n <= k:
        return None
    try:
        _, s, vt = np.linalg.svd(jac, full_matrices=False)
    except np.linalg.LinAlgError:
        return None
    if s[-1] == 0:
        return None
    return np.sqrt(np.diag((vt.T / s**2) @ vt) * rss / (n - k))


def run_nanograd(problem, start):
    program = parse(problem["model"])
    target = parse(problem["target"]) if "target" in problem else None
    starts = dict(zip(problem["parameters"], start, strict=True))
    result = fitting.fit(program, columns(problem), starts, target=target)
    names = problem["parameters"]
    values = [result.parameters[n] for n in names]
    errors = [result.stderr[n] for n in names]
    return values, errors, result


def run_curve_fit(problem, start):
    from scipy.optimize import curve_fit

    m = Model(problem)
    try:
        popt, pcov = curve_fit(m.model, None, m.observed, p0=start)
    except (RuntimeError, ValueError):
        return None, None, None
    errors = np.sqrt(np.diag(pcov)) if np.all(np.isfinite(pcov)) else None
    return list(popt), None if errors is None else list(errors), None


def run_lm_fd(problem, start):
    return _least_squares(problem, start, method="lm", exact=False)


def run_trf_exact(problem, start):
    return _least_squares(problem, start, method="trf", exact=True)


def _least_squares(problem, start, method, exact):
    from scipy.optimize import least_squares

    m = Model(problem)
    try:
        result = least_squares(
            m.residuals,
            np.array(start, dtype=float),
            jac=m.jacobian if exact else "2-point",
            method=method,
        )
    except ValueError:
        return None, None, None
    rss = float(result.fun @ result.fun)
    errors = standard_errors(result.jac, rss, m.n)
    return list(result.x), None if errors is None else list(errors), None


def run_lmfit(problem, start):
    import lmfit

    m = Model(problem)
    params = lmfit.Parameters()
    for name, value in zip(problem["parameters"], start, strict=True):
        params.add(name, value=value)

    def residual(p):
        return m.residuals([p[n].value for n in problem["parameters"]])

    try:
        out = lmfit.minimize(residual, params)
    except (ValueError, TypeError):
        return None, None, None
    values = [out.params[n].value for n in problem["parameters"]]
    errors = [out.params[n].stderr for n in problem["parameters"]]
    return values, None if any(e is None for e in errors) else errors, None


CONTENDERS = {
    "nanograd": run_nanograd,
    "curve_fit": run_curve_fit,
    "least_squares lm": run_lm_fd,
    "lmfit": run_lmfit,
    "least_squares trf exact": run_trf_exact,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="problem names")
    parser.add_argument("--contender", nargs="*", choices=list(CONTENDERS))
    parser.add_argument("--details", action="store_true", help="a line per fit")
    parser.add_argument("--stages", help="nanograd's stages, e.g. trf,lm or trf or lm")
    parser.add_argument("--tolerance", type=float, help="ftol = xtol = gtol of each stage")
    parser.add_argument("--x-scale", help="x_scale of each stage (jac, or 1)")
    parser.add_argument("--polish", type=int, help="Gauss-Newton steps after each stage")
    parser.add_argument(
        "--lanczos1",
        action="store_true",
        help="how far the data's precision limits Lanczos1's standard errors",
    )
    parser.add_argument(
        "--move-starts",
        type=float,
        metavar="F",
        help="start each fit F times as far from the certified values as NIST's starts are",
    )
    args = parser.parse_args()
    configure(args)
    if args.lanczos1:
        lanczos1()
        return
    chosen = args.contender or list(CONTENDERS)
    try:
        import lmfit  # noqa: F401
    except ImportError:
        if "lmfit" in chosen:
            print("lmfit is not installed (pip install lmfit): left out")
            chosen.remove("lmfit")
    todo = [p for p in problems() if not args.only or p["name"] in args.only]
    totals = {}
    for name in chosen:
        passed, wrong_converged, right_unconverged, short = 0, 0, 0, 0
        t0 = time.perf_counter()
        for problem in todo:
            for which in ("start1", "start2"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    with np.errstate(all="ignore"):
                        start = problem[which]
                        if args.move_starts:
                            start = [
                                c + args.move_starts * (s - c)
                                for s, c in zip(start, problem["certified"], strict=True)
                            ]
                        values, errors, result = CONTENDERS[name](problem, start)
                ok, digits, se_digits = passes(problem, values, errors)
                passed += ok
                flag = ""
                if result is not None:
                    if result.converged and digits < 6:
                        wrong_converged += 1
                        flag = "  WRONG, CALLED CONVERGED"
                    elif result.converged and not ok:
                        short += 1
                        flag = "  values right, standard errors short"
                    elif ok and not result.converged:
                        right_unconverged += 1
                        flag = "  right, not called converged"
                    elif not ok:
                        flag = "  (said: not converged)"
                if args.details:
                    said = f" | {result.message}" if result is not None else ""
                    print(
                        f"{name:24} {problem['name']:9} {which}: "
                        f"{'pass' if ok else 'FAIL'}  digits {digits:4.1f}  stderr digits "
                        f"{se_digits:4.1f}{flag}{said}"
                    )
        seconds = time.perf_counter() - t0
        totals[name] = passed
        line = f"{name:24} {passed:2} of {2 * len(todo)} pass  ({seconds:.1f} s)"
        if name == "nanograd":
            line += (
                f"; wrong values called converged: {wrong_converged}; right values, standard "
                f"errors short: {short}; right but not called converged: {right_unconverged}"
            )
        print(line)


def lanczos1() -> None:
    """Lanczos1's certified RSS is 1.4e-25: its residuals are at rounding level. From
    nanograd's solution, Gauss-Newton steps in extended precision (long double) with the data
    as exact decimals and with the data rounded to doubles: the digits of the standard errors
    that the RSS of each allows (they scale with its square root)."""
    problem = next(p for p in problems() if p["name"] == "Lanczos1")
    with open(DATA / problem["data"], newline="") as f:
        rows = list(csv.DictReader(f))
    exact = [np.array([np.longdouble(r[c]) for r in rows]) for c in ("x", "y")]
    doubles = [np.array([float(r[c]) for r in rows]).astype(np.longdouble) for c in ("x", "y")]
    _, _, result = run_nanograd(problem, problem["start1"])
    start = np.array([result.parameters[n] for n in problem["parameters"]], dtype=np.longdouble)
    print(f"nanograd in double precision: RSS {result.rss:.6e}, certified {problem['rss']:.6e}")
    for label, (x, y) in (("exact decimals", exact), ("doubles", doubles)):
        b = start.copy()
        for _ in range(5):
            e = [np.exp(-b[2 * i + 1] * x) for i in range(3)]
            r = y - sum(b[2 * i] * e[i] for i in range(3))
            jac = np.column_stack([c for i in range(3) for c in (e[i], -b[2 * i] * x * e[i])])
            b = b + _solve(jac.T @ jac, jac.T @ r)
        e = [np.exp(-b[2 * i + 1] * x) for i in range(3)]
        r = y - sum(b[2 * i] * e[i] for i in range(3))
        rss = float(np.sum(r * r))
        error = abs(rss - problem["rss"]) / problem["rss"]
        print(
            f"long double from the data as {label}: RSS {rss:.6e}, relative error {error:.1e}, "
            f"standard errors to {-math.log10(error / 2):.1f} digits"
        )


def _solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x = b by Gauss-Jordan elimination with partial pivoting, in a's precision (NumPy's
    solvers are double precision only)."""
    m = np.concatenate([a, b[:, None]], axis=1)
    k = len(b)
    for i in range(k):
        pivot = i + int(np.argmax(np.abs(m[i:, i])))
        m[[i, pivot]] = m[[pivot, i]]
        m[i] /= m[i, i]
        for j in range(k):
            if j != i:
                m[j] -= m[j, i] * m[i]
    return m[:, k]


def configure(args) -> None:
    """Other defaults for nanograd's fit, to measure them."""
    if args.polish is not None:
        fitting.POLISH_STEPS = args.polish
    stages = [fitting.FIRST_STAGE, fitting.SECOND_STAGE]
    if args.stages:
        methods = args.stages.split(",")
        base = dict(fitting.FIRST_STAGE)
        new = [dict(base, method=m) for m in methods]
        fitting.FIRST_STAGE = new[0]
        fitting.SECOND_STAGE = new[1] if len(new) > 1 else None
        stages = [s for s in new]
    for stage in stages:
        if stage is None:
            continue
        if args.tolerance:
            stage.update(ftol=args.tolerance, xtol=args.tolerance, gtol=args.tolerance)
        if args.x_scale:
            stage["x_scale"] = args.x_scale if args.x_scale == "jac" else float(args.x_scale)


if __name__ == "__main__":
    main()
