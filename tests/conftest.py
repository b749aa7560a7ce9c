"""Helpers shared by the tests: running the command line, the worked example, random
expressions."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from hypothesis import strategies as st

from nanograd_cli.cli import main

DATA = Path(__file__).resolve().parent / "data"
WORKED = str(DATA / "worked_example.txt")


def run(*args: str, stdin: str | bytes | None = None):
    """Run the command line as `main` does; returns (exit code, stdout, stderr)."""
    runner = CliRunner()
    result = runner.invoke(_entry, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


class _Entry:
    """Adapt `main` (which maps errors to exit codes) to CliRunner."""

    name = "nanograd"

    def main(self, args, prog_name=None, **extra):
        main(args)


_entry = _Entry()

SMOOTH = ["tanh", "sin", "cos", "sigmoid", "exp", "atan", "softplus"]


def expressions(depth: int = 4) -> st.SearchStrategy[str]:
    """Random expressions in x, y and z of smooth functions and arithmetic."""
    leaves = st.sampled_from(["x", "y", "z", "0.5", "2", "1.5", "pi"])

    def extend(inner):
        return st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*"]), inner).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"
            ),
            st.tuples(st.sampled_from(SMOOTH), inner).map(lambda t: f"{t[0]}({t[1]})"),
            inner.map(lambda e: f"-{e}"),
            inner.map(lambda e: f"({e})**2"),
            st.tuples(inner, inner).map(lambda t: f"{t[0]} / (1 + ({t[1]})**2)"),
        )

    return st.recursive(leaves, extend, max_leaves=12)


POINT = {"x": 0.3, "y": -0.7, "z": 1.1}
