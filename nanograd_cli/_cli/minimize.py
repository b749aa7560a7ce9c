"""`nanograd minimize`: gradient descent from a point."""

from __future__ import annotations

import os

import click

from .. import _api as api
from .. import _io as io
from .._sources import Source, input_values, load_program
from .._step_log import StepLog
from ..errors import Diverged, InputError, Interrupted
from ..render._progress import StepsProgress
from ..results import Minimum
from .command import InputsCommand, given_values, one_standard_input, random_starts
from .options import (
    AtLeast,
    CountFrom,
    Renamed,
    bound_option,
    color_option,
    data_format_option,
    fix_option,
    load_option,
    output_option,
    quiet_option,
    source_and_inputs,
    strict_option,
    table_format,
    training_options,
    wrt_option,
)
from .output import (
    emit,
    note,
    progress_shown,
    reading,
    report,
    stderr_color,
    warn,
    write_out,
)

EXAMPLES = """
\b
Examples:
  nanograd minimize "(1 - x)**2 + 100*(y - x**2)**2" --x -1.2 --y 1 --steps 10000
  nanograd minimize "(x - 3)**2" --x 0 --method sgd --lr 0.1 --format json
  nanograd minimize "(1 - x)**2 + 100*(y - x**2)**2" --x -1.2 --y 1 --method newton
  nanograd minimize "(x - 3)**2" --x 0 --method lbfgs --bound x=-1:1
"""


def picture_extensions() -> dict[str, str]:
    """What --plot writes, by extension: looked up only when completing, since render.figures
    brings NumPy with it."""
    from ..render.figures import EXTENSIONS

    return EXTENSIONS


@click.command(
    cls=InputsCommand,
    epilog=EXAMPLES,
    short_help="Minimize: SGD, momentum, Adam, BFGS, L-BFGS-B or Newton.",
)
@source_and_inputs
@load_option
@click.option(
    "--steps",
    type=CountFrom(min=1),
    metavar="N",
    default=10000,
    show_default=True,
    help="At most this many steps.",
)
@click.option(
    "--lr",
    type=AtLeast(min=0, min_open=True),
    metavar="NUMBER",
    default=api.LR,
    show_default=True,
    help="Learning rate of sgd, momentum and adam.",
)
@click.option(
    "--method",
    "--optimizer",
    "method",
    cls=Renamed,
    type=click.Choice(api.METHODS),
    default="adam",
    show_default=True,
    help="The method: sgd, momentum or adam at the rate --lr, or SciPy's BFGS (bfgs), "
    "L-BFGS-B (lbfgs) or trust-region Newton with the exact Hessian (newton, of the mean "
    "loss with --data), which need no --lr and SciPy (the fit extra). --optimizer is "
    "another name for it.",
)
@bound_option(
    "With --method lbfgs: keep an input between LO and HI (-inf or inf for an open side); "
    "a start outside is an error. The gradient's norm is then that of the gradient "
    "projected on the bounds."
)
@click.option(
    "--tol",
    type=AtLeast(min=0),
    metavar="NUMBER",
    default=1e-8,
    show_default=True,
    help="Stop when the gradient's norm is at most this.",
)
@output_option(
    "--plot",
    "picture",
    extensions=picture_extensions,
    metavar="FILE",
    help="Also draw the descent (.svg .png .pdf): its path on the contour plot of SOURCE for "
    "two inputs, the loss at every step otherwise.",
)
@click.option(
    "--data",
    metavar="FILE",
    help="Train on these rows (- for standard input; CSV, Parquet, Arrow or JSON Lines): SOURCE "
    "is a loss per row, an input named as a column is read per row, and the mean loss is "
    "minimized over the other inputs.",
)
@data_format_option
@click.option(
    "--batch",
    type=CountFrom(min=1),
    metavar="N",
    help="With --data: N rows a step, shuffled each pass. [default: every row every step]",
)
@click.option(
    "--drop-nan",
    is_flag=True,
    help="With --data: leave out the rows where a column the source reads is nan, empty or "
    "NA (a note says how many).",
)
@click.option(
    "--seed",
    type=int,
    metavar="N",
    help="The seed of the random starts (--W 'normal(16, 2)') and of --batch's shuffle.",
)
@training_options
@output_option(
    "--save",
    extensions=lambda: api.SAVED,
    metavar="FILE.json",
    help="Also write the point reached to FILE.json, which --load FILE.json of any command "
    "reads back as inputs' values.",
)
@output_option(
    "--log",
    extensions=lambda: [".csv"],
    metavar="FILE",
    help="Also write the step, loss and gradient norm at every step to FILE as CSV.",
)
@wrt_option("Move only these inputs (the others keep their values).")
@fix_option("Hold this input at its value; move the others.")
@table_format
@strict_option
@color_option
@quiet_option
@click.pass_context
def minimize(
    ctx: click.Context,
    source: Source,
    var: tuple[str, ...],
    steps: int,
    lr: float,
    method: str,
    bounds: tuple[str, ...],
    tol: float,
    picture: str | None,
    data: str | None,
    data_format: str | None,
    batch: int | None,
    drop_nan: bool,
    seed: int | None,
    weight_decay: float,
    lr_schedule: str,
    lr_step_size: int | None,
    lr_gamma: float | None,
    lr_t_max: int | None,
    lr_min: float | None,
    save: str | None,
    log: str | None,
    wrt: tuple[str, ...],
    fix: tuple[str, ...],
    fmt: str | None,
    digits: str | None,
    strict: bool,
) -> None:
    """Minimize SOURCE by gradient descent from the point given by its inputs' values.

    Prints the final point, value and gradient norm. Exits 0 when the descent ran: its
    gradient's norm came to at most --tol (converged), or its --steps ran out first (a note
    says so); 1 when the value or gradient became nan or inf on the way (diverged), printing
    the last point where both were finite and the reason; 2 if the value or gradient is nan
    or inf at the start; 130 when Ctrl-C stops it. --plot, --log and --save are written for
    every descent that ran. Progress shows on standard error when it is a terminal.
    """
    if method in ("bfgs", "lbfgs", "newton"):
        # SciPy's methods do BLAS work on matrices as small as the parameters are few, where
        # OpenBLAS's thread per core only spins: L-BFGS-B on Rosenbrock took 0.15 to 0.7 s
        # with them on a loaded machine, 2 to 20 ms without. (Set before NumPy is imported.)
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    descent = picture_format = None
    if picture:
        # NumPy and Matplotlib: loaded only for --plot
        from ..render.figures import format_of
        from ..sampling import Descent

        picture_format = format_of(picture)  # before any step: a bad name fails at once
        descent = Descent()
    api.check_data_options(data, batch, drop_nan, seed, random_starts(ctx, var), data_format)
    one_standard_input(source, data, "--data")
    schedule = api.lr_schedule(lr_schedule, steps, lr_step_size, lr_gamma, lr_t_max, lr_min)
    for name, path in (("--save", save), ("--log", log)):
        if path == "-":
            raise InputError(f"{name} writes a file: give its name (- is standard output's)")
    program = load_program(source, report)
    start = input_values(ctx.meta["inputs"], var, report, seed, draws=True)
    columns = None
    if data is not None:
        table = io.read_rows(
            data,
            data_format or io.input_format(data, None, "data", "data_format"),
            api.data_reads(program),
            drop_nan=drop_nan,
            progress=reading(data),
        )
        columns = table.columns
    start = given_values(
        ctx, var, [n for n in program.inputs if n not in (columns or ())], values=start
    )
    progress = StepsProgress(steps, color=stderr_color()) if progress_shown() else None
    steps_log = StepLog(log) if log else None
    stopped: Interrupted | Diverged | None
    try:
        result = api.minimize(
            program,
            start,
            steps,
            lr,
            method,
            tol,
            strict,
            warn,
            progress and progress.update,
            descent and descent.record,
            wrt,
            fix,
            columns,
            batch,
            seed,
            drop_nan,
            weight_decay,
            schedule,
            steps_log.record if steps_log else None,
            bounds=api.named_bounds(bounds),
        )
    except (Interrupted, Diverged) as stop:  # Ctrl-C, or nan or inf: the last point reached
        assert isinstance(stop.reached, Minimum)  # api.minimize's carries one
        result, stopped = stop.reached, stop
    except BaseException:
        if steps_log:
            steps_log.discard()
        raise
    else:
        stopped = None
    finally:
        if progress:
            progress.stop()
    # every descent that ran: one stopped by Ctrl-C, by --steps or by a nan included
    if steps_log:
        steps_log.commit()
    if picture:
        from ..render.figures import descent_figure

        assert descent is not None and picture_format is not None  # both made for picture
        write_out(picture, descent_figure(program, descent, method, result, picture_format))
    if save:
        write_out(save, api.saved_point(result, program.source).encode())
    emit(fmt, result, digits)
    if stopped:
        raise stopped
    unconverged = api.failure(result, tol, method)
    if unconverged:  # a result, not a failure: the steps ran out first
        note(unconverged)
