"""The options that several commands share, as decorators, so each is declared once."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

import click

from .command import LOAD, complete_file, complete_inputs
from .output import COLOR, NAN, QUIET

# A file named on the command line: completed as file names. No check is made here (a
# directory, an unreadable file): reading or writing it says what is wrong, as for SOURCE.
PATH = click.Path(readable=False, allow_dash=True)


def output_option(*decls: str, extensions: Callable[[], Iterable[str]], **attrs):
    """An option naming a file to write, in the format of its extension: completed as file
    names, and a name typed up to its dot (`graph.`) as each of `extensions()` (".svg", ...),
    looked up only when completing or given. The file names come first: bash's script starts
    afresh at them, and lists files only where no name follows. A name no file can be
    written to (one of `extensions()` alone, a directory) is refused before the run."""

    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is not None and value != "-":
            from .._output_files import check_output

            check_output(value, extensions())
        return value

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str):
        from click.shell_completion import CompletionItem  # only when completing

        stem, dot, typed = incomplete.rpartition(".")
        named = []
        if dot and stem and "/" not in typed:
            known = dict.fromkeys(extensions())
            named = [CompletionItem(stem + e) for e in known if e.startswith(f".{typed}")]
        return [CompletionItem(incomplete, type="file"), *named]

    return click.option(*decls, type=PATH, shell_complete=complete, callback=check, **attrs)


class Renamed(click.Option):
    """An option that also answers to an earlier name (`--method`, once `--optimizer`): its
    errors name it by its own name, the first."""

    def get_error_hint(self, ctx: click.Context | None) -> str:
        return f"'{self.opts[0]}'"


_Number = TypeVar("_Number", bound=float)


class _InWords(Generic[_Number]):
    """A click number range whose failure is said in words: `-1 is not at least 0`."""

    number: click.ParamType
    min: _Number | None  # as click's range of _Number has it
    min_open: bool

    def convert(self, value, param, ctx):
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            number = self.number.convert(value, param, ctx)  # fails if it is no number
            relation = "more than" if self.min_open else "at least"
            self.fail(f"{number:g} is not {relation} {self.min:g}", param, ctx)


class AtLeast(_InWords[float], click.FloatRange):
    """A float at least `min` (more than it, with `min_open`); not nan, which compares as
    neither."""

    number = click.FLOAT

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            relation = "more than" if self.min_open else "at least"
            self.fail(f"nan is not {relation} {self.min:g}", param, ctx)
        return number


class CountFrom(_InWords[int], click.IntRange):
    """An integer at least `min`."""

    number = click.INT


def _setting(option: str, key: str, choices: list[str], help: str):
    """An option that the printing reads (output.setting), not the command: its choice is
    kept in the context's meta under `key`, which every context of a run shares, so that it
    may be given before the command too."""

    def keep(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
        if value is not None:
            ctx.meta[key] = value

    type = click.Choice(choices)
    return click.option(option, type=type, expose_value=False, callback=keep, help=help)


# --color auto|always|never: whether tables and plots on standard output are drawn with
# Rich's boxes and colour (output.rich_terminal).
color_option = _setting(
    "--color",
    COLOR,
    ["auto", "always", "never"],
    "Rich tables and colour on standard output (and colour in the progress shown on "
    "standard error): always, never, or auto: on a terminal, unless NO_COLOR is set, or "
    "wherever FORCE_COLOR is. [default: auto]",
)


def _keep_quiet(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[QUIET] = "quiet"


# -q/--quiet: no notes and no progress on standard error (output.quiet), before the command
# or after it.
quiet_option = click.option(
    "-q",
    "--quiet",
    is_flag=True,
    expose_value=False,
    callback=_keep_quiet,
    help="No notes and no progress on standard error; warnings and errors still.",
)

# --nan string|null: how JSON writes nan, inf and -inf (output.json_nulls).
nan_option = _setting(
    "--nan",
    NAN,
    ["string", "null"],
    'JSON\'s non-finite numbers: the strings "nan", "inf", "-inf", or null (for tools that '
    "type a column by its values, as DuckDB does). [default: string]",
)


def bound_option(help: str):
    """--bound NAME=LO:HI (repeatable), with the command's own words for what it does."""
    return click.option("--bound", "bounds", multiple=True, metavar="NAME=LO:HI", help=help)


def check_digits(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--digits as the api reads it (`full` in any case), refused in click's words."""
    from .. import _api as api
    from ..errors import InputError

    try:
        return api.digits(value)
    except InputError:
        raise click.BadParameter(
            f"{value!r} is neither a number of digits from 1 to 17 nor full"
        ) from None


def digits_option(help: str):
    """--digits N|full, with the command's own words for where it applies."""
    return click.option("--digits", metavar="[N|full]", callback=check_digits, help=help)


def table_format(command):
    """--format table|json|csv, --digits and --nan: the output of the commands that report
    numbers."""
    command = nan_option(command)
    command = digits_option(
        "Significant digits of the numbers in a table (JSON and CSV keep every digit). "
        "[default: as many as fit a terminal's width; full precision in a pipe]"
    )(command)
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["table", "json", "csv"], case_sensitive=False),
        help="Output format. [default: table; plain text when not on a terminal]",
    )(command)


def strict_option(command):
    """--strict: the IEEE policy's warnings become errors (see api.non_finite)."""
    return click.option(
        "--strict",
        is_flag=True,
        help="Fail (exit 1) when an input is nan or inf, or an operation makes nan or inf out "
        "of finite numbers, instead of warning.",
    )(command)


def wrt_option(help: str):
    """--wrt NAME, repeatable, completed as the inputs of the source typed."""
    return click.option(
        "--wrt", multiple=True, metavar="NAME", shell_complete=complete_inputs, help=help
    )


def fix_option(help: str):
    """--fix NAME, repeatable: inputs held at their values."""
    return click.option(
        "--fix", multiple=True, metavar="NAME", shell_complete=complete_inputs, help=help
    )


def data_format_option(command):
    """--data-format: the format of --data FILE where its extension does not say."""
    return click.option(
        "--data-format",
        type=click.Choice(
            ["csv", "tsv", "parquet", "arrow", "jsonl", "json"], case_sensitive=False
        ),
        help="The format of --data FILE where its extension does not say. [default: by the "
        "extension, else csv]",
    )(command)


def source_options(command):
    """SOURCE, or -e TEXT, or -f PATH."""
    command = click.option(
        "-f",
        "--file",
        type=PATH,
        metavar="PATH",
        help="Read the source from this file (never text).",
    )(command)
    command = click.option(
        "-e", "--expr", metavar="TEXT", help="The source is this text (never a file)."
    )(command)
    return click.argument("source", required=False, shell_complete=complete_file)(command)


def source_and_inputs(command):
    """The arguments every command that evaluates shares: the source and --var (and, through
    InputsCommand, --NAME VALUE)."""
    command = click.option(
        "--var", multiple=True, metavar="NAME=VALUE", help="An input's value, for any name."
    )(command)
    return source_options(command)


def load_option(command):
    """--load FILE.json: inputs' values saved by `minimize --save` (or the parameters of a
    `fit --save`), kept in ctx.meta for `command.given_values`."""

    def keep(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
        if value is not None:
            ctx.meta[LOAD] = value

    return click.option(
        "--load",
        type=PATH,
        metavar="FILE.json",
        expose_value=False,
        callback=keep,
        help="Take the inputs' values from a point saved by minimize --save (or the "
        "parameters of a fit saved by fit --save): a value given as --NAME VALUE wins.",
    )(command)


def training_options(command):
    """minimize's --weight-decay and --lr-schedule with its settings, as torch.optim's
    (_training.py)."""
    options = [
        click.option(
            "--lr-min",
            type=AtLeast(min=0),
            metavar="NUMBER",
            help="cosine: the rate it comes down to (CosineAnnealingLR's eta_min). [default: 0]",
        ),
        click.option(
            "--lr-t-max",
            type=CountFrom(min=1),
            metavar="N",
            help="cosine: the steps from the rate down to --lr-min (CosineAnnealingLR's "
            "T_max). [default: --steps]",
        ),
        click.option(
            "--lr-gamma",
            type=AtLeast(min=0),
            metavar="NUMBER",
            help="step: the factor of each decay (StepLR's gamma). [default: 0.1]",
        ),
        click.option(
            "--lr-step-size",
            type=CountFrom(min=1),
            metavar="N",
            help="step: the rate is multiplied by --lr-gamma every N steps (StepLR's step_size).",
        ),
        click.option(
            "--lr-schedule",
            type=click.Choice(["constant", "step", "cosine"]),
            default="constant",
            show_default=True,
            help="The learning rate at each step, as PyTorch's StepLR and CosineAnnealingLR.",
        ),
        click.option(
            "--weight-decay",
            type=AtLeast(min=0),
            default=0.0,
            show_default=True,
            metavar="NUMBER",
            help="Add NUMBER times each parameter to its gradient (L2, as torch.optim's "
            "weight_decay).",
        ),
    ]
    for option in options:
        command = option(command)
    return command
