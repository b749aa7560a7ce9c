"""`nanograd diff`: the derivative as an expression in the language, or LaTeX."""

from __future__ import annotations

import click

from .. import _api as api
from .._sources import Source, load_program
from .command import SourceCommand
from .options import quiet_option, source_options, wrt_option
from .output import note, report

EXAMPLES = """
\b
Examples:
  nanograd diff "x*y + tanh(x)" --wrt x
  nanograd diff model.txt --wrt x --wrt y
  nanograd diff "sin(x)**2" --wrt x --format latex
  nanograd diff "x**y" --wrt y --exact
  nanograd diff "sin(x)*exp(x)" --wrt x --order 2
  nanograd diff "x**2*y**3 + sin(x*y)" --order 2 --mixed
  nanograd grad -e "$(nanograd diff 'x**3' --wrt x)" --x 2
  nanograd diff "norm(A@x - b)**2" --wrt x --shape A=3,2 --shape x=2 --shape b=3
  nanograd diff "x**2*sin(x)" --wrt x --steps
  nanograd diff "sin(x**2)" --steps --format markdown
  nanograd diff "x**2 + y**2 == 25" --implicit y --wrt x
"""


@click.command(
    cls=SourceCommand,
    epilog=EXAMPLES,
    short_help="Print the derivative as an expression, or as LaTeX.",
)
@source_options
@quiet_option
@wrt_option("An input to differentiate by.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(api.DIFF_FORMATS, case_sensitive=False),
    default="text",
    show_default=True,
    help="The language itself, or LaTeX; with --steps also markdown.",
)
@click.option(
    "--exact",
    is_flag=True,
    help="Write the derivative so that it equals the engine's at every point (0**0, a zero "
    "base), with the helpers powlog and step where needed, instead of as a textbook does.",
)
@click.option(
    "--order",
    default="1",
    show_default=True,
    metavar="N",
    help="The N-th derivative by each --wrt name (a whole number from 1 to 20).",
)
@click.option(
    "--mixed",
    is_flag=True,
    help="With --order N: every mixed partial derivative of order N by the --wrt names too "
    "(d2_x_y: by x, then by y), each combination once.",
)
@click.option(
    "--shape",
    "shapes",
    multiple=True,
    metavar="NAME=DIMS",
    help="An array input and its shape (x=3, A=3,2): the derivative is in vector form "
    "where one exists (2*A.T@(A@x - b)), else an array, element by element.",
)
@click.option(
    "--steps",
    is_flag=True,
    help="The derivation, a rule a line (product rule, chain rule, sin rule, ...), ending "
    "with the derivative.",
)
@click.option(
    "--implicit",
    metavar="NAME",
    help="SOURCE is an equation (lhs == rhs, or an expression that is 0) that makes NAME a "
    "function of the one --wrt name: print dNAME/dWRT (with --order 2, the second).",
)
@click.option(
    "--notes",
    type=click.Choice(api.DIFF_NOTES, case_sensitive=False),
    default="usual",
    show_default=True,
    help="Which # notes to print under a derivative: usual, where it holds (x > 0) and "
    "where it loses digits the engine keeps for inputs from 1e-30 to 1e30 in size; all, "
    "also where it loses them past that (a part overflows at 1e77); domain, where it holds "
    "only; none.",
)
def diff(
    source: Source,
    wrt: tuple[str, ...],
    fmt: str,
    exact: bool,
    order: str,
    mixed: bool,
    shapes: tuple[str, ...],
    steps: bool,
    implicit: str | None,
    notes: str,
) -> None:
    """Print the derivative of SOURCE as an expression in the language.

    As a textbook writes it (x**x*(log(x) + 1)); where that differs from the engine's
    derivative at some points, a comment under it says where it holds (# x > 0). With one
    --wrt, the output is a program whose result is the derivative: give it back to
    `nanograd grad` to evaluate it. A name of SOURCE that the derivative uses twice is kept,
    with its definition; another sub-expression that repeats is bound once to a name (t1).
    Without --wrt, every input's derivative is printed, one `d_NAME = ...` line each.
    --order 2: the second derivative (`d2_NAME = ...`), and so on; with --mixed the mixed
    ones too (`d2_x_y = ...`, by x then y). --steps: how a course
    derives it, one rule a line; --implicit y --wrt x: dy/dx where SOURCE relates x and y.
    """
    program = load_program(source, report)
    shaped = api.named_shapes(shapes)
    derivative = api.diff(program, wrt, fmt, exact, shaped, order, steps, implicit, notes, mixed)
    click.echo(str(derivative))
    remark = api.diff_note(program, implicit)
    if remark:
        note(remark.removeprefix("note: "))
