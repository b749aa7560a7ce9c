"""The command line: click commands over the library. Errors become exit codes here, only here."""

from __future__ import annotations

import io
import os
import re
import stat
import sys
from collections.abc import Iterator
from functools import partial

import click

from . import __version__
from .errors import InputError, NanogradError, NonFiniteResult, SourceError

INPUT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class InputsCommand(click.Command):
    """A command that also takes `--NAME VALUE` (or `--NAME=VALUE`) for any input NAME.

    The command's own long options are matched exactly, never abbreviated; every other
    `--NAME` is an input, and the argument after it is its value even when it starts with `-`.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        own = {o for p in self.params for o in p.opts if o.startswith("--")}
        with_value = {o for p in self.params if not getattr(p, "is_flag", True) for o in p.opts}
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
            elif not INPUT_NAME.fullmatch(name):
                raise click.NoSuchOption(arg, ctx=ctx)
            else:
                if not equals:
                    if i + 1 >= len(args):
                        raise click.BadOptionUsage(
                            arg, f"{arg} needs a value: {arg} VALUE", ctx=ctx
                        )
                    i += 1
                    value = args[i]
                inputs.append((name, value))
            i += 1
        ctx.meta["inputs"] = inputs
        return super().parse_args(ctx, rest)


def input_values(ctx: click.Context, var: tuple[str, ...]) -> dict[str, float]:
    """The values of `--NAME VALUE` and `--var NAME=VALUE`, as floats."""
    pairs = list(ctx.meta["inputs"])
    for item in var:
        name, equals, value = item.partition("=")
        if not equals or not INPUT_NAME.fullmatch(name):
            raise InputError(f"--var expects NAME=VALUE, got {item!r}")
        pairs.append((name, value))
    values: dict[str, float] = {}
    for name, text in pairs:
        if name in values:
            raise InputError(f"a value for {name} is given twice")
        try:
            values[name] = float(text)
        except ValueError:
            raise InputError(f"--{name} expects a number, got {text!r}") from None
    return values


def read_source(source: str) -> str:
    """SOURCE as text: `-` is standard input, an existing path is read, anything else is text."""
    if source == "-":
        return decode(sys.stdin.buffer.read(), "standard input")
    if os.path.exists(source):
        try:
            with open(source, "rb") as f:
                return decode(f.read(), source)
        except OSError as error:
            raise NanogradError(f"cannot read {source}: {error.strerror}") from None
    return source


def source_lines(source: str) -> Iterator[tuple[int, str]]:
    """SOURCE line by line (numbered from 1), read as it arrives: for `--each-line`."""
    if source == "-":
        for number, raw in enumerate(sys.stdin.buffer, 1):
            yield number, decode(raw, f"line {number}")
    else:
        yield from enumerate(read_source(source).splitlines(), 1)


def decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"{where} is not valid UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})"
        ) from None


def report(message: str) -> None:
    click.echo(message, err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
    """


GRAD_EXAMPLES = """
\b
Examples:
  nanograd grad "x*y + tanh(x)" --x 2 --y 3
  nanograd grad "x*y + tanh(x)" --x 2 --y 3 --format json
  nanograd grad --x 1 -- "-x**2"
  nanograd grad "x*format" --x 1 --var format=2
  printf 'x*x\\nsin(x)\\n' | nanograd grad - --each-line --x 1 --format csv
"""


# The output formats of the commands that report numbers.
table_format = click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv"]),
    help="Output format. [default: table; plain text when not on a terminal]",
)


def source_and_inputs(command):
    """The arguments every command shares: SOURCE and --var (and, through InputsCommand,
    --NAME VALUE)."""
    command = click.option(
        "--var", multiple=True, metavar="NAME=VALUE", help="An input's value, for any name."
    )(command)
    return click.argument("source")(command)


@cli.command(cls=InputsCommand, epilog=GRAD_EXAMPLES)
@source_and_inputs
@table_format
@click.option("--wrt", multiple=True, metavar="NAME", help="Show only these gradients.")
@click.option("--each-line", is_flag=True, help="Treat every line as its own expression.")
@click.option("--strict", is_flag=True, help="Fail (exit 1) when a result is nan or inf.")
@click.option(
    "--points",
    metavar="FILE",
    help="A CSV file (- for standard input) with a header of input names and a point per "
    "row: one result per row, computed for all rows at once.",
)
@click.option(
    "--mode",
    type=click.Choice(["reverse", "forward"]),
    default="reverse",
    show_default=True,
    help="Reverse mode (one pass for all inputs) or forward mode (one pass per input).",
)
@click.pass_context
def grad(
    ctx: click.Context,
    source: str,
    fmt: str | None,
    wrt: tuple[str, ...],
    each_line: bool,
    strict: bool,
    points: str | None,
    mode: str,
    var: tuple[str, ...],
) -> None:
    """Print the value of SOURCE and its gradient with respect to every input.

    SOURCE is an expression or program, the path of a file holding one, or - for standard
    input. Give each input's value as --NAME VALUE.
    """
    from .language import parse

    values = input_values(ctx, var)
    if each_line and points is not None:
        raise InputError("--each-line and --points cannot be used together")
    if each_line:
        ctx.exit(grad_each_line(source, values, fmt, wrt, strict))
    program = parse(read_source(source))
    check_wrt(wrt, program.inputs)
    if points is not None:
        grad_points(program, points, values, fmt or "csv", wrt, strict)
        return
    if mode == "forward":
        from .forward import tangents
        from .render.text import Result

        data = program.values(values)
        warn_non_finite(program.first_non_finite(data), strict)
        gradients = tangents(program, data)
        shown = wrt or program.inputs
        result = Result(
            data[program.result],
            {n: values[n] for n in program.inputs},
            {n: gradients[n] for n in shown},
        )
    else:
        evaluation = program.gradients(values)
        warn_non_finite(evaluation.first_non_finite(), strict)
        result = as_result(evaluation, wrt)
    emit(fmt, result, wrt or program.inputs)


DRAW_EXAMPLES = """
\b
Examples:
  nanograd draw "x*y + tanh(x)" --x 2 --y 3 -o graph.svg
  nanograd draw model.txt --x -4 --y 2 -o graph.png --rankdir TB
  nanograd draw model.txt --x -4 --y 2 | dot -Tsvg > graph.svg
"""

# Past this many nodes in the picture, suggest how to make it readable.
BIG_GRAPH = 1000


@cli.command(cls=InputsCommand, epilog=DRAW_EXAMPLES)
@source_and_inputs
@click.option(
    "-o",
    "--output",
    default="-",
    metavar="FILE",
    help="Where to write; the format follows the extension (.svg .png .pdf .dot .gv). "
    "[default: -, DOT text on standard output]",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["svg", "png", "pdf", "dot"]),
    help="Output format, whatever the extension.",
)
@click.option(
    "--rankdir",
    type=click.Choice(["LR", "TB"]),
    default="LR",
    show_default=True,
    help="Lay the graph out left to right or top to bottom.",
)
@click.option("--hide-constants", is_flag=True, help="Fold constants into their operations.")
@click.pass_context
def draw(
    ctx: click.Context,
    source: str,
    var: tuple[str, ...],
    output: str,
    fmt: str | None,
    rankdir: str,
    hide_constants: bool,
) -> None:
    """Draw the computation graph of SOURCE with every node's data and gradient.

    Gradients are computed first. Value nodes show their name, data and gradient; each
    operation is its own node. Inputs have a green border, the result a blue one, constants
    are grey; the darker a node's fill, the larger its gradient.
    """
    from .language import parse
    from .output import write_atomically
    from .render.graph import draw_evaluation, render

    fmt = fmt or format_of(output)
    evaluation = parse(read_source(source)).gradients(input_values(ctx, var))
    warn_non_finite(evaluation.first_non_finite(), strict=False)
    dot = draw_evaluation(evaluation, rankdir, hide_constants)
    nodes = sum(1 for line in dot.body if "label=" in line)
    if nodes > BIG_GRAPH:
        tips = ["--rankdir TB"] + ([] if hide_constants else ["--hide-constants"])
        report(
            f"warning: the graph has {nodes} nodes; "
            f"for a picture you can read, try {' or '.join(tips)}"
        )
    data = render(dot.source, fmt)
    if output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        write_atomically(output, data)


def format_of(output: str) -> str:
    """The picture format that the name of the output file asks for."""
    from .render.graph import EXTENSIONS

    if output == "-":
        return "dot"
    fmt = EXTENSIONS.get(os.path.splitext(output)[1].lower())
    if fmt is None:
        raise InputError(
            f"cannot tell the format of {output} from its extension: "
            "use .svg, .png, .pdf, .dot or .gv, or give --format"
        )
    return fmt


def grad_points(program, points: str, values, fmt: str, wrt, strict: bool) -> None:
    """`grad --points`: one result per CSV row, vectorized with NumPy."""
    from .points import run_points

    if fmt == "table":
        raise InputError("--points writes csv or json: give --format csv or --format json")
    try:
        stream = (
            io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8")
            if points == "-"
            else open(points, encoding="utf-8")
        )
    except OSError as error:
        raise NanogradError(f"cannot read {points}: {error.strerror}") from None
    out = sys.stdout
    with stream:
        try:
            run_points(
                program,
                stream,
                values,
                fmt,
                list(wrt),
                strict,
                write=lambda s: out.write(s + "\n"),
                warn=report,
                progress=partial(points_progress, regular_file_size(stream))
                if sys.stderr.isatty()
                else None,
            )
        except UnicodeDecodeError as error:
            raise InputError(f"--points {points} is not valid UTF-8 ({error.reason})") from None


def progress_display(*columns):
    """A Rich progress display on standard error (standard output carries the results),
    erased when it stops."""
    from rich.console import Console
    from rich.progress import Progress

    return Progress(*columns, console=Console(stderr=True), transient=True)


def regular_file_size(stream) -> int | None:
    """The size in bytes of the file behind `stream`, or None for a pipe or a terminal."""
    status = os.fstat(stream.fileno())
    return status.st_size if stat.S_ISREG(status.st_mode) else None


def points_progress(total: int | None):
    """A Rich display on standard error for --points runs that take a while: a bar with the
    rows done and the time left when the input's size is known (a file), else a spinner
    counting rows."""
    from rich.progress import (
        BarColumn,
        SpinnerColumn,
        TaskProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )

    rows = TextColumn("{task.fields[rows]:,} rows")
    if total:
        columns = (BarColumn(), TaskProgressColumn(), rows, TimeRemainingColumn())
    else:
        columns = (SpinnerColumn(), rows)
    bar = progress_display(*columns)
    task = bar.add_task("points", total=total or None, rows=0)
    bar.start()

    def update(done: int | None, characters: int) -> None:
        if done is None:
            bar.stop()
        else:
            bar.update(task, completed=characters if total else done, rows=done)

    return update


def grad_each_line(source, values, fmt, wrt, strict) -> int:
    """`grad --each-line`: one result per line; bad lines are reported and skipped."""
    from .language import parse
    from .render import text

    names = list(wrt or values)
    results = []
    status = 0
    if fmt == "csv":
        click.echo(text.csv_header(names))
    for number, line in source_lines(source):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            program = parse(line)
            evaluation = program.gradients({n: values[n] for n in program.inputs if n in values})
            warn_non_finite(evaluation.first_non_finite(), strict)
        except NanogradError as error:
            if isinstance(error, SourceError):
                report(f"error: line {number}, column {error.column}: {error.message}")
            else:
                report(f"error: line {number}: {error}")
            status = max(status, error.exit_code)
            continue
        result = as_result(evaluation, ())
        if fmt == "json":
            click.echo(text.to_json(result))
        elif fmt == "csv":
            click.echo(text.csv_row(result, names))
        else:
            results.append((line.strip(), result))
    if results:
        show_table(text.lines_table_rows(results, names))
    return status


HESSIAN_EXAMPLES = """
\b
Examples:
  nanograd hessian "x*y + tanh(x)" --x 2 --y 3
  nanograd hessian "(1 - x)**2 + 100*(y - x**2)**2" --x 1 --y 1 --format json
"""


@cli.command(cls=InputsCommand, epilog=HESSIAN_EXAMPLES)
@source_and_inputs
@table_format
@click.pass_context
def hessian(ctx: click.Context, source: str, var: tuple[str, ...], fmt: str | None) -> None:
    """Print the value, gradient and Hessian (matrix of second derivatives) of SOURCE.

    The Hessian is computed by automatic differentiation: the symbolic gradient is
    differentiated again in reverse mode (no finite differences).
    """
    from .language import parse
    from .render import text
    from .symbolic import hessian as second_derivatives

    program = parse(read_source(source))
    values = input_values(ctx, var)
    program.check_inputs(values)
    value, gradients, matrix = second_derivatives(program, values)
    if fmt == "json":
        click.echo(text.to_json_object({"value": value, "gradients": gradients, "hessian": matrix}))
    elif fmt == "csv":
        click.echo(text.hessian_csv(matrix))
    else:
        show_table(text.hessian_rows(value, gradients, matrix))


DIFF_EXAMPLES = """
\b
Examples:
  nanograd diff "x*y + tanh(x)" --wrt x
  nanograd diff model.txt --wrt x --wrt y
  nanograd diff "sin(x)**2" --wrt x --format latex
  nanograd grad "$(nanograd diff 'x**3' --wrt x)" --x 2
"""


@cli.command(epilog=DIFF_EXAMPLES)
@click.argument("source")
@click.option("--wrt", multiple=True, metavar="NAME", help="An input to differentiate by.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "latex"]),
    default="text",
    show_default=True,
    help="The language itself, or LaTeX.",
)
def diff(source: str, wrt: tuple[str, ...], fmt: str) -> None:
    """Print the derivative of SOURCE as an expression in the language.

    With one --wrt, the output is a program whose result is the derivative: give it back to
    `nanograd grad` to evaluate it. A sub-expression that repeats is bound once to a name.
    Without --wrt, every input's derivative is printed, one `d_NAME = ...` line each.
    """
    from .language import parse
    from .symbolic import derivative_names, gradient, to_source

    program = parse(read_source(source))
    check_wrt(wrt, program.inputs)
    names = list(wrt or program.inputs)
    if not names:
        raise InputError("the source has no inputs: its derivative is 0 by every name")
    gradients = gradient(program, names)
    labels = derivative_names(names, set(program.inputs))
    click.echo(to_source({labels[n]: gradients[n] for n in names}, latex=fmt == "latex"))


CHECK_EXAMPLES = """
\b
Examples:
  nanograd check "x*y + tanh(x)" --x 2 --y 3
  nanograd check model.txt --x 0.5 --rtol 1e-6 --format json
"""


@cli.command(cls=InputsCommand, epilog=CHECK_EXAMPLES)
@source_and_inputs
@click.option("--rtol", type=float, default=1e-3, show_default=True, help="Relative tolerance.")
@click.option("--atol", type=float, default=1e-5, show_default=True, help="Absolute tolerance.")
@table_format
@click.pass_context
def check(
    ctx: click.Context,
    source: str,
    var: tuple[str, ...],
    rtol: float,
    atol: float,
    fmt: str | None,
) -> None:
    """Check SOURCE's gradients against central finite differences; exit 1 if any fails.

    An input passes when |analytic - numeric| <= atol + rtol * |numeric| (the defaults are
    torch.autograd.gradcheck's). The step for input x is cbrt(machine epsilon) * max(1, |x|).
    """
    from .gradcheck import gradient_check
    from .language import parse
    from .render import text

    program = parse(read_source(source))
    values = input_values(ctx, var)
    evaluation, checks = gradient_check(program, values, rtol, atol)
    warn_non_finite(evaluation.first_non_finite(), strict=False)
    value = evaluation.result.data
    passed = all(c["pass"] for c in checks.values())
    if fmt == "json":
        click.echo(text.to_json_object({"value": value, "checks": checks, "pass": passed}))
    elif fmt == "csv":
        click.echo(text.check_csv(checks))
    else:
        show_table(text.check_rows(checks))
    if not passed:
        failed = ", ".join(n for n, c in checks.items() if not c["pass"])
        raise NanogradError(f"gradient check failed for {failed}")


MINIMIZE_EXAMPLES = """
\b
Examples:
  nanograd minimize "(1 - x)**2 + 100*(y - x**2)**2" --x -1.2 --y 1 --steps 10000
  nanograd minimize "(x - 3)**2" --x 0 --optimizer sgd --lr 0.1 --format json
"""


@cli.command(cls=InputsCommand, epilog=MINIMIZE_EXAMPLES)
@source_and_inputs
@click.option(
    "--steps",
    type=click.IntRange(1),
    default=10000,
    show_default=True,
    help="At most this many steps.",
)
@click.option(
    "--lr",
    type=click.FloatRange(0, min_open=True),
    default=0.01,
    show_default=True,
    help="Learning rate.",
)
@click.option(
    "--optimizer",
    type=click.Choice(["sgd", "momentum", "adam"]),
    default="adam",
    show_default=True,
    help="The update rule.",
)
@click.option(
    "--tol",
    type=click.FloatRange(0),
    default=1e-8,
    show_default=True,
    help="Stop when the gradient's norm is at most this.",
)
@table_format
@click.pass_context
def minimize(
    ctx: click.Context,
    source: str,
    var: tuple[str, ...],
    steps: int,
    lr: float,
    optimizer: str,
    tol: float,
    fmt: str | None,
) -> None:
    """Minimize SOURCE by gradient descent from the point given by its inputs' values.

    Prints the final point, value and gradient norm; exits 1 if the value becomes nan or inf
    (diverges). Progress shows on standard error when it is a terminal.
    """
    from .language import parse
    from .minimize import minimize as descend
    from .render import text

    program = parse(read_source(source))
    progress = Progress(steps) if sys.stderr.isatty() else None
    try:
        summary = descend(
            program,
            input_values(ctx, var),
            steps,
            lr,
            optimizer,
            tol,
            progress.update if progress else None,
        )
    finally:
        if progress:
            progress.stop()
    if fmt == "json":
        click.echo(text.to_json_object(summary))
    elif fmt == "csv":
        click.echo(text.minimize_csv(summary))
    else:
        show_table(text.minimize_rows(summary))


class Progress:
    """A Rich progress bar on standard error: step and loss."""

    def __init__(self, total: int):
        from rich.progress import BarColumn, TextColumn

        self.bar = progress_display(
            TextColumn("step {task.completed}/{task.total}"),
            BarColumn(),
            TextColumn("loss {task.fields[loss]:.6g}"),
        )
        self.task = self.bar.add_task("minimize", total=total, loss=float("nan"))
        self.bar.start()

    def update(self, step: int, loss: float) -> None:
        if step % 50 == 0:
            self.bar.update(self.task, completed=step, loss=loss)

    def stop(self) -> None:
        self.bar.stop()


def check_wrt(wrt: tuple[str, ...], inputs: list[str]) -> None:
    for name in wrt:
        if name not in inputs:
            known = ", ".join(inputs) or "none"
            raise InputError(f"--wrt {name}: {name} is not an input (inputs: {known})")


def as_result(evaluation, wrt: tuple[str, ...]):
    from .render.text import Result

    nodes = evaluation.inputs
    shown = wrt or tuple(nodes)
    return Result(
        evaluation.result.data,
        {name: node.data for name, node in nodes.items()},
        {name: nodes[name].grad for name in shown},
    )


def warn_non_finite(where, strict: bool) -> None:
    """Warn of (or, with --strict, fail on) the first operation that went non-finite."""
    if where is None:
        return
    if strict:
        raise NonFiniteResult(f"{where}")
    report(f"warning: {where}")


def emit(fmt: str | None, result, names) -> None:
    from .render import text

    if fmt == "json":
        click.echo(text.to_json(result))
    elif fmt == "csv":
        click.echo(text.csv_header(list(names)))
        click.echo(text.csv_row(result, list(names)))
    else:
        show_table(text.table_rows(result))


def show_table(rows: list[list[str]]) -> None:
    """A Rich table on a terminal; plain aligned text in a pipe or with NO_COLOR set."""
    if sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        from .render.table import print_table

        print_table(rows)
    else:
        from .render.text import plain_table

        click.echo(plain_table(rows))


def main(argv: list[str] | None = None) -> None:
    """Run the command line; map every failure to a one-line `error:` and an exit code."""
    debug = bool(os.environ.get("NANOGRAD_DEBUG"))
    try:
        # Not cli.main(): it would print a blank line on Ctrl-C.
        with cli.make_context("nanograd", sys.argv[1:] if argv is None else argv) as ctx:
            code = cli.invoke(ctx)
    except click.exceptions.Exit as done:
        code = done.exit_code
    except click.exceptions.NoArgsIsHelpError as error:
        click.echo(error.ctx.get_help())
        code = 0
    except click.ClickException as error:
        report(f"error: {error.format_message()}")
        hint = error.ctx.command_path if getattr(error, "ctx", None) else "nanograd"
        report(f"Try '{hint} --help' for help.")
        code = 2
    except NanogradError as error:
        report(f"error: {error}")
        code = error.exit_code
    except BrokenPipeError:
        # The reader went away (| head -1): stop quietly, and keep Python from
        # complaining when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    except KeyboardInterrupt:
        code = 130
    except click.exceptions.Abort:
        code = 130
    except Exception as error:
        if debug:
            raise
        report(f"error: internal error: {type(error).__name__}: {error}")
        report("This is a bug; set NANOGRAD_DEBUG=1 to see the traceback.")
        code = 1
    sys.exit(code or 0)
