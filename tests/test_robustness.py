"""Hostile input and faults: a committed corpus of bad sources with their exact messages,
the numeric domain policy, fuzzing through the command line, and injection."""

from __future__ import annotations

import json
import os
import shutil
import string
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nanograd_cli import Value, parse
from nanograd_cli import _language as language
from nanograd_cli._language import check_memory
from nanograd_cli._prelude import DEFINED
from nanograd_cli.errors import NanogradError
from nanograd_cli.render import graph

from .helpers import run

DATA = Path(__file__).resolve().parent / "data"
CORPUS = json.loads((DATA / "bad_sources.json").read_text())
FUZZ_EXAMPLES = int(os.environ.get("NANOGRAD_FUZZ_EXAMPLES", "700"))


@pytest.mark.parametrize("case", CORPUS, ids=[c["name"] for c in CORPUS])
def test_corpus_of_bad_sources(case):
    """`{functions}` in an expected message stands for the list of functions in the ops table's
    order, then the prelude's, so that a new function needs no edit here."""
    code, out, err = run("grad", "-", "--x", "1", "--y", "2", stdin=case["source"])
    functions = ", ".join([*language.FUNCTIONS, *DEFINED])
    expected = case["stderr"].replace("{functions}", functions)
    assert (code, out, err) == (case["exit"], "", expected)


@pytest.mark.slow
def test_a_megabyte_line():
    good = "+".join(["x"] * 500_000)
    code, out, _ = run("grad", "-", "--x", "1", "--format", "csv", stdin=good)
    assert (code, out) == (0, "value,d_x\n500000.0,500000.0\n")
    bad = good + "+"
    code, out, err = run("grad", "-", "--x", "1", stdin=bad)
    assert (code, out) == (2, "")
    first = err.splitlines()[0]
    assert first == f"error: line 1, column {len(bad) + 1}: expected an expression after '+'"
    long_name = "x" * 1_000_000
    code, out, _ = run("grad", "-", f"--{long_name}", "2", "--format", "csv", stdin=long_name)
    assert (code, out) == (0, f"value,d_{long_name}\n2.0,1.0\n")


@pytest.mark.parametrize(
    ("source", "x", "json_line", "warning"),
    [
        (
            "log(x)",
            "-1",
            '{"value": "nan", "inputs": {"x": -1.0}, "gradients": {"x": -1.0}}',
            "log gave nan",
        ),
        (
            "sqrt(x)",
            "-1",
            '{"value": "nan", "inputs": {"x": -1.0}, "gradients": {"x": "nan"}}',
            "sqrt gave nan",
        ),
        (
            "1/x",
            "0",
            '{"value": "inf", "inputs": {"x": 0.0}, "gradients": {"x": "-inf"}}',
            "'/' gave inf",
        ),
        (
            "x**-1",
            "0",
            '{"value": "inf", "inputs": {"x": 0.0}, "gradients": {"x": "-inf"}}',
            "'**' gave inf",
        ),
        (
            "exp(x)",
            "1000",
            '{"value": "inf", "inputs": {"x": 1000.0}, "gradients": {"x": "inf"}}',
            "exp gave inf",
        ),
        (
            "x**(1/3)",
            "-8",
            '{"value": "nan", "inputs": {"x": -8.0}, "gradients": {"x": "nan"}}',
            "'**' gave nan",
        ),
        ("x**2", "-3", '{"value": 9.0, "inputs": {"x": -3.0}, "gradients": {"x": -6.0}}', None),
        ("(-2)**x", "2", '{"value": 4.0, "inputs": {"x": 2.0}, "gradients": {"x": "nan"}}', None),
    ],
)
def test_numeric_domain_policy(source, x, json_line, warning):
    code, out, err = run("grad", "-", "--x", x, "--format", "json", stdin=source)
    assert (code, out) == (0, json_line + "\n")
    if warning is None:
        assert err == ""
    else:
        assert (
            err.splitlines()[0]
            == f"warning: line 1, column {err.split('column ')[1].split(':')[0]}: {warning}"
        )
        code, out, err = run("grad", "-", "--x", x, "--strict", stdin=source)
        assert (code, out) == (1, "")
        assert err.startswith("error: line 1, column ")


def check_outcome(code: int, out: str, err: str) -> None:
    """What any input may produce: 0 with one JSON object, or 1/2 with one error and no output."""
    assert "Traceback" not in err and "internal error" not in err, err
    assert code in (0, 1, 2), (code, err)
    if code == 0:
        json.loads(out)  # exactly one object
        assert out.count("\n") == 1
    else:
        assert out == ""
        assert err.startswith("error: ") and err.count("error: ") == 1, err


# Well-formed programs, from the grammar.
NAMES = st.sampled_from(["x", "y", "a", "b", "_t1", "pi", "e"])
NUMBERS = st.sampled_from(["2", "2.5", "2.", ".5", "1e-3", "2.5E+4", "0", "1e308"])
FUNCTIONS = st.sampled_from(["exp", "log", "sqrt", "sin", "tanh", "sigmoid", "relu", "abs", "tan"])
OPERATORS = st.sampled_from(["+", "-", "*", "/", "**", "^"])


def expression():
    return st.recursive(
        st.one_of(NAMES, NUMBERS),
        lambda inner: st.one_of(
            st.tuples(inner, OPERATORS, inner).map(" ".join),
            st.tuples(FUNCTIONS, inner).map(lambda t: f"{t[0]}({t[1]})"),
            inner.map(lambda e: f"({e})"),
            inner.map(lambda e: f"-{e}"),
        ),
        max_leaves=10,
    )


def statement():
    return st.one_of(
        expression(),
        st.tuples(
            st.sampled_from(["a", "b", "c"]), st.sampled_from(["=", "+=", "*=", "/="]), expression()
        ).map(" ".join),
    )


programs = st.lists(
    st.tuples(statement(), st.sampled_from(["\n", ";", "\r\n", "  # note\n"])),
    min_size=1,
    max_size=6,
).map(lambda parts: "".join(s + sep for s, sep in parts))


def mutate(source: str, data) -> str:
    """Drop, swap, insert or replace characters; add unicode, control bytes, long tokens."""
    chars = list(source)
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(["drop", "swap", "insert", "long"]))
        i = data.draw(st.integers(0, max(len(chars) - 1, 0)))
        if kind == "drop" and chars:
            del chars[i]
        elif kind == "swap" and len(chars) > 1:
            j = data.draw(st.integers(0, len(chars) - 1))
            chars[i], chars[j] = chars[j], chars[i]
        elif kind == "insert":
            alphabet = st.one_of(
                st.sampled_from(list(string.printable)),
                st.characters(codec="utf-8"),
                st.sampled_from(["\x00", "\x1b", "\ufeff", "\u2212", "\uff08", "\r"]),
            )
            chars.insert(i, data.draw(alphabet))
        else:
            chars.insert(
                i, data.draw(st.sampled_from(["x" * 5000, "9" * 400, "(" * 3000, "1e" + "9" * 50]))
            )
    return "".join(chars)


FUZZ = settings(
    max_examples=FUZZ_EXAMPLES,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def var_args(source: str) -> list[str]:
    """`--var NAME=0.7` for each input of `source`, if it parses."""
    try:
        names = parse(source).inputs
    except NanogradError:
        names = []
    return [arg for n in names for arg in ("--var", f"{n}=0.7")]


@pytest.mark.slow
@FUZZ
@given(programs)
def test_fuzz_well_formed_programs(source):
    values = var_args(source)
    check_outcome(*run("grad", "-", *values, "--format", "json", stdin=source))


@pytest.mark.slow
@FUZZ
@given(programs, st.data())
def test_fuzz_mutated_programs(source, data):
    mutated = mutate(source, data)
    check_outcome(*run("grad", "-", "--var", "x=0.5", "--format", "json", stdin=mutated))


@settings(max_examples=max(FUZZ_EXAMPLES // 3, 50), derandomize=True, deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_random_bytes(raw):
    check_outcome(*run("grad", "-", "--var", "x=0.5", "--format", "json", stdin=raw))


@pytest.mark.slow
@settings(max_examples=max(FUZZ_EXAMPLES // 3, 50), derandomize=True, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=6))
def test_fuzz_command_lines(args):
    code, out, err = run("grad", *args)
    assert "Traceback" not in err and "internal error" not in err
    assert code in (0, 1, 2)
    if code:
        assert out == "" and err.startswith("error: ")


@pytest.mark.slow
@settings(max_examples=max(FUZZ_EXAMPLES // 5, 50), derandomize=True, deadline=None)
@given(programs)
def test_fuzz_draw(source):
    values = var_args(source)
    code, out, err = run("draw", "-", *values, stdin=source)
    assert "Traceback" not in err and code in (0, 1, 2)
    if code == 0:
        assert out.startswith("digraph nanograd {") and out.rstrip().endswith("}")


def test_huge_source_fails_clearly_when_memory_would_run_out(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 1000 kB\nMemAvailable: 1000 kB\n")
    with pytest.raises(NanogradError) as caught:
        check_memory(100_000_000, str(meminfo))
    assert str(caught.value) == (
        "the source is 100 MB: its graph would need about 40.0 GB of memory, and 0.0 GB is free"
    )
    check_memory(1_000, str(meminfo))  # small sources are fine
    check_memory(100_000_000, str(tmp_path / "absent"))  # unknown: go ahead


def test_read_only_location(tmp_path):
    code, out, err = run("draw", "x", "--x", "1", "-o", "/proc/graph.dot")
    assert (code, out) == (1, "")
    assert err.startswith("error: cannot write /proc/graph.dot: ")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_names_cannot_escape_record_labels():
    x = Value(1.0)
    y = x * 2
    y.backward()
    hostile = 'a"b{c}|<d> \\" ] ; -> e'
    svg = graph.render(graph.draw_dot(y, names={x: hostile}).source, "svg")
    ns = {"svg": "http://www.w3.org/2000/svg"}
    texts = [t.text for t in ET.fromstring(svg).iterfind(".//svg:text", ns)]
    assert hostile in texts
    assert len(ET.fromstring(svg).findall(".//svg:g[@class='node']", ns)) == 4  # x, 2, *, y
