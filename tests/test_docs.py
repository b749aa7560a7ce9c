"""Every `$ nanograd ...` example in README.md and docs/*.md runs and prints what the doc shows.

In a fenced code block, a line `$ COMMAND` is followed by its expected output (standard output
and standard error, merged) up to the next `$ ` line or the end of the block. A command whose
quotes are still open continues on the next line. `<!-- not tested: REASON -->` on the line
before a fence skips that block.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NANOGRAD = re.compile(r"^nanograd\b|\|\s*nanograd\b")  # runs nanograd, or pipes into it
NOT_TESTED = re.compile(r"<!-- not tested: (.+) -->")
ENV = {
    **{k: v for k, v in os.environ.items() if k != "NO_COLOR"},
    "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    "COLUMNS": "80",
}


def closed(command: str) -> bool:
    """Whether every quote in the shell command is closed."""
    try:
        shlex.split(command)
    except ValueError:
        return False
    return True


def blocks(lines: list[str]):
    """Yield (index of the first line, lines, skip reason or None) per fenced code block."""
    start = None
    for i, line in enumerate(lines):
        if not line.startswith("```"):
            continue
        if start is None:
            start = i
            continue
        marker = NOT_TESTED.fullmatch(lines[start - 1].strip()) if start else None
        yield start + 1, lines[start + 1 : i], marker and marker[1]
        start = None


def examples(path: Path):
    """One pytest.param(command, expected output) per nanograd example in the file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for first, body, reason in blocks(lines):
        k = 0
        while k < len(body):
            if not body[k].startswith("$ "):
                k += 1
                continue
            number, command = first + k + 1, body[k][2:]
            k += 1
            while not closed(command) and k < len(body):
                command += "\n" + body[k]
                k += 1
            output = []
            while k < len(body) and not body[k].startswith("$ "):
                output.append(body[k])
                k += 1
            if NANOGRAD.search(command):
                marks = [pytest.mark.skip(reason=f"not tested: {reason}")] if reason else []
                name = f"{path.relative_to(ROOT).as_posix()}:{number}"
                yield pytest.param(command, "\n".join(output).strip("\n"), id=name, marks=marks)


EXAMPLES = [example for path in DOCS for example in examples(path)]


@pytest.mark.parametrize("command, expected", EXAMPLES)
def test_doc_example(command: str, expected: str, tmp_path: Path):
    """The example prints exactly the lines shown, and fails if and only if they say `error:`."""
    result = subprocess.run(
        ["bash", "-c", f"set -o pipefail\n{command}"],
        cwd=tmp_path,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        encoding="utf-8",
        timeout=120,
    )
    assert result.stdout.rstrip("\n") == expected
    assert (result.returncode != 0) == expected.startswith("error:"), result.returncode


def test_examples_are_collected():
    """The collector finds the examples: a broken one would find none, and every test pass."""
    run = [example for example in EXAMPLES if not example.marks]
    assert len(run) >= 15, [example.id for example in EXAMPLES]


def test_readme_links_are_absolute_and_lead_to_files_and_headings():
    """README is also the package's page on the index, where a relative link leads nowhere:
    every link into the repository is absolute, under the project's URL, and names a file of
    this tree (and a heading of it, for a #fragment)."""
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    repository = urls["Source"].removeprefix("https://github.com/")
    pages = f"https://github.com/{repository}/blob/main/"
    raw = f"https://raw.githubusercontent.com/{repository}/main/"
    links = re.findall(r"\]\(([^)\s]+)\)", (ROOT / "README.md").read_text())
    assert links
    for link in links:
        assert link.startswith(("https://", "#")), f"{link} is relative"
        if not link.startswith((pages, raw)):
            continue
        path, _, fragment = link.removeprefix(pages).removeprefix(raw).partition("#")
        assert (ROOT / path).is_file(), link
        if fragment:
            headings = re.findall(r"^#+ (.+)$", (ROOT / path).read_text(), re.MULTILINE)
            assert fragment in [anchor(h) for h in headings], link


def anchor(heading: str) -> str:
    """The #fragment that GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
