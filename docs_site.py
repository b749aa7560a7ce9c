"""The docs site's build hooks (mkdocs.yml names this module): pages made at build time.

- `index.md` is README.md, its links into the repository's docs/ made links between the
  site's pages (README's own links are absolute, for the package index's page).
- `contributing.md` is CONTRIBUTING.md, its links into docs/ made relative the same way.
- `reference.md` is every command's `--help`, as `nanograd COMMAND --help` prints it in 80
  columns, the commands read from `nanograd_cli._cli.COMMANDS`: it cannot fall behind them.
- A page's link to a file outside docs/ (`../tests/...`, `../README.md#extras`) leads to that
  file in the repository, whose URL is `repo_url` in mkdocs.yml.

Build with `mkdocs build --strict` (CI does; CONTRIBUTING.md says how it is published).
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent
# A Markdown link or image target, up to an optional #fragment.
LINK = re.compile(r"(\]\()([^)\s#]+)(#[^)\s]*)?(\))")
# The root's files that are pages of the site, by their name there.
ROOT_PAGES = {"README.md": "index.md", "CONTRIBUTING.md": "contributing.md"}


def cli_reference() -> str:
    """The reference page: `nanograd --help`, then each command's, as printed in 80 columns."""
    from nanograd_cli._cli import COMMANDS, cli

    def help_of(*args: str) -> str:
        # click wraps help at two columns less than the terminal's width: 78 in 80 columns.
        result = CliRunner().invoke(
            cli, [*args, "--help"], prog_name="nanograd", terminal_width=78, color=False
        )
        if result.exit_code != 0:
            raise RuntimeError(f"nanograd {' '.join(args)} --help failed: {result.output}")
        return result.output.rstrip()

    parts = [
        "# Command-line reference",
        "",
        "What `nanograd --help` and `nanograd COMMAND --help` print, made from the commands",
        "themselves when this site is built. [Commands](commands.md) explains each with",
        "examples.",
        "",
        "## nanograd",
        "",
        "```text",
        help_of(),
        "```",
    ]
    for name in COMMANDS:
        parts += ["", f"## nanograd {name}", "", "```text", help_of(name), "```"]
    return "\n".join(parts) + "\n"


def site_links(markdown: str, blob: str, raw: str) -> str:
    """A root page's links (README's, CONTRIBUTING's) as links of the site: those to the
    repository's docs/ (absolute, as README has them, or relative to the root) become links
    between pages; those to other files of the repository stay or become absolute."""

    def replace(match: re.Match[str]) -> str:
        opening, target, fragment, closing = match.groups()
        path = target.removeprefix(blob).removeprefix(raw)
        if "://" in path or path.startswith(("mailto:", "#")):
            return match[0]
        if path.startswith("docs/"):
            path = path.removeprefix("docs/")
        else:
            path = ROOT_PAGES.get(path, blob + path)
        return f"{opening}{path}{fragment or ''}{closing}"

    return LINK.sub(replace, markdown)


def outside_links(markdown: str, page: str, blob: str) -> str:
    """A docs page's relative links that leave docs/ (`../tests/data/x.txt`), made absolute
    links to the file in the repository, or links to the page README or CONTRIBUTING is."""

    def replace(match: re.Match[str]) -> str:
        opening, target, fragment, closing = match.groups()
        if "://" in target or target.startswith(("mailto:", "#", "/")):
            return match[0]
        path = posixpath.normpath(posixpath.join("docs", posixpath.dirname(page), target))
        if path.startswith(("docs/", "../")):  # a page's (or out of the repository: broken)
            return match[0]
        if path in ROOT_PAGES:
            path = posixpath.relpath(ROOT_PAGES[path], posixpath.dirname(page) or ".")
        else:
            path = blob + path
        return f"{opening}{path}{fragment or ''}{closing}"

    return LINK.sub(replace, markdown)


def _urls(config: Any) -> tuple[str, str]:
    """The repository's URLs of a file (blob) and of its raw bytes, from `repo_url`."""
    repository = config["repo_url"].rstrip("/").removeprefix("https://github.com/")
    return (
        f"https://github.com/{repository}/blob/main/",
        f"https://raw.githubusercontent.com/{repository}/main/",
    )


def on_files(files: Any, config: Any) -> Any:
    """Add the generated pages to the site."""
    from mkdocs.structure.files import File

    blob, raw = _urls(config)
    pages = {
        page: site_links((ROOT / name).read_text(encoding="utf-8"), blob, raw)
        for name, page in ROOT_PAGES.items()
    }
    pages["reference.md"] = cli_reference()
    for name, content in pages.items():
        files.append(File.generated(config, name, content=content))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Links out of docs/ lead to the repository."""
    if page.file.generated_by is not None:
        return markdown
    return outside_links(markdown, page.file.src_uri, _urls(config)[0])
