"""`nanograd fit`: a least-squares fit of a model's parameters to the rows of a table."""

from __future__ import annotations

import difflib
import os
import shutil
import sys

import click

from .. import api, io
from ..errors import InputError, Interrupted, NanogradError, SourceError
from ..fitting import DEFAULT_STEPS, solver
from ..language import parse
from ..program import Program
from ..render import figures as plots
from ..render.progress import FitProgress
from ..results import Fit, Fits, group_name
from ..sources import Source
from .command import InputsCommand, complete_inputs, one_standard_input, program_and_point
from .options import (
    CountFrom,
    color_option,
    data_format_option,
    fix_option,
    source_and_inputs,
    table_format,
)
from .output import emit, in_a_directory, report, write_out

EXAMPLES = """
\b
Examples:
  nanograd fit "a*exp(-b*x) + c" --data points.csv --a 1 --b 0.1 --c 0
  nanograd fit model.txt --data runs.parquet --b1 500 --b2 1e-4 --format json
  nanograd fit "k*t" --data decay.csv --target "log(y)" --sigma dy --k -1
  nanograd fit "a*x + b" --data points.csv --a 1 --b 0 -o fitted.csv
  nanograd fit "a*exp(-k*t)" --data runs.csv --by run --a 1 --k 0.1 --format csv
  nanograd fit "a*exp(-k*t)" --data runs.csv --by run --shared k --a 1 --k 0.1
"""


@click.command(
    cls=InputsCommand,
    epilog=EXAMPLES,
    short_help="Fit a model's parameters to rows of data by least squares.",
)
@source_and_inputs
@click.option(
    "--data",
    metavar="FILE",
    help="The rows to fit (- for standard input): CSV with a header, Parquet, Arrow or JSON "
    "Lines, by the extension. An input named as a column is data; every other input is a "
    "parameter, given its start as --NAME START.",
)
@data_format_option
@click.option(
    "--target",
    metavar="EXPR",
    help="The observed response, an expression over the columns. [default: y]",
)
@click.option(
    "--sigma",
    metavar="COLUMN|EXPR",
    help="Divide each row's residual by this column's value, or an expression's over the "
    "columns (0.05*y).",
)
@fix_option("Hold this parameter at its start.")
@click.option(
    "--bound",
    "bounds",
    multiple=True,
    metavar="NAME=LO:HI",
    help="Keep a parameter between LO and HI (-inf or inf for an open side); a start outside "
    "is an error, and a parameter that ends at its bound is marked so, without a stderr.",
)
@click.option(
    "--absolute-sigma",
    is_flag=True,
    help="Take sigma as known: standard errors from (JᵀJ)⁻¹ alone, not scaled by χ²/dof, "
    "and the χ² test's p-value (JSON chi2_p).",
)
@click.option(
    "--derive",
    multiple=True,
    metavar="'NAME = EXPR'",
    help="Also a quantity of the parameters, with its standard error by the delta method from "
    "EXPR's exact gradient (JSON derived).",
)
@click.option(
    "--drop-nan",
    is_flag=True,
    help="Leave out the rows where a column the fit reads, the target or sigma is nan, empty "
    "or NA (a note says how many), instead of stopping at the first.",
)
@click.option(
    "--restarts",
    type=CountFrom(min=0),
    default=0,
    metavar="N",
    help="N more fits from starts drawn log-uniform between 0.1x and 10x each start (inside "
    "its bounds); the least rss is kept, and the output says how many starts reached it.",
)
@click.option("--seed", type=int, help="The seed of --restarts' starts.")
@click.option(
    "--ci",
    type=float,
    metavar="LEVEL",
    help="Confidence intervals at LEVEL (0.95): value ± t(dof)·stderr (JSON ci).",
)
@click.option(
    "--stats",
    is_flag=True,
    help="Also show χ²/dof, R², AIC, BIC and each parameter's t and p in the table (JSON "
    "always has them, and the correlations).",
)
@click.option(
    "--steps",
    type=CountFrom(min=1),
    metavar="N",
    help=f"At most N evaluations per stage of the solver. [default: {DEFAULT_STEPS}]",
)
@click.option(
    "-o",
    "--output",
    metavar="FILE",
    help="Also write the rows of --data with the columns fitted and residual, in the format "
    "the extension says (.csv .parquet .arrow .feather .jsonl).",
)
@click.option(
    "--plot",
    "picture",
    metavar="FILE",
    help="Also draw the data, the fitted curve and the residuals over the one column the "
    "model reads (.svg .png .pdf), or - for a plot in text on standard error.",
)
@click.option(
    "--by",
    metavar="COLUMN",
    help="A fit per group of rows with the same value in COLUMN (numbers or text), each "
    "from the same starts: a row per group, in the order the groups first appear.",
)
@click.option(
    "--shared",
    multiple=True,
    metavar="NAME",
    shell_complete=complete_inputs,
    help="With --by: one fit of all the groups where the parameter NAME is one for all and "
    "each other parameter is one per group (named a[g]).",
)
@table_format
@color_option
@click.pass_context
def fit(
    ctx: click.Context,
    source: Source,
    var: tuple[str, ...],
    data: str | None,
    data_format: str | None,
    target: str | None,
    sigma: str | None,
    fix: tuple[str, ...],
    bounds: tuple[str, ...],
    absolute_sigma: bool,
    derive: tuple[str, ...],
    drop_nan: bool,
    restarts: int,
    seed: int | None,
    ci: float | None,
    stats: bool,
    steps: int | None,
    output: str | None,
    picture: str | None,
    fmt: str | None,
    digits: str | None,
    by: str | None = None,
    shared: tuple[str, ...] = (),
) -> None:
    """Fit the parameters of SOURCE to the rows of --data by least squares, with exact
    derivatives.

    The residual of a row is the target (default: the column y) less SOURCE, divided by the
    --sigma column when given. Prints each parameter's value and standard error, the
    residual sum of squares, and why the solver stopped. Exits 0 when the fit converged, 1
    when it did not (the steps ran out, a parameter the data cannot determine, no minimum
    reached: the point reached is printed, the reason said, and no -o or --plot file
    written), 2 for bad input.
    """
    if data is None:
        raise InputError("fit needs the data: --data FILE (- for standard input)")
    if seed is not None and not restarts:
        raise InputError("--seed draws the starts of --restarts N: without them it does nothing")
    api.check_grouping(by, shared, picture)
    one_standard_input(source, data, "--data")
    out_format = io.output_format(output, None, None) if output else None
    picture_format = picture and picture != "-" and plots.format_of(picture)
    for path in (output, picture):  # before the fit, not after it
        if path and path != "-":
            writable(path, data)
    program, starts = program_and_point(ctx, source, var)
    target_program = target_of(target)
    needed = {*program.inputs, *(target_program.inputs if target_program else ["y"])}
    solver()  # a missing SciPy said before the data is read
    table = io.read_table(
        data,
        data_format or io.input_format(data, None),
        needed | api.sigma_columns(sigma),
        extra="fit",
        missing=drop_nan,
    )
    check_starts(ctx, program, starts, table)
    groups = None if by is None else group_column(by, table, needed | api.sigma_columns(sigma))
    if picture:
        api.fit_predictor(program, table.columns)
    progress = FitProgress() if sys.stderr.isatty() else None
    interrupted: Interrupted | None
    try:
        result = api.fit(
            program,
            table.columns,
            starts,
            target_program,
            sigma,
            fix,
            steps,
            progress and progress.update,
            ci,
            api.named_bounds(bounds),
            absolute_sigma,
            derive,
            drop_nan,
            restarts,
            seed,
            groups,
            shared,
        )
    except Interrupted as stop:  # Ctrl-C: the best point reached is shown, then the exit code
        assert isinstance(stop.reached, Fit | Fits)  # api.fit's Interrupted carries one
        result, interrupted = stop.reached, stop
    else:
        interrupted = None
    finally:
        if progress:
            progress.stop()
    if isinstance(result, Fits):
        result.by = by or result.by
    else:
        result.table_statistics = stats
    emit(fmt, result, digits)  # first: a file that cannot be written loses no result
    for note in notes(result):
        report(f"note: {note}")
    failed = interrupted is not None or not result.converged
    files = [path for path in (output, picture) if path and path != "-"]
    if failed and files:  # a failed run leaves no file behind; stdout has the point reached
        why = "the fit was interrupted" if interrupted else "the fit did not converge"
        if not interrupted and isinstance(result, Fits):
            why = "not every group's fit converged"
        report(f"note: {' and '.join(files)} not written: {why}")
    if output and not (failed and output in files):
        assert out_format  # the format of output, found before the fit
        write_out(output, api.fit_rows(table, result, out_format))
    if picture and not (failed and picture in files):
        assert isinstance(result, Fit)  # (no picture of groups)
        drawn = api.fit_curve(program, table.columns, result)
        if picture_format:
            write_out(picture, plots.fit_figure(drawn, picture_format))
        else:
            columns = plots.terminal_width(shutil.get_terminal_size((80, 24)).columns)
            report(plots.fit_text(drawn, columns, sys.stderr.isatty()))
    if interrupted:
        raise interrupted
    failure = api.failure(result)
    if failure:
        raise NanogradError(failure)


def group_column(by: str, table: io.Table, read: set[str]) -> list:
    """The group of each row: its value in the column `by`, which the fit must not read."""
    api.check_group_column(by, table.names, read)
    return io.group_values(table, by)


def notes(result: Fit | Fits) -> list[str]:
    """The notes on the point reached, each naming its group where there are groups."""
    if isinstance(result, Fit):
        return result.warnings
    return [
        f"{result.by} = {group_name(group)}: {note}"
        for group, fit in result.items()
        for note in fit.warnings
    ]


def target_of(text: str | None) -> Program | None:
    """--target parsed, its errors saying that they are the target's."""
    if text is None:
        return None
    try:
        return parse(text)
    except SourceError as error:
        raise InputError(f"--target: {error}") from None


def writable(path: str, data: str) -> None:
    """Refuse, before fitting, a file that cannot be written, or the data file itself."""
    if os.path.exists(path) and data != "-" and os.path.samefile(path, data):
        raise InputError(f"{path} is the --data file: write the fit's rows to another file")
    in_a_directory(path)


def check_starts(ctx: click.Context, program: Program, starts, table: io.Table) -> None:
    """A parameter without a start that was meant as a column (a near name of one), or whose
    start went to an option of the same name (--sigma): said so, before the fit's own
    message, which cannot know."""
    own = {o[2:] for p in ctx.command.params for o in p.opts if o.startswith("--")}
    for name in program.inputs:
        if name in table.columns or name in starts:
            continue
        if name in own:
            raise InputError(
                f"no start for parameter {name}: --{name} is an option of nanograd fit; give "
                f"the start as --var {name}=VALUE"
            )
        near = difflib.get_close_matches(name, table.names, n=1, cutoff=0.6)
        near += [c for c in table.names if c.lower() == name.lower()]
        if near:
            columns = ", ".join(table.names)
            raise InputError(
                f"{name} is no column of --data (its columns: {columns}); did you mean "
                f"{near[-1]}? (a start, --{name} VALUE, would make {name} a parameter)"
            )
