"""Tables on a terminal, drawn with Rich: as wide as the terminal, never dropping a label or
a digit that is shown. A table that does not fit in full precision is shown to fewer
significant digits (or as `--digits` asks); one that still does not fit wraps its cells,
only at a space or after an operator, never inside a word or a number; and one too wide even
then is shown as records, a block of `heading  cell` lines per row."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Literal, NamedTuple

Rows = Callable[[Callable[[float], str]], list[list[str]]]

# Significant digits tried, most first, until the table fits the terminal.
DIGITS = (12, 10, 8, 6, 4)

# The pieces a cell wraps between: a number, a name, a space, `**`, or one other character.
TOKEN = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|\w+|\s+|\*\*|.")
OPERATORS = frozenset("+-*/=")


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


def overhead(columns: int) -> int:
    """What our Rich table adds to its cells' widths: a border between columns and at either
    edge, and a space either side of each column but at the edges."""
    return 3 * columns - 1


def width(rows: list[list[str]]) -> int:
    """The width of the rows drawn as our Rich table, no cell wrapped."""
    return sum(natural_widths(rows)) + overhead(len(rows[0]))


def natural_widths(rows: list[list[str]]) -> list[int]:
    """Each column's widest cell (of a cell of several lines, an array's block, its widest
    line)."""
    return [max(_widest(row[i]) for row in rows) for i in range(len(rows[0]))]


def _widest(cell: str) -> int:
    return max(map(len, cell.split("\n"))) if "\n" in cell else len(cell)


def fits(make_rows: Rows, digits: str | None) -> bool:
    """Whether the rows fit the terminal unwrapped, in some number of digits `digits` allows."""
    from rich.console import Console

    available = Console(file=sys.stdout, force_terminal=True).width
    _, rows = most_digits(make_rows, number_formats(digits), available)
    return width(rows) <= available


def pieces(text: str) -> list[str]:
    """`text` cut where a line may break: after a space, and after an operator outside
    parentheses that follows an operand (`x*y + ` | `tanh(x)`, `1/` | `cosh(x)**2`); never
    inside a word or a number, nor after a sign that begins the text (`+ 0.07`)."""
    cut, start, depth, operand = [], 0, 0, False
    for token in TOKEN.finditer(text):
        t = token.group()
        if t.isspace():
            breaks = operand
        else:
            depth += t.count("(") + t.count("[") - t.count(")") - t.count("]")
            breaks = depth == 0 and operand and t in OPERATORS
            operand = operand or t not in OPERATORS
        if breaks:
            cut.append(text[start : token.end()])
            start = token.end()
    return [*cut, text[start:]] if start < len(text) else cut


def least_width(text: str) -> int:
    """The narrowest a cell wraps to: its longest piece, without the space it ends with."""
    return max((len(p.rstrip()) for p in pieces(text)), default=0)


def wrap(text: str, width: int) -> str:
    """`text` in lines of at most `width`, broken between pieces (a piece wider than `width`
    is cut only where nothing else can fit)."""
    if _widest(text) <= width:
        return text
    lines = [""]
    for piece in pieces(text):
        if lines[-1] and len((lines[-1] + piece).rstrip()) > width:
            lines[-1] = lines[-1].rstrip()
            lines.append("")
        lines[-1] += piece if lines[-1] or len(lines) == 1 else piece.lstrip()
        while len(lines[-1].rstrip()) > width:
            lines[-1:] = [lines[-1][:width], lines[-1][width:]]
    return "\n".join(line.rstrip() for line in lines)


def fitted_widths(rows: list[list[str]], available: int) -> list[int] | None:
    """Column widths for `rows` within `available` columns, cells wrapped where needed:
    the column with most to spare gives a character at a time. None if they cannot fit."""
    widths = natural_widths(rows)
    excess = sum(widths) + overhead(len(widths)) - available
    if excess <= 0:
        return widths
    least = [max(least_width(row[i]) for row in rows) for i in range(len(widths))]
    if sum(widths) - sum(least) < excess:
        return None
    for _ in range(excess):
        spare = [w - m for w, m in zip(widths, least, strict=True)]
        widths[spare.index(max(spare))] -= 1
    return widths


def most_digits(make_rows: Rows, formats: list, available: int) -> tuple[Callable, list]:
    """The first number format in which the rows fit unwrapped (else the last), and the
    rows in it."""
    number, rows = formats[0], make_rows(formats[0])
    for number in formats[1:]:
        if width(rows) <= available:
            break
        rows = make_rows(number)
    return number, rows


class Layout(NamedTuple):
    """A table as drawn: its rows (headings first), column widths, the rows that begin a
    section, and whether the headings show."""

    rows: list[list[str]]
    widths: list[int]
    sections: frozenset[int] = frozenset()
    header: bool = True


def records(rows: list[list[str]]) -> tuple[list[list[str]], frozenset[int]]:
    """A table's rows as `heading  cell` lines, a block per row whose first cell is filled
    (the rows after it with an empty first cell continue the block); empty cells are left
    out, and a heading is written once for the cells under it that follow each other. The
    lines, and the indices of those that begin a block."""
    headings, *body = rows
    lines, starts, last = [["", ""]], set(), None
    for row in body:
        if row[0]:
            starts.add(len(lines))
        for heading, cell in zip(headings, row, strict=True):
            if cell:
                lines.append(["" if heading == last and not row[0] else heading, cell])
                last = heading
    return lines, frozenset(starts)


def layout(make_rows: Rows, digits: str | None, available: int) -> Layout:
    """How a table fits `available` columns: in the most digits that fit, wrapped if it
    must be, else as records."""
    formats = number_formats(digits)
    _, rows = most_digits(make_rows, formats, available)
    widths = fitted_widths(rows, available)
    if widths is not None:
        return Layout(rows, widths)
    number, lines = _records_in_most_digits(make_rows, formats, available)
    label = natural_widths(lines)[0]
    widths = fitted_widths(lines, available) or [label, max(available - label - overhead(2), 1)]
    return Layout(lines, widths, records(make_rows(number))[1], header=False)


def _records_in_most_digits(
    make_rows: Rows, formats: list, available: int
) -> tuple[Callable, list]:
    """The first number format in which every number of the records fits its line (else the
    last), and the records in it: a label too long for a line, wrapped or not, is so in
    every format."""
    shown = [(number, records(make_rows(number))[0]) for number in formats]
    lines = shown[-1][1]
    room = available - natural_widths(lines)[0] - overhead(2)
    variants = zip(*(lines for _, lines in shown), strict=True)
    numbers = [k for k, same_line in enumerate(variants) if len({c for _, c in same_line}) > 1]
    for number, lines in shown:
        if all(len(lines[k][1]) <= room for k in numbers):
            return number, lines
    return shown[-1]


def print_table(
    make_rows: Rows,
    digits: str | None = None,
    title: str | None = None,
    text_columns: frozenset[int] = frozenset({0}),
) -> None:
    """Print a table on standard output, fitted to the terminal (see `layout`); the columns
    in `text_columns` are left-aligned, the others (numbers) right-aligned."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    # Drawn because the command line chose Rich's tables and colour (cli.output.rich_terminal),
    # in a pipe too with --color always or FORCE_COLOR.
    console = Console(file=sys.stdout, force_terminal=True, no_color=False)
    shape = layout(make_rows, digits, console.width)
    if not shape.header:
        text_columns = frozenset({0, 1})
    table = Table(title=title, header_style="bold", pad_edge=False, show_header=shape.header)
    for i, (heading, w) in enumerate(zip(shape.rows[0], shape.widths, strict=True)):
        justify: Literal["left", "right"] = "left" if i in text_columns else "right"
        table.add_column(Text(wrap(heading, w)), justify=justify, width=w, no_wrap=True)
    body = shape.rows[1:]
    for k, row in enumerate(body, start=1):
        cells = (Text(wrap(cell, w)) for cell, w in zip(row, shape.widths, strict=True))
        table.add_row(*cells, end_section=k + 1 in shape.sections)  # text, never Rich markup
    console.print(table)
