"""`nanograd repl`: the interactive session."""

from __future__ import annotations

import click

from .._session import main as session
from .options import color_option
from .output import rich_terminal

EXAMPLES = """
\b
Examples:
  nanograd repl
  nanograd repl < session.txt
  nanograd repl --color never
"""


@click.command(epilog=EXAMPLES, short_help="Type expressions and see their values and gradients.")
@color_option
@click.pass_context
def repl(ctx: click.Context) -> None:
    """Type expressions and see their values and gradients, line after line.

    \b
    x = 2          gives the input x its value
    q = x*y        defines q for the lines that follow
    x*y + tanh(x)  prints the value and the gradient by each input it reads
    :help          lists the commands (:diff, :hessian, :explain, :draw, ...)

    On a terminal: history, completion (Tab) and multi-line input while a parenthesis is
    open; Ctrl-C drops the line, Ctrl-D leaves. From a pipe or file, each line's results
    print plainly and errors name the line; the exit code is the highest of the failed
    lines' (2 for bad input), or 0. --color chooses Rich's tables (always) or plain text
    (never), as for every command.
    """
    ctx.exit(session(rich_terminal()))
