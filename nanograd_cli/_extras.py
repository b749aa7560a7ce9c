"""The command that installs an extra (`plot`, `points`, ...) where this nanograd is installed:
in a pipx or uv tool environment, a virtualenv, the user's site-packages or the system's.

A missing extra's message names this command, so that it works as printed: `pip install`
inside a pipx environment would install into another Python, and `uv tool install
'nanograd-cli[plot]'` from the index would replace a nanograd installed from a clone and drop
its other extras.
"""

from __future__ import annotations

import json
import os
import shlex
import site
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

DISTRIBUTION = "nanograd-cli"


def install_command(extra: str, prefix: str = sys.prefix) -> str:
    """The shell command that installs `extra` into the environment at `prefix` (this
    process's by default)."""
    environment = Path(prefix)
    kind = installer(prefix)
    if kind == "pipx":
        return _shell("pipx", "inject", environment.name, *_requirements(extra))
    if kind == "uv":
        return _uv_tool_install(environment / "uv-receipt.toml", extra)
    user = ["--user"] if kind == "user" else []
    return _shell(_python(environment), "-m", "pip", "install", *user, *_pip_spec(extra))


def installer(prefix: str = sys.prefix) -> str:
    """Whose environment `prefix` is: pipx, uv (a uv tool), user (`pip install --user`), venv
    or system."""
    environment = Path(prefix)
    if (environment / "pipx_metadata.json").exists():
        return "pipx"
    if (environment / "uv-receipt.toml").exists():
        return "uv"
    if _in_user_site():
        return "user"
    return "venv" if sys.prefix != sys.base_prefix else "system"


def _shell(*words: str) -> str:
    return " ".join(shlex.quote(word) for word in words)


def _distribution() -> metadata.Distribution | None:
    try:
        return metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        return None


def _requirements(extra: str) -> list[str]:
    """The packages that `extra` adds, as the installed metadata lists them."""
    distribution = _distribution()
    found = []
    for line in (distribution.requires or []) if distribution else []:
        requirement, _, marker = line.partition(";")
        if marker.replace("'", '"').split() == ["extra", "==", f'"{extra}"']:
            found.append(requirement.strip())
    return found or [f"{DISTRIBUTION}[{extra}]"]


def _pip_spec(extra: str) -> list[str]:
    """What to give pip for this package with `extra`: the directory or file it was installed
    from (PEP 610's direct_url.json), editable as it was, or else its name on the index."""
    distribution = _distribution()
    text = distribution.read_text("direct_url.json") if distribution else None
    origin = json.loads(text) if text else {}
    url = urlparse(origin.get("url", ""))
    path = unquote(url.path)
    if url.scheme == "file" and os.path.exists(path):
        if origin.get("dir_info", {}).get("editable"):
            return ["-e", f"{path}[{extra}]"]
        return [f"{path}[{extra}]"]
    return [f"{DISTRIBUTION}[{extra}]"]


def _uv_tool_install(receipt: Path, extra: str) -> str:
    """`uv tool install` again with what the tool was installed with (uv's receipt) and
    `extra` among its extras: uv makes the environment exactly what the command asks for."""
    try:
        requirements = tomllib.loads(receipt.read_text())["tool"]["requirements"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        requirements = [{"name": DISTRIBUTION}]
    words = ["uv", "tool", "install"]
    main = None
    for requirement in requirements:
        if requirement.get("name") == DISTRIBUTION and main is None:
            main = requirement
        else:
            words += ["--with", _uv_requirement(requirement)]
    main = dict(main or {"name": DISTRIBUTION})
    main["extras"] = sorted({*main.get("extras", []), extra})
    if main.get("editable"):
        words.append("--editable")
    return _shell(*words, _uv_requirement(main))


def _uv_requirement(requirement: dict) -> str:
    """A requirement of uv's receipt as uv's command line takes it."""
    extras = requirement.get("extras")
    suffix = f"[{','.join(extras)}]" if extras else ""
    local = requirement.get("directory") or requirement.get("path")
    if local:
        return f"{local}{suffix}"
    if requirement.get("url"):
        return f"{requirement['name']}{suffix} @ {requirement['url']}"
    return f"{requirement['name']}{suffix}{requirement.get('specifier', '')}"


def _python(environment: Path) -> str:
    """The Python to run pip with: `python` in the virtualenv that is active, else this one."""
    active = os.environ.get("VIRTUAL_ENV")
    if active and Path(active).resolve() == environment.resolve():
        return "python"
    return sys.executable or "python3"


def _in_user_site() -> bool:
    """Whether this package was installed with `pip install --user`."""
    user_site = site.getusersitepackages()
    return bool(user_site) and Path(__file__).resolve().is_relative_to(Path(user_site).resolve())
