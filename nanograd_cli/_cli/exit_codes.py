"""Failures become one `error:` line on standard error and an exit code: here, and only here."""

from __future__ import annotations

import errno
import os
import shlex
import sys
from collections.abc import Callable

import click

from .._sources import glued_source
from .._streams import silence_stdout
from ..errors import NanogradError, NotAnInput, StreamError
from .output import report

# What writing to a full disk, a closed stream or a broken device raises.
OUTPUT_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EBADF, errno.EFBIG)


def exit_code(run: Callable[[], int | None], args: list[str], commands: list[str]) -> int:
    """Run the command line; every failure is reported in one line and gives its exit code.
    `commands` are the group's command names, for hints that name the command."""
    try:
        try:
            code = run()
        except click.exceptions.NoArgsIsHelpError as error:  # no command: a usage error
            click.echo(error.ctx.get_help(), err=True)
            code = 2
        sys.stdout.flush()
    except click.exceptions.Exit as done:
        code = done.exit_code
    except click.ClickException as error:
        report(f"error: {error.format_message()}")
        leading_dash = leading_dash_source(error, args, commands) or options_after_dashes(
            error, args
        )
        if leading_dash:
            report(leading_dash)
        # a usage error's context is the command's (a FileError has none)
        if isinstance(error, click.UsageError) and error.ctx:
            hint = error.ctx.command_path
        else:
            hint = "nanograd"
        report(f"Try '{hint} --help' for help.")
        code = 2
    except StreamError as error:
        report(f"error: {error}")
        code = error.exit_code
        silence_stdout()
    except NanogradError as error:
        report(f"error: {describe(error)}")
        leading_dash = leading_dash_source(error, args, commands)
        if leading_dash:
            report(leading_dash)
        code = error.exit_code
    except BrokenPipeError:
        # The reader went away (| head -1): stop quietly.
        code = 0
        silence_stdout()
    except (KeyboardInterrupt, click.exceptions.Abort):
        code = 130
    except MemoryError:
        report("error: out of memory")
        code = 1
    except Exception as error:
        if isinstance(error, OSError) and error.errno in OUTPUT_ERRORS:
            report(f"error: cannot write standard output: {error.strerror}")
            silence_stdout()
        elif os.environ.get("NANOGRAD_DEBUG"):
            raise
        else:
            report(f"error: internal error: {type(error).__name__}: {error}")
            report("This is a bug; set NANOGRAD_DEBUG=1 to see the traceback.")
        code = 1
    return code or 0


def describe(error: NanogradError) -> str:
    """An error's message for the command line, in its words: the option a name was given
    to, and how to fix it there."""
    if isinstance(error, NotAnInput):
        return f"--{error.option} {error.name}: {error}"
    hint = getattr(error, "hint", None)
    return f"{error}: {hint}" if hint else str(error)


# The options that give the source.
SOURCE_OPTIONS = ("-e", "--expr", "-f", "--file")


def leading_dash_source(error: Exception, args: list[str], commands: list[str]) -> str | None:
    """For `nanograd grad "-x**2"`, read as options, or `"-exp(x)"` and `"-fx"`, read as
    `-e "xp(x)"` and `-f x`: how to pass a source that begins with -."""
    if isinstance(error, click.NoSuchOption) and not error.option_name.startswith("--"):
        source = next((a for a in args if a.startswith(error.option_name)), None)
        command = error.ctx.command_path if error.ctx else None
        if len(args) > 1 and not args[1].startswith("-"):
            return None  # a SOURCE came first: the option is a typo, not a source
        if any(a in SOURCE_OPTIONS or a.startswith(("--expr=", "--file=")) for a in args):
            return None  # -e or -f gave the source
    elif isinstance(error, NanogradError):
        source = glued_source(args, error)
        command = next((f"nanograd {a}" for a in args if a in commands), None)
    else:
        return None
    if source is None or command is None:
        return None
    typed = args[args.index(command.split()[-1]) + 1 :] if command.split()[-1] in args else []
    options = [a for i, a in enumerate(typed) if a != source or source in typed[:i]]
    last = shlex.join([*command.split(), *options, "--", source])
    return (
        f"A source that begins with - goes after -e: {command} -e {source!r} "
        f"(or last, after the options and --: {last})"
    )


def options_after_dashes(error: Exception, args: list[str]) -> str | None:
    """For `nanograd check -- "-x" --x 1`, where the options after -- are read as extra
    arguments: the command line with them before --."""
    if "--" not in args or not isinstance(error, click.UsageError):
        return None
    before, after = args[: args.index("--")], args[args.index("--") + 1 :]
    if not error.format_message().startswith("Got unexpected extra argument") or len(after) < 2:
        return None
    moved = shlex.join(["nanograd", *before, *after[1:], "--", after[0]])
    return f"Options go before --, the source after it: {moved}"
