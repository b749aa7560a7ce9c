"""The stored parser tables are reproducible: the same text under any hash seed."""

import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nanograd_cli import grammar

RENDER = (
    "import sys\n"
    "from nanograd_cli.grammar import build_tables, grammar_path, render_tables\n"
    "sys.stdout.write(render_tables(build_tables(open(grammar_path(), encoding='utf-8').read())))\n"
)


@functools.cache
def rendered_under(seed: str) -> str:
    """The tables' text as built in a fresh process with PYTHONHASHSEED=seed."""
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(
        [sys.executable, "-c", RENDER],
        env=env,
        capture_output=True,
        encoding="utf-8",
        check=True,
    )
    return done.stdout


@pytest.mark.slow
def test_tables_are_the_same_under_any_hash_seed():
    assert rendered_under("0") == rendered_under("12345")


def test_stored_tables_are_the_regenerated_ones():
    stored = Path(grammar.TABLES_PATH).read_text(encoding="utf-8")
    assert rendered_under("0") == stored, "run: python -m nanograd_cli.grammar"
