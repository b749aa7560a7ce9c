"""Arrays against JAX (float64): a second reference, beside PyTorch, for values and
gradients of array programs, fixed and random."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nanograd_cli as ng

from .array_programs import jax_library, programs, values_at

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

# Each program, the shapes of its inputs, and the same computation in JAX.
PROGRAMS = [
    (
        "norm(A@x - b)**2",
        {"A": (3, 2), "x": (2,), "b": (3,)},
        lambda A, x, b: jnp.sum((A @ x - b) ** 2),
    ),
    ("logsumexp(z) - z[1]", {"z": (4,)}, lambda z: jax.nn.logsumexp(z) - z[1]),
    (
        "sum(tanh(W@x + c))",
        {"W": (4, 3), "x": (3,), "c": (4,)},
        lambda W, x, c: jnp.tanh(W @ x + c).sum(),
    ),
    ("x.T@A@x", {"x": (3,), "A": (3, 3)}, lambda x, A: x @ A @ x),
    ("sum(softmax(A, 1)[:, 0])", {"A": (3, 4)}, lambda A: jax.nn.softmax(A, axis=1)[:, 0].sum()),
    ("prod(x[::2]) + max(x)", {"x": (5,)}, lambda x: jnp.prod(x[::2]) + jnp.max(x)),
    (
        "mean(outer(a, b) * A, 1) @ a",
        {"a": (2,), "b": (3,), "A": (2, 3)},
        lambda a, b, A: jnp.mean(jnp.outer(a, b) * A, 1) @ a,
    ),
    (
        "sum(norm(A, 0)) + dot(x, x)",
        {"A": (3, 2), "x": (2,)},
        lambda A, x: jnp.linalg.norm(A, axis=0).sum() + x @ x,
    ),
]


def _values(shapes: dict, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {name: rng.normal(size=shape) for name, shape in shapes.items()}


@pytest.mark.parametrize(("source", "shapes", "reference"), PROGRAMS, ids=[p[0] for p in PROGRAMS])
@pytest.mark.parametrize("seed", [1, 2])
def test_values_and_gradients_are_jaxs(source, shapes, reference, seed):
    values = _values(shapes, seed)
    result = ng.grad(source, **values)
    arguments = tuple(jnp.asarray(v) for v in values.values())
    value, gradients = jax.value_and_grad(reference, argnums=tuple(range(len(values))))(*arguments)
    assert result.value == pytest.approx(float(value), rel=1e-12, abs=1e-12)
    for name, expected in zip(values, gradients, strict=True):
        np.testing.assert_allclose(
            result.gradients[name], np.asarray(expected), rtol=1e-11, atol=1e-12
        )


def test_a_layers_jacobian_is_jaxs():
    values = _values({"W": (2, 3), "x": (3,), "c": (2,)}, 4)
    result = ng.jacobian("tanh(W @ x + c)", **values)
    blocks = jax.jacobian(lambda W, x, c: jnp.tanh(W @ x + c), argnums=(0, 1, 2))(
        *(jnp.asarray(v) for v in values.values())
    )
    for name, block in zip(values, blocks, strict=True):
        np.testing.assert_allclose(
            result.jacobian["result"][name], np.asarray(block), rtol=1e-11, atol=1e-12
        )


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(programs(("S",), 3), st.integers(1, 3), st.integers(1, 3), st.integers(0, 2**32 - 1))
def test_random_array_programs_agree_with_jax(program, m, n, seed):
    source, reference = program
    given_ = values_at(source, m, n, seed)
    result = ng.grad(source, **given_)
    library = jax_library()
    value, gradients = jax.value_and_grad(lambda e: reference(e, library))(
        {name: jnp.asarray(v) for name, v in given_.items()}
    )
    assert result.value == pytest.approx(float(value), rel=1e-9, abs=1e-12), source
    for name in given_:
        np.testing.assert_allclose(
            result.gradients[name],
            np.asarray(gradients[name]),
            rtol=1e-8,
            atol=1e-11,
            err_msg=source,
        )
