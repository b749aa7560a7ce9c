"""`grad --points` in every format, and `nanograd_cli.compile` on NumPy, pandas, Arrow and a
Dask cluster: bad input named by row, exact round trips, rows that keep their columns."""

from __future__ import annotations

import io
import json
import math
import os
import struct
import subprocess
import sys
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nanograd_cli import compile, parse

from .helpers import NANOGRAD, NOT_ACTIVE, in_process, limited, nanograd, pip_hint, run

np = pytest.importorskip("numpy")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pcsv = pytest.importorskip("pyarrow.csv")
ipc = pytest.importorskip("pyarrow.ipc")

SOURCE = "x*y + tanh(x)"

# Floats whose shortest text is hard to get right: 17 digits, subnormal, huge, a whole number
# past 2**53, tiny, negative zero, and one a float32-minded writer shortens wrongly.
HARD = [0.09114271676623718, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308]
HARD += [1e22, 1e16, 123456789012345680.0, 1e-7, 0.0001, 1 / 3, -0.0, 0.0, 2.0, -7.0]


def hand(x: float, y: float) -> tuple[float, float, float]:
    """x*y + tanh(x) and its gradient, by hand: (value, d/dx, d/dy)."""
    t = math.tanh(x)
    return x * y + t, y + 1 - t * t, x


def bits(values) -> list[bytes]:
    """Floats as their bytes: equal only when the very same float (nan and -0.0 included)."""
    return [struct.pack("<d", v) for v in values]


def points_table(n: int = 2000, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n), HARD])
    y = np.concatenate([rng.uniform(-3, 3, n), HARD[::-1]])
    ids = [f"p{k}" for k in range(len(x))]
    return pa.table({"id": ids, "x": x, "y": y})


# Every bad input that issue 17 found, and the rest of the spec's: an error naming the row,
# or the right answer.


@pytest.mark.slow
@pytest.mark.parametrize(
    ("stdin", "out", "warning"),
    [
        ("x\ninf\n", "x,value,d_x\ninf,inf,2.0\n", "row 1 gives inf (input x is inf)"),
        ("x\nnan\n", "x,value,d_x\nNaN,NaN,2.0\n", "row 1 gives nan (input x is nan)"),
        ("x\n1\n-inf\n", "x,value,d_x\n1,2.0,2.0\n-inf,-inf,2.0\n", "row 2 gives -inf (input"),
    ],
)
def test_nan_and_inf_are_values_with_a_warning(stdin, out, warning):
    result = nanograd("grad", "x*2", "--points", "-", stdin=stdin)
    assert (result.returncode, result.stdout) == (0, out)
    assert result.stderr.startswith("warning: 1 row has a non-finite result; the first: ")
    assert warning in result.stderr


@pytest.mark.slow
def test_strict_fails_on_an_operation_not_on_an_input_that_is_inf():
    result = nanograd("grad", "log(x)", "--points", "-", "--strict", stdin="x\ninf\n1\n0\n")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == "error: --points row 3 gives -inf (log gave -inf at line 1, column 1)\n"
    result = nanograd("grad", "log(x)", "--points", "-", "--strict", stdin="x\ninf\n1\n")
    assert (result.returncode, result.stdout) == (0, "x,value,d_x\ninf,inf,0.0\n1,0.0,1.0\n")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("x,y\n1,2\n1e400,1\n", "--points row 2, column x: 1e400 is too large for a float"),
        ("x,y\n-1E999,1\n", "--points row 1, column x: -1E999 is too large for a float"),
        ("x,y\n1,2\n3\n", "--points row 2 has 1 field, the header 2"),
        ("x,y\n1,2\n\n3,4,5\n", "--points row 2 has 3 fields, the header 2"),
        ('x,y\n1,2\n"3,4"\n', "--points row 2 has 1 field, the header 2"),
        ("x,y,x\n1,2,3\n", "--points: the header names the column x twice"),
        ("x,y\n1,2\n3,abc\n", "--points row 2, column y: 'abc' is not a number"),
        (
            "x,y\n1,2\n4,5\n3,\n",
            "--points row 3, column y is empty: --na reads a missing value as nan",
        ),
        ("x,y\n1,2\n3,1_000\n", "--points row 2, column y: '1_000' is not a number"),
        # (text that is not UTF-8 is Windows-1252: \xff is ÿ)
        ("x,y\n1,2\n3,\xff\n", "--points row 2, column y: 'ÿ' is not a number"),
        ("1,2\n3,4\n", "--points: the first line must name the columns, e.g. x,y; it reads 1,2"),
        ("", "--points: the first line must name the columns, e.g. x,y"),
        ("id,value,x,y\n1,2,3,4\n", "--points has a column value, which the results add"),
    ],
)
def test_bad_rows_are_named_with_exit_2(stdin, message):
    result = subprocess.run(
        [NANOGRAD, "grad", SOURCE, "--points", "-"],
        input=stdin.encode("latin-1"),
        capture_output=True,
        timeout=60,
    )
    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr.decode().splitlines()[0].startswith(f"error: {message}")


@pytest.mark.parametrize(
    ("rows", "column", "why", "fit_column"),
    [
        ("1,2\n3,\n,4\n", "y", " is empty", "y"),  # the earlier row, not column x's
        ("1,2\n3,abc\n1e999,4\n", "y", ": 'abc' is not a number", "y"),
        # the leftmost column of the row; fit reads an empty value as missing, then 'x'
        ("1,2\n,x\n", "x", " is empty", "y"),
    ],
)
def test_of_several_bad_values_the_first_row_is_named(tmp_path, rows, column, why, fit_column):
    (tmp_path / "p.csv").write_text("x,y\n" + rows)
    done = in_process("grad", SOURCE, "--points", "p.csv", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"error: --points row 2, column {column}{why}")
    fit = in_process("fit", "a*x", "--data", "p.csv", "--a", "1", cwd=tmp_path)
    assert fit.returncode == 2 and fit.stderr.startswith(
        f"error: --data row 2, column {fit_column}"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "stdin",
    [
        '"x","y"\n"2","3"\n',  # a quoted header and quoted numbers
        "\ufeffx,y\n2,3\n",  # a UTF-8 byte order mark
        "x,y\r\n2,3\r\n",  # CRLF
        "\n\nx,y\n\n2,3\n\n",  # blank lines
        "x,y\n2,3",  # no line end at the end
        "x, y\n2, 3\n",  # a space after the comma
    ],
)
def test_real_csv(stdin):
    result = nanograd("grad", SOURCE, "--points", "-", stdin=stdin)
    assert result.returncode == 0, result.stderr
    header, row = result.stdout.splitlines()
    assert header.split(",")[-3:] == ["value", "d_x", "d_y"]
    assert [float(v) for v in row.split(",")[-3:]] == list(hand(2.0, 3.0))


def test_the_index_column_pandas_writes_comes_back(tmp_path):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"x": [2.0, 1.0, -0.5], "y": [3.0, 1.0, 4.0]}, index=[10, 20, 30])
    frame.to_csv(tmp_path / "in.csv")  # its header begins with an empty name: ",x,y"
    result = in_process("grad", SOURCE, "--points", str(tmp_path / "in.csv"))
    assert result.returncode == 0, result.stderr
    back = pd.read_csv(io.StringIO(result.stdout), index_col=0)
    assert list(back.index) == [10, 20, 30]
    for (x, y), (_, row) in zip(frame.itertuples(index=False), back.iterrows(), strict=True):
        assert (row["value"], row["d_x"], row["d_y"]) == pytest.approx(hand(x, y), rel=1e-15)


@pytest.mark.slow
def test_text_columns_pass_through_as_written():
    stdin = (
        "name,x,note,y\n"
        'a,2,"one, two",3\n'
        'b,1,"say ""hi""",1\n'
        'c,0.50,"two\nlines",-1\n'
        "d,1e2,ünïcödé ✓,0\n"
        "e,7,,0\n"
    )
    result = nanograd("grad", "x*y", "--points", "-", stdin=stdin)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "name,x,note,y,value,d_x,d_y\n"
        'a,2,"one, two",3,6.0,3.0,2.0\n'
        'b,1,"say ""hi""",1,1.0,1.0,1.0\n'
        'c,0.50,"two\nlines",-1,-0.5,-1.0,0.5\n'
        "d,1e2,ünïcödé ✓,0,0.0,0.0,100.0\n"
        "e,7,,0,0.0,0.0,7.0\n"
    )


def test_rows_keep_their_identity_in_order(tmp_path):
    table = points_table(300)
    pcsv.write_csv(table, tmp_path / "in.csv")
    result = in_process("grad", SOURCE, "--points", str(tmp_path / "in.csv"), "--wrt", "x")
    assert result.returncode == 0, result.stderr
    out = pcsv.read_csv(io.BytesIO(result.stdout.encode()))
    assert out.column_names == ["id", "x", "y", "value", "d_x"]
    assert out["id"].to_pylist() == table["id"].to_pylist()
    for x, y, value, d_x in zip(
        *(out[n].to_pylist() for n in ("x", "y", "value", "d_x")), strict=True
    ):
        v, dx, _ = hand(x, y)
        assert value == pytest.approx(v, rel=1e-12, abs=1e-13)
        assert d_x == pytest.approx(dx, rel=1e-12, abs=1e-13)


# Exact round trips: what is written reads back as the very floats computed.


def written(path, fmt: str):
    """The results file read back, as a dict of columns."""
    if fmt == "parquet":
        return pq.read_table(path).to_pydict()
    if fmt == "arrow":
        with pa.memory_map(str(path)) as source:
            return ipc.open_file(source).read_all().to_pydict()
    text = path.read_text(encoding="utf-8")
    if fmt == "csv":
        lines = text.splitlines()
        names = lines[0].split(",")
        rows = [line.split(",") for line in lines[1:]]
        return {n: [float(r[k]) if n != "id" else r[k] for r in rows] for k, n in enumerate(names)}
    rows = [json.loads(line) for line in text.splitlines()]
    return {
        "id": [r["id"] for r in rows],
        "x": [r["inputs"]["x"] for r in rows],
        "y": [r["inputs"]["y"] for r in rows],
        "value": [float(r["value"]) for r in rows],
        "d_x": [float(r["gradients"]["x"]) for r in rows],
        "d_y": [float(r["gradients"]["y"]) for r in rows],
    }


@pytest.mark.parametrize("into", ["csv", "parquet", "arrow", "jsonl"])
@pytest.mark.parametrize("source", ["csv", "parquet", "arrow", "jsonl"])
def test_round_trips_are_exact(tmp_path, source, into):
    table = points_table(500)
    given = tmp_path / f"in.{source}"
    if source == "csv":
        given.write_text(
            "id,x,y\n"
            + "".join(
                f"{i},{x!r},{y!r}\n" for i, x, y in zip(*table.to_pydict().values(), strict=True)
            )
        )
    elif source == "parquet":
        pq.write_table(table, given, row_group_size=128)
    elif source == "arrow":
        with ipc.new_file(str(given), table.schema) as f:
            f.write_table(table, max_chunksize=100)
    else:
        rows = table.to_pylist()
        given.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / f"out.{into}"
    result = in_process("grad", SOURCE, "--points", str(given), "-o", str(out))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    expected = compile(SOURCE)(x=table["x"].to_numpy(), y=table["y"].to_numpy())
    back = written(out, into)
    assert back["id"] == table["id"].to_pylist()
    assert bits(back["x"]) == bits(table["x"].to_pylist())
    for name in ("value", "d_x", "d_y"):
        assert bits(back[name]) == bits(expected[name].tolist()), name


@pytest.mark.slow
def test_csv_numbers_are_the_shortest_that_read_back():
    values = "\n".join(repr(v) for v in HARD)
    result = nanograd("grad", "x", "--points", "-", stdin="x\n" + values + "\n")
    lines = result.stdout.splitlines()[1:]
    for line, v in zip(lines, HARD, strict=True):
        text = line.split(",")[1]
        assert float(text) == v and math.copysign(1, float(text)) == math.copysign(1, v)
        digits = text.split("e")[0].replace("-", "").replace(".", "").strip("0")
        assert len(digits) <= len(repr(v).split("e")[0].replace("-", "").replace(".", "")), text
        assert any(c in text for c in ".e"), text  # a float, never read as an integer


@pytest.mark.slow
def test_other_columns_keep_their_type_in_binary_formats(tmp_path):
    table = pa.table(
        {
            "n": pa.array([1, 2], pa.int64()),
            "when": pa.array([0, 86_400_000_000], pa.timestamp("us")),
            "x": pa.array([1.5, 2.5], pa.float32()),
            "tags": pa.array([["a"], []], pa.list_(pa.string())),
        }
    )
    pq.write_table(table, tmp_path / "in.parquet")
    result = in_process(
        "grad", "x*x", "--points", str(tmp_path / "in.parquet"), "-o", str(tmp_path / "o.parquet")
    )
    assert result.returncode == 0, result.stderr
    back = pq.read_table(tmp_path / "o.parquet")
    assert back.schema.names == ["n", "when", "x", "tags", "value", "d_x"]
    assert back.schema.field("when").type == pa.timestamp("us")
    assert back.schema.field("x").type == pa.float32()
    assert back.to_pydict()["tags"] == [["a"], []]
    assert back["value"].to_pylist() == [2.25, 6.25]
    # From CSV, the other columns are text, the inputs numbers.
    out = str(tmp_path / "c.parquet")
    result = nanograd("grad", "x", "--points", "-", "-o", out, stdin="id,x\n007,1\n")
    assert result.returncode == 0, result.stderr
    back = pq.read_table(tmp_path / "c.parquet")
    assert back.to_pydict() == {"id": ["007"], "x": [1.0], "value": [1.0], "d_x": [1.0]}
    # Numbers read from text and computed are never null, and their columns say so; so too
    # in an output of no rows.
    assert [f.nullable for f in back.schema] == [True, False, False, False]
    result = nanograd("grad", "x", "--points", "-", "-o", out, stdin="id,x\n")
    assert result.returncode == 0, result.stderr
    assert pq.read_schema(out) == back.schema and pq.read_table(out).num_rows == 0


def test_a_column_csv_cannot_hold(tmp_path):
    pq.write_table(pa.table({"x": [1.0], "tags": [["a"]]}), tmp_path / "in.parquet")
    result = in_process("grad", "x", "--points", str(tmp_path / "in.parquet"))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("error: --points column tags holds list<")


@pytest.mark.slow
def test_json_lines_in_and_out():
    stdin = '{"id": 1, "x": 2, "y": 3}\n\n{"y": 1.5, "x": "inf", "id": 2, "extra": {"k": [1, 2]}}\n'
    result = nanograd(
        "grad", "x*y", "--points", "-", "--points-format", "jsonl", "--format", "json", stdin=stdin
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        '{"id": 1, "extra": null, "value": 6.0, "inputs": {"x": 2.0, "y": 3.0}, '
        '"gradients": {"x": 3.0, "y": 2.0}}',
        '{"id": 2, "extra": {"k": [1, 2]}, "value": "inf", "inputs": {"x": "inf", "y": 1.5}, '
        '"gradients": {"x": 1.5, "y": "inf"}}',
    ]
    single = in_process("grad", "x*y", "--x", "2", "--y", "3", "--format", "json").stdout
    first = json.loads(result.stdout.splitlines()[0])
    assert {k: first[k] for k in ("value", "inputs", "gradients")} == json.loads(single)


def test_flat_json_rows_have_the_csvs_columns_as_keys():
    """--flat: a JSON row's keys are the CSV's columns, inputs as the numbers read; non-finite
    numbers as strings, or null with --nan null, as in the single-point rows."""
    stdin = '{"id": 1, "x": 2, "y": 3}\n{"y": 1.5, "x": "inf", "id": 2, "extra": {"k": [1, 2]}}\n'
    run = ["grad", "x*y", "--points", "-", "--points-format", "jsonl", "--flat"]
    result = in_process(*run, "--format", "json", stdin=stdin)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        '{"id": 1, "x": 2.0, "y": 3.0, "extra": null, "value": 6.0, "d_x": 3.0, "d_y": 2.0}',
        '{"id": 2, "x": "inf", "y": 1.5, "extra": {"k": [1, 2]}, "value": "inf", "d_x": 1.5, '
        '"d_y": "inf"}',
    ]
    nulls = in_process(*run, "--format", "json", "--nan", "null", stdin=stdin).stdout
    assert json.loads(nulls.splitlines()[1]) == {
        "id": 2,
        "x": None,
        "y": 1.5,
        "extra": {"k": [1, 2]},
        "value": None,
        "d_x": 1.5,
        "d_y": None,
    }
    csv = in_process(*run, "--format", "csv", stdin=stdin.splitlines()[0]).stdout
    assert csv == "id,x,y,value,d_x,d_y\n1,2,3,6.0,3.0,2.0\n"  # the first row's keys


@pytest.mark.slow
@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ('{"x": 1}\n{"x": 1e400}\n', "--points row 2: 1e400 is too large for a float"),
        ('{"x": 1}\n{"x": 2\n', "--points row 2: not JSON"),
        ('{"x": 1, "x": 2}\n', "--points row 1: the key x appears twice"),
        ('{"x": 1}\n[1]\n', "--points row 2 is not a JSON object"),
        ('{"x": 1}\n{"x": "a"}\n', "--points row 2, column x: 'a' is not a number"),
        (
            '{"x": 1}\n{}\n',
            "--points row 2, column x has no value: --na reads a missing value as nan",
        ),
        ('{"x": 1}\n\n{"x": 2} {"x": 3}\n', "--points row 2: not JSON (Extra data"),
        ('{"x": 1, "s": "a"}\n{"x": 2, "s": "\xff"}\n', "--points row 2: not valid UTF-8"),
        ('{"x": 1}\n{"x": 1' + "0" * 400 + "}\n", f"--points row 2: 1{'0' * 400} is too large"),
        ('{"x": 1}\nnull\n', "--points row 2 is not a JSON object"),
        ('null\n{"x": 1}\n', "--points row 1 is not a JSON object"),  # PyArrow would crash
    ],
)
def test_bad_json_lines(stdin, message):
    result = subprocess.run(
        [NANOGRAD, "grad", "x", "--points", "-", "--points-format", "jsonl"],
        input=stdin.encode("latin-1"),
        capture_output=True,
        timeout=60,
    )
    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr.decode().startswith(f"error: {message}")


def test_json_lines_keys_missing_from_later_rows(monkeypatch):
    """Rows read after the first piece may leave out keys (no value) and list them in another
    order; the columns are those of the first rows."""
    from nanograd_cli._io import chunks

    monkeypatch.setattr(chunks, "CHUNK_BYTES", 16)
    stdin = '{"id": "a", "x": 1}\n{"id": "b", "x": 2}\n{"x": 3}\n{"x": 4, "id": "d"}\n'
    args = ["--points", "-", "--points-format", "jsonl", "--format", "csv"]
    code, out, err = run("grad", "x", *args, stdin=stdin)
    assert (code, err) == (0, "")
    assert out == "id,x,value,d_x\na,1,1.0,1.0\nb,2,2.0,1.0\n,3,3.0,1.0\nd,4,4.0,1.0\n"


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(width=64)
    | st.sampled_from(["", "inf", "a,b", "é"]),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from("ab"), inner),
    max_leaves=4,
)
JSON_LINES = st.lists(
    st.one_of(
        st.dictionaries(st.sampled_from(["x", "y", "id"]), JSON_VALUES).map(json.dumps),
        JSON_VALUES.map(json.dumps),  # not an object
        st.sampled_from(["", " ", "null", '{"x": 1e400}', '{"x": 1} {"x": 2}', '{"x": [1e999]}']),
    ),
    min_size=1,
    max_size=6,
).map("\n".join)


def read_json_lines(text: str, chunk_bytes: int):
    """What the reader makes of `text`: the batches as Python values, or the error."""
    from nanograd_cli._io import chunks, readers
    from nanograd_cli.errors import InputError

    chunks.CHUNK_BYTES, before = chunk_bytes, chunks.CHUNK_BYTES
    try:
        reader = readers.JsonLinesReader(io.BytesIO(text.encode()), None)
        return reader.columns, [(first, table.to_pylist()) for first, table in reader]
    except InputError as error:
        return str(error)
    finally:
        chunks.CHUNK_BYTES = before


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(JSON_LINES, st.sampled_from([16, 1 << 20]))
def test_json_lines_read_by_pyarrow_as_by_json(text, chunk_bytes):
    """PyArrow's JSON reader reads what Python's `json` reads, a line at a time, the same: the
    same rows, or the same error naming the row (where PyArrow reads otherwise, or would crash
    on a first row null, `json` reads the piece)."""
    from nanograd_cli._io.readers import JsonLinesReader

    fast = read_json_lines(text, chunk_bytes)
    table = JsonLinesReader._table
    JsonLinesReader._table = lambda self, piece: self._table_of(self._rows(piece))
    try:
        slow = read_json_lines(text, chunk_bytes)
    finally:
        JsonLinesReader._table = table
    assert repr(fast) == repr(slow)  # repr: nan equals nan
    if isinstance(fast, tuple):
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        columns, batches = fast
        got = [row for _, batch in batches for row in batch]
        assert len(got) == len(rows) and all(set(row) <= set(columns) for row in rows)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["csv", "parquet", "arrow", "jsonl"])
def test_no_format_imports_pandas(tmp_path, fmt):
    """pandas (half a second to import) is for nanograd_cli.compile on DataFrames only."""
    given = tmp_path / f"in.{fmt}"
    table = pa.table({"x": [1.0, 2.0], "name": ["a", "b"]})
    if fmt == "csv":
        pcsv.write_csv(table, given)
    elif fmt == "parquet":
        pq.write_table(table, given)
    elif fmt == "arrow":
        with ipc.new_file(str(given), table.schema) as f:
            f.write_table(table)
    else:
        given.write_text('{"x": 1, "name": "a"}\n{"x": "inf", "name": "b"}\n')
    block = (
        "import sys\nfrom nanograd_cli._cli import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n"
        "    assert e.code in (0, None), e.code\nprint(sorted(m for m in sys.modules if "
        "m.split('.')[0] == 'pandas'))"
    )
    for out in ("out.csv", "out.jsonl", "out.parquet"):
        args = ["grad", "x", "--points", str(given), "-o", str(tmp_path / out)]
        result = subprocess.run(
            [sys.executable, "-c", block, *args], capture_output=True, text=True, timeout=60
        )
        assert result.stdout == "[]\n", result.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["fit", "a*x", "--data", "{data}", "--a", "1"],
        ["minimize", "(a*x - y)**2", "--data", "{data}", "--a", "1", "--steps", "3"],
        ["grad", "x*y", "--points", "{data}", "--drop-nan"],
    ],
    ids=["fit", "minimize", "drop-nan"],
)
def test_reading_rows_with_missing_values_imports_no_pandas(tmp_path, args):
    """A command that reads missing values (an empty cell, NA) as nan reads text columns
    without pandas too."""
    given = tmp_path / "data.csv"
    given.write_text("x,y\n1,2\n2,4.1\n3,NA\n4,8.2\n")
    block = (
        "import sys\nfrom nanograd_cli._cli import main\ntry:\n    main()\nexcept SystemExit:\n"
        "    pass\nprint(sorted(m for m in sys.modules if m.split('.')[0] == 'pandas'))"
    )
    args = [a.format(data=given) for a in args]
    if args[0] != "grad":
        args.append("--drop-nan")
    result = subprocess.run(
        [sys.executable, "-c", block, *args], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.splitlines()[-1] == "[]", result.stderr


def test_a_key_first_seen_after_the_first_rows_read(monkeypatch):
    from nanograd_cli._io import chunks

    monkeypatch.setattr(chunks, "CHUNK_BYTES", 16)
    stdin = '{"x": 1}\n{"x": 2}\n{"x": 3}\n{"x": 4}\n{"x": 5, "id": 9}\n'
    code, _, err = run("grad", "x", "--points", "-", "--points-format", "jsonl", stdin=stdin)
    assert code == 2 and err == "error: --points row 5 has a key id that no row before had\n"


@pytest.mark.slow
def test_formats_by_extension_or_option_through_pipes(tmp_path):
    """Where no extension says (standard input and output), --points-format does: Parquet
    in and out through pipes; Arrow's stream format out of a Parquet file."""
    table = points_table(50)
    pq.write_table(table, tmp_path / "in.parquet")
    data = (tmp_path / "in.parquet").read_bytes()
    result = subprocess.run(
        [NANOGRAD, "grad", SOURCE, "--points", "-", "--points-format", "parquet"],
        input=data,
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 0 and result.stdout.startswith(b"PAR1")
    back = pq.read_table(pa.BufferReader(result.stdout))
    assert back.column_names == ["id", "x", "y", "value", "d_x", "d_y"]
    result = subprocess.run(
        [
            NANOGRAD,
            "grad",
            "x",
            "--points",
            str(tmp_path / "in.parquet"),
            "--points-format",
            "arrow",
            "--wrt",
            "x",
        ],
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 0 and result.stdout.startswith(b"\xff\xff\xff\xff")  # a stream
    back = ipc.open_stream(result.stdout).read_all()
    assert back.column_names == ["id", "x", "y", "value", "d_x"]
    assert back["value"].to_pylist() == table["x"].to_pylist()
    piped = subprocess.run(
        [NANOGRAD, "grad", "2*y", "--points", "-", "--points-format", "arrow", "--format", "csv"],
        input=result.stdout.replace(b"value", b"vvvvv"),
        capture_output=True,
        timeout=60,
    )
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.decode().splitlines()[0] == "id,x,y,vvvvv,d_x,value,d_y"


@pytest.mark.slow
def test_drop_nan_leaves_out_rows_with_a_missing_input_and_says_how_many():
    result = nanograd(
        "grad",
        "x*y",
        "--points",
        "-",
        "--drop-nan",
        stdin="x,y,id\n1,2,a\n3,,b\nnan,1,c\n2,inf,d\n",
    )
    assert (result.returncode, result.stdout) == (
        0,
        "x,y,id,value,d_x,d_y\n1,2,a,2.0,2.0,1.0\n2,inf,d,inf,inf,2.0\n",
    )
    assert result.stderr == (
        "note: 2 rows with a missing value (nan, empty or NA) left out\n"
        "warning: 1 row has a non-finite result; the first: row 4 gives inf (input y is inf)\n"
    )


def test_drop_nan_reads_only_the_inputs_and_keeps_row_numbers(tmp_path):
    rows = tmp_path / "rows.csv"
    # `note` is no input: its empty field keeps its row; NA in x leaves row 2 out
    rows.write_text("x,note\n1,\nNA,b\n0,c\n")
    result = in_process("grad", "log(x)", "--points", str(rows), "--drop-nan", "--format", "json")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["inputs"]["x"], r["note"]) for r in lines] == [(1.0, ""), (0.0, "c")]
    assert [r["value"] for r in lines] == [0.0, "-inf"]
    assert result.stderr == (
        "note: 1 row with a missing value (nan, empty or NA) left out\n"
        "warning: 1 row has a non-finite result; the first: row 3 gives -inf "
        "(log gave -inf at line 1, column 1)\n"
    )
    rows.write_text("x\nnan\n\n")  # every row left out: the header alone
    result = in_process("grad", "x", "--points", str(rows), "--drop-nan")
    assert (result.returncode, result.stdout) == (0, "x,value,d_x\n")
    assert result.stderr == "note: 1 row with a missing value (nan, empty or NA) left out\n"


def test_disagreeing_format_and_output_and_options_without_points(tmp_path):
    out = tmp_path / "out.parquet"
    code, _, err = run(
        "grad", "x", "--points", "-", "--format", "json", "-o", str(out), stdin="x\n1\n"
    )
    assert code == 2 and "--format json and -o" in err
    code, _, err = run("grad", "x", "--x", "1", "-o", str(out))
    assert (code, err) == (
        2,
        "error: -o, --points-format, --output-format, --na, --drop-nan and --flat are for the "
        "rows of --points FILE\n",
    )
    assert not out.exists()


def test_an_extension_that_names_no_format_is_refused_and_no_extension_is_csv(tmp_path):
    wrong = (
        "error: cannot tell the format of {} from its extension: use .csv, .tsv, .parquet, "
        ".arrow, .feather, .jsonl or .json\n"
    )
    out = tmp_path / "out.xlsx"
    code, _, err = run("grad", "x", "--points", "-", "-o", str(out), stdin="x\n1\n")
    assert (code, err, out.exists()) == (2, wrong.format(out), False)
    code, _, err = run(
        "fit", "-e", "a*x", "--data", "-", "--a", "1", "-o", str(out), stdin="x,y\n1,2\n2,4\n"
    )
    assert (code, err, out.exists()) == (2, wrong.format(out), False)
    for name, options in (("out.xlsx", ["--points-format", "tsv"]), ("results", [])):
        target = tmp_path / name
        code, _, err = run(
            "grad", "x", "--points", "-", "-o", str(target), *options, stdin="x\n1\n"
        )
        separator = "\t" if options else ","
        assert (code, err) == (0, "")
        assert target.read_text() == separator.join(["x", "value", "d_x\n1", "1.0", "1.0\n"])


def test_a_parquet_or_arrow_file_with_no_extension_is_named_as_one(tmp_path):
    """A file with no extension is read as CSV: one that begins as Parquet or Arrow does is
    told to be named as such, not read as CSV with missing columns."""
    table = pa.table({"x": [1.0, 2.0]})
    pq.write_table(table, tmp_path / "points")
    with ipc.new_file(str(tmp_path / "frames"), table.schema) as f:
        f.write_table(table)
    for name, fmt, kind in (("points", "parquet", "a Parquet"), ("frames", "arrow", "an Arrow")):
        done = in_process("grad", "x", "--points", str(tmp_path / name))
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (
            f"error: --points {tmp_path / name} is {kind} file, not CSV: name it with .{fmt} "
            f"(or give --points-format {fmt})\n"
        )
        given = in_process(
            "grad",
            "x",
            "--points",
            str(tmp_path / name),
            "--points-format",
            fmt,
            "-o",
            str(tmp_path / f"{name}.csv"),
        )
        assert given.returncode == 0, given.stderr


def test_a_failed_run_leaves_no_file(tmp_path, monkeypatch):
    from nanograd_cli._io import chunks

    monkeypatch.setattr(chunks, "CHUNK_BYTES", 64)  # the bad row comes after rows written
    out = tmp_path / "out.parquet"
    stdin = "x\n" + "1\n" * 100 + "oops\n"
    for target in (out, tmp_path / "out.csv"):
        code, _, err = run("grad", "x", "--points", "-", "-o", str(target), stdin=stdin)
        assert code == 2 and err == "error: --points row 101, column x: 'oops' is not a number\n"
        assert os.listdir(tmp_path) == []
    out.write_bytes(b"kept")
    code, _, _ = run("grad", "x", "--points", "-", "-o", str(out), stdin=stdin)
    assert code == 2 and out.read_bytes() == b"kept" and os.listdir(tmp_path) == ["out.parquet"]


# Hostile input: the installed command in a shell under `timeout 60` and `ulimit -v 4000000`.


@pytest.mark.slow
def test_a_table_100000_columns_wide(tmp_path):
    """Names are looked up in sets: before, 100,000 columns took 154 s, in lists."""
    names = [f"c{k}" for k in range(100_000)]
    (tmp_path / "wide.csv").write_text(",".join(names) + "\n" + ",".join(map(str, range(100_000))))
    code, out, err = limited("nanograd grad 'c1*c99999 + c5' --points wide.csv", cwd=tmp_path)
    assert code == 0, err
    header, row = out.splitlines()
    assert header.split(",") == [*names, "value", "d_c1", "d_c99999", "d_c5"]
    assert row.split(",")[-4:] == ["100004.0", "99999.0", "1.0", "1.0"]


TOO_LONG = "is longer than 64 MB (no line end"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("nanograd grad x --points /dev/zero", f"--points: the header {TOO_LONG}"),
        ("nanograd grad x --points - < /dev/zero", f"--points: the header {TOO_LONG}"),
        ("nanograd grad x --points /dev/zero --points-format jsonl", f"--points row 1 {TOO_LONG}"),
        (
            "(echo x; echo 1; cat /dev/zero) | nanograd grad x --points -",
            f"--points row 2 {TOO_LONG}",
        ),
        (
            "(echo x,note; echo '1,\"open'; yes 2,text) | nanograd grad x --points -",
            f"--points row 1 {TOO_LONG}, or a quote never closed?)",
        ),
        (
            "nanograd grad x --points - --points-format parquet < /dev/zero",
            "--points standard input is not a Parquet file",
        ),
        (
            "nanograd grad x --points /dev/zero --points-format parquet",
            "--points /dev/zero is not a Parquet file",
        ),
        (
            "nanograd grad x --points - --points-format arrow < /dev/zero",
            "--points standard input is not Arrow IPC",
        ),
    ],
)
def test_endless_input_without_line_ends_is_refused(command, message):
    """A record (the header, or a row) longer than 64 MB is bad input, read no further: a file
    with no line ends, or a quote that is never closed, cannot take all memory."""
    code, _, err = limited(command)
    assert code == 2
    assert err.startswith(f"error: {message}")


def test_a_long_record_within_the_limit_is_read(monkeypatch):
    from nanograd_cli._io import chunks

    monkeypatch.setattr(chunks, "CHUNK_BYTES", 16)
    monkeypatch.setattr(chunks, "RECORD_BYTES", 64)
    note = "n" * 60  # with a short row after it: more than 64 bytes read at once
    code, out, err = run("grad", "x", "--points", "-", stdin=f"x,note\n2,{note}\n3,a\n")
    assert (code, err) == (0, "")
    assert out == f"x,note,value,d_x\n2,{note},2.0,1.0\n3,a,3.0,1.0\n"
    code, out, err = run("grad", "x", "--points", "-", stdin=f"x,note\n2,a\n3,{note * 2}\n")
    assert code == 2 and err.startswith("error: --points row 2 is longer than 64 bytes")


GOOD_ROWS = "".join(f"{k}\n" for k in range(2, 1001))  # 999 rows


@pytest.mark.slow
@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ('x\n1,"oops\n' + GOOD_ROWS, "--points row 1 opens a quote that is never closed"),
        ('x,n\n1,a\n\n2,b\n3,"c\nd""\n4,e\n', "--points row 3 opens a quote that is never closed"),
        ('x,n\n1,"a\nb"\n2,"c""\n', "--points row 2 opens a quote that is never closed"),
        ('x,"n\n1,a\n', "--points: the header opens a quote that is never closed"),
    ],
)
def test_a_quote_the_file_ends_inside_names_the_row_that_opened_it(tmp_path, stdin, message):
    """A line end inside quotes is CSV; a file that ends inside them is bad input, however
    many rows the open quote swallowed, from standard input or a file, to any output."""
    result = nanograd("grad", "x*2", "--points", "-", stdin=stdin)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"error: {message}\n")
    (tmp_path / "in.csv").write_text(stdin)
    result = in_process("grad", "x*2", "--points", "in.csv", "-o", "out.csv", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (2, f"error: {message}\n")
    assert os.listdir(tmp_path) == ["in.csv"]


@pytest.mark.slow
def test_a_quote_inside_unquoted_text_is_text():
    result = nanograd("grad", "x", "--points", "-", stdin='x,n\n1,ab"c\n2,d\n')
    assert (result.returncode, result.stdout) == (
        0,
        'x,n,value,d_x\n1,"ab""c",1.0,1.0\n2,d,2.0,1.0\n',
    )


def test_a_quote_never_closed_across_pieces(monkeypatch):
    from nanograd_cli._io import chunks

    monkeypatch.setattr(chunks, "CHUNK_BYTES", 8)  # rows written before, the quote in the last
    stdin = "x,n\n" + "".join(f"{k},a\n" for k in range(1, 11)) + '11,"b\n12,c\n13,d\n'
    code, out, err = run("grad", "x", "--points", "-", stdin=stdin)
    assert (code, err) == (2, "error: --points row 11 opens a quote that is never closed\n")
    assert out.startswith("x,n,value,d_x\n1,a,1.0,1.0\n")


@pytest.mark.slow
@pytest.mark.parametrize("chunk_bytes", [None, 3])
def test_carriage_returns_alone_end_lines(monkeypatch, chunk_bytes):
    """CR line ends (classic Mac OS) read as LF and CRLF do, also where a piece of the file
    ends between a CR and its LF; a CR inside quotes is text."""
    result = nanograd("grad", "x*2", "--points", "-", stdin="x\r1\r2\r")
    assert (result.returncode, result.stdout, result.stderr) == (
        0,
        "x,value,d_x\n1,2.0,2.0\n2,4.0,2.0\n",
        "",
    )
    if chunk_bytes:
        from nanograd_cli._io import chunks

        monkeypatch.setattr(chunks, "CHUNK_BYTES", chunk_bytes)
    stdin = 'x,n\r\n\r1,"a\rb"\r2,c\r\n3,d'
    code, out, err = run("grad", "x", "--points", "-", stdin=stdin)
    assert (code, err) == (0, "")
    assert out == 'x,n,value,d_x\n1,"a\rb",1.0,1.0\n2,c,2.0,1.0\n3,d,3.0,1.0\n'


@pytest.mark.slow
def test_damaged_parquet_and_arrow_are_bad_input_that_never_blames_the_output(tmp_path):
    table = pa.table({"x": np.arange(1000.0), "y": np.arange(1000.0)})
    stream = pa.BufferOutputStream()
    with ipc.new_stream(stream, table.schema) as writer:
        writer.write_table(table)
        writer.write_table(table)
    cut = stream.getvalue().to_pybytes()[:-5000]  # the second batch cut short
    code, _, err = limited(
        "nanograd grad x*y --points - --points-format arrow -o out.csv", cut, tmp_path
    )
    assert (code, err) == (
        2,
        "error: cannot read standard input: "
        "Expected to be able to read 16000 bytes for message body, got 11008\n",
    )
    pq.write_table(table, tmp_path / "p.parquet")
    damaged = bytearray((tmp_path / "p.parquet").read_bytes())
    damaged[10:4000] = b"\xff" * 3990  # the first column's pages overwritten
    (tmp_path / "p.parquet").write_bytes(damaged)
    for command in ("--points p.parquet", "--points - --points-format parquet < p.parquet"):
        code, _, err = limited(f"nanograd grad x*y {command} -o out.csv", cwd=tmp_path)
        name = "p.parquet" if "<" not in command else "standard input"
        assert code == 2 and err.startswith(f"error: cannot read {name}: "), err
        assert len(err.splitlines()) == 1 and "out.csv" not in err
    assert sorted(os.listdir(tmp_path)) == ["p.parquet"]


@pytest.mark.slow
def test_garbage_as_arrow_or_parquet_is_bad_input(tmp_path):
    garbage = np.random.default_rng(0).bytes(100_000)
    for name in ("g.arrow", "g.parquet"):
        (tmp_path / name).write_bytes(garbage)
    code, out, err = limited("nanograd grad x --points g.arrow", cwd=tmp_path)
    assert (code, out) == (2, "")
    assert err == (
        "error: --points g.arrow is not Arrow IPC (Feather): "
        "Invalid IPC stream: negative continuation token\n"
    )
    code, out, err = limited("nanograd grad x --points g.parquet", cwd=tmp_path)
    assert (code, out) == (2, "")
    assert err.startswith("error: --points g.parquet is not a Parquet file: Parquet magic bytes")


@pytest.mark.slow
def test_source_and_points_cannot_both_come_from_standard_input(tmp_path):
    result = nanograd("grad", "-", "--points", "-", stdin="x\n1\n")
    assert (result.returncode, result.stdout, result.stderr) == (
        2,
        "",
        "error: the source and --points - cannot both come from standard input\n",
    )
    # -f - is the file named -, which the points on standard input can go with.
    (tmp_path / "-").write_text("x*2")
    result = nanograd("grad", "-f", "-", "--points", "-", stdin="x\n1\n", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "x,value,d_x\n1,2.0,2.0\n", "")


def test_a_missing_value_written_by_pandas_says_how_to_read_it(tmp_path):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"x": [1.0, float("nan"), 3.0]})
    frame.to_csv(tmp_path / "empty.csv", index=False)
    result = in_process("grad", "x*2", "--points", "empty.csv", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "error: --points row 2, column x is empty: --na reads a missing value as nan\n"
    )
    frame.to_csv(tmp_path / "nan.csv", index=False, na_rep="nan")
    result = in_process("grad", "x*2", "--points", "nan.csv", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "x,value,d_x\n1.0,2.0,2.0\nNaN,NaN,2.0\n3.0,6.0,2.0\n"


def without(modules: list[str], *args: str, cwd) -> subprocess.CompletedProcess:
    """The command run as if `modules` were not installed."""
    hidden = [f"sys.modules[{m!r}] = None" for m in modules]
    block = "; ".join(["import sys", *hidden, "from nanograd_cli._cli import main", "main()"])
    return subprocess.run(
        [sys.executable, "-c", block, *args],
        input="x,y\n1,2\n2,4\n3,6\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=NOT_ACTIVE,
    )


@pytest.mark.slow
def test_without_pyarrow_the_error_names_the_extra(tmp_path):
    result = without(["pyarrow"], "grad", "x", "--points", "-", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        "error: --points needs PyArrow, which is not installed: install it with: "
        f"{pip_hint('points')}\n"
    )
    result = without(
        ["pyarrow"], "minimize", "(w*x - y)**2", "--data", "-", "--w", "0", cwd=tmp_path
    )
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        "error: --data needs PyArrow, which is not installed: install it with: "
        f"{pip_hint('points')}\n"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "missing", [["pyarrow"], ["scipy.optimize"], ["pyarrow", "scipy.optimize"]]
)
def test_fit_without_its_libraries_names_the_fit_extra_once(tmp_path, missing):
    result = without(missing, "fit", "a*x", "--data", "-", "--a", "1", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    library = "fitting needs SciPy" if "scipy.optimize" in missing else "--data needs PyArrow"
    assert result.stderr == (
        f"error: {library}, which is not installed: install it with: {pip_hint('fit')}\n"
    )


def test_the_progress_display_shows_rows_rate_and_time_left(monkeypatch):
    from nanograd_cli.render import _progress as progress_module
    from nanograd_cli.render._progress import RowsProgress

    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setattr(RowsProgress, "DELAY", 0.0)
    screen = io.StringIO()
    monkeypatch.setattr(sys, "stderr", screen)
    clock = iter([100.0, 110.0])  # started, then 10 s later a quarter is done
    monkeypatch.setattr(progress_module, "time", SimpleNamespace(monotonic=lambda: next(clock)))
    progress = RowsProgress(total_rows=1000)
    progress.update(250, 0)
    progress.stop()
    shown = screen.getvalue()
    assert "25%" in shown and "250 rows, 25 rows/s" in shown and "0:00:30 left" in shown


# nanograd_cli.compile: the same function for NumPy, pandas, Arrow, and other machines.


def test_compile_on_arrays_frames_and_arrow():
    pd = pytest.importorskip("pandas")
    f = compile(SOURCE)
    x, y = np.array([2.0, -1.0]), np.array([3.0, 0.5])
    results = f(x=x, y=y)
    assert list(results) == ["value", "d_x", "d_y"]
    for k in range(2):
        expected = hand(x[k], y[k])
        got = (results["value"][k], results["d_x"][k], results["d_y"][k])
        assert got == pytest.approx(expected, rel=1e-15)
    frame = pd.DataFrame({"id": ["a", "b"], "x": x, "y": y}, index=[7, 9])
    out = f(frame)
    assert list(out.columns) == ["id", "x", "y", "value", "d_x", "d_y"]
    assert list(out.index) == [7, 9] and list(out["value"]) == list(results["value"])
    batch = f(pa.record_batch({"x": x, "y": y}))
    assert isinstance(batch, pa.RecordBatch)
    assert batch.column("d_x").to_pylist() == results["d_x"].tolist()
    g = compile("x*y", "y", x=2.0)
    assert g(pa.table({"y": [1.0, 5.0]})).to_pydict() == {
        "y": [1.0, 5.0],
        "value": [2.0, 10.0],
        "d_y": [2.0, 2.0],
    }
    assert len(f(frame.iloc[:0])) == 0


def test_compile_errors():
    from nanograd_cli.errors import InputError, UnknownInputs

    with pytest.raises(UnknownInputs):
        compile("x*y", "z")
    with pytest.raises(InputError, match="no column for input y"):
        compile("x*y")(x=np.array([1.0]))
    with pytest.raises(InputError, match="row 2, column x: 'b' is not a number"):
        compile("x")(pa.table({"x": ["1", "b"]}))
    f, one, two = compile("x*y"), np.ones(2), np.ones(3)
    bad = [
        (lambda: f(x=one, y=one, z=one), "z is not an input of this source (its inputs: x, y)"),
        (lambda: f({"x": one, "y": one, "z": 1}), "z is not an input of this source"),
        (lambda: compile("2")(x=one), "x is not an input of this source (its inputs: none)"),
        (lambda: f(x=one, y=two), "y has 3 values, x 2: give every input as many"),
        (
            lambda: f(x=np.ones((2, 2)), y=one),
            "x is an array of shape (2, 2): give a 1-D array, one value per row",
        ),
        (lambda: f(x=["a"], y=one), "row 1, input x: 'a' is not a number"),
        (lambda: f(x=np.array(["1", "a"]), y=one), "row 2, input x: 'a' is not a number"),
        (
            lambda: compile("x*y", y=3.0)(x=one, y=one),
            "y is fixed at 3.0 by compile(): give it once",
        ),
        (
            lambda: f(pa.table({"x": one, "y": one}), y=two),
            "y is given as a keyword beside a table: give it as a column of the table, or fixed "
            "in compile()",
        ),
    ]
    for call, message in bad:
        with pytest.raises(InputError) as caught:
            call()
        assert str(caught.value).startswith(message), str(caught.value)
    # One value for every row, beside arrays: what a fixed input is.
    assert f(x=[1.0, 2.0], y=3.0)["d_x"].tolist() == [3.0, 3.0]


def test_compile_warns_where_an_operation_makes_nan_or_inf_at_the_callers_line():
    """As grad --points warns of rows whose result is not finite, compile's function warns
    from Python (as NumPy does of an invalid operation): how many rows an operation made nan
    or inf out of finite inputs, and why the first; a row whose input is nan already is
    NaN in, NaN out, and not warned of."""
    import warnings

    import numpy as np
    import pandas as pd
    import pyarrow as pa

    from nanograd_cli.errors import NanogradWarning

    f = compile("log(x)")
    said = "2 rows have a non-finite result from finite inputs; the first: row 2 gives nan "
    said += "(log gave nan at line 1, column 1)"
    x = [1.0, -1.0, -2.0, np.nan]
    for call in (
        lambda: f(x=np.array(x)),
        lambda: f({"x": x}),
        lambda: f(pd.DataFrame({"x": x})),
        lambda: f(pa.table({"x": x})),
    ):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        assert [(w.category, str(w.message)) for w in caught] == [(NanogradWarning, said)]
        assert caught[0].filename == __file__  # the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(f(x=np.array([np.nan, 1.0]))["value"][0])  # NaN in, NaN out: quiet
    with pytest.warns(NanogradWarning, match=r"^1 row has .*row 1 gives inf \(exp gave inf"):
        compile("exp(x) * y")(x=np.array([1000.0]), y=2.0)


def test_compile_names_the_column_of_a_frame_it_cannot_read():
    from nanograd_cli.errors import InputError

    pd = pytest.importorskip("pandas")
    f = compile("x*y")
    bad = [
        (pd.DataFrame([[1, 2, 3]], columns=["x", "x", "y"]), "the DataFrame has 2 columns named x"),
        (
            pd.DataFrame([[1, 2]], columns=pd.MultiIndex.from_tuples([("x", "a"), ("y", "b")])),
            "the DataFrame's columns have 2 levels (a MultiIndex): give each column one name",
        ),
        (pd.DataFrame({"x": ["1", "abc"], "y": [1, 2]}), "row 2, column x: 'abc' is not a number"),
        (pd.DataFrame({"x": ["1", [2]], "y": [1, 2]}), "row 2, column x: [2] is not a number"),
        (pd.DataFrame({"x": pd.Categorical(["a"]), "y": [1]}), "row 1, column x: 'a' is not"),
        (pd.DataFrame({"x": pd.to_datetime(["2020-01-01"]), "y": [1]}), "column x holds datetime"),
        (pd.DataFrame({"x": [1 + 2j], "y": [1]}), "column x holds complex128, not numbers"),
    ]
    for frame, message in bad:
        with pytest.raises(InputError) as caught:
            f(frame)
        assert str(caught.value).startswith(message), str(caught.value)
    # Numbers as text, missing values (None, NA) as nan, pandas' own number types: read.
    frame = pd.DataFrame(
        {
            "x": pd.Series(["1", None, pd.NA, " 4 "], dtype=object),
            "y": pd.array([1, 2, None, 4], dtype="Int64"),
            "z": [0, 0, 5, 5],
        }
    )
    assert f(frame)["value"].tolist() == pytest.approx([1.0, np.nan, np.nan, 16.0], nan_ok=True)
    twice = pd.DataFrame([[1, 2, 3, 4]], columns=["x", "y", "z", "z"])  # not an input: kept
    assert list(f(twice).columns) == ["x", "y", "z", "z", "value", "d_x", "d_y"]


@pytest.mark.slow
def test_compile_on_a_dask_cluster_equals_one_machine(tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("dask.distributed")
    table = points_table(20_000, seed=3)
    folder = tmp_path / "points"
    folder.mkdir()
    for k, start in enumerate(range(0, table.num_rows, 5000)):  # four files, several partitions
        pq.write_table(table.slice(start, 5000), folder / f"part{k}.parquet", row_group_size=2500)
    f = compile(SOURCE)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        frame = dd.read_parquet(str(folder))
        assert frame.npartitions >= 4
        computed = frame.map_partitions(f).compute()
        workers = client.run(os.getpid)
        assert len(set(workers.values())) == 2 and os.getpid() not in workers.values()
    alone = f(table.to_pandas())
    assert list(computed.columns) == list(alone.columns)
    assert computed["id"].tolist() == alone["id"].tolist()
    for name in ("x", "y", "value", "d_x", "d_y"):
        assert bits(computed[name].tolist()) == bits(alone[name].tolist()), name


def test_compile_pickles_as_its_source():
    import pickle

    f = compile("x*y", "x", y=3.0)
    g = pickle.loads(pickle.dumps(f))
    assert g.program.source == "x*y" and g.wrt == ["x"] and g.fixed == {"y": 3.0}
    assert g(x=np.array([2.0]))["value"].tolist() == [6.0]


def test_compile_writes_out_arrays_as_grad_points_does():
    """A source with array literals, or an array fixed for every row (weights), compiles as
    `grad --points` runs it: written out in scalars, each element's gradient a column."""
    import pickle

    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    squares = compile("sum([x, y]**2)")(x=x, y=y)
    assert {k: v.tolist() for k, v in squares.items()} == {
        "value": [10.0, 20.0],
        "d_x": [2.0, 4.0],
        "d_y": [6.0, 8.0],
    }
    stable = compile("logsumexp([x, y])")(x=x, y=y)
    np.testing.assert_allclose(stable["value"], np.logaddexp(x, y), rtol=1e-15)
    weighted = compile("w @ [x, y]", "x", "w", w=np.array([1.0, 2.0]))
    for f in (weighted, pickle.loads(pickle.dumps(weighted))):
        done = f(x=x, y=y)
        assert done["value"].tolist() == [7.0, 10.0] and done["d_x"].tolist() == [1.0, 1.0]
        assert done["d_w[0]"].tolist() == [1.0, 2.0] and done["d_w[1]"].tolist() == [3.0, 4.0]


def test_points_and_compile_agree_with_the_engine_row_by_row():
    program = parse(SOURCE)
    table = points_table(40)
    results = compile(SOURCE)(table)
    for row in results.to_pylist():
        single = program.grad({"x": row["x"], "y": row["y"]})
        assert row["value"] == pytest.approx(single.value, rel=1e-12, abs=1e-300)
        assert row["d_x"] == pytest.approx(single.gradients["x"], rel=1e-12, abs=1e-300)
        assert row["d_y"] == single.gradients["y"]


@pytest.mark.slow
def test_csv_read_from_standard_input_becomes_parquet_on_standard_output():
    import io

    import pyarrow.parquet as pq

    done = subprocess.run(
        [NANOGRAD, "grad", "x*y", "--points", "-", "--output-format", "parquet"],
        input=b"x,y\n1,2\n3,4\n",
        capture_output=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, b"")
    rows = pq.read_table(io.BytesIO(done.stdout)).to_pylist()
    assert rows == [
        {"x": 1.0, "y": 2.0, "value": 2.0, "d_x": 2.0, "d_y": 1.0},
        {"x": 3.0, "y": 4.0, "value": 12.0, "d_x": 4.0, "d_y": 3.0},
    ]


@pytest.mark.slow
def test_rows_from_a_slow_pipe_are_counted_as_they_come(tmp_path):
    """A program that writes its rows as it goes: the rows read so far and the rate show on
    standard error (a terminal) while the pipe is still open, and each batch is written on
    without waiting for 16 MB. The writer waits, rows unsent, for the display to show the
    rows sent: a reader that waited for more would keep it waiting (a hang, not a time)."""
    import fcntl
    import pty
    import re
    import select
    import struct as struct_
    import termios

    main_fd, child_fd = pty.openpty()
    fcntl.ioctl(child_fd, termios.TIOCSWINSZ, struct_.pack("HHHH", 24, 80, 0, 0))
    out = tmp_path / "out.csv"
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    with open(out, "wb") as stdout:
        process = subprocess.Popen(
            [NANOGRAD, "grad", "x*2", "--points", "-", "--format", "csv"],
            stdin=subprocess.PIPE,
            stdout=stdout,
            stderr=child_fd,
            env=env,
        )
    os.close(child_fd)
    screen = b""

    def shown(pattern: str) -> None:
        nonlocal screen
        while not re.search(pattern, re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", screen).decode()):
            ready, _, _ = select.select([main_fd], [], [], 60)
            assert ready, f"not shown in 60 s: {pattern!r}; shown: {screen[-300:]!r}"
            screen += os.read(main_fd, 65536)

    process.stdin.write(b"x\n" + b"".join(b"%d\n" % k for k in range(1000)))
    process.stdin.flush()
    shown(r"1,000 rows, [\d,]+ rows/s")
    assert out.read_text().splitlines()[-1] == "999,1998.0,2.0"  # written on already
    process.stdin.write(b"".join(b"%d\n" % k for k in range(1000, 1500)))
    process.stdin.flush()
    shown(r"1,500 rows, [\d,]+ rows/s")
    process.stdin.close()
    assert process.wait(timeout=60) == 0
    try:
        while select.select([main_fd], [], [], 1)[0]:
            screen += os.read(main_fd, 65536)
    except OSError:  # the terminal closed with the process
        pass
    os.close(main_fd)
    assert "Traceback" not in screen.decode()
    rows = out.read_text().splitlines()
    assert rows[0] == "x,value,d_x" and len(rows) == 1501
    assert rows[1500] == "1499,2998.0,2.0"


@pytest.mark.parametrize(
    ("fmt", "rows"),
    [
        ("csv", "x,y\n1,2\n,3\nNA,4\n5,null\n"),
        ("jsonl", '{"x": 1, "y": 2}\n{"x": null, "y": 3}\n{"y": 4}\n{"x": 5, "y": null}\n'),
    ],
)
def test_na_reads_a_missing_value_as_nan_and_keeps_its_row(fmt, rows):
    """--na: an empty field, NA, null or an absent key is nan, the row's results nan where
    they depend on it (d(x*y)/dx = y stays a number), every row in its place."""
    done = in_process(
        "grad", "x*y", "--points", "-", "--points-format", fmt, "--na", "--format", "csv",
        stdin=rows,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    got = [line.split(",")[-3:] for line in done.stdout.splitlines()[1:]]
    assert got == [
        ["2.0", "2.0", "1.0"],
        ["NaN", "3.0", "NaN"],
        ["NaN", "4.0", "NaN"],
        ["NaN", "NaN", "5.0"],
    ]
    assert done.stderr == (
        "warning: 3 rows have a non-finite result; the first: row 2 gives nan (input x is nan)\n"
    )


def test_text_that_is_not_utf8_is_read_as_windows_1252(tmp_path):
    """Excel on Windows saves CSV in Windows-1252: its header and text read as they were
    written (°, µ, ü), the text passed on as UTF-8, whether the header or a row is the first
    to be other than ASCII; UTF-16 text is refused, saying so."""
    (tmp_path / "header.csv").write_bytes("x,y (°C)\n1,2\n".encode("cp1252"))
    done = in_process("grad", "2*x", "--points", "header.csv", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "x,y (°C),value,d_x\n1,2,2.0,2.0\n")
    rows = "x\tname\n1\tMüller\n2\tJosé \u2013 5µs\n"
    for text, name in ((rows, "rows.tsv"), (rows.replace("\t", ","), "rows.csv")):
        (tmp_path / name).write_bytes(text.encode("cp1252"))
        done = in_process("grad", "2*x", "--points", name, cwd=tmp_path)
        out = "x,name,value,d_x\n1,Müller,2.0,2.0\n2,José \u2013 5µs,4.0,2.0\n"
        assert (done.returncode, done.stdout) == (0, out)
    (tmp_path / "wide.csv").write_bytes("x,y\n1,2\n".encode("utf-16"))
    done = in_process("grad", "x*y", "--points", "wide.csv", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        "error: --points: the header is not valid UTF-8: it is UTF-16 or UTF-32 text (its "
        "first bytes say so): save it as UTF-8\n",
    )
    (tmp_path / "bare.csv").write_bytes("x,y\n1,2\n".encode("utf-16-le"))  # no byte order mark
    done = in_process("grad", "x*y", "--points", "bare.csv", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        "error: --points: the header has NUL bytes: it is UTF-16 or UTF-32 text, or no text: "
        "save it as UTF-8\n",
    )


def test_a_file_of_utf8_rows_with_one_from_windows_keeps_each_rows_text(tmp_path):
    """Each line that is not UTF-8 is Windows-1252, the others UTF-8: neither is garbled,
    whichever comes first."""
    many = "".join(f"{i},Müller\n" for i in range(1000)).encode()
    data = b"x,name\n" + many + "9,Zoë\n".encode("cp1252") + "10,Zoë\n".encode()
    (tmp_path / "mixed.csv").write_bytes(data)
    done = in_process("grad", "2*x", "--points", "mixed.csv", cwd=tmp_path)
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert (lines[1], lines[-2], lines[-1]) == (
        "0,Müller,0.0,2.0",
        "9,Zoë,18.0,2.0",
        "10,Zoë,20.0,2.0",
    )
    assert sum("Müller" in line for line in lines) == 1000


def test_a_fit_reads_a_windows_1252_file_and_names_its_columns():
    data = "temp (°C),y\n1,2\n2,4\n3,6.1\n".encode("cp1252")
    done = in_process("fit", "a*temp", "--data", "-", "--a", "1", stdin=data)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: temp is no column of --data (its columns: temp (°C), y); the column "
        "'temp (°C)' is read by its header, which is no name: rename it in the file's first "
        "line (as temp_C) and write that in the model\n"
    )
