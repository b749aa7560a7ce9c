"""The engine: worked examples, every op against finite differences, deep graphs, semantics."""

from __future__ import annotations

import ast
import gc
import math
import random
from graphlib import TopologicalSorter
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nanograd_cli import engine
from nanograd_cli._ops import CONST, FUNCTIONS, OPS
from nanograd_cli.engine import Value, apply


def central_difference(f, x: float, h: float = 1e-6) -> float:
    return (f(x + h) - f(x - h)) / (2 * h)


def test_micrograd_readme_example():
    a, b = Value(2.0), Value(3.0)
    c = a * b + a.tanh()
    c.backward()
    assert c.data == pytest.approx(6 + math.tanh(2), rel=1e-15)
    assert a.grad == pytest.approx(3.0706508248531645, rel=1e-15)  # b + 1 - tanh(2)**2
    assert b.grad == 2.0


def test_neuron_example():
    x1, x2, w1, w2, b = Value(0.5), Value(-1.0), Value(1.0), Value(1.0), Value(0.1)
    out = (x1 * w1 + x2 * w2 + b).tanh()
    out.backward()
    assert w1.grad == pytest.approx(0.4278194, abs=1e-7)
    assert w1.grad == pytest.approx((1 - math.tanh(-0.4) ** 2) * 0.5, rel=1e-15)


def test_larger_worked_example():
    x, y = Value(-4.0), Value(2.0)
    q = x + y
    r = x * y + y**3
    q += q + 1
    q += 1 + q + (-x)
    r += r * 2 + (y + x).sigmoid()
    r += 3 * r + (y - x).sigmoid()
    s = q - r
    t = s**2
    u = t / 2.0
    v = u + 10.0 / t
    v.backward()
    assert round(v.data, 4) == 4.6945
    assert round(x.grad, 4) == 24.7180
    assert round(y.grad, 4) == 106.6648


def test_squared_linear_model():
    w, x, b = Value(3.0), Value(2.0), Value(1.0)
    loss = (w * x + b) ** 2
    loss.backward()
    assert (w.grad, b.grad, x.grad) == (28.0, 14.0, 42.0)


def test_shared_subgraph_sums_both_paths():
    a = Value(3.0)
    b = a + a
    c = b * b
    c.backward()
    assert b.grad == 12.0
    assert a.grad == 24.0
    x = Value(5.0)
    sq = x * x
    assert sq.children == (x, x)
    sq.backward()
    assert x.grad == 10.0


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(n for n, op in FUNCTIONS.items() if op.arity == 1))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_function_gradient_matches_finite_difference(name, data):
    op = FUNCTIONS[name]
    lo, hi = op.domain
    x0 = data.draw(st.floats(lo, hi))
    if name in ("relu", "abs", "step", "sign"):
        assume(abs(x0) > 1e-4)  # the kink is tested exactly below
    x = Value(x0)
    y = getattr(x, name)()
    y.backward()
    numeric = central_difference(op.forward, x0)
    assert y.data == op.forward(x0)
    assert x.grad == pytest.approx(numeric, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("name", ["+", "-", "*", "/", "**", "powlog"])
@settings(max_examples=80, deadline=None)
@given(a0=st.floats(0.2, 3.0), b0=st.floats(0.2, 3.0), sign=st.sampled_from([1.0, -1.0]))
def test_binary_gradients_match_finite_differences(name, a0, b0, sign):
    if name not in ("**", "powlog"):
        a0 *= sign
    op = OPS[name]
    a, b = Value(a0), Value(b0)
    y = apply(op, a, b)
    y.backward()
    assert y.data == op.forward(a0, b0)
    assert a.grad == pytest.approx(central_difference(lambda t: op.forward(t, b0), a0), rel=1e-5)
    assert b.grad == pytest.approx(central_difference(lambda t: op.forward(a0, t), b0), rel=1e-5)


def test_operators_agree_with_the_ops_table():
    """The operators are written out for speed; they must compute what the table says."""
    a, b = Value(1.7), Value(-0.6)
    pairs = {"+": (a + b, b + a), "-": (a - b, b - a), "*": (a * b, b * a), "/": (a / b, b / a)}
    for name, (ab, ba) in pairs.items():
        assert ab.data == OPS[name].forward(1.7, -0.6)
        assert ba.data == OPS[name].forward(-0.6, 1.7)
        assert ab.op is OPS[name]
    assert (a**b).data == OPS["**"].forward(1.7, -0.6)
    assert (-a).data == OPS["neg"].forward(1.7)
    for op in OPS.values():
        args = (Value(0.8), Value(1.3), Value(-0.4))[: op.arity]
        node = apply(op, *args)
        node.backward()
        local = op.derivative(*(v.data for v in args), node.data)
        grads = tuple(v.grad for v in args)
        pairs = zip(grads, local, strict=True)
        assert all(g == d or (math.isnan(g) and math.isnan(d)) for g, d in pairs), op


def test_numbers_on_either_side():
    x = Value(2.0)
    assert (2 * x).data == 4.0
    assert (1 / x).data == 0.5
    assert (2**x).data == 4.0
    assert (3 - x).data == 1.0
    assert (1 + x).data == 3.0
    e = 2**x
    e.backward()
    assert x.grad == pytest.approx(4 * math.log(2), rel=1e-15)
    assert (2 * x).children[0].op is CONST
    with pytest.raises(TypeError):
        x + "1"


def test_power_differentiable_in_both():
    x, y = Value(2.0), Value(3.0)
    z = x**y
    z.backward()
    assert x.grad == 12.0
    assert y.grad == pytest.approx(8 * math.log(2), rel=1e-15)


def test_kinks_follow_pytorch():
    for name in ("relu", "abs"):
        x = Value(0.0)
        getattr(x, name)().backward()
        assert x.grad == 0.0
    x = Value(-2.0)
    abs(x).backward()
    assert x.grad == -1.0


def test_exact_limits_without_overflow():
    assert Value(1000.0).tanh().data == 1.0
    assert Value(-1000.0).tanh().data == -1.0
    assert Value(1000.0).sigmoid().data == 1.0
    assert Value(-1000.0).sigmoid().data == 0.0
    assert Value(1000.0).softplus().data == 1000.0
    for big in (Value(1000.0).sigmoid(), Value(-1000.0).sigmoid(), Value(1000.0).tanh()):
        big.backward()  # no OverflowError
    near_overflow = Value(356.0)  # cosh(356)**2 overflows, sech(356)**2 = 4exp(-712) does not
    near_overflow.tanh().backward()
    assert math.isclose(near_overflow.grad, 4 * math.exp(-712), rel_tol=1e-12)


@pytest.mark.parametrize("x", [5.0, 20.0, 40.0, 300.0])
def test_saturated_derivatives_keep_their_digits(x):
    """1 - tanh**2 and s*(1 - s) cancel to 0 here; the true derivatives are tiny, not 0."""
    t, s = Value(x), Value(x)
    t.tanh().backward()
    s.sigmoid().backward()
    e = math.exp(-x)
    assert math.isclose(t.grad, 4 * e * e / (1 + e * e) ** 2, rel_tol=1e-14)
    assert math.isclose(s.grad, e / (1 + e) ** 2, rel_tol=1e-14)


def test_ieee_results_instead_of_exceptions():
    assert math.isnan(Value(-1.0).log().data)
    assert Value(0.0).log().data == -math.inf
    assert math.isnan(Value(-1.0).sqrt().data)
    assert (Value(1.0) / 0).data == math.inf
    assert (Value(-1.0) / 0).data == -math.inf
    assert math.isnan((Value(0.0) / 0).data)
    assert Value(1000.0).exp().data == math.inf
    assert math.isnan((Value(-8.0) ** (1 / 3)).data)
    assert (Value(0.0) ** -1).data == math.inf
    assert (Value(10.0) ** 400).data == math.inf
    assert (Value(-10.0) ** 401).data == -math.inf
    assert Value(1000.0).cosh().data == math.inf
    assert Value(-1000.0).sinh().data == -math.inf


def test_backward_twice_accumulates_on_leaves_only():
    x, y = Value(2.0), Value(3.0)
    m = x * y
    out = m + x
    out.backward()
    assert (x.grad, y.grad, m.grad) == (4.0, 2.0, 1.0)
    out.backward()
    assert (x.grad, y.grad, m.grad) == (8.0, 4.0, 1.0)
    out.zero_grad()
    assert (x.grad, y.grad, m.grad, out.grad) == (0.0, 0.0, 0.0, 0.0)
    out.backward()
    assert (x.grad, y.grad) == (4.0, 2.0)


def test_leaf_backward():
    x = Value(2.0)
    x.backward()
    assert x.grad == 1.0


@pytest.mark.slow
def test_million_node_chain_and_deep_nesting():
    x = Value(0.5)
    v = x
    for _ in range(1_000_000):
        v = v + 1.0
    v.backward()
    assert x.grad == 1.0
    assert v.data == 1_000_000.5
    del v
    gc.collect()  # dropping it must not overflow the C stack either
    y = Value(0.3)
    w = y
    for _ in range(100_000):
        w = (w * 0.9 + 0.1).tanh()
    w.backward()
    expected = 1.0
    t = 0.3
    for _ in range(100_000):
        t2 = math.tanh(t * 0.9 + 0.1)
        expected *= (1 - t2 * t2) * 0.9
        t = t2
    assert w.data == t
    assert y.grad == pytest.approx(expected, rel=1e-9)
    assert sum(1 for _ in w.walk()) == 500_001  # the input and 5 nodes a step, constants included


def _random_graph(seed: int):
    rng = random.Random(seed)
    inputs = [Value(rng.uniform(0.5, 2.0)) for _ in range(3)]
    nodes = list(inputs)
    for _ in range(60):
        a, b = rng.choice(nodes), rng.choice(nodes)
        kind = rng.randrange(6)
        if kind == 0:
            nodes.append(a + b)
        elif kind == 1:
            nodes.append(a * b)
        elif kind == 2:
            nodes.append(a - b)
        elif kind == 3:
            nodes.append(a.tanh())
        elif kind == 4:
            nodes.append(a.sigmoid() * 2.0)
        else:
            nodes.append((a * a + 1.0).log())
    root = nodes[-1]
    for n in nodes[-10:-1]:
        root = root + n
    return inputs, root


def test_results_are_bit_for_bit_repeatable():
    runs = []
    for _ in range(3):
        inputs, root = _random_graph(7)
        root.backward()
        runs.append((root.data, [x.grad for x in inputs]))
    assert runs[0] == runs[1] == runs[2]


TORCH_OPS = {"+": "add", "-": "sub", "*": "mul"}


@pytest.mark.parametrize("seed", range(20))
def test_random_graphs_agree_with_pytorch(seed):
    torch = pytest.importorskip("torch")
    inputs, root = _random_graph(seed)
    root.backward()
    # Replay the same graph in PyTorch (float64), operands before the nodes that use them.
    tensors = {}
    for node in TopologicalSorter({n: n.children for n in root.walk()}).static_order():
        if not node.children:
            tensors[node] = torch.tensor(node.data, dtype=torch.float64, requires_grad=True)
        else:
            name = TORCH_OPS.get(node.op.name, node.op.name)
            tensors[node] = getattr(torch, name)(*(tensors[c] for c in node.children))
    tensors[root].backward()
    assert root.data == pytest.approx(tensors[root].item(), rel=1e-12)
    for x in inputs:
        expected = tensors[x].grad.item() if tensors[x].grad is not None else 0.0
        assert x.grad == pytest.approx(expected, rel=1e-9, abs=1e-12)


ANY_FLOAT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 1e308, -1e308, 5e-324]),
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(a=ANY_FLOAT, b=ANY_FLOAT, c=ANY_FLOAT)
def test_no_op_raises_on_any_float(a, b, c):
    """IEEE 754 in, IEEE 754 out: nan and inf instead of exceptions, for every op."""
    for op in OPS.values():
        args = (a, b, c)[: op.arity]
        y = op.forward(*args)
        assert isinstance(y, float)
        local = op.derivative(*args, y)
        assert len(local) == op.arity and all(isinstance(d, float) for d in local)


def test_the_methods_declared_for_type_checkers_are_those_made_from_the_table():
    """engine.py declares, for type checkers, the operators and functions it makes from the
    table of ops, each function with the doc line of its row (what an editor shows of it): a
    new op gets its declaration, or a user's type checker would not know it."""
    tree = ast.parse(Path(engine.__file__).read_text())
    (value,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Value"]
    (block,) = [
        n for n in value.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n)
    ]
    declared = {f.name: f for f in block.body if isinstance(f, ast.FunctionDef)}
    made = {
        name: method
        for name, method in vars(Value).items()
        if getattr(method, "__qualname__", "").startswith(("_binary.", "_unary."))
    }

    def row_doc(name: str) -> str:  # the method's doc is the row's, then its derivative
        return made[name].__doc__.rsplit("; derivative ", 1)[0]

    missing = "".join(
        f"        def {name}(self) -> Value: ...\n"
        if name.startswith("__")
        else f'        def {name}(self) -> Value:\n            """{row_doc(name)}"""\n'
        for name in sorted(set(made) - set(declared))
    )
    assert not missing, f"engine.py declares no method made from the table; add:\n{missing}"
    assert set(declared) == set(made)
    for name, function in declared.items():
        if not name.startswith("__"):
            written = " ".join((ast.get_docstring(function) or "").split())
            assert written == " ".join(row_doc(name).split()), name
