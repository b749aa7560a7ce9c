"""`nanograd diff`: the derivative as an expression in the language, or LaTeX."""

from __future__ import annotations

import click

from .. import api
from ..sources import Source, load_program
from .command import SourceCommand
from .options import source_options, wrt_option
from .output import report

EXAMPLES = """
\b
Examples:
  nanograd diff "x*y + tanh(x)" --wrt x
  nanograd diff model.txt --wrt x --wrt y
  nanograd diff "sin(x)**2" --wrt x --format latex
  nanograd grad "$(nanograd diff 'x**3' --wrt x)" --x 2
"""


@click.command(
    cls=SourceCommand,
    epilog=EXAMPLES,
    short_help="Print the derivative as an expression, or as LaTeX.",
)
@source_options
@wrt_option("An input to differentiate by.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "latex"]),
    default="text",
    show_default=True,
    help="The language itself, or LaTeX.",
)
def diff(source: Source, wrt: tuple[str, ...], fmt: str) -> None:
    """Print the derivative of SOURCE as an expression in the language.

    With one --wrt, the output is a program whose result is the derivative: give it back to
    `nanograd grad` to evaluate it. A sub-expression that repeats is bound once to a name.
    Without --wrt, every input's derivative is printed, one `d_NAME = ...` line each.
    """
    click.echo(api.diff(load_program(source, report), wrt, latex=fmt == "latex"))
