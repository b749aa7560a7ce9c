"""`nanograd grad`: the value and gradient at a point, per line of input, or per row of a table."""

from __future__ import annotations

import sys

import click

from .. import _api as api
from .._io import EXTENSIONS
from .._sources import Source, decode, input_values, load_program, source_lines
from ..errors import InputError, NanogradError, NonFiniteResult, SourceError
from ..render import _text as text
from ..render._streaming import StreamingTable
from ..results import LineGradients, array_of, by_element, element_name, flattened
from .command import InputsCommand, given_values, one_standard_input
from .exit_codes import describe
from .options import (
    PATH,
    color_option,
    load_option,
    output_option,
    quiet_option,
    source_and_inputs,
    strict_option,
    table_format,
    wrt_option,
)
from .output import (
    emit,
    json_nulls,
    progress_shown,
    report,
    rich_terminal,
    show_table,
    stderr_color,
    warn,
)

EXAMPLES = """
\b
Examples:
  nanograd grad "x*y + tanh(x)" --x 2 --y 3
  nanograd grad "x*y + tanh(x)" --x 2 --y 3 --format json
  nanograd grad --x 1 -- "-x**2"
  nanograd grad "x*format" --x 1 --var format=2
  printf 'x*x\\nsin(x)\\n' | nanograd grad - --each-line --x 1 --format csv
  nanograd grad "u = x*y; v = x + y; u, v" --x 2 --y 3
  nanograd grad "sum((A @ x - b)**2)" --A "[[1, 2], [3, 4]]" --x "[1, 0]" --b @b.csv
"""


@click.command(
    cls=InputsCommand,
    epilog=EXAMPLES,
    short_help="Print the value and the gradient by every input.",
)
@source_and_inputs
@load_option
@table_format
@wrt_option("Show only these gradients.")
@click.option("--each-line", is_flag=True, help="Treat every line as its own expression.")
@strict_option
@click.option(
    "--points",
    type=PATH,
    metavar="FILE",
    help="A table of points (- for standard input), a row per point and a column per input: "
    "one result per row, the row's columns kept. CSV or TSV with a header, Parquet, Arrow, "
    "JSON Lines or a JSON array of objects, by the extension.",
)
@click.option(
    "--points-format",
    type=click.Choice(["csv", "tsv", "parquet", "arrow", "jsonl", "json"], case_sensitive=False),
    help="The format of --points FILE, and of the results where no extension says. "
    "[default: by the extension, else csv]",
)
@click.option(
    "--na",
    is_flag=True,
    help="With --points: read a missing value (an empty field, NA, N/A, null, None) as nan, "
    "its row's results nan too, instead of stopping at the first.",
)
@click.option(
    "--drop-nan",
    is_flag=True,
    help="With --points: leave out the rows where an input read is nan, empty or NA (a note "
    "says how many), instead of computing nan there.",
)
@click.option(
    "--flat",
    is_flag=True,
    help="With --points and JSON Lines or JSON results: rows whose keys are the CSV's columns "
    "(a flat table for pandas, polars or DuckDB; with --nan null for their missing numbers), "
    'not the single-point shape {"value", "inputs", "gradients"}.',
)
@click.option(
    "--output-format",
    "results_format",
    type=click.Choice(["csv", "tsv", "parquet", "arrow", "jsonl", "json"], case_sensitive=False),
    help="With --points: the format of the results, whatever -o's extension or "
    "--points-format say (Parquet on standard output from CSV read there, say).",
)
@output_option(
    "-o",
    "--output",
    extensions=lambda: (e for known in EXTENSIONS.values() for e in known),
    metavar="FILE",
    help="With --points: write the results to FILE, in the format its extension says (.csv "
    ".tsv .parquet .arrow .feather .jsonl, .json for an array). [default: standard output]",
)
@click.option(
    "--mode",
    type=click.Choice(api.MODES),
    default="auto",
    show_default=True,
    help="Reverse mode (one pass back per output) or forward mode (dual numbers, one pass for "
    "every input at once); auto is reverse, or forward where outputs outnumber inputs.",
)
@color_option
@quiet_option
@click.pass_context
def grad(
    ctx: click.Context,
    source: Source,
    fmt: str | None,
    digits: str | None,
    wrt: tuple[str, ...],
    each_line: bool,
    strict: bool,
    points: str | None,
    points_format: str | None,
    na: bool,
    drop_nan: bool,
    flat: bool,
    results_format: str | None,
    output: str | None,
    mode: str,
    var: tuple[str, ...],
) -> None:
    """Print the value of SOURCE and its gradient with respect to every input.

    SOURCE is an expression or program, the path of a file holding one, or - for standard
    input. Give each input's value as --NAME VALUE, an array as --x "[1, 2, 3]" or
    --W @w.csv (docs/arrays.md): its gradient has its shape. A source that ends by listing
    names (u = x*y; v = x+y; u, v), or whose result is an array, has several outputs: grad
    prints each one's value and gradient, the Jacobian.
    """
    values = input_values(ctx.meta["inputs"], var, report)
    if each_line and points is not None:
        raise InputError("--each-line and --points cannot be used together")
    if each_line:
        values = given_values(ctx, var, None, values=values)  # (any line may read any)
        api.check_wrt(wrt, list(values), elements=True)
        shapes = {n: getattr(v, "shape", ()) for n, v in values.items()}
        wrt = tuple(n if n in values else element_name(n, shapes[array_of(n)]) for n in wrt)
        ctx.exit(each_line_results(source, values, fmt, digits, wrt, strict, mode))
    if points is None and (
        (output, points_format, results_format) != (None, None, None) or na or flat or drop_nan
    ):
        raise InputError(
            "-o, --points-format, --output-format, --na, --drop-nan and --flat are for the rows "
            "of --points FILE"
        )
    one_standard_input(source, points, "--points")
    program = load_program(source, report)
    values = given_values(ctx, var, program.inputs, values=values)
    if points is not None:
        formats = points_format, results_format
        rows = na, flat, drop_nan
        points_results(program, points, values, fmt, wrt, mode, strict, output, formats, rows)
        return
    emit(fmt, api.grad(program, values, wrt, mode, strict, warn), digits)


def points_results(program, points, values, fmt, wrt, mode, strict, output, formats, rows) -> None:
    """`grad --points`: one result per row, a batch of rows at a time, in any format;
    `formats`: --points-format and --output-format; `rows`: --na (a missing value is nan),
    --flat (JSON rows keyed by the CSV's columns) and --drop-nan (rows with one left out)."""
    points_format, results_format = formats
    na, flat, drop_nan = rows
    from .. import _io as io  # NumPy and PyArrow: loaded only for --points, and only once checked

    if fmt == "table":
        raise InputError("--points writes csv or json: give --format csv or --format json")
    out_format = results_format or io.output_format(output, fmt, points_format)
    if output in (None, "-") and out_format not in io.TEXT_FORMATS and sys.stdout.isatty():
        raise InputError(f"{out_format} is binary: write it to a file with -o FILE, or pipe it")
    from functools import partial

    from ..render._progress import RowsProgress

    api.grad_points(
        program,
        (points, io.input_format(points, points_format)),
        (output, out_format),
        values,
        wrt,
        mode,
        strict,
        warn,
        partial(RowsProgress, color=stderr_color()) if progress_shown() else None,
        json_nulls(),
        na,
        flat,
        drop_nan,
    )


def each_line_results(source, values, fmt, digits, wrt, strict, mode) -> int:
    """`grad --each-line`: one result per line; bad lines are reported and skipped. Every
    line's gradients are those with respect to `wrt`, or else to every input given. Rows
    print as they come, but for the table on a terminal, which is fitted to all of them."""
    names = list(by_element({n: values.get(n, 0.0) for n in (wrt or values)}))
    rows = []
    plain = (
        StreamingTable(click.echo) if fmt not in ("json", "csv") and not rich_terminal() else None
    )
    status = 0
    if fmt == "csv":
        click.echo(text.lines_csv_header(names))
    for number, data in source_lines(source):
        try:
            line = decode(data, "the line")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            result = api.grad_line(line, values, number, wrt, mode, strict, warn)
        except NanogradError as error:
            if isinstance(error, SourceError):
                message = error.on_line(number)
            elif isinstance(error, NonFiniteResult):  # it names the line already
                message = str(error)
            else:
                message = f"line {number}: {describe(error)}"
            report(f"error: {message}")
            status = max(status, error.exit_code)
            continue
        row = LineGradients(number, line.strip(), result if fmt == "json" else flattened(result))
        if fmt == "json":
            click.echo(text.to_json(row, json_nulls()))
        elif fmt == "csv":
            click.echo(text.csv_rows(row)[0])
        elif plain is not None:
            plain.add(*text.lines_table_rows([row]))
        else:
            rows.append(row)
    if plain is not None:
        plain.flush()
    if rows:
        show_table(lambda number: text.lines_table_rows(rows, number), digits)
    return status
