"""`nanograd draw` and draw_dot: labels, counts, formats, renderers, and files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from nanograd_cli import Value, parse
from nanograd_cli.errors import NanogradError
from nanograd_cli.ops import CONST
from nanograd_cli.render import graph

from .conftest import WORKED, run

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


def test_gradient_colours_follow_orders_of_magnitude():
    darkest, *_ = reversed(graph.GRADIENT_COLOURS)
    assert graph.gradient_colour(10.0, 10.0) == darkest
    assert graph.gradient_colour(-10.0, 10.0) == darkest
    assert graph.gradient_colour(0.5, 10.0) == graph.GRADIENT_COLOURS[-2]  # 1.3 orders below
    assert graph.gradient_colour(0.05, 10.0) == graph.GRADIENT_COLOURS[-3]
    assert graph.gradient_colour(1e-9, 10.0) == graph.GRADIENT_COLOURS[1]
    assert graph.gradient_colour(0.0, 10.0) == "#ffffff"
    assert graph.gradient_colour(float("nan"), 10.0) == graph.NON_FINITE_COLOUR


def test_dot_counts_match_the_graph():
    evaluation = worked_evaluation()
    source = graph.draw_evaluation(evaluation).dot.source
    nodes = list(evaluation.result.walk())
    operations = [v for v in nodes if v.op is not None and v.op is not CONST]
    node_lines = [line for line in source.splitlines() if "[label=" in line]
    edge_lines = [line for line in source.splitlines() if "->" in line]
    assert len(node_lines) == len(nodes) + len(operations)
    assert len(edge_lines) == sum(len(v.children) for v in operations) + len(operations)


def test_x_times_x_has_two_edges_and_output_is_deterministic():
    first = graph.draw_evaluation(parse("x*x").gradients({"x": 3.0})).dot.source
    assert first.count("n0 -> n1op") == 2
    assert graph.draw_evaluation(parse("x*x").gradients({"x": 3.0})).dot.source == first


def test_labels_carry_names_data_and_gradients():
    source = graph.draw_evaluation(worked_evaluation()).dot.source
    assert '"{ x | data -4.0000 | grad 24.7180 }"' in source
    assert '"{ y | data 2.0000 | grad 106.6648 }"' in source
    assert '"{ v | data 4.6945 | grad 1.0000 }"' in source


def test_hide_constants_folds_them_into_operations():
    evaluation = parse("y = x * 0.9 + 0.1").gradients({"x": 1.0})
    source = graph.draw_evaluation(evaluation, hide_constants=True).dot.source
    assert 'label="* 0.9"' in source and 'label="+ 0.1"' in source
    assert "plaintext" not in source


def test_record_fields_are_escaped():
    assert graph._escape('a{b}|<c>"d\\') == 'a\\{b\\}\\|\\<c\\>\\"d\\\\'


def test_draw_dot_and_notebook_display():
    a, b = Value(2.0), Value(3.0)
    c = a * b + a.tanh()
    c.backward()
    dot = graph.draw_dot(c, names={a: "a", b: "b", c: "c"})
    assert '"{ a | data 2.0000 | grad 3.0707 }"' in dot.source
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
    names = evaluation.program.labels
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
        "graphviz; macOS: brew install graphviz), or pip install 'nanograd-cli[render]' for svg "
        "and png"
    )


def test_dot_text_to_stdout():
    code, out, _ = run("draw", "x*y", "--x", "2", "--y", "3")
    assert code == 0
    assert out.startswith("digraph nanograd {")
    assert '"{ x | data 2.0000 | grad 3.0000 }"' in out


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
        "use .svg, .png, .pdf, .dot or .gv, or give --format"
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
    assert err == (
        "warning: the graph has 2099 nodes; for a picture you can read, "
        "try --rankdir TB or --hide-constants\n"
    )


@needs_dot
def test_draw_pipes_into_dot():
    shell = subprocess.run(
        f"{sys.executable} -m nanograd_cli draw 'x*y' --x 2 --y 3 | dot -Tsvg",
        shell=True,
        capture_output=True,
        check=True,
    )
    assert "x data 2.0000 grad 3.0000" in svg_labels(shell.stdout)


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
