"""Tables on a terminal, drawn with Rich: as wide as the terminal, never dropping a label or
a digit that is shown. Numbers are shown in full when the table fits, else to fewer
significant digits (or as `--digits` asks)."""

from __future__ import annotations

import sys
from collections.abc import Callable

Rows = Callable[[Callable[[float], str]], list[list[str]]]

# Significant digits tried, most first, until the table fits the terminal.
DIGITS = (12, 10, 8, 6, 4)


def significant(digits: int) -> Callable[[float], str]:
    """A number to at most `digits` significant digits: 3.07065082485, 1e-07, nan."""
    return lambda x: format(x, f".{digits}g")


def number_formats(digits: str | None) -> list[Callable[[float], str]]:
    """The number formats to try, in order: `full`, N significant digits, or (None) full
    precision and then fewer and fewer digits."""
    if digits == "full":
        return [repr]
    if digits is not None:
        return [significant(int(digits))]
    return [repr, *map(significant, DIGITS)]


def width(rows: list[list[str]]) -> int:
    """The width of the rows drawn as our Rich table: a border between columns and at either
    edge, and a space either side of each column's widest cell but at the edges."""
    columns = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return sum(columns) + 3 * len(columns) - 1


def print_table(
    make_rows: Rows,
    digits: str | None = None,
    title: str | None = None,
    text_columns: frozenset[int] = frozenset({0}),
) -> None:
    """Print a table on standard output, its numbers in the first format that fits; the
    columns in `text_columns` are left-aligned, the others (numbers) right-aligned."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    # Drawn because the command line chose Rich's tables and colour (cli.output.rich_terminal),
    # in a pipe too with --color always or FORCE_COLOR.
    console = Console(file=sys.stdout, force_terminal=True, no_color=False)
    formats = number_formats(digits)
    rows = make_rows(formats[0])
    for number in formats[1:]:
        if width(rows) <= console.width:
            break
        rows = make_rows(number)
    table = Table(title=title, header_style="bold", pad_edge=False)
    for i, heading in enumerate(rows[0]):
        justify = "left" if i in text_columns else "right"
        table.add_column(Text(heading), justify=justify, overflow="fold")
    for row in rows[1:]:
        table.add_row(*map(Text, row))  # text as it is, never read as Rich's markup
    console.print(table)
