"""Every benchmark, in one command: one table of ratios, and benchmarks/results.md with the
machine, the versions, the table and each benchmark's own output.

Run: python benchmarks/run_all.py [--only SCRIPT ...] [--results FILE]
     (after pip install -e . --group bench; peers that are not installed are skipped, with a note)

Every script in this folder is listed in BENCHMARKS (the run stops at once if one is not).
Two are run by hand, and their sections of results.md are kept as they are: draw.py and
points.py compare with a checkout of an older version (`--before`), which their sections name.
The others run here, one after another (--only: just those named), and in each one's section
the command line's time and the output block after it are replaced; text written around them
(notes, tables) is kept, and so are sections this script does not know. A benchmark that fails
keeps its section and its rows of the summary, and the run ends with exit code 1.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
HELPERS = {"report.py", "run_all.py"}


class Benchmark(NamedTuple):
    title: str  # its section's heading in results.md
    script: str
    by_hand: str = ""  # why run_all does not run it; empty: it does


BENCHMARKS = [
    Benchmark("Engine against micrograd", "engine.py"),
    Benchmark(
        "Compiled programs against plain floats; minimize against a hand-written loop",
        "compiled.py",
    ),
    Benchmark("Start-up against `python -c 'import click'`", "startup.py"),
    Benchmark("Parsing against `ast.parse`", "parse.py"),
    Benchmark("Forward mode against reverse mode", "modes.py"),
    Benchmark("Batch gradients against NumPy, PyTorch and JAX", "batch.py"),
    Benchmark(
        "Points end to end: CSV and Parquet",
        "points.py",
        "measured against a checkout of an older version (--before DIR)",
    ),
    Benchmark(
        "Drawing: `nanograd draw` now and before its layout limits",
        "draw.py",
        "measured against a checkout of an older version (--before CHECKOUT), for minutes",
    ),
    Benchmark("`diff`'s derivatives against SymPy's `diff`: operations", "diff_size.py"),
    Benchmark("`explain` against `grad`", "explain.py"),
    Benchmark(
        "Derivatives written from the formulas against those written by hand", "derivatives.py"
    ),
    Benchmark("Functions as compositions of others: accuracy against mpmath", "compositions.py"),
    Benchmark("The live page in headless Chromium", "html.py"),
    Benchmark("Training a 2-16-16-1 network: PyTorch and micrograd", "mlp.py"),
    Benchmark("minimize on Rosenbrock: Adam against BFGS, L-BFGS-B and Newton", "second_order.py"),
    Benchmark("Fitting 200,000 rows against SciPy's least_squares", "fit.py"),
    Benchmark("The 54 NIST StRD fits: nanograd, SciPy and lmfit", "fit_nist.py"),
    Benchmark("1,000 small fits by group against a loop of curve_fit", "fit_groups.py"),
    Benchmark("Ten everyday models from poor starts: curve_fit, lmfit and R's nls", "fit_peers.py"),
    Benchmark(
        "Growth: time and memory as inputs double",
        "growth.py",
        "measured against a checkout of an older version (--before CHECKOUT), for minutes",
    ),
]
PACKAGES = ["nanograd-cli", "numpy", "micrograd", "torch", "jax", "lark", "click", "sympy"]
SUMMARY = "Summary"
TABLE_HEAD = [
    "| benchmark | workload | reference | nanograd | reference | ratio | | script |",
    "| --- | --- | --- | ---: | ---: | ---: | --- | --- |",
]


def version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def unlisted() -> list[str]:
    """The scripts in this folder that BENCHMARKS does not list."""
    listed = {b.script for b in BENCHMARKS} | HELPERS
    return sorted(p.name for p in HERE.glob("*.py") if p.name not in listed)


def ratio_rows(rows: list[dict]) -> list[str]:
    """Markdown rows: nanograd's time, the reference's, and their ratio (below 1: nanograd is
    faster), per benchmark and workload, and the script that measured them."""
    lines = []
    for r in rows:
        head = f"| {r['benchmark']} | {r['workload']} | {r['reference']} |"
        tail = f" `{r['script']}` |" if r.get("script") else " |"
        if "why" in r:
            lines.append(f"{head} | | | | {r['why']} |{tail}")
            continue
        ratio = r["ours"] / r["theirs"]
        verdict = f"{1 / ratio:.3g}x faster" if ratio < 1 else f"{ratio:.3g}x slower"
        lines.append(
            f"{head} {r['ours']:.3g} | {r['theirs']:.3g} | {ratio:.3g} | {verdict} |{tail}"
        )
    return lines


def split_sections(text: str) -> tuple[str, dict[str, str]]:
    """Markdown as what comes before its first `## ` heading, and each section's body by its
    heading, in order."""
    parts = re.split(r"^## (.*)\n", text, flags=re.M)
    return parts[0], dict(zip(parts[1::2], parts[2::2], strict=True))


def table_rows(summary: str) -> list[tuple[str, str, str]]:
    """The rows of a summary section's table: (benchmark label, script, the row's markdown)."""
    rows = []
    for line in summary.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| ") or cells[0] in ("benchmark", "---"):
            continue
        script = cells[7].strip("`") if len(cells) > 7 else ""
        line = line.rstrip() + " |" * (8 - len(cells))  # a row from before the script column
        rows.append((cells[0], script, line))
    return rows


def merged_table(old_summary: str, rows: list[dict], rerun: set[str]) -> list[str]:
    """The summary table: the rows measured now, after the old rows of the benchmarks that did
    not run now (an old row without a script goes when a new row has its benchmark label)."""
    labels = {r["benchmark"] for r in rows}
    kept = [
        line
        for label, script, line in table_rows(old_summary)
        if script not in rerun and (script or label not in labels)
    ]
    return TABLE_HEAD + kept + ratio_rows(rows)


def section_body(old: str | None, command: str, seconds: float, output: str) -> str:
    """A benchmark's section with this run's time, date and output: in the old section, the
    command line's time and the output block after it replaced and the rest kept; else new."""
    line = f"`{command}` ({seconds:.0f} s, {datetime.date.today().isoformat()})"
    block = "```\n" + output.rstrip() + "\n```"
    script = command.split()[1]
    found = old and re.search(rf"`python {re.escape(script)}[^`]*` \([^)]*\)", old)
    if not found:
        return f"\n{line}\n\n{block}\n\n" + (old.lstrip("\n") if old else "")
    fence = re.compile(r"^```[^\n]*\n.*?^```$", re.M | re.S).search(old, found.end())
    if fence is None:
        return old[: found.start()] + f"{line}\n\n{block}" + old[found.end() :]
    return (
        old[: found.start()] + line + old[found.end() : fence.start()] + block + old[fence.end() :]
    )


def run(benchmark: Benchmark, env: dict[str, str]) -> tuple[str, float] | None:
    """The benchmark's output and how long it took, or None if it failed (said on stderr)."""
    print(f"== {benchmark.title}", flush=True)
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(HERE / benchmark.script)], capture_output=True, text=True, env=env
    )
    print(done.stdout, end="", flush=True)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        print(f"{benchmark.script} failed (exit {done.returncode}):\n{tail}", file=sys.stderr)
        return None
    return done.stdout, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="SCRIPT", help="run just these")
    parser.add_argument("--results", type=Path, default=HERE / "results.md")
    args = parser.parse_args()
    missing = unlisted()
    if missing:
        sys.exit(f"run_all.py: add {', '.join(missing)} to BENCHMARKS")
    runnable = {b.script: b for b in BENCHMARKS if not b.by_hand}
    chosen = args.only or list(runnable)
    unknown = [s for s in chosen if s not in runnable]
    if unknown:
        sys.exit(f"run_all.py: not run here: {', '.join(unknown)} (see its docstring)")
    for b in BENCHMARKS:
        if b.by_hand:
            print(f"== {b.title}: kept, run by hand ({b.by_hand})")
    head, sections = split_sections(args.results.read_text() if args.results.exists() else "")
    rows: list[dict] = []
    ran: set[str] = set()
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for script in chosen:
            ratios = Path(tmp) / f"{script}.jsonl"
            benchmark = runnable[script]
            result = run(benchmark, {**os.environ, "NANOGRAD_BENCH_RATIOS": str(ratios)})
            if result is None:
                failed = True
                continue
            output, seconds = result
            ran.add(script)
            if ratios.exists():
                rows += [json.loads(line) for line in ratios.read_text().splitlines()]
            command = f"python benchmarks/{script}"
            sections[benchmark.title] = section_body(
                sections.get(benchmark.title), command, seconds, output
            )
    table = merged_table(sections.get(SUMMARY, ""), rows, ran)
    print("\n== Summary: nanograd's time over the reference's (below 1: nanograd is faster)")
    print("\n".join(table))
    sections[SUMMARY] = "\n".join(
        [
            "",
            "nanograd's time over the reference's: below 1, nanograd is faster. Each figure is a",
            "median of several runs, nanograd and the reference alternating.",
            "",
            *table,
            "",
            "",
        ]
    )
    known = [SUMMARY] + [b.title for b in BENCHMARKS]
    order = [t for t in known if t in sections] + [t for t in sections if t not in known]
    if ran == set(runnable) or not head.strip():  # else the machine of the last full run
        head = "\n".join(
            [
                "# Benchmark results",
                "",
                f"Made by `python benchmarks/run_all.py` on {datetime.date.today().isoformat()};",
                "each section says when its benchmark last ran, and how if by hand.",
                "",
                f"* Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
                f"* Python {platform.python_version()}; "
                + ", ".join(f"{p} {version(p)}" for p in PACKAGES),
                "",
                "",
            ]
        )
    text = head + "".join(f"## {t}\n{sections[t]}" for t in order)
    args.results.write_text(text.rstrip("\n") + "\n")
    print(f"wrote {args.results}")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
