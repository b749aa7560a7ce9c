"""Batch gradients: the vectorized tape against hand-written NumPy, PyTorch and JAX, end to end
against a hand-written NumPy script, and against the scalar engine row by row.

Run: python benchmarks/batch.py   (PyTorch and JAX are used when installed, skipped otherwise)
     python benchmarks/batch.py --cpu   (the kernels only, nanograd against hand-written NumPy,
                                         and against it with the tape's derivative of tanh)
     python benchmarks/batch.py --special   (erf, gamma, ... on the tape: SciPy's against the
                                             per-element fallback, CPU time)

Each figure is the median of several runs, the contenders alternating in one process. Set-up
(parsing and compiling the tape, JAX's jit compilation) is done before timing. Every library
uses the threads it chooses by default; a pause before each timed call lets the previous
contender's threads go idle.

--cpu measures CPU time instead, which a shared machine disturbs less (both contenders use
one thread): 21 rounds, the order of the two turned each round, and the ratio is the median
of the ratios within a round. Run in two checkouts, it compares their tapes through the same
reference.
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import report  # noqa: E402

from nanograd_cli import parse  # noqa: E402
from nanograd_cli._tape import Tape, batch_gradients  # noqa: E402

POINTS = 1_000_000
SIMPLE = "x*y + tanh(x)"
WORKED = (ROOT / "tests" / "data" / "worked_example.txt").read_text()


def numpy_simple(x, y):
    t = np.tanh(x)
    return x * y + t, {"x": y + (1.0 - t * t), "y": x}


def numpy_simple_accurate(x, y):
    """As numpy_simple, with the derivative of tanh the tape computes: 2/(1 + cosh(2x)), within
    2 ulps of sech(x)**2, where 1 - t*t loses digits as tanh saturates."""
    t = np.tanh(x)
    return x * y + t, {"x": y + 2.0 / (1.0 + np.cosh(2.0 * x)), "y": x}


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def numpy_worked(x, y):
    """The worked example and its gradient, differentiated by hand."""
    q1 = x + y
    r1 = x * y + y**3
    q2 = q1 + (q1 + 1)
    q3 = q2 + (1 + q2 + (-x))
    s1 = _sigmoid(y + x)
    r2 = r1 + (r1 * 2 + s1)
    s2 = _sigmoid(y - x)
    r3 = r2 + (3 * r2 + s2)
    s = q3 - r3
    t = s**2
    v = t / 2.0 + 10.0 / t
    dt = 0.5 - 10.0 / (t * t)
    ds = dt * 2 * s
    dq3, dr3 = ds, -ds
    dr2 = dr3 * 4
    ds2 = dr3 * s2 * (1 - s2)
    dr1 = dr2 * 3
    ds1 = dr2 * s1 * (1 - s1)
    dq2 = dq3 * 2
    dq1 = dq2 * 2
    dx = dq1 + dr1 * y - dq3 - ds2 + ds1
    dy = dq1 + dr1 * (x + 3 * y * y) + ds2 + ds1
    return v, {"x": dx, "y": dy}


def torch_function(source_fn):
    import torch

    def run(x, y):
        tx = torch.from_numpy(x).requires_grad_()
        ty = torch.from_numpy(y).requires_grad_()
        v = source_fn(torch, tx, ty)
        v.backward(torch.ones_like(v))
        return v.detach().numpy(), {"x": tx.grad.numpy(), "y": ty.grad.numpy()}

    return run


def torch_simple(torch, x, y):
    return x * y + torch.tanh(x)


def torch_worked(torch, x, y):
    q = x + y
    r = x * y + y**3
    q = q + (q + 1)
    q = q + (1 + q + (-x))
    r = r + (r * 2 + torch.sigmoid(y + x))
    r = r + (3 * r + torch.sigmoid(y - x))
    t = (q - r) ** 2
    return t / 2.0 + 10.0 / t


def jax_function(source_fn):
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    scalar = lambda x, y: source_fn(jnp, x, y)  # noqa: E731
    grad = jax.jit(jax.vmap(jax.value_and_grad(scalar, argnums=(0, 1))))

    def run(x, y):
        v, (gx, gy) = grad(x, y)
        v.block_until_ready()
        return v, {"x": gx, "y": gy}

    return run


def jax_simple(jnp, x, y):
    return x * y + jnp.tanh(x)


def jax_worked(jnp, x, y):
    sig = lambda z: 1 / (1 + jnp.exp(-z))  # noqa: E731
    q = x + y
    r = x * y + y**3
    q = q + (q + 1)
    q = q + (1 + q + (-x))
    r = r + (r * 2 + sig(y + x))
    r = r + (3 * r + sig(y - x))
    t = (q - r) ** 2
    return t / 2.0 + 10.0 / t


def ours(source):
    program = parse(source)
    tape = Tape(program)
    return lambda x, y: batch_gradients(program, {"x": x, "y": y}, tape)


# Between two timed calls: long enough for the previous contender's worker threads (PyTorch's
# OpenMP team, JAX's pool) to stop spinning and go to sleep, so they leave the cores free.
PAUSE = 0.1


def median_ms(contenders: dict, x, y, runs: int = 7) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for fn in contenders.values():
        fn(x, y)  # warm up (and compile, for JAX)
    for _ in range(runs):
        for name, fn in contenders.items():
            time.sleep(PAUSE)
            t0 = time.perf_counter()
            fn(x, y)
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def kernels() -> list[tuple[str, dict[str, float]]]:
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-3, 3, POINTS), rng.uniform(0.5, 3, POINTS)
    rows = []
    for label, source, hand, torch_src, jax_src in (
        ("x*y + tanh(x)", SIMPLE, numpy_simple, torch_simple, jax_simple),
        ("worked example", WORKED, numpy_worked, torch_worked, jax_worked),
    ):
        contenders = {"nanograd": ours(source), "numpy": hand}
        for name, make, src in (
            ("pytorch", torch_function, torch_src),
            ("jax", jax_function, jax_src),
        ):
            try:
                contenders[name] = make(src)
            except ImportError:
                report.skipped(KERNEL, label, name, "not installed")
        ref_v, ref_g = hand(x, y)
        v, g = contenders["nanograd"](x, y)
        assert np.allclose(v, ref_v, rtol=1e-9) and np.allclose(g["x"], ref_g["x"], rtol=1e-9)
        rows.append((label, median_ms(contenders, x, y)))
    return rows


HAND_SCRIPT = """
import sys
import numpy as np
data = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1)
x, y = data[:, 0], data[:, 1]
t = np.tanh(x)
out = np.column_stack([x * y + t, y + (1.0 - t * t), x])
sys.stdout.write("value,d_x,d_y\\n")
sys.stdout.write("\\n".join(",".join(map(repr, r)) for r in out.tolist()) + "\\n")
"""


def end_to_end(rows: int = POINTS, runs: int = 3) -> tuple[float, float]:
    """Seconds for `nanograd grad --points` and for a hand-written NumPy script, CSV to CSV."""
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "points.csv"
        data = np.column_stack([rng.uniform(-3, 3, rows), rng.uniform(0.5, 3, rows)])
        csv.write_text("x,y\n" + "\n".join(",".join(map(repr, r)) for r in data.tolist()) + "\n")
        script = Path(tmp) / "hand.py"
        script.write_text(HAND_SCRIPT)
        ours_cmd = [sys.executable, "-m", "nanograd_cli", "grad", SIMPLE, "--points", str(csv)]
        hand_cmd = [sys.executable, str(script), str(csv)]
        a, b = [], []
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        for _ in range(runs):
            for cmd, sink in ((ours_cmd, a), (hand_cmd, b)):
                t0 = time.perf_counter()
                subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True, env=env)
                sink.append(time.perf_counter() - t0)
        return statistics.median(a), statistics.median(b)


def row_by_row(rows: int = 20_000) -> tuple[float, float]:
    """Microseconds per row: the scalar engine one row at a time, and the vectorized tape."""
    rng = np.random.default_rng(2)
    x, y = rng.uniform(-3, 3, rows), rng.uniform(0.5, 3, rows)
    program = parse(SIMPLE)
    t0 = time.perf_counter()
    for xi, yi in zip(x.tolist(), y.tolist(), strict=True):
        program.gradients({"x": xi, "y": yi})
    scalar = (time.perf_counter() - t0) / rows
    big_x, big_y = rng.uniform(-3, 3, POINTS), rng.uniform(0.5, 3, POINTS)
    batch = median_ms({"nanograd": ours(SIMPLE)}, big_x, big_y)["nanograd"] / 1e3 / POINTS
    return scalar * 1e6, batch * 1e6


KERNEL = f"batch kernel, ms for {POINTS:,} points"
REFERENCES = {"numpy": "hand-written NumPy", "pytorch": "PyTorch", "jax": "JAX jit(vmap(grad))"}


def cpu_ratios(rounds: int = 21) -> None:
    """The kernels, nanograd against hand-written NumPy, in CPU time; for `x*y + tanh(x)`,
    also against hand-written NumPy with the tape's accurate derivative of tanh."""
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-3, 3, POINTS), rng.uniform(0.5, 3, POINTS)
    print(f"kernel, {POINTS:,} points, CPU ms (medians of {rounds}), nanograd over NumPy")
    for label, source, hands in (
        ("x*y + tanh(x)", SIMPLE, {"numpy": numpy_simple, "as accurate": numpy_simple_accurate}),
        ("worked example", WORKED, {"numpy": numpy_worked}),
    ):
        contenders = {"nanograd": ours(source), **hands}
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for fn in contenders.values():
            fn(x, y)  # warm up
        for k in range(rounds):
            for name in list(contenders)[:: 1 if k % 2 else -1]:
                t0 = time.process_time()
                contenders[name](x, y)
                times[name].append(time.process_time() - t0)
        cells = [f"nanograd {statistics.median(times['nanograd']) * 1e3:.1f}"]
        for name in hands:
            mine = zip(times["nanograd"], times[name], strict=True)
            ratio = statistics.median(a / b for a, b in mine)
            cells.append(f"{name} {statistics.median(times[name]) * 1e3:.1f} ({ratio:.2f}x)")
        print(f"  {label:16} {'  '.join(cells)}")


SPECIAL = {  # a source, and the range its rows are drawn from
    "erf(x)": (-3.0, 3.0),
    "erfc(x)": (-3.0, 3.0),
    "erfinv(x)": (-0.99, 0.99),
    "gamma(x)": (0.1, 10.0),
    "lgamma(x)": (0.1, 10.0),
    "digamma(x)": (0.1, 10.0),
}


def special_functions(rows: int = 10**6) -> None:
    """Value and gradient on the tape per row, CPU time (best of 3, of 1 without SciPy): with
    scipy.special and with the per-element functions that stand in where it is missing."""
    from nanograd_cli import _vector_ops as vector_ops
    from nanograd_cli._language import parse
    from nanograd_cli._tape import batch_gradients

    rng = np.random.default_rng(0)
    print(f"special functions on the tape, {rows:,} rows: ns per row (value and gradient)")
    for source, (low, high) in SPECIAL.items():
        program, x = parse(source), rng.uniform(low, high, rows)
        spent = {}
        for label, scipy in (("scipy", vector_ops._NOT_YET), ("per element", None)):
            vector_ops.special = scipy
            best = math.inf
            for _ in range(3 if scipy is not None else 1):
                t0 = time.process_time()
                batch_gradients(program, {"x": x})
                best = min(best, time.process_time() - t0)
            spent[label] = best / rows * 1e9
        vector_ops.special = vector_ops._NOT_YET
        ratio = spent["per element"] / spent["scipy"]
        cells = "  ".join(f"{k} {v:.0f}" for k, v in spent.items())
        print(f"  {source:12} {cells}  ratio {ratio:.1f}x")


def main() -> None:
    if "--cpu" in sys.argv:
        cpu_ratios()
        return
    if "--special" in sys.argv:
        special_functions()
        return
    print(f"kernel, {POINTS:,} points: ms (time / nanograd's)")
    for label, times in kernels():
        cells = "  ".join(f"{n} {t:.1f} ({t / times['nanograd']:.2f}x)" for n, t in times.items())
        missing = [n for n in ("pytorch", "jax") if n not in times]
        note = f"  [{', '.join(missing)} not installed]" if missing else ""
        print(f"  {label:16} {cells}{note}")
        for name, reference in REFERENCES.items():
            if name in times:
                report.ratio(KERNEL, label, times["nanograd"], reference, times[name])
    ours_s, hand_s = end_to_end()
    print(
        f"end to end, CSV in and out, {POINTS:,} rows: nanograd {ours_s:.2f} s, "
        f"hand-written NumPy {hand_s:.2f} s, ratio {ours_s / hand_s:.2f}x"
    )
    workload = f"{SIMPLE}, CSV to CSV, {POINTS:,} rows"
    report.ratio("--points end to end, s", workload, ours_s, "NumPy script", hand_s)
    scalar, batch = row_by_row()
    print(
        f"per row: scalar engine {scalar:.2f} µs, vectorized {batch:.3f} µs, "
        f"{scalar / batch:.0f}x faster"
    )
    report.ratio("µs per row", SIMPLE, batch, "scalar engine, row by row", scalar)


if __name__ == "__main__":
    main()
