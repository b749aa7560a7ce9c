"""A missing extra's message names the command that installs it where nanograd is installed:
pipx, a uv tool, a virtualenv (active or not), the user's site-packages. The slow test in
test_packaging.py installs with pipx, uv and pip --user for real and runs what they say."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata

import pytest

from nanograd_cli import _extras as extras

from .helpers import NOT_ACTIVE, ROOT, pip_hint

REQUIRES = [
    'matplotlib>=3.8.4; extra == "plot"',
    'uniplot>=0.22; extra == "plot"',
    'uniplot>=0.22; extra == "plot-terminal"',
    'pyarrow>=16; extra == "points"',
]


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """nanograd's metadata as an installer left it, with direct_url.json as given."""

    def make(direct_url: dict | None = None) -> None:
        info = tmp_path / "nanograd_cli-0.1.0.dist-info"
        info.mkdir(exist_ok=True)
        lines = ["Metadata-Version: 2.4", "Name: nanograd-cli", "Version: 0.1.0"]
        lines += [f"Requires-Dist: {r}" for r in REQUIRES]
        (info / "METADATA").write_text("\n".join(lines) + "\n")
        if direct_url is not None:
            (info / "direct_url.json").write_text(json.dumps(direct_url))
        monkeypatch.setattr(extras, "_distribution", lambda: metadata.PathDistribution(info))

    return make


def test_pipx_injects_the_extras_packages(installed, tmp_path):
    installed()
    venv = tmp_path / "pipx" / "venvs" / "nanograd-cli"
    venv.mkdir(parents=True)
    (venv / "pipx_metadata.json").write_text("{}")
    assert extras.installer(str(venv)) == "pipx"
    assert extras.install_command("plot", str(venv)) == (
        "pipx inject nanograd-cli 'matplotlib>=3.8.4' 'uniplot>=0.22'"
    )
    assert extras.install_command("plot-terminal", str(venv)) == (
        "pipx inject nanograd-cli 'uniplot>=0.22'"
    )


def test_a_uv_tool_is_installed_again_with_what_it_had_and_the_extra(tmp_path):
    tool = tmp_path / "nanograd-cli"
    tool.mkdir()
    (tool / "uv-receipt.toml").write_text(
        "[tool]\nrequirements = [\n"
        '    { name = "nanograd-cli", extras = ["points"], path = "/w/nanograd_cli.whl" },\n'
        '    { name = "rich", specifier = ">=14" },\n'
        "]\n"
    )
    assert extras.installer(str(tool)) == "uv"
    assert extras.install_command("plot", str(tool)) == (
        "uv tool install --with 'rich>=14' '/w/nanograd_cli.whl[plot,points]'"
    )
    (tool / "uv-receipt.toml").write_text('[tool]\nrequirements = [{ name = "nanograd-cli" }]\n')
    assert extras.install_command("repl", str(tool)) == "uv tool install 'nanograd-cli[repl]'"
    (tool / "uv-receipt.toml").write_text(
        '[tool]\nrequirements = [{ name = "nanograd-cli", directory = "/src", editable = true }]\n'
    )
    assert extras.install_command("render", str(tool)) == (
        "uv tool install --editable '/src[render]'"
    )


def test_a_virtualenv_names_its_python_unless_it_is_active(installed, tmp_path, monkeypatch):
    installed()  # from an index: no direct_url.json
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    venv = tmp_path / "venv"
    venv.mkdir()
    command = extras.install_command("points", str(venv))
    assert command == f"{sys.executable} -m pip install 'nanograd-cli[points]'"
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    assert extras.install_command("points", str(venv)) == (
        "python -m pip install 'nanograd-cli[points]'"
    )


def test_pip_is_given_the_clone_or_wheel_installed_from(installed, tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path))
    clone = tmp_path / "clone"
    clone.mkdir()
    installed({"url": clone.as_uri(), "dir_info": {"editable": True}})
    assert extras.install_command("plot", str(tmp_path)) == (
        f"python -m pip install -e '{clone}[plot]'"
    )
    installed({"url": clone.as_uri(), "dir_info": {}})
    assert extras.install_command("plot", str(tmp_path)) == (
        f"python -m pip install '{clone}[plot]'"
    )
    wheel = tmp_path / "nanograd_cli-0.1.0-py3-none-any.whl"
    wheel.touch()
    installed({"url": wheel.as_uri(), "archive_info": {}})
    assert extras.install_command("plot", str(tmp_path)) == (
        f"python -m pip install '{wheel}[plot]'"
    )
    wheel.unlink()  # gone since: the name on the index is what is left
    assert extras.install_command("plot", str(tmp_path)) == (
        "python -m pip install 'nanograd-cli[plot]'"
    )


def test_the_user_site_gets_pip_install_user(installed, tmp_path, monkeypatch):
    installed()
    monkeypatch.setattr(extras.site, "getusersitepackages", lambda: str(ROOT))
    assert extras.installer(str(tmp_path)) == "user"
    assert extras.install_command("repl", str(tmp_path)) == (
        f"{sys.executable} -m pip install --user 'nanograd-cli[repl]'"
    )


@pytest.mark.slow
def test_the_repl_without_prompt_toolkit_says_what_to_install(tmp_path):
    code = (
        "import sys\n"
        "sys.modules['prompt_toolkit'] = None  # as if not installed\n"
        "from nanograd_cli import _session as session\n"
        "from nanograd_cli.errors import NanogradError\n"
        "try:\n"
        "    session.interactive(session.Session())\n"
        "except NanogradError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=NOT_ACTIVE
    )
    assert result.stdout == (
        "nanograd repl on a terminal needs prompt_toolkit: "
        f"install it with: {pip_hint('repl')} (or pipe the lines in: nanograd repl < FILE)\n"
    )
