"""The engine against micrograd 0.1.0: time and memory per node for forward + backward.

Run: python benchmarks/engine.py  (needs `pip install micrograd`)

Both engines run the same straight-line Python code (generated once per workload, as a user
would write it), alternating, and each figure is the median of several runs.  micrograd 0.1.0
has no tanh or sigmoid: they are added to it in its own style (a closure per node), as its
tutorial does.  Memory is what tracemalloc sees allocated while a graph is alive.
"""

from __future__ import annotations

import gc
import math
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import report

from nanograd_cli.engine import Value

WORKED_EXAMPLE = """
q = x + y
r = x * y + y**3
q = q + (q + 1)
q = q + (1 + q + (-x))
r = r + (r * 2 + (y + x).sigmoid())
r = r + (3 * r + (y - x).sigmoid())
s = q - r
t = s**2
u = t / 2.0
v = u + 10.0 / t
"""


def _micrograd_value():
    """micrograd's Value with tanh and sigmoid written the way micrograd writes relu."""
    from micrograd.engine import Value as MValue

    def tanh(self):
        t = math.tanh(self.data)
        out = MValue(t, (self,), "tanh")

        def _backward():
            self.grad += (1 - t**2) * out.grad

        out._backward = _backward
        return out

    def sigmoid(self):
        s = 1 / (1 + math.exp(-self.data))
        out = MValue(s, (self,), "sigmoid")

        def _backward():
            self.grad += s * (1 - s) * out.grad

        out._backward = _backward
        return out

    MValue.tanh = tanh
    MValue.sigmoid = sigmoid
    return MValue


def random_expression_code(ops: int, seed: int = 0) -> str:
    """Straight-line code for a random expression tree of `ops` operations over x, y, z.

    Operands are merged at random until one root is left, so every node is on a path to it.
    """
    rng = random.Random(seed)
    pool = ["x", "y", "z"]
    lines = []
    for i in range(ops):
        if len(pool) < 2 or rng.random() < 0.3:
            k = rng.randrange(len(pool))
            a = pool.pop(k)
            expr = rng.choice([f"({a}).tanh()", f"({a}).relu()", f"{a} * 0.5", f"{a} + 1.0"])
            if rng.random() < 0.5:
                pool.append("xyz"[rng.randrange(3)])
        else:
            a = pool.pop(rng.randrange(len(pool)))
            b = pool.pop(rng.randrange(len(pool)))
            expr = rng.choice([f"{a} + {b}", f"{a} * {b}", f"{a} - {b}"])
        lines.append(f"n{i} = {expr}")
        pool.append(f"n{i}")
    while len(pool) > 1:
        a, b = pool.pop(), pool.pop()
        lines.append(f"n{ops} = {a} + {b}")
        pool.append(f"n{ops}")
        ops += 1
    return "\n".join(lines) + f"\nresult = {pool[0]}"


def chain_code(depth: int) -> str:
    return "result = x\n" + "result = (result * 0.9 + 0.1).tanh()\n" * depth


def compile_workload(code: str):
    """A function (V) -> root Value running `code` with inputs x, y, z."""
    body = "\n".join("    " + line for line in code.strip().splitlines())
    source = (
        "def run(V):\n    x, y, z = V(-4.0), V(2.0), V(0.5)\n"
        + body
        + "\n    return locals().get('result', locals().get('v'))\n"
    )
    namespace: dict = {}
    exec(compile(source, "<workload>", "exec"), namespace)  # our own generated code
    return namespace["run"]


def count_nodes(root) -> int:
    seen, stack = {id(root)}, [root]
    while stack:
        for c in stack.pop()._prev:
            if id(c) not in seen:
                seen.add(id(c))
                stack.append(c)
    return len(seen)


def time_block(run, V, repeat: int = 3) -> list[float]:
    """Seconds for forward + backward, `repeat` times after one untimed warm-up run.

    The warm-up lets the allocator reuse this engine's own freed memory, as it does in a
    training loop, rather than the other engine's.
    """
    times = []
    for i in range(repeat + 1):
        t0 = time.perf_counter()
        root = run(V)
        root.backward()
        elapsed = time.perf_counter() - t0
        del root
        if i:
            times.append(elapsed)
    # micrograd's graphs are reference cycles that only the collector frees: clear them now,
    # outside the timing, so the next block (of either engine) does not pay for them.
    gc.collect()
    return times


def bytes_per_node(code: str, V, nodes: int) -> float:
    """Bytes allocated per node by forward + backward, the graph alive.

    tracemalloc reads the line number of the allocating frame, which costs time in proportion
    to the function's length, so here the code runs one statement at a time.
    """
    statements = [compile(line, "<statement>", "exec") for line in code.strip().splitlines()]
    namespace = {"V": V}
    exec("x, y, z = V(-4.0), V(2.0), V(0.5)", namespace)
    gc.disable()  # the graph is alive throughout, so collecting frees nothing; it only slows
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for statement in statements:
        exec(statement, namespace)
    root = namespace.get("result", namespace.get("v"))
    root.backward()
    used = tracemalloc.get_traced_memory()[0] - base - sys.getsizeof(namespace)
    tracemalloc.stop()
    gc.enable()
    return used / nodes


def max_depth(V, limit: int = 100_000) -> int | str:
    """The deepest tanh chain V can differentiate, found by bisection (up to `limit`)."""
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        x = V(0.5)
        for _ in range(mid):
            x = (x * 0.9 + 0.1).tanh()
        try:
            x.backward()
            lo = mid
        except RecursionError:
            hi = mid - 1
    return f">= {limit:,}" if lo == limit else f"{lo:,}"


def main() -> None:
    MValue = _micrograd_value()
    depths = f"deepest tanh chain: ours {max_depth(Value)}, micrograd {max_depth(MValue)}"
    # micrograd's recursive sort needs this to reach the bottom of the 100,000-op expression;
    # Python-to-Python calls use no C stack, so it is safe here.
    sys.setrecursionlimit(1_000_000)
    workloads = [
        ("random expression", random_expression_code(1_000), 15),
        ("random expression", random_expression_code(100_000), 3),
        ("tanh chain, depth 300", chain_code(300), 15),
        ("worked example (x=-4, y=2)", WORKED_EXAMPLE, 101),
    ]
    print(
        f"{'workload':28} {'nodes':>7} {'ns/node ours':>13} {'ns/node micrograd':>18} "
        f"{'ratio':>6} {'B/node ours':>12} {'B/node micrograd':>17}"
    )
    for name, code, runs in workloads:
        run = compile_workload(code)
        nodes = count_nodes(run(Value))
        ours, theirs = [], []
        for _ in range(runs):  # alternate, so both see the same machine load
            ours += time_block(run, Value)
            theirs += time_block(run, MValue)
        t_ours = statistics.median(ours) / nodes * 1e9
        t_theirs = statistics.median(theirs) / nodes * 1e9
        b_ours, b_theirs = bytes_per_node(code, Value, nodes), bytes_per_node(code, MValue, nodes)
        print(
            f"{name:28} {nodes:>7,} {t_ours:>13.0f} {t_theirs:>18.0f} {t_theirs / t_ours:>5.1f}x "
            f"{b_ours:>12.0f} {b_theirs:>17.0f}"
        )
        report.ratio(
            "engine, ns per node", f"{name}, {nodes:,} nodes", t_ours, "micrograd", t_theirs
        )
    print(depths)


if __name__ == "__main__":
    main()
