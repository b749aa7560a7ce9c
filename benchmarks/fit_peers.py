"""Ten everyday models, each fitted to its noisy data from 24 poor starts by nanograd's fit, SciPy's
curve_fit, lmfit and R's nls, each at its defaults: how often each reaches the best fit, how
often it stops on an error, its CPU time per fit, and how right its standard errors are.

Run: python benchmarks/fit_peers.py [--starts N] [--seed S] [--no-r]

Each model has a data set of 20 to 100 rows drawn with a fixed seed from realistic true
parameters, and N starts (default 24) drawn log-uniform between 0.1x and 10x each true value
(the sign kept). The contenders, at their defaults:

* nanograd: `nanograd_cli.fit(source, data=columns, **starts)`, in process;
* curve_fit: `scipy.optimize.curve_fit(f, x, y, p0=start)` (lm, finite differences);
* lmfit: `lmfit.Model(f).fit(y, params, x=x)` (leastsq, finite differences);
* R: `nls(y ~ model, data, start=start)` in one `Rscript` process, if Rscript is on the PATH
  (its outcomes only: its time is a whole process's, not comparable per fit).

A start reaches the best fit when the fit ends (an error or a nan is not an end) at a sum of
squares within 1e-6 relative of the least any contender found on that model; the sums of
squares of all contenders are computed alike, by NumPy from the parameters they return. An
error is an exception, or parameters or a sum of squares that are not finite; "nan" counts
those that a nan or inf in the model caused (lmfit's and R's aborts, curve_fit's nan
parameters, nanograd's errors that say so). The CPU time is time.process_time around each
call (the contenders alternate, start by start, after one fit each to warm up); a model's
figure is the median of its fits.

The standard errors are compared at each of a contender's fits that reached the best fit with
a reference independent of every contender: the exact minimum, refined by
Gauss-Newton steps in 50 digits (mpmath) with the Jacobian SymPy differentiates, and there
sqrt(diag((JᵀJ)⁻¹) · RSS/(n - k)). A model's figure is the digits of the worst parameter,
-log10(max |se - reference| / reference), the median of its fits that reached the best.
"""

from __future__ import annotations

import argparse
import csv
import inspect
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report

STARTS, SEED = 24, 1
CONTENDERS = ["nanograd", "curve_fit", "lmfit", "R nls"]
TIMED = CONTENDERS[:3]


@dataclass
class Model:
    name: str
    source: str  # nanograd's, SymPy's and R's text of the model
    f: Callable  # the same in NumPy: f(column, *parameters), parameters in TRUE's order
    true: dict[str, float]
    column: np.ndarray  # the one column the model reads, named as f's first argument
    noise: float  # standard deviation of the noise
    relative: bool = False  # noise relative to the value
    # the pairs of parameter indices to swap, and a sign to flip, where the fit ended at the
    # same curve under other names (4PL's hill < 0, double exponential's k1 < k2)
    mirror: tuple[Callable[[list[float]], bool], list[tuple[int, int]], int | None] | None = None

    def canonical(self, values: list[float], errors: list[float] | None):
        """The parameters and standard errors named as the true ones are."""
        if self.mirror is None or not self.mirror[0](values):
            return values, errors
        _, pairs, flip = self.mirror
        values, errors = list(values), None if errors is None else list(errors)
        for i, j in pairs:
            values[i], values[j] = values[j], values[i]
            if errors is not None:
                errors[i], errors[j] = errors[j], errors[i]
        if flip is not None:
            values[flip] = -values[flip]
        return values, errors

    @property
    def x_name(self) -> str:
        return next(iter(inspect.signature(self.f).parameters))

    def data(self, seed: int, index: int) -> dict[str, np.ndarray]:
        rng = np.random.default_rng([seed, index, 0])
        clean = self.f(self.column, *self.true.values())
        scale = np.abs(clean) if self.relative else 1.0
        return {
            self.x_name: self.column,
            "y": clean + self.noise * scale * rng.normal(size=clean.size),
        }

    def starts(self, seed: int, index: int, count: int) -> list[dict[str, float]]:
        rng = np.random.default_rng([seed, index, 1])
        factors = 10 ** rng.uniform(-1, 1, (count, len(self.true)))
        return [
            dict(zip(self.true, np.array(list(self.true.values())) * row, strict=True))
            for row in factors
        ]


MODELS = [
    Model(
        "exponential decay",
        "a*exp(-b*x) + c",
        lambda x, a, b, c: a * np.exp(-b * x) + c,
        {"a": 2.5, "b": 1.3, "c": 0.5},
        np.linspace(0, 4, 30),
        0.02,
    ),
    Model(
        "Michaelis-Menten",
        "Vmax*S/(Km + S)",
        lambda S, Vmax, Km: Vmax * S / (Km + S),
        {"Vmax": 210.0, "Km": 0.065},
        np.repeat(np.geomspace(0.01, 1.5, 8), 3),
        6.0,
    ),
    Model(
        "Gaussian peak",
        "A*exp(-(x - mu)**2/(2*s**2)) + base",
        lambda x, A, mu, s, base: A * np.exp(-((x - mu) ** 2) / (2 * s**2)) + base,
        {"A": 12.0, "mu": 5.2, "s": 0.7, "base": 1.5},
        np.linspace(0, 10, 80),
        0.3,
    ),
    Model(
        "4PL dose-response",
        "bottom + (top - bottom)/(1 + (x/ec50)**hill)",
        lambda x, bottom, top, ec50, hill: bottom + (top - bottom) / (1 + (x / ec50) ** hill),
        {"bottom": 0.08, "top": 1.9, "ec50": 1.5, "hill": 1.2},
        np.repeat(np.geomspace(0.01, 100, 12), 3),
        0.04,
        mirror=(lambda p: p[3] < 0, [(0, 1)], 3),
    ),
    Model(
        "Arrhenius",
        "A*exp(-Ea/(8.314*temp))",
        lambda temp, A, Ea: A * np.exp(-Ea / (8.314 * temp)),
        {"A": 4.0e7, "Ea": 52000.0},
        np.linspace(283, 353, 20),
        0.03,
        relative=True,
    ),
    Model(
        "logistic growth",
        "K/(1 + exp(-r*(t - t0)))",
        lambda t, K, r, t0: K / (1 + np.exp(-r * (t - t0))),
        {"K": 100.0, "r": 0.8, "t0": 6.0},
        np.linspace(0, 15, 40),
        2.0,
    ),
    Model(
        "power law",
        "a*x**b",
        lambda x, a, b: a * x**b,
        {"a": 3.2, "b": 0.75},
        np.geomspace(1, 100, 25),
        0.03,
        relative=True,
    ),
    Model(
        "damped sine",
        "A*exp(-k*t)*sin(w*t + phi)",
        lambda t, A, k, w, phi: A * np.exp(-k * t) * np.sin(w * t + phi),
        {"A": 2.0, "k": 0.3, "w": 2.5, "phi": 0.6},
        np.linspace(0, 10, 100),
        0.05,
    ),
    Model(
        "double exponential",
        "a1*exp(-k1*t) + a2*exp(-k2*t)",
        lambda t, a1, k1, a2, k2: a1 * np.exp(-k1 * t) + a2 * np.exp(-k2 * t),
        {"a1": 3.0, "k1": 2.0, "a2": 1.5, "k2": 0.2},
        np.linspace(0, 20, 50),
        0.02,
        mirror=(lambda p: p[1] < p[3], [(0, 2), (1, 3)], None),
    ),
    Model(
        "Hill equation",
        "Vmax*x**n/(K**n + x**n)",
        lambda x, Vmax, K, n: Vmax * x**n / (K**n + x**n),
        {"Vmax": 1.0, "K": 2.0, "n": 2.5},
        np.geomspace(0.1, 10, 30),
        0.02,
    ),
]


@dataclass
class Outcome:
    """One fit: its parameters and standard errors (None after an error), the sum of squares
    NumPy computes at them, the CPU seconds, and why it stopped if on an error."""

    values: list[float] | None = None
    errors: list[float] | None = None
    rss: float = math.nan
    cpu: float = math.nan
    error: str = ""
    nan: bool = False
    converged: bool = True  # what the contender said, where it returned


@dataclass
class Tally:
    best: int = 0
    errors: int = 0
    nan: int = 0
    cpu: list[float] = field(default_factory=list)
    se_digits: float | None = None


def rss(model: Model, data: dict[str, np.ndarray], values) -> float:
    with np.errstate(all="ignore"):
        r = data["y"] - model.f(data[model.x_name], *values)
    return float(r @ r)


def run_nanograd(model: Model, data, start) -> Outcome:
    import nanograd_cli

    try:
        fitted = nanograd_cli.fit(model.source, data=data, **start)
    except Exception as e:  # every error is an outcome to count
        return Outcome(error=str(e).splitlines()[0], nan="nan" in str(e) or "inf" in str(e))
    names = list(model.true)
    return Outcome(
        [fitted.parameters[n] for n in names],
        [fitted.stderr[n] for n in names],
        converged=fitted.converged,
    )


def run_curve_fit(model: Model, data, start) -> Outcome:
    from scipy.optimize import curve_fit

    try:
        values, covariance = curve_fit(
            model.f, data[model.x_name], data["y"], p0=list(start.values())
        )
    except Exception as e:
        return Outcome(error=str(e).splitlines()[0])
    return Outcome(list(values), list(np.sqrt(np.diag(covariance))))


def run_lmfit(model: Model, data, start) -> Outcome:
    import lmfit

    try:
        lm = lmfit.Model(model.f)
        result = lm.fit(data["y"], lm.make_params(**start), **{model.x_name: data[model.x_name]})
    except Exception as e:
        return Outcome(error=str(e).splitlines()[0], nan="NaN" in str(e))
    names = list(model.true)
    errors = [result.params[n].stderr for n in names]
    return Outcome(
        [result.params[n].value for n in names],
        None if any(e is None for e in errors) else errors,
        converged=result.success,
    )


RUNNERS = {"nanograd": run_nanograd, "curve_fit": run_curve_fit, "lmfit": run_lmfit}


def timed(name: str, model: Model, data, start) -> Outcome:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        outcome = RUNNERS[name](model, data, start)
        outcome.cpu = time.process_time() - t0
    return finish(outcome, model, data)


def finish(outcome: Outcome, model: Model, data) -> Outcome:
    """The outcome with its sum of squares, and a result that is not finite made an error."""
    if outcome.values is not None:
        outcome.values, outcome.errors = model.canonical(outcome.values, outcome.errors)
        outcome.rss = rss(model, data, outcome.values)
        if not (np.all(np.isfinite(outcome.values)) and math.isfinite(outcome.rss)):
            outcome.error, outcome.nan, outcome.values = "not finite", True, None
    return outcome


R_SCRIPT = """
for (m in scan("models.txt", what = "", sep = "\\n", quiet = TRUE)) {
  parts <- strsplit(m, "\\t")[[1]]
  d <- read.csv(paste0(parts[1], ".csv"))
  starts <- read.csv(paste0(parts[1], "_starts.csv"))
  formula <- as.formula(paste("y ~", parts[2]))
  for (i in seq_len(nrow(starts))) {
    line <- tryCatch({
      fit <- nls(formula, d, start = as.list(starts[i, ]))
      se <- summary(fit)$coefficients[names(starts), 2]
      c("ok", sprintf("%.17g", c(coef(fit)[names(starts)], se)))
    }, error = function(e) c("error", gsub("[\\t\\n]", " ", conditionMessage(e))))
    cat(parts[1], i, line, sep = "\\t")
    cat("\\n")
  }
}
"""


def run_r(models: list[Model], datas, starts) -> dict[str, list[Outcome]] | None:
    """R's nls on every model from every start, in one Rscript process; None without R."""
    if shutil.which("Rscript") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        lines = []
        for i, model in enumerate(models):
            with open(tmp / f"m{i}.csv", "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(datas[i])
                w.writerows(zip(*(map(repr, c.tolist()) for c in datas[i].values()), strict=True))
            with open(tmp / f"m{i}_starts.csv", "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(model.true)
                w.writerows([repr(float(v)) for v in s.values()] for s in starts[i])
            lines.append(f"m{i}\t{model.source}")
        (tmp / "models.txt").write_text("\n".join(lines) + "\n")
        (tmp / "fit.R").write_text(R_SCRIPT)
        out = subprocess.run(
            ["Rscript", "fit.R"], cwd=tmp, capture_output=True, text=True, check=True
        ).stdout
    found: dict[str, list[Outcome]] = {m.name: [] for m in models}
    for line in out.splitlines():
        tag, _, status, *rest = line.split("\t")
        i = int(tag[1:])
        model, k = models[i], len(models[i].true)
        if status == "ok":
            numbers = [float(v) for v in rest]
            outcome = Outcome(numbers[:k], numbers[k:])
        else:
            message = rest[0] if rest else ""
            outcome = Outcome(error=message, nan="infinity" in message or "NaN" in message)
        found[model.name].append(finish(outcome, model, datas[i]))
    return found


def reference(model: Model, data, values) -> tuple[list[float], float]:
    """The standard errors at the exact minimum near `values` and its sum of squares, in 50
    digits: Gauss-Newton steps with SymPy's Jacobian, then sqrt(diag((JᵀJ)⁻¹) RSS/(n-k))."""
    import mpmath
    import sympy

    mp = mpmath.mp
    mp.dps = 50
    names = list(model.true)
    symbols = {n: sympy.Symbol(n) for n in [model.x_name, *names]}
    expression = sympy.parse_expr(model.source, local_dict=symbols)
    args = [symbols[model.x_name], *(symbols[n] for n in names)]
    f = sympy.lambdify(args, expression, "mpmath")
    grads = [sympy.lambdify(args, sympy.diff(expression, symbols[n]), "mpmath") for n in names]
    xs = [mp.mpf(v) for v in data[model.x_name].tolist()]
    ys = [mp.mpf(v) for v in data["y"].tolist()]
    p = [mp.mpf(v) for v in values]

    def residual_jacobian(p):
        r = mp.matrix([y - f(x, *p) for x, y in zip(xs, ys, strict=True)])
        jac = mp.matrix([[g(x, *p) for g in grads] for x in xs])
        return r, jac

    for _ in range(200):
        r, jac = residual_jacobian(p)
        step = mp.qr_solve(jac, r)[0]
        p = [v + s for v, s in zip(p, step, strict=True)]
        if mp.norm(step) <= mp.mpf(10) ** -40 * mp.norm(mp.matrix(p)):
            break
    else:
        raise RuntimeError(f"{model.name}: the reference did not converge")
    r, jac = residual_jacobian(p)
    squares = sum(v**2 for v in r)
    covariance = (jac.T * jac) ** -1 * squares / (len(xs) - len(names))
    return [float(mp.sqrt(covariance[i, i])) for i in range(len(names))], float(squares)


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in ("nanograd-cli", "scipy", "lmfit"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = ""
    return found


def details(contenders, outcomes, least: dict[str, float]) -> None:
    """A line per model and start: each contender's sum of squares over the least, or its
    error; "(not converged)" where the contender said so."""
    for model in MODELS:
        print(f"\n{model.name} (least RSS {least[model.name]:.10g}):")
        for i in range(len(outcomes[contenders[0]][model.name])):
            cells = []
            for name in contenders:
                o = outcomes[name][model.name][i]
                ratio = f"{o.rss / least[model.name]:.6g}" if o.values is not None else o.error[:40]
                cells.append(f"{name} {ratio}" + ("" if o.converged else " (not converged)"))
            print(f"  start {i + 1:2}: " + "; ".join(cells))


def digits(errors: list[float] | None, exact: list[float]) -> float:
    if errors is None or not np.all(np.isfinite(errors)):
        return 0.0
    worst = max(abs(e - x) / abs(x) for e, x in zip(errors, exact, strict=True))
    return min(16.0, -math.log10(worst)) if worst > 0 else 16.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=STARTS, help="starts per model")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--no-r", action="store_true", help="leave R's nls out")
    parser.add_argument("--details", action="store_true", help="a line per start")
    args = parser.parse_args()
    datas = [m.data(args.seed, i) for i, m in enumerate(MODELS)]
    starts = [m.starts(args.seed, i, args.starts) for i, m in enumerate(MODELS)]

    contenders = list(TIMED)
    try:
        import lmfit  # noqa: F401
    except ImportError:
        print("lmfit is not installed (pip install lmfit): left out")
        contenders.remove("lmfit")
    for name in contenders:  # warm up: imports, first calls
        timed(name, MODELS[0], datas[0], MODELS[0].true)
    outcomes: dict[str, dict[str, list[Outcome]]] = {n: {} for n in contenders}
    for model, data, its_starts in zip(MODELS, datas, starts, strict=True):
        for name in contenders:
            outcomes[name][model.name] = []
        for start in its_starts:
            for name in contenders:
                outcomes[name][model.name].append(timed(name, model, data, start))
    r = None if args.no_r else run_r(MODELS, datas, starts)
    r_version = ""
    if r is not None:
        contenders.append("R nls")
        outcomes["R nls"] = r
        r_version = subprocess.run(
            ["Rscript", "-e", "cat(R.version$major, R.version$minor, sep='.')"],
            capture_output=True,
            text=True,
        ).stdout
    elif not args.no_r:
        print("Rscript is not on the PATH (apt-get install r-base-core): R's nls left out")

    try:
        import mpmath  # noqa: F401
        import sympy  # noqa: F401
    except ImportError:
        print("SymPy or mpmath is not installed (--group test): standard errors not compared")
        referenced = False
    else:
        referenced = True
    tallies: dict[str, dict[str, Tally]] = {n: {} for n in contenders}
    se_exact, least_of = {}, {}
    for model, data in zip(MODELS, datas, strict=True):
        ends = [o for n in contenders for o in outcomes[n][model.name] if o.values is not None]
        least = least_of[model.name] = min(o.rss for o in ends)
        best = min(ends, key=lambda o: o.rss)
        se_exact[model.name] = None
        try:
            if referenced:
                se_exact[model.name], exact_rss = reference(model, data, best.values)
                assert exact_rss <= least * (1 + 1e-9), (model.name, exact_rss, least)
        except (ValueError, ZeroDivisionError, RuntimeError) as e:
            print(f"{model.name}: no reference standard errors ({e})")
        for name in contenders:
            found = outcomes[name][model.name]
            t = tallies[name][model.name] = Tally()
            reached = [o for o in found if o.values is not None and o.rss <= least * (1 + 1e-6)]
            t.best = len(reached)
            t.errors = sum(o.values is None for o in found)
            t.nan = sum(o.values is None and o.nan for o in found)
            t.cpu = [o.cpu for o in found]
            if reached and se_exact[model.name] is not None:
                exact = se_exact[model.name]
                t.se_digits = statistics.median(digits(o.errors, exact) for o in reached)

    if args.details:
        details(contenders, outcomes, least_of)
        print()
    n = args.starts
    print(
        f"{len(MODELS)} models, {n} starts each (log-uniform in 0.1x to 10x the true values, "
        f"seed {args.seed}); each cell: starts that reached the best fit / errors (of them nan)"
        + " / median CPU ms per fit\n"
    )
    print("| model | rows | " + " | ".join(contenders) + " |")
    print("| --- | ---: |" + " ---: |" * len(contenders))
    for model, data in zip(MODELS, datas, strict=True):
        cells = []
        for name in contenders:
            t = tallies[name][model.name]
            cell = f"{t.best} / {t.errors} ({t.nan})"
            if name in TIMED:
                cell += f" / {statistics.median(t.cpu) * 1e3:.2f}"
            cells.append(cell)
        print(f"| {model.name} | {data['y'].size} | " + " | ".join(cells) + " |")
    total = len(MODELS) * n
    cells = []
    for name in contenders:
        ts = tallies[name].values()
        cell = (
            f"**{sum(t.best for t in ts)} / {sum(t.errors for t in ts)} ({sum(t.nan for t in ts)})"
        )
        if name in TIMED:
            cell += f" / {statistics.median(c for t in ts for c in t.cpu) * 1e3:.2f}"
        cells.append(cell + "**")
    print(f"| **all {total} fits** | | " + " | ".join(cells) + " |")

    print(
        "\nStandard errors where the best fit was reached: digits of agreement with the reference"
    )
    print("(mpmath, 50 digits), median of the fits; - where the contender never reached it\n")
    print("| model | " + " | ".join(contenders) + " |")
    print("| --- |" + " ---: |" * len(contenders))
    for model in MODELS:
        row = [tallies[name][model.name].se_digits for name in contenders]
        print(
            f"| {model.name} | " + " | ".join("-" if d is None else f"{d:.1f}" for d in row) + " |"
        )
    medians = []
    for name in contenders:
        found = [t.se_digits for t in tallies[name].values() if t.se_digits is not None]
        medians.append(f"{statistics.median(found):.1f}" if found else "-")
    print("| **median** | " + " | ".join(medians) + " |")

    cpu = {
        name: statistics.median(c for t in tallies[name].values() for c in t.cpu) * 1e3
        for name in contenders
        if name in TIMED
    }
    ratios = [
        statistics.median(tallies["nanograd"][m.name].cpu)
        / statistics.median(tallies["curve_fit"][m.name].cpu)
        for m in MODELS
    ]
    print(
        f"\nCPU per fit, median of all {total}: nanograd {cpu['nanograd']:.2f} ms, "
        f"curve_fit {cpu['curve_fit']:.2f} ms: {cpu['nanograd'] / cpu['curve_fit']:.1f}x "
        f"(by model {min(ratios):.1f}x to {max(ratios):.1f}x)"
    )
    workload = f"{len(MODELS)} everyday models, {n} starts each"
    report.ratio("fit, ms per fit", workload, cpu["nanograd"], "curve_fit", cpu["curve_fit"])
    if "lmfit" in cpu:
        print(
            f"lmfit Model.fit {cpu['lmfit']:.2f} ms: nanograd {cpu['nanograd'] / cpu['lmfit']:.1f}x"
        )
        report.ratio("fit, ms per fit", workload, cpu["nanograd"], "lmfit Model.fit", cpu["lmfit"])
    print(
        ", ".join(f"{p} {v}" for p, v in versions().items() if v)
        + (f", R {r_version}" if r_version else "")
    )


if __name__ == "__main__":
    main()
