"""The compiled program against plain Python floats and the engine, and `minimize` against a
hand-written Adam loop.

Run: python benchmarks/compiled.py [--switch]

Per node: the compiled forward + backward (`compiled.gradient`), the same graph evaluated
forward in plain Python floats (straight-line code over `math`, as a person would write it,
no gradient), and the engine (`Program.gradients`: the graph of Values, then backward), on
random expressions of 10 to 10,000 nodes (the engine benchmark's mix: tanh, relu, * 0.5,
+ 1.0, +, *, -). Then `minimize` of Rosenbrock's function for 10,000 Adam steps (tol 0, so
every step runs) against the same Adam loop written by hand in plain floats with the gradient
derived by hand. The contenders alternate in one process; each figure is the median of
several runs.

--switch also measures what compiling costs against what it saves per evaluation, for the
switch in nanograd_cli/_compiled.py.
"""

from __future__ import annotations

import math
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import report

from nanograd_cli import _api as api
from nanograd_cli import parse
from nanograd_cli._compiled import Compiled
from nanograd_cli._program import Apply, Const, Input

SIZES = (10, 100, 1_000, 10_000)
ROSENBROCK = "(1 - x)**2 + 100*(y - x**2)**2"
STEPS = 10_000


def random_source(nodes: int, seed: int = 0) -> str:
    """A random expression over x, y, z of about `nodes` nodes (instructions), every one on a
    path to the result: operands merged at random until one is left."""
    rng = random.Random(seed)
    pool = ["x", "y", "z"]
    lines = []
    count = 3
    i = 0
    while count < nodes - 2 or len(pool) > 1:
        if count >= nodes - 2 or (len(pool) >= 2 and rng.random() >= 0.3):
            a = pool.pop(rng.randrange(len(pool)))
            b = pool.pop(rng.randrange(len(pool)))
            expr = rng.choice([f"{a} + {b}", f"{a} * {b}", f"{a} - {b}"])
            count += 1
        else:
            a = pool.pop(rng.randrange(len(pool)))
            expr, cost = rng.choice(
                [(f"tanh({a})", 1), (f"relu({a})", 1), (f"{a} * 0.5", 2), (f"{a} + 1.0", 2)]
            )
            count += cost
            if rng.random() < 0.5:
                pool.append("xyz"[rng.randrange(3)])
        lines.append(f"n{i} = {expr}")
        pool.append(f"n{i}")
        i += 1
    return "\n".join(lines) + f"\n{pool[0]}"


_PLAIN = {
    "+": "{0} + {1}",
    "-": "{0} - {1}",
    "*": "{0} * {1}",
    "tanh": "tanh({0})",
    "relu": "{0} if {0} > 0.0 else 0.0",
}


def plain_forward(program):
    """The program's forward pass as straight-line code over plain floats and `math`: no
    gradient, no guards, a local per instruction."""
    index = {name: k for k, name in enumerate(program.inputs)}
    names, lines = [], []
    for i, ins in enumerate(program.code):
        if type(ins) is Input:
            names.append(f"a{index[ins.name]}")
        elif type(ins) is Const:
            names.append(repr(ins.value))
        else:
            assert type(ins) is Apply
            lines.append(f"    v{i} = " + _PLAIN[ins.op.name].format(*(names[a] for a in ins.args)))
            names.append(f"v{i}")
    source = f"def forward({', '.join(f'a{k}' for k in range(len(program.inputs)))}):\n"
    source += "\n".join(lines) + f"\n    return {names[program.result]}\n"
    namespace = {"tanh": math.tanh}
    exec(compile(source, "<plain>", "exec"), namespace)  # our own generated code
    return namespace["forward"]


# CPU time, not wall-clock time: the machine is shared, and a contender that is descheduled
# for a while would otherwise be charged for it.
clock = time.process_time


def per_call(fn, calls: int) -> float:
    t0 = clock()
    for _ in range(calls):
        fn()
    return (clock() - t0) / calls


def per_node(runs: int = 41) -> list[tuple[int, dict[str, float], dict[str, float]]]:
    """Per size: the nodes, ns per node for the compiled gradient, plain-float forward and the
    engine (medians), and the compiled gradient's time over the others' (medians of the
    ratios in each round)."""
    rows = []
    for size in SIZES:
        program = parse(random_source(size))
        nodes = len(program.code)
        point = {"x": 0.3, "y": -0.7, "z": 1.1}
        args = [point[n] for n in program.inputs]
        gradient = Compiled(program).gradient
        forward = plain_forward(program)
        assert forward(*args) == gradient(*args)[0]
        contenders = {
            "compiled": lambda g=gradient, a=args: g(*a),
            "plain": lambda f=forward, a=args: f(*a),
            "engine": lambda p=program, x=point: p.gradients(x),
        }
        calls = max(1, 5_000 // nodes)
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(runs):
            for name, fn in contenders.items():
                times[name].append(per_call(fn, calls if name != "engine" else max(1, calls // 20)))
        ns = {name: statistics.median(t) / nodes * 1e9 for name, t in times.items()}
        ratios = {
            name: statistics.median(
                c / t for c, t in zip(times["compiled"], times[name], strict=True)
            )
            for name in ("plain", "engine")
        }
        rows.append((nodes, ns, ratios))
    return rows


def hand_adam(steps: int = STEPS, lr: float = 0.01) -> tuple[float, float, float]:
    """Rosenbrock's function from (-1.2, 1) by Adam in plain floats, the gradient by hand, with
    the same updates as nanograd's Adam (PyTorch's defaults)."""
    x, y = -1.2, 1.0
    mx = my = vx = vy = 0.0
    b1, b2, eps = 0.9, 0.999, 1e-8
    f = 0.0
    for t in range(1, steps + 1):
        a = 1.0 - x
        d = y - x * x
        f = a * a + 100.0 * d * d
        gx = -2.0 * a - 400.0 * x * d
        gy = 200.0 * d
        mx = b1 * mx + (1 - b1) * gx
        my = b1 * my + (1 - b1) * gy
        vx = b2 * vx + (1 - b2) * gx * gx
        vy = b2 * vy + (1 - b2) * gy * gy
        c1, c2 = 1 - b1**t, 1 - b2**t
        x -= lr * (mx / c1) / ((vx / c2) ** 0.5 + eps)
        y -= lr * (my / c1) / ((vy / c2) ** 0.5 + eps)
    return f, x, y


def minimize_against_hand(runs: int = 9) -> tuple[float, float, float]:
    """Seconds for `minimize` (10,000 steps; parsing and compiling the source included) and
    for the hand-written loop (medians), and the median of their ratio in each round."""
    ours, hand = [], []
    for _ in range(runs):
        t0 = clock()
        program = parse(ROSENBROCK)
        result = api.minimize(program, {"x": -1.2, "y": 1.0}, steps=STEPS, lr=0.01, tol=0.0)
        t1 = clock()
        _, x, _ = hand_adam()
        t2 = clock()
        assert result.steps == STEPS
        assert math.isclose(result.inputs["x"], x, rel_tol=1e-6), (result, x)
        ours.append(t1 - t0)
        hand.append(t2 - t1)
    ratio = statistics.median(a / b for a, b in zip(ours, hand, strict=True))
    return statistics.median(ours), statistics.median(hand), ratio


def switch(runs: int = 5) -> None:
    """What compiling costs per instruction, what it saves per evaluation, and after how many
    evaluations it has paid: for the gradient (against the engine) and the value alone
    (against Program.values)."""
    print(
        f"{'nodes':>7} {'kind':>8} {'compile µs/node':>16} {'engine µs/node':>15} "
        f"{'compiled µs/node':>17} {'pays after':>11}"
    )
    for size in (10, 100, 1_000, 10_000, 100_000, 300_000):
        program = parse(random_source(size))
        nodes = len(program.code)
        point = {"x": 0.3, "y": -0.7, "z": 1.1}
        args = [point[n] for n in program.inputs]
        for kind, engine in (
            ("gradient", lambda p=program, x=point: p.gradients(x)),
            ("value", lambda p=program, x=point: p.values(x)),
        ):
            times: dict[str, list[float]] = {"compile": [], "engine": [], "compiled": []}
            for _ in range(runs if size <= 10_000 else 1):
                t0 = clock()
                function = getattr(Compiled(program), kind)
                t1 = clock()
                engine()
                t2 = clock()
                function(*args)
                t3 = clock()
                for name, t in zip(times, (t1 - t0, t2 - t1, t3 - t2), strict=True):
                    times[name].append(t / nodes * 1e6)
            c, e, g = (statistics.median(t) for t in times.values())
            print(f"{nodes:>7,} {kind:>8} {c:>16.1f} {e:>15.2f} {g:>17.3f} {c / (e - g):>8.0f} ev.")


def main() -> None:
    if "--switch" in sys.argv:
        switch()
        return
    print(
        f"{'nodes':>7} {'ns/node compiled':>17} {'plain floats':>13} {'engine':>8} "
        f"{'compiled/plain':>15} {'compiled/engine':>16}"
    )
    for nodes, ns, ratios in per_node():
        print(
            f"{nodes:>7,} {ns['compiled']:>17.1f} {ns['plain']:>13.1f} {ns['engine']:>8.0f} "
            f"{ratios['plain']:>14.2f}x {ratios['engine']:>15.3f}x"
        )
        workload = f"random expression, {nodes:,} nodes"
        for name, reference in (("plain", "plain-float forward"), ("engine", "engine")):
            report.ratio(
                "compiled gradient, ns per node",
                workload,
                ns[name] * ratios[name],
                reference,
                ns[name],
            )
    ours, hand, ratio = minimize_against_hand()
    print(
        f"minimize {ROSENBROCK}, {STEPS:,} Adam steps: nanograd {ours * 1e3:.1f} ms, "
        f"hand-written loop {hand * 1e3:.1f} ms, ratio {ratio:.2f}x"
    )
    report.ratio(
        "minimize, ms",
        f"Rosenbrock, {STEPS:,} Adam steps",
        hand * 1e3 * ratio,
        "hand-written loop",
        hand * 1e3,
    )


if __name__ == "__main__":
    main()
