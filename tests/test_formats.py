"""The formats people pipe into and out of: a JSON array of records (pandas' to_json), TSV,
nan and inf as the next tool reads them (NaN in CSV; in JSON the spec's strings, or null with
`--nan null`), `--flat` JSON rows, and each output as pandas, polars and DuckDB read it
(docs/points.md#reading-the-results-elsewhere)."""

from __future__ import annotations

import json
import math

import pytest

from .helpers import in_process, nanograd

pd = pytest.importorskip("pandas")

FRAME = {"x": [1.0, -1.0, 4.0], "y": [3.0, 4.0, 5.0], "label": ["a", "b\tc, d", "e"]}
RESULTS = (
    "x,y,label,value,d_x,d_y\n"
    "1.0,3.0,a,3.0,3.0,1.0\n"
    '-1.0,4.0,"b\tc, d",-4.0,4.0,-1.0\n'
    "4.0,5.0,e,20.0,5.0,4.0\n"
)


@pytest.mark.slow
def test_a_json_array_of_records_is_read_as_rows(tmp_path):
    pd.DataFrame(FRAME).to_json(tmp_path / "points.json", orient="records")
    done = in_process("grad", "x*y", "--points", "points.json", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, RESULTS), done.stderr
    # From standard input, and laid out over lines, as `jq .` writes it.
    text = json.dumps(json.loads((tmp_path / "points.json").read_text()), indent=2)
    piped = nanograd(
        "grad", "x*y", "--points", "-", "--points-format", "jsonl", "--format", "csv", stdin=text
    )
    assert piped.stdout.splitlines()[1] == "1.0,3.0,a,3.0,3.0,1.0"


@pytest.mark.slow
@pytest.mark.parametrize(
    "text, message",
    [
        ('[{"x": 1}, 2]', "--points row 2 is not a JSON object"),
        ('[{"x": 1} {"x": 2}]', "--points: after row 1, ',' or ']' is expected"),
        ('[{"x": 1}, {"x": 2}', "--points: the JSON array is never closed with ]"),
        ('[{"x": 1}] {"x": 2}', "--points: there is text after the JSON array's closing ]"),
        ('[{"x": 1}, {"x": 1e400}]', "--points row 2: 1e400 is too large for a float"),
        ('[{"x": 1, "x": 2}]', "--points row 1: the key x appears twice"),
    ],
)
def test_a_bad_json_array_names_the_row(text, message):
    done = nanograd("grad", "x", "--points", "-", "--points-format", "jsonl", stdin=text)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {message}\n")


@pytest.mark.slow
def test_tsv_in_and_out(tmp_path):
    pd.DataFrame(FRAME).to_csv(tmp_path / "points.tsv", sep="\t", index=False)
    done = in_process("grad", "x*y", "--points", "points.tsv", "-o", "out.tsv", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    back = pd.read_csv(tmp_path / "out.tsv", sep="\t")
    assert list(back.columns) == ["x", "y", "label", "value", "d_x", "d_y"]
    assert list(back["label"]) == FRAME["label"]  # a tab inside a field is quoted
    assert list(back["value"]) == [3.0, -4.0, 20.0]
    piped = nanograd("grad", "x*2", "--points", "-", "--points-format", "tsv", stdin="x\tz\n1\tq\n")
    assert piped.stdout == "x\tz\tvalue\td_x\n1\tq\t2.0\t2.0\n"


def test_nan_null_writes_null_where_the_default_writes_strings():
    """JSON has no nan or inf: every JSON output, --points rows too, writes the spec's strings
    "nan", "inf", "-inf", and null with `--nan null` (what pandas, polars, Arrow and DuckDB
    read as a missing number)."""
    single = ["grad", "log(x)", "--x", "-1", "--format", "json"]
    assert json.loads(in_process(*single).stdout)["value"] == "nan"
    assert json.loads(in_process(*single, "--nan", "null").stdout)["value"] is None
    points = ["grad", "log(x)", "--points", "-", "--format", "json"]
    done = nanograd(*points, stdin="x\n-1\n0\ninf\n")
    rows = [json.loads(r) for r in done.stdout.splitlines()]
    assert [(r["inputs"]["x"], r["value"], r["gradients"]["x"]) for r in rows] == [
        (-1.0, "nan", -1.0),
        (0.0, "-inf", "inf"),
        ("inf", "inf", 0.0),
    ]
    done = in_process(*points, "--nan", "null", stdin="x\n-1\n0\n1\ninf\n")
    nulls = [json.loads(r) for r in done.stdout.splitlines()]
    assert [r["value"] for r in nulls] == [None, None, 0.0, None]  # nan, -inf, 0, inf
    assert [r["gradients"]["x"] for r in nulls] == [-1.0, None, 1.0, 0.0]
    assert [r["inputs"]["x"] for r in nulls] == [-1.0, 0.0, 1.0, None]
    lines = ["grad", "--each-line", "--x", "0", "--format", "json", "--nan", "null"]
    assert json.loads(in_process(*lines, stdin="1/x\n").stdout)["value"] is None
    explain = in_process("explain", "log(x)", "--x", "-1", "--format", "json", "--nan", "null")
    assert json.loads(explain.stdout)["forward"][-1]["value"] is None
    hessian = in_process("hessian", "log(x)", "--x", "-1", "--format", "json", "--nan", "null")
    assert json.loads(hessian.stdout)["value"] is None


def test_fit_writes_its_rows_with_strings_in_json_and_null_with_nan_null(tmp_path):
    (tmp_path / "d.csv").write_text("x,y\n0,1\n1,3\n2,5\n3,nan\n")
    fit = ["fit", "a*x + b", "--data", "d.csv", "--a", "1", "--b", "0", "--drop-nan"]
    done = in_process(*fit, "-o", "out.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    last = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[-1])
    assert (last["x"], last["y"], last["fitted"], last["residual"]) == (3.0, "nan", "nan", "nan")
    done = in_process(*fit, "-o", "nulls.jsonl", "--nan", "null", cwd=tmp_path)
    last = json.loads((tmp_path / "nulls.jsonl").read_text().splitlines()[-1])
    assert (last["x"], last["y"], last["fitted"], last["residual"]) == (3.0, None, None, None)


def test_csv_writes_nan_as_every_reader_reads_a_float():
    """pandas, polars and DuckDB read NaN, inf and -inf in CSV as floats; polars reads nan as
    text. Inputs read as nan or as another spelling of inf are written so too."""
    done = nanograd("grad", "log(x)", "--points", "-", stdin="id,x\na,-1\nb,0\nc,Infinity\nd,nan\n")
    assert done.stdout.splitlines() == [
        "id,x,value,d_x",
        "a,-1,NaN,-1.0",
        "b,0,-inf,inf",
        "c,inf,inf,0.0",
        "d,NaN,NaN,NaN",
    ]
    assert in_process("grad", "log(x)", "--x", "-1", "--format", "csv").stdout == (
        "value,d_x\nNaN,-1.0\n"
    )


# Reading each output elsewhere, as docs/points.md shows it: the rows below hold nan, -inf
# (at x = 0) and inf (at x = inf), which each reader must take for floats. JSON rows are
# written --flat --nan null: a flat table whose missing numbers are null.

ROWS = "id,x\na,-1\nb,0\nc,2\nd,4\ne,inf\n"
FINITE = math.log(8)  # the sum of the finite values, log(2) + log(4)


@pytest.fixture
def outputs(tmp_path):
    (tmp_path / "points.csv").write_text(ROWS)
    for name in ("results.csv", "results.tsv", "results.parquet", "results.jsonl", "results.json"):
        flat = ["--flat", "--nan", "null"] if name.endswith(("json", "jsonl")) else []
        run = ["grad", "log(x)", "--points", "points.csv", "-o", name, *flat]
        done = in_process(*run, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    one = in_process("grad", "x*y + tanh(x)", "--x", "2", "--y", "3", "--format", "json")
    (tmp_path / "one.json").write_text(one.stdout)
    return tmp_path


COLUMNS = ["id", "x", "value", "d_x"]


def test_pandas_reads_every_output(outputs):
    for frame in (
        pd.read_csv(outputs / "results.csv"),
        pd.read_csv(outputs / "results.tsv", sep="\t"),
        pd.read_parquet(outputs / "results.parquet"),
    ):
        assert list(frame.columns) == COLUMNS and frame["value"].dtype == "float64"
        assert math.isnan(frame["value"][0]) and frame["value"][1] == -math.inf
        assert frame["value"][4] == math.inf and frame["d_x"][1] == math.inf
        assert frame["value"][2:4].sum() == pytest.approx(FINITE)
    for frame in (
        pd.read_json(outputs / "results.jsonl", lines=True),
        pd.read_json(outputs / "results.json"),
    ):
        assert list(frame.columns) == COLUMNS and frame["value"].dtype == "float64"
        assert frame["value"].isna().tolist() == [True, True, False, False, True]
        assert frame["value"].sum() == pytest.approx(FINITE)  # null is skipped
        assert frame["d_x"].tolist()[2:] == [0.5, 0.25, 0.0]
    one = pd.json_normalize(json.loads((outputs / "one.json").read_text()))
    assert one["gradients.x"][0] == 3.0706508248531645


def test_polars_reads_every_output(outputs):
    pl = pytest.importorskip("polars")
    for frame in (
        pl.read_csv(outputs / "results.csv"),
        pl.read_csv(outputs / "results.tsv", separator="\t"),
        pl.read_parquet(outputs / "results.parquet"),
    ):
        assert frame.columns == COLUMNS and frame["value"].dtype == pl.Float64
        assert frame["value"].is_nan().to_list() == [True, False, False, False, False]
        assert frame["value"].to_list()[1] == -math.inf and frame["value"].to_list()[4] == math.inf
    for frame in (
        pl.read_ndjson(outputs / "results.jsonl"),
        pl.read_json(outputs / "results.json"),
    ):
        assert frame.columns == COLUMNS and frame["value"].dtype == pl.Float64
        assert frame["value"].is_null().to_list() == [True, True, False, False, True]
        assert frame["value"].sum() == pytest.approx(FINITE)
    assert pl.read_json(outputs / "one.json")["value"][0] == 6.9640275800758165


def test_duckdb_reads_every_output(outputs, monkeypatch):
    duckdb = pytest.importorskip("duckdb")
    monkeypatch.chdir(outputs)
    for table in ("'results.csv'", "'results.tsv'", "'results.parquet'"):
        kinds = duckdb.sql(f"DESCRIBE SELECT value, d_x FROM {table}").fetchall()
        assert [k[1] for k in kinds] == ["DOUBLE", "DOUBLE"], table
        finite = f"SELECT sum(value) FROM {table} WHERE isfinite(value)"
        assert duckdb.sql(finite).fetchall()[0][0] == pytest.approx(FINITE)
        nan = duckdb.sql(f"SELECT isnan(value) FROM {table} ORDER BY id").fetchall()
        assert [n[0] for n in nan] == [True, False, False, False, False]
    for table in ("read_json('results.jsonl')", "read_json('results.json')"):
        kinds = duckdb.sql(f"DESCRIBE SELECT value, d_x FROM {table}").fetchall()
        assert [k[1] for k in kinds] == ["DOUBLE", "DOUBLE"], table
        total = duckdb.sql(f"SELECT sum(value), count(value) FROM {table}").fetchall()[0]
        assert total[0] == pytest.approx(FINITE) and total[1] == 2  # null is skipped
    one = duckdb.sql("SELECT value, gradients.x FROM read_json('one.json')").fetchall()[0]
    assert one == (6.9640275800758165, 3.0706508248531645)
    (outputs / "strings.jsonl").write_text('{"value": "nan"}\n{"value": 1.0}\n')
    kind = duckdb.sql("SELECT typeof(value) FROM read_json('strings.jsonl')").fetchall()[0][0]
    assert kind == "JSON"  # why --nan null: sum() takes no JSON


def test_a_json_file_holds_an_array_of_records_and_json_lines_files_a_line_each(tmp_path):
    """-o x.json writes a JSON array (what pandas' read_json reads without lines=True),
    -o x.jsonl and -o x.ndjson JSON Lines; the same objects, and --format json agrees with
    either. What -o x.json writes is read back as --points, as an array of records is."""
    (tmp_path / "points.csv").write_text("id,x\na,2\nb,-1\n")
    run = ("grad", "x*x", "--points", "points.csv")
    lines = in_process(*run, "--format", "json", cwd=tmp_path).stdout
    objects = [json.loads(line) for line in lines.splitlines()]
    assert objects[1] == {"id": "b", "value": 1.0, "inputs": {"x": -1.0}, "gradients": {"x": -2.0}}
    for name, args in [
        ("out.json", ()),
        ("both.json", ("--format", "json")),
        ("out.jsonl", ()),
        ("out.ndjson", ("--format", "json")),
    ]:
        done = in_process(*run, "-o", name, *args, cwd=tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), name
        text = (tmp_path / name).read_text()
        if name.endswith(".json"):
            assert text == "[\n" + ",\n".join(lines.splitlines()) + "\n]\n"
            assert json.loads(text) == objects
        else:
            assert text == lines
    assert pd.read_json(tmp_path / "out.json")["id"].tolist() == ["a", "b"]
    (tmp_path / "none.csv").write_text("x\n")
    empty = in_process("grad", "x", "--points", "none.csv", "--output-format", "json", cwd=tmp_path)
    assert (empty.returncode, empty.stdout) == (0, "[]\n")
    # Read back as points, its objects are rows: their keys the columns.
    back = in_process("grad", "2*value", "--points", "out.json", cwd=tmp_path)
    assert (back.returncode, back.stderr) == (
        2,
        "error: --points has a column value, which the results add: rename it\n",
    )
