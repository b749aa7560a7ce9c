"""Every benchmark, in one command; writes benchmarks/results.md with the machine and versions.

Run: python benchmarks/run_all.py   (after pip install -e '.[bench]')
"""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import subprocess
import sys
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


def version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def main() -> None:
    sections = []
    for title, script in BENCHMARKS:
        print(f"== {title}", flush=True)
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, str(HERE / script)], capture_output=True, text=True, check=True
        )
        print(done.stdout, end="", flush=True)
        sections.append((title, script, done.stdout, time.perf_counter() - t0))
    packages = ["nanograd-cli", "numpy", "micrograd", "torch", "jax", "lark", "click"]
    lines = [
        "# Benchmark results",
        "",
        f"Made by `python benchmarks/run_all.py` on {datetime.date.today().isoformat()}.",
        "",
        f"* Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        f"* Python {platform.python_version()}; "
        + ", ".join(f"{p} {version(p)}" for p in packages),
        "",
    ]
    for title, script, output, seconds in sections:
        lines += [f"## {title}", "", f"`python benchmarks/{script}` ({seconds:.0f} s)", ""]
        lines += ["```", output.rstrip(), "```", ""]
    (HERE / "results.md").write_text("\n".join(lines))
    print(f"wrote {HERE / 'results.md'}")


if __name__ == "__main__":
    main()
