"""benchmarks/run_all.py: it knows every benchmark, and rewrites results.md without losing what
it did not measure."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("run_all", ROOT / "benchmarks" / "run_all.py")
run_all = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run_all)

OLD = """
Some words before.

`python benchmarks/x.py` (12 s, 2026-11-30)

```
old output
```

| a table | written by hand |
| --- | --- |

Notes after it.
"""


def test_every_benchmark_script_is_listed():
    assert run_all.unlisted() == []
    results = (ROOT / "benchmarks" / "results.md").read_text()
    _, sections = run_all.split_sections(results)
    kept = [b.title for b in run_all.BENCHMARKS if b.by_hand]
    assert all(title in sections for title in kept)


def test_a_section_gets_the_new_output_and_keeps_its_notes():
    body = run_all.section_body(OLD, "python benchmarks/x.py", 3.2, "new output\n")
    assert "old output" not in body and "```\nnew output\n```" in body
    assert body.startswith("\nSome words before.\n\n`python benchmarks/x.py` (3 s, ")
    assert body.endswith("| a table | written by hand |\n| --- | --- |\n\nNotes after it.\n")
    new = run_all.section_body(None, "python benchmarks/y.py", 1, "out")
    assert new.startswith("\n`python benchmarks/y.py` (1 s, ") and new.endswith("```\nout\n```\n\n")


def test_the_summary_keeps_the_rows_of_benchmarks_not_run():
    old = "\n".join(
        [
            *run_all.TABLE_HEAD,
            "| engine | big | micrograd | 2 | 4 | 0.5 | 2x faster | `engine.py` |",
            "| parse | 1,000 | ast.parse | 6 | 3 | 2 | 2x slower | `parse.py` |",
            "| start-up, ms | grad | click | 100 | 68.3 | 1.46 | 1.46x slower |",  # no script
        ]
    )
    rows = [
        {"benchmark": "parse", "workload": "1,000", "ours": 5.0, "reference": "ast.parse"}
        | {"theirs": 2.5, "script": "parse.py"}
    ]
    table = run_all.merged_table(old, rows, {"parse.py"})
    assert table[:2] == run_all.TABLE_HEAD
    assert table[2:] == [
        "| engine | big | micrograd | 2 | 4 | 0.5 | 2x faster | `engine.py` |",
        "| start-up, ms | grad | click | 100 | 68.3 | 1.46 | 1.46x slower | |",
        "| parse | 1,000 | ast.parse | 5 | 2.5 | 2 | 2x slower | `parse.py` |",
    ]
