"""Every benchmark, in one command: one table of ratios, and benchmarks/results.md with the
machine, the versions, the table and each benchmark's own output.

Run: python benchmarks/run_all.py   (after pip install -e '.[bench]'; peers that are not
installed are skipped, with a note)
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = [
    ("Engine against micrograd", "engine.py"),
    ("Start-up against `python -c 'import click'`", "startup.py"),
    ("Parsing against `ast.parse`", "parse.py"),
    ("Forward mode against reverse mode", "modes.py"),
    ("Batch gradients against NumPy, PyTorch and JAX", "batch.py"),
]
PACKAGES = ["nanograd-cli", "numpy", "micrograd", "torch", "jax", "lark", "click"]


def version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def ratio_table(rows: list[dict]) -> list[str]:
    """Markdown: nanograd's time, the reference's, and their ratio (below 1: nanograd is
    faster), per benchmark and workload."""
    lines = [
        "| benchmark | workload | reference | nanograd | reference | ratio | |",
        "| --- | --- | --- | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        head = f"| {r['benchmark']} | {r['workload']} | {r['reference']} |"
        if "why" in r:
            lines.append(f"{head} | | | {r['why']} |")
            continue
        ratio = r["ours"] / r["theirs"]
        verdict = f"{1 / ratio:.3g}x faster" if ratio < 1 else f"{ratio:.3g}x slower"
        lines.append(f"{head} {r['ours']:.3g} | {r['theirs']:.3g} | {ratio:.3g} | {verdict} |")
    return lines


def main() -> None:
    sections = []
    with tempfile.TemporaryDirectory() as tmp:
        ratios = Path(tmp) / "ratios.jsonl"
        env = {**os.environ, "NANOGRAD_BENCH_RATIOS": str(ratios)}
        for title, script in BENCHMARKS:
            print(f"== {title}", flush=True)
            t0 = time.perf_counter()
            done = subprocess.run(
                [sys.executable, str(HERE / script)],
                capture_output=True,
                text=True,
                check=True,
                env=env,
            )
            print(done.stdout, end="", flush=True)
            sections.append((title, script, done.stdout, time.perf_counter() - t0))
        rows = [json.loads(line) for line in ratios.read_text().splitlines()]
    table = ratio_table(rows)
    print("\n== Summary: nanograd's time over the reference's (below 1: nanograd is faster)")
    print("\n".join(table))
    lines = [
        "# Benchmark results",
        "",
        f"Made by `python benchmarks/run_all.py` on {datetime.date.today().isoformat()}.",
        "",
        f"* Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        f"* Python {platform.python_version()}; "
        + ", ".join(f"{p} {version(p)}" for p in PACKAGES),
        "",
        "## Summary",
        "",
        "nanograd's time over the reference's: below 1, nanograd is faster. Each figure is a",
        "median of several runs, nanograd and the reference alternating.",
        "",
        *table,
        "",
    ]
    for title, script, output, seconds in sections:
        lines += [f"## {title}", "", f"`python benchmarks/{script}` ({seconds:.0f} s)", ""]
        lines += ["```", output.rstrip(), "```", ""]
    (HERE / "results.md").write_text("\n".join(lines))
    print(f"wrote {HERE / 'results.md'}")


if __name__ == "__main__":
    main()
