"""`nanograd check`: the gradient against central finite differences, or against formulas."""

from __future__ import annotations

import click

from .. import _api as api
from .._sources import Source
from ..errors import NanogradError
from .command import InputsCommand, program_and_point, values_and_ranges
from .options import (
    AtLeast,
    color_option,
    load_option,
    quiet_option,
    source_and_inputs,
    strict_option,
    table_format,
    wrt_option,
)
from .output import emit, show_table, warn

EXAMPLES = """
\b
Examples:
  nanograd check "x*y + tanh(x)" --x 2 --y 3
  nanograd check model.txt --x 0.5 --rtol 1e-6 --format json
  nanograd check "x**3" --against "3*x**2" --x 2
  nanograd check "sin(x)/x" --against "cos(x)/x - sin(x)/x**2" --x 0.1:3
  nanograd check "x*y" --against "x=y" --against "y=x" --x -1:1 --y 2
  nanograd check "x**x" --against "$(nanograd diff 'x**x')" --x 0:3
  nanograd check "x*y + tanh(x)" --x 2 --y 3 --wrt y
"""


@click.command(
    cls=InputsCommand,
    epilog=EXAMPLES,
    short_help="Check the gradients against central finite differences.",
)
@source_and_inputs
@load_option
@click.option(
    "--against",
    multiple=True,
    metavar="FORMULA",
    help="A derivative worked out by hand, to compare with the engine's: FORMULA for the one "
    "input (or the one --wrt names), NAME=FORMULA for the input NAME (repeatable, one per "
    "input). An input may be a range, --x LO:HI or LO:HI:N (101 points along one range, 11 "
    "along each of several): the formula must agree at every point where the engine's "
    "derivative is a number, |engine - formula| <= atol + rtol*|engine|, with rtol 1e-9 and "
    "atol 1e-12 unless given. Exit 1, showing the first points where they differ, if not.",
)
@wrt_option(
    "Check only the inputs named (an element of an array too, --wrt x[0]). With --against: "
    "the input a FORMULA without NAME= is the derivative by."
)
@click.option(
    "--rtol",
    type=AtLeast(min=0),
    metavar="NUMBER",
    help="Relative tolerance. [default: 1e-3; with --against, 1e-9]",
)
@click.option(
    "--atol",
    type=AtLeast(min=0),
    metavar="NUMBER",
    help="Absolute tolerance. [default: 1e-5; with --against, 1e-12]",
)
@table_format
@strict_option
@color_option
@quiet_option
@click.pass_context
def check(
    ctx: click.Context,
    source: Source,
    var: tuple[str, ...],
    against: tuple[str, ...],
    wrt: tuple[str, ...],
    rtol: float | None,
    atol: float | None,
    fmt: str | None,
    digits: str | None,
    strict: bool,
) -> None:
    """Check SOURCE's gradients against central finite differences; exit 1 if any fails.

    An input passes when both are finite and |analytic - numeric| <= atol + rtol * |numeric|
    (the defaults are torch.autograd.gradcheck's). The step for input x is
    cbrt(machine epsilon) * max(1, |x|). At a kink (abs(x) at 0), where the slopes to either
    side differ, the check fails, even where the central difference agrees.

    With --against, check a derivative worked out by hand instead: the engine's derivative
    against the formula, at the point or over ranges of inputs. diff's output may be given
    as it is: the names it binds are read, and a point outside the condition on its # line
    (x > 0) is not checked.
    """
    if against:
        check_formulas(ctx, source, var, against, wrt, rtol, atol, fmt, digits, strict)
        return
    program, point = program_and_point(ctx, source, var)
    result = api.check(program, point, rtol, atol, strict, warn, wrt)
    emit(fmt, result, digits)
    failure = api.failure(result)
    if failure:
        raise NanogradError(failure)


def check_formulas(ctx, source, var, against, wrt, rtol, atol, fmt, digits, strict) -> None:
    from .._sources import load_program
    from ..render._text import KINKS, kink_rows, mismatch_rows
    from .output import report

    program = load_program(source, report)
    fixed, ranges = values_and_ranges(ctx, var, program)
    result = api.check_against(program, against, fixed, ranges, wrt, rtol, atol, strict, warn)
    emit(fmt, result, digits)
    if fmt in (None, "table") and any(c.first for c in result.checks.values()):
        click.echo("\nfirst points where they differ:")  # (a terminal's table has no title)
        show_table(lambda number: mismatch_rows(result, number), digits)
    if fmt in (None, "table") and any(c.kinks for c in result.checks.values()):
        click.echo(f"\n{KINKS}")
        show_table(lambda number: kink_rows(result, number), digits)
    failure = api.failure(result)
    if failure:
        raise NanogradError(failure)
