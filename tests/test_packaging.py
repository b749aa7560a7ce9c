"""The wheel: built from this tree, installed in a fresh virtualenv, run from elsewhere."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.needs_network
def test_wheel_installs_and_runs_outside_the_source_tree(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
        check=True,
    )
    (wheel,) = wheels.glob("nanograd_cli-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", str(wheel)], check=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = subprocess.run(
        [
            venv / "bin" / "nanograd",
            "grad",
            "x*y+tanh(x)",
            "--x",
            "2",
            "--y",
            "3",
            "--format",
            "json",
        ],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout)["gradients"] == {"x": 3.0706508248531645, "y": 2.0}
    # The grammar file ships inside the package, and the stored tables match it.
    found = subprocess.run(
        [
            python,
            "-c",
            "from nanograd_cli import grammar, _tables;"
            "p = grammar.grammar_path(); print(p);"
            "print(_tables.TABLES['grammar'] == p.read_text())",
        ],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert found[0].startswith(str(venv)) and found[0].endswith(
        "nanograd_cli/grammars/nanograd.lark"
    )
    assert found[1] == "True"
