"""Computation-graph pictures: the DOT builder and the renderer choice.

graphviz is imported only when a picture is asked for. Nodes are read through their public
`data`, `grad`, `op` and `children`, so any graph of that shape can be drawn.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..errors import InputError, NanogradError
from ..ops import CONST

if TYPE_CHECKING:
    import graphviz

    from ..engine import Value

EXTENSIONS = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot"}
PURE_FORMATS = ("svg", "png")  # what graphviz-pure renders

# Fill colours by |grad| relative to the largest |grad| in the picture (light to dark); the
# thresholds are powers of ten, so colour follows orders of magnitude.
GRADIENT_COLOURS = ("#ffffff", "#fff5eb", "#fee6ce", "#fdd0a2", "#fdae6b")
NON_FINITE_COLOUR = "#d9d9d9"
INPUT_COLOUR = "#2b8a3e"
RESULT_COLOUR = "#1c4e80"


def human(x: float) -> str:
    """A number for people: 4 decimals, or exponent form when very large or small."""
    if not math.isfinite(x):
        return repr(x)
    if x == 0 or 1e-3 <= abs(x) < 1e6:
        return f"{x:.4f}"
    return f"{x:.4e}"


def constant(x: float) -> str:
    """A constant as the source would write it: 3, 0.9, 3.14159."""
    return format(x, ".6g")


def _escape(text: str) -> str:
    """Text safe inside a DOT record label: its field separators and quotes escaped."""
    return "".join("\\" + c if c in '{}|<>"\\' else c for c in text)


def gradient_colour(grad: float, largest: float) -> str:
    """The fill colour for a node with gradient `grad`, the largest |grad| being `largest`."""
    if not math.isfinite(grad):
        return NON_FINITE_COLOUR
    if grad == 0 or largest == 0:
        return GRADIENT_COLOURS[0]
    orders_below = math.floor(math.log10(largest / abs(grad)))  # 0 for the largest
    return GRADIENT_COLOURS[max(len(GRADIENT_COLOURS) - 1 - orders_below, 1)]


def reachable(root: Value, order: Iterable[Value] | None = None) -> list[Value]:
    """The nodes `root` depends on: in `order` when given (creation order), else leaves first."""
    nodes = list(root.walk())
    if order is None:
        return nodes[::-1]
    wanted = set(nodes)
    return [v for v in order if v in wanted]


def draw_dot(
    root: Value,
    names: Mapping[Value, str] | None = None,
    order: Iterable[Value] | None = None,
    rankdir: str = "LR",
    hide_constants: bool = False,
):
    """The computation graph of `root` as a `graphviz.Digraph`.

    Every value node shows its name (from `names`), data and gradient, every operation is a
    node of its own. Inputs have a green border, the result a blue one; constants are grey text;
    fill colour darkens with |grad|. Call `root.backward()` first to see gradients.
    """
    import graphviz

    names = names or {}
    nodes = reachable(root, order)
    ids = {v: f"n{i}" for i, v in enumerate(nodes)}
    shown = [v for v in nodes if v.op is not CONST]
    largest = max((abs(v.grad) for v in shown if math.isfinite(v.grad)), default=0.0)
    dot = graphviz.Digraph("nanograd", graph_attr={"rankdir": rankdir})
    dot.attr("node", fontname="Helvetica", fontsize="11")
    for v in nodes:
        node = ids[v]
        if v.op is CONST:
            if not hide_constants:
                dot.node(node, constant(v.data), shape="plaintext", fontcolor="#666666")
            continue
        name = names.get(v)
        fields = ([_escape(name)] if name else []) + [
            f"data {human(v.data)}",
            f"grad {human(v.grad)}",
        ]
        attrs = {
            "shape": "record",
            "style": "filled",
            "fillcolor": gradient_colour(v.grad, largest),
        }
        if v is root:
            attrs.update(color=RESULT_COLOUR, penwidth="3")
        elif v.op is None:
            attrs.update(color=INPUT_COLOUR, penwidth="2")
        dot.node(node, "{ " + " | ".join(fields) + " }", **attrs)
        if v.op is not None:
            symbol = v.op.name
            operands = v.children
            if hide_constants:
                constants = [constant(c.data) for c in operands if c.op is CONST]
                symbol = " ".join([symbol, *constants])
                operands = tuple(c for c in operands if c.op is not CONST)
            dot.node(f"{node}op", symbol, shape="ellipse", fontsize="10", margin="0.05,0.02")
            for operand in operands:  # one edge per use: x*x has two
                dot.edge(ids[operand], f"{node}op")
            dot.edge(f"{node}op", node)
    return dot


class Drawing(NamedTuple):
    """A graph ready to render, and how many nodes it shows (values and operations)."""

    dot: graphviz.Digraph
    nodes: int


def draw_evaluation(evaluation, rankdir: str = "LR", hide_constants: bool = False) -> Drawing:
    """The graph of a program's result, its nodes named as the program binds them."""
    nodes = evaluation.nodes
    names = {nodes[i]: name for i, name in evaluation.program.labels.items()}
    dot = draw_dot(evaluation.result, names, nodes, rankdir, hide_constants)
    shown = reachable(evaluation.result, nodes)
    count = sum(1 if v.op is None else 2 for v in shown if v.op is not CONST)
    if not hide_constants:
        count += sum(1 for v in shown if v.op is CONST)
    return Drawing(dot, count)


def format_of(output: str) -> str:
    """The picture format that the name of the output file asks for."""
    if output == "-":
        return "dot"
    fmt = EXTENSIONS.get(os.path.splitext(output)[1].lower())
    if fmt is None:
        raise InputError(
            f"cannot tell the format of {output} from its extension: "
            "use .svg, .png, .pdf, .dot or .gv, or give --format"
        )
    return fmt


def renderer(fmt: str, search: str | None = None) -> str:
    """The program that renders `fmt`: Graphviz's `dot` when on the PATH, else graphviz-pure."""
    if search is None:
        search = os.pathsep.join([os.environ.get("PATH", ""), str(Path(sys.executable).parent)])
    dot = shutil.which("dot", path=search)
    if dot:
        return dot
    pure = shutil.which("graphviz-pure", path=search)
    if pure and fmt in PURE_FORMATS:
        return pure
    install = (
        "install Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz)"
    )
    if pure:
        raise NanogradError(
            f"cannot render {fmt}: graphviz-pure renders svg and png only; {install}"
        )
    raise NanogradError(
        f"cannot render {fmt}: no Graphviz found; {install}, "
        "or pip install 'nanograd-cli[render]' for svg and png"
    )


def render(dot_source: str, fmt: str, search: str | None = None) -> bytes:
    """DOT text rendered as `fmt` bytes (or the DOT text itself for `dot`)."""
    if fmt == "dot":
        return dot_source.encode()
    program = renderer(fmt, search)
    done = subprocess.run(
        [program, f"-T{fmt}"], input=dot_source.encode(), capture_output=True, check=False
    )
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        raise NanogradError(
            f"{Path(program).name} failed to render {fmt}: {detail[-1] if detail else 'no message'}"
        )
    return done.stdout


def svg_or_none(dot) -> str | None:
    """A Digraph as SVG text, or None when no renderer is installed (for notebooks)."""
    try:
        return render(dot.source, "svg").decode()
    except NanogradError:
        return None
