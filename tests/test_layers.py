"""The layers point one way (docs/architecture.md): the core imports nothing above it, nothing
imports the command line, only the command line imports click, and no two
modules import each other, directly or around a loop; and `grad` loads only what it uses."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "nanograd_cli"

# The library's core: the language, the engine and every interpretation of a program.
CORE = {
    "_derivatives",
    "_tables",
    "_algebra",
    "_compiled",
    "_derivatives_writer",
    "engine",
    "errors",
    "_formula",
    "_forward",
    "grammar",
    "_instructions",
    "_jets",
    "_language",
    "_latex_lines",
    "_memory",
    "_ops",
    "_prelude",
    "_program",
    "results",
    "_symbolic",
    "_tape",
    "_vector_ops",
}
ABOVE_CORE = (
    *("_api", "_door", "_cli", "_io", "render", "_session", "_sources", "_points", "_batch"),
    *("sampling", "_descent", "_written_out", "_gradcheck", "fitting", "_fitted", "_output_files"),
)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, typing: bool = False) -> list[tuple[str, bool]]:
    """The modules of the package that `path` imports when it runs (and with `typing`, those
    imported only for type checking too), each with whether the import is inside a `_repr_*_`
    method (a notebook's picture, which may use the renderer)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, in_repr: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                if typing:
                    visit(child, in_repr)
                continue
            repr_method = isinstance(child, ast.FunctionDef) and child.name.startswith("_repr_")
            if isinstance(child, ast.ImportFrom) and child.level:
                base = package[: len(package) - child.level + 1] if child.level > 1 else package
                target = [p for p in [*base, *(child.module or "").split(".")] if p]
                if child.module is None:  # from . import a, b
                    found.extend((".".join([*target, a.name]), in_repr) for a in child.names)
                else:
                    found.append((".".join(target), in_repr))
            elif isinstance(child, ast.Import | ast.ImportFrom):
                names = (
                    [child.module]
                    if isinstance(child, ast.ImportFrom)
                    else [a.name for a in child.names]
                )
                found.extend((f"@{n.split('.')[0]}", in_repr) for n in names)
            visit(child, in_repr or repr_method)

    visit(tree, False)
    return found


MODULES = {module_name(p): imports(p) for p in sorted(PACKAGE.rglob("*.py"))}
# With the imports made only for type checking: they name a module as much as a run does.
TYPED = {module_name(p): imports(p, typing=True) for p in sorted(PACKAGE.rglob("*.py"))}


def known(name: str) -> str:
    """`name` as a module of the package (`render.graph.x` is no module: `render.graph`)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def top(name: str) -> str:
    return name.split(".")[0]


@pytest.mark.parametrize("module", sorted(m for m in MODULES if top(m) in CORE))
def test_the_core_imports_nothing_above_it(module):
    above = [
        known(name)
        for name, in_repr in MODULES[module]
        if not name.startswith("@") and not in_repr and top(known(name)) in ABOVE_CORE
    ]
    assert above == [], f"{module} imports {above}"


def test_nothing_imports_the_command_line():
    """But the program's entry points, `nanograd` (_entry) and `python -m` (__main__)."""
    entries = ("__main__", "_entry")
    importers = [
        m
        for m, names in MODULES.items()
        if top(m) != "_cli" and m not in entries and any(top(known(n)) == "_cli" for n, _ in names)
    ]
    assert importers == []


def test_only_the_command_line_imports_click():
    importers = [m for m, names in MODULES.items() if any(n == "@click" for n, _ in names)]
    assert {top(m) for m in importers} <= {"_cli"}, importers


def test_no_import_cycles():
    # Imports inside functions and for type checking count. A notebook's `_repr_*_` method
    # imports its renderer when a notebook calls it, long after both modules are loaded: that
    # import is no edge of an import cycle.
    graph = {
        m: {
            known(n)
            for n, in_repr in names
            if not n.startswith("@") and not in_repr and known(n) not in ("", m)
        }
        for m, names in TYPED.items()
    }
    # A package's __init__ importing its own modules is how a package is put together.
    graph = {m: {n for n in deps if not n.startswith(f"{m}.")} for m, deps in graph.items()}
    cycles = []
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done
    for start in graph:
        if state.get(start):
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            step = next(stack[-1], None)
            if step is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(step) == 1:
                cycles.append([*path[path.index(step) :], step])
            elif not state.get(step):
                state[step] = 1
                path.append(step)
                stack.append(iter(sorted(graph.get(step, ()))))
    assert cycles == []


# What `grad` at one point has no use for: a file system path type (and the URL and IP address
# modules it imports), Rich, Lark, NumPy, Graphviz, shell completion and the table writer.
NOT_FOR_GRAD = [
    "pathlib",
    "urllib",
    "ipaddress",
    "rich",
    "lark",
    "numpy",
    "graphviz",
    "click.shell_completion",
    "nanograd_cli.render._table",
]


def test_grad_at_a_point_imports_only_what_it_uses():
    """Start-up is a cost every command pays: of the modules that `import click` does not
    load itself, `grad --format json` loads none it has no use for. Run without the site
    module's hooks (an editable install's imports pathlib for every program)."""
    code = (
        "import sys\n"
        f"sys.path[:0] = {[str(PACKAGE.parent), *(p for p in sys.path if p)]!r}\n"
        "import click\n"
        "before = set(sys.modules)\n"
        "from nanograd_cli._cli import main\n"
        "try:\n"
        "    main(['grad', 'x*y + tanh(x)', '--x', '2', '--y', '3', '--format', 'json'])\n"
        "except SystemExit as e:\n"
        "    assert e.code in (0, None), e.code\n"
        "print(' '.join(sorted(set(sys.modules) - before)), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True)
    loaded = done.stderr.split()
    assert done.returncode == 0 and '"value"' in done.stdout, done.stderr
    assert "nanograd_cli._api" in loaded  # (the run did load the command)
    unused = [m for m in loaded if m in NOT_FOR_GRAD or m.split(".")[0] in NOT_FOR_GRAD]
    assert unused == []
