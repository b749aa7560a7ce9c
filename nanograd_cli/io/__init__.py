"""Points in and out: CSV, TSV, Parquet, Arrow IPC (Feather) and JSON (Lines, or an array of
objects on reading), read and written a
batch of rows at a time so that memory stays bounded however many rows there are.

PyArrow (the `points` extra) is imported only by the modules below, when points are read or
written; choosing a format by a file's extension needs nothing.
"""

from __future__ import annotations

import gc
import os

from ..errors import InputError, NanogradError

# Each format's name and the file extensions that choose it.
EXTENSIONS = {
    "csv": (".csv",),
    "tsv": (".tsv", ".tab"),
    "parquet": (".parquet", ".pq"),
    "arrow": (".arrow", ".feather", ".ipc"),
    "jsonl": (".jsonl", ".ndjson", ".json"),
}
FORMATS = list(EXTENSIONS)
TEXT_FORMATS = ("csv", "tsv", "jsonl")


def format_of(path: str) -> str | None:
    """The format that a file's extension names, or None (for `-` or an unknown extension)."""
    extension = os.path.splitext(path)[1].lower()
    return next((f for f, known in EXTENSIONS.items() if extension in known), None)


def pyarrow_required() -> None:
    """Import what a `grad --points` run needs, PyArrow and NumPy, tuned for a process that
    runs that one command; or raise a clear error when PyArrow, which reads and writes points,
    is not installed."""
    # NumPy's OpenBLAS starts a thread per core that spins for a while, waiting for matrix work
    # that points never give it: a tenth of the CPU time of a Parquet run of a million rows.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # The modules imported now live as long as the process: the collector need not look at
    # them while they are imported, nor each time it looks for the run's garbage afterwards.
    gc.disable()
    try:
        import pyarrow  # noqa: F401

        from . import readers, writers  # noqa: F401
    except ImportError:
        raise MissingPyArrow() from None
    finally:
        gc.freeze()
        gc.enable()


class MissingPyArrow(NanogradError):
    """--points without PyArrow: a missing library, exit 1 like a missing renderer."""

    def __init__(self):
        from ..extras import install_command

        super().__init__(
            "--points needs PyArrow, which is not installed: install it with: "
            + install_command("points")
        )


def input_format(path: str, given: str | None) -> str:
    """The format of --points FILE: its extension's, else --points-format, else CSV."""
    return format_of(path) or given or "csv"


def output_format(output: str | None, fmt: str | None, given: str | None) -> str:
    """The format of the results: -o FILE's extension, else --format (csv, or json for JSON
    Lines), else --points-format, else CSV."""
    by_extension = format_of(output) if output and output != "-" else None
    asked = {"csv": "csv", "json": "jsonl"}.get(fmt or "")
    if by_extension and asked and asked != by_extension:
        raise InputError(f"--format {fmt} and -o {output} disagree: give one of them")
    return by_extension or asked or given or "csv"
