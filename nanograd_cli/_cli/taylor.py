"""`nanograd taylor`: the Taylor polynomial in one input around its value, to an order."""

from __future__ import annotations

import click

from .. import _api as api
from .._sources import Source
from ..render import _text as text
from .command import InputsCommand, program_and_point
from .options import (
    color_option,
    digits_option,
    load_option,
    nan_option,
    quiet_option,
    source_and_inputs,
    strict_option,
    wrt_option,
)
from .output import json_nulls, rich_terminal, show_table, warn

EXAMPLES = """
\b
Examples:
  nanograd taylor "exp(x)" --wrt x --x 0 --order 3
  nanograd taylor "log(x)" --wrt x --x 1 --order 4 --format json
  nanograd taylor "exp(sin(x))" --x 0 --order 5 --format latex
  nanograd taylor "x**y" --wrt x --x 1 --y 3 --order 3
"""


@click.command(
    cls=InputsCommand,
    epilog=EXAMPLES,
    short_help="Print the Taylor polynomial in one input around a point.",
)
@source_and_inputs
@load_option
@wrt_option("The input to expand in, around its value (--x A). [default: the only input]")
@click.option(
    "--order",
    default="5",
    show_default=True,
    metavar="N",
    help=f"The highest power (a whole number from 0 to {api.MAX_TAYLOR_ORDER}).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(api.TAYLOR_FORMATS, case_sensitive=False),
    help="A table of coefficients and the polynomial, JSON, or the polynomial in LaTeX. "
    "[default: table; plain text when not on a terminal]",
)
@digits_option(
    "Significant digits of the coefficients in the table and the polynomial (JSON keeps "
    "every digit). [default: full precision]"
)
@nan_option
@strict_option
@color_option
@quiet_option
@click.pass_context
def taylor(
    ctx: click.Context,
    source: Source,
    var: tuple[str, ...],
    wrt: tuple[str, ...],
    order: str,
    fmt: str | None,
    digits: str | None,
    strict: bool,
) -> None:
    """Print the Taylor polynomial of SOURCE in the input --wrt around its value.

    Each coefficient f⁽ᵏ⁾(A)/k! is computed in Taylor mode: a truncated power series is
    carried through every operation of SOURCE (no finite differences, no derivative written
    out), exact to float precision. The other inputs are held at their values. Where a
    function has a kink (abs, relu, max, where, ...), the series is that of the piece the
    point is on, with the engine's derivative at the kink.
    """
    if len(wrt) > 1:
        raise click.BadParameter("give one input to expand in", param_hint="'--wrt'")
    program, point = program_and_point(ctx, source, var)
    result = api.taylor(program, point, wrt[0] if wrt else None, order, strict, warn)
    if fmt == "json":
        click.echo(text.to_json(result, json_nulls()))
    elif fmt == "latex":
        click.echo(text.rounded(result, digits).latex)
    else:
        rounded = text.rounded(result, digits)
        show_table(lambda number: text.table_rows(rounded, number), digits)
        click.echo(("" if rich_terminal() else "\n") + rounded.polynomial)
