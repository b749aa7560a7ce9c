"""Functions the language defines in itself: one line of the language each.

A function that is a composition of others needs no row in the operations table: it is
defined here as a source would define it (`name(x) = expr`, docs/language.md), and a call
expands it where it is called, as a call of a function a source defines is. Every
interpretation (the engine, forward mode, the compiled code, symbolic derivatives, the live
page) sees the operations of its body, and its derivative follows from theirs.

A composition is kept here only where it is as accurate as a formula of its own would be:
`python benchmarks/compositions.py` measures values and derivatives against mpmath, for these
and for the table's functions that could be written this way.
"""

from __future__ import annotations

from typing import NamedTuple


class Defined(NamedTuple):
    """A function written in the language: its definition, a doc line, and its derivative
    in the language (one per parameter, in the parameters' names), for the docs; a test
    holds the derivative to the one the composition's parts give."""

    definition: str
    doc: str
    formulas: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.definition.partition("(")[0]


PRELUDE: tuple[Defined, ...] = (
    # x/(1 + abs(x)) as it is written: its derivative, 1/(1 + abs(x)) - abs(x)/(1 + abs(x))**2,
    # cancels for abs(x) > 1 (off by ~abs(x) ulps: every digit at 1e16; 1e-300 for 0 at 1e300).
    # sign(x) - sign(x)/(1 + abs(x)) has the one term 1/(1 + abs(x))**2 there, and is 1 at inf.
    Defined(
        "softsign(x) = where(abs(x) < 1, x/(1 + abs(x)), sign(x) - sign(x)/(1 + abs(x)))",
        "x/(1 + abs(x)): from -1 to 1 as tanh, with tails that approach slowly",
        ("1/(1 + abs(x))**2",),
    ),
)

# The defined functions by name.
DEFINED: dict[str, Defined] = {row.name: row for row in PRELUDE}
