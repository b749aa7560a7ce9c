"""Options of the test run: `--update-docs` (tests/test_docs.py); under CI (the environment
variable CI set, as .ci/run and hosted CI services set it), Hypothesis's "ci" profile."""

from __future__ import annotations

import os

from hypothesis import settings

UPDATE = "tests/test_docs.py::test_update_docs"

# Under CI the property tests draw the same examples on every run (derandomize): a commit's
# verdict does not hang on the luck of a draw, and a failure recurs until it is fixed. A run
# elsewhere draws new examples each time, which is how they find what is new.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


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
