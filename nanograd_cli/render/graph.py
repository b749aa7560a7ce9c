"""Computation-graph pictures: the DOT builder, the layout choice and the renderer.

graphviz is imported only when a picture is asked for. Nodes are read through their public
`data`, `grad`, `op`, `children`, `walk()` and `topological_order()`.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, NamedTuple

from .._ops import ADD, CONST, MUL, Op
from ..errors import InputError, NanogradError, printable

if TYPE_CHECKING:
    import graphviz  # type: ignore[import-untyped]  # graphviz ships no types

    from .._program import Evaluation
    from ..engine import Value

EXTENSIONS = {
    ".svg": "svg",
    ".png": "png",
    ".pdf": "pdf",
    ".dot": "dot",
    ".gv": "dot",
    ".html": "html",
    ".htm": "html",
}
PURE_FORMATS = ("svg", "png")  # what graphviz-pure renders

# Fill colours, light to dark, for |grad| on a log scale from the smallest nonzero |grad| in the
# picture to the largest: each step is a sixth of that range, and never more than one order of
# magnitude (below six orders under the largest, all get the lightest). ColorBrewer's Oranges
# from its second step: its first, #fff5eb, looked white, as a zero gradient is drawn.
GRADIENT_COLOURS = ("#fee6ce", "#fdd0a2", "#fdae6b", "#fd8d3c", "#f16913", "#d94801")
MAX_ORDERS = len(GRADIENT_COLOURS)
ZERO_COLOUR = "#ffffff"
NON_FINITE_COLOUR = "#d9d9d9"
INPUT_COLOUR = "#2b8a3e"
RESULT_COLOUR = "#1c4e80"
CONSTANT_COLOUR = "#666666"
OPERAND_COLOUR = "#7a3e9d"  # the labels that say which operand is which
FONT = "Helvetica"

# Where the order of the operands shows in the symbol alone: a + b is b + a, and so are the
# local derivatives. Every other op with several operands labels each edge with its parameter.
COMMUTATIVE = (ADD, MUL)

TIMES = "\N{MULTIPLICATION SIGN}"  # before a local derivative: the gradient is multiplied by it
SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def human(x: float) -> str:
    """A number for people: 4 decimals, or exponent form when very large or small."""
    if not math.isfinite(x):
        return repr(x)
    if x == 0:
        return "0.0000"  # -0.0 too: a picture shows no signed zero
    if 1e-3 <= abs(x) < 1e6:
        return f"{x:.4f}"
    return f"{x:.4e}"


def constant(x: float) -> str:
    """A constant as the source would write it: 3, 0.9, 3.14159."""
    return format(x, ".6g")


def _escape(text: str) -> str:
    """Text safe inside a DOT record label: its field separators and quotes escaped, and
    control characters written as escapes."""
    return "".join("\\" + c if c in '{}|<>"\\' else c for c in printable(text))


def gradient_scale(grads: Iterable[float]) -> tuple[float, ...]:
    """The |grad| boundaries of the fill colours, low to high (one more than the colours):
    geometric steps from the smallest nonzero finite |grad| to the largest, the range cut to
    MAX_ORDERS orders of magnitude; () when no gradient is nonzero and finite."""
    sizes = [abs(g) for g in grads if g != 0 and math.isfinite(g)]
    if not sizes:
        return ()
    high = max(sizes)
    low = max(min(sizes), high / 10.0**MAX_ORDERS)
    steps = len(GRADIENT_COLOURS)
    return tuple(low * (high / low) ** (k / steps) for k in range(steps + 1))


def gradient_colour(grad: float, scale: Sequence[float]) -> str:
    """The fill colour of a node with gradient `grad`, on `scale` (from `gradient_scale`)."""
    if not math.isfinite(grad):
        return NON_FINITE_COLOUR
    if grad == 0 or not scale:
        return ZERO_COLOUR
    low, high = scale[0], scale[-1]
    if high == low:
        return GRADIENT_COLOURS[-1]
    step = math.floor(len(GRADIENT_COLOURS) * math.log(abs(grad) / low) / math.log(high / low))
    return GRADIENT_COLOURS[min(max(step, 0), len(GRADIENT_COLOURS) - 1)]


def reachable(root: Value, order: Iterable[Value] | None = None) -> list[Value]:
    """The nodes `root` depends on, each after its operands: in `order` when given (creation
    order), else in the reverse of the order backward visits them."""
    if order is None:
        return root.topological_order()[::-1]
    wanted = set(root.walk())
    return [v for v in order if v in wanted]


def node_names(nodes: Iterable[Value]) -> dict[Value, str]:
    """The name of each value node in the DOT text and the SVG titles of a drawing, `nodes` in
    the order `reachable` gives them: n0, n1, ...; the node of the operation that makes a value
    is named by `operation_name`."""
    return {v: f"n{i}" for i, v in enumerate(nodes)}


def operation_name(value_name: str) -> str:
    """The name of the node of the operation that makes the value node `value_name`."""
    return f"{value_name}op"


def versioned(labels: Mapping[int, str]) -> dict[int, str]:
    """Names numbered by version where one is bound more than once: q₁, q₂, q₃ in the order
    of the keys (instruction numbers); a name bound once stays as it is."""
    bound = Counter(labels.values())
    seen: Counter[str] = Counter()
    names = {}
    for i in sorted(labels):
        name = labels[i]
        if bound[name] > 1:
            seen[name] += 1
            name += str(seen[name]).translate(SUBSCRIPTS)
        names[i] = name
    return names


def statement_spans(source: str) -> list[tuple[int, int]]:
    """Where each statement of `source` starts and ends, without comments and surrounding
    blanks. A Program keeps each instruction's offset but not its statement's span, so the
    separators are found here: `;` and newlines outside parentheses (the language's rule)."""
    text = without_comments(source)
    spans = []
    depth = start = 0
    for i, c in enumerate(text + "\n"):
        if c == "(":
            depth += 1
        elif c == ")":
            depth = max(depth - 1, 0)
        elif c == ";" or (c == "\n" and depth == 0):
            stripped = text[start:i].strip()
            if stripped:
                first = text.index(stripped[0], start)
                spans.append((first, first + len(stripped)))
            start = i + 1
    return spans


def without_comments(source: str) -> str:
    """`source` with each comment blanked out, so that offsets stay where they were."""
    return re.sub(r"#[^\n]*", lambda m: " " * len(m.group()), source)


def _statement_text(code: str, span: tuple[int, int], width: int = 60) -> str:
    """A statement's label, from the source without its comments (`code`): on one line, cut
    to `width` characters, safe in a DOT string (where Graphviz reads \\N, \\G, \\l)."""
    text = " ".join(code[span[0] : span[1]].split())
    text = text if len(text) <= width else text[: width - 1] + "…"
    return printable(text).replace("\\", "\\\\")


# --- the layout --------------------------------------------------------------------------------

# Graphviz's `dot` makes a chain of virtual nodes for every edge that spans several ranks, and
# its time grows faster than linearly in nodes plus virtual nodes: an input read by every term
# of a long sum spans them all. Measured on a 2-core machine, with the limits below, `dot`
# took 0.5 to 4 s at about this estimate (sums, chains of statements, random trees, layers of
# neurons), 4 to 11 s at 20,000, and without the limits over 10 minutes at 21,000 (a sum of
# 143 terms). Past it, the force-directed `sfdp` lays out 10,000 nodes in 5 to 8 s.
LAYERED_LIMIT = 5000
# Past this estimate, `dot` is told to stop its searches early (slightly more crossings).
LIMITED_SEARCH = 1500
# Past this many drawn nodes, `sfdp` too takes long: its time grows faster than the nodes (on
# a 2-core machine shared with other work, 5 to 8 s of CPU for 10,000 nodes, 13 for 20,000, 29
# for 40,000; a sum of 66,667 terms, 133,335 nodes, ran on past a minute). Past it, nanograd
# places the nodes itself, in columns by rank as `dot` would but in the order they are made,
# with no search for fewer crossings, and Graphviz only draws them: time in proportion to the
# nodes (`python benchmarks/growth.py --only draw-size`).
POSITIONED_LIMIT = 5_000
# The places of nanograd's own layout, in points: one rank from the next, one node from the
# next in a rank (a value's record is about 85 by 55 points, stacked), and the legend's.
RANK_GAP, ROW_GAP, LEGEND_AT = 130, 75, (-330, 0)
# Edge labels (--edge-grads) put a label node in the middle of every edge and double the ranks.
# The chains of virtual nodes then no longer line up unless `dot` positions them to the end,
# and it routes each edge through a box per rank it crosses, at a cost growing much faster than
# the boxes: with the searches cut short, `dot` took 57 s for x + y + z + w + x + ... of 70
# terms (an estimate of 4,700), and without the limits 19 s for x + x + ... of 50 terms (2,500),
# all of it positioning. Up to LIMITED_SEARCH with labels, where no search is cut, it took 2.3 s
# at most (sums, products, chains of statements, all products of pairs of 8 inputs, random
# statements; both directions): past it, a labelled graph is laid out by `sfdp`.
LABELLED_LIMIT = LIMITED_SEARCH
# A slide is 16:9; the direction whose estimated picture is closer to that is the default.
SLIDE = 16 / 9


class Layout(NamedTuple):
    """How a graph is laid out: the Graphviz engine, the direction of its ranks (for `dot`),
    and the estimated work that chose the engine."""

    engine: str
    rankdir: str
    cost: int  # nodes plus the virtual nodes `dot` would need


def estimate(nodes: Sequence[Value], shown: Callable[[Value], bool]) -> tuple[int, float]:
    """The work `dot` would have (drawn nodes plus virtual ones), and how much deeper than
    wide the layered picture is, from the longest-path ranks of the value and operation
    nodes (`nodes` each after its operands; `shown` says which are drawn)."""
    rank, uses = ranks(nodes, shown)
    virtual = 0
    per_rank: Counter[int] = Counter()
    for v in nodes:
        if not shown(v):
            continue
        if v.op is not None and v.op is not CONST:
            per_rank[rank[v]] += 1
            per_rank[rank[v] - 1] += 1
        elif v in rank:
            per_rank[rank[v]] += 1
        virtual += sum(r - rank.get(v, 0) - 1 for r in uses.get(v, []))
    drawn = sum(per_rank.values())
    depth = max(per_rank, default=0) + 1
    breadth = max(per_rank.values(), default=1)
    return drawn + virtual, depth / breadth


def ranks(
    nodes: Sequence[Value], shown: Callable[[Value], bool]
) -> tuple[dict[Value, int], dict[Value, list[int]]]:
    """The longest-path rank of each drawn value node (its operation's is one less), a leaf
    (an input, a constant) next to its first use; and the ranks of the operations that use
    each node (`nodes` each after its operands)."""
    rank: dict[Value, int] = {}
    uses: dict[Value, list[int]] = {}
    for v in nodes:
        if v.op is None or v.op is CONST:
            continue
        op_rank = 1 + max((rank.get(c, 0) for c in v.children if shown(c)), default=0)
        rank[v] = op_rank + 1
        for c in v.children:
            if shown(c):
                uses.setdefault(c, []).append(op_rank)
    for v in nodes:
        at = uses.get(v)
        if v not in rank and at and shown(v):
            rank[v] = min(at) - 1
    return rank, uses


def choose_layout(
    cost: int, deep: float, rankdir: str | None, *, edge_labels: bool = False, nodes: int = 0
) -> Layout:
    """`dot` left to right or top to bottom (`rankdir`, else what fits a slide best), or `sfdp`
    for a graph too big for `dot` (a smaller one when its edges are labelled), or for one of
    more than POSITIONED_LIMIT `nodes`, too big for `sfdp`, nanograd's own placing (`nop2`)."""
    if nodes > POSITIONED_LIMIT:
        return Layout("nop2", rankdir or _slide_direction(deep), cost)
    if cost > (LABELLED_LIMIT if edge_labels else LAYERED_LIMIT):
        return Layout("sfdp", rankdir or "TB", cost)
    return Layout("dot", rankdir or _slide_direction(deep), cost)


def _slide_direction(deep: float) -> str:
    """LR or TB, whichever gives a picture closer to a slide's shape."""
    # Measured on drawings: left to right, a rank is about 1.2 in across and a node in it
    # 0.9 in high; top to bottom, a rank is 0.83 in high and a node 1.4 in across.
    across = deep * 1.2 / 0.9
    down = 1.4 / (deep * 0.83)
    return "LR" if abs(math.log(across / SLIDE)) < abs(math.log(down / SLIDE)) else "TB"


def _layout_attributes(layout: Layout) -> dict[str, str]:
    if layout.engine == "nop2":
        # the nodes' places are given (`pos`): Graphviz only draws them, and straight edges
        return {"layout": "nop2", "splines": "false", "outputorder": "edgesfirst"}
    if layout.engine == "sfdp":
        # prism removes overlaps; its attempts are capped, as it is most of sfdp's time
        return {"layout": "sfdp", "overlap": "prism20", "outputorder": "edgesfirst"}
    attrs = {"rankdir": layout.rankdir, "ranksep": "0.3", "nodesep": "0.2"}
    if layout.cost > LIMITED_SEARCH:
        # newrank ranks the whole graph in one pass (three times faster on deep graphs, but it
        # stretches statement boxes); nslimit and mclimit cut the searches short
        attrs.update(newrank="true", nslimit="0.5", mclimit="0.5")
    return attrs


# --- the graph ---------------------------------------------------------------------------------


def labels_operands(op: Op, operands: int) -> bool:
    """Whether an operation's label names its operands by their roles (a / b): two or more,
    in an order that matters (not those of + and *)."""
    return operands > 1 and op not in COMMUTATIVE


def numbered(operations: Iterable[tuple[Op, int]], taken: Container[str]) -> bool:
    """Whether the labels of `operations` (each an op and its number of operands) number the
    operands of one, #1 and #2, as `roles` does where a role is a name of the graph: what the
    legend then says."""
    return any(labels_operands(op, n) and roles(op, taken) != op.parameters for op, n in operations)


def roles(op, taken: Container[str]) -> tuple[str, ...]:
    """What an operation's operands are called on its edges and in its label: its parameters
    (a / b), or #1, #2, ... where one of those is a name of the graph (a / b of inputs b and a
    would say b of a)."""
    if any(p in taken for p in op.parameters):
        return tuple(f"#{k}" for k in range(1, len(op.parameters) + 1))
    return op.parameters


def _formula(op, operands: Sequence[str]) -> str:
    """`op` written as the language writes it, on these operand texts: a / 10, tanh(·)."""
    if op.syntax == "infix":
        return f"{operands[0]} {op.name} {operands[1]}"
    if op.syntax == "prefix":
        return f"-{operands[0]}"
    return f"{op.name}({', '.join(operands)})"


def _value_label(name: str | None, v: Value, stacked: bool, grad: bool = True) -> str:
    """A value's name, data and (where `grad`) gradient, as a record's fields."""
    numbers = [f"data {human(v.data)}"] + ([f"grad {human(v.grad)}"] if grad else [])
    fields = ([_escape(name)] if name else []) + numbers
    # record fields run across a rank; braces turn them: a value is a stack read top down
    return " | ".join(fields) if not stacked else "{ " + " | ".join(fields) + " }"


# At most this many of an array's numbers are shown, the first ones.
ARRAY_NUMBERS = 4


def legend_table(
    scale: Sequence[float],
    grads: Sequence[float],
    edge_grads: bool = False,
    arrays: bool = False,
    constants: bool = True,
    outputs: tuple[str, str] | None = None,
    numbered: bool = False,
) -> str:
    """An HTML-like table that says what the borders, fills and labels mean; with `arrays`,
    of a graph whose nodes are arrays, each filled by the norm of its gradient; `constants`:
    whether the graph shows any (none under --hide-constants); `outputs`: of a graph of
    several outputs, the name of the one whose gradients it shows and those of the others;
    `numbered`: an operation's operands are numbered, #1 and #2, in the graph (`roles`)."""

    def row(sample: str, text: str, **cell: str) -> str:
        attrs = "".join(f' {k.upper()}="{v}"' for k, v in cell.items())
        return f'<TR><TD{attrs}>{sample}</TD><TD ALIGN="LEFT">{text}</TD></TR>'

    rows = [row("x", "input (green border)", COLOR=INPUT_COLOUR, BORDER="2")]
    if outputs is None:
        rows.append(row("v", "result (blue border)", COLOR=RESULT_COLOUR, BORDER="3"))
    else:
        chosen, others = (_escape(name) for name in outputs)
        rows += [
            row(
                chosen,
                f"output {chosen} (thick blue border): every grad is d{chosen}/d(node)",
                COLOR=RESULT_COLOUR,
                BORDER="3",
            ),
            row(
                others,
                f'other outputs (thin blue border); what {chosen} does not<BR ALIGN="LEFT"/>'
                f"read shows its data alone: d{chosen}/d(node) is 0 there",
                COLOR=RESULT_COLOUR,
                BORDER="1",
            ),
        ]
    if constants:
        rows.append(row(f'<FONT COLOR="{CONSTANT_COLOUR}">2</FONT>', "constant", BORDER="0"))
    size = "|grad|"
    if arrays:
        size = "‖grad‖"
        rows.append(
            row(
                "shape (2, 3)",
                f'an array: its shape, and its first {ARRAY_NUMBERS} numbers,<BR ALIGN="LEFT"/>'
                'row by row, of data and grad<BR ALIGN="LEFT"/>',
                BORDER="0",
            )
        )
    a, b = ("#1", "#2") if numbered else ("a", "b")
    rows.append(
        row(
            f"{a} / {b}",
            f'operation; <FONT COLOR="{OPERAND_COLOUR}">{a}</FONT>, '
            f'<FONT COLOR="{OPERAND_COLOUR}">{b}</FONT> on its edges: which operand is which',
            BORDER="0",
        )
    )
    if edge_grads:
        each = (
            ' element by element<BR ALIGN="LEFT"/>(an array operation\'s is no number: none)'
            if arrays
            else ""
        )
        rows.append(
            row(
                f"{TIMES}0.5",
                "on an edge: the local derivative, d(operation)/d(operand)"
                f'{each};<BR ALIGN="LEFT"/>'
                f"an operand's grad is the sum of local derivative {TIMES} the operation's grad",
                BORDER="0",
            )
        )
    steps = len(GRADIENT_COLOURS)
    if scale and scale[0] == scale[-1]:
        # every finite nonzero |grad| is the same: one step, the darkest, as the fills have it
        rows.append(
            f'<TR><TD COLSPAN="2" ALIGN="LEFT">fill: {size}, the same at every node<BR '
            'ALIGN="LEFT"/>where it is finite and nonzero<BR ALIGN="LEFT"/></TD></TR>'
        )
        rows.append(row("", f"{size} = {scale[0]:.3g}", BGCOLOR=GRADIENT_COLOURS[-1]))
    elif scale:
        rows.append(
            f'<TR><TD COLSPAN="2" ALIGN="LEFT">fill: {size} on a log scale in '
            f'{steps} equal steps,<BR ALIGN="LEFT"/>from the smallest nonzero {size} to the '
            'largest<BR ALIGN="LEFT"/></TD></TR>'
        )
        # the fewest significant digits, 3 or more, that tell the bounds apart: not "1 to 1"
        # for gradients near 1; the top step runs to the largest, which it holds
        digits = next(
            (d for d in range(3, 17) if len({f"{b:.{d}g}" for b in scale}) == len(scale)), 17
        )
        for k in reversed(range(steps)):
            low, high = scale[k], scale[k + 1]
            if k == 0 and scale[0] > min(abs(g) for g in grads if g and math.isfinite(g)):
                text = f"&lt; {high:.{digits}g}"
            else:
                text = f"{low:.{digits}g} to {high:.{digits}g}"
            rows.append(row("", text, BGCOLOR=GRADIENT_COLOURS[k]))
    if any(g == 0 for g in grads):
        rows.append(row("", "0", BGCOLOR=ZERO_COLOUR))
    if any(not math.isfinite(g) for g in grads):
        rows.append(row("", "nan or inf", BGCOLOR=NON_FINITE_COLOUR))
    table = "".join(rows)
    return (
        '<<TABLE BORDER="1" CELLBORDER="1" CELLSPACING="2" CELLPADDING="3" COLOR="#999999">'
        f'<TR><TD COLSPAN="2"><B>legend</B></TD></TR>{table}</TABLE>>'
    )


def draw_dot(
    root: Value,
    names: Mapping[Value, str] | None = None,
    order: Iterable[Value] | None = None,
    rankdir: str | None = "LR",
    hide_constants: bool = False,
    *,
    edge_grads: bool = False,
    legend: bool = False,
    groups: Mapping[Value, tuple[int, str]] | None = None,
    layout: Layout | None = None,
    also: Sequence[Value] = (),
) -> graphviz.Digraph:
    """The computation graph of `root` as a `graphviz.Digraph`, and of the outputs `also`
    (in one graph, nodes they share drawn once; with `order` given).

    Every value node shows its name (from `names`), data and gradient, every operation is a
    node of its own. Inputs have a green border, the result a blue one; constants are grey text;
    fill colour darkens with |grad|. The operands of an operation other than + and * are
    labelled with its parameter names (a / b). `edge_grads` writes each edge's local
    derivative; `legend` adds a table that explains the picture; `groups` boxes nodes by a
    (number, label) pair (a statement's). Call `root.backward()` first to see gradients: they
    are `root`'s, so the outputs `also` and the nodes only they read show their data alone.
    """
    import graphviz

    names = names or {}
    taken = {name.split(" = ")[0] for name in names.values()}  # (z = w*x + b: z)
    nodes = reachable(root, order)
    backward = set(nodes)  # the nodes whose grad is root's gradient
    if also:
        wanted = backward.union(*(other.walk() for other in also))
        everything = order
        if everything is None:
            everything = [u for out in (root, *also) for u in reachable(out)]
        nodes = [v for v in dict.fromkeys(everything) if v in wanted]

    def shown(v: Value) -> bool:
        return not (hide_constants and v.op is CONST)

    if layout is None:
        layout = choose_layout(*estimate(nodes, shown), rankdir, edge_labels=edge_grads)
    stacked = layout.engine != "dot" or layout.rankdir not in ACROSS
    places = _places(nodes, shown, layout.rankdir) if layout.engine == "nop2" else {}
    ids = node_names(nodes)
    grads = [v.grad for v in nodes if v.op is not CONST and v in backward]
    scale = gradient_scale(grads)
    dot = graphviz.Digraph("nanograd", graph_attr=_layout_attributes(layout))
    dot.attr("node", fontname=FONT, fontsize="11")
    dot.attr("edge", fontname=FONT, fontsize="10", arrowsize="0.7")
    if legend:
        at = {"pos": "{},{}!".format(*LEGEND_AT)} if places else {}
        shows = any(v.op is CONST and shown(v) for v in nodes)
        listed = None
        if also:
            output = {v: names.get(v, "result").split(" = ")[0] for v in (root, *also)}
            listed = (output[root], ", ".join(output[o] for o in also))
        operations = [
            (v.op, len(v.children)) for v in nodes if v.op is not None and v.op is not CONST
        ]
        table = legend_table(
            scale,
            grads,
            edge_grads,
            constants=shows,
            outputs=listed,
            numbered=numbered(operations, taken),
        )
        dot.node("legend", table, shape="plaintext", fontsize="10", **at)
    boxes: dict[tuple[int, str], list[tuple[str, str, dict[str, str]]]] = {}

    def node(v: Value, node_id: str, label: str, **attrs: str) -> None:
        if places:
            attrs["pos"] = places[v][node_id.endswith("op")]
        group = groups.get(v) if groups else None
        if group is None:
            dot.node(node_id, label, **attrs)
        else:
            boxes.setdefault(group, []).append((node_id, label, attrs))

    for v in nodes:
        node_id = ids[v]
        if v.op is CONST:
            if shown(v):
                node(
                    v,
                    node_id,
                    constant(v.data),
                    shape="plaintext",
                    fontcolor=CONSTANT_COLOUR,
                    width="0.3",  # as narrow as the number, not Graphviz's 0.75 in
                    margin="0.02",
                )
            continue
        graded = v in backward
        attrs = {
            "shape": "record",
            "style": "filled",
            "fillcolor": gradient_colour(v.grad, scale) if graded else ZERO_COLOUR,
        }
        if v is root:
            attrs.update(color=RESULT_COLOUR, penwidth="3")
        elif v in also:
            attrs.update(color=RESULT_COLOUR, penwidth="1.5")
        elif v.op is None:
            attrs.update(color=INPUT_COLOUR, penwidth="2")
        node(v, node_id, _value_label(names.get(v), v, stacked, graded), **attrs)
        if v.op is None:
            continue
        operands = v.children
        labelled = labels_operands(v.op, len(operands))
        drawn = [c for c in operands if shown(c)]
        placeholder = len(drawn) == 1 and len(operands) > 1
        parameters = roles(v.op, taken)
        texts = [
            constant(c.data) if not shown(c) else "·" if placeholder else parameter
            for c, parameter in zip(operands, parameters, strict=True)
        ]
        folded = len(drawn) < len(operands)
        symbol = _formula(v.op, texts) if folded or labelled else v.op.name
        node(v, operation_name(node_id), symbol, shape="ellipse", fontsize="10", margin="0.05,0.02")
        local = v.op.derivative(*(c.data for c in operands), v.data) if edge_grads else ()
        for i, (operand, parameter) in enumerate(zip(operands, parameters, strict=True)):
            if not shown(operand):
                continue
            edge: dict[str, str] = {}
            role = parameter if labelled and not placeholder else ""
            if edge_grads and operand.op is not CONST:
                edge["label"] = f"{role} {TIMES}{human(local[i])}".strip()
                if role:
                    edge["fontcolor"] = OPERAND_COLOUR
            elif role:  # (a constant's edge has no derivative: no gradient flows to it)
                edge.update(headlabel=role, fontcolor=OPERAND_COLOUR, labeldistance="1.6")
            dot.edge(ids[operand], operation_name(node_id), **edge)  # one edge per use: x*x has two
        dot.edge(operation_name(node_id), node_id)
    for k, ((_, label), members) in enumerate(boxes.items()):
        with dot.subgraph(name=f"cluster_{k}") as box:
            box.attr(
                label=label,
                labeljust="l",
                style="rounded,dashed",
                color="#aaaaaa",
                fontname="Courier",
                fontsize="11",
            )
            for node_id, label_text, attrs in members:
                box.node(node_id, label_text, **attrs)
    return dot


# The directions whose ranks run across the picture, a record's fields side by side.
ACROSS = ("LR", "RL")


def _places(
    nodes: Sequence[Value], shown: Callable[[Value], bool], rankdir: str
) -> dict[Value, tuple[str, str]]:
    """For nanograd's own layout: each drawn node's place and its operation's, as `pos`
    attributes, by rank across (LR) or down (TB) and, within a rank, in the order made. A
    graph of many more ranks than nodes in a rank (a long sum) is folded into bands, as text
    into lines, so that the picture is about as wide as a slide is for its height."""
    rank, _ = ranks(nodes, shown)
    # Each node as late as its first reader lets it be, as `dot` draws one next to its use
    # (the longest-path ranks put every operand as early as it can be).
    readers: dict[Value, list[Value]] = {}
    for v in nodes:
        if v in rank and v.op is not None and v.op is not CONST:
            for c in v.children:
                if shown(c):
                    readers.setdefault(c, []).append(v)
    for v in reversed(nodes):
        if v in readers:
            rank[v] = max(rank[v], min(rank[u] for u in readers[v]) - 2)
    per_rank = Counter(rank.values())
    for v, r in rank.items():
        if v.op is not None and v.op is not CONST:
            per_rank[r - 1] += 1
    low = min(per_rank, default=0) - 1
    depth = max(per_rank, default=0) - low + 1
    breadth = max(per_rank.values(), default=1)
    # a band of b ranks is b * RANK_GAP long, and depth / b bands of breadth rows are as wide
    band = max(1, math.ceil(math.sqrt(SLIDE * depth * breadth * ROW_GAP / RANK_GAP)))
    filled: Counter[int] = Counter()

    def place(r: int) -> str:
        row = filled[r]
        filled[r] += 1
        along, across = divmod(r - low, band)
        along, row = across, along * (breadth + 1) + row
        x, y = (along * RANK_GAP, -row * ROW_GAP)
        if rankdir not in ACROSS:
            x, y = row * RANK_GAP, -along * ROW_GAP
        if rankdir in ("RL", "BT"):  # the other way along the ranks
            x, y = (-x, y) if rankdir == "RL" else (x, -y)
        return f"{x},{y}!"

    places = {}
    for v in nodes:
        if v in rank:
            r = rank[v]
            is_operation = v.op is not None and v.op is not CONST
            places[v] = (place(r), place(r - 1) if is_operation else "")
        elif shown(v):  # the result alone, or a constant no drawn operation uses
            places[v] = (place(0), place(-1) if v.op is not None and v.op is not CONST else "")
    return places


class Drawing(NamedTuple):
    """A graph ready to render, how many nodes it shows (values and operations), and how it is
    laid out."""

    dot: graphviz.Digraph
    nodes: int
    layout: Layout


# Boxes per statement make `dot` slower; past this many nodes they are left out.
MAX_BOXED = 1000


def draw_evaluation(
    evaluation: Evaluation,
    rankdir: str | None = None,
    hide_constants: bool = False,
    *,
    edge_grads: bool = False,
    legend: bool = True,
    statements: bool = True,
    outputs: Mapping[str, int] | None = None,
) -> Drawing:
    """The graph of a program's result, its nodes named as the program binds them (a name
    bound more than once numbered by version), a box per statement labelled with its text
    when the program has several and `statements` is set, and a legend when `legend` is.
    `rankdir` None chooses the direction that best fits a slide. `outputs` (name: the
    instruction that makes it) are further outputs drawn in the same graph with their data:
    the gradients are those of the result."""
    nodes = evaluation.nodes
    program = evaluation.program
    names = {nodes[i]: name for i, name in versioned(program.labels).items()}
    also = [nodes[i] for i in (outputs or {}).values() if nodes[i] is not evaluation.result]
    digits = "".join(str(n) for n in range(10)).translate(SUBSCRIPTS)
    for name, i in (outputs or {}).items():
        bound = names.get(nodes[i])  # none for an element of an array result: result[1]
        if bound is None or bound.rstrip(digits) != name:  # `u = x; ...; u, v`: u = x
            names[nodes[i]] = name if bound is None else f"{name} = {bound}"
    shown = reachable(evaluation.result, nodes)
    if also:
        wanted = set(shown).union(*(other.walk() for other in also))
        shown = [v for v in nodes if v in wanted]
    visible = [v for v in shown if not (hide_constants and v.op is CONST)]
    count = sum(1 if v.op is None or v.op is CONST else 2 for v in visible)
    layout = choose_layout(
        *estimate(shown, lambda v: not (hide_constants and v.op is CONST)),
        rankdir,
        edge_labels=edge_grads,
        nodes=count,
    )
    groups = None
    if statements and layout.engine == "dot" and count <= MAX_BOXED:
        groups = _statement_groups(program, nodes, set(shown))
    dot = draw_dot(
        evaluation.result,
        names,
        nodes,
        hide_constants=hide_constants,
        edge_grads=edge_grads,
        legend=legend,
        groups=groups,
        layout=layout,
        also=also,
    )
    return Drawing(dot, count, layout)


def _statement_groups(
    program, nodes: Sequence[Value], shown: set[Value]
) -> dict[Value, tuple[int, str]]:
    """Each drawn node (but inputs, which statements share) -> its statement's number and
    text; empty when the drawn nodes come from fewer than two statements."""
    spans = statement_spans(program.source)
    code = without_comments(program.source)
    starts = [start for start, _ in spans]
    groups = {}
    for ins, node in zip(program.code, nodes, strict=True):
        if node in shown and node.op is not None:
            k = bisect_right(starts, ins.offset) - 1
            groups[node] = (k, _statement_text(code, spans[k]))
    return groups if len(set(groups.values())) > 1 else {}


# --- rendering ---------------------------------------------------------------------------------


def format_of(output: str) -> str:
    """The picture format that the name of the output file asks for."""
    if output == "-":
        return "dot"
    from .._output_files import a_directory, extension

    a_directory(output)  # (`sub/` has no extension to tell, and is no file)
    fmt = EXTENSIONS.get(extension(output, EXTENSIONS))
    if fmt is None:
        raise InputError(
            f"cannot tell the format of {printable(output)} from its extension: "
            "use .svg, .png, .pdf, .dot, .gv or .html"
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
    from .._extras import install_command

    raise NanogradError(
        f"cannot render {fmt}: no Graphviz found; {install}, "
        f"or for svg and png: {install_command('render')}"
    )


# After this many seconds of rendering, `on_slow` is called (to say that it is still running).
SLOW = 3.0
# The signals that end a process by default, which a renderer must not outlive: Ctrl-C is an
# exception (KeyboardInterrupt) already, but `kill PID` sends SIGTERM or SIGHUP to this process
# alone (Ctrl-C, a closed terminal and `timeout` signal the renderer too).
ENDING_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


@contextlib.contextmanager
def _terminated_with(process: subprocess.Popen) -> Iterator[None]:
    """While `process` runs, an ending signal kills it, then ends this process as it would
    have (or reaches the handler that was there before). Signal handlers belong to the main
    thread: elsewhere, and for a signal that is ignored or handled outside Python, nothing
    changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {
        number: handler
        for number in ENDING_SIGNALS
        if (handler := signal.getsignal(number)) is signal.SIG_DFL or callable(handler)
    }

    def end(number: int, frame: FrameType | None) -> None:
        process.kill()
        signal.signal(number, previous[number])
        if previous[number] is signal.SIG_DFL:  # about to end: reaped here, as no one else may
            with contextlib.suppress(ChildProcessError):
                os.waitpid(process.pid, 0)
        signal.raise_signal(number)

    for number in previous:
        signal.signal(number, end)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def render(
    dot_source: str,
    fmt: str,
    search: str | None = None,
    *,
    attributes: Mapping[str, str] | None = None,
    on_slow: Callable[[], None] | None = None,
) -> bytes:
    """DOT text rendered as `fmt` bytes (or the DOT text itself for `dot`), with graph
    `attributes` set on the renderer's command line. The renderer is a child process, killed
    if this one fails, is interrupted or is terminated; `on_slow` is called once if it takes
    more than SLOW seconds."""
    if fmt == "dot":
        return dot_source.encode()
    program = renderer(fmt, search)
    command = [program, f"-T{fmt}", *(f"-G{k}={v}" for k, v in (attributes or {}).items())]
    data = dot_source.encode()
    with (
        subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        ) as process,
        _terminated_with(process),
    ):
        # Not communicate(timeout=SLOW): after its timeout, communicate() can read the rest of
        # the output but not write the rest of the input, and Graphviz waits for it forever.
        slow = threading.Timer(SLOW, on_slow) if on_slow else None
        try:
            if slow:
                slow.daemon = True
                slow.start()
            out, err = process.communicate(data)
        except BaseException:  # Ctrl-C above all: the renderer must not outlive us
            process.kill()
            process.wait()
            raise
        finally:
            if slow:
                slow.cancel()
    if process.returncode != 0 or not out:
        detail = err.decode(errors="replace").strip().splitlines()
        raise NanogradError(
            f"{Path(program).name} failed to render {fmt}: {detail[-1] if detail else 'no message'}"
        )
    return out


# A png of a graph laid out by sfdp is at most this many pixels across: beyond it the picture
# takes longer to paint than to lay out, and needs hundreds of megabytes (svg keeps every detail).
MAX_PNG_PIXELS = 8192
# One that nanograd places itself, past POSITIONED_LIMIT nodes, at most this many: painting
# takes time in proportion to the pixels (20,000 nodes: 32 s of CPU at 8,192, 11 s at 4,096).
MAX_POSITIONED_PNG_PIXELS = 4096


def png_pixels(layout: Layout) -> int | None:
    """The most pixels across a png of a graph laid out so has; None: as Graphviz draws it."""
    return {"sfdp": MAX_PNG_PIXELS, "nop2": MAX_POSITIONED_PNG_PIXELS}.get(layout.engine)


def render_drawing(
    drawing: Drawing,
    fmt: str,
    dpi: int | None = None,
    on_slow: Callable[[], None] | None = None,
) -> bytes:
    """A Drawing rendered as `fmt` (as `render`), a big graph's png scaled down to at most
    `png_pixels` across."""
    attributes = {"dpi": str(dpi)} if dpi and fmt == "png" else {}
    pixels = png_pixels(drawing.layout)
    if fmt == "png" and pixels:
        inches = pixels / (dpi or 96)
        attributes["size"] = f"{inches:g},{inches:g}"
    return render(drawing.dot.source, fmt, attributes=attributes, on_slow=on_slow)


def svg_or_none(dot: graphviz.Digraph) -> str | None:
    """A Digraph as SVG text, or None when no renderer is installed (for notebooks)."""
    try:
        return render(dot.source, "svg").decode()
    except NanogradError:
        return None
