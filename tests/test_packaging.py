"""The wheel: built from this tree, installed in a fresh virtualenv, run from elsewhere."""

from __future__ import annotations

import doctest
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from itertools import chain
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
UV = shutil.which("uv", path=str(BIN)) or "uv"
TWINE = shutil.which("twine", path=str(BIN)) or "twine"


@pytest.mark.slow
@pytest.mark.needs_network
def test_wheel_installs_and_runs_outside_the_source_tree(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
        check=True,
    )
    (wheel,) = wheels.glob("nanograd_cli-*.whl")
    # What users see: the extras of features; what the tests and benchmarks need is not one.
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read("nanograd_cli-0.1.0.dist-info/METADATA").decode()
    extras = {line.split(": ")[1] for line in metadata.splitlines() if "Provides-Extra" in line}
    assert extras == {"all", "fit", "plot", "plot-terminal", "points", "render", "repl"}
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
            "print(_tables.TABLES['grammar'] == open(p, encoding='utf-8').read())",
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
    # Type checkers read the installed package's annotations (its py.typed): a user's code
    # that uses every public name passes mypy --strict, and so do docs/python.md's examples,
    # one after another as a script.
    shutil.copy(ROOT / "tests" / "public_api.py", elsewhere)
    page = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    examples = [example.source for example in doctest.DocTestParser().get_examples(page)]
    (elsewhere / "python_page.py").write_text("".join(examples), encoding="utf-8")
    typed = subprocess.run(
        [
            BIN / "mypy",
            "--strict",
            "--no-incremental",
            "--python-executable",
            python,
            "public_api.py",
            "python_page.py",
        ],
        cwd=elsewhere,
        capture_output=True,
        text=True,
    )
    assert typed.returncode == 0, typed.stdout


def _installed(tmp_path: Path, installer: str) -> tuple[dict[str, str], Path]:
    """nanograd installed from this tree with the points extra as README says, by pipx, uv
    tool or pip --user, each into tmp_path: the environment its commands need, and the
    installed `nanograd`."""
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = os.pathsep.join([str(BIN), env.get("PATH", "")])
    home = tmp_path / installer
    if installer == "pipx":
        env |= {"PIPX_HOME": str(home), "PIPX_BIN_DIR": str(home / "bin")}
        env["PIPX_MAN_DIR"] = str(home / "man")
        command = ["pipx", "install", ".[points]"]
    elif installer == "uv":
        env |= {"UV_TOOL_DIR": str(home / "tools"), "UV_TOOL_BIN_DIR": str(home / "bin")}
        command = ["uv", "tool", "install", ".[points]"]
    else:  # the user's site-packages of the Python this virtualenv was made from
        python = Path(sys.base_prefix) / "bin" / "python3"
        if subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode:
            pytest.skip(f"{python} has no pip")
        env["PYTHONUSERBASE"] = str(home)
        command = [python, "-m", "pip", "install", "-q", "--user", ".[points]"]
    subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True)
    return env, home / "bin" / "nanograd"


@pytest.mark.slow
@pytest.mark.needs_network
@pytest.mark.parametrize("installer", ["pipx", "uv", "user"])
def test_installed_with_extras_it_names_the_command_that_adds_one(installer, tmp_path):
    """README's pipx and uv tool installs (and pip --user) work with an extra, and the message
    for a missing extra is a command that, run as printed, adds it there."""
    env, nanograd = _installed(tmp_path, installer)
    run = {"env": env, "cwd": tmp_path, "capture_output": True, "text": True}
    points = subprocess.run(
        [nanograd, "grad", "x*y", "--y", "3", "--points", "-"], **run, input="x\n2\n"
    )
    assert (points.returncode, points.stdout) == (0, "x,value,d_x,d_y\n2,6.0,3.0,2.0\n")
    plot = [nanograd, "plot", "sin(x)", "--x", "0:1"]
    missing = subprocess.run(plot, **run)
    message = "error: a terminal plot needs uniplot: install it with: "
    assert missing.returncode == 1 and missing.stderr.startswith(message), missing.stderr
    command = missing.stderr.removeprefix(message).strip()
    expected = {
        "pipx": "pipx inject nanograd-cli 'uniplot>=0.22'",
        "uv": f"uv tool install '{ROOT}[plot-terminal,points]'",
        "user": f"{Path(sys.base_prefix) / 'bin' / 'python3'} -m pip install --user "
        f"'{ROOT}[plot-terminal]'",
    }
    assert command == expected[installer]
    subprocess.run(["bash", "-c", command], **run, check=True)
    assert subprocess.run(plot, **run).returncode == 0
    # What the tool had stays: uv makes the environment what its command says.
    assert subprocess.run([nanograd, "grad", "x", "--points", "-"], **run, input="x\n1\n").stdout


@pytest.mark.slow
@pytest.mark.needs_network
def test_the_sdist_holds_its_tests_and_both_archives_pass_twine_check(tmp_path):
    """`uv build` makes the sdist and then the wheel from it, as an index's users get them;
    `twine check` reads both as the index would. The sdist, unpacked and installed, runs its
    own tests: their data, the docs they check and the CI pins are in it."""
    dist = tmp_path / "dist"
    subprocess.run([UV, "build", "-q", "--out-dir", str(dist), str(ROOT)], check=True)
    (sdist,) = dist.glob("nanograd_cli-*.tar.gz")
    (wheel,) = dist.glob("nanograd_cli-*.whl")
    checked = subprocess.run(
        [TWINE, "check", "--strict", sdist, wheel], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path, filter="data")
    unpacked = tmp_path / sdist.name.removesuffix(".tar.gz")
    for part in ["LICENSE", "CHANGELOG.md", "CONTRIBUTING.md", "docs/img/worked_example.png"]:
        assert (unpacked / part).is_file(), part
    # A virtualenv with the sdist's build installed, and the test dependencies of this one.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "tests_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True)
    tests = [
        "tests/test_grammar_tables.py",
        "tests/test_language.py",
        "tests/test_layers.py",
        "tests/test_cli.py",
        "tests/test_packaging.py::test_the_lowest_job_pins_exactly_the_lower_bounds",
        "tests/test_docs.py::test_examples_are_collected",
        "tests/test_docs.py::test_readme_links_are_absolute_and_lead_to_files_and_headings",
    ]
    ran = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        cwd=unpacked,
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stdout[-3000:]
    assert " passed" in ran.stdout.splitlines()[-1]


# The dependency groups that .ci/lowest leaves out (pyproject.toml says why).
NOT_LOWEST = ("notebook", "references")


def _lower_bounds(lowest_job: bool = False) -> dict[str, set[Version]]:
    """The `>=` bounds in pyproject.toml by package name, from every list that names it: the
    dependencies, the extras and the dependency groups (with `lowest_job`, those that
    .ci/lowest installs)."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = pyproject["project"]
    groups = pyproject["dependency-groups"]
    lists = [
        project["dependencies"],
        *project["optional-dependencies"].values(),
        *(group for name, group in groups.items() if not (lowest_job and name in NOT_LOWEST)),
    ]
    bounds: dict[str, set[Version]] = {}
    # A group's {include-group = ...} is no requirement: the group it names is in the lists.
    for line in (item for item in chain(*lists) if isinstance(item, str)):
        requirement = Requirement(line)
        operators = {spec.operator for spec in requirement.specifier}
        # Exact pins (the benchmarks' references) need no lowest-version run; anything else
        # needs a lower bound, or that run would not know what to install.
        assert ">=" in operators or operators == {"=="}, f"{line}: no lower bound"
        for spec in requirement.specifier:
            if spec.operator == ">=":
                name = canonicalize_name(requirement.name)
                bounds.setdefault(name, set()).add(Version(spec.version))
    return bounds


def _lowest_pins() -> dict[str, Version]:
    """The `==` pins of .ci/lowest.txt, the constraints CI's lowest-versions job installs."""
    pins = {}
    for line in (ROOT / ".ci" / "lowest.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        specs = list(requirement.specifier)
        # Other lines (ranges) hold our dependencies' own dependencies back.
        if [spec.operator for spec in specs] == ["=="]:
            name = canonicalize_name(requirement.name)
            assert name not in pins, f"{requirement.name} is pinned twice"
            pins[name] = Version(specs[0].version)
    return pins


def test_each_dependency_has_one_lower_bound():
    assert {name: v for name, v in _lower_bounds().items() if len(v) > 1} == {}


def test_the_lowest_job_pins_exactly_the_lower_bounds():
    bounds = {name: min(versions) for name, versions in _lower_bounds(lowest_job=True).items()}
    assert _lowest_pins() == bounds


def test_the_pages_files_are_package_data():
    """Every file beside the renderer's modules (the page's HTML and scripts) ships."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
    listed = set(tool["setuptools"]["package-data"]["nanograd_cli.render"])
    files = {p.name for p in (ROOT / "nanograd_cli" / "render").iterdir() if p.is_file()}
    assert {name for name in files if not name.endswith((".py", ".pyc"))} == listed


def test_every_package_of_the_tree_is_in_the_wheel():
    """`[tool.setuptools] packages` lists the packages by hand: one left out is missing from the
    wheel (and the sdist's install) while the tests, run from the tree, still pass."""
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    in_tree = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "nanograd_cli").rglob("__init__.py")
    }
    assert in_tree <= set(listed["packages"])


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    (command,) = [line for line in readme.splitlines() if line.endswith("python -m pytest")]
    assert command in (ROOT / ".ci" / "run").read_text().splitlines()
