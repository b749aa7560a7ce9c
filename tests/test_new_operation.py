"""CONTRIBUTING.md's steps for a new operation, taken as written: in a copy of the repository,
each step it lists is done for an op of this test's own (isru, x/sqrt(1 + x**2)), and nothing
else; then the engine, forward mode, the compiled code, symbolic differentiation, the tape,
the live page's JavaScript, the type declarations and the docs all have it. A step missing
from the description is missing from the copy, and a check fails."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NAME = "isru"

ROW = """    Op(
        "isru",
        1,
        lambda x: x / math.hypot(1.0, x),
        ("1/hypot(1, x)**3",),
        "x/sqrt(1 + x**2), the inverse square root unit",
    ),
"""
STEP = (
    '    OPS["isru"]: _fixed(_unary(lambda y, x: np.divide(x, np.hypot(1.0, x), out=y), '
    "lambda s, x, y: np.power(np.hypot(1.0, x), -3.0, out=s))),\n"
)
JAVASCRIPT = "const isru = (x) => x / Math.hypot(1, x);\n"
DECLARATION = (
    "        def isru(self) -> Value:\n"
    '            """x/sqrt(1 + x**2), the inverse square root unit"""\n'
)
DOCS_ROW = "| `isru(x)` | x/sqrt(1 + x**2), the inverse square root unit | `1/hypot(1, x)**3` |\n"


def _insert(path: Path, after: str, text: str) -> None:
    """`text` inserted at the end of the first line that starts with `after` (or at `after`,
    if it ends with a newline)."""
    source = path.read_text(encoding="utf-8")
    at = source.index(after)
    end = at + len(after) if after.endswith("\n") else source.index("\n", at) + 1
    path.write_text(source[:end] + text + source[end:], encoding="utf-8")


def _append(path: Path) -> None:
    path.write_text(path.read_text(encoding="utf-8") + JAVASCRIPT, encoding="utf-8")


def _run(copy: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=600
    )


def _regenerate(copy: Path) -> None:
    done = _run(copy, "-m", "nanograd_cli._derivatives_writer")
    assert done.returncode == 0, done.stderr


# What each step does in the copy, by the place the step names (its first `code`).
EDITS = {
    "nanograd_cli/_ops.py": lambda copy: _insert(
        copy / "nanograd_cli/_ops.py", "_TABLE = [\n", ROW
    ),
    "nanograd_cli/_vector_ops.py": lambda copy: _insert(
        copy / "nanograd_cli/_vector_ops.py", "STEPS: dict[Op, Callable[..., Step]] = {\n", STEP
    ),
    "nanograd_cli/render/ops.js": lambda copy: _append(copy / "nanograd_cli/render/ops.js"),
    "python -m nanograd_cli._derivatives_writer": _regenerate,
    "nanograd_cli/engine.py": lambda copy: _insert(
        copy / "nanograd_cli/engine.py",
        '            """the nearest integer, halves to even',
        DECLARATION,
    ),
    "docs/language.md": lambda copy: _insert(copy / "docs/language.md", "| `abs(x)` |", DOCS_ROW),
}


def described_steps() -> list[str]:
    """The place each step of CONTRIBUTING.md's "A new operation" names, in order."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text.split("## A new operation", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\d+\. `([^`]+)`", section, re.MULTILINE)


CHECK = textwrap.dedent(
    """
    import json, math
    import nanograd_cli
    from nanograd_cli import parse
    from nanograd_cli._compiled import gradients_at
    from nanograd_cli.engine import Value
    from nanograd_cli._symbolic import gradient, to_source
    from nanograd_cli._tape import batch_gradients

    x = 0.7
    exact = (1 + x * x) ** -1.5
    program = parse("isru(x)")
    found = {
        "module": nanograd_cli.__file__,
        "engine": program.grad({"x": x}).gradients["x"],
        "forward mode": program.grad({"x": x}, "forward").gradients["x"],
        "compiled": gradients_at(program, {"x": x})[1]["x"],
        "tape": float(batch_gradients(program, {"x": [x]})[1]["x"][0]),
        "symbolic": parse(to_source(gradient(program, ["x"]))).values({"x": x})[-1],
    }
    v = Value(x)
    v.isru().backward()
    found["Value.isru"] = v.grad
    print(json.dumps({"exact": exact, **found}))
    """
)

# The tests that hold the op to its parts, run in the copy.
TESTS = [
    "tests/test_derivatives.py",
    "tests/test_engine.py::test_the_methods_declared_for_type_checkers_are_those_made_from_the_table",
    "tests/test_language.py::test_language_reference_lists_every_operation_with_its_derivative",
    "tests/test_calculus.py::test_formulas_in_the_table_are_the_derivatives_at_edge_points",
    "tests/test_ops_js.py::test_every_function_the_page_calls_is_defined_in_ops_js",
    "tests/test_ops_js.py::test_the_script_runs_every_op_as_python_does",
]


def test_the_steps_name_each_place_a_new_operation_needs_once():
    assert sorted(described_steps()) == sorted(EDITS)


@pytest.mark.slow
def test_the_described_steps_make_a_working_operation(tmp_path):
    copy = tmp_path / "repository"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in ("nanograd_cli", "tests", "docs", "grammars"):
        shutil.copytree(ROOT / part, copy / part, ignore=ignore)
    for part in ("pyproject.toml", "CONTRIBUTING.md"):
        shutil.copy(ROOT / part, copy / part)
    for place in described_steps():
        EDITS[place](copy)
    done = _run(copy, "-c", CHECK)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found.pop("module").startswith(str(copy))
    exact = found.pop("exact")
    assert found == pytest.approx(dict.fromkeys(found, exact), rel=1e-14)
    done = _run(copy, "-m", "pytest", "-n", "0", "-q", "-p", "no:cacheprovider", *TESTS)
    assert done.returncode == 0, done.stdout[-3000:]
    assert NAME in _run(copy, "-m", "pytest", "-n", "0", "-q", "--co", TESTS[3]).stdout
