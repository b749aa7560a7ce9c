"""The command classes: a command that reads a source, and one that also takes `--NAME VALUE`
for any input NAME."""

from __future__ import annotations

import sys
from collections.abc import Collection
from typing import TYPE_CHECKING

import click

from .. import _streams as streams
from .. import errors
from .._program import Program
from .._sources import INPUT_NAME, RANDOM_CALL, Source, input_values, load_program
from ..errors import BadInputValue, InputError, NanogradError, SeveralOutputs, UnknownInputs
from .output import report

if TYPE_CHECKING:
    from ..results import InputValue
    from ..sampling import Range


class SourceCommand(click.Command):
    """A command that reads a source: SOURCE, `-e TEXT` or `-f PATH`, exactly one of them,
    passed on as one `source` (a sources.Source). With none of them, a source piped in or
    redirected from a file is read from standard input, as `-` would (jq does the same). An
    unknown option gets its nearest real one
    (`--fromat`: `--format`), and `--NAME` where no option is near, an input's value, is told
    that this command takes none."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        typed = list(args)  # click's parser consumes `args`
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as error:
            name = error.option_name
            own = {o for p in self.get_params(ctx) for o in p.opts if o.startswith("--")}
            close = nearest(name[2:], own) if name.startswith("--") else []
            if not name.startswith("--") and name in typed and INPUT_NAME.fullmatch(name[1:]):
                two_dashes = f"-{name}" if isinstance(self, InputsCommand) else None
                if name == "-o":  # `explain ... -o out.txt`: a command that writes no file
                    message = (
                        f"No such option '-o': {ctx.command_path} writes to standard output "
                        "(to a file: > FILE)"
                    )
                    raise click.NoSuchOption(name, message, ctx=ctx) from None
                if two_dashes:  # `-x 1`: an input's value, with one dash
                    message = f"No such option '{name}': an input's value is {two_dashes} VALUE"
                    raise click.NoSuchOption(name, message, ctx=ctx) from None
            if close or not name.startswith("--") or not INPUT_NAME.fullmatch(name[2:]):
                raise click.NoSuchOption(name, possibilities=close, ctx=ctx) from None
            if as_format(name[2:], ctx):  # diff --latex, diff --json
                message = f"No such option: {name}{as_format(name[2:], ctx)}"
                raise click.NoSuchOption(name, message, ctx=ctx) from None
            if name in other_options(ctx):  # diff --strict
                raise click.UsageError(f"{ctx.command_path} has no {name} option", ctx) from None
            shapes = (
                f"; an array input's shape is --shape {name[2:]}=DIMS" if "--shape" in own else ""
            )
            raise click.UsageError(
                f"{ctx.command_path} takes no input values ({name}): for the value of SOURCE "
                f"at a point, use nanograd grad{shapes}",
                ctx,
            ) from None
        except click.UsageError as error:  # the parser's own (`--format` without a value)
            error.ctx = error.ctx or ctx
            raise

    def invoke(self, ctx: click.Context):
        given = [
            Source(kind, value)
            for kind, value in (
                ("either", ctx.params.get("source")),
                ("text", ctx.params.pop("expr", None)),
                ("file", ctx.params.pop("file", None)),
            )
            if value is not None
        ]
        tables = (ctx.params.get("points"), ctx.params.get("data"), ctx.params.get("predict"))
        if not given and ctx.params.get("load") is not None:  # fit --load: the file's model
            ctx.params["source"] = None
            return super().invoke(ctx)
        if not given and _stdin_is_piped() and "-" not in tables:
            given = [Source("implied", "-")]
        if not given:
            raise click.UsageError(
                "give a source: SOURCE (- for standard input), -e TEXT or -f PATH", ctx
            )
        if len(given) > 1:
            raise click.UsageError("give the source once: SOURCE, -e TEXT or -f PATH", ctx)
        ctx.params["source"] = given[0]
        # `--NAME 1`, NAME Greek: the source's error, where it uses NAME, comes first
        if "no_name" in ctx.meta:
            load_program(given[0])
            raise click.NoSuchOption(ctx.meta["no_name"], ctx=ctx)
        try:
            return super().invoke(ctx)
        except SeveralOutputs as error:
            raise error.reworded(ctx.command_path, "nanograd grad") from None


class InputsCommand(SourceCommand):
    """A command that also takes `--NAME VALUE` (or `--NAME=VALUE`) for any input NAME.

    The command's own long options (help included) are matched exactly, never abbreviated;
    every other `--NAME` is an input, and the argument after it is its value even when it
    starts with `-`. The pairs are in `ctx.meta["inputs"]`.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        params = self.get_params(ctx)
        own = {o for p in params for o in p.opts + p.secondary_opts if o.startswith("--")}
        with_value = {o for p in params if not getattr(p, "is_flag", True) for o in p.opts}
        rest: list[str] = []
        inputs: list[tuple[str, str]] = []
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                rest += args[i:]
                break
            if not arg.startswith("--"):
                rest.append(arg)
                i += 1
                continue
            name, equals, value = arg[2:].partition("=")
            if f"--{name}" in own:
                rest.append(arg)
                if f"--{name}" in with_value and not equals and i + 1 < len(args):
                    rest.append(args[i + 1])
                    i += 1
            elif not INPUT_NAME.fullmatch(name) and name.isidentifier() and not nearest(name, own):
                # `--NAME 1`, NAME Greek or the like: no name of the language, which the source's
                # own error says first where it uses it
                ctx.meta["no_name"] = arg
                if not equals and i + 1 < len(args) and not _is_option(args[i + 1], own):
                    i += 1
            elif not INPUT_NAME.fullmatch(name):
                raise click.NoSuchOption(arg, possibilities=nearest(name, own), ctx=ctx)
            else:
                if not equals:
                    # `--json --x 1`: the next option is no value
                    followed = i + 1 < len(args) and _is_option(args[i + 1], own)
                    if i + 1 >= len(args) or followed:
                        if ctx.resilient_parsing:  # completing: the value is being typed
                            i += 1
                            continue
                        if f"--{name}" in other_options(ctx):  # plot --strict
                            raise click.UsageError(f"{ctx.command_path} has no {arg} option", ctx)
                        if name == "version":  # nanograd's own option
                            message = "No such option: --version (the version: nanograd --version)"
                            raise click.NoSuchOption(arg, message, ctx=ctx)
                        if nearest(name, own):  # `--strcit`: an option mistyped, no input
                            raise click.NoSuchOption(arg, possibilities=nearest(name, own), ctx=ctx)
                        raise click.BadOptionUsage(
                            arg, f"{arg} needs a value: {arg} VALUE{as_format(name, ctx)}", ctx=ctx
                        )
                    i += 1
                    value = args[i]
                inputs.append((name, value))
            i += 1
        ctx.meta["inputs"] = inputs
        return super().parse_args(ctx, rest)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (UnknownInputs, BadInputValue) as error:
            own = {o for p in self.get_params(ctx) for o in p.opts if o.startswith("--")}
            for name in error.names:
                # (no nearest option where the message names the one meant: --epochs)
                close = None if getattr(error, "meant", "") else nearest(name, own)
                if close and (isinstance(error, UnknownInputs) or not _an_input(ctx, name)):
                    raise InputError(
                        f"--{name} is no option of {ctx.command.name} and no input of the "
                        f"source: did you mean {close[0]}?"
                    ) from None
                if close:
                    raise InputError(f"{error}; did you mean {close[0]}?") from None
                if f"--{name}" in other_options(ctx):
                    raise InputError(f"{ctx.command_path} has no --{name} option") from None
            raise

    def shell_complete(self, ctx: click.Context, incomplete: str):
        """Options, and beyond them `--NAME` for each input of the SOURCE already typed."""
        from click.shell_completion import CompletionItem  # only when completing

        items = super().shell_complete(ctx, incomplete)
        if not incomplete.startswith("-"):
            return items
        given = {name for name, _ in ctx.meta.get("inputs", ())} | set(data_columns(ctx))
        names = [f"--{n}" for n in typed_inputs(ctx) if n not in given]
        return [CompletionItem(n, help="input") for n in names if n.startswith(incomplete)] + items


def _an_input(ctx: click.Context, name: str) -> bool:
    """Whether `name` may be an input of the source: true where the source cannot be read
    again (standard input) or parsed whole (--each-line)."""
    source = ctx.params.get("source")
    if not isinstance(source, Source) or source.stdin or ctx.params.get("each_line"):
        return True
    try:
        return name in load_program(source).inputs
    except (NanogradError, OSError):
        return True


def _is_option(arg: str, own: set[str]) -> bool:
    """Whether an argument is an option (the command's, or an input's `--NAME`), not a value:
    a value may start with a dash (-1, -x), not with two and a name."""
    name = arg.partition("=")[0]
    return name in own or (name.startswith("--") and bool(INPUT_NAME.fullmatch(name[2:])))


def nearest(name: str, options) -> list[str]:
    """The command's option nearest to `--name`, if one is near: what a typo meant."""
    # compared without the dashes, which would make --t near --wrt
    bare = {o.lstrip("-"): o for o in options}
    close = errors.nearest(name.lstrip("-"), bare, cutoff=0.65)
    return [bare[close]] if close else []


def as_format(name: str, ctx: click.Context) -> str:
    """For `--json`, `--latex` and the like, read as an input: the option meant, where the
    command's --format has that choice."""
    formats = {
        "json": "JSON",
        "csv": "CSV",
        "table": "a table",
        "latex": "LaTeX",
        "tex": "LaTeX",
        "markdown": "Markdown",
        "md": "Markdown",
    }
    if name not in formats:
        return ""
    choices = next(
        (
            list(p.type.choices)
            for p in ctx.command.params
            if "--format" in p.opts and isinstance(p.type, click.Choice)
        ),
        [],
    )
    meant = {"tex": "latex", "md": "markdown"}.get(name, name)
    if meant in choices:
        return f"; for {formats[name]}, give --format {meant}"
    command = ctx.command_path
    if not choices:
        return f"; {command} has no --format"
    written = f"{', '.join(choices[:-1])} or {choices[-1]}"
    return f"; {command} writes {written} (--format), not {formats[name]}"


def other_options(ctx: click.Context) -> set[str]:
    """The long options of every command of the group."""
    group = ctx.find_root().command
    assert isinstance(group, click.Group)  # nanograd's group of commands
    commands = [group.get_command(ctx, name) for name in group.list_commands(ctx)]
    return {
        o for c in commands if c is not None for p in c.params for o in p.opts if o.startswith("--")
    }


def one_standard_input(source: Source, path: str | None, option: str) -> None:
    """Refuse a source and a table (`option` FILE) that would both be read from stdin."""
    if path == "-" and source.stdin:
        raise InputError(f"the source and {option} - cannot both come from standard input")


def _stdin_is_piped() -> bool:
    """Whether standard input is open and not a terminal: a pipe, a file, /dev/null."""
    try:
        return not (sys.stdin is None or streams.closed(sys.stdin) or sys.stdin.isatty())
    except ValueError:  # closed by the program itself
        return False


def program_and_point(
    ctx: click.Context,
    source: Source,
    var: tuple[str, ...],
    seed: int | None = None,
    draws: bool = False,
) -> tuple[Program, dict[str, InputValue]]:
    """The source parsed, and the point that `--NAME VALUE` and `--var NAME=VALUE` give
    (random starts drawn with `seed`, by a command that `draws` them), over the values of
    `--load FILE` of its inputs."""
    program = load_program(source, report)
    return program, given_values(ctx, var, program.inputs, seed, draws=draws)


def values_and_ranges(
    ctx: click.Context, var: tuple[str, ...], program: Program
) -> tuple[dict[str, InputValue], dict[str, Range]]:
    """The values and the ranges (`--x LO:HI[:N]`) of `--NAME` and `--var`, the values over
    those `--load FILE` saved of the program's inputs given no range."""
    from ..sampling import parse_inputs  # (NumPy: only for the commands that sweep)

    fixed, ranges = parse_inputs(ctx.meta["inputs"], var)
    held = [n for n in program.inputs if n not in ranges]
    return given_values(ctx, var, held, values=fixed), ranges


# Where ctx.meta keeps the file of `--load FILE` (cli/options.load_option).
LOAD = "nanograd.load"


def given_values(
    ctx: click.Context,
    var: tuple[str, ...],
    inputs: Collection[str] | None,
    seed: int | None = None,
    values: dict[str, InputValue] | None = None,
    draws: bool = False,
) -> dict[str, InputValue]:
    """The point that `--NAME VALUE` and `--var NAME=VALUE` give (or `values`, where the
    command has read them), over the values that `--load FILE` saved of the names in
    `inputs` (every name, with None): a value given on the command line wins."""
    if values is None:
        values = input_values(ctx.meta["inputs"], var, report, seed, draws)
    path = ctx.meta.get(LOAD)
    if path is None:
        return values
    from .._api import load_point

    loaded = load_point(path)
    kept = {n: v for n, v in loaded.items() if inputs is None or n in inputs}
    return {**{n: v for n, v in kept.items() if n not in values}, **values}


def random_starts(ctx: click.Context, var: tuple[str, ...]) -> bool:
    """Whether an input's value calls for a random start, `normal(16, 2)` (or is meant to:
    its value says if it is not one)."""
    texts = [text for _, text in ctx.meta["inputs"]] + [item.partition("=")[2] for item in var]
    return any(RANDOM_CALL.search(text) for text in texts)


def typed_inputs(ctx: click.Context) -> list[str]:
    """The inputs of the source typed so far on the command line (for completion)."""
    typed = [(kind, ctx.params.get(key)) for kind, key in (("text", "expr"), ("file", "file"))]
    # While an option waits for its value, click leaves SOURCE among the unparsed arguments.
    typed += [("either", a) for a in [ctx.params.get("source"), *ctx.args] if a != "-"]
    for kind, value in typed:
        if value:
            try:
                return load_program(Source(kind, value)).inputs
            except (NanogradError, OSError):
                return []
    return []


def data_columns(ctx: click.Context) -> list[str]:
    """The columns of the file that `--data` names (fit, minimize), which the source reads as
    data, not as inputs given by --NAME (for completion)."""
    from .._io import input_format
    from .._io.readers import open_points

    path = ctx.params.get("data")
    if not path or path == "-":
        return []
    try:
        with open_points(path, input_format(path, ctx.params.get("data_format"))) as reader:
            return list(reader.columns)
    except (NanogradError, OSError, ValueError):
        return []


def complete_inputs(ctx: click.Context, param: click.Parameter, incomplete: str):
    """--wrt completes as the inputs of the source typed."""
    return [n for n in typed_inputs(ctx) if n.startswith(incomplete)]


def complete_file(ctx: click.Context, param: click.Parameter, incomplete: str):
    """SOURCE completes as a file name (the shell lists the files)."""
    from click.shell_completion import CompletionItem

    return [CompletionItem(incomplete, type="file")]
