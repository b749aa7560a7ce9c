"""`nanograd draw` and draw_dot: labels, counts, formats, renderers, and files."""

from __future__ import annotations

import math
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import nanograd_cli
from nanograd_cli import Value, draw_dot, parse
from nanograd_cli._extras import install_command
from nanograd_cli._ops import ADD, CONST, MUL, OPS
from nanograd_cli.errors import NanogradError
from nanograd_cli.render import graph

from .helpers import NANOGRAD, WORKED, default_signals, graphviz_with_its_input, in_process, run

HAS_DOT = shutil.which("dot") is not None
PURE = shutil.which("graphviz-pure", path=str(Path(sys.executable).parent))
ONLY_PURE = str(Path(PURE).parent) if PURE else None  # a search path with no `dot`
needs_dot = pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed")
needs_pure = pytest.mark.skipif(not PURE, reason="graphviz-pure is not installed")


def worked_evaluation():
    return parse(Path(WORKED).read_text()).gradients({"x": -4.0, "y": 2.0})


def test_human_numbers():
    assert graph.human(24.71796004334379) == "24.7180"
    assert graph.human(-4.0) == "-4.0000"
    assert graph.human(0.0) == "0.0000"
    assert graph.human(1e300) == "1.0000e+300"
    assert graph.human(-2.5e-7) == "-2.5000e-07"
    assert graph.human(float("nan")) == "nan"
    assert graph.human(float("-inf")) == "-inf"
    assert graph.constant(0.9) == "0.9" and graph.constant(3.0) == "3"


def test_fill_scale_separates_gradients_within_one_order_of_magnitude():
    # 1, 2, 4, 8: the old scale, by orders of magnitude, gave them one colour
    scale = graph.gradient_scale([1.0, -2.0, 4.0, 8.0, 0.0, float("nan")])
    assert scale[0] == 1.0 and scale[-1] == pytest.approx(8.0)
    assert scale[3] == pytest.approx(8.0**0.5)  # geometric: the middle is the geometric mean
    colours = [graph.gradient_colour(g, scale) for g in (1.0, -2.0, 4.0, 8.0)]
    assert len(set(colours)) == 4
    assert colours[0] == graph.GRADIENT_COLOURS[0] and colours[-1] == graph.GRADIENT_COLOURS[-1]
    assert colours[1] == graph.GRADIENT_COLOURS[2]  # log(2)/log(8) = 1/3 of the way: step 2
    assert graph.gradient_colour(0.0, scale) == graph.ZERO_COLOUR
    assert graph.gradient_colour(float("inf"), scale) == graph.NON_FINITE_COLOUR


def test_fill_scale_spans_at_most_six_orders_and_one_gradient_is_darkest():
    scale = graph.gradient_scale([1e-12, 1.0, 10.0])
    assert scale[0] == pytest.approx(1e-5) and scale[-1] == 10.0  # 6 orders below the largest
    assert graph.gradient_colour(1e-12, scale) == graph.GRADIENT_COLOURS[0]
    assert graph.gradient_colour(0.5, scale) == graph.GRADIENT_COLOURS[-2]  # 4.7 orders up
    single = graph.gradient_scale([3.0, 3.0, 0.0])
    assert graph.gradient_colour(3.0, single) == graph.GRADIENT_COLOURS[-1]
    assert graph.gradient_scale([0.0, float("nan")]) == ()
    assert graph.gradient_colour(0.0, ()) == graph.ZERO_COLOUR


def test_dot_counts_match_the_graph():
    evaluation = worked_evaluation()
    source = graph.draw_evaluation(evaluation).dot.source
    nodes = list(evaluation.result.walk())
    operations = [v for v in nodes if v.op is not None and v.op is not CONST]
    node_lines = [line for line in source.splitlines() if "[label=" in line]
    edge_lines = [line for line in source.splitlines() if "->" in line]
    assert len(node_lines) == len(nodes) + len(operations) + 1  # and the legend
    assert len(edge_lines) == sum(len(v.children) for v in operations) + len(operations)
    assert source.count("subgraph cluster_") == 10  # a box per statement


def test_x_times_x_has_two_edges_and_output_is_deterministic():
    first = graph.draw_evaluation(parse("x*x").gradients({"x": 3.0})).dot.source
    assert first.count("n0 -> n1op") == 2
    assert graph.draw_evaluation(parse("x*x").gradients({"x": 3.0})).dot.source == first


def test_labels_carry_names_data_and_gradients():
    # left to right, record fields stack top down; top to bottom, braces make them stack
    source = graph.draw_evaluation(worked_evaluation(), "LR").dot.source
    assert '"x | data -4.0000 | grad 24.7180"' in source
    assert '"y | data 2.0000 | grad 106.6648"' in source
    assert '"v | data 4.6945 | grad 1.0000"' in source
    source = graph.draw_evaluation(worked_evaluation(), "TB").dot.source
    assert '"{ x | data -4.0000 | grad 24.7180 }"' in source


def test_hide_constants_folds_them_into_operations():
    evaluation = parse("y = x * 0.9 + 0.1").gradients({"x": 1.0})
    source = graph.draw_evaluation(evaluation, hide_constants=True, legend=False).dot.source
    assert 'label="· * 0.9"' in source and 'label="· + 0.1"' in source
    assert "plaintext" not in source


def test_record_fields_are_escaped():
    assert graph._escape('a{b}|<c>"d\\') == 'a\\{b\\}\\|\\<c\\>\\"d\\\\'


def test_draw_dot_and_notebook_display():
    a, b = Value(2.0), Value(3.0)
    c = a * b + a.tanh()
    c.backward()
    dot = graph.draw_dot(c, names={a: "a", b: "b", c: "c"})
    assert '"a | data 2.0000 | grad 3.0707"' in dot.source
    assert "legend" not in dot.source
    svg = c._repr_svg_()
    if HAS_DOT or PURE:
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    else:
        assert svg is None


def svg_labels(svg: bytes) -> list[str]:
    """The text of every node in an SVG made by dot, one string per node."""
    root = ET.fromstring(svg)
    ns = {"svg": "http://www.w3.org/2000/svg"}
    return [
        " ".join(t.text or "" for t in g.iterfind(".//svg:text", ns))
        for g in root.iterfind(".//svg:g[@class='node']", ns)
    ]


@pytest.mark.parametrize(
    "search", [pytest.param(None, marks=needs_dot), pytest.param("pure", marks=needs_pure)]
)
def test_svg_labels_of_the_worked_example(search):
    search = ONLY_PURE if search == "pure" else None
    evaluation = worked_evaluation()
    svg = graph.render(graph.draw_evaluation(evaluation).dot.source, "svg", search)
    labels = svg_labels(svg)
    assert "x data -4.0000 grad 24.7180" in labels
    assert "y data 2.0000 grad 106.6648" in labels
    assert "v data 4.6945 grad 1.0000" in labels
    names = graph.versioned(evaluation.program.labels)
    for i, node in enumerate(evaluation.nodes):
        if node.op is CONST or i not in names:
            continue
        expected = f"{names[i]} data {graph.human(node.data)} grad {graph.human(node.grad)}"
        assert expected in labels


@needs_dot
def test_png_and_pdf_with_dot(tmp_path):
    for fmt, magic in (("png", b"\x89PNG\r\n\x1a\n"), ("pdf", b"%PDF")):
        target = tmp_path / f"graph.{fmt}"
        code, _, err = run("draw", WORKED, "--x", "-4", "--y", "2", "-o", str(target))
        assert (code, err) == (0, "")
        assert target.read_bytes().startswith(magic)


@needs_pure
def test_fallback_renderer_svg_png_but_not_pdf():
    dot_source = graph.draw_evaluation(worked_evaluation()).dot.source
    assert graph.renderer("svg", ONLY_PURE) == PURE
    assert graph.render(dot_source, "png", ONLY_PURE).startswith(b"\x89PNG")
    with pytest.raises(NanogradError, match="graphviz-pure renders svg and png only"):
        graph.render(dot_source, "pdf", ONLY_PURE)


def test_no_renderer_says_what_to_install(tmp_path):
    with pytest.raises(NanogradError) as caught:
        graph.render("digraph {}", "svg", str(tmp_path))
    assert str(caught.value) == (
        "cannot render svg: no Graphviz found; install Graphviz (Debian/Ubuntu: apt-get install "
        "graphviz; macOS: brew install graphviz), or for svg and png: "
        + install_command("render")  # tests/test_extras.py tests what it says where
    )


def test_dot_text_to_stdout():
    code, out, _ = run("draw", "x*y", "--x", "2", "--y", "3")
    assert code == 0
    assert out.startswith("digraph nanograd {")
    assert '"x | data 2.0000 | grad 3.0000"' in out


@pytest.mark.skipif(not (HAS_DOT or PURE), reason="no renderer")
def test_svg_file_and_format_override(tmp_path):
    target = tmp_path / "graph.svg"
    assert run("draw", "x*y", "--x", "2", "--y", "3", "-o", str(target))[0] == 0
    assert b"<svg" in target.read_bytes()
    other = tmp_path / "graph.out"
    assert run("draw", "x*y", "--x", "2", "--y", "3", "-o", str(other), "--format", "png")[0] == 0
    assert other.read_bytes().startswith(b"\x89PNG")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".nanograd-")]


def test_hostile_values_render(tmp_path):
    code, out, err = run("draw", "a = exp(x); b = log(-x); a * 1e300 + b", "--x", "1000")
    assert code == 0
    assert "data inf" in out and "data nan" in out and "1e+300" in out
    assert err.startswith("warning:")


def test_file_errors_leave_the_old_file(tmp_path):
    target = tmp_path / "graph.dot"
    target.write_text("old")
    code, _, err = run("draw", "x", "--x", "1", "-o", str(tmp_path / "missing" / "g.dot"))
    assert code == 1 and err.startswith("error: cannot write ")
    assert err.rstrip().endswith("No such file or directory")
    code, _, err = run("draw", "2y", "--x", "1", "-o", str(target))  # bad source
    assert code == 2 and target.read_text() == "old"
    code, _, err = run("draw", "x", "--x", "1", "-o", str(tmp_path / "graph.jpg"))
    assert code == 2
    assert err.splitlines()[0] == (
        f"error: cannot tell the format of {tmp_path / 'graph.jpg'} from its extension: "
        "use .svg, .png, .pdf, .dot, .gv or .html"
    )
    if os.path.exists("/dev/full"):
        code, _, err = run("draw", "x", "--x", "1", "-o", "/dev/full", "--format", "dot")
        assert (code, err) == (1, "error: cannot write /dev/full: No space left on device\n")
        assert Path("/dev/full").is_char_device()


def test_unwritable_directory_leaves_the_old_file(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    target = tmp_path / "graph.dot"
    target.write_text("old")
    tmp_path.chmod(0o500)
    try:
        code, _, err = run("draw", "x", "--x", "1", "-o", str(target))
        assert code == 1 and err.startswith("error: cannot write ")
        assert target.read_text() == "old"
    finally:
        tmp_path.chmod(0o700)


def test_big_graphs_warn_and_still_draw():
    source = "+".join(f"tanh(x*{i})" for i in range(300))
    code, out, err = run("draw", source, "--x", "0.1")
    assert code == 0 and out.startswith("digraph")
    assert "layout=sfdp" in out  # every term reads x: dot would take minutes
    assert err == (
        "note: the graph is too big for a layered layout in reasonable time; laid out with sfdp "
        "(force-directed: no left-to-right order)\n"
        "warning: the graph has 2,099 nodes; for a picture you can read, try --hide-constants\n"
    )
    code, out, err = run("draw", source, "--x", "0.1", "--hide-constants")
    assert code == 0 and "warning" not in err


@needs_dot
def test_draw_pipes_into_dot():
    shell = subprocess.run(
        f"{sys.executable} -m nanograd_cli draw 'x*y' --x 2 --y 3 | dot -Tsvg",
        shell=True,
        capture_output=True,
        check=True,
    )
    assert "x data 2.0000 grad 3.0000" in svg_labels(shell.stdout)


@pytest.mark.slow
@needs_pure
def test_cli_without_dot_on_the_path_uses_graphviz_pure(tmp_path):
    env = {**os.environ, "PATH": ONLY_PURE}
    command = [sys.executable, "-m", "nanograd_cli", "draw", "x*y", "--x", "2", "--y", "3"]
    png = tmp_path / "g.png"
    done = subprocess.run([*command, "-o", str(png)], env=env, capture_output=True)
    assert (done.returncode, done.stderr) == (0, b"")
    assert png.read_bytes().startswith(b"\x89PNG")
    pdf = tmp_path / "g.pdf"
    done = subprocess.run([*command, "-o", str(pdf)], env=env, capture_output=True)
    assert done.returncode == 1
    assert done.stderr.decode().startswith(
        "error: cannot render pdf: graphviz-pure renders svg and png only; install Graphviz"
    )
    assert not pdf.exists()


SVG = {"svg": "http://www.w3.org/2000/svg"}


def svg_parts(svg: bytes | str):
    """The nodes (id -> their text, joined by spaces), the edges ((tail, head, [their label
    texts]) in order) and the boxes (their label texts) of an SVG made by dot."""
    root = ET.fromstring(svg)
    nodes = {
        g.findtext("svg:title", namespaces=SVG): " ".join(
            t.text or "" for t in g.iterfind(".//svg:text", SVG)
        )
        for g in root.iterfind(".//svg:g[@class='node']", SVG)
    }
    edges = []
    for g in root.iterfind(".//svg:g[@class='edge']", SVG):
        tail, head = g.findtext("svg:title", namespaces=SVG).split("->")
        edges.append((tail, head, [t.text for t in g.iterfind(".//svg:text", SVG)]))
    boxes = [
        " ".join(t.text or "" for t in g.iterfind(".//svg:text", SVG))
        for g in root.iterfind(".//svg:g[@class='cluster']", SVG)
    ]
    return nodes, edges, boxes


def drawn_svg(source: str, point: dict[str, float], **options) -> bytes:
    evaluation = parse(source).gradients(point)
    return graph.render(graph.draw_evaluation(evaluation, **options).dot.source, "svg")


def by_name(nodes: dict[str, str]) -> dict[str, str]:
    """Node id by the first word of its text (a value's name)."""
    return {text.split()[0]: node_id for node_id, text in nodes.items() if text}


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    return struct.unpack(">II", data[16:24])


@needs_dot
@pytest.mark.parametrize(
    "op", [op for op in OPS.values() if op.arity > 1], ids=lambda op: f"{op.name}/{op.arity}"
)
def test_every_operand_of_an_operation_is_identified(op):
    names = ["in1", "in2", "in3"][: op.arity]
    low, high = op.domain
    point = {n: low + (high - low) * (k + 1) / (op.arity + 1) for k, n in enumerate(names)}
    if op.syntax == "infix":
        source = f"in1 {op.name} in2"
    else:
        source = f"{op.name}({', '.join(names)})"
    nodes, edges, _ = svg_parts(drawn_svg(source, point, legend=False))
    (op_node,) = [node_id for node_id in nodes if node_id.endswith("op")]
    ids = by_name(nodes)
    into_op = [(tail, texts) for tail, head, texts in edges if head == op_node]
    if op in (ADD, MUL):  # a + b is b + a: the symbol says all
        assert nodes[op_node] == op.name
        assert sorted(into_op) == sorted((ids[n], []) for n in names)
    else:
        expected = {"infix": f"a {op.name} b"}.get(
            op.syntax, f"{op.name}({', '.join(op.parameters)})"
        )
        assert nodes[op_node] == expected
        assert sorted(into_op) == sorted(
            (ids[n], [parameter]) for n, parameter in zip(names, op.parameters, strict=True)
        )


@needs_dot
def test_operands_are_numbered_where_the_graph_has_a_name_of_their_parameters():
    # b/a of inputs a and b: edges named a and b would say the opposite of what they are
    nodes, edges, _ = svg_parts(drawn_svg("b/a + atan2(x, y)", dict(a=1.0, b=2.0, x=1.0, y=2.0)))
    ids = by_name(nodes)
    ops = {node_id: text for node_id, text in nodes.items() if node_id.endswith("op")}
    assert sorted(ops.values()) == ["#1 / #2", "+", "atan2(#1, #2)"]
    into = {(nodes[tail].split()[0], ops[head]): texts for tail, head, texts in edges if texts}
    assert into == {
        ("b", "#1 / #2"): ["#1"],
        ("a", "#1 / #2"): ["#2"],
        ("x", "atan2(#1, #2)"): ["#1"],
        ("y", "atan2(#1, #2)"): ["#2"],
    }
    assert ids.keys() >= {"a", "b", "x", "y"}
    dot = in_process("draw", "b/a", "--a", "1", "--b", "2", "-o", "-").stdout
    assert '<FONT COLOR="#7a3e9d">#1</FONT>, <FONT COLOR="#7a3e9d">#2</FONT> on its edges' in dot
    # atan2(#1, #2) beside inputs x and y: the legend's operation is numbered too
    dot = in_process("draw", "atan2(x, y)", "--x", "1", "--y", "2", "-o", "-").stdout
    assert '<TD BORDER="0">#1 / #2</TD>' in dot
    dot = in_process("draw", "u/v", "--u", "1", "--v", "2", "-o", "-").stdout  # no clash
    assert '[label="a / b"' in dot and '<FONT COLOR="#7a3e9d">a</FONT>' in dot


@needs_dot
def test_t_over_2_and_10_over_t_are_told_apart():
    for source, t_role, constant_role, constant in (
        ("t/2", "a", "b", "2"),
        ("10/t", "b", "a", "10"),
    ):
        nodes, edges, _ = svg_parts(drawn_svg(source, {"t": 3.0}, legend=False))
        roles = {nodes[tail].split()[0]: texts for tail, _, texts in edges if texts}
        assert roles == {"t": [t_role], constant: [constant_role]}


def test_hide_constants_labels_say_which_side_the_constant_is_on():
    source = "a = 10/x; b = x/10; c = 2**x; d = x**2; g = 0.5 - x; a + b + c + d + g"
    done = in_process("draw", source, "--x", "3", "--hide-constants", "--format", "svg")
    assert (done.returncode, done.stderr) == (0, "")
    nodes, edges, _ = svg_parts(done.stdout)
    texts = set(nodes.values())
    assert {"10 / ·", "· / 10", "2 ** ·", "· ** 2", "0.5 - ·"} <= texts
    assert not any(text in {"10", "2", "0.5"} for text in texts)  # no constant nodes
    assert not any(labels for _, _, labels in edges)  # one operand left: nothing to tell apart


def test_versions_of_a_name():
    assert graph.versioned({0: "x", 2: "q", 5: "q", 7: "y", 9: "q"}) == {
        0: "x",
        2: "q₁",
        5: "q₂",
        7: "y",
        9: "q₃",
    }
    program = parse("y = x + y; y * 2")  # the input y is the first version
    assert sorted(graph.versioned(program.labels).values()) == ["x", "y₁", "y₂"]


@needs_dot
def test_reassigned_names_are_numbered_in_the_picture():
    done = in_process("draw", WORKED, "--x", "-4", "--y", "2", "--format", "svg")
    nodes, _, _ = svg_parts(done.stdout)
    labels = {text.split(" grad")[0] for text in nodes.values()}
    # by hand: q1 = x + y, r1 = x*y + y**3, q2 = 2*q1 + 1, q3 = 2*q2 + 1 - x,
    # r2 = 3*r1 + sigmoid(y + x), r3 = 4*r2 + sigmoid(y - x), s = q3 - r3
    for label in (
        "q₁ data -2.0000",
        "r₁ data 0.0000",
        "q₂ data -3.0000",
        "q₃ data -1.0000",
        "r₂ data 0.1192",
        "r₃ data 1.4743",
        "s data -2.4743",
        "x data -4.0000",
    ):
        assert label in labels
    assert not any(label.startswith(("q ", "r ")) for label in labels)


def test_statement_spans():
    source = "a = (1 +\n 2); b = a  # c; d\n\n# only a comment\n  e;;"
    spans = graph.statement_spans(source)
    assert [source[i:j] for i, j in spans] == ["a = (1 +\n 2)", "b = a", "e"]


@needs_dot
def test_a_box_per_statement_labelled_with_its_source():
    svg = drawn_svg(Path(WORKED).read_text(), {"x": -4.0, "y": 2.0})
    _, _, boxes = svg_parts(svg)
    assert sorted(boxes) == sorted(Path(WORKED).read_text().splitlines())
    svg = drawn_svg(Path(WORKED).read_text(), {"x": -4.0, "y": 2.0}, statements=False)
    assert svg_parts(svg)[2] == []
    assert svg_parts(drawn_svg("y = x*2", {"x": 1.0}))[2] == []  # one statement: no box


@needs_dot
def test_the_legend_explains_borders_and_the_fill_scale():
    done = in_process("draw", "x*y*1", "--x", "2", "--y", "3", "--format", "svg")
    assert done.returncode == 0
    root = ET.fromstring(done.stdout)
    nodes, _, _ = svg_parts(done.stdout)
    legend = nodes["legend"]
    for text in ("input (green border)", "result (blue border)", "constant", "fill: |grad|"):
        assert text in legend
    # nonzero |grad| are 1 (the result), 2 (y) and 3 (x): steps of 3**(1/6), by hand
    steps = ["2.5 to 3", "2.08 to 2.5", "1.73 to 2.08", "1.44 to 1.73", "1.2 to 1.44", "1 to 1.2"]
    assert [t for t in legend.split("  ") if t] and all(step in legend for step in steps)
    box = root.find(".//svg:g[@id='node1']", SVG)  # the legend is the first node
    fills = [p.get("fill") for p in box.iterfind(".//svg:polygon", SVG)]
    assert [f for f in fills if f in graph.GRADIENT_COLOURS] == list(graph.GRADIENT_COLOURS)[::-1]
    ids = by_name(nodes)

    def fill(node_id: str) -> str:
        (g,) = [
            g
            for g in root.iterfind(".//svg:g[@class='node']", SVG)
            if g.findtext("svg:title", namespaces=SVG) == node_id
        ]
        return g.find("svg:polygon", SVG).get("fill")

    assert fill(ids["x"]) == graph.GRADIENT_COLOURS[5]  # grad 3: the largest
    assert fill(ids["y"]) == graph.GRADIENT_COLOURS[3]  # grad 2: 6*log(2)/log(3) = 3.8
    done = in_process("draw", "x*y", "--x", "2", "--y", "3", "--format", "svg", "--no-legend")
    assert "legend" not in svg_parts(done.stdout)[0]


@needs_dot
def test_edge_grads_are_the_local_derivatives():
    TIMES = "\N{MULTIPLICATION SIGN}"
    nodes, edges, _ = svg_parts(drawn_svg("x*y + tanh(x)", {"x": 2.0, "y": 3.0}, edge_grads=True))
    name = {node_id: text.split()[0] for node_id, text in nodes.items()}
    local = [(name[tail], nodes[head], texts) for tail, head, texts in edges if texts]
    # by hand: d(x*y)/dx = y = 3, d(x*y)/dy = x = 2, tanh'(2) = 1 - tanh(2)**2 = 0.0707, and
    # d(a + b)/da = d(a + b)/db = 1
    assert sorted(local) == sorted(
        [
            ("x", "*", [f"{TIMES}3.0000"]),
            ("y", "*", [f"{TIMES}2.0000"]),
            ("x", "tanh", [f"{TIMES}0.0707"]),
            ("data", "+", [f"{TIMES}1.0000"]),
            ("data", "+", [f"{TIMES}1.0000"]),
        ]
    )
    nodes, edges, _ = svg_parts(drawn_svg("t/2", {"t": 3.0}, edge_grads=True, legend=False))
    labels = sorted(texts[0] for _, _, texts in edges if texts)
    # the constant 2 gets no gradient: its edge says which operand it is, and no derivative
    # (d(t/2)/d2 = -t/2**2 would be nan for x**2 at a negative x, where nothing is wrong)
    assert labels == [f"a {TIMES}0.5000", "b"]
    nodes, edges, _ = svg_parts(drawn_svg("x**2", {"x": -1.0}, edge_grads=True, legend=False))
    assert sorted(texts[0] for _, _, texts in edges if texts) == [f"a {TIMES}-2.0000", "b"]


@needs_dot
def test_dpi_scales_the_png(tmp_path):
    sizes = []
    for dpi in ([], ["--dpi", "192"]):
        target = tmp_path / f"graph{len(dpi)}.png"
        done = in_process("draw", "x*y + tanh(x)", "--x", "2", "--y", "3", "-o", str(target), *dpi)
        assert (done.returncode, done.stderr) == (0, "")
        sizes.append(png_size(target.read_bytes()))
    (w96, h96), (w192, h192) = sizes
    assert w192 / w96 == pytest.approx(2, rel=0.01) and h192 / h96 == pytest.approx(2, rel=0.01)
    done = in_process(
        "draw", "x*y", "--x", "2", "--y", "3", "-o", str(tmp_path / "g.svg"), "--dpi", "2"
    )
    assert (done.returncode, done.stderr) == (
        2,
        "error: --dpi is for png; svg is not made of pixels\n",
    )


def slide_fill(width: int, height: int) -> float:
    """The share of a 16:9 slide that a picture scaled to fit it covers."""
    aspect = width / height
    return min(aspect / (16 / 9), (16 / 9) / aspect)


@needs_dot
def test_the_default_layout_of_the_worked_example_fits_a_slide(tmp_path):
    chosen = graph.draw_evaluation(worked_evaluation()).layout.rankdir
    fills = {}
    for rankdir in ("LR", "TB"):
        source = graph.draw_evaluation(worked_evaluation(), rankdir).dot.source
        fills[rankdir] = slide_fill(*png_size(graph.render(source, "png")))
    assert fills[chosen] == max(fills.values())
    assert fills[chosen] > 0.5  # it was 0.15: 5748 x 488 pixels


def test_layout_estimate_and_choice():
    x = Value(1.0)
    y = x + x.tanh()
    cost, deep = graph.estimate(graph.reachable(y), lambda v: True)
    # x at rank 0, tanh at 1, its value at 2, + at 3: the edge x -> + spans two virtual ranks
    assert (cost, deep) == (5 + 2, 5 / 1)
    assert graph.choose_layout(graph.LAYERED_LIMIT + 1, 1.0, "LR").engine == "sfdp"
    assert graph.choose_layout(100, 0.3, None).rankdir == "TB"  # wide and shallow
    assert graph.choose_layout(100, 2.0, None).rankdir == "LR"


def sum_of_tanh(terms: int) -> str:
    """A sum of tanh(x*i): 7 nodes a term, each term reading x (what made dot take hours)."""
    return "+".join(f"tanh(x*{i})" for i in range(terms))


def ten_thousand_nodes() -> str:
    """10,002 nodes: past what Graphviz lays out, so nanograd places them."""
    return sum_of_tanh(1429)


def below_the_placing_limit() -> str:
    """4,899 nodes: laid out with sfdp, which takes Graphviz several seconds."""
    return sum_of_tanh(700)


@needs_dot
@pytest.mark.slow
def test_ten_thousand_nodes_render(tmp_path):
    target = tmp_path / "big.svg"
    done = in_process("draw", "-e", ten_thousand_nodes(), "--x", "0.1", "-o", str(target))
    assert done.returncode == 0
    assert "placed by nanograd in ranks" in done.stderr
    nodes, edges, _ = svg_parts(target.read_bytes())
    assert len(nodes) == 10_002 + 1  # and the legend
    # per term: i and x into *, x*i into tanh, and the ops to their values; per +: three
    assert len(edges) == 5 * 1429 + 3 * 1428
    png = tmp_path / "big.png"
    done = in_process("draw", "-e", ten_thousand_nodes(), "--x", "0.1", "-o", str(png))
    assert done.returncode == 0
    assert max(png_size(png.read_bytes())) <= graph.MAX_PNG_PIXELS


@needs_dot
@pytest.mark.slow
@pytest.mark.signals
@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads /proc (Linux)")
def test_ctrl_c_stops_graphviz_too(tmp_path):
    target = tmp_path / "big.svg"
    command = [NANOGRAD, "draw", "-e", below_the_placing_limit(), "--x", "0.1", "-o", str(target)]
    with subprocess.Popen(
        command, stderr=subprocess.PIPE, text=True, preexec_fn=default_signals
    ) as process:
        try:
            renderer = graphviz_with_its_input(process)
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=10) == 130
            assert "laid out with sfdp" in process.stderr.read()
            assert not Path(f"/proc/{renderer}").exists()  # killed and reaped
            assert not target.exists()
            assert not [p for p in tmp_path.iterdir() if p.name.startswith(".nanograd-")]
        finally:
            process.kill()


@needs_dot
def test_a_slow_drawing_says_how_to_stop_it(monkeypatch, tmp_path):
    monkeypatch.setattr(graph, "SLOW", 0.0)  # every drawing counts as slow
    done = in_process("draw", "-e", sum_of_tanh(20), "--x", "0.1", "-o", str(tmp_path / "g.svg"))
    assert done.returncode == 0
    assert done.stderr == "drawing 139 nodes with Graphviz… (Ctrl-C stops it)\n"


def test_edge_labels_are_refused_for_the_live_page(tmp_path):
    page = tmp_path / "graph.html"
    done = in_process("draw", "x*y", "--x", "1", "--y", "2", "--edge-grads", "-o", str(page))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: --edge-grads is for pictures; the live page shows local derivatives on hover\n"
    )
    assert not page.exists()


def test_no_legend_reaches_the_live_page(tmp_path):
    shown, hidden = tmp_path / "shown.html", tmp_path / "hidden.html"
    assert in_process("draw", "x*y", "--x", "1", "--y", "2", "-o", str(shown)).returncode == 0
    done = in_process("draw", "x*y", "--x", "1", "--y", "2", "--no-legend", "-o", str(hidden))
    assert done.returncode == 0, done.stderr
    assert '<section id="key">' in shown.read_text()
    assert '<section id="key" hidden>' in hidden.read_text()


def test_rankdir_turns_either_way_in_any_case(tmp_path):
    """--rankdir RL and BT turn a layout around, in any case (`tb`), through the command line,
    the repl and Python; nanograd's own placing of a very large graph mirrors it too."""
    for given, shown in [("tb", "TB"), ("bt", "BT"), ("RL", "RL"), ("Lr", "LR")]:
        dot = in_process(
            "draw", "x*2", "--x", "1", "--rankdir", given, "-o", "-", "--format", "dot"
        )
        assert f"rankdir={shown}" in dot.stdout
    reply = in_process("repl", stdin=f"x = 1\n:draw x*2 rankdir bt {tmp_path / 'r.dot'}\n")
    assert reply.returncode == 0 and "rankdir=BT" in (tmp_path / "r.dot").read_text()
    assert "rankdir=RL" in draw_dot(Value(2.0) * 3, rankdir="rl").source
    a, b, c = (Value(float(i)) for i in range(3))
    order = graph.reachable(a * b + c, None)

    def positions(rankdir: str) -> dict:
        placed = graph._places(order, lambda v: True, rankdir)
        return {v: tuple(map(float, p.rstrip("!").split(","))) for v, (p, _) in placed.items()}

    for turned, mirror in [("RL", (-1, 1)), ("BT", (1, -1))]:
        start = positions("LR" if turned == "RL" else "TB")
        for v, (x, y) in positions(turned).items():
            assert (x, y) == (mirror[0] * start[v][0], mirror[1] * start[v][1])


def test_a_picture_shows_no_signed_zero_and_a_legend_only_what_is_drawn():
    """-0.0 is drawn 0.0000; the legend's row for constants only where the graph shows one
    (not under --hide-constants, nor for a source without numbers)."""
    dot = in_process("draw", "x*0 - 1", "--x", "-1", "-o", "-", "--format", "dot").stdout
    assert "-0.0000" not in dot and "data 0.0000" in dot
    for source, flags, shown in [
        ("x*2 + y", [], 1),
        ("x*2 + y", ["--hide-constants"], 0),
        ("x*y", [], 0),
        # a graph of arrays alike
        ("sum(2*tanh(x)) + y", [], 1),
        ("sum(2*tanh(x)) + y", ["--hide-constants"], 0),
        ("sum(tanh(x)) + y", [], 0),
    ]:
        x = "[1, 2]" if "sum" in source else "1"
        dot = in_process("draw", source, "--x", x, "--y", "2", *flags, "-o", "-", "--format", "dot")
        assert dot.stdout.count(">constant</TD>") == shown, (source, flags)


def test_hide_constants_folds_an_array_graphs_constants_into_its_operations():
    """--hide-constants was ignored for a graph of arrays: each constant's node goes and its
    operation's label writes it on its own side, as a scalar graph's does."""
    args = [
        "--W",
        "[[1, 2], [3, 4]]",
        "--x",
        "[0.5, -1]",
        "--no-legend",
        "-o",
        "-",
        "--format",
        "dot",
    ]
    source = "sum(2*tanh(W @ x)) - [1, 1] @ x/10"
    shown = in_process("draw", source, *args).stdout
    hidden = in_process("draw", source, *args, "--hide-constants").stdout
    constant = f'fontcolor="{graph.CONSTANT_COLOUR}"'
    # 2, [1, 1] (one node: its numbers are not drawn apart, unconnected) and 10
    assert shown.count(constant) == 3 and hidden.count(constant) == 0
    assert 'label="2 * ·"' in hidden and 'label="· / 10"' in hidden
    assert 'label="[1, 1] @ ·"' in hidden  # the array literal, as written, on its own side
    assert '[label="[1, 1]" fontcolor=' in shown
    # a matrix of numbers: one constant, its rows no nodes of their own
    matrix = in_process("draw", "sum([[1, 2], [3, 4]] @ x)", "--x", "[3, 4]", "-o", "-").stdout
    assert matrix.count(constant) == 1 and '[label="[[1, 2], [3, 4]]" fontcolor=' in matrix
    assert "shape (2, 2)" not in matrix
    assert hidden.count("->") < shown.count("->")


def test_a_node_of_another_nodes_elements_shows_no_gradient_of_their_whole():
    """x[0] of sum(x) + x[0]**2 showed grad 2, the whole of x[0]'s gradient, where 1 flows
    through it (its one edge: x 1 from a grad of 1): an index, a slice and a transpose are
    drawn with their data alone, unfilled; the others keep theirs."""
    for source, args, view in [
        ("sum(x) + x[0]**2", ["--x", "[0.5, -1]"], '"data 0.5000"'),
        ("3*sum(x[0:2]) + sum(x)", ["--x", "[1, 2, 3]"], '"shape (2,) | data 1.0000, 2.0000"'),
        ("sum(W.T @ x)", ["--W", "[[1, 2], [3, 4]]", "--x", "[1, 1]"],
         '"shape (2, 2) | data 1.0000, 3.0000, 2.0000, 4.0000"'),
    ]:  # fmt: skip
        dot = in_process("draw", source, *args, "--no-legend", "--format", "dot", "-o", "-")
        line = next(line for line in dot.stdout.splitlines() if f"label={view}" in line)
        assert "grad" not in line and "fillcolor" not in line, source
        assert dot.stdout.count("| grad ") == dot.stdout.count("fillcolor"), source
    dot = in_process("draw", "sum(x) + x[0]**2", "--x", "[0.5, -1]", "-o", "-", "--format", "dot")
    assert "x | shape (2,) | data 0.5000, -1.0000 | grad 2.0000, 1.0000" in dot.stdout


def test_the_lightest_fill_is_a_tint_that_tells_a_small_gradient_from_a_zero_one():
    """The smallest nonzero |grad| got #fff5eb, which looked as white as a zero gradient's
    fill (micrograd's neuron: w2's grad 0 and x2's 0.5 looked the same)."""
    lightest = graph.GRADIENT_COLOURS[0]
    red, green, blue = (int(lightest[k : k + 2], 16) for k in (1, 3, 5))
    assert min(red, green, blue) <= 0xD0 and lightest != graph.ZERO_COLOUR


# --- several outputs in one graph ----------------------------------------------------------------

JACOBIAN = "u = x*y; v = x + sin(y); u, v"
NODE_LINE = re.compile(r"^\s*(n\d+) \[label=\"([^\"]*)\"(.*)\]$", re.M)


def value_nodes(dot: str) -> dict[str, tuple[str, str]]:
    """Each value node of the DOT text: its label and its other attributes."""
    return {name: (label, rest) for name, label, rest in NODE_LINE.findall(dot)}


def by_label(dot: str) -> dict[str, str]:
    """Each named value's label and attributes, by the name the label starts with."""
    nodes = value_nodes(dot).values()
    return {label.split(" | ")[0]: f'{label}"{rest}' for label, rest in nodes if " | " in label}


@pytest.mark.parametrize(("chosen", "x", "y"), [("u", 1.3, 0.7), ("v", 1.3, 0.7), ("v", -2.0, 3.0)])
def test_several_outputs_are_one_graph_with_the_gradients_of_the_one_chosen(chosen, x, y):
    """Both outputs of the Jacobian lecture's source in one graph, x and y once; every grad
    is d(chosen)/d(node), against the hand derivation (du/dx = y, du/dy = x, dv/dx = 1,
    dv/dy = cos(y)); the other output and sin(y), which only v reads, show their data alone."""
    args = ["draw", JACOBIAN, "--x", repr(x), "--y", repr(y), "--no-legend"]
    done = in_process(*args, *(["--grad-of", chosen] if chosen != "u" else []))
    assert (done.returncode, done.stderr) == (0, "")
    nodes = value_nodes(done.stdout)
    assert len(nodes) == 5  # x, y, u, sin(y), v: nothing drawn twice
    named = by_label(done.stdout)
    h = graph.human
    expected = {"u": (y, x), "v": (1.0, math.cos(y))}[chosen]
    assert named["x"].startswith(f'x | data {h(x)} | grad {h(expected[0])}"')
    assert named["y"].startswith(f'y | data {h(y)} | grad {h(expected[1])}"')
    other = "v" if chosen == "u" else "u"
    values = {"u": x * y, "v": x + math.sin(y)}
    assert named[chosen].startswith(f'{chosen} | data {h(values[chosen])} | grad 1.0000"')
    assert f'color="{graph.RESULT_COLOUR}"' in named[chosen] and "penwidth=3" in named[chosen]
    assert named[other].startswith(f'{other} | data {h(values[other])}"')  # no grad
    assert f'color="{graph.RESULT_COLOUR}"' in named[other] and "penwidth=1.5" in named[other]
    (sine,) = [label for label, _ in nodes.values() if label.startswith("data ")]
    through = "" if chosen == "u" else " | grad 1.0000"  # dv/dsin(y) = 1
    assert sine == f"data {h(math.sin(y))}{through}"
    assert done.stdout.count(" -> ") == 8  # x, y into *; y into sin; x, sin into +; 3 ops out


def test_a_node_several_outputs_read_is_drawn_once_with_the_chosen_gradient():
    source = "s = x*y; u = s + 1; v = s*3; u, v"
    for chosen, ds in (("u", 1.0), ("v", 3.0)):
        dot = in_process("draw", source, "--x", "2", "--y", "5", "--grad-of", chosen).stdout
        named = by_label(dot)
        assert sum(label.startswith("s |") for label, _ in value_nodes(dot).values()) == 1
        assert named["s"].startswith(f's | data 10.0000 | grad {graph.human(ds)}"')
        assert named["x"].startswith(f'x | data 2.0000 | grad {graph.human(5 * ds)}"')
        # the legend says whose gradients these are
        assert f"every grad is d{chosen}/d(node)" in dot


def test_an_output_bound_to_another_name_says_both():
    """`u = x`: the output is the input's node, labelled `u = x`, with its own gradient (1);
    v, which u does not read, its data alone, and the legend says whose gradients these are."""
    dot = in_process("draw", "u = x; v = 2*x; u, v", "--x", "1.5").stdout
    named = by_label(dot)
    assert named["u = x"].startswith('u = x | data 1.5000 | grad 1.0000"')
    assert named["v"].startswith('v | data 3.0000"')
    assert ">output u (thick blue border): every grad is du/d(node)<" in dot
    assert "what u does not" in dot and "du/d(node) is 0 there" in dot


def test_an_array_result_in_scalars_draws_each_element_as_an_output():
    args = ["draw", "[x*y, x + sin(y)]", "--x", "1", "--y", "2", "--scalars", "--no-legend"]
    named = by_label(in_process(*args, "--grad-of", "result[1]").stdout)
    assert named["result[1]"].startswith('result[1] | data 1.9093 | grad 1.0000"')
    assert named["result[0]"].startswith('result[0] | data 2.0000"')
    assert named["y"].startswith(f'y | data 2.0000 | grad {graph.human(math.cos(2))}"')


def test_several_outputs_are_drawn_alike_through_every_door(tmp_path):
    cli = in_process("draw", JACOBIAN, "--x", "1", "--y", "2", "--grad-of", "v").stdout
    python = nanograd_cli.draw(JACOBIAN, x=1, y=2, grad_of="v", format="dot").decode()
    out = tmp_path / "g.dot"
    reply = in_process("repl", stdin=f"x = 1\ny = 2\n:draw {JACOBIAN} {out} grad-of v\n")
    assert reply.stdout.strip().endswith(f"wrote {out}"), reply.stderr
    assert cli == python == out.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--grad-of", "w"],
            "error: --grad-of w: the outputs are u, v; w is none of them\n",
        ),
        (
            ["-o", "g.html"],
            "error: the live page follows the passes of one result, and the source lists 2 "
            "outputs (u, v): end it with one of them, or draw them all in a picture (svg, png, "
            "pdf, dot)\n",
        ),
    ],
)
def test_what_cannot_be_drawn_of_several_outputs_is_refused(args, message, tmp_path):
    done = in_process("draw", JACOBIAN, "--x", "1", "--y", "2", *args, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
@pytest.mark.skipif(not (HAS_DOT or PURE), reason="no renderer")
def test_several_outputs_in_an_svg(tmp_path):
    out = tmp_path / "jacobian.svg"
    done = subprocess.run(
        [NANOGRAD, "draw", JACOBIAN, "--x", "1", "--y", "2", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (0, "")
    texts = [t.text for t in ET.parse(out).getroot().iter("{http://www.w3.org/2000/svg}text")]
    # u with its gradient, then v and sin(y) with their data alone
    for name, numbers in (("u", ["data 2.0000", "grad 1.0000"]), ("v", ["data 1.9093"])):
        at = len(texts) - 1 - texts[::-1].index(name)  # the node's, after the legend's
        assert texts[at + 1 : at + 1 + len(numbers)] == numbers
    after_v = texts[len(texts) - texts[::-1].index("v") :][:2]  # its data, and no grad
    assert after_v[0] == "data 1.9093" and not any(t.startswith("grad") for t in after_v)
    assert "every grad is du/d(node)" in " ".join(t or "" for t in texts)
