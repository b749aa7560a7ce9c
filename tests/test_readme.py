"""README's install and start: the package it names from the index, the two commands of a
clone (in README and CONTRIBUTING alike), and the command that draws its first picture."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from .helpers import WORKED, run

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
INSTALLERS = ("pipx install ", "uv tool install ", "python -m pip install ")


def test_the_first_install_commands_take_this_package_from_the_index():
    """pipx, uv tool and pip install the distribution pyproject.toml names, with extras it
    has, before anything installs from a clone."""
    lines = README.splitlines()
    index = [
        line
        for line in lines
        if line.startswith(INSTALLERS) and "nanograd-cli[" in line.split()[-1]
    ]
    assert [line.removesuffix(line.split()[-1]) for line in index] == list(INSTALLERS)
    for line in index:
        requirement = Requirement(shlex.split(line)[-1])
        assert canonicalize_name(requirement.name) == canonicalize_name(PROJECT["name"])
        assert requirement.extras <= set(PROJECT["optional-dependencies"])
    first_clone = next(i for i, line in enumerate(lines) if "install '.[" in line)
    assert lines.index(index[-1]) < first_clone


def test_a_clone_starts_with_the_same_two_commands_in_readme_and_contributing():
    """Install and run; install and test: README's short version is CONTRIBUTING's, and the
    test command is the one CI runs."""

    def clone_commands(text: str) -> list[str]:
        """The lines that install from the clone, then run nanograd or the tests."""
        return [
            line
            for line in text.splitlines()
            if re.match(r"python -m pip install .*(\.\[all\]'|-e \.) .*&& (nanograd|python)", line)
        ]

    readme = clone_commands(README)
    assert readme == clone_commands(CONTRIBUTING)
    install_and_run, install_and_test = readme
    assert install_and_run.startswith("python -m pip install '.[all]' && nanograd grad ")
    # What it runs is README's first example, whose output tests/test_docs.py checks.
    assert f"$ {install_and_run.split(' && ', 1)[1]}\n" in README
    assert install_and_test.endswith("&& python -m pytest")
    assert install_and_test in (ROOT / ".ci" / "run").read_text().splitlines()


def test_the_pictures_command_draws_the_worked_example_without_the_tests_data():
    """The caption's command holds the program inline: the graph it draws is the one of
    tests/data/worked_example.txt, the picture's source, which an installed user lacks."""
    (command,) = re.findall(r"^\$ (nanograd draw \"\n.*?\" [^\n]*)$", README, re.M | re.S)
    args = shlex.split(command)
    assert args[0:2] == ["nanograd", "draw"] and "tests/data" not in command
    args[args.index("-o") + 1] = "-"
    inline = run(*args[1:])
    from_file = run("draw", WORKED, *args[3:])
    assert inline[0] == 0 and inline == from_file


def test_readme_says_posix_only_and_the_classifiers_list_each_python_from_the_lowest():
    assert (
        "Windows is not supported" in README
        and "Operating System :: POSIX" in (PROJECT["classifiers"])
    )
    lowest = int(PROJECT["requires-python"].removeprefix(">=3."))
    listed = sorted(
        int(c.rsplit(".", 1)[1])
        for c in PROJECT["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    )
    assert listed == list(range(lowest, lowest + len(listed)))
