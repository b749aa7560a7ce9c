"""`nanograd check`: the gradient against central finite differences."""

from __future__ import annotations

import click

from .. import api
from ..errors import NanogradError
from ..gradcheck import failures
from ..sources import Source
from .command import InputsCommand, program_and_point
from .options import AtLeast, color_option, source_and_inputs, strict_option, table_format
from .output import emit, warn

EXAMPLES = """
\b
Examples:
  nanograd check "x*y + tanh(x)" --x 2 --y 3
  nanograd check model.txt --x 0.5 --rtol 1e-6 --format json
"""


@click.command(
    cls=InputsCommand,
    epilog=EXAMPLES,
    short_help="Check the gradients against central finite differences.",
)
@source_and_inputs
@click.option(
    "--rtol",
    type=AtLeast(min=0),
    default=1e-3,
    show_default=True,
    help="Relative tolerance.",
)
@click.option(
    "--atol",
    type=AtLeast(min=0),
    default=1e-5,
    show_default=True,
    help="Absolute tolerance.",
)
@table_format
@strict_option
@color_option
@click.pass_context
def check(
    ctx: click.Context,
    source: Source,
    var: tuple[str, ...],
    rtol: float,
    atol: float,
    fmt: str | None,
    digits: str | None,
    strict: bool,
) -> None:
    """Check SOURCE's gradients against central finite differences; exit 1 if any fails.

    An input passes when both are finite and |analytic - numeric| <= atol + rtol * |numeric|
    (the defaults are torch.autograd.gradcheck's). The step for input x is
    cbrt(machine epsilon) * max(1, |x|).
    """
    program, point = program_and_point(ctx, source, var)
    result = api.check(program, point, rtol, atol, strict, warn)
    emit(fmt, result, digits)
    if not result.passed:
        raise NanogradError(f"gradient check failed for {failures(result)}")
