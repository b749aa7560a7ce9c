"""What the commands print: results as JSON, CSV or a table, and messages on standard error."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import click

from ..errors import SourceError, printable
from ..output import write_atomically
from ..render import text
from ..render.table import number_formats


def report(message: str) -> None:
    """A message on standard error; one that cannot be written there (a full or closed
    stderr) is dropped, so that it does not change the run's outcome."""
    try:
        # Whatever a message quotes (a file name, a column's, an option's value), no control
        # character of it reaches the terminal.
        click.echo(printable(message, keep="\n\t"), err=True)
    except OSError:
        pass


def warn(where: SourceError | str) -> None:
    """What the api warns of: the first nan or inf (at a place in the source), or a note."""
    report(f"warning: {where}" if isinstance(where, SourceError) else where)


def rich_terminal() -> bool:
    """Whether standard output is a terminal that wants Rich's tables and colour."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def emit(fmt: str | None, result, digits: str | None = None) -> None:
    """Print a result as JSON, CSV or a table."""
    if fmt == "json":
        click.echo(text.to_json(result))
    elif fmt == "csv":
        click.echo(text.to_csv(result))
    else:
        show_table(lambda number: text.table_rows(result, number), digits)


def show_table(make_rows: Callable, digits: str | None = None) -> None:
    """A Rich table on a terminal; plain aligned text in a pipe or with NO_COLOR set, in full
    precision unless `digits` says. `make_rows(number)` gives the rows with numbers formatted
    by `number`."""
    if rich_terminal():
        from ..render.table import print_table  # Rich: loaded only for a terminal

        print_table(make_rows, digits)
    else:
        click.echo(text.plain_table(make_rows(number_formats(digits)[0])))


def write_out(output: str, data: bytes) -> None:
    """`data` to the file `output` (written whole or not at all), or to standard output."""
    if output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        write_atomically(output, data)
