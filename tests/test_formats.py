"""The formats people pipe into and out of: a JSON array of records (pandas' to_json), TSV,
`--nan null` for tools that type a column by its values, and each output as pandas, polars
and DuckDB read it (docs/points.md#reading-the-results-elsewhere)."""

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
    single = ["grad", "log(x)", "--x", "-1", "--format", "json"]
    assert json.loads(in_process(*single).stdout)["value"] == "nan"
    assert json.loads(in_process(*single, "--nan", "null").stdout)["value"] is None
    points = ["grad", "log(x)", "--points", "-", "--format", "json", "--nan", "null"]
    rows = [json.loads(r) for r in nanograd(*points, stdin="x\n-1\n0\n1\n").stdout.splitlines()]
    assert [r["value"] for r in rows] == [None, None, 0.0]
    assert [r["gradients"]["x"] for r in rows] == [-1.0, None, 1.0]
    lines = ["grad", "--each-line", "--x", "0", "--format", "json", "--nan", "null"]
    assert json.loads(in_process(*lines, stdin="1/x\n").stdout)["value"] is None
    explain = in_process("explain", "log(x)", "--x", "-1", "--format", "json", "--nan", "null")
    assert json.loads(explain.stdout)["forward"][-1]["value"] is None
    hessian = in_process("hessian", "log(x)", "--x", "-1", "--format", "json", "--nan", "null")
    assert json.loads(hessian.stdout)["value"] is None


# Reading each output elsewhere, as docs/points.md shows it.


@pytest.fixture
def outputs(tmp_path):
    (tmp_path / "points.csv").write_text("x\n-1\n2\n4\n")
    for args in (
        ["-o", "results.csv"],
        ["-o", "results.parquet"],
        ["-o", "results.jsonl", "--nan", "null"],
        ["-o", "results.json", "--nan", "null"],
    ):
        done = in_process("grad", "log(x)", "--points", "points.csv", *args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    one = in_process("grad", "x*y + tanh(x)", "--x", "2", "--y", "3", "--format", "json")
    (tmp_path / "one.json").write_text(one.stdout)
    return tmp_path


def test_pandas_reads_every_output(outputs):
    assert math.isnan(pd.read_csv(outputs / "results.csv")["value"][0])
    assert pd.read_parquet(outputs / "results.parquet")["value"].sum() == pytest.approx(math.log(8))
    rows = pd.json_normalize(pd.read_json(outputs / "results.jsonl", lines=True).to_dict("records"))
    assert list(rows.columns) == ["value", "inputs.x", "gradients.x"]
    assert rows["value"].sum() == pytest.approx(math.log(8))
    one = pd.json_normalize(json.loads((outputs / "one.json").read_text()))
    assert one["gradients.x"][0] == 3.0706508248531645
    array = pd.json_normalize(pd.read_json(outputs / "results.json").to_dict("records"))
    assert array.equals(rows)  # without lines=True: an array of the same records


def test_polars_reads_every_output(outputs):
    pl = pytest.importorskip("polars")
    csv = pl.read_csv(outputs / "results.csv", schema_overrides={"value": pl.Float64})
    assert csv["value"].is_nan().to_list() == [True, False, False]
    assert pl.read_parquet(outputs / "results.parquet")["value"].is_nan().sum() == 1
    rows = pl.read_ndjson(outputs / "results.jsonl").unnest("gradients")
    assert rows["value"].sum() == pytest.approx(math.log(8)) and rows["x"].to_list()[0] == -1.0
    assert pl.read_json(outputs / "one.json")["value"][0] == 6.9640275800758165
    assert pl.read_json(outputs / "results.json").unnest("gradients").equals(rows)


def test_duckdb_reads_every_output_and_sums_json_with_nan_null(outputs, monkeypatch):
    duckdb = pytest.importorskip("duckdb")
    monkeypatch.chdir(outputs)
    total = "SELECT sum(value) FROM {}"
    assert math.isnan(duckdb.sql(total.format("'results.csv'")).fetchall()[0][0])
    assert math.isnan(duckdb.sql(total.format("'results.parquet'")).fetchall()[0][0])
    jsonl = duckdb.sql(total.format("read_json('results.jsonl')")).fetchall()[0][0]
    assert jsonl == pytest.approx(math.log(8))  # null is skipped; "nan" would be JSON text
    array = duckdb.sql(total.format("read_json('results.json')")).fetchall()[0][0]
    assert array == jsonl
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
