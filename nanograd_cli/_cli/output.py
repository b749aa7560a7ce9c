"""What the commands print: results as JSON, CSV or a table, and messages on standard error."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from typing import TextIO

import click

from ..errors import SourceError, printable, spell
from ..render import _text as text
from ..results import flattened, has_arrays


def report(message: str) -> None:
    """A message on standard error; one that cannot be written there (a full or closed
    stderr) is dropped, so that it does not change the run's outcome."""
    try:
        # Whatever a message quotes (a file name, a column's, an option's value), no control
        # character of it reaches the terminal; a byte of the command line that was not
        # UTF-8, quoted as Python's repr writes it ('3\udcff'), is shown as that byte.
        shown = re.sub(r"\\udc([89a-f][0-9a-f])", r"\\x\1", printable(spell(message), keep="\n\t"))
        click.echo(shown, err=True)
    except OSError:
        pass


def warn(where: SourceError | str) -> None:
    """What the api warns of: the first nan or inf (at a place in the source), a warning, or
    a note (which --quiet leaves out)."""
    if isinstance(where, SourceError):
        report(f"warning: {where}")
    elif where.startswith("note: "):
        note(where.removeprefix("note: "))
    else:
        report(where)


def note(message: str) -> None:
    """`note: message` on standard error, unless --quiet."""
    if not quiet():
        report(f"note: {message}")


def quiet() -> bool:
    """Whether --quiet was given: no notes and no progress on standard error (warnings and
    errors still)."""
    return setting(QUIET, "") == "quiet"


def progress_shown() -> bool:
    """Whether progress is shown: on a terminal, unless --quiet."""
    return sys.stderr.isatty() and not quiet()


def stderr_color() -> bool:
    """Whether what goes to standard error in colour (a progress display, a plot in text) is
    drawn so: as --color says."""
    return rich_terminal(sys.stderr)


def reading(path: str) -> Callable | None:
    """What shows the reading of the rows of `path` (`-`: standard input), where progress is
    shown: a display of `render.progress.RowsProgress`, made by io.read_table."""
    if not progress_shown():
        return None
    from functools import partial

    from ..render._progress import RowsProgress

    what = "standard input" if path == "-" else printable(path)
    return partial(RowsProgress, label=f"reading {what}", color=stderr_color())


def rich_terminal(stream: TextIO | None = None) -> bool:
    """Whether standard output (or `stream`) gets Rich's tables and colour: as `--color
    always` or `never` says; else (`auto`) not where NO_COLOR is set, yes where FORCE_COLOR
    is (each when not empty, as no-color.org and force-color.org have it), else where it is
    a terminal."""
    color = setting(COLOR, "auto")
    if color != "auto":
        return color == "always"
    if os.environ.get("NO_COLOR"):
        return False
    return bool(os.environ.get("FORCE_COLOR")) or (stream or sys.stdout).isatty()


def json_nulls() -> bool:
    """Whether JSON writes non-finite numbers as null (`--nan null`), not as the strings "nan",
    "inf" and "-inf"."""
    return setting(NAN, "string") == "null"


# Where --color and --nan keep their choice (cli.options): the context's meta, which every
# context of a run shares.
COLOR = "nanograd.color"
NAN = "nanograd.nan"
QUIET = "nanograd.quiet"


def setting(key: str, default: str) -> str:
    """The choice of an option of cli.options that the printing reads, or its default."""
    context = click.get_current_context(silent=True)
    return context.meta.get(key, default) if context else default


def emit(fmt: str | None, result, digits: str | None = None) -> None:
    """Print a result as JSON, CSV or a table."""
    if fmt == "json":
        click.echo(text.to_json(result, json_nulls()))
    elif fmt == "csv":
        # the data as read, escapes in text included, into a pipe or a file (click would
        # strip them); on a terminal, a control character is shown as its escape
        csv = text.to_csv(result)
        terminal = sys.stdout.isatty()
        click.echo(printable(csv, keep="\n") if terminal else csv, color=True)
    else:
        rows = flattened(result)  # an array's elements one row each
        blocks = None  # on a terminal, arrays as blocks where they fit
        if has_arrays(result):
            blocks = lambda number: text.table_rows(result, text.in_blocks(number))  # noqa: E731
        show_table(lambda number: text.table_rows(rows, number), digits, blocks)


def show_table(
    make_rows: Callable, digits: str | None = None, preferred: Callable | None = None
) -> None:
    """A Rich table on a terminal; plain aligned text in a pipe or with NO_COLOR set, in full
    precision unless `digits` says. `make_rows(number)` gives the rows with numbers formatted
    by `number`; on a terminal, `preferred` gives them instead where they fit unwrapped."""
    from ..render._table import fits, number_formats, print_table  # only to write a table

    if rich_terminal():  # (Rich itself is loaded only for a terminal, or when asked)
        if preferred is not None and fits(preferred, digits):
            make_rows = preferred
        print_table(make_rows, digits)
    else:
        click.echo(text.plain_table(make_rows(number_formats(digits)[0])))


def write_out(output: str, data: bytes) -> None:
    """`data` to the file `output` (written whole or not at all), or to standard output."""
    from .._output_files import write_atomically  # tempfile and its imports: only to write a file

    if output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        write_atomically(output, data)
