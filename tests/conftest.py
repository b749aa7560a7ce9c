"""Options of the test run: `--update-docs` (tests/test_docs.py)."""

from __future__ import annotations

UPDATE = "tests/test_docs.py::test_update_docs"


def pytest_addoption(parser):
    parser.addoption(
        "--update-docs",
        action="store_true",
        help="rewrite the output shown under each `$ nanograd` example in README.md and "
        "docs/*.md to what the command prints now, and run nothing else",
    )


def pytest_collection_modifyitems(config, items):
    """The rewrite runs only when asked for, and then alone."""
    updating = config.getoption("--update-docs")
    keep = [item for item in items if (item.nodeid == UPDATE) == updating]
    if len(keep) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in keep])
        items[:] = keep
