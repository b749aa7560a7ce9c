"""A program compiled to a flat tape and run on NumPy arrays: value and gradients at many points.

No Value per node. Compiling folds every instruction that no input reaches into a constant
(with the ops table, as the engine computes it) and binds each other instruction to a step of
`vector_ops`, which returns its value together with its local derivatives. A run is then one
step per instruction forward, and only multiplications and additions backward. Rows run a
block at a time (BLOCK, fewer for a long source) through arrays allocated once, so that they
stay in the CPU's cache and no large temporary is allocated and freed per run.

This module is imported for `grad --points` and for the points `diff` probes its notes at.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from itertools import count
from typing import cast

import numpy as np

from ._ops import WHERE
from ._program import Program
from ._vector_ops import MINUS_ONE, ONE, Arrays, Step, step_function

# Rows per run: 16,384 float64s (128 kB) per array. Of 8,192 to 65,536 rows, this measured
# fastest on a 2-core machine with 2 MB of L2 cache per core: the Python work per row shrinks
# as blocks grow, and the arrays of a run still fit in the cache (the worked example took
# 0.64x hand-written NumPy's time in 16,384-row blocks, 0.79x in 32,768-row blocks).
BLOCK = 16384

# A long source runs fewer rows at a time, so that the arrays of a run (up to 4 per step, and
# an adjoint per step) stay within this many bytes. A 7,000-step source on 65,536 rows took
# 4 GB and 18.5 s in 32,768-row blocks; within 256 MB, 218 MB and 7.8 s.
WORKSPACE_BYTES = 256 << 20
ARRAYS_PER_STEP = 5
MIN_BLOCK = 64

_PRODUCT = -1  # the key of the array that holds a contribution before it is added


class Tape:
    """The instructions the result depends on, in order, each bound to its step."""

    def __init__(self, program: Program, wrt: Collection[str] | None = None):
        """The tape of `program`, whose runs give the gradients with respect to the inputs
        `wrt` (every input by default; 0.0 for the others)."""
        self.program = program = program.pruned()
        self.constants: dict[int, float] = {}  # node -> its value, for nodes no input reaches
        self.steps: list[tuple[int, tuple[int, ...], Step]] = []
        self.input_slots = program.input_slots
        self.selecting: set[int] = set()  # the steps that are a `where`
        # the nodes that an input of `wrt` reaches: the only ones a gradient flows back to
        self.differentiated: set[int] = set()
        nodes = count()
        made: dict[tuple, int] = {}  # (op, args) -> the step's node: each computed once

        def input(name: str) -> int:
            node = next(nodes)
            if wrt is None or name in wrt:
                self.differentiated.add(node)
            return node

        def apply(op, *args: int) -> int:
            node = next(nodes)
            constants = tuple(self.constants.get(a) for a in args)
            if None in constants:
                same = made.setdefault((op, args), node)
                if same != node:  # x**n twice in the source: one step, its adjoint summed
                    return same
                self.steps.append((node, args, step_function(op, constants)))
                if not self.differentiated.isdisjoint(args):
                    self.differentiated.add(node)
                if op is WHERE:
                    self.selecting.add(node)
            else:
                self.constants[node] = op.forward(*constants)
            return node

        def const(value: float) -> int:
            node = next(nodes)
            self.constants[node] = value
            return node

        program.interpret(input=input, const=const, apply=apply)
        self.roots = list(program.results.values())
        self._step_of = {i: k for k, (i, _, _) in enumerate(self.steps)}
        self._workspaces: dict[int, tuple[list[Arrays], Arrays]] = {}
        per_row = 8 * ARRAYS_PER_STEP * max(1, len(self.steps))
        self.block = max(MIN_BLOCK, min(BLOCK, WORKSPACE_BYTES // per_row))

    def run(
        self,
        columns: Mapping[str, np.ndarray],
        length: int,
        into: list[tuple[np.ndarray, dict[str, np.ndarray]]] | None = None,
        gradients: bool = True,
    ) -> Iterator[tuple[Column, dict[str, Column]]]:
        """Per output (the result, for a program with one), its value and its gradient with
        respect to every input, on 1-D arrays of `length` rows (one per input): one pass
        forward, then one back per output. A value or gradient the same on every row may come
        as a float; the arrays yielded are reused by the next output and the next run.

        `into` may give, per output, arrays of `length` rows for its value and its gradients:
        the step that makes the value, and the last addition or product that makes each
        gradient, then write there, and the caller copies only what comes as another array or
        a float (an input's value, a gradient passed on unchanged, a constant).

        With `gradients` False, the pass forward alone: each output's value, and no
        gradients (an empty dict)."""
        arrays, workspace = self._workspace(length)
        steps_out: list[Arrays] | list[Out] = arrays
        adjoint_out: Out = workspace
        if into:  # a step writes its value into out[0] (vector_ops), so into the output's
            replaced: list[Out] = list(arrays)
            for root, (value, _) in zip(self.roots, into, strict=True):
                k = self._step_of.get(root)
                if k is not None and type(replaced[k]) is not _Into:  # (two outputs, one node)
                    replaced[k] = _Into(arrays[k], {0: value})
            steps_out = replaced
        data: dict[int, Column] = dict(self.constants)
        slots = self.input_slots
        for name, column in columns.items():
            data[slots[name]] = column
        derivatives = []
        for (i, args, step), out in zip(self.steps, steps_out, strict=True):
            made, local = step(out, *(data[a] for a in args))
            data[i] = cast(Column, made)  # (a step's value: an array, or a float)
            derivatives.append(local)
        if not gradients:
            for root in self.roots:
                yield data[root], {}
            return
        for k, root in enumerate(self.roots):
            if into:  # the gradients summed straight into the caller's arrays
                adjoint_out = _Into(workspace, {slots[n]: out for n, out in into[k][1].items()})
            adjoint: dict[int, Column]
            if self.selecting:
                adjoint = self._selecting_backward(root, derivatives, adjoint_out)
                yield data[root], {n: adjoint.get(slots[n], 0.0) for n in self.program.inputs}
                continue
            adjoint = {root: ONE}
            differentiated = self.differentiated
            for (i, args, _), local in zip(
                reversed(self.steps), reversed(derivatives), strict=True
            ):
                g = adjoint.pop(i, None)
                if g is None:
                    continue
                for a, d in zip(args, local, strict=True):
                    if d is not None and a in differentiated:
                        _accumulate(adjoint, a, g, d, adjoint_out)
            yield data[root], {name: adjoint.get(slots[name], 0.0) for name in self.program.inputs}

    def _selecting_backward(self, root: int, derivatives: list, out: Out) -> dict[int, Column]:
        """The backward pass of a tape with a `where`: as the engine's, each step passes its
        gradient on only in the rows where it is live (the result depends on it through the
        branches taken), and a `where` only to the argument it takes, per row (its local
        derivative is 1 there, 0 in the other). So a branch not taken adds 0 in its rows, not
        0 times its derivatives (nan where it is nan). `live` holds True (every row) or a mask."""
        adjoint: dict[int, Column] = {root: ONE}
        live: dict[int, bool | np.ndarray] = {root: True}
        for (i, args, _), local in zip(reversed(self.steps), reversed(derivatives), strict=True):
            g = adjoint.pop(i, None)
            alive = live.pop(i, False)
            if g is None:
                continue
            selecting = i in self.selecting
            for a, d in zip(args, local, strict=True):
                if d is None or a not in self.differentiated:
                    continue
                rows = alive
                if selecting:  # the rows where this argument is the one taken
                    taken = d != 0.0
                    rows = taken if alive is True else np.logical_and(alive, taken)
                if rows is True:
                    _accumulate(adjoint, a, g, d, out)
                elif np.any(rows):
                    _accumulate_rows(adjoint, a, g, d, rows, out)
                else:
                    continue
                held = live.get(a, False)
                live[a] = True if held is True or rows is True else np.logical_or(held, rows)
        return adjoint

    def _workspace(self, length: int) -> tuple[list[Arrays], Arrays]:
        """Each step's arrays and the adjoints' arrays for runs of `length` rows."""
        workspace = self._workspaces.get(length)
        if workspace is None:
            if len(self._workspaces) > 2:  # only BLOCK and a last, shorter block recur
                self._workspaces.clear()
            workspace = ([Arrays(length) for _ in self.steps], Arrays(length))
            self._workspaces[length] = workspace
        return workspace


class _Into(dict):
    """A workspace's arrays, some of them the caller's (`into`), for one run."""

    def __init__(self, workspace: Arrays, replaced: dict):
        super().__init__(replaced)
        self.workspace = workspace

    def __missing__(self, key: object) -> np.ndarray:
        return self.workspace[key]


# A node's value, or a gradient: an array of the run's rows, or a float the same on every row.
Column = float | np.ndarray
# The arrays a step or a backward pass writes into.
Out = Arrays | _Into


def _accumulate(adjoint: dict[int, Column], a: int, g, d, out: Out) -> None:
    """adjoint[a] += g * d, computing into `out[a]` (a's own array) or `out[_PRODUCT]`."""
    held = adjoint.get(a)
    if g is ONE or d is ONE:
        c = d if g is ONE else g  # passed on: an array owned elsewhere, read only
    elif not isinstance(g, np.ndarray) and not isinstance(d, np.ndarray):
        c = -g if d is MINUS_ONE else g * d
    else:
        target = out[a] if held is None else out[_PRODUCT]
        c = np.negative(g, out=target) if d is MINUS_ONE else np.multiply(g, d, out=target)
    if held is None:
        adjoint[a] = c
    elif isinstance(held, np.ndarray) or isinstance(c, np.ndarray):
        adjoint[a] = np.add(held, c, out=out[a])
    else:
        adjoint[a] = held + c


def _accumulate_rows(adjoint: dict[int, Column], a: int, g, d, rows, out: Out) -> None:
    """adjoint[a] += g * d in `rows` (a mask, or a bool) only; 0 is added in the others."""
    held = adjoint.get(a)
    target = out[a] if held is None else out[_PRODUCT]
    np.multiply(g, d, out=target)
    np.copyto(target, 0.0, where=np.logical_not(rows))
    adjoint[a] = target if held is None else np.add(held, target, out=out[a])


def batch_gradients(
    program: Program, columns: Mapping[str, object], tape: Tape | None = None
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Value and gradients at many points: `columns` maps each input to a 1-D array (or a
    float, the same on every row)."""
    return batch_jacobian(program, columns, tape)[0]


def batch_values(
    program: Program, columns: Mapping[str, object], tape: Tape | None = None
) -> np.ndarray:
    """The value at many points, given as for `batch_gradients`: the same numbers as its
    value, from the pass forward alone."""
    tape = tape or Tape(program)
    arrays, n = _rows(columns)
    values = np.empty(n)
    with np.errstate(all="ignore"):
        for start in range(0, n, tape.block):
            rows = slice(start, start + tape.block)
            length = min(tape.block, n - start)
            computed = tape.run({k: a[rows] for k, a in arrays.items()}, length, gradients=False)
            values[rows] = next(computed)[0]
    return values


def _rows(columns: Mapping[str, object]) -> tuple[dict[str, np.ndarray], int]:
    """The columns as float arrays of one length (a float repeated on every row), and it."""
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in columns.items()}
    n = max((a.size for a in arrays.values() if a.ndim), default=1)
    return {k: np.broadcast_to(a, (n,)) for k, a in arrays.items()}, n


def batch_jacobian(
    program: Program, columns: Mapping[str, object], tape: Tape | None = None
) -> list[tuple[np.ndarray, dict[str, np.ndarray]]]:
    """Per output (the result alone, for a program with one) its value and gradients at many
    points, given as for `batch_gradients`. Runs `tape.block` rows at a time into
    preallocated outputs."""
    tape = tape or Tape(program)
    arrays, n = _rows(columns)
    results = [(np.empty(n), {name: np.empty(n) for name in program.inputs}) for _ in tape.roots]
    with np.errstate(all="ignore"):
        for start in range(0, n, tape.block):
            rows = slice(start, start + tape.block)
            length = min(tape.block, n - start)
            into = [(v[rows], {name: g[rows] for name, g in gs.items()}) for v, gs in results]
            computed = tape.run({k: a[rows] for k, a in arrays.items()}, length, into)
            for (value, gradients), (v, g) in zip(into, computed, strict=True):
                if v is not value:  # else computed there
                    value[...] = v
                for name, out in gradients.items():
                    if g[name] is not out:
                        out[...] = g[name]
                    # a zero gradient is +0, as the engine's, which sums from 0 (a product
                    # of -0 passed on alone was -0.0 here, 0.0 in grad)
                    np.add(out, 0.0, out=out)
    return results
