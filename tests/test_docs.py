"""Every `$ nanograd ...` example in README.md and docs/*.md runs and prints what the doc shows.

In a fenced code block, a line `$ COMMAND` is followed by its expected output (standard output
and standard error, merged) up to the next `$ ` line or the end of the block. A command whose
quotes are still open continues on the next line. `<!-- not tested: REASON -->` on the line
before a fence skips that block.

`python -m pytest tests/test_docs.py --update-docs` rewrites instead: each example's output in
the page becomes what the command prints (every block but those not tested), so a change in
what the commands show is one command and a diff to review.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NANOGRAD = re.compile(
    r"(^|[|;&]\s*)nanograd\b"
)  # runs nanograd (after a ; or &&), or pipes into it
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


def shown(lines: list[str]):
    """Yield (command, its line, first and end line of its output, skip reason or None) per
    nanograd example in the lines of a page (indices from 0)."""
    for first, body, reason in blocks(lines):
        k = 0
        while k < len(body):
            if not body[k].startswith("$ "):
                k += 1
                continue
            at, command = first + k, body[k][2:]
            k += 1
            while not closed(command) and k < len(body):
                command += "\n" + body[k]
                k += 1
            start = k
            while k < len(body) and not body[k].startswith("$ "):
                k += 1
            if NANOGRAD.search(command):
                yield command, at, first + start, first + k, reason


def examples(path: Path):
    """One pytest.param(command, expected output) per nanograd example in the file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for command, at, start, end, reason in shown(lines):
        marks = [pytest.mark.skip(reason=f"not tested: {reason}")] if reason else []
        page = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        name = f"{page.as_posix()}:{at + 1}"
        output = "\n".join(lines[start:end]).strip("\n")
        yield pytest.param(command, output, id=name, marks=marks)


def run_example(command: str, cwd: Path) -> subprocess.CompletedProcess:
    """The example run by bash in `cwd`, standard output and error merged, as a reader's
    terminal of 80 columns would run it (without being one)."""
    return subprocess.run(
        ["bash", "-c", f"set -o pipefail\n{command}"],
        cwd=cwd,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        encoding="utf-8",
        timeout=120,
    )


def rewritten(path: Path) -> str:
    """The page with each tested example's output replaced by what the command prints now;
    blank lines around an output, and every block marked not tested, stay as they are."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    # From the last example up, so that the line numbers of those above still hold.
    for command, _, start, end, reason in reversed(list(shown(lines))):
        if reason:
            continue
        with tempfile.TemporaryDirectory() as cwd:
            printed = run_example(command, Path(cwd)).stdout.rstrip("\n")
        region = lines[start:end]
        filled = [i for i, line in enumerate(region) if line.strip()]
        before = filled[0] if filled else len(region)
        after = len(region) - 1 - filled[-1] if filled else 0
        new = printed.split("\n") if printed else []
        lines[start:end] = region[:before] + new + region[len(region) - after :]
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")


EXAMPLES = [example for path in DOCS for example in examples(path)]


@pytest.mark.parametrize("command, expected", EXAMPLES)
def test_doc_example(command: str, expected: str, tmp_path: Path):
    """The example prints exactly the lines shown, and fails if and only if they say `error:`."""
    result = run_example(command, tmp_path)
    assert result.stdout.rstrip("\n") == expected
    assert (result.returncode != 0) == expected.startswith("error:"), result.returncode


def test_update_docs():
    """With --update-docs (and only then: conftest.py), every page gets its examples' output
    as printed now."""
    for path in DOCS:
        text = rewritten(path)
        if text != path.read_text(encoding="utf-8"):
            path.write_text(text, encoding="utf-8")


STALE = """\
Intro.

```
$ nanograd diff 'x**3' --wrt x
3*x**3

$ nanograd grad x --x 1 --format csv
value,d_x
```

<!-- not tested: an example of one left alone -->
```
$ nanograd diff 'x**3' --wrt x
anything
```
"""


@pytest.mark.slow
def test_update_rewrites_stale_output_keeps_the_rest_and_then_changes_nothing(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(STALE, encoding="utf-8")
    once = rewritten(page)
    assert once == STALE.replace("3*x**3\n", "3*x**2\n").replace(
        "value,d_x\n", "value,d_x\n1.0,1.0\n"
    )
    page.write_text(once, encoding="utf-8")
    assert rewritten(page) == once
    assert [(example.values, example.marks) for example in examples(page)][:2] == [
        (("nanograd diff 'x**3' --wrt x", "3*x**2"), []),
        (("nanograd grad x --x 1 --format csv", "value,d_x\n1.0,1.0"), []),
    ]


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
