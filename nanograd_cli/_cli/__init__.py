"""The command line: click wiring over `api`, a module per command, loaded only when it runs.

Each command's module declares its options (the shared ones come from `options`), makes one
api call and prints the result with `output`; `errors` turns every failure into an exit code.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys

import click

from .. import __version__
from .._output_files import new_run
from .._streams import guard as guard_streams
from ..errors import nearest, speaking
from .exit_codes import exit_code
from .options import color_option, quiet_option

# Each command, by the module that holds it (and is named after it).
COMMANDS = [
    "check",
    "completion",
    "diff",
    "draw",
    "explain",
    "fit",
    "grad",
    "hessian",
    "minimize",
    "plot",
    "repl",
    "taylor",
]


class Commands(click.Group):
    """A group whose commands are imported only when asked for, so a run pays for one."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return COMMANDS

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        return getattr(importlib.import_module(f"{__name__}.{name}"), name)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """The command named first in `args`; a name that is none of them gets the nearest."""
        name = args[0] if args else ""
        if name in COMMANDS or name.startswith("-") or ctx.resilient_parsing:
            return super().resolve_command(ctx, args)
        close = nearest(name, COMMANDS)
        if name == "help":
            hint = ": for help, nanograd --help, or nanograd COMMAND --help"
        elif close:
            hint = f": did you mean {close}?"
        else:
            hint = f"; the commands are {', '.join(COMMANDS)}"
        ctx.fail(f"No such command {name!r}{hint}")


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@color_option
@quiet_option
@click.version_option(
    __version__, "--version", prog_name="nanograd", message="%(prog)s %(version)s"
)
def cli() -> None:
    """Differentiate expressions: values, gradients and pictures of the computation graph.

    \b
    Examples:
      nanograd grad "x*y + tanh(x)" --x 2 --y 3
      nanograd grad model.txt --x 0.5 --format json
      echo "sin(x)**2" | nanograd grad - --x 1 --format csv
      nanograd repl
    """


def main(argv: list[str] | None = None) -> None:
    """Run the command line; map every failure to a one-line `error:` and an exit code."""
    guard_streams()
    completing = os.environ.get("_NANOGRAD_COMPLETE")
    if completing:
        from click.shell_completion import add_completion_class, shell_complete

        from .completion import WholeFish

        add_completion_class(WholeFish)
        sys.exit(shell_complete(cli, {}, "nanograd", "_NANOGRAD_COMPLETE", completing))
    args = sys.argv[1:] if argv is None else argv

    def run() -> int | None:
        new_run()
        # Not cli.main(): it would print a blank line on Ctrl-C.
        with cli.make_context("nanograd", args) as ctx:
            return cli.invoke(ctx)

    with speaking("cli"):
        code = exit_code(run, args, COMMANDS)
    if code == 130 and argv is None:  # Ctrl-C, in the process of its own
        _end_now(code)
    sys.exit(code)


def command() -> None:
    """The `nanograd` program and `python -m nanograd_cli`: `main`, in a process of its own,
    which it ends as `_end_now` does."""
    try:
        main()
    except SystemExit as done:
        _end_now(done.code if isinstance(done.code, int) else 1)


def _end_now(code: int) -> None:
    """Exit past the interpreter's teardown, its output flushed: threads of a library still
    there (PyArrow's, one reading a pipe ahead) can abort the process as it ends (SIGABRT,
    "terminate called without an active exception", apache/arrow#34314): on Ctrl-C, where a
    shell expects 130, and, now and then on a loaded machine, after a fit read two CSV files.
    Every file was written whole or removed before this (`OutputFile`)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # (a closed pipe, say)
            stream.flush()
    os._exit(code)
