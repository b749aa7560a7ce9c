#!/usr/bin/env bash
# Fuzz the parser for SECONDS (default 60) with atheris, starting from the committed corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
python -m pip install -q atheris
corpus="$(mktemp -d)"
python - "$corpus" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
cases = json.loads(pathlib.Path("tests/data/bad_sources.json").read_text())
for i, case in enumerate(cases):
    (out / f"bad{i}").write_text(case["source"])
(out / "worked").write_text(pathlib.Path("tests/data/worked_example.txt").read_text())
PY
python fuzz/fuzz_parser.py "$corpus" -max_total_time="$seconds" -max_len=4096
