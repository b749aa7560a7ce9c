"""`nanograd hessian`: the value, gradient and matrix of second derivatives at a point."""

from __future__ import annotations

import click

from .. import _api as api
from .._sources import Source
from .command import InputsCommand, program_and_point
from .options import (
    color_option,
    load_option,
    quiet_option,
    source_and_inputs,
    strict_option,
    table_format,
    wrt_option,
)
from .output import emit, warn

EXAMPLES = """
\b
Examples:
  nanograd hessian "x*y + tanh(x)" --x 2 --y 3
  nanograd hessian "(1 - x)**2 + 100*(y - x**2)**2" --x 1 --y 1 --format json
  nanograd hessian "x*y*z" --x 1 --y 2 --z 3 --wrt x --wrt y
"""


@click.command(
    cls=InputsCommand, epilog=EXAMPLES, short_help="Print the value, the gradient and the Hessian."
)
@source_and_inputs
@load_option
@wrt_option(
    "Only the second derivatives by these inputs (an array's elements, or one element: "
    "x[0]), and the gradient by them."
)
@table_format
@strict_option
@color_option
@quiet_option
@click.pass_context
def hessian(
    ctx: click.Context,
    source: Source,
    var: tuple[str, ...],
    wrt: tuple[str, ...],
    fmt: str | None,
    digits: str | None,
    strict: bool,
) -> None:
    """Print the value, gradient and Hessian (matrix of second derivatives) of SOURCE.

    The Hessian is computed by automatic differentiation: the exact gradient is
    differentiated again in forward mode (no finite differences).
    """
    program, point = program_and_point(ctx, source, var)
    emit(fmt, api.hessian(program, point, wrt, strict, warn), digits)
