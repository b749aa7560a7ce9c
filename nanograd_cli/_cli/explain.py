"""`nanograd explain`: the forward and backward passes at a point, written out node by node."""

from __future__ import annotations

import click

from .. import _api as api
from .._sources import Source
from ..render import _explanation as writers
from ..render._table import number_formats
from .command import InputsCommand, program_and_point
from .options import (
    color_option,
    digits_option,
    load_option,
    nan_option,
    quiet_option,
    source_and_inputs,
    strict_option,
)
from .output import json_nulls, rich_terminal, warn

EXAMPLES = """
\b
Examples:
  nanograd explain "x*y + tanh(x)" --x 2 --y 3
  nanograd explain model.txt --x -4 --y 2 --format markdown > backprop.md
  nanograd explain "(x - 3)**2" --x 1 --format latex --digits 4
  nanograd explain "x*y + tanh(x)" --x 2 --y 3 --format json
"""


@click.command(
    cls=InputsCommand,
    epilog=EXAMPLES,
    short_help="Write out the forward and backward passes, node by node.",
)
@source_and_inputs
@load_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(api.EXPLAIN_FORMATS, case_sensitive=False),
    help="Output format. [default: table; plain text when not on a terminal]",
)
@digits_option(
    "Significant digits of the numbers in a table, in Markdown and in LaTeX (JSON keeps "
    "every digit). [default: as many as fit a terminal; else full precision]"
)
@nan_option
@strict_option
@color_option
@quiet_option
@click.pass_context
def explain(
    ctx: click.Context,
    source: Source,
    var: tuple[str, ...],
    fmt: str | None,
    digits: str | None,
    strict: bool,
) -> None:
    """Write out the forward and backward passes of SOURCE at a point, node by node.

    Forward: each node's expression and value, in the order they are computed. Backward, in
    reverse topological order: each node's gradient (the sum of what flows back to it, written
    out where it feeds several nodes) and, per argument, its local derivative (the formula and
    its value) and the product with the gradient. The numbers are those `grad` computes.
    """
    program, point = program_and_point(ctx, source, var)
    result = api.explain(program, point, strict, warn)
    if fmt in (None, "table") and rich_terminal():
        writers.print_tables(result, digits)
    else:
        number = number_formats(digits)[0]
        click.echo(writers.written(result, fmt or "table", number, json_nulls()))
