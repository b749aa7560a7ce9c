"""The layers point one way (docs/architecture.md): the core imports nothing above it, nothing
imports the command line, only the command line and the repl import click, and no two
modules import each other, directly or around a loop."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "nanograd_cli"

# The library's core: the language, the engine and every interpretation of a program.
CORE = {
    "_tables",
    "algebra",
    "compiled",
    "engine",
    "errors",
    "formula",
    "forward",
    "grammar",
    "instructions",
    "language",
    "memory",
    "ops",
    "program",
    "results",
    "symbolic",
    "tape",
    "vector_ops",
}
ABOVE_CORE = ("api", "cli", "io", "render", "repl", "sources", "points", "plot", "batch")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[str, bool]]:
    """The modules of the package that `path` imports when it runs (not those imported only
    for type checking), each with whether the import is inside a `_repr_*_` method (a
    notebook's picture, which may use the renderer)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, in_repr: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
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
    importers = [
        m
        for m, names in MODULES.items()
        if top(m) != "cli" and m != "__main__" and any(top(known(n)) == "cli" for n, _ in names)
    ]
    assert importers == []


def test_only_the_command_line_and_the_repl_import_click():
    importers = [m for m, names in MODULES.items() if any(n == "@click" for n, _ in names)]
    assert {top(m) for m in importers} <= {"cli", "repl"}, importers


def test_no_import_cycles():
    # A notebook's `_repr_*_` method imports its renderer when a notebook calls it, long after
    # both modules are loaded: that import is no edge of an import cycle.
    graph = {
        m: {
            known(n)
            for n, in_repr in names
            if not n.startswith("@") and not in_repr and known(n) not in ("", m)
        }
        for m, names in MODULES.items()
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
