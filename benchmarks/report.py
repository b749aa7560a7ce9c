"""The rows of the summary table: each benchmark records its headline ratios here.

`run_all.py` sets NANOGRAD_BENCH_RATIOS to a file; a benchmark run on its own records nothing.
Each row says which script recorded it, so that run_all.py can keep the rows of the others.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def ratio(benchmark: str, workload: str, ours: float, reference: str, theirs: float) -> None:
    """Record that nanograd took `ours` where `reference` took `theirs` (same unit)."""
    _record(
        {"benchmark": benchmark, "workload": workload, "ours": ours}
        | {"reference": reference, "theirs": theirs}
    )


def skipped(benchmark: str, workload: str, reference: str, why: str) -> None:
    """Record that `reference` was not measured, and why."""
    _record({"benchmark": benchmark, "workload": workload, "reference": reference, "why": why})


def speedup(before: float | None, after: float, cap: float) -> str:
    """How many times faster `after` is than `before`, as the tables print it; `before` is
    None where the older version passed the cap of `cap` seconds."""
    return f"> {cap / after:.0f}x" if before is None else f"{before / after:.1f}x"


def _record(row: dict) -> None:
    path = os.environ.get("NANOGRAD_BENCH_RATIOS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row | {"script": Path(sys.argv[0]).name}) + "\n")
