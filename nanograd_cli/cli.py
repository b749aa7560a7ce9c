"""The command line: click wiring over the library. Errors become exit codes here, only here."""

from __future__ import annotations

import errno
import os
import sys

import click

from . import __version__
from .errors import (
    BadInputValue,
    InputError,
    NanogradError,
    NonFiniteResult,
    SourceError,
    StreamError,
    UnknownInputs,
)
from .sources import INPUT_NAME, Source, decode, input_values, load_program, source_lines
from .streams import guard as guard_streams
from .streams import silence_stdout


class SourceCommand(click.Command):
    """A command that reads a source: SOURCE, `-e TEXT` or `-f PATH`, exactly one of them,
    passed on as one `source` (a sources.Source)."""

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
        if len(given) != 1:
            raise click.UsageError("give the source once: SOURCE, -e TEXT or -f PATH", ctx)
        ctx.params["source"] = given[0]
        return super().invoke(ctx)


class InputsCommand(SourceCommand):
    """A command that also takes `--NAME VALUE` (or `--NAME=VALUE`) for any input NAME.

    The command's own long options (help included) are matched exactly, never abbreviated;
    every other `--NAME` is an input, and the argument after it is its value even when it
    starts with `-`.
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
            elif not INPUT_NAME.fullmatch(name):
                raise click.NoSuchOption(arg, ctx=ctx)
            else:
                if not equals:
                    if i + 1 >= len(args):
                        if ctx.resilient_parsing:  # completing: the value is being typed
                            break
                        raise click.BadOptionUsage(
                            arg, f"{arg} needs a value: {arg} VALUE", ctx=ctx
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
            hint = self._option_hint(ctx, error.names)
            if not hint:
                raise
            raise InputError(f"{error}{hint}") from None

    def _option_hint(self, ctx: click.Context, names: list[str]) -> str:
        """For `--NAME` read as an input that is no input: the option it may have meant."""
        import difflib

        own = [o[2:] for p in self.get_params(ctx) for o in p.opts if o.startswith("--")]
        others = {o[2:] for c in cli.commands.values() for p in c.params for o in p.opts}
        for name in names:
            close = difflib.get_close_matches(name, own, n=1, cutoff=0.6)
            if close:
                return f"; did you mean --{close[0]}?"
            if name in others:
                return f"; {ctx.command_path} has no --{name} option"
        return ""

    def shell_complete(self, ctx: click.Context, incomplete: str):
        """Options, and beyond them `--NAME` for each input of the SOURCE already typed."""
        from click.shell_completion import CompletionItem

        items = super().shell_complete(ctx, incomplete)
        if not incomplete.startswith("-"):
            return items
        given = {name for name, _ in ctx.meta.get("inputs", ())}
        names = [f"--{n}" for n in typed_inputs(ctx) if n not in given]
        return [CompletionItem(n, help="input") for n in names if n.startswith(incomplete)] + items


def typed_inputs(ctx: click.Context) -> list[str]:
    """The inputs of the source typed so far on the command line (for completion)."""
    typed = [(kind, ctx.params.get(key)) for kind, key in (("text", "expr"), ("file", "file"))]
    # While an option waits for its value, click leaves SOURCE among the unparsed arguments.
    typed += [("either", a) for a in [ctx.params.get("source"), *ctx.args] if a != "-"]
    for kind, value in typed:
        if value:
            try:
                return load_program(Source(kind, value), several=True).inputs
            except (NanogradError, OSError):
                return []
    return []


def complete_inputs(ctx: click.Context, param: click.Parameter, incomplete: str):
    """--wrt completes as the inputs of the source typed."""
    return [n for n in typed_inputs(ctx) if n.startswith(incomplete)]


def report(message: str) -> None:
    """A message on standard error; one that cannot be written there (a full or closed
    stderr) is dropped, so that it does not change the run's outcome."""
    try:
        click.echo(message, err=True)
    except OSError:
        pass


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
      nanograd repl
    """


def at_least(value: float, low: float, strictly: bool = False) -> float:
    """An option's value, if it is at least (or, `strictly`, more than) `low`."""
    if value > low or (value == low and not strictly):
        return value
    raise click.BadParameter(f"{value:g} is not {'more than' if strictly else 'at least'} {low:g}")


def check_digits(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None or value == "full" or (value.isdigit() and 1 <= int(value) <= 17):
        return value
    raise click.BadParameter(f"{value!r} is neither a number of digits from 1 to 17 nor full")


# The output formats of the commands that report numbers.
def table_format(command):
    command = click.option(
        "--digits",
        metavar="N|full",
        callback=check_digits,
        help="Significant digits of the numbers in a table on a terminal. [default: as many "
        "as fit the width; full precision in a pipe, JSON and CSV]",
    )(command)
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["table", "json", "csv"]),
        help="Output format. [default: table; plain text when not on a terminal]",
    )(command)


def strict_option(command):
    """--strict: the IEEE policy's warnings become errors (see warn_non_finite)."""
    return click.option(
        "--strict",
        is_flag=True,
        help="Fail (exit 1) when an input is nan or inf, or an operation makes nan or inf out "
        "of finite numbers, instead of warning.",
    )(command)


def complete_file(ctx: click.Context, param: click.Parameter, incomplete: str):
    """SOURCE completes as a file name (the shell lists the files)."""
    from click.shell_completion import CompletionItem

    return [CompletionItem(incomplete, type="file")]


def source_options(command):
    """SOURCE, or -e TEXT, or -f PATH."""
    command = click.option(
        "-f", "--file", metavar="PATH", help="Read the source from this file (never text)."
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


GRAD_EXAMPLES = """
\b
Examples:
  nanograd grad "x*y + tanh(x)" --x 2 --y 3
  nanograd grad "x*y + tanh(x)" --x 2 --y 3 --format json
  nanograd grad --x 1 -- "-x**2"
  nanograd grad "x*format" --x 1 --var format=2
  printf 'x*x\\nsin(x)\\n' | nanograd grad - --each-line --x 1 --format csv
  nanograd grad "u = x*y; v = x + y; u, v" --x 2 --y 3
"""


@cli.command(cls=InputsCommand, epilog=GRAD_EXAMPLES)
@source_and_inputs
@table_format
@click.option(
    "--wrt",
    multiple=True,
    metavar="NAME",
    shell_complete=complete_inputs,
    help="Show only these gradients.",
)
@click.option("--each-line", is_flag=True, help="Treat every line as its own expression.")
@strict_option
@click.option(
    "--points",
    metavar="FILE",
    help="A table of points (- for standard input), a row per point and a column per input: "
    "one result per row, the row's columns kept. CSV with a header, Parquet, Arrow or JSON "
    "Lines, by the extension.",
)
@click.option(
    "--points-format",
    type=click.Choice(["csv", "parquet", "arrow", "jsonl"]),
    help="The format of --points FILE, and of the results where no extension says. "
    "[default: by the extension, else csv]",
)
@click.option(
    "-o",
    "--output",
    metavar="FILE",
    help="With --points: write the results to FILE, in the format its extension says (.csv "
    ".parquet .arrow .feather .jsonl). [default: standard output]",
)
@click.option(
    "--mode",
    type=click.Choice(["auto", "reverse", "forward"]),
    default="auto",
    show_default=True,
    help="Reverse mode (one pass back per output) or forward mode (dual numbers, one pass for "
    "every input at once); auto is reverse, or forward where outputs outnumber inputs.",
)
@click.pass_context
def grad(
    ctx: click.Context,
    source: Source,
    fmt: str | None,
    digits: str | None,
    wrt: tuple[str, ...],
    each_line: bool,
    strict: bool,
    points: str | None,
    points_format: str | None,
    output: str | None,
    mode: str,
    var: tuple[str, ...],
) -> None:
    """Print the value of SOURCE and its gradient with respect to every input.

    SOURCE is an expression or program, the path of a file holding one, or - for standard
    input. Give each input's value as --NAME VALUE. A source that ends by listing names
    (u = x*y; v = x+y; u, v) has several outputs: grad prints each one's value and gradient,
    the Jacobian.
    """
    values = input_values(ctx.meta["inputs"], var)
    if each_line and points is not None:
        raise InputError("--each-line and --points cannot be used together")
    if each_line:
        check_wrt(wrt, list(values))
        ctx.exit(grad_each_line(source, values, fmt, digits, wrt, strict, mode))
    if points is None and (output is not None or points_format is not None):
        raise InputError("-o and --points-format are for the rows of --points FILE")
    if points == "-" and source.stdin:
        raise InputError("the source and --points - cannot both come from standard input")
    program = load_program(source, report, several=True)
    check_wrt(wrt, program.inputs)
    if points is not None:
        if mode == "forward":
            raise InputError("--points runs the vectorized reverse mode: drop --mode forward")
        grad_points(program, points, values, fmt, wrt, strict, output, points_format)
        return
    # auto: the Jacobian picks its mode by shape; one result is reverse mode
    result = program.jacobian(values, mode) if program.outputs else program.grad(values, mode)
    warn_non_finite(result.non_finite, strict)
    emit(fmt, result.only(wrt), digits)


def grad_points(program, points, values, fmt, wrt, strict, output, points_format) -> None:
    """`grad --points`: one result per row, a batch of rows at a time, in any format."""
    from . import io

    if fmt == "table":
        raise InputError("--points writes csv or json: give --format csv or --format json")
    out_format = io.output_format(output, fmt, points_format)
    if output in (None, "-") and out_format not in io.TEXT_FORMATS and sys.stdout.isatty():
        raise InputError(f"{out_format} is binary: write it to a file with -o FILE, or pipe it")
    io.pyarrow_required()
    from .points import run_points
    from .render.progress import RowsProgress

    run = run_points(
        program,
        (points, io.input_format(points, points_format)),
        (output, out_format),
        values,
        list(wrt),
        strict,
        RowsProgress if sys.stderr.isatty() else None,
    )
    if run.non_finite:
        rows = "1 row has" if run.non_finite == 1 else f"{run.non_finite} rows have"
        report(f"warning: {rows} a non-finite result; the first: {run.first_bad}")


def grad_each_line(source, values, fmt, digits, wrt, strict, mode) -> int:
    """`grad --each-line`: one result per line; bad lines are reported and skipped. Every
    line's gradients are those with respect to `wrt`, or else to every input given. Rows
    print as they come, but for the table on a terminal, which is fitted to all of them."""
    from .language import parse
    from .render import text
    from .render.streaming import StreamingTable
    from .results import LineGradients

    names = list(wrt or values)
    rows = []
    terminal = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    plain = StreamingTable(click.echo) if fmt not in ("json", "csv") and not terminal else None
    status = 0
    header_due = fmt == "csv"
    for number, data in source_lines(source):
        try:
            line = decode(data, "the line")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            program = parse(line).single("grad --each-line", None)
            point = {n: values[n] for n in program.inputs if n in values}
            result = program.grad(point, mode)
            warn_non_finite(result.non_finite, strict, line=number)
        except NanogradError as error:
            if isinstance(error, SourceError):
                message = error.on_line(number)
            elif isinstance(error, NonFiniteResult):  # it names the line already
                message = str(error)
            else:
                message = f"line {number}: {describe(error)}"
            report(f"error: {message}")
            status = max(status, error.exit_code)
            continue
        row = LineGradients(number, line.strip(), result.only(names))
        if header_due:
            click.echo(text.csv_header(row))
            header_due = False
        if fmt == "json":
            click.echo(text.to_json(row))
        elif fmt == "csv":
            click.echo(text.csv_rows(row)[0])
        elif plain is not None:
            plain.add(*text.lines_table_rows([row]))
        else:
            rows.append(row)
    if plain is not None:
        plain.flush()
    if rows:
        show_table(lambda number: text.lines_table_rows(rows, number), digits)
    return status


DRAW_EXAMPLES = """
\b
Examples:
  nanograd draw "x*y + tanh(x)" --x 2 --y 3 -o graph.svg
  nanograd draw model.txt --x -4 --y 2 -o graph.png --dpi 150
  nanograd draw "t/2 + 10/t" --t 3 -o graph.svg --hide-constants --edge-grads
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
    help="Where to write; the format follows the extension (.svg .png .pdf .dot .gv, "
    ".html for a live page). [default: -, DOT text on standard output]",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["svg", "png", "pdf", "dot", "html"]),
    help="Output format, whatever the extension.",
)
@click.option(
    "--rankdir",
    type=click.Choice(["LR", "TB"]),
    help="Lay the graph out left to right or top to bottom. "
    "[default: the one whose picture fits a 16:9 slide better]",
)
@click.option("--hide-constants", is_flag=True, help="Fold constants into their operations.")
@click.option("--edge-grads", is_flag=True, help="Write each edge's local derivative on it.")
@click.option(
    "--dpi",
    type=click.IntRange(1, 2400),
    metavar="N",
    help="Dots per inch of a png (Graphviz's default: 96).",
)
@click.option(
    "--legend/--no-legend",
    default=True,
    show_default=True,
    help="Add a table that explains the borders, fills and labels.",
)
@click.option(
    "--statements/--no-statements",
    default=True,
    show_default=True,
    help="Box each statement's nodes, labelled with its source (sources of several statements).",
)
@strict_option
@click.pass_context
def draw(
    ctx: click.Context,
    source: Source,
    var: tuple[str, ...],
    output: str,
    fmt: str | None,
    rankdir: str | None,
    hide_constants: bool,
    edge_grads: bool,
    dpi: int | None,
    legend: bool,
    statements: bool,
    strict: bool,
) -> None:
    """Draw the computation graph of SOURCE with every node's data and gradient.

    Gradients are computed first. Value nodes show their name (q₁, q₂ for the versions of a
    reassigned name), data and gradient; each operation is its own node, and the operands
    of - / ** and functions of several arguments are labelled (a, b). Inputs have a green
    border, the result a blue one, constants are grey; the darker a node's fill, the larger
    its gradient (see the legend).
    """
    from .output import write_atomically
    from .render.graph import MAX_PNG_PIXELS, draw_evaluation, format_of, render_drawing

    fmt = fmt or format_of(output)
    if output == "-" and fmt in ("png", "pdf") and sys.stdout.isatty():
        raise InputError(f"{fmt} is binary: write it to a file with -o graph.{fmt}, or pipe it")
    if dpi is not None and fmt != "png":
        raise InputError(f"--dpi is for png; {fmt} is not made of pixels")
    if edge_grads and fmt == "html":
        raise InputError(
            "--edge-grads is for pictures; the live page shows local derivatives on hover"
        )
    evaluation = load_program(source, report).gradients(input_values(ctx.meta["inputs"], var))
    warn_non_finite(evaluation.first_non_finite(), strict)
    drawing = draw_evaluation(
        evaluation,
        rankdir,
        hide_constants,
        edge_grads=edge_grads,
        legend=legend and fmt != "html",
        statements=statements,
    )
    if drawing.layout.engine != "dot":
        report(
            f"note: the graph is too big for a layered layout in reasonable time; laid out "
            f"with {drawing.layout.engine} (force-directed: no left-to-right order)"
            + (f"; the png is at most {MAX_PNG_PIXELS:,} pixels across" if fmt == "png" else "")
        )
    if drawing.nodes > BIG_GRAPH and not hide_constants:
        report(
            f"warning: the graph has {drawing.nodes:,} nodes; "
            "for a picture you can read, try --hide-constants"
        )

    def still_drawing() -> None:
        report(f"drawing {drawing.nodes:,} nodes with Graphviz… (Ctrl-C stops it)")

    if fmt == "html":
        from .render.html import live_page

        data = live_page(evaluation, drawing=drawing, legend=legend, on_slow=still_drawing)
    else:
        data = render_drawing(drawing, fmt, dpi, still_drawing)
    if output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        write_atomically(output, data)


HESSIAN_EXAMPLES = """
\b
Examples:
  nanograd hessian "x*y + tanh(x)" --x 2 --y 3
  nanograd hessian "(1 - x)**2 + 100*(y - x**2)**2" --x 1 --y 1 --format json
"""


@cli.command(cls=InputsCommand, epilog=HESSIAN_EXAMPLES)
@source_and_inputs
@table_format
@strict_option
@click.pass_context
def hessian(
    ctx: click.Context,
    source: Source,
    var: tuple[str, ...],
    fmt: str | None,
    digits: str | None,
    strict: bool,
) -> None:
    """Print the value, gradient and Hessian (matrix of second derivatives) of SOURCE.

    The Hessian is computed by automatic differentiation: the symbolic gradient is
    differentiated again in reverse mode (no finite differences).
    """
    from .symbolic import hessian as second_derivatives

    program = load_program(source, report)
    values = input_values(ctx.meta["inputs"], var)
    program.check_inputs(values)
    result = second_derivatives(program, values)
    warn_non_finite(result.non_finite, strict)
    emit(fmt, result, digits)


DIFF_EXAMPLES = """
\b
Examples:
  nanograd diff "x*y + tanh(x)" --wrt x
  nanograd diff model.txt --wrt x --wrt y
  nanograd diff "sin(x)**2" --wrt x --format latex
  nanograd grad "$(nanograd diff 'x**3' --wrt x)" --x 2
"""


@cli.command(cls=SourceCommand, epilog=DIFF_EXAMPLES)
@source_options
@click.option(
    "--wrt",
    multiple=True,
    metavar="NAME",
    shell_complete=complete_inputs,
    help="An input to differentiate by.",
)
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
    from .symbolic import derivatives_text

    program = load_program(source, report)
    check_wrt(wrt, program.inputs)
    if not program.inputs:
        raise InputError("the source has no inputs: its derivative is 0 by every name")
    click.echo(derivatives_text(program, list(wrt), latex=fmt == "latex"))


EXPLAIN_EXAMPLES = """
\b
Examples:
  nanograd explain "x*y + tanh(x)" --x 2 --y 3
  nanograd explain model.txt --x -4 --y 2 --format markdown > backprop.md
  nanograd explain "(x - 3)**2" --x 1 --format latex --digits 4
  nanograd explain "x*y + tanh(x)" --x 2 --y 3 --format json
"""


@cli.command(cls=InputsCommand, epilog=EXPLAIN_EXAMPLES)
@source_and_inputs
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "markdown", "latex", "json"]),
    help="Output format. [default: table; plain text when not on a terminal]",
)
@click.option(
    "--digits",
    metavar="N|full",
    callback=check_digits,
    help="Significant digits of the numbers in a table on a terminal, in Markdown and in "
    "LaTeX. [default: as many as fit a terminal; else full precision]",
)
@strict_option
@click.pass_context
def explain(
    ctx: click.Context,
    source: Source,
    var: tuple[str, ...],
    fmt: str | None,
    digits: str | None,
    strict: bool,
) -> None:
    """Write out the forward and backward passes of SOURCE at a point, node by node.

    Forward: each node's expression and value, in the order they are computed. Backward, in
    reverse topological order: each node's gradient (the sum of what flows back to it, written
    out where it feeds several nodes) and, per argument, its local derivative (the formula and
    its value) and the product with the gradient. The numbers are those `grad` computes.
    """
    from .explain import explain as written_out
    from .render import explain as writers
    from .render.table import number_formats

    program = load_program(source, report)
    result = written_out(program, input_values(ctx.meta["inputs"], var))
    warn_non_finite(result.non_finite, strict)
    number = number_formats(digits)[0]
    if fmt == "json":
        click.echo(writers.to_json(result))
    elif fmt == "markdown":
        click.echo(writers.markdown(result, number))
    elif fmt == "latex":
        click.echo(writers.latex(result, number))
    elif sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        writers.print_tables(result, digits)
    else:
        click.echo(writers.plain(result))


CHECK_EXAMPLES = """
\b
Examples:
  nanograd check "x*y + tanh(x)" --x 2 --y 3
  nanograd check model.txt --x 0.5 --rtol 1e-6 --format json
"""


@cli.command(cls=InputsCommand, epilog=CHECK_EXAMPLES)
@source_and_inputs
@click.option(
    "--rtol",
    type=float,
    callback=lambda ctx, param, value: at_least(value, 0.0),
    default=1e-3,
    show_default=True,
    help="Relative tolerance.",
)
@click.option(
    "--atol",
    type=float,
    callback=lambda ctx, param, value: at_least(value, 0.0),
    default=1e-5,
    show_default=True,
    help="Absolute tolerance.",
)
@table_format
@strict_option
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
    from .gradcheck import failures, gradient_check

    program = load_program(source, report)
    result = gradient_check(program, input_values(ctx.meta["inputs"], var), rtol, atol)
    warn_non_finite(result.non_finite, strict)
    emit(fmt, result, digits)
    if not result.passed:
        raise NanogradError(f"gradient check failed for {failures(result)}")


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
    type=int,
    callback=lambda ctx, param, value: at_least(value, 1),
    default=10000,
    show_default=True,
    help="At most this many steps.",
)
@click.option(
    "--lr",
    type=float,
    callback=lambda ctx, param, value: at_least(value, 0.0, strictly=True),
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
    type=float,
    callback=lambda ctx, param, value: at_least(value, 0.0),
    default=1e-8,
    show_default=True,
    help="Stop when the gradient's norm is at most this.",
)
@click.option(
    "--plot",
    "picture",
    metavar="FILE",
    help="Also draw the descent (.svg .png .pdf): its path on the contour plot of SOURCE for "
    "two inputs, the loss at every step otherwise.",
)
@table_format
@strict_option
@click.pass_context
def minimize(
    ctx: click.Context,
    source: Source,
    var: tuple[str, ...],
    steps: int,
    lr: float,
    optimizer: str,
    tol: float,
    picture: str | None,
    fmt: str | None,
    digits: str | None,
    strict: bool,
) -> None:
    """Minimize SOURCE by gradient descent from the point given by its inputs' values.

    Prints the final point, value and gradient norm; exits 1 if the value or gradient becomes
    nan or inf (diverges), 2 if it is so at the start. Progress shows on standard error when it
    is a terminal.
    """
    from .minimize import minimize as descend
    from .render.progress import StepsProgress

    descent = picture_format = None
    if picture:
        from .plot import Descent
        from .render.plot import format_of

        picture_format = format_of(picture)  # before any step: a bad name fails at once
        descent = Descent()
    program = load_program(source, report)
    start = input_values(ctx.meta["inputs"], var)
    # The starting point is checked (a nan there is the input's, not the descent's fault);
    # a value that goes nan or inf on the way is an error anyway.
    warn_non_finite(program.first_non_finite(program.values(start)), strict)
    progress = StepsProgress(steps) if sys.stderr.isatty() else None
    try:
        result = descend(
            program,
            start,
            steps,
            lr,
            optimizer,
            tol,
            progress and progress.update,
            descent and descent.record,
        )
    finally:
        if progress:
            progress.stop()
    if picture:
        from .output import write_atomically
        from .render.plot import descent_figure

        label = f"{optimizer}, {result.steps} steps"
        write_atomically(picture, descent_figure(program, descent, label, picture_format))
    emit(fmt, result, digits)


PLOT_EXAMPLES = """
\b
Examples:
  nanograd plot "sin(x)" --x -3:3
  nanograd plot "x*y + tanh(x)" --x -3:3 --y 2 -o plot.svg
  nanograd plot "log(x)" --x -1:3:1000 -o log.png
  nanograd plot "(1 - x)**2 + 100*(y - x**2)**2" --x -2:2 --y -1:3 -o contour.png
"""


@cli.command(cls=InputsCommand, epilog=PLOT_EXAMPLES)
@source_and_inputs
@click.option(
    "-o",
    "--output",
    metavar="FILE",
    help="Write a picture; the format follows the extension (.svg .png .pdf). "
    "[default: a plot in text on standard output]",
)
@click.pass_context
def plot(ctx: click.Context, source: Source, var: tuple[str, ...], output: str | None) -> None:
    """Plot SOURCE and its derivative over a range of one input, or its contour plot and
    gradient field over ranges of two.

    Give a swept input as --NAME LO:HI (or LO:HI:N for N points), the others as --NAME VALUE.
    Where SOURCE is nan or inf the plot has a gap.
    """
    import shutil

    from . import plot as sampling
    from .output import write_atomically
    from .render import plot as drawing

    fmt = output and drawing.format_of(output)
    program = load_program(source, report)
    fixed, ranges = sampling.parse_inputs(ctx.meta["inputs"], var)
    sampling.check_ranges(program, ranges)
    columns = shutil.get_terminal_size((80, 24)).columns
    if len(ranges) == 2:
        if not output:
            raise InputError("a contour plot of two ranges is a picture: add -o plot.png")
        result = sampling.sample_surface(program, fixed, ranges)
    else:
        ((name, span),) = ranges.items()
        points = sampling.CURVE_POINTS if output else drawing.terminal_points(columns)
        result = sampling.sample_curve(program, fixed, name, span, points)
    warning = sampling.gaps_warning(result)
    if warning:
        report(warning)
    if output:
        write_atomically(output, drawing.figure(result, fmt))
    else:
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        click.echo(drawing.curve_text(result, columns, color))


REPL_EXAMPLES = """
\b
Examples:
  nanograd repl
  nanograd repl < session.txt
"""


@cli.command(epilog=REPL_EXAMPLES)
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
    lines' (2 for bad input), or 0.
    """
    from .repl import main as session

    ctx.exit(session())


def check_wrt(wrt: tuple[str, ...], inputs: list[str]) -> None:
    for name in wrt:
        if name not in inputs:
            known = ", ".join(inputs) or "none"
            raise InputError(f"--wrt {name}: {name} is not an input (inputs: {known})")


def warn_non_finite(where: SourceError | None, strict: bool, line: int | None = None) -> None:
    """Warn of (or, with --strict, fail on) the first nan or inf: an input given as one, or an
    operation that made one out of finite numbers; `line` is the input line it is on, for
    --each-line."""
    if where is None:
        return
    message = where.on_line(line) if line is not None else str(where)
    if strict:
        raise NonFiniteResult(message)
    report(f"warning: {message}")


def emit(fmt: str | None, result, digits: str | None = None) -> None:
    """Print a result as JSON, CSV or a table."""
    from .render import text

    if fmt == "json":
        click.echo(text.to_json(result))
    elif fmt == "csv":
        click.echo(text.to_csv(result))
    else:
        show_table(lambda number: text.table_rows(result, number), digits)


def show_table(make_rows, digits: str | None = None) -> None:
    """A Rich table on a terminal; plain aligned text, full precision, in a pipe or with
    NO_COLOR set. `make_rows(number)` gives the rows with numbers formatted by `number`."""
    if sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        from .render.table import print_table

        print_table(make_rows, digits)
    else:
        from .render.text import plain_table

        click.echo(plain_table(make_rows(repr)))


# What writing to a full disk, a closed stream or a broken device raises.
OUTPUT_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EBADF, errno.EFBIG)


def main(argv: list[str] | None = None) -> None:
    """Run the command line; map every failure to a one-line `error:` and an exit code."""
    guard_streams()
    completing = os.environ.get("_NANOGRAD_COMPLETE")
    if completing:
        from click.shell_completion import shell_complete

        sys.exit(shell_complete(cli, {}, "nanograd", "_NANOGRAD_COMPLETE", completing))
    debug = bool(os.environ.get("NANOGRAD_DEBUG"))
    args = sys.argv[1:] if argv is None else argv
    try:
        try:
            # Not cli.main(): it would print a blank line on Ctrl-C.
            with cli.make_context("nanograd", args) as ctx:
                code = cli.invoke(ctx)
        except click.exceptions.NoArgsIsHelpError as error:
            click.echo(error.ctx.get_help())
            code = 0
        sys.stdout.flush()
    except click.exceptions.Exit as done:
        code = done.exit_code
    except click.ClickException as error:
        report(f"error: {error.format_message()}")
        leading_dash = leading_dash_source(error, args)
        if leading_dash:
            report(leading_dash)
        hint = error.ctx.command_path if getattr(error, "ctx", None) else "nanograd"
        report(f"Try '{hint} --help' for help.")
        code = 2
    except StreamError as error:
        report(f"error: {error}")
        code = error.exit_code
        silence_stdout()
    except NanogradError as error:
        report(f"error: {describe(error)}")
        leading_dash = leading_dash_source(error, args)
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
        elif debug:
            raise
        else:
            report(f"error: internal error: {type(error).__name__}: {error}")
            report("This is a bug; set NANOGRAD_DEBUG=1 to see the traceback.")
        code = 1
    sys.exit(code or 0)


def describe(error: NanogradError) -> str:
    """An error's message for the command line, with how to fix it there."""
    hint = getattr(error, "hint", None)
    return f"{error}: {hint}" if hint else str(error)


def leading_dash_source(error: Exception, args: list[str]) -> str | None:
    """For `nanograd grad "-x**2"`, read as options, or `"-exp(x)"` and `"-fx"`, read as
    `-e "xp(x)"` and `-f x`: how to pass a source that begins with -."""
    if isinstance(error, click.NoSuchOption) and not error.option_name.startswith("--"):
        source = next((a for a in args if a.startswith(error.option_name)), None)
        command = error.ctx.command_path if error.ctx else None
    elif isinstance(error, NanogradError):
        from .sources import glued_source

        source = glued_source(args, error)
        command = next((f"nanograd {a}" for a in args if a in cli.commands), None)
    else:
        return None
    if source is None or command is None:
        return None
    return f"A source that begins with - goes after --: {command} -- {source!r}"
