"""Random programs on arrays, each with the same computation written for an array library
(PyTorch or JAX, through the few functions `xp` names: tanh sin logsumexp softmax norm
outer), for the tests that compare with those libraries."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import strategies as st


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
    options.append(
        st.tuples(same, same).map(
            lambda ps: (
                f"({ps[0][0]} - {ps[1][0]})",
                lambda e, xp, f=ps[0][1], g=ps[1][1]: f(e, xp) - g(e, xp),
            )
        )
    )
    options.append(
        st.tuples(same, number).map(
            lambda ps: (
                f"({ps[0][0]} * {ps[1][0]})",
                lambda e, xp, f=ps[0][1], g=ps[1][1]: f(e, xp) * g(e, xp),
            )
        )
    )
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
        options.append(
            st.tuples(vector, vector).map(
                lambda ps: (
                    f"({ps[0][0]} @ {ps[1][0]})",
                    lambda e, xp, f=ps[0][1], g=ps[1][1]: f(e, xp) @ g(e, xp),
                )
            )
        )
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
                st.tuples(matrix, across).map(
                    lambda ps: (
                        f"({ps[0][0]} @ {ps[1][0]})",
                        lambda e, xp, f=ps[0][1], g=ps[1][1]: f(e, xp) @ g(e, xp),
                    )
                )
            )
            options.append(
                matrix.map(lambda p: (f"sum({p[0]}, 1)", lambda e, xp, f=p[1]: f(e, xp).sum(1)))
            )
        else:
            options.append(
                st.tuples(matrix, across).map(
                    lambda ps: (
                        f"({ps[0][0]}.T @ {ps[1][0]})",
                        lambda e, xp, f=ps[0][1], g=ps[1][1]: f(e, xp).T @ g(e, xp),
                    )
                )
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
            st.tuples(rows, columns).map(
                lambda ps: (
                    f"outer({ps[0][0]}, {ps[1][0]})",
                    lambda e, xp, f=ps[0][1], g=ps[1][1]: xp.outer(f(e, xp), g(e, xp)),
                )
            )
        )
        options.append(
            st.tuples(same, columns).map(
                lambda ps: (
                    f"({ps[0][0]} + {ps[1][0]})",
                    lambda e, xp, f=ps[0][1], g=ps[1][1]: f(e, xp) + g(e, xp),
                )
            )
        )
    return st.one_of(options)
