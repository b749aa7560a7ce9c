"""`nanograd plot`: f and f' over a range, or contours and the gradient field over two."""

from __future__ import annotations

import shutil

import click

from .. import _api as api
from .._sources import Source, load_program
from ..render import figures as drawing
from ..sampling import CURVE_POINTS, Curve
from .command import InputsCommand, values_and_ranges
from .options import color_option, load_option, output_option, quiet_option, source_and_inputs
from .output import report, rich_terminal, warn, write_out

EXAMPLES = """
\b
Examples:
  nanograd plot "sin(x)" --x -3:3
  nanograd plot "x*y + tanh(x)" --x -3:3 --y 2 -o plot.svg
  nanograd plot "log(x)" --x -1:3:1000 -o log.png
  nanograd plot "tan(x)" --x -3:3 --ylim -10:10
  nanograd plot "exp(x)" --x -2:2 --tangent 0 --logy -o slide.png --size 13.33,7.5
  nanograd plot "x**3 - 3*x" --x -2:2 --second -o inflection.svg
  nanograd plot "(1 - x)**2 + 100*(y - x**2)**2" --x -2:2 --y -1:3 -o contour.png
"""


@click.command(
    cls=InputsCommand,
    epilog=EXAMPLES,
    short_help="Plot f and df/dx over a range, or contours over two.",
)
@source_and_inputs
@load_option
@output_option(
    "-o",
    "--output",
    extensions=lambda: drawing.EXTENSIONS,
    metavar="FILE",
    help="Write a picture; the format follows the extension (.svg .png .pdf). "
    "[default: a plot in text on standard output]",
)
@click.option(
    "--ylim",
    default="auto",
    metavar="[LO:HI|auto|full]",
    help="The y axis of f (and of the terminal plot): LO:HI; full, every value; or auto: "
    "every value but those far outside (poles), said on the plot. df/dx's panel in a "
    "picture is auto unless full. [default: auto]",
)
@click.option("--title", metavar="TEXT", help="The title. [default: SOURCE and the fixed values]")
@click.option("--logx", is_flag=True, help="A log axis for the input swept (its range above 0).")
@click.option("--logy", is_flag=True, help="A log axis for f (what is above 0 is shown).")
@click.option(
    "--size",
    metavar="WIDTH,HEIGHT",
    help="A picture's width and height in inches (13.33,7.5 fills a 16:9 slide). "
    "[default: 6.4,4.8]",
)
@click.option(
    "--tangent", metavar="NUMBER", help="Draw the tangent line of f at the input's value NUMBER."
)
@click.option("--second", is_flag=True, help="Plot the second derivative d2f/dx2 too.")
@color_option
@quiet_option
@click.pass_context
def plot(
    ctx: click.Context,
    source: Source,
    var: tuple[str, ...],
    output: str | None,
    ylim: str,
    title: str | None,
    logx: bool,
    logy: bool,
    size: str | None,
    tangent: str | None,
    second: bool,
) -> None:
    """Plot SOURCE and its derivative over a range of one input, or its contour plot and
    gradient field over ranges of two.

    Give a swept input as --NAME LO:HI (or LO:HI:N for N points), the others as --NAME VALUE.
    Where SOURCE is nan or inf the plot has a gap.
    """
    fmt = output and drawing.format_of(output)
    program = load_program(source, report)
    fixed, ranges = values_and_ranges(ctx, var, program)
    columns = drawing.terminal_width(shutil.get_terminal_size((80, 24)).columns)
    points = CURVE_POINTS if output else drawing.terminal_points(columns)
    result = api.plot(
        program,
        fixed,
        ranges,
        points,
        bool(output),
        warn,
        ylim,
        tangent,
        second,
        title,
        logx,
        logy,
        size,
    )
    if output:
        assert fmt  # the format of output, found before the sampling
        write_out(output, drawing.figure(result, fmt))
    else:
        assert isinstance(result, Curve)  # a Surface is a picture only: api.plot refuses it
        color = rich_terminal()
        # click.echo would strip the colour where standard output is no terminal.
        click.echo(drawing.curve_text(result, columns, color), color=color)
