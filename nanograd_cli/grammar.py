"""The grammar's LALR(1) tables: generated from grammars/nanograd.lark by Lark, stored as Python.

Building the tables with Lark costs about 350 ms per process (importing Lark and analysing the
grammar); loading the stored tables costs about 4 ms. The stored tables carry the text of the
grammar they were made from: if the grammar file differs, the tables are built afresh with
Lark, so an edited grammar always takes effect.

Regenerate the stored tables after editing the grammar: python -m nanograd_cli.grammar
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from typing import TypedDict

    class StoredTables(TypedDict):
        """The stored tables (_tables.TABLES): the arguments of Tables, by name."""

        grammar: str
        terminals: list[tuple[str, str]]
        ignore: list[str]
        actions: list[dict[str, int]]
        rules: list[tuple[str, int, str | None, bool]]
        start: int
        end: int


GRAMMAR_NAME = "nanograd.lark"
# (paths as strings: pathlib, with the URL and IP address modules it imports, would be a
# tenth of a command's start-up)
TABLES_PATH = os.path.join(os.path.dirname(__file__), "_tables.py")


def grammar_path() -> str:
    """The grammar file: inside the installed package, or at the top of a source checkout."""
    here = os.path.dirname(os.path.realpath(__file__))
    for top in (here, os.path.dirname(here)):
        candidate = os.path.join(top, "grammars", GRAMMAR_NAME)
        if os.path.isfile(candidate):
            return candidate
    raise FileNotFoundError(f"{GRAMMAR_NAME} is missing from the installation")


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as file:
        return file.read()


class Tables:
    """What the parser needs: how to cut text into tokens and what to do with each.

    terminals: (name, regex) pairs, in the order they are tried; ignore: terminals to skip;
    actions[state][symbol]: n >= 0 shifts to state n, n < 0 reduces by rule ~n;
    rules: (origin, length, alias, inline), where an inline rule (a `?rule` with one child)
    passes its child on; start and end: the first state and the accepting one.
    """

    def __init__(
        self,
        grammar: str,
        terminals: list[tuple[str, str]],
        ignore: list[str],
        actions: list[dict[str, int]],
        rules: list[tuple[str, int, str | None, bool]],
        start: int,
        end: int,
    ):
        self.grammar = grammar
        self.terminals = terminals
        self.ignore = ignore
        self.actions = actions
        self.rules = rules
        self.start = start
        self.end = end


# A rule as plain data: (origin, expansion, alias, inline).
Rule = tuple[str, tuple[str, ...], str | None, bool]


def _lark_analysis(grammar: str):
    """Lark's LALR(1) analysis of `grammar` as plain data: the one place that touches Lark.

    Tested with Lark 1.2.1 to 1.3.1 (pinned in pyproject.toml). Besides `Lark(...)`, it relies on:
    `Lark.terminals` and `Lark.ignore_tokens`; `TerminalDef.name`, `.priority`,
    `.pattern.max_width` and `.pattern.to_regexp()`; the internal
    `Lark.parser.parser.parser.parse_table`, whose `states` map a state to {symbol name:
    (action, arg)} and whose `start_states` and `end_states` are keyed by the start rule;
    `lark.parsers.lalr_analysis.Shift`, the action whose arg is the next state (any other
    action reduces by the `Rule` in arg); and `Rule.origin.name`, `Rule.expansion` (of symbols
    with `.name`), `Rule.alias` and `Rule.options.expand1` (set by `?rule`).

    Returns terminals as (name, regex) in the order to try them, the ignored terminal names,
    the states as {state: {symbol: ("shift", state) or ("reduce", Rule)}}, and the start and
    end states. Lark's state numbers and dict orders vary with PYTHONHASHSEED.
    """
    from lark import Lark
    from lark.parsers.lalr_analysis import Shift

    lark = Lark(grammar, parser="lalr", lexer="basic")
    table = lark.parser.parser.parser.parse_table

    def rule(r) -> Rule:
        inline = bool(r.options.expand1 and r.alias is None and len(r.expansion) == 1)
        alias = None if r.alias is None else str(r.alias)
        return (str(r.origin.name), tuple(str(s.name) for s in r.expansion), alias, inline)

    states = {
        state: {
            str(symbol): ("shift", arg) if action is Shift else ("reduce", rule(arg))
            for symbol, (action, arg) in row.items()
        }
        for state, row in table.states.items()
    }
    terminals = sorted(lark.terminals, key=lambda t: (-t.priority, -t.pattern.max_width, t.name))
    return (
        [(str(t.name), t.pattern.to_regexp()) for t in terminals],
        sorted(str(name) for name in lark.ignore_tokens),
        states,
        table.start_states["start"],
        table.end_states["start"],
    )


def build_tables(grammar: str) -> Tables:
    """Analyse `grammar` with Lark and number its LALR(1) tables the same way every time.

    States are numbered breadth-first from the start state (0), following each state's
    symbols in sorted order; rules are numbered in sorted order; each state's actions are
    sorted by symbol. So the rendered tables depend only on the grammar, not on hash seeds.
    """
    terminals, ignore, states, start, end = _lark_analysis(grammar)
    number = {start: 0}
    order = [start]
    for state in order:  # grows as new states are found: a breadth-first traversal
        for _, (kind, arg) in sorted(states[state].items()):
            if kind == "shift" and arg not in number:
                number[arg] = len(order)
                order.append(arg)
    assert len(order) == len(states), "every state is reachable from the start state"
    reduced = {arg for row in states.values() for kind, arg in row.values() if kind == "reduce"}
    # (origin, expansion) is unique in a Lark grammar, so the sort never compares aliases.
    rules = sorted(reduced)
    rule_number = {r: i for i, r in enumerate(rules)}
    actions = [
        {
            symbol: number[arg] if kind == "shift" else ~rule_number[arg]
            for symbol, (kind, arg) in sorted(states[state].items())
        }
        for state in order
    ]
    return Tables(
        grammar=grammar,
        terminals=terminals,
        ignore=ignore,
        actions=actions,
        rules=[
            (origin, len(expansion), alias, inline) for origin, expansion, alias, inline in rules
        ],
        start=number[start],
        end=number[end],
    )


def load_tables() -> Tables:
    """The stored tables when they match the grammar file; otherwise tables built now."""
    grammar = _read(grammar_path())
    from . import _tables

    stored = cast("StoredTables", _tables.TABLES)  # written by render_tables from a Tables
    if stored["grammar"] == grammar:
        return Tables(**stored)
    return build_tables(grammar)


def render_tables(tables: Tables) -> str:
    """The Python source of the stored tables module."""
    import pprint

    return (
        f'"""LALR(1) tables for grammars/{GRAMMAR_NAME}. Generated by '
        '`python -m nanograd_cli.grammar`: do not edit."""\n\n'
        f"TABLES = {pprint.pformat(vars(tables), width=100, compact=True)}\n"
    )


def main() -> None:
    """`python -m nanograd_cli.grammar`: write the parser's tables, _tables.py, from the
    grammar."""
    tables = build_tables(_read(grammar_path()))
    with open(TABLES_PATH, "w", encoding="utf-8") as file:
        file.write(render_tables(tables))
    print(f"wrote {TABLES_PATH} ({len(tables.actions)} states, {len(tables.rules)} rules)")


if __name__ == "__main__":
    main()
