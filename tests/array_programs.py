"""Random programs on arrays, each with the same computation written for an array library
(PyTorch or JAX, through the few functions `xp` names: tanh sin logsumexp softmax norm
outer), for the tests that compare with those libraries."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import strategies as st

import nanograd_cli as ng


def torch_library() -> SimpleNamespace:
    import torch

    return SimpleNamespace(
        tanh=torch.tanh,
        sin=torch.sin,
        logsumexp=lambda x: torch.logsumexp(x.reshape(-1), 0),
        softmax=torch.softmax,
        norm=torch.linalg.norm,
        outer=torch.outer,
    )


def jax_library() -> SimpleNamespace:
    import jax
    import jax.numpy as jnp

    return SimpleNamespace(
        tanh=jnp.tanh,
        sin=jnp.sin,
        logsumexp=jax.nn.logsumexp,
        softmax=lambda x, axis: jax.nn.softmax(x, axis=axis),
        norm=jnp.linalg.norm,
        outer=jnp.outer,
    )


def values_at(source: str, m: int, n: int, seed: int) -> dict:
    """Random values of the inputs `source` reads: A of shape (m, n), v (n,), w (m,) and the
    number s."""
    rng = np.random.default_rng(seed)
    values = {"A": rng.normal(size=(m, n)), "v": rng.normal(size=n), "w": rng.normal(size=m)}
    values["s"] = float(rng.normal())
    return {name: values[name] for name in ng.parse(source).inputs}


def _joined(a: st.SearchStrategy, b: st.SearchStrategy, write, compute) -> st.SearchStrategy:
    """Programs made of one of `a` and one of `b`: the source `write` makes of their
    sources, computing what `compute` makes of their values (and the library)."""
    return st.tuples(a, b).map(
        lambda ps: (
            write(ps[0][0], ps[1][0]),
            lambda e, xp, f=ps[0][1], g=ps[1][1]: compute(f(e, xp), g(e, xp), xp),
        )
    )


def programs(kind: tuple, depth: int) -> st.SearchStrategy:
    """(source, function of the inputs and an array library `xp`) pairs whose result has
    `kind`: ("S",) a number, ("V", k) a vector of length "m" or "n", ("M",) the shape of A."""
    leaf = {
        ("S",): st.just(("s", lambda e, xp: e["s"])),
        ("V", "n"): st.just(("v", lambda e, xp: e["v"])),
        ("V", "m"): st.just(("w", lambda e, xp: e["w"])),
        ("M",): st.just(("A", lambda e, xp: e["A"])),
    }[kind]
    if depth == 0:
        return leaf
    same = programs(kind, depth - 1)
    number = programs(("S",), depth - 1)
    options = [leaf]
    options.append(same.map(lambda p: (f"tanh({p[0]})", lambda e, xp, f=p[1]: xp.tanh(f(e, xp)))))
    options.append(
        same.map(
            lambda p: (f"(sin({p[0]})*{p[0]})", lambda e, xp, f=p[1]: xp.sin(f(e, xp)) * f(e, xp))
        )
    )
    options.append(_joined(same, same, lambda p, q: f"({p} - {q})", lambda f, g, xp: f - g))
    options.append(_joined(same, number, lambda p, q: f"({p} * {q})", lambda f, g, xp: f * g))
    if kind == ("S",):
        for arg in (("V", "n"), ("V", "m"), ("M",)):
            inner = programs(arg, depth - 1)
            options.append(
                inner.map(lambda p: (f"sum({p[0]})", lambda e, xp, f=p[1]: f(e, xp).sum()))
            )
            options.append(
                inner.map(lambda p: (f"mean({p[0]})", lambda e, xp, f=p[1]: f(e, xp).mean()))
            )
            options.append(
                inner.map(
                    lambda p: (
                        f"logsumexp({p[0]})",
                        lambda e, xp, f=p[1]: xp.logsumexp(f(e, xp)),
                    )
                )
            )
        vector = programs(("V", "n"), depth - 1)
        options.append(_joined(vector, vector, lambda p, q: f"({p} @ {q})", lambda f, g, xp: f @ g))
        options.append(
            vector.map(lambda p: (f"norm({p[0]} + 3)", lambda e, xp, f=p[1]: xp.norm(f(e, xp) + 3)))
        )
    elif kind[0] == "V":
        k = kind[1]
        other = "m" if k == "n" else "n"
        matrix = programs(("M",), depth - 1)
        across = programs(("V", other), depth - 1)
        if k == "m":
            options.append(
                _joined(matrix, across, lambda p, q: f"({p} @ {q})", lambda f, g, xp: f @ g)
            )
            options.append(
                matrix.map(lambda p: (f"sum({p[0]}, 1)", lambda e, xp, f=p[1]: f(e, xp).sum(1)))
            )
        else:
            options.append(
                _joined(matrix, across, lambda p, q: f"({p}.T @ {q})", lambda f, g, xp: f.T @ g)
            )
            options.append(
                matrix.map(
                    lambda p: (
                        f"softmax({p[0]}, 0)[0]",
                        lambda e, xp, f=p[1]: xp.softmax(f(e, xp), 0)[0],
                    )
                )
            )
        options.append(
            same.map(lambda p: (f"softmax({p[0]})", lambda e, xp, f=p[1]: xp.softmax(f(e, xp), 0)))
        )
    else:
        rows, columns = programs(("V", "m"), depth - 1), programs(("V", "n"), depth - 1)
        options.append(
            _joined(rows, columns, lambda p, q: f"outer({p}, {q})", lambda f, g, xp: xp.outer(f, g))
        )
        options.append(_joined(same, columns, lambda p, q: f"({p} + {q})", lambda f, g, xp: f + g))
    return st.one_of(options)
