"""The instructions a program is made of: each makes one node, numbered by its place."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol, TypeVar, final

from ._ops import Op

if TYPE_CHECKING:
    from .errors import SourceError

T = TypeVar("T")


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


class Code(Protocol):
    """A program as forward mode and the compiled code read it (`program.Program` is one):
    its instructions, its inputs by name and by place, and the places of its results."""

    code: list[Instruction]
    inputs: list[str]
    result: int
    input_slots: dict[str, int]

    @property
    def results(self) -> dict[str, int]: ...

    def needed(self) -> list[bool]: ...

    def check_inputs(self, values: Mapping[str, float]) -> None: ...

    def first_non_finite(self, data: Sequence[float]) -> SourceError | None: ...

    def interpret(
        self, input: Callable[[str], T], const: Callable[[float], T], apply: Callable[..., T]
    ) -> list[T]: ...
