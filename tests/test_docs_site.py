"""The docs site (mkdocs.yml, docs_site.py): every page in its navigation, the command-line
reference made from the commands' own --help, links that lead somewhere, a strict build."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import pytest

from nanograd_cli._cli import COMMANDS, cli

ROOT = Path(__file__).resolve().parents[1]
BLOB = "https://github.com/nanograd-cli/nanograd-cli/blob/main/"
RAW = "https://raw.githubusercontent.com/nanograd-cli/nanograd-cli/main/"


def _docs_site():
    spec = importlib.util.spec_from_file_location("docs_site", ROOT / "docs_site.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


docs_site = _docs_site()


def test_every_docs_page_is_in_the_navigation():
    """A page left out of `nav` would be built but reachable from no menu."""
    config = (ROOT / "mkdocs.yml").read_text()
    nav = set(re.findall(r"^\s+- (?:[^:\n]+: )?(\S+\.md)$", config, re.MULTILINE))
    pages = {path.name for path in (ROOT / "docs").glob("*.md")}
    generated = {"index.md", "contributing.md", "reference.md"}
    assert nav == pages | generated


def test_the_reference_is_every_commands_help():
    """The reference page holds `nanograd --help` and each command's, with every option of
    every command, as the installed command prints it in 80 columns."""
    page = docs_site.cli_reference()
    headings = re.findall(r"^## (.+)$", page, re.MULTILINE)
    assert headings == ["nanograd", *(f"nanograd {name}" for name in COMMANDS)]
    sections = dict(
        re.findall(r"^## ([^\n]+)\n\n```text\n(.*?)\n```$", page, re.MULTILINE | re.DOTALL)
    )
    for name in COMMANDS:
        command = cli.get_command(click.Context(cli), name)
        assert command is not None
        assert sections[f"nanograd {name}"].startswith(f"Usage: nanograd {name} ")
        for option in (p for p in command.params if isinstance(p, click.Option) and not p.hidden):
            assert all(flag in sections[f"nanograd {name}"] for flag in option.opts), option.opts
    for args in ([], ["grad"]):
        printed = subprocess.run(
            [sys.executable, "-m", "nanograd_cli", *args, "--help"],
            capture_output=True,
            text=True,
            env={**os.environ, "COLUMNS": "80"},
            check=True,
        ).stdout
        assert sections[" ".join(["nanograd", *args])] == printed.rstrip()


def test_readmes_links_become_links_between_the_sites_pages():
    readme = (
        f"[arrays]({BLOB}docs/arrays.md), [jacobian]({BLOB}docs/commands.md#several-outputs), "
        f"![graph]({RAW}docs/img/worked_example.png), [changes]({BLOB}CHANGELOG.md), "
        f"[contributing]({BLOB}CONTRIBUTING.md), [uv](https://docs.astral.sh/uv/), [up](#start)"
    )
    assert docs_site.site_links(readme, BLOB, RAW) == (
        "[arrays](arrays.md), [jacobian](commands.md#several-outputs), "
        f"![graph](img/worked_example.png), [changes]({BLOB}CHANGELOG.md), "
        "[contributing](contributing.md), [uv](https://docs.astral.sh/uv/), [up](#start)"
    )
    # CONTRIBUTING's relative links, from the repository's root.
    assert docs_site.site_links(
        "[layout](docs/architecture.md) [h](tests/helpers.py)", BLOB, RAW
    ) == (f"[layout](architecture.md) [h]({BLOB}tests/helpers.py)")


def test_links_out_of_docs_lead_to_the_repository_or_the_root_pages():
    page = (
        "[fit](fit.md#bounds) [nist](../tests/data/nist/README.md) [grammar](../grammars/x.lark)"
        " [extras](../README.md#extras) [site](https://example.org/a.md) [img](img/a.png)"
    )
    assert docs_site.outside_links(page, "points.md", BLOB) == (
        f"[fit](fit.md#bounds) [nist]({BLOB}tests/data/nist/README.md) "
        f"[grammar]({BLOB}grammars/x.lark) [extras](index.md#extras) "
        "[site](https://example.org/a.md) [img](img/a.png)"
    )


def test_the_documentation_url_is_the_site():
    config = (ROOT / "mkdocs.yml").read_text()
    (site,) = re.findall(r"^site_url: (\S+)$", config, re.MULTILINE)
    (repo,) = re.findall(r"^repo_url: (\S+)$", config, re.MULTILINE)
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert (urls["Documentation"], urls["Source"]) == (site, repo)


@pytest.mark.slow
def test_the_site_builds_strict(tmp_path):
    """`mkdocs build --strict`, as CI runs it: a link to a missing page, file or heading, a
    page outside the navigation or a failing --help stops it."""
    pytest.importorskip("material", reason="mkdocs-material: the docs dependency group")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stderr[-3000:]
    reference = (tmp_path / "reference" / "index.html").read_text()
    assert all(f'id="nanograd-{name}"' in reference for name in COMMANDS)
    home = (tmp_path / "index.html").read_text()
    assert 'href="arrays/"' in home and 'src="img/worked_example.png"' in home
