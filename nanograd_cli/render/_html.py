"""The live page: one self-contained HTML file with the Graphviz drawing of a program, sliders
for its inputs, and the program and its ops in JavaScript, so the page recomputes every node's
data and gradient as an input moves, and steps through the passes in the engine's order.

The drawing is `render.graph`'s SVG, cut up by `render.live_svg` so that it opens quickly; its
nodes are known by the names `render.graph.node_names` gives them. The ops' JavaScript is
written from the ops table by `render.ops_js` (helpers in ops.js), and the tests hold every
op's to the Python one.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Callable
from importlib import resources
from typing import TYPE_CHECKING

from .._ops import CONST, OPS, Op
from .._program import Const, Input
from .._written_out import explain
from ..errors import printable
from ._explanation import shown
from ._live_svg import Node, live_svg
from ._ops_js import ops_script
from .graph import (
    GRADIENT_COLOURS,
    INPUT_COLOUR,
    MAX_ORDERS,
    NON_FINITE_COLOUR,
    RESULT_COLOUR,
    ZERO_COLOUR,
    Drawing,
    draw_evaluation,
    node_names,
    operation_name,
    reachable,
    render,
)

if TYPE_CHECKING:
    from .._program import Evaluation


def op_keys() -> dict[Op, str]:
    """Each op's key in ops.OPS ("log/2" for the two-argument log)."""
    return {op: key for key, op in OPS.items()}


def number(x: float) -> float | str:
    """A float for JSON: nan and the infinities as Python writes them, which the page reads."""
    return x if math.isfinite(x) else repr(x)


def instruction_names(evaluation: Evaluation) -> list[str | None]:
    """Per instruction, the name of its value node in the drawing (`n3`), or None where the
    result does not depend on it."""
    names = node_names(reachable(evaluation.result, evaluation.nodes))
    return [names.get(v) for v in evaluation.nodes]


def drawing_nodes(evaluation: Evaluation, terms: list[str | None]) -> dict[str, Node]:
    """The drawing's node names of the program's nodes, with their instruction and kind, and
    for each value and operation what a screen reader says: its expression, data and grad."""
    nodes = {}
    for i, (name, v) in enumerate(
        zip(instruction_names(evaluation), evaluation.nodes, strict=True)
    ):
        if name is None:
            continue
        if v.op is CONST:
            nodes[name] = Node(i, "constant")
            continue
        label = f"{terms[i] or name}: data {v.data!r}, grad {v.grad!r}"
        nodes[name] = Node(i, "value", label)
        if v.op is not None:
            nodes[operation_name(name)] = Node(i, "operation", label)
    return nodes


def page_data(evaluation: Evaluation) -> dict:
    """What the page's script needs: the program, the point, the drawn nodes, the engine's
    orders and the words of `explain` for every node."""
    program = evaluation.program
    code = program.code
    keys = op_keys()
    names = instruction_names(evaluation)
    point = {name: v.data for name, v in evaluation.inputs.items()}
    explanation = explain(program, point)
    instructions: list[list[object]] = []
    for ins in code:
        if isinstance(ins, Input):
            instructions.append(["input", ins.name])
        elif isinstance(ins, Const):
            instructions.append(["const", number(ins.value)])
        else:
            instructions.append(["apply", keys[ins.op], list(ins.args)])
    # explain writes a forward step for every node but the numbers that only appear inside
    # other expressions, and a backward step for every node that depends on an input, in the
    # engine's order (then the inputs the result does not depend on).
    written = [
        i
        for i, ins in enumerate(code)
        if type(ins) is not Const or i in program.labels or i == program.result
    ]
    text: list[str | None] = [None] * len(code)
    term: list[str | None] = [None] * len(code)
    for i, ahead in zip(written, explanation.forward, strict=True):
        text[i] = shown(ahead)
        term[i] = ahead.node.text
    index = {id(v): i for i, v in enumerate(evaluation.nodes)}
    order = [index[id(v)] for v in evaluation.result.topological_order()]
    varying = program.varying()
    stepped = [i for i in order if varying[i]]
    formulas: list[list[str] | None] = [None] * len(code)
    for i, step in zip(stepped, explanation.backward, strict=False):
        formulas[i] = [d.formula.text for d in step.local_derivatives]
    drawn = [i for i, name in enumerate(names) if name is not None and type(code[i]) is not Const]
    return {
        "inputs": program.inputs,
        "slots": [program.input_slots[name] for name in program.inputs],
        "point": [number(point[name]) for name in program.inputs],
        "code": instructions,
        "result": program.result,
        "varying": varying,
        "drawn": drawn,
        "text": text,
        "term": term,
        "formulas": formulas,
        "forward": [i for i in written if names[i] is not None and type(code[i]) is not Const],
        "order": order,
        "backward": stepped,
        "colours": {
            "scale": list(GRADIENT_COLOURS),
            "zero": ZERO_COLOUR,
            "nonFinite": NON_FINITE_COLOUR,
            "orders": MAX_ORDERS,
            "input": INPUT_COLOUR,
            "result": RESULT_COLOUR,
        },
    }


def _template(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _script_json(data: object) -> str:
    """JSON that is safe inside a <script> element: no `</` to end it early, no `<!--`."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("</", "<\\/").replace("<!--", "\\u003c!--")


def live_page(
    evaluation: Evaluation,
    rankdir: str | None = None,
    hide_constants: bool = False,
    statements: bool = True,
    *,
    drawing: Drawing | None = None,
    legend: bool = True,
    on_slow: Callable[[], None] | None = None,
) -> bytes:
    """The live page of a differentiated program's graph, as UTF-8 bytes: `drawing` (from
    `draw_evaluation(evaluation, ..., legend=False)`), else one drawn here without a legend
    (`rankdir`, `hide_constants`, `statements` as there). The page keeps its own legend in
    its side panel, shown when `legend` is set."""
    if drawing is None:
        drawing = draw_evaluation(
            evaluation, rankdir, hide_constants, legend=False, statements=statements
        )
    svg = render(drawing.dot.source, "svg", on_slow=on_slow).decode()
    data = page_data(evaluation)
    cut = live_svg(svg, drawing_nodes(evaluation, data["term"]))
    data |= {"tiles": cut.tiles, "boxes": cut.boxes, "edges": cut.edges}
    # the smallest text's size, in the drawing's units: fitting to the window keeps it readable
    data["font"] = min(map(float, re.findall(r'font-size="([\d.]+)"', svg)), default=14.0)
    used = sorted({row[1] for row in data["code"] if row[0] == "apply"})
    script = ops_script(used) + _template("page.js")
    source = printable(evaluation.program.source.strip(), keep="\n\t")  # no control characters
    title = source.splitlines()
    replacements = {
        "{{title}}": html.escape(title[0] if len(title) == 1 else "nanograd graph"),
        "{{source}}": html.escape(source),
        "{{svg}}": cut.shell,
        "{{legend}}": "" if legend else " hidden",
        "{{data}}": _script_json(data),
        "{{script}}": script.replace("</", "<\\/"),
    }
    # one pass, so that nothing put in (a source, a label) is read as a marker
    page = re.sub(r"\{\{\w+\}\}", lambda m: replacements[m.group()], _template("page.html"))
    return page.encode()
