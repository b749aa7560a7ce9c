"""The live page: one self-contained HTML file with the Graphviz drawing of a program, sliders
for its inputs, and the program and its ops in JavaScript, so the page recomputes every node's
data and gradient as an input moves, and steps through the passes in the engine's order.

The drawing is `render.graph`'s SVG, cut up by `render.live_svg` so that it opens quickly; its
nodes are known by the names `render.graph.node_names` gives them.
Each op's forward and local derivatives are written here once in JavaScript, mirroring
`ops.py` (IEEE results, the same kinks), and the tests hold every row to the Python one.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Callable
from importlib import resources
from typing import TYPE_CHECKING

from ..errors import printable
from ..explain import explain
from ..ops import CONST, OPS, Op
from ..program import Const, Input
from .explain import shown
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
from .live_svg import Node, live_svg

if TYPE_CHECKING:
    from ..program import Evaluation

# Helpers the op rows use, each the JavaScript twin of the function of ops.py it is named
# after. JavaScript's `/` already gives IEEE results for a zero divisor, as `divide` does.
JS_HELPERS = r"""
const divide = (a, b) => a / b;
function power(a, b) {
  // C's pow (and so Python's) has 1**b = 1 and (-1)**±inf = 1 where JavaScript has nan
  if (a === 1 || (a === -1 && (b === Infinity || b === -Infinity))) return 1;
  const y = Math.pow(a, b);
  // a negative base to a fractional power: Python's complex result is nan, but its overflow
  // is caught as inf
  if (y !== y && a < 0 && a > -Infinity && Math.pow(-a, b) === Infinity) return Infinity;
  return y;
}
const copysign = (m, s) => (s < 0 || Object.is(s, -0) ? -Math.abs(m) : Math.abs(m));
const log = (x) => (x > 0 ? Math.log(x) : x === 0 ? -Infinity : NaN);
const log2 = (x) => (x > 0 ? Math.log2(x) : x === 0 ? -Infinity : NaN);
const log10 = (x) => (x > 0 ? Math.log10(x) : x === 0 ? -Infinity : NaN);
const log1p = (x) => (x > -1 ? Math.log1p(x) : x === -1 ? -Infinity : NaN);
const sqrt = (x) => (x >= 0 ? Math.sqrt(x) : NaN);
const unit = (f) => (x) => (-1 <= x && x <= 1 ? f(x) : NaN);
const asin = unit(Math.asin), acos = unit(Math.acos);
function sigmoid(x) {
  if (x >= 0) return 1 / (1 + Math.exp(-x));
  const z = Math.exp(x);
  return z / (1 + z);
}
const softplus = (x) => (x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x)));
const step = (x) => (x > 0 ? 1 : x === x ? 0 : NaN);
const sign = (x) => (x > 0 ? 1 : x < 0 ? -1 : x === x ? 0 : NaN);
function powlog(a, b) {
  if (a > 0) return power(a, b) * Math.log(a);
  return a === 0 && b >= 0 ? 0 : NaN;
}
function sechSquared(x) {
  const e = Math.exp(-2 * Math.abs(x));
  const r = 1 / (1 + e);
  return 4 * e * r * r;
}
const LN2 = Math.log(2), LN10 = Math.log(10);
const logBase = (x, base) => divide(log(x), log(base));
const hypot = Math.hypot;
const maximum = (a, b) => (a >= b ? a : b > a ? b : NaN);
const minimum = (a, b) => (a <= b ? a : b < a ? b : NaN);
function clamp(x, lo, hi) {
  if (x !== x || lo !== lo || hi !== hi) return NaN;
  const m = lo > x ? lo : x; // Python's max and min keep the first of equals (0.0, -0.0)
  return hi < m ? hi : m;
}
const integral = (f) => (x) => (x - x === 0 ? copysign(f(x), x) : x);
function halfEven(x) {
  let r = Math.round(x); // halves up; Python's round takes halves to even
  if (r - x === 0.5 && r % 2 !== 0) r -= 1;
  return r;
}
const floor = integral(Math.floor), ceil = integral(Math.ceil), round = integral(halfEven);
// erf and erfc: C's are not in JavaScript. A series for |x| < 1.5, a continued fraction for
// erfc beyond (as CPython's own fallback): within a few units in the last place of C's.
const SQRT_PI = Math.sqrt(Math.PI);
function erfSeries(x) {
  const x2 = x * x;
  let acc = 0, fk = 25.5;
  for (let i = 0; i < 25; i++) { acc = 2 + (x2 * acc) / fk; fk -= 1; }
  return (acc * x * Math.exp(-x2)) / SQRT_PI;
}
function erfcFraction(x) {
  if (x >= 30) return 0;
  const x2 = x * x;
  let a = 0, da = 0.5, p = 1, pLast = 0, q = da + x2, qLast = 1;
  for (let i = 0; i < 50; i++) {
    a += da; da += 2;
    const b = da + x2;
    [p, pLast] = [b * p - a * pLast, p];
    [q, qLast] = [b * q - a * qLast, q];
  }
  return ((p / q) * x * Math.exp(-x2)) / SQRT_PI;
}
function erf(x) {
  if (x !== x) return x;
  if (Math.abs(x) < 1.5) return erfSeries(x);
  const c = erfcFraction(Math.abs(x));
  return x > 0 ? 1 - c : c - 1;
}
function erfc(x) {
  if (x !== x) return x;
  if (Math.abs(x) < 1.5) return 1 - erfSeries(x);
  const c = erfcFraction(Math.abs(x));
  return x > 0 ? c : 2 - c;
}
const TWO_OVER_ROOT_PI = 2 / SQRT_PI;
const gaussian = (x) => TWO_OVER_ROOT_PI * Math.exp(-power(x, 2));
const periodic = (f) => (x) => (x - x === 0 ? f(x) : NaN);
const sin = periodic(Math.sin), cos = periodic(Math.cos), tan = periodic(Math.tan);
function powDerivative(a, b, y) {
  const da = b !== 0 ? b * power(a, b - 1) : 0;
  return [da, a > 0 ? y * Math.log(a) : powlog(a, b)];
}
function clampDerivative(x, lo, hi) {
  const below = step(lo - x), above = step(x - hi);
  return [(1 - below) * (1 - above), below * step(hi - lo), sign(above + step(lo - hi))];
}
"""

# Per key of ops.OPS: the forward value and the local derivatives, JavaScript expressions in
# the op's parameters and `out` (the forward value), as ops.py computes them.
JS_OPS: dict[str, tuple[str, str]] = {
    "+": ("a + b", "[1, 1]"),
    "-": ("a - b", "[1, -1]"),
    "*": ("a * b", "[b, a]"),
    "/": ("a / b", "[1 / b, -out / b]"),
    "**": ("power(a, b)", "powDerivative(a, b, out)"),
    "neg": ("-x", "[-1]"),
    "exp": ("Math.exp(x)", "[out]"),
    "expm1": ("Math.expm1(x)", "[Math.exp(x)]"),
    "log": ("log(x)", "[1 / x]"),
    "log/2": ("logBase(x, base)", "[1 / (x * log(base)), -out / (base * log(base))]"),
    "log1p": ("log1p(x)", "[1 / (1 + x)]"),
    "log2": ("log2(x)", "[1 / (x * LN2)]"),
    "log10": ("log10(x)", "[1 / (x * LN10)]"),
    "sqrt": ("sqrt(x)", "[0.5 / out]"),
    "pow": ("power(a, b)", "powDerivative(a, b, out)"),
    "sin": ("sin(x)", "[cos(x)]"),
    "cos": ("cos(x)", "[-sin(x)]"),
    "tan": ("tan(x)", "[1 + out * out]"),
    "asin": ("asin(x)", "[1 / sqrt(1 - x * x)]"),
    "acos": ("acos(x)", "[-1 / sqrt(1 - x * x)]"),
    "atan": ("Math.atan(x)", "[1 / (1 + x * x)]"),
    "atan2": (
        "Math.atan2(y, x)",
        "[x / hypot(y, x) / hypot(y, x), -y / hypot(y, x) / hypot(y, x)]",
    ),
    "hypot": ("hypot(x, y)", "[x / out, y / out]"),
    "sinh": ("Math.sinh(x)", "[Math.cosh(x)]"),
    "cosh": ("Math.cosh(x)", "[Math.sinh(x)]"),
    "tanh": ("Math.tanh(x)", "[sechSquared(x)]"),
    "erf": ("erf(x)", "[gaussian(x)]"),
    "erfc": ("erfc(x)", "[-gaussian(x)]"),
    "sigmoid": ("sigmoid(x)", "[out * sigmoid(-x)]"),
    "softplus": ("softplus(x)", "[sigmoid(x)]"),
    "relu": ("x > 0 ? x : 0", "[step(x)]"),
    "abs": ("Math.abs(x)", "[sign(x)]"),
    "max": ("maximum(a, b)", "[(1 + sign(a - b)) / 2, (1 - sign(a - b)) / 2]"),
    "min": ("minimum(a, b)", "[(1 - sign(a - b)) / 2, (1 + sign(a - b)) / 2]"),
    "clamp": ("clamp(x, lo, hi)", "clampDerivative(x, lo, hi)"),
    "step": ("step(x)", "[0]"),
    "sign": ("sign(x)", "[0]"),
    "floor": ("floor(x)", "[0]"),
    "ceil": ("ceil(x)", "[0]"),
    "round": ("round(x)", "[0]"),
    "powlog": (
        "powlog(a, b)",
        "[b * powlog(a, b - 1) + power(a, b - 1), out * log(a)]",
    ),
}


def ops_script(keys: list[str]) -> str:
    """JavaScript that defines `OPS`: per key of ops.OPS, `f` (the forward function) and `d`
    (the local derivatives, as an array, given the arguments and the forward value)."""
    rows = []
    for key in keys:
        if key not in JS_OPS:
            raise KeyError(f"the op {key!r} has no JavaScript in nanograd_cli/render/html.py")
        forward, derivative = JS_OPS[key]
        parameters = ", ".join(OPS[key].parameters)
        rows.append(
            f"  {json.dumps(key)}: {{f: ({parameters}) => {forward}, "
            f"d: ({parameters}, out) => {derivative}}},"
        )
    return JS_HELPERS + "const OPS = {\n" + "\n".join(rows) + "\n};\n"


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
    instructions = []
    for ins in code:
        if type(ins) is Input:
            instructions.append(["input", ins.name])
        elif type(ins) is Const:
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
    for i, step in zip(written, explanation.forward, strict=True):
        text[i] = shown(step)
        term[i] = step.node.text
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
