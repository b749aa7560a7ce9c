"""`nanograd draw`: the computation graph, every node with its data and gradient."""

from __future__ import annotations

import sys

import click

from .. import _api as api
from .._sources import Source
from ..errors import InputError
from ..render.graph import EXTENSIONS, format_of
from .command import InputsCommand, program_and_point
from .options import load_option, output_option, quiet_option, source_and_inputs, strict_option
from .output import quiet, report, warn, write_out

EXAMPLES = """
\b
Examples:
  nanograd draw "x*y + tanh(x)" --x 2 --y 3 -o graph.svg
  nanograd draw model.txt --x -4 --y 2 -o graph.png --dpi 150
  nanograd draw "t/2 + 10/t" --t 3 -o graph.svg --hide-constants --edge-grads
  nanograd draw model.txt --x -4 --y 2 | dot -Tsvg > graph.svg
  nanograd draw "u = x*y; v = x + sin(y); u, v" --x 1 --y 2 --grad-of v -o jacobian.svg
"""


@click.command(
    cls=InputsCommand,
    epilog=EXAMPLES,
    short_help="Draw the computation graph: every node's data and gradient.",
)
@source_and_inputs
@load_option
@output_option(
    "-o",
    "--output",
    extensions=lambda: EXTENSIONS,
    default="-",
    metavar="FILE",
    help="Where to write; the format follows the extension (.svg .png .pdf .dot .gv, "
    ".html for a live page). [default: -, DOT text on standard output]",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(api.DRAW_FORMATS, case_sensitive=False),
    help="Output format, whatever the extension.",
)
@click.option(
    "--rankdir",
    metavar="[" + "|".join(api.RANKDIRS) + "]",  # any case; api.draw checks it
    help="Lay the graph out left to right, top to bottom, right to left or bottom to top. "
    "[default: the one whose picture fits a 16:9 slide better]",
)
@click.option("--hide-constants", is_flag=True, help="Fold constants into their operations.")
@click.option("--edge-grads", is_flag=True, help="Write each edge's local derivative on it.")
@click.option(
    "--dpi",
    metavar="N",  # a whole number from 1 to 2400: api.draw checks it
    help="Dots per inch of a png (Graphviz's default: 96).",
)
@click.option(
    "--legend/--no-legend",
    default=True,
    show_default=True,
    help="Add a table that explains the borders, fills and labels.",
)
@click.option(
    "--statements/--no-statements",
    default=True,
    show_default=True,
    help="Box each statement's nodes, labelled with its source (sources of several statements).",
)
@click.option(
    "--scalars",
    is_flag=True,
    help="For a source with arrays: draw the graph of scalars it is written out as, not an "
    "array per node.",
)
@click.option(
    "--grad-of",
    metavar="NAME",
    help="For a source of several outputs (u, v), all drawn in one graph: the output whose "
    "gradients the nodes show (the others show their data). [default: the first]",
)
@strict_option
@quiet_option
@click.pass_context
def draw(
    ctx: click.Context,
    source: Source,
    var: tuple[str, ...],
    output: str,
    fmt: str | None,
    rankdir: str | None,
    hide_constants: bool,
    edge_grads: bool,
    dpi: str | None,
    legend: bool,
    statements: bool,
    scalars: bool,
    grad_of: str | None,
    strict: bool,
) -> None:
    """Draw the computation graph of SOURCE with every node's data and gradient.

    SOURCE is an expression or program, the path of a file holding one, or - for standard
    input; give each input's value as --NAME VALUE. Gradients are computed first. Value
    nodes show their name (q₁, q₂ for the versions of a reassigned name), data and gradient;
    each operation is its own node, and the operands of - / ** and functions of several
    arguments are labelled (a, b). Inputs have a green border, the result a blue one,
    constants are grey; the darker a node's fill, the larger its gradient (see the legend).
    A source that lists several outputs (u = x*y; v = x + y; u, v) is drawn as one graph:
    each output marked, the gradients those of --grad-of.
    """
    fmt = fmt or format_of(output)
    if output == "-" and fmt in ("png", "pdf") and sys.stdout.isatty():
        raise InputError(f"{fmt} is binary: write it to a file with -o graph.{fmt}, or pipe it")
    program, point = program_and_point(ctx, source, var)

    def drawing(nodes: int) -> None:  # a long run's progress, which --quiet leaves out
        if not quiet():
            report(f"drawing {nodes:,} nodes with Graphviz… (Ctrl-C stops it)")

    data = api.draw(
        program,
        point,
        fmt,
        rankdir,
        hide_constants,
        edge_grads,
        dpi,
        legend,
        statements,
        strict,
        warn,
        drawing,
        scalars,
        grad_of,
    )
    write_out(output, data)
