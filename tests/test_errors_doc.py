"""Every row of docs/errors.md's message tables is what the command says: the source table's
sources through `nanograd grad`, the options table's commands as written (in a shell where
they need one)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .helpers import as_typed, in_process, limited, on_terminal, visible

ERRORS = (Path(__file__).resolve().parents[1] / "docs" / "errors.md").read_text(encoding="utf-8")


def table(heading: str) -> list[list[str]]:
    """The rows of the table under `heading`: the first column's text, and each other cell's
    first code span (`...`, with `\\|` read as `|`)."""
    section = ERRORS.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]
    cells = [[text.strip() for text in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]
    return [[first, *map(cell, rest)] for first, *rest in cells]


def cell(text: str) -> str:
    code = re.search(r"`([^`]*)`", text)
    return code.group(1).replace("\\|", "|") if code else text


def expected(message: str) -> re.Pattern:
    """A documented message, where `...` stands for the rest of a long one."""
    return re.compile(".*".join(re.escape(part) for part in message.split("...")))


SOURCES = [
    [cell(source), message] for source, message in table("Messages about the source (exit 2)")
]
OPTIONS = table("Messages about inputs and options (exit 2)")


@pytest.mark.parametrize(("source", "message"), SOURCES, ids=[r[0] for r in SOURCES])
def test_every_message_about_the_source_is_what_grad_says(source, message, tmp_path):
    done = in_process("grad", "-e", source, "--x", "1", cwd=tmp_path)
    code, out, err = done.returncode, done.stdout, done.stderr
    assert (code, out) == (2, "")
    first = err.splitlines()[0]
    assert expected(message).search(first), first


@pytest.mark.slow
@pytest.mark.parametrize(
    ("situation", "command", "message"), OPTIONS, ids=[r[1][:40] for r in OPTIONS]
)
def test_every_message_about_inputs_and_options_is_what_the_command_says(
    situation, command, message, tmp_path
):
    if "to a terminal" in situation:
        first = visible(on_terminal(*command.split()[1:]))[0]
    else:
        _, _, err = as_typed(command, cwd=tmp_path)
        first = err.splitlines()[0]
    assert first.startswith("error: ") and expected(message).fullmatch(first[len("error: ") :])


def test_an_option_after_the_source_is_not_taken_for_the_source(tmp_path):
    """`-x 1` after `-e x*y` is an input's value with one dash: no hint about a source that
    begins with - (which goes after -e), as there is one already."""
    code, out, err = limited("nanograd grad -e x*y -x 1 --y 2", cwd=tmp_path)
    assert (code, out) == (2, "")
    assert err.splitlines()[:2] == [
        "error: No such option '-x': an input's value is --x VALUE",
        "Try 'nanograd grad --help' for help.",
    ]


def test_the_tables_are_read():
    assert len(SOURCES) > 20 and len(OPTIONS) > 15
