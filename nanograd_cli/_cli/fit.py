"""`nanograd fit`: a least-squares fit of a model's parameters to the rows of a table."""

from __future__ import annotations

import click

from .. import _api as api
from .. import _fit_outputs as fit_outputs
from .. import _io as io
from .._language import parse
from .._program import Program
from .._robust import LOSSES
from .._sources import Source
from ..errors import InputError, Interrupted, SourceError, option
from ..fitting import DEFAULT_STEPS, require_solver
from ..render import _text as text
from ..render._progress import FitProgress
from ..results import Fit, Fits
from .command import InputsCommand, complete_inputs, one_standard_input, program_and_point
from .options import (
    CountFrom,
    bound_option,
    color_option,
    data_format_option,
    fix_option,
    quiet_option,
    source_and_inputs,
    table_format,
)
from .output import (
    emit,
    json_nulls,
    note,
    progress_shown,
    reading,
    report,
    show_table,
    stderr_color,
    write_out,
)

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
    metavar="EXPR",
    help="Divide each row's residual by this column's value, or an expression's over the "
    "columns (0.05*y).",
)
@fix_option("Hold this parameter at its start.")
@bound_option(
    "Keep a parameter between LO and HI (-inf or inf for an open side); a start outside "
    "is an error, and a parameter that ends at its bound is marked so, without a stderr."
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
    metavar="NAME=EXPR",
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
    help="N more fits (at most 10000) from starts drawn log-uniform between 0.1x and 10x each "
    "start (inside its bounds); the least rss is kept, and the output says how many starts "
    "reached it.",
)
@click.option("--seed", type=int, metavar="N", help="The seed of --restarts' starts.")
@click.option(
    "--loss",
    default="linear",
    metavar=f"[{'|'.join(LOSSES)}]",
    help="A robust fit: each row's (weighted) residual r counts as f²·rho((r/f)²), SciPy's "
    "least_squares losses, so that outliers pull less; its standard errors are approximate. "
    "[default: linear]",
)
@click.option(
    "--f-scale",
    type=float,
    metavar="NUMBER",
    help="The residual (in units of sigma) beyond which a robust --loss counts a row less "
    "than its square. [default: 1]",
)
@click.option(
    "--ci",
    type=float,
    metavar="LEVEL",
    help="Confidence intervals at LEVEL (0.95): value ± t(dof)·stderr (JSON ci).",
)
@click.option(
    "--profile",
    is_flag=True,
    help="Make --ci's intervals the profile likelihood's: where, with the parameter held and "
    "the others refitted, χ² rises as lmfit's conf_interval says (derived quantities keep "
    "value ± t·stderr).",
)
@click.option(
    "--stats",
    is_flag=True,
    help="Also show χ²/dof, R², AIC, BIC and each parameter's t and p in the table (JSON "
    "always has them, and the correlations).",
)
@click.option(
    "--predict",
    metavar="FILE",
    help="Predict instead of printing the fit: FILE's rows (CSV, Parquet, Arrow, JSON Lines; "
    "- for standard input) with the model's value fitted and its standard error fitted_se "
    "added, to -o FILE, else on standard output as CSV (--format json: JSON Lines). With "
    "--by, FILE has the column of the groups, and each row gets its group's fit.",
)
@click.option(
    "--band",
    type=float,
    metavar="LEVEL",
    help="With --predict, -o or --plot: the confidence band (lower, upper) and the "
    "prediction band of one new observation (pred_lower, pred_upper) at LEVEL (0.95).",
)
@click.option(
    "--save",
    metavar="FIT.json",
    help="Also write the fit (model, target, sigma, parameters, covariance, statistics; "
    "with --by, every group's) to FIT.json as JSON, which --load reads back to predict "
    "without refitting.",
)
@click.option(
    "--load",
    metavar="FIT.json",
    help="Without SOURCE and --data: take a fit saved with --save instead of fitting (with "
    "--predict FILE, predict without the data). With them: start a new fit from the saved "
    "parameters (or a point of minimize --save); a start given as --NAME wins.",
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
    help="Also write the rows of --data with the columns fitted, fitted_se (with --band, "
    "the bands) and residual, in the format the extension says (.csv .parquet .arrow "
    ".feather .jsonl); with --predict, the predicted rows instead.",
)
@click.option(
    "--plot",
    "picture",
    metavar="FILE",
    help="Also draw the data, the fitted curve and the residuals over the one column the "
    "model reads (.svg .png .pdf), or - for a plot in text on standard error; with --by, "
    "every group in one figure, each in its colour.",
)
@click.option("--logx", is_flag=True, help="--plot's x axis logarithmic.")
@click.option("--logy", is_flag=True, help="--plot's y axis (the target's) logarithmic.")
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
@quiet_option
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
    loss: str,
    f_scale: float | None,
    ci: float | None,
    profile: bool,
    stats: bool,
    predict: str | None,
    band: float | None,
    save: str | None,
    load: str | None,
    steps: int | None,
    output: str | None,
    picture: str | None,
    logx: bool,
    logy: bool,
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
    files = fit_outputs.Files.asked(predict, output, picture, save, band, logx, logy, fmt)
    alone = load if source is None and data is None else None  # a saved fit alone
    if alone is not None:  # what would make another fit first: --by, --shared among them
        refuse_with_load(ctx, files)
    api.check_grouping(by, shared)
    files.check(load, source is not None, data, "SOURCE", by)
    if alone is not None:
        result, interrupted, table = api.load_fit(alone), None, None
    else:
        result, interrupted, table = fitted(ctx, source, var, data, data_format, target, sigma)
    color = stderr_color()  # (the plot in text goes there)
    fit_outputs.finish(
        result, interrupted, table, files, Shown(fmt, digits, color), by, stats, json_nulls(),
        color,
    )  # fmt: skip


class Shown:
    """What the command line shows of a fit: on standard output the fit as --format says, or
    the predictions; notes and plots in text on standard error."""

    def __init__(self, fmt: str | None, digits: str | None, color: bool = False):
        self.fmt, self.digits, self.color = fmt, digits, color

    def fit(self, result: Fit | Fits) -> None:
        emit(self.fmt, result, self.digits)

    def note(self, text: str) -> None:
        note(text)

    def report(self, text: str) -> None:
        report(text)

    def write(self, path: str, data: bytes) -> None:
        write_out(path, data)

    def table(self, columns) -> None:
        show_table(lambda number: text.columns_table(columns, number), self.digits)

    def plot(self, drawn: str) -> None:
        # as drawn, its colours kept: the text it shows of the data was made printable
        click.echo(drawn, err=True, color=self.color)


def refuse_with_load(ctx: click.Context, files: fit_outputs.Files) -> None:
    """--load without SOURCE and --data takes the fit from its file: what would make another
    fit is refused."""
    given = [option(name) for name, _ in ctx.meta.get("inputs", ())]
    given += [
        option(name)
        for name in fit_outputs.FITTING
        if ctx.get_parameter_source(PARAMETERS.get(name, name.replace("-", "_")))
        is not click.core.ParameterSource.DEFAULT
    ]
    fit_outputs.refuse_with_load(given, files, "SOURCE")


# The options whose parameter is named otherwise than the option.
PARAMETERS = {"bound": "bounds"}


def fitted(ctx: click.Context, source, var, data, data_format, target, sigma):
    """The fit of SOURCE to --data from the starts given (or, after Ctrl-C, the best point
    reached and the interruption), and the table of the data."""
    params = ctx.params
    if data is None:
        raise InputError("fit needs the data: --data FILE (- for standard input)")
    api.check_seed(params["seed"], params["restarts"])
    one_standard_input(source, data, "--data")
    if params["predict"] == "-" and (data == "-" or source.stdin):
        raise InputError("--predict - and the data or the source cannot both be standard input")
    program, starts = program_and_point(ctx, source, var)
    target_program = target_of(target)
    require_solver()  # a missing SciPy said before the data is read, and so are bad options
    api.fit_level(params["ci"], params["profile"], params["loss"], params["f_scale"])
    needed = api.fit_reads(program, target_program, sigma)
    spread = api.sigma_columns(sigma)
    # a column the model alone reads and a start is given for: refused by its header below,
    # not read (a column of text, `a` of groups A and B, is no number)
    others = {*spread, *(target_program.inputs if target_program else ["y"])}
    started = {name for name in starts if name in program.inputs and name not in others}
    table = io.read_rows(
        data,
        data_format or io.input_format(data, None, "data", "data_format"),
        needed - started,
        extra="fit",
        drop_nan=params["drop_nan"],
        progress=reading(data),
    )
    if params["load"] is not None:  # the saved values start the parameters given none
        saved = fit_outputs.saved_starts(params["load"], program, table.columns, starts)
        starts = {**saved, **starts}
    clash = started.intersection(table.names)
    given_column = next((name for name in program.inputs if name in clash), None)
    if given_column is not None:
        from ..fitting import started_column

        raise started_column(given_column)
    check_starts(ctx, program, starts, table)
    by = params["by"]
    groups = None if by is None else api.group_column(by, table, needed)
    if params["picture"]:
        api.fit_predictor(program, table.columns)
    progress = FitProgress(color=stderr_color()) if progress_shown() else None
    try:
        result = api.fit(
            program,
            table.columns,
            starts,
            target_program,
            sigma,
            params["fix"],
            params["steps"],
            progress and progress.update,
            params["ci"],
            api.named_bounds(params["bounds"]),
            params["absolute_sigma"],
            params["derive"],
            params["drop_nan"],
            params["restarts"],
            params["seed"],
            params["loss"],
            params["f_scale"],
            params["profile"],
            groups,
            params["shared"],
        )
    except Interrupted as stop:  # Ctrl-C: the best point reached is shown, then the exit code
        assert isinstance(stop.reached, Fit | Fits)  # api.fit's Interrupted carries one
        return stop.reached, stop, table
    finally:
        if progress:
            progress.stop()
    return result, None, table


def target_of(text: str | None) -> Program | None:
    """--target parsed, its errors saying that they are the target's."""
    if text is None:
        return None
    try:
        return parse(text)
    except SourceError as error:
        raise InputError(f"--target: {error}") from None


def check_starts(ctx: click.Context, program: Program, starts, table: io.Table) -> None:
    """A parameter whose start went to an option of the same name (--sigma): said so, before
    the fit's own message, which cannot know."""
    own = {o[2:] for p in ctx.command.params for o in p.opts if o.startswith("--")}
    for name in program.inputs:
        if name in own and name not in table.columns and name not in starts:
            raise InputError(
                f"no start for parameter {name}: --{name} is an option of nanograd fit; give "
                f"the start as --var {name}=VALUE"
            )
