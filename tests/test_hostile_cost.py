"""Small inputs of unbounded cost, run as an attacker would: the installed command in a shell
under a time and a memory limit. Drawings whose layout took Graphviz minutes, a renderer left
running after nanograd was stopped, derivatives whose text took memory growing with the square
of the nesting, and a gradient check that re-read every input at each evaluation."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from nanograd_cli import parse
from nanograd_cli.render import graph

from .helpers import NANOGRAD, default_signals, graphviz_with_its_input
from .helpers import limited as run_limited

MEMORY = 4_000_000  # kB of virtual memory
# The text of a derivative nested 16,000 deep took 2.4 GB before it was built in linear memory
# (8,000 statements 1.9 GB, Horner's form of degree 8,000 1 GB); all now pass under 300 MB.
DIFF_MEMORY = 500_000


def limited(command: str, tmp_path: Path, seconds: int = 30, memory: int = MEMORY):
    """`helpers.limited` in `tmp_path`, with this file's limits."""
    return run_limited(command, cwd=tmp_path, seconds=seconds, memory=memory)


SFDP_NOTE = (
    "note: the graph is too big for a layered layout in reasonable time; laid out with sfdp "
    "(force-directed: no left-to-right order)\n"
)


# Drawing: bounded layout work.


def sum_of(terms: int, names: str) -> str:
    """names[0] + names[1] + ... cycling through `names`, `terms` terms."""
    return "+".join(names[i % len(names)] for i in range(terms))


def test_a_sum_of_100_xs_is_drawn_in_time(tmp_path):
    source = sum_of(100, "x")
    assert len(source) == 199
    (tmp_path / "sum.txt").write_text(source)
    code, out, err = limited("nanograd draw -f sum.txt --x 1 -o sum.svg", tmp_path)
    assert (code, out, err) == (0, "", SFDP_NOTE)
    svg = (tmp_path / "sum.svg").read_text()
    assert svg.count('class="node"') == 1 + 1 + 2 * 99  # the legend, x, each + and its value
    assert "grad 100.0000" in svg  # x's gradient: one per term


@pytest.mark.parametrize(
    "terms, names", [(70, "xyzw"), (50, "x")], ids=["x+y+z+w+x... 70 terms", "x+x... 50 terms"]
)
def test_labelled_edges_of_a_long_sum_are_drawn_in_time(tmp_path, terms, names):
    # with --edge-grads, Graphviz's dot took 57 s for the first (routing edges through boxes)
    # and, with its searches not cut short, 19 s for the second (positioning)
    (tmp_path / "sum.txt").write_text(sum_of(terms, names))
    inputs = " ".join(f"--{n} {k + 1}" for k, n in enumerate(sorted(set(names))))
    code, out, err = limited(
        f"nanograd draw -f sum.txt {inputs} --edge-grads -o sum.svg", tmp_path, seconds=20
    )
    assert (code, out, err) == (0, "", SFDP_NOTE)
    svg = (tmp_path / "sum.svg").read_text()
    # each use of an input, each + to its value, each value to the next +
    assert svg.count('class="edge"') == terms + (terms - 1) + (terms - 2)
    times_one = graph.TIMES + "1.0000"  # every local derivative of + is 1
    assert svg.count(times_one) == terms + (terms - 2)


POSITIONED_NOTE = (
    "note: the graph has {:,} nodes, more than the 5,000 Graphviz lays out in reasonable time; "
    "placed by nanograd in ranks, in the order the nodes are made, with straight edges and no "
    "search for fewer crossings\n"
)


@pytest.mark.slow
def test_a_sum_of_20000_xs_is_placed_by_nanograd_in_time(tmp_path):
    # 39,999 nodes: sfdp took 30 s of CPU for them, and the 66,667 terms of a 133 KB source ran
    # on past a minute (Graphviz waited for the rest of its input, which was never written)
    (tmp_path / "sum.txt").write_text(sum_of(20_000, "x"))
    code, out, err = limited("nanograd draw -f sum.txt --x 1 -o sum.svg", tmp_path, seconds=20)
    assert code == 0 and out == ""
    assert err.startswith(POSITIONED_NOTE.format(39_999)), err
    svg = (tmp_path / "sum.svg").read_text()
    assert svg.count('class="node"') == 39_999 + 1  # and the legend
    assert "grad 20000.0000" in svg


@pytest.mark.slow
def test_the_live_page_of_a_1600_statement_chain_is_made_in_time(tmp_path):
    # 16,004 nodes: 21.6 s with sfdp's layout, growing as n^1.8; placed by nanograd, in
    # proportion to the nodes
    steps = [f"h = tanh(h*{0.5 + k % 5 / 10} + y*{k % 3 + 1})" for k in range(1600)]
    (tmp_path / "chain.txt").write_text("\n".join(["h = x", *steps, "h*h"]))
    code, out, err = limited(
        "nanograd draw -f chain.txt --x 0.3 --y -0.2 -o chain.html", tmp_path, seconds=20
    )
    assert code == 0 and out == ""
    assert err.startswith(POSITIONED_NOTE.format(16_004)), err
    page = (tmp_path / "chain.html").read_text()
    values = 2 + 4 * 1600 + 1  # x and y; h*w, y*c, their sum and its tanh; h*h
    assert page.count('<g class=\\"node value\\" data-node=') == values


@pytest.mark.slow
def test_graphviz_gets_all_of_a_drawing_it_reads_slowly(tmp_path):
    """Past SLOW seconds, the rest of the DOT text is still written to Graphviz: it waited
    for it forever, once communicate() had timed out."""
    script = (
        "from nanograd_cli import parse\n"
        "from nanograd_cli.render import graph\n"
        "graph.SLOW = 0.001\n"
        "source = '+'.join(f'tanh(x*{i})' for i in range(800))\n"
        "drawing = graph.draw_evaluation(parse(source).gradients({'x': 0.1}))\n"
        "said = []\n"
        "svg = graph.render_drawing(drawing, 'svg', on_slow=lambda: said.append(1))\n"
        "print(svg.count(b'class=\"node\"'), said)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "5600 [1]\n"  # every node and the legend; said once to be slow


def test_labelled_edges_go_to_sfdp_past_the_limit_of_a_full_search():
    layout = graph.choose_layout(graph.LABELLED_LIMIT, 1.0, "LR", edge_labels=True)
    assert layout.engine == "dot"
    layout = graph.choose_layout(graph.LABELLED_LIMIT + 1, 1.0, "LR", edge_labels=True)
    assert layout.engine == "sfdp"
    assert graph.choose_layout(graph.LABELLED_LIMIT + 1, 1.0, "LR").engine == "dot"


def test_a_small_drawing_keeps_its_layout(tmp_path):
    code, out, err = limited("nanograd draw -e 'x*y + tanh(x)' --x 2 --y 3 --edge-grads", tmp_path)
    assert (code, err) == (0, "")
    assert out.splitlines()[:2] == [
        "digraph nanograd {",
        "\tgraph [nodesep=0.2 rankdir=LR ranksep=0.3]",
    ]


# Drawing: the renderer ends with nanograd, however nanograd ends.


def running(pid: int) -> bool:
    """Whether process `pid` exists and is no zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@pytest.mark.slow
@pytest.mark.signals
@pytest.mark.parametrize(
    "sent, code",
    [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGHUP, -signal.SIGHUP), (signal.SIGINT, 130)],
    ids=["SIGTERM", "SIGHUP", "SIGINT"],
)
def test_a_signal_to_nanograd_ends_graphviz_too(tmp_path, sent, code):
    # 30,008 nodes: Graphviz takes seconds to paint them as png (laid out by nanograd, past
    # graph.POSITIONED_LIMIT); the signal goes to nanograd alone, as `kill PID` sends it (Ctrl-C
    # and a closed terminal reach the whole group)
    (tmp_path / "big.txt").write_text("+".join(f"tanh(x*{i})" for i in range(4287)))
    draw = ["draw", "-f", "big.txt", "--x", "0.1", "-o", "big.png"]
    renderers: list[int] = []
    with subprocess.Popen(
        ["bash", "-c", f'ulimit -v {MEMORY}; exec "$NANOGRAD" "$@"', "nanograd", *draw],
        cwd=tmp_path,
        env={**os.environ, "NANOGRAD": NANOGRAD},
        stderr=subprocess.PIPE,
        preexec_fn=default_signals,
    ) as process:
        try:
            renderers = [graphviz_with_its_input(process)]
            process.send_signal(sent)
            ended = process.wait(timeout=30)
            # at once: left alone, Graphviz goes on for seconds, then dies writing its picture
            left = list(filter(running, renderers))
        finally:  # nothing outlives the test, whatever it found
            if process.poll() is None:
                process.kill()
            for pid in filter(running, renderers):
                os.kill(pid, signal.SIGKILL)
        err = process.stderr.read()
    assert renderers, "no renderer started"
    assert ended == code
    assert not left, "Graphviz outlived nanograd"
    assert not (tmp_path / "big.png").exists()
    assert b"Traceback" not in err


# diff: text in linear memory.


def sin_chain_derivative(depth: int, latex: bool) -> str:
    """diff's text of d/dx sin(sin(...sin(x))), `depth` (a multiple of 4) deep, by the chain
    rule: every fourth sin(...) bound to a name, then the product of the cosines of each
    level, the outermost first (in LaTeX, the lines of one aligned environment)."""
    if latex:
        sin, cos, times = r"\sin", r"\cos", " "
        name = "t_{{{}}}".format
    else:
        sin, cos, times = "sin", "cos", "*"
        name = "t{}".format
    names = ["x"] + [name(k) for k in range(1, depth // 4)]
    lines = [
        f"{names[k]} = {sin}({sin}({sin}({sin}({names[k - 1]}))))" for k in range(1, len(names))
    ]
    factors = []
    for base in reversed(names):
        for level in (3, 2, 1, 0):
            factors.append(f"{cos}(" + f"{sin}(" * level + base + ")" * level + ")")
    if latex:
        rows = [line.replace(" = ", " &= ", 1) for line in lines]
        rows.append(r"\frac{df}{dx} &= " + times.join(factors))
        return "\n".join([r"\begin{aligned}", " \\\\\n".join(rows), r"\end{aligned}"]) + "\n"
    return "\n".join([*lines, times.join(factors)]) + "\n"


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["text", "latex"])
def test_diff_of_sin_nested_16000_deep_fits_in_memory(tmp_path, fmt):
    depth = 16_000
    (tmp_path / "deep.txt").write_text("sin(" * depth + "x" + ")" * depth)
    code, out, err = limited(
        f"nanograd diff -f deep.txt --format {fmt}", tmp_path, memory=DIFF_MEMORY
    )
    assert (code, err) == (0, "")
    assert out == sin_chain_derivative(depth, latex=fmt == "latex")


def statement_chain(x: float, lines: int) -> float:
    """d/dx of a = x, then `lines` times a = a*x - sin(a), by forward differentiation."""
    a, da = x, 1.0
    for _ in range(lines):
        a, da = a * x - math.sin(a), a + x * da - math.cos(a) * da
    return da


def horner(x: float, degree: int) -> float:
    """d/dx of (...((x*x + 1)*x + 2)*x + ...), `degree` products, by forward differentiation."""
    p, dp = x, 1.0
    for i in range(degree):
        p, dp = p * x + (i % 7 + 1), dp * x + p
    return dp


@pytest.mark.slow
@pytest.mark.parametrize(
    "source, derivative",
    [
        ("\n".join(["a = x"] + ["a = a*x - sin(a)"] * 8000), lambda x: statement_chain(x, 8000)),
        (
            "(" * 8000 + "x" + "".join(f"*x+{i % 7 + 1})" for i in range(8000)),
            lambda x: horner(x, 8000),
        ),
    ],
    ids=["8000 statements", "Horner, degree 8000"],
)
def test_diff_of_long_chains_fits_in_memory(tmp_path, source, derivative):
    (tmp_path / "chain.txt").write_text(source)
    code, out, err = limited("nanograd diff -f chain.txt", tmp_path, memory=DIFF_MEMORY)
    assert (code, err) == (0, "")
    printed = parse(out)
    for x in (0.5, -0.3):
        assert printed.values({"x": x})[printed.result] == pytest.approx(derivative(x), rel=1e-9)


# check: each finite difference costs the program's size.


@pytest.mark.slow
def test_check_of_2000_inputs_is_done_in_time(tmp_path):
    # 10 s; 2 minutes when every evaluation checked every input against a list of them
    names = [f"x{i}" for i in range(2000)]
    (tmp_path / "squares.txt").write_text(" + ".join(f"{n}*{n}" for n in names))
    values = {n: (i % 17 - 8) / 4 for i, n in enumerate(names)}
    inputs = " ".join(f"--var {n}={v}" for n, v in values.items())
    code, out, err = limited(
        f"nanograd check -f squares.txt {inputs} --format json", tmp_path, seconds=40
    )
    assert (code, err) == (0, "")
    checks = json.loads(out)["checks"]
    assert list(checks) == names
    for n, v in values.items():
        assert checks[n]["analytic"] == 2 * v
        assert checks[n]["numeric"] == pytest.approx(2 * v, abs=1e-6)
        assert checks[n]["pass"] is True


# The repl: each line costs its own size, not that of every definition before it.


@pytest.mark.slow
def test_a_repl_script_of_4000_definitions_is_linear(tmp_path):
    # 1,200 definitions took 14 s and 2,000 48 s when each line parsed every definition
    # before it; 4,000 definitions and 4,000 expressions now take about 5 s
    lines = ["x = 0.5"]
    lines += [f"a{i} = {'x' if i == 0 else f'a{i - 1}'}*x + {i % 7}" for i in range(4000)]
    lines += [f"b{i} = x*{i}" for i in range(4000)]
    lines += [f"b{i} + 1" for i in range(0, 4000, 2)]
    lines += ["a3999"]
    (tmp_path / "script.txt").write_text("\n".join(lines) + "\n")
    code, out, err = limited("nanograd repl < script.txt", tmp_path, seconds=30)
    assert (code, err) == (0, "")
    tables = out.split("        value")
    assert len(tables) == 1 + 2000 + 1
    expected = 0.5
    for i in range(4000):
        expected = expected * 0.5 + i % 7
    assert tables[-1].splitlines()[1].split() == ["result", repr(expected)]


@pytest.mark.slow
def test_a_repl_entry_left_open_is_refused_past_1_mb(tmp_path):
    code, out, err = limited(
        "(printf 'x = 1\\nx\\n(\\n'; yes 'x+') | nanograd repl", tmp_path, seconds=30
    )
    assert code == 1
    assert out == "        value  gradient\nresult  1.0\nx       1.0    1.0\n"
    assert err == (
        "error: line 3: the entry that starts here is longer than 1 MB with a parenthesis "
        "still open; an entry is at most that (nanograd grad -f FILE takes a longer source)\n"
    )


# Forward mode: tangents of the inputs a node depends on, let go after their last reader.


@pytest.mark.slow
def test_forward_mode_of_a_sum_of_10000_inputs_fits_in_memory(tmp_path):
    # 3.8 GB and 35 to 53 s when every node carried a derivative for every input; now 31 MB
    names = [f"x{i}" for i in range(10_000)]
    (tmp_path / "sum.txt").write_text(
        "+".join(f"{n}*{n}" if i % 2 else n for i, n in enumerate(names))
    )
    (tmp_path / "args.txt").write_text(" ".join(f"--var={n}={i % 5}" for i, n in enumerate(names)))
    code, out, err = limited(
        "nanograd grad -f sum.txt $(cat args.txt) --mode forward --format json",
        tmp_path,
        seconds=30,
        memory=600_000,
    )
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert result["value"] == sum(i % 5 if i % 2 == 0 else (i % 5) ** 2 for i in range(10_000))
    assert result["gradients"] == {
        n: 1.0 if i % 2 == 0 else 2.0 * (i % 5) for i, n in enumerate(names)
    }


def test_an_array_value_too_large_to_write_out_is_refused_before_it_is_read_whole():
    """zeros(100000000) as an input's value: refused by the size its graph would have, not
    after collecting a hundred million numbers (which took 8 s of CPU)."""
    code, out, err = run_limited('nanograd grad "sum(x)" --x "zeros(100000000)"', seconds=4)
    assert (code, out) == (1, ""), err  # (memory: no bad input, as a source too large)
    assert err.startswith(
        "error: --x zeros(100000000): written out in scalars, the arrays make 100,000,00"
    ), err
