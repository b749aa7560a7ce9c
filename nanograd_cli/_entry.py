"""The `nanograd` program's entry: Ctrl-C while the command line is still loading (about a
tenth of a second of imports) ends the run as Ctrl-C later does, exit 130 and no traceback."""

from __future__ import annotations

import os
import signal


def _while_loading(signum: int, frame: object) -> None:
    os._exit(130)


def command() -> None:
    """Load the command line with Ctrl-C ending the run quietly, then run it (`_cli.command`,
    which turns Ctrl-C into exit 130 itself). A SIGINT ignored by the parent stays ignored."""
    ours = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if ours:
        signal.signal(signal.SIGINT, _while_loading)
    from ._cli import command as run

    if ours:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    run()
