"""The instructions a program is made of: each makes one node, numbered by its place."""

from __future__ import annotations

from typing import NamedTuple, final

from .ops import Op


@final  # the walkers test `type(ins) is Input`: a subclass would be none of the three
class Input(NamedTuple):
    """Read the input `name`."""

    name: str
    offset: int  # where in the source the instruction comes from


@final
class Const(NamedTuple):
    """A number of the source (a literal, pi, e)."""

    value: float
    offset: int


@final
class Apply(NamedTuple):
    """`op` applied to the nodes made by the instructions numbered `args`."""

    op: Op
    args: tuple[int, ...]
    offset: int


Instruction = Input | Const | Apply
