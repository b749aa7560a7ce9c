"""nanograd_cli.fitting: least-squares fits with the tape's exact Jacobian, checked against the
NIST StRD certified values, against independent NumPy computations, and for honesty about
what did not work."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest

from nanograd_cli import fitting
from nanograd_cli._extras import install_command
from nanograd_cli._io import read_table
from nanograd_cli._language import parse
from nanograd_cli.errors import InputError, NanogradError, speaking
from nanograd_cli.fitting import fit
from nanograd_cli.render._text import plain_table, table_rows, to_csv, to_json

from .helpers import DATA

NIST = DATA / "nist"
PROBLEMS = {p["name"]: p for p in json.loads((NIST / "problems.json").read_text())}

# Small problems, a few from each level of difficulty, the hard starts among them: run by
# every test run. All 54 fits are the slow test below.
FAST = ["Misra1a", "DanWood", "Chwirut2", "MGH09", "BoxBOD", "Rat42", "Rat43", "Eckerle4"]


def lre(estimate: float, certified: float) -> float:
    """Significant digits that agree: -log10 of the relative error."""
    if estimate == certified:
        return 15.0
    return -math.log10(abs(estimate - certified) / abs(certified))


def nist_fit(name: str, start: str):
    problem = PROBLEMS[name]
    columns = read_table(str(NIST / problem["data"]), "csv").columns
    target = parse(problem["target"]) if "target" in problem else None
    starts = dict(zip(problem["parameters"], problem[start], strict=True))
    return problem, fit(parse(problem["model"]), columns, starts, target=target)


def check_nist(name: str, start: str) -> None:
    problem, result = nist_fit(name, start)
    assert result.converged, result.message
    assert result.n == problem["n"]
    assert result.dof == problem["n"] - len(problem["parameters"])
    for param, value, se in zip(
        problem["parameters"], problem["certified"], problem["stderr"], strict=True
    ):
        assert lre(result.parameters[param], value) >= 6, (param, result.parameters[param])
        # Lanczos1's certified RSS is 1.4e-25: the data rounded to doubles move it by 1e-3
        # (docs/fit.md), which leaves its standard errors about 3 digits, whatever the solver
        # (3.1 with one processor's linear-algebra kernels, 2.98 with another's).
        digits = 2.5 if name == "Lanczos1" else 4
        assert lre(result.stderr[param], se) >= digits, (param, result.stderr[param], se)
    if name != "Lanczos1":
        assert lre(result.rss, problem["rss"]) >= 6


@pytest.mark.slow
@pytest.mark.parametrize("start", ["start1", "start2"])
@pytest.mark.parametrize("name", FAST)
def test_nist_fast_subset(name, start):
    check_nist(name, start)


@pytest.mark.slow
def test_all_54_nist_fits_match_the_certified_values():
    failures = []
    for name in PROBLEMS:
        for start in ("start1", "start2"):
            try:
                check_nist(name, start)
            except AssertionError as error:
                failures.append(f"{name} {start}: {error}")
    assert failures == []


def test_the_nist_data_reproduce_the_certified_rss():
    """The transcription check of tests/data/nist/README.md, through nanograd: the model at
    the certified values gives the certified RSS on the rows stored."""
    from nanograd_cli._tape import batch_gradients

    for name, problem in PROBLEMS.items():
        columns = read_table(str(NIST / problem["data"]), "csv").columns
        assert len(next(iter(columns.values()))) == problem["n"]
        program = parse(problem["model"])
        point = dict(zip(problem["parameters"], problem["certified"], strict=True))
        inputs = {n: columns[n] if n in columns else point[n] for n in program.inputs}
        model, _ = batch_gradients(program, inputs)
        target = parse(problem.get("target", "y"))
        observed, _ = batch_gradients(target, {n: columns[n] for n in target.inputs})
        rss = float(np.sum((observed - model) ** 2))
        if name == "Lanczos1":  # certified 1.4e-25: below double precision, see the README
            assert rss < 1e-20
        else:
            assert lre(rss, problem["rss"]) >= 9, name


# Independent checks on problems with exact answers.


def test_standard_errors_agree_with_numpy_on_a_linear_model():
    rng = np.random.default_rng(3)
    x = np.linspace(-2, 3, 40)
    y = 1.5 - 0.7 * x + 0.25 * x**2 + rng.normal(0, 0.1, x.size)
    result = fit(parse("a + b*x + c*x**2"), {"x": x, "y": y}, {"a": 0, "b": 0, "c": 0})
    assert result.converged
    design = np.column_stack([np.ones_like(x), x, x**2])
    coefficients, *_ = np.linalg.lstsq(design, y, rcond=None)
    rss = float(np.sum((y - design @ coefficients) ** 2))
    _, s, vt = np.linalg.svd(design, full_matrices=False)
    covariance = (vt.T / s**2) @ vt * rss / (x.size - 3)
    for i, name in enumerate("abc"):
        assert result.parameters[name] == pytest.approx(coefficients[i], rel=1e-10)
        assert result.stderr[name] == pytest.approx(math.sqrt(covariance[i, i]), rel=1e-8)
        for j, other in enumerate("abc"):
            assert result.covariance[name][other] == pytest.approx(
                covariance[i, j], rel=1e-7, abs=1e-15
            )
    assert result.rss == pytest.approx(rss, rel=1e-12)
    assert result.residual_sd == pytest.approx(math.sqrt(rss / 37), rel=1e-12)
    assert np.allclose(result.fitted, design @ coefficients)
    assert np.allclose(result.residuals, y - design @ coefficients)


def decay(scale: float, sigma: bool = False):
    """a*exp(-b*x) + c fitted to rows of it times `scale`, from a start times `scale`."""
    x = np.linspace(0, 4, 21)
    y = (2.5 * np.exp(-1.3 * x) + 0.5 + 0.01 * (-1) ** np.arange(x.size)) * scale
    columns = {"x": x, "y": y, "s": (0.5 + x) * scale}
    starts = {"a": 1.0 * scale, "b": 0.1, "c": 0.0}
    return fit(parse("a*exp(-b*x) + c"), columns, starts, sigma="s" if sigma else None)


@pytest.mark.parametrize("sigma", [False, True])
@pytest.mark.parametrize("power", [-1000, -600, 600, 1000])
def test_a_fit_at_any_scale_is_the_fit_at_scale_1_scaled(power, sigma):
    # squared residuals of data at 2**-1000 underflow to 0, at 2**600 overflow: the fit is
    # the same problem, its answers scaled by the same power of two, exactly
    one, scaled = decay(1.0, sigma), decay(math.ldexp(1.0, power), sigma)
    assert (one.converged, scaled.converged) == (True, True), scaled.message
    assert scaled.parameters["b"] == pytest.approx(one.parameters["b"], rel=1e-14)
    assert scaled.stderr["b"] == pytest.approx(one.stderr["b"], rel=1e-12)
    unit = 1.0 if sigma else math.ldexp(1.0, power)  # with sigma, each residual is in sigmas
    for name in "ac":
        assert scaled.parameters[name] == pytest.approx(
            math.ldexp(one.parameters[name], power), rel=1e-14
        )
        assert scaled.stderr[name] == pytest.approx(math.ldexp(one.stderr[name], power), rel=1e-12)
    assert scaled.residual_sd == pytest.approx(one.residual_sd * unit, rel=1e-12)
    with np.errstate(over="ignore", under="ignore"):
        assert scaled.rss == pytest.approx(float(np.float64(one.rss) * unit * unit), rel=1e-12)


def test_a_fit_to_data_near_1e_300_matches_the_fit_at_scale_1():
    one, tiny = decay(1.0), decay(1e-300)
    assert tiny.converged, tiny.message
    for name, unit in (("a", 1e-300), ("b", 1.0), ("c", 1e-300)):
        assert tiny.parameters[name] == pytest.approx(one.parameters[name] * unit, rel=1e-9)
        assert tiny.stderr[name] == pytest.approx(one.stderr[name] * unit, rel=1e-7)
    assert tiny.residual_sd == pytest.approx(one.residual_sd * 1e-300, rel=1e-7)
    assert tiny.rss == 0.0  # 1e-603: below the smallest float


def test_the_jacobian_matches_finite_differences():
    x = np.linspace(0.1, 4, 30)
    columns = {"x": x, "y": np.sin(x)}
    problem = fitting._Problem(
        parse("a*exp(-b*x) + c*atan(x/d) + log(1 + b*x**2)"),
        columns,
        {"a": 1.3, "b": 0.4, "c": -0.8, "d": 2.0},
        None,
        None,
        (),
    )
    p = np.array([1.3, 0.4, -0.8, 2.0])
    problem.evaluate(p)
    exact = problem.jacobian.copy()
    for j in range(p.size):
        h = 1e-6 * max(1.0, abs(p[j]))
        up, down = p.copy(), p.copy()
        up[j] += h
        down[j] -= h
        problem.evaluate(up)
        r_up = problem.residuals.copy()
        problem.evaluate(down)
        numeric = (r_up - problem.residuals) / (2 * h)
        assert np.allclose(exact[:, j], numeric, rtol=1e-7, atol=1e-9)


def test_sigma_weights_the_residuals():
    rng = np.random.default_rng(5)
    x = np.linspace(0, 1, 25)
    sigma = 0.05 + x
    y = 2.0 + 3.0 * x + rng.normal(0, 1, x.size) * sigma
    columns = {"x": x, "y": y, "s": sigma}
    result = fit(parse("a + b*x"), columns, {"a": 0, "b": 0}, sigma="s")
    design = np.column_stack([np.ones_like(x), x]) / sigma[:, None]
    coefficients, *_ = np.linalg.lstsq(design, y / sigma, rcond=None)
    assert result.parameters["a"] == pytest.approx(coefficients[0], rel=1e-10)
    assert result.parameters["b"] == pytest.approx(coefficients[1], rel=1e-10)
    weighted = y / sigma - design @ coefficients
    assert result.rss == pytest.approx(float(weighted @ weighted), rel=1e-10)
    # The residuals per row are the plain ones, target - fitted.
    assert np.allclose(result.residuals, y - (coefficients[0] + coefficients[1] * x))


def test_a_target_expression_is_fitted():
    x = np.linspace(0, 2, 20)
    y = 3.0 * np.exp(0.5 * x)
    result = fit(parse("c + k*x"), {"x": x, "y": y}, {"c": 0, "k": 0}, target=parse("log(y)"))
    assert result.converged
    assert result.parameters["c"] == pytest.approx(math.log(3.0), rel=1e-12)
    assert result.parameters["k"] == pytest.approx(0.5, rel=1e-12)


def test_a_target_that_is_a_column_fits_as_that_column_named_y():
    """The column itself is the target, as y is by default: the same fit to the last bit,
    with a row left out by drop_nan, and the same numbers as an expression of it gives."""
    x = np.linspace(0.1, 3, 25)
    v = 2.0 * np.exp(-1.3 * x) + 0.05 * np.sin(7 * x)
    v[4] = math.nan
    model, starts = parse("a*exp(-b*x)"), {"a": 1, "b": 1}
    named = fit(model, {"x": x, "v": v}, starts, target=parse("v"), drop_nan=True)
    default = fit(model, {"x": x, "y": v}, starts, drop_nan=True)
    assert named.n == default.n == 24
    assert (named.parameters, named.stderr, named.rss) == (
        default.parameters,
        default.stderr,
        default.rss,
    )
    np.testing.assert_array_equal(named.residuals, default.residuals)  # (nan in row 5)
    doubled = fit(parse("2*a*exp(-b*x)"), {"x": x, "v": v}, starts, target=parse("v + v"),
                  drop_nan=True)  # fmt: skip
    assert doubled.parameters["a"] == pytest.approx(named.parameters["a"], rel=1e-9)
    assert doubled.parameters["b"] == pytest.approx(named.parameters["b"], rel=1e-9)


def test_fix_holds_a_parameter_at_its_start():
    x = np.linspace(0, 3, 30)
    y = 2.0 * np.exp(-1.5 * x) + 0.3
    result = fit(parse("a*exp(-b*x) + c"), {"x": x, "y": y}, {"a": 1, "b": 1, "c": 0.5}, fix=["c"])
    assert result.parameters["c"] == 0.5
    assert result.stderr["c"] == 0.0
    assert result.covariance["c"] == {"a": 0.0, "b": 0.0, "c": 0.0}
    assert result.dof == 30 - 2
    alone = fit(parse("a*exp(-b*x) + 0.5"), {"x": x, "y": y}, {"a": 1, "b": 1})
    assert result.parameters["a"] == pytest.approx(alone.parameters["a"], rel=1e-9)
    assert result.stderr["b"] == pytest.approx(alone.stderr["b"], rel=1e-7)


# Honesty about what did not work.


def test_a_parameter_the_data_cannot_determine_is_named():
    x = np.linspace(1, 5, 10)
    result = fit(parse("a*b*x"), {"x": x, "y": 2 * x}, {"a": 1, "b": 1})
    assert not result.converged
    assert result.message == (
        "the data cannot determine a and b: the Jacobian is singular there (a combination "
        "of them leaves the model unchanged)"
    )
    assert math.isnan(result.stderr["a"])


def test_a_parameter_the_model_does_not_reach_is_named():
    x = np.linspace(1, 5, 10)
    result = fit(parse("a*x + 0*c"), {"x": x, "y": 2 * x}, {"a": 1, "c": 1})
    assert not result.converged
    assert "the data cannot determine c:" in result.message


def test_the_steps_limit_is_not_convergence():
    x = np.linspace(0, 3, 30)
    y = 2.0 * np.exp(-1.5 * x) + 0.3
    result = fit(parse("a*exp(-b*x) + c"), {"x": x, "y": y}, {"a": 1, "b": 1, "c": 0}, steps=1)
    assert not result.converged
    assert result.message == "stopped after 1 evaluation (the steps limit) before converging"
    assert set(result.parameters) == {"a", "b", "c"}  # the point reached is kept
    payload = json.loads(to_json(result))
    assert payload["converged"] is False


def test_a_start_at_the_minimum_converges_by_the_gradient_test():
    x = np.linspace(0, 1, 11)
    result = fit(parse("a + b*x"), {"x": x, "y": 1 + 2 * x}, {"a": 1, "b": 2})
    assert result.converged
    assert result.parameters == {"a": 1.0, "b": 2.0}


def test_a_point_that_is_no_minimum_is_not_called_converged():
    x = np.linspace(0, 3, 30)
    y = 2.0 * np.exp(-1.5 * x) + 0.3
    problem = fitting._Problem(
        parse("a*exp(-b*x) + c"), {"x": x, "y": y}, {"a": 1, "b": 1, "c": 0}, None, None, ()
    )
    start = np.array([1.0, 1.0, 0.0])
    stage = fitting._Stage("trf", start, None, "made up")
    stage.result = type("Result", (), {"status": 2, "njev": 1, "message": ""})()
    result = fitting._summary(problem, start, [stage], 100)
    assert not result.converged
    assert result.message.startswith(
        "the solver did not move from the start where the gradient test fails, so this may "
        "not be a minimum"
    )


def test_a_model_not_finite_at_the_start_names_the_row():
    x = np.array([3.0, 2.0, 1.0, 4.0])
    with pytest.raises(InputError) as error:
        fit(parse("log(a*x - 2.5)"), {"x": x, "y": x}, {"a": 1})
    assert str(error.value) == (
        "at the start, row 2 (x = 2.0): the model is nan; start from values where it is finite"
    )


BAD = [
    (
        "a*x + b",
        {"a": 1},
        {},
        "no start for parameter b: give a start value for each input that is not a column of "
        "the data",
    ),
    (
        "a*x + b*q",
        {},
        {},
        "no start for parameters a, b, q: give a start value for each input that is not a "
        "column of the data",
    ),
    (
        "a*x + b",
        {"a": 1, "b": 0, "x": 2},
        {},
        "x is a column of the data, and a start is given for it too: a column is data, not a "
        "parameter",
    ),
    (
        "a*x + b",
        {"a": 1, "b": 0, "q": 2},
        {},
        "q is not an input of this source (its inputs: a, b); x is a column of the data",
    ),
    (
        "a*x + b",
        {"a": 1, "b": 0},
        {"target": "log(z)"},
        "target reads z, which is no column of data (its columns: x, y, w): the target is a "
        "column or an expression over the columns",
    ),
    (
        "a*x + b*x**2 + c + d + g",
        {"a": 1, "b": 0, "c": 0, "d": 0, "g": 0},
        {},
        "4 rows of data and 5 parameters to fit: a fit needs at least as many rows as free "
        "parameters",
    ),
    (
        "a*x + b",
        {"a": 1, "b": 0},
        {"sigma": "s"},
        "sigma reads s, which is no column of data (its columns: x, y, w)",
    ),
    (  # a name near a column's, or its header with units, said as what was meant
        "a*x + b",
        {"a": 1, "b": 0},
        {"sigma": "W"},
        "sigma reads W, which is no column of data (its columns: x, y, w); did you mean w?",
    ),
    (
        "a*x + b",
        {"a": 1, "b": 0},
        {"sigma": "w"},
        "sigma: row 3 of column w is 0.0; a standard deviation is a positive number",
    ),
    ("a*x + b", {"a": 1, "b": 0}, {"fix": ["q"]}, "q is not a parameter (parameters: a, b)"),
    (
        "a*x + b",
        {"a": 1, "b": 0},
        {"fix": ["a", "b"]},
        "every parameter is fixed: nothing is left to fit",
    ),
    ("x*2", {}, {}, "the model has no parameters: every input is a column of the data"),
    ("a*x + b", {"a": 1, "b": 0}, {"steps": 0}, "steps must be at least 1, not 0"),
    ("a*x + b", {"a": math.nan, "b": 0}, {}, "the start of a is nan: a start is a finite number"),
    (
        "u = a*x; v = b; u, v",
        {"a": 1, "b": 0},
        {},
        "the source lists 2 outputs (u, v), and fit takes one: end the source with one of them",
    ),
]


@pytest.mark.parametrize(("source", "starts", "options", "message"), BAD)
def test_bad_input_says_what_is_wrong(source, starts, options, message):
    x = np.array([1.0, 2, 3, 4])
    columns = {"x": x, "y": np.array([2.0, 4.1, 5.9, 8.2]), "w": np.array([1, 1, 0, 1.0])}
    if "target" in options:
        options = dict(options, target=parse(options["target"]))
    with pytest.raises(InputError) as error:
        fit(parse(source), columns, starts, **options)
    assert str(error.value) == message


def test_no_column_y_and_no_target():
    with pytest.raises(InputError) as error:
        fit(parse("a*x"), {"x": np.arange(3.0)}, {"a": 1})
    assert str(error.value) == (
        "the data has no column y, the default target (its columns: x): give target, a column "
        "or an expression over the columns"
    )


def test_columns_of_different_lengths():
    with pytest.raises(InputError) as error:
        fit(parse("a*x"), {"x": np.arange(3.0), "y": np.arange(2.0)}, {"a": 1})
    assert (
        str(error.value)
        == "the columns differ in length (x 3, y 2): give every column the same number of rows"
    )


def test_a_jacobian_too_large_for_memory_says_how_many_rows_fit(monkeypatch):
    import nanograd_cli._memory

    monkeypatch.setattr(nanograd_cli._memory, "available", lambda meminfo=None: 10_000_000)
    x = np.zeros(1_000_000)
    with pytest.raises(NanogradError) as error:
        fit(parse("a*x + b"), {"x": x, "y": x}, {"a": 1, "b": 0})
    assert str(error.value) == (
        "a fit of 1,000,000 rows and 2 parameters needs about 0.1 GB of memory for its "
        "Jacobian, and 0.0 GB is free: about 78,125 rows would fit"
    )


def test_text_in_a_column_from_python_names_its_row_as_a_file_would():
    """fit and minimize given columns from Python: a value that is no number is said with
    its row, as --data says it (minimize let NumPy's ValueError through)."""
    import nanograd_cli as ng

    columns = {"x": [1.0, 2, 3], "y": [1, "q", 3]}
    for call in (lambda: ng.fit("a*x", columns, a=1),
                 lambda: ng.minimize("(a*x - y)**2", data=columns, a=1)):  # fmt: skip
        with pytest.raises(InputError, match=r"^row 2, column y: 'q' is not a number$"):
            call()


def test_as_many_rows_as_parameters_is_said_in_a_note():
    result = fit(parse("a*x + b"), {"x": np.array([0.0, 1]), "y": np.array([1.0, 3])},
                 {"a": 1, "b": 0})  # fmt: skip
    assert result.converged and result.dof == 0 and math.isnan(result.stderr["a"])
    assert result.warnings == [fitting.NO_DOF]
    assert "dof 0" in fitting.NO_DOF


def test_derive_from_python_takes_a_mapping_of_names_to_expressions():
    import nanograd_cli as ng

    columns = {"x": [0.0, 1, 2, 3], "y": [1, 3.1, 4.9, 7]}
    by_text = ng.fit("a*x + b", columns, a=1, b=0, derive=["r = a/b", "s = a*b"])
    by_name = ng.fit("a*x + b", columns, a=1, b=0, derive={"r": "a/b", "s": "a*b"})
    assert by_name.derived == by_text.derived and list(by_name.derived) == ["r", "s"]


def test_dates_complex_numbers_and_pandas_na_in_columns_from_python():
    """NumPy took a date as its days and a complex number as its real part: each is refused
    as the DataFrame's reader refuses it; pandas' NA in an object column is a missing value."""
    import pandas as pd

    import nanograd_cli as ng

    dates = np.datetime64("2020-01-01") + np.arange(4)
    with pytest.raises(InputError, match=r"^column x holds datetime64\[D\], not numbers$"):
        ng.fit("a*x + b", {"x": dates, "y": [1.0, 2, 3, 4]}, a=1, b=0)
    with pytest.raises(InputError, match=r"^input x holds complex128, not numbers$"):
        ng.compile("x**2")(x=np.array([1 + 2j, 3]))
    gap = pd.Series([1.0, pd.NA, 3.0, 4.0, 5.0], dtype=object)
    with pytest.warns(ng.NanogradWarning, match="^1 row with a missing value"):
        kept = ng.fit("a*x + b", {"x": [0.0, 1, 2, 3, 4], "y": gap}, a=1, b=0, drop_nan=True)
    assert kept.n == 4


def test_without_scipy_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.optimize", None)
    fitting.require_solver.cache_clear()  # (SciPy found by an earlier fit of this process)
    with pytest.raises(NanogradError) as error:
        fit(parse("a*x"), {"x": np.arange(3.0), "y": np.arange(3.0)}, {"a": 1})
    assert error.value.exit_code == 1
    assert str(error.value) == (
        "fitting needs SciPy, which is not installed: install it with: "
        + install_command("fit")  # what works where these tests run: tests/test_extras.py
    )


# Reading the data, and writing the result.


def test_read_columns_reads_the_needed_columns_as_points_does(tmp_path):
    path = tmp_path / "points.csv"
    path.write_text("id,x,y\na,1,2\nb,2,4.5\n")
    assert {k: v.tolist() for k, v in read_table(str(path), "csv", ["x", "y"]).columns.items()} == {
        "x": [1.0, 2.0],
        "y": [2.0, 4.5],
    }
    with pytest.raises(InputError) as error:
        read_table(str(path), "csv")
    # The option is named as data: each door spells it.
    assert str(error.value) == "data row 1, column id: 'a' is not a number"
    with speaking("cli"):
        assert str(error.value) == "--data row 1, column id: 'a' is not a number"
    path.write_text("x,y\n1,2\n3,abc\n")
    with pytest.raises(InputError) as error:
        read_table(str(path), "csv")
    with speaking("cli"):
        assert str(error.value) == "--data row 2, column y: 'abc' is not a number"


def test_read_columns_reads_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"x": [1.0, 2.0, 3.0], "y": [2, 4, 6]}), tmp_path / "p.parquet")
    columns = read_table(str(tmp_path / "p.parquet"), "parquet").columns
    result = fit(parse("k*x"), columns, {"k": 1})
    assert result.parameters["k"] == pytest.approx(2.0, rel=1e-12)


def test_the_json_csv_and_table_writers():
    x = np.array([0.0, 1, 2, 3])
    result = fit(parse("a + b*x"), {"x": x, "y": np.array([1.0, 3.1, 4.9, 7.0])}, {"a": 0, "b": 1})
    payload = json.loads(to_json(result))
    assert list(payload) == [
        "parameters",
        "stderr",
        "covariance",
        "rss",
        "residual_sd",
        "dof",
        "n",
        "iterations",
        "converged",
        "message",
        "inputs",
        "chi2",
        "reduced_chi2",
        "r2",
        "aic",
        "bic",
        "t",
        "p",
        "correlation",
    ]
    assert payload["inputs"] == {"a": 0.0, "b": 1.0}
    assert payload["dof"] == 2 and payload["n"] == 4 and payload["converged"] is True
    assert list(payload["covariance"]["a"]) == ["a", "b"]
    lines = to_csv(result).splitlines()
    assert lines[0] == "parameter,value,stderr"
    assert lines[1] == f"a,{result.parameters['a']!r},{result.stderr['a']!r}"
    table = plain_table(table_rows(result))
    assert [row.split("  ")[0] for row in table.splitlines()] == [
        "",
        "a",
        "b",
        "rss",
        "residual sd",
        "dof",
        "rows",
        "iterations",
        "converged",
    ]
    assert "<table>" in result._repr_html_()


def test_trial_steps_that_make_a_residual_nan_are_said():
    x = np.linspace(0, 1, 20)
    columns = {"x": x, "y": np.log(1.05 - x)}
    result = fit(parse("log(b - x)"), columns, {"b": 3.0})
    assert result.converged
    assert result.parameters["b"] == pytest.approx(1.05, rel=1e-12)
    assert result.message == (
        "the gradient is zero to within the tolerance (2 trial steps made a residual or a "
        "derivative nan or inf and the solver took shorter ones)"
    )
    result = fit(parse("log(b - x)"), columns, {"b": 3.0}, steps=2)
    assert not result.converged
    assert result.message == (
        "stopped after 2 evaluations (the steps limit) before converging; 1 trial step made "
        "a residual or a derivative nan or inf"
    )


# Verdicts: a minimum is converged even where its gradient, which the rounding of the sum of
# squares leaves, is above the gradient test's tolerance; a pole inside the data is a note.

DECAY_X = [0, 0.5, 1, 1.5, 2, 2.5, 3]
DECAY_Y = [3.02, 1.83, 1.17, 0.86, 0.69, 0.6, 0.56]


def _tight_least_squares(model, jac, y, start, sigma=1.0):
    from scipy.optimize import least_squares

    def residuals(p):
        return (model(p) - y) / sigma

    return least_squares(residuals, start, jac=lambda p: jac(p) / sigma, xtol=1e-15,
                         ftol=1e-15, gtol=1e-15, method="lm").x  # fmt: skip


@pytest.mark.parametrize("sigma", [3.0, 0.1, 7.0, 1e100, 1.0])
def test_a_constant_sigma_converges_to_the_same_minimum(sigma):
    x, y = np.array(DECAY_X), np.array(DECAY_Y)
    columns = {"x": x, "y": y, "s": np.full(x.size, sigma)}
    result = fit(parse("a*exp(-b*x) + c"), columns, {"a": 1, "b": 1, "c": 0}, sigma="s")
    assert result.converged, result.message

    def model(p):
        return p[0] * np.exp(-p[1] * x) + p[2]

    def jac(p):
        e = np.exp(-p[1] * x)
        return np.c_[e, -p[0] * x * e, np.ones_like(x)]

    reference = _tight_least_squares(model, jac, y, [1.0, 1.0, 0.0], sigma)
    for name, value in zip("abc", reference, strict=True):
        assert result.parameters[name] == pytest.approx(value, rel=1e-9)


PUROMYCIN_S = [0.02, 0.02, 0.06, 0.06, 0.11, 0.11, 0.22, 0.22, 0.56, 0.56, 1.10, 1.10]
PUROMYCIN_V = [76, 47, 97, 107, 123, 139, 159, 152, 191, 201, 207, 200]


@pytest.mark.parametrize(
    ("source", "predictor", "may"),
    [
        ("a*exp(-b*x) + c", "x", False),
        ("A*exp(-(x - mu)**2/(2*s**2)) + base", "x", False),  # s's pole is not x's
        ("A*exp(-k*t)*sin(w*t + phi)", "t", False),
        ("a*x**2 + b*x", "x", False),
        ("Vmax*S/(Km + S)", "S", True),
        ("a*x**b", "x", True),
        ("a*x**-1", "x", True),
        ("u = 1/x; a*u", "x", True),
        ("tan(a*x)", "x", True),
        ("where(x > a, 1, -1)", "x", True),  # a jump is searched for as a pole is
    ],
)
def test_only_a_model_that_may_have_a_pole_in_its_predictor_is_sampled_for_one(
    source, predictor, may
):
    from nanograd_cli.fitting import _may_have_pole

    assert _may_have_pole(parse(source), predictor) is may


def test_a_pole_of_the_model_between_two_rows_at_the_point_reached_is_a_note():
    columns = {"S": np.array(PUROMYCIN_S), "v": np.array(PUROMYCIN_V, dtype=float)}
    model = parse("Vmax*S/(Km + S)")
    far = fit(model, columns, {"Vmax": 1, "Km": 1}, target=parse("v"))
    assert far.parameters["Km"] < 0  # on the far side of the pole at S = -Km = 0.49
    assert far.warnings == [
        "at the point reached, the model has a pole between S = 0.22 and S = 0.56: the fit may "
        "have stopped on the far side of it, away from the best one; try another start"
    ]
    assert json.loads(to_json(far))["warnings"] == far.warnings
    best = fit(model, columns, {"Vmax": 100, "Km": 0.5}, target=parse("v"))
    assert best.converged and best.warnings == [] and "warnings" not in json.loads(to_json(best))
    s, v = np.array(PUROMYCIN_S), np.array(PUROMYCIN_V, dtype=float)
    reference = _tight_least_squares(
        lambda p: p[0] * s / (p[1] + s),
        lambda p: np.c_[s / (p[1] + s), -p[0] * s / (p[1] + s) ** 2],
        v,
        [100.0, 0.5],
    )
    assert [best.parameters["Vmax"], best.parameters["Km"]] == pytest.approx(reference, rel=1e-9)
    assert best.rss < far.rss / 100


def test_a_derivative_not_finite_at_the_start_names_the_parameter():
    x = np.array([0.1, 0.3, 1, 3, 10, 30, 100.0])
    columns = {"x": x, "y": 0.1 + 1.9 / (1 + (x / 3.0) ** 1.2)}
    model = parse("bottom + (top - bottom)/(1 + (x/ec50)**hill)")
    with pytest.raises(InputError) as caught:
        fit(model, columns, {"bottom": 0, "top": 2, "ec50": -1, "hill": 2})
    assert str(caught.value) == (
        "at the start, row 1 (x = 0.1): the model is finite but its derivative by hill is nan; "
        "change the start of hill, or of the parameters it is combined with, to values where "
        "it is finite"
    )
    assert fit(model, columns, {"bottom": 0, "top": 2, "ec50": 1, "hill": 2}).converged


def test_a_run_of_trial_steps_that_are_all_nan_ends_the_fit_with_its_own_message(monkeypatch):
    """A peak whose centre starts far outside the data: the model and its derivatives are
    about 1e-266 there, and every trial step overflows; the fit ends after 64 of them in a
    row, not at the 10,000 evaluations of the steps limit."""
    x = np.linspace(-5, 5, 60)
    columns = {"x": x, "y": 3 * np.exp(-((x - 0.5) ** 2) / (2 * 0.8**2))}
    evaluations = []
    evaluate = fitting._Problem.evaluate
    monkeypatch.setattr(
        fitting._Problem, "evaluate", lambda self, x: evaluations.append(1) or evaluate(self, x)
    )
    result = fit(parse("A*exp(-(x - mu)**2/(2*s**2))"), columns, {"A": 1.0, "mu": 40.0, "s": 1.0})
    assert not result.converged
    assert result.message.startswith(
        "the solver failed: 64 trial steps in a row made a residual or a derivative nan or "
        "inf, however short: the solver cannot go on from there (try another start)"
    )
    assert "64 trial steps made" not in result.message  # said once
    assert result.parameters == {"A": 1.0, "mu": 40.0, "s": 1.0}  # the start: the best point
    assert len(evaluations) < 200


@pytest.mark.parametrize(
    ("source", "starts", "names"),
    [("A*exp(-(x - mu)**2)", {"A": 1.0, "mu": 1000.0}, "A, mu"), ("a**2*x", {"a": 0.0}, "a")],
)
def test_a_model_flat_at_the_start_is_bad_input(source, starts, names):
    """Every derivative 0 on every row at the start (a peak's tail underflowing to 0, a
    factor a**2 at a = 0): no direction to go, exit 2 with a hint."""
    x = np.linspace(-5, 5, 30)
    with pytest.raises(InputError) as caught:
        fit(parse(source), {"x": x, "y": np.exp(-(x**2))}, starts)
    assert str(caught.value) == (
        f"at the start, the model does not change with {names}: its derivative by each "
        "parameter is 0 on every row, so the fit has no direction to go: start elsewhere (a "
        "peak's centre inside the data, a factor other than 0)"
    )


@pytest.mark.parametrize(
    ("start", "what"), [(1.0, "the model is 2.0"), (1e-320, "the model's derivative by a is 2.0")]
)
def test_subnormal_data_from_a_start_far_from_its_scale_says_so(start, what):
    """A target of subnormal numbers and a model near 1: in units of the target's size the
    residual or its derivative overflows; the message says that, not that it is not finite."""
    x = np.arange(1.0, 6.0)
    with pytest.raises(InputError) as caught:
        fit(parse("a*x"), {"x": x, "y": x * 5e-324}, {"a": start})
    assert str(caught.value) == (
        f"at the start, row 2 (x = 2.0): {what} where the target is 1e-323, too far apart "
        "for the fit, which works in units of the target's size (1.11e-308): start nearer "
        "the data's scale"
    )


def test_a_fit_interrupted_counts_the_iterations_it_made(monkeypatch):
    """Ctrl-C in the middle of the solver's stage: the fit reached reports the Jacobians
    evaluated so far as its iterations (it said 0 after 23 evaluations)."""
    from nanograd_cli.errors import Interrupted

    x = np.array(DECAY_X)
    evaluate, calls = fitting._Problem.evaluate, []

    def interrupting(self, point):
        calls.append(1)
        if len(calls) == 12:
            raise KeyboardInterrupt
        return evaluate(self, point)

    monkeypatch.setattr(fitting._Problem, "evaluate", interrupting)
    with pytest.raises(Interrupted) as caught:
        fit(parse("a*exp(-b*x) + c"), {"x": x, "y": np.array(DECAY_Y)}, {"a": 1, "b": 1, "c": 0})
    reached = caught.value.reached
    assert reached.message == "interrupted (Ctrl-C) before converging"
    assert 1 <= reached.iterations < 12


def test_a_small_fit_reads_no_memory_files(monkeypatch):
    from nanograd_cli import _memory as memory

    read = []
    monkeypatch.setattr(memory, "available", lambda *a: read.append(a) or 10**6)
    fitting._check_memory(50, 3)  # 50 rows, 3 parameters: some kilobytes
    assert read == []
    with pytest.raises(NanogradError, match="1,000,000 rows and 3 parameters"):
        fitting._check_memory(1_000_000, 3)
    assert len(read) == 1


def test_statistics_are_those_r_reports_for_puromycin():
    """R's summary(nls(rate ~ Vm*conc/(K + conc), Puromycin, subset = state == "treated")),
    as Bates & Watts print it: Vm 212.7 (se 6.947, t 30.615, p 3.24e-11), K 0.06412 (se
    0.008281, t 7.743, p 1.57e-05), residual standard error 10.93 on 10 degrees of freedom;
    AIC and BIC from R's logLik.nls, -N/2 (log 2π + 1 - log N + log RSS), with 3 parameters
    (Vm, K and sigma)."""
    columns = {"S": np.array(PUROMYCIN_S), "v": np.array(PUROMYCIN_V, dtype=float)}
    result = fit(parse("Vm*S/(K + S)"), columns, {"Vm": 200, "K": 0.1}, target=parse("v"))
    stats = result.statistics
    assert stats["t"]["Vm"] == pytest.approx(30.615, abs=5e-4)
    assert stats["t"]["K"] == pytest.approx(7.743, abs=5e-4)
    assert stats["p"]["Vm"] == pytest.approx(3.24e-11, rel=2e-3)
    assert stats["p"]["K"] == pytest.approx(1.57e-05, rel=5e-3)
    assert result.residual_sd == pytest.approx(10.93, abs=5e-3)
    n, rss = 12, result.rss
    log_likelihood = -n / 2 * (math.log(2 * math.pi) + 1 - math.log(n) + math.log(rss))
    assert stats["aic"] == pytest.approx(-2 * log_likelihood + 6, rel=1e-12)
    assert stats["bic"] == pytest.approx(-2 * log_likelihood + 3 * math.log(n), rel=1e-12)
    v = columns["v"]
    assert stats["r2"] == pytest.approx(1 - rss / np.sum((v - v.mean()) ** 2), rel=1e-12)
    assert stats["chi2"] == rss and stats["reduced_chi2"] == pytest.approx(rss / 10, rel=1e-15)
    covariance = result.covariance
    r = covariance["Vm"]["K"] / math.sqrt(covariance["Vm"]["Vm"] * covariance["K"]["K"])
    assert stats["correlation"]["Vm"]["K"] == pytest.approx(r, rel=1e-12)
    assert stats["correlation"]["Vm"]["K"] == pytest.approx(0.765, abs=5e-4)  # R's 0.77


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_r2_aic_and_bic_of_data_at_the_ends_of_the_floats_are_those_of_the_data_at_1(scale):
    """R² does not depend on the data's scale, AIC and BIC through n·log(scale) alone (each
    log-likelihood has log RSS, or with sigma log(1/sigma²)): finite and so where the RSS
    itself is beyond a float (1e300² is inf), as the fit works in units where it is not."""
    x = np.linspace(0, 4, 30)
    y = 2.5 * np.exp(-1.3 * x) + 0.5 + 0.02 * np.cos(11 * x)
    model, n = parse("a*exp(-b*x) + c"), x.size
    at_1 = fit(model, {"x": x, "y": y}, {"a": 1, "b": 0.5, "c": 0}).statistics
    scaled = fit(model, {"x": x, "y": y * scale}, {"a": scale, "b": 0.5, "c": 0}).statistics
    assert scaled["chi2"] == (math.inf if scale > 1 else 0.0)  # (in the data's units)
    assert scaled["r2"] == pytest.approx(at_1["r2"], rel=1e-14)
    shift = 2 * n * math.log(scale)
    for name in ("aic", "bic"):
        assert scaled[name] == pytest.approx(at_1[name] + shift, rel=1e-13)
    weighted = {"x": x, "y": y * scale, "s": (0.01 + 0.01 * x) * scale}
    unit = fit(model, {**weighted, "y": y, "s": 0.01 + 0.01 * x}, {"a": 1, "b": 0.5, "c": 0},
               sigma="s").statistics  # fmt: skip
    both = fit(model, weighted, {"a": scale, "b": 0.5, "c": 0}, sigma="s").statistics
    assert both["chi2"] == pytest.approx(unit["chi2"], rel=1e-12)
    assert both["r2"] == pytest.approx(unit["r2"], rel=1e-14)
    assert both["aic"] == pytest.approx(unit["aic"] + shift, rel=1e-13)


@pytest.mark.parametrize("scale", [1e300, 1e160, 1e80, 1e-80, 1e-170, 1e-300])
def test_correlations_predictions_and_profiles_of_data_at_any_scale_are_those_at_1(scale):
    """The covariance of parameters near 1e160 is beyond a float (1e316), near 1e-170 below
    it: the correlations come from the solver's units, a prediction's standard error (and a
    derived quantity's) from the standard errors and correlations, a profile's χ² from the
    working units; each the data at 1's, scaled. (The correlations were 0 and nan at 1e80
    and 1e-80, fitted_se nan, 0 or an OverflowError, the profile intervals nan.)"""
    from nanograd_cli import _api as api

    x = np.linspace(0, 4, 30)
    y = 2.5 * np.exp(-1.3 * x) + 0.5 + 0.02 * np.cos(11 * x)
    model = parse("a*exp(-b*x) + c")

    def fitted(unit: float):
        data = {"x": x, "y": y * unit, "s": (0.01 + 0.01 * x) * unit}
        starts = {"a": 2.5 * unit, "b": 1.0, "c": 0.0}
        derive = ["s = a + c", "h = log(2)/b"]
        return api.fit(model, data, starts, ci=0.95, profile=True, derive=derive)

    one, scaled = fitted(1.0), fitted(scale)
    assert scaled.converged, scaled.message
    correlation = scaled.statistics["correlation"]
    for a, row in one.statistics["correlation"].items():
        for b, r in row.items():
            assert correlation[a][b] == pytest.approx(r, rel=1e-9, abs=1e-12)
    for name, unit in (("a", scale), ("b", 1.0), ("c", scale)):
        assert scaled.ci[name] == pytest.approx(np.multiply(one.ci[name], unit), rel=1e-7)
    for name, unit in (("s", scale), ("h", 1.0)):
        assert scaled.derived[name]["stderr"] == pytest.approx(
            one.derived[name]["stderr"] * unit, rel=1e-9
        )
    new = {"x": np.array([0.5, 2.0, 7.0])}
    at_1, at_scale = api.predict(one, new, band=0.9), api.predict(scaled, new, band=0.9)
    assert list(at_scale) == list(at_1)
    for column, values in at_1.items():
        assert at_scale[column] == pytest.approx(values * scale, rel=1e-9), column


def test_a_derived_quantity_holds_a_parameter_at_its_bound_as_predictions_do():
    """c[1] ends at its bound, where its covariances are nan: c[0] + c[1] has c[0]'s
    standard error (it was nan)."""
    from nanograd_cli import _api as api

    x = np.linspace(0, 1, 12)
    columns = {"x": x, "y": 1.0 + 0.5 * x + 0.01 * np.cos(9 * x)}
    result = api.fit(parse("c[0] + c[1]*x"), columns, {"c": np.array([0.0, 0.0])},
                     bounds={"c[1]": (-1, 0.2)}, derive=["t = c[0] + c[1]"])  # fmt: skip
    assert result.at_bound == ["c[1]"]
    assert result.derived["t"]["stderr"] == pytest.approx(result.stderr["c"][0], rel=1e-12)


def test_aic_and_bic_count_a_parameter_at_its_bound_as_dof_does():
    """R's nls (algorithm "port", bounds) counts every coefficient in logLik's df, one at its
    bound too, as in the residual degrees of freedom; t and p are left out for it."""
    columns = {"S": np.array(PUROMYCIN_S), "v": np.array(PUROMYCIN_V, dtype=float)}
    result = fit(parse("Vm*S/(K + S)"), columns, {"Vm": 200, "K": 0.1}, target=parse("v"),
                 bounds={"K": (0.08, 1)})  # fmt: skip
    assert result.at_bound == ["K"] and result.dof == 10
    n, rss = 12, result.rss
    log_likelihood = -n / 2 * (math.log(2 * math.pi) + 1 - math.log(n) + math.log(rss))
    assert result.statistics["aic"] == pytest.approx(-2 * log_likelihood + 6, rel=1e-12)
    assert result.statistics["bic"] == pytest.approx(-2 * log_likelihood + 3 * math.log(n))
    assert "K" not in result.statistics["t"]


def test_weighted_statistics_use_the_weights_as_r_does():
    x, y = np.array(DECAY_X), np.array(DECAY_Y)
    sigma = np.array([0.1, 0.2, 0.1, 0.3, 0.1, 0.2, 0.1])
    result = fit(parse("a*exp(-b*x) + c"), {"x": x, "y": y, "s": sigma}, {"a": 1, "b": 1, "c": 0},
                 sigma="s")  # fmt: skip
    w = 1 / sigma**2
    chi2 = float(np.sum(w * result.residuals**2))
    assert result.statistics["chi2"] == pytest.approx(chi2, rel=1e-12)
    n = x.size
    log_likelihood = 0.5 * (
        np.sum(np.log(w)) - n * (math.log(2 * math.pi) + 1 - math.log(n) + math.log(chi2))
    )
    assert result.statistics["aic"] == pytest.approx(-2 * log_likelihood + 8, rel=1e-12)
    mean = np.sum(w * y) / np.sum(w)
    assert result.statistics["r2"] == pytest.approx(
        1 - chi2 / np.sum(w * (y - mean) ** 2), rel=1e-12
    )


def test_asymptotic_intervals_are_value_plus_minus_t_times_stderr():
    from scipy import stats

    from nanograd_cli import _api as api

    columns = {"S": np.array(PUROMYCIN_S), "v": np.array(PUROMYCIN_V, dtype=float)}
    result = api.fit(parse("Vm*S/(K + S)"), columns, {"Vm": 200, "K": 0.1}, parse("v"), ci=0.95)
    half = stats.t.ppf(0.975, 10)
    for name in ("Vm", "K"):
        low, high = result.ci[name]
        value, se = result.parameters[name], result.stderr[name]
        assert (low, high) == pytest.approx((value - half * se, value + half * se), rel=1e-14)
    assert result.ci_level == 0.95
    assert json.loads(to_json(result))["ci_method"] == "asymptotic"
    with pytest.raises(InputError, match=r"ci=1\.5: a level between 0 and 1, such as 0\.95"):
        api.fit(parse("Vm*S/(K + S)"), columns, {"Vm": 200, "K": 0.1}, parse("v"), ci=1.5)


def test_parameters_correlated_beyond_099_are_a_note():
    T = np.linspace(300, 400, 12)
    k = 1e7 * np.exp(-50000 / (8.314 * T)) * (1 + np.random.default_rng(0).normal(0, 0.02, 12))
    result = fit(parse("A*exp(-Ea/(8.314*T))"), {"T": T, "y": k}, {"A": 1e6, "Ea": 40000})
    assert result.converged
    (note,) = result.warnings
    assert note.startswith("A and Ea are correlated (r = 0.999")


def test_a_bound_keeps_a_parameter_on_its_side_and_marks_one_that_ends_there():
    from scipy.optimize import least_squares

    from nanograd_cli import _api as api

    s, v = np.array(PUROMYCIN_S), np.array(PUROMYCIN_V, dtype=float)
    columns, model, target = {"S": s, "v": v}, parse("Vmax*S/(Km + S)"), parse("v")
    # from the start that ends beyond the pole, Km >= 0 keeps it on the side of the data
    kept = api.fit(model, columns, {"Vmax": 1, "Km": 1}, target, bounds={"Km": "0:inf"})
    assert kept.converged and kept.at_bound == [] and kept.warnings == []
    assert kept.parameters["Km"] == pytest.approx(0.06412128, rel=1e-6)
    # a bound the best fit lies outside: Km ends at it, held there without a standard error
    held = api.fit(model, columns, {"Vmax": 100, "Km": 0.5}, target, bounds={"Km": (0.1, 1)})
    assert held.converged and held.at_bound == ["Km"] and math.isnan(held.stderr["Km"])
    reference = least_squares(
        lambda p: p[0] * s / (p[1] + s) - v, [100, 0.5], bounds=([-np.inf, 0.1], [np.inf, 1]),
        xtol=1e-15, ftol=1e-15, gtol=1e-15,
    ).x  # fmt: skip
    assert held.parameters["Vmax"] == pytest.approx(reference[0], rel=1e-9)
    assert held.parameters["Km"] == 0.1  # the bound itself, not a rounding inside it
    high = api.fit(model, columns, {"Vmax": 100, "Km": 0.01}, target, bounds={"Km": (0, 0.03)})
    assert high.at_bound == ["Km"] and high.parameters["Km"] == 0.03
    # Vmax's standard error as with Km fixed at the bound, on the fit's n - 2 degrees of
    # freedom (Km was fitted, to its bound) where the fixed fit has n - 1
    fixed = fit(model, columns, {"Vmax": 100, "Km": 0.1}, target=target, fix=["Km"])
    on_10 = fixed.stderr["Vmax"] * math.sqrt(11 / 10)
    assert held.stderr["Vmax"] == pytest.approx(on_10, rel=1e-6)
    assert json.loads(to_json(held))["at_bound"] == ["Km"]


@pytest.mark.parametrize(
    ("bounds", "message"),
    [
        ({"Km": "1:2"}, "the start of Km, 0.5, is outside its bound 1:2: start inside it"),
        ({"Km": "2:1"}, "the bound of Km, 2:1, is the wrong way round: LO must be below HI (1:2)"),
        (
            {"Km": "1:1"},
            "the bound of Km, 1:1, holds one value: LO must be below HI (to hold Km at 1, fix it)",
        ),
        (
            {"Km": (math.nan, 1)},
            "the bound of Km, nan:1, has nan for a side: give a number, or -inf or inf for an "
            "open side",
        ),
        ({"K": "0:1"}, "K is not a parameter (parameters: Vmax, Km)"),
        ({"Km": "1"}, "bound='Km=1': give LO:HI, such as 0:inf or -1:1"),
    ],
)
def test_bad_bounds_are_bad_input(bounds, message):
    from nanograd_cli import _api as api
    from nanograd_cli.errors import speaking

    columns = {"S": np.array(PUROMYCIN_S), "v": np.array(PUROMYCIN_V, dtype=float)}
    with speaking("python"), pytest.raises(InputError) as caught:
        api.fit(parse("Vmax*S/(Km + S)"), columns, {"Vmax": 100, "Km": 0.5}, parse("v"),
                bounds=bounds)  # fmt: skip
    assert str(caught.value) == message


def test_absolute_sigma_takes_sigma_as_known_as_curve_fit_does():
    from scipy import stats
    from scipy.optimize import curve_fit

    from nanograd_cli import _api as api

    x, y = np.array(DECAY_X), np.array(DECAY_Y)
    sigma = np.array([0.05, 0.05, 0.04, 0.03, 0.03, 0.02, 0.02])
    columns = {"x": x, "y": y, "s": sigma}
    model, starts = parse("a*exp(-b*x) + c"), {"a": 1, "b": 1, "c": 0}
    result = api.fit(model, columns, starts, None, "s", absolute_sigma=True, ci=0.95)
    a, b = result.parameters["a"], result.parameters["b"]
    e = np.exp(-b * x)
    jac = np.c_[e, -a * x * e, np.ones_like(x)] / sigma[:, None]
    expected = np.sqrt(np.diag(np.linalg.inv(jac.T @ jac)))  # (JᵀJ)⁻¹ alone, no χ²/dof
    assert [result.stderr[n] for n in "abc"] == pytest.approx(expected, rel=1e-9)
    _, covariance = curve_fit(lambda x, a, b, c: a * np.exp(-b * x) + c, x, y, p0=[1, 1, 0],
                              sigma=sigma, absolute_sigma=True)  # fmt: skip
    assert [result.stderr[n] for n in "abc"] == pytest.approx(
        np.sqrt(np.diag(covariance)), rel=1e-4
    )
    chi2 = result.statistics["chi2"]
    assert result.statistics["chi2_p"] == pytest.approx(stats.chi2.sf(chi2, 4), rel=1e-12)
    half = stats.norm.ppf(0.975) * result.stderr["b"]
    assert result.ci["b"] == pytest.approx((b - half, b + half), rel=1e-14)
    relative = api.fit(model, columns, starts, None, "s")
    assert "chi2_p" not in relative.statistics
    ratio = relative.stderr["b"] / result.stderr["b"]
    assert ratio == pytest.approx(math.sqrt(chi2 / 4), rel=1e-9)  # scaled by χ²/dof


def test_a_derived_quantity_has_the_delta_methods_standard_error():
    from scipy import stats

    from nanograd_cli import _api as api

    columns = {"S": np.array(PUROMYCIN_S), "v": np.array(PUROMYCIN_V, dtype=float)}
    derive = ["ratio = Vm/K", "lag = log(2)*K**2 + exp(-Vm/100)"]
    result = api.fit(parse("Vm*S/(K + S)"), columns, {"Vm": 200, "K": 0.1}, parse("v"),
                     derive=derive, ci=0.9)  # fmt: skip
    vm, k, c = result.parameters["Vm"], result.parameters["K"], result.covariance
    C = np.array([[c["Vm"]["Vm"], c["Vm"]["K"]], [c["K"]["Vm"], c["K"]["K"]]])
    for name, value, g in [
        ("ratio", vm / k, np.array([1 / k, -vm / k**2])),  # by hand
        ("lag", math.log(2) * k**2 + math.exp(-vm / 100),
         np.array([-math.exp(-vm / 100) / 100, 2 * math.log(2) * k])),
    ]:  # fmt: skip
        derived = result.derived[name]
        assert derived["value"] == pytest.approx(value, rel=1e-14)
        assert derived["stderr"] == pytest.approx(math.sqrt(g @ C @ g), rel=1e-12)
        half = stats.t.ppf(0.95, 10) * derived["stderr"]
        assert derived["ci"] == pytest.approx((value - half, value + half), rel=1e-12)
    assert json.loads(to_json(result))["derived"]["ratio"]["value"] == pytest.approx(vm / k)
    with pytest.raises(InputError, match="reads Q, which is no parameter of the fit"):
        api.fit(parse("Vm*S/(K + S)"), columns, {"Vm": 200, "K": 0.1}, parse("v"),
                derive=["r = Vm/Q"])  # fmt: skip


def test_sigma_may_be_an_expression_over_the_columns():
    x, y = np.array(DECAY_X), np.array(DECAY_Y)
    model, starts = parse("a*exp(-b*x) + c"), {"a": 1, "b": 1, "c": 0}
    by_expression = fit(model, {"x": x, "y": y}, starts, sigma="0.02 + 0.01*y")
    by_column = fit(model, {"x": x, "y": y, "s": 0.02 + 0.01 * y}, starts, sigma="s")
    assert by_expression.parameters == pytest.approx(by_column.parameters, rel=1e-12)
    assert by_expression.stderr == pytest.approx(by_column.stderr, rel=1e-12)
    with pytest.raises(InputError, match=r"row 4 of sigma = y - 1 is -0\.14"):
        fit(model, {"x": x, "y": y}, starts, sigma="y - 1")
    with pytest.raises(InputError, match=r"sigma reads q, which is no column of data \(its"):
        fit(model, {"x": x, "y": y}, starts, sigma="2*q")


def test_restarts_keep_the_least_sum_of_squares_and_say_how_many_reached_it():
    from nanograd_cli import _api as api

    columns = {"S": np.array(PUROMYCIN_S), "v": np.array(PUROMYCIN_V, dtype=float)}
    model, target = parse("Vm*S/(K + S)"), parse("v")
    alone = api.fit(model, columns, {"Vm": 1, "K": 1}, target)
    assert alone.parameters["K"] < 0  # beyond the pole, from this start
    best = api.fit(model, columns, {"Vm": 1, "K": 1}, target, restarts=10, seed=1)
    assert best.parameters["K"] == pytest.approx(0.06412128, rel=1e-6)  # the best fit
    assert best.restarts["starts"] == 11 and 1 <= best.restarts["reached"] <= 10
    again = api.fit(model, columns, {"Vm": 1, "K": 1}, target, restarts=10, seed=1)
    assert again.parameters == best.parameters and again.restarts == best.restarts
    assert json.loads(to_json(best))["restarts"] == best.restarts
    assert "restarts" not in json.loads(to_json(alone))


# Exponential decay with three outliers (rows 6, 18, 31), and the truth it was drawn from.
OUTLIER_X = np.linspace(0, 4, 40)
OUTLIER_TRUTH = {"a": 2.5, "b": 1.3, "c": 0.5}
OUTLIER_Y = 2.5 * np.exp(-1.3 * OUTLIER_X) + 0.5 + np.random.default_rng(3).normal(0, 0.02, 40)
OUTLIER_Y[[5, 17, 30]] += [1.5, -1.0, 2.0]


def _decay(x, a, b, c):
    return a * np.exp(-b * x) + c


def _decay_jacobian(x, a, b, c):
    e = np.exp(-b * x)
    return np.c_[e, -a * x * e, np.ones_like(x)]


@pytest.mark.parametrize("loss", ["soft_l1", "huber", "cauchy", "arctan"])
@pytest.mark.parametrize(("f_scale", "sigma"), [(None, None), (0.05, None), (2.5, 0.02)])
def test_a_robust_loss_is_curve_fits_and_resists_outliers(loss, f_scale, sigma):
    from scipy.optimize import curve_fit

    from nanograd_cli import _api as api

    x, y = OUTLIER_X, OUTLIER_Y
    columns = {"x": x, "y": y, "s": np.full(x.size, sigma or 1.0)}
    starts = {"a": 1, "b": 1, "c": 0}
    result = api.fit(parse("a*exp(-b*x) + c"), columns, starts, None, sigma and "s",
                     loss=loss, f_scale=f_scale)  # fmt: skip
    assert result.converged and result.loss == loss
    # curve_fit applies the loss to the residuals divided by sigma, as the fit does
    values, covariance = curve_fit(
        _decay, x, y, p0=[1, 1, 0], sigma=sigma and columns["s"], jac=_decay_jacobian,
        method="trf", loss=loss, f_scale=f_scale or 1.0, ftol=1e-15, xtol=1e-15, gtol=1e-15,
    )  # fmt: skip
    assert [result.parameters[n] for n in "abc"] == pytest.approx(values, rel=1e-6)
    stderr = np.sqrt(np.diag(covariance))  # curve_fit's approximation, as the fit's
    assert [result.stderr[n] for n in "abc"] == pytest.approx(stderr, rel=1e-5)
    residuals = (y - _decay(x, *values)) / (sigma or 1.0)
    z = (residuals / (f_scale or 1.0)) ** 2
    rho = {
        "soft_l1": 2 * (np.sqrt(1 + z) - 1),
        "huber": np.where(z <= 1, z, 2 * np.sqrt(z) - 1),
        "cauchy": np.log1p(z),
        "arctan": np.arctan(z),
    }[loss]
    assert result.cost == pytest.approx(0.5 * (f_scale or 1.0) ** 2 * rho.sum(), rel=1e-9)
    assert result.rss == pytest.approx(np.sum(residuals**2), rel=1e-9)  # χ², weighted
    if f_scale is not None:  # at the scale of the noise: near the truth, where linear is not
        linear = api.fit(parse("a*exp(-b*x) + c"), columns, starts, None, sigma and "s")

        def off(fitted):  # relative distance from the truth, per parameter
            return np.array(
                [fitted.parameters[n] / truth - 1 for n, truth in OUTLIER_TRUTH.items()]
            )

        assert np.all(abs(off(result)) < 0.025)
        assert np.linalg.norm(off(result)) < np.linalg.norm(off(linear)) / 3
    shown = json.loads(to_json(result))
    assert (shown["loss"], shown["f_scale"], shown["stderr_approximate"]) == (
        loss, f_scale or 1.0, True
    )  # fmt: skip
    rows = table_rows(result)
    assert [loss, f"f_scale {f_scale or 1.0!r}; stderr approximate"] == rows[-2][1:3]


def test_the_linear_loss_is_the_least_squares_fit_with_no_loss_in_the_output():
    from nanograd_cli import _api as api

    columns = {"x": OUTLIER_X, "y": OUTLIER_Y}
    starts = {"a": 1, "b": 1, "c": 0}
    default = api.fit(parse("a*exp(-b*x) + c"), columns, starts)
    linear = api.fit(parse("a*exp(-b*x) + c"), columns, starts, loss="linear")
    assert linear.parameters == default.parameters and linear.stderr == default.stderr
    assert not {"loss", "f_scale", "cost", "stderr_approximate"} & set(json.loads(to_json(linear)))
    assert all(row[0] != "loss" for row in table_rows(linear))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"loss": "l1"}, "loss='l1' is no loss: choose one of linear, soft_l1, huber, cauchy, "
                         "arctan"),
        ({"loss": "huber", "f_scale": 0}, "f_scale=0: a positive finite number, the size of "
         "residual beyond which a row counts less than its square"),
        ({"loss": "huber", "f_scale": math.nan}, "f_scale=nan: a positive finite number"),
        ({"loss": "huber", "f_scale": math.inf}, "f_scale=inf: a positive finite number"),
        ({"loss": "huber", "f_scale": -1}, "f_scale=-1: a positive finite number"),
        ({"f_scale": 2}, "f_scale sets where a robust loss turns from squares: with the linear "
         "loss it does nothing"),
        ({"profile": True}, "profile finds the intervals of ci='LEVEL': without a level it does "
         "nothing"),
        ({"profile": True, "ci": 0.9, "loss": "cauchy"}, "profile profiles the sum of squares, "
         "which a robust loss='cauchy' does not minimize"),
    ],
)  # fmt: skip
def test_bad_loss_f_scale_and_profile_are_bad_input(options, message):
    from nanograd_cli import _api as api

    columns = {"x": np.array(DECAY_X), "y": np.array(DECAY_Y)}
    with speaking("python"), pytest.raises(InputError) as caught:
        api.fit(parse("a*exp(-b*x) + c"), columns, {"a": 1, "b": 1, "c": 0}, **options)
    assert str(caught.value).startswith(message)


def test_a_robust_fit_keeps_restarts_bounds_and_fix():
    from scipy.optimize import least_squares

    from nanograd_cli import _api as api

    x, y = OUTLIER_X, OUTLIER_Y
    model, columns = parse("a*exp(-b*x) + c"), {"x": x, "y": y}
    best = api.fit(model, columns, {"a": 1, "b": 1, "c": 0}, loss="huber", f_scale=0.05)
    scattered = api.fit(model, columns, {"a": 1, "b": 1, "c": 0}, loss="huber", f_scale=0.05,
                        restarts=5, seed=2)  # fmt: skip
    assert scattered.parameters == pytest.approx(best.parameters, rel=1e-8)
    assert scattered.restarts["starts"] == 6
    # b held at 1.2 (fix) and c kept in 0.6:1 (bound): SciPy's robust fit of the same
    held = api.fit(model, columns, {"a": 1, "b": 1.2, "c": 0.7}, fix=["b"],
                   bounds={"c": "0.6:1"}, loss="huber", f_scale=0.05)  # fmt: skip
    reference = least_squares(
        lambda p: y - _decay(x, p[0], 1.2, p[1]), [1, 0.7], bounds=([-np.inf, 0.6], [np.inf, 1]),
        loss="huber", f_scale=0.05, xtol=1e-15, ftol=1e-15, gtol=1e-15,
    ).x  # fmt: skip
    assert held.converged and held.at_bound == ["c"] and held.parameters["b"] == 1.2
    assert [held.parameters["a"], held.parameters["c"]] == pytest.approx(reference, rel=1e-7)


def _lmfit_intervals(residual, starts, level, fixed=(), prob_func=None):
    """lmfit's profile intervals (conf_interval) of its leastsq fit, by parameter, with its
    Minimizer and result."""
    import warnings

    lmfit = pytest.importorskip("lmfit")
    params = lmfit.Parameters()
    for name, value in starts.items():
        params.add(name, value, vary=name not in fixed)
    minimizer = lmfit.Minimizer(residual, params)
    fitted = minimizer.minimize(method="leastsq", xtol=1e-14, ftol=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lmfit warns of a side it finds open
        found = lmfit.conf_interval(minimizer, fitted, sigmas=[level], prob_func=prob_func)
    return {name: (ends[0][1], ends[-1][1]) for name, ends in found.items()}, minimizer, fitted


PROFILED = [
    # Michaelis-Menten on Puromycin, and a decay of five points: intervals skewed to the right
    ("Vm*S/(K + S)", {"S": PUROMYCIN_S, "y": PUROMYCIN_V}, {"Vm": 200, "K": 0.1},
     lambda p, c: p["Vm"] * c["S"] / (p["K"] + c["S"])),
    ("A*exp(-k*t)", {"t": [0.5, 1, 2, 4, 6], "y": [7.9, 6.6, 3.7, 1.6, 0.9]}, {"A": 10, "k": 0.5},
     lambda p, c: p["A"] * np.exp(-p["k"] * c["t"])),
]  # fmt: skip


@pytest.mark.parametrize("level", [0.683, 0.95, 0.99])
@pytest.mark.parametrize(("source", "data", "starts", "model"), PROFILED)
def test_profile_intervals_are_lmfits_conf_interval(source, data, starts, model, level):
    from nanograd_cli import _api as api

    columns = {name: np.array(values, dtype=float) for name, values in data.items()}
    result = api.fit(parse(source), columns, starts, ci=level, profile=True)
    expected, minimizer, fitted = _lmfit_intervals(
        lambda p: columns["y"] - model(p, columns), starts, level
    )
    from lmfit.confidence import ConfidenceInterval

    assert result.ci_method == "profile" and result.warnings == []
    for name, (low, high) in result.ci.items():
        assert (low, high) == pytest.approx(expected[name], rel=1e-6)
        # at each end, lmfit's own F-test of its refit with the parameter held is the level
        test = ConfidenceInterval(minimizer, fitted, sigmas=[level])
        test.params[name].vary = False
        for end in (low, high):
            assert test.calc_prob(test.params[name], end) == pytest.approx(level, abs=1e-9)
        test.params[name].vary = True
    assert json.loads(to_json(result))["ci_method"] == "profile"


def test_profile_intervals_of_a_decay_are_asymmetric_where_the_asymptotic_are_not():
    from nanograd_cli import _api as api

    source, data, starts, _ = PROFILED[1]
    columns = {name: np.array(values, dtype=float) for name, values in data.items()}
    profiled = api.fit(parse(source), columns, starts, ci=0.95, profile=True)
    asymptotic = api.fit(parse(source), columns, starts, ci=0.95)
    k = profiled.parameters["k"]
    low, high = profiled.ci["k"]
    assert (high - k) / (k - low) > 1.2  # skewed up, as the model flattens with k
    a_low, a_high = asymptotic.ci["k"]
    assert (a_high - k) / (k - a_low) == pytest.approx(1, rel=1e-9)


def test_profile_intervals_with_absolute_sigma_use_the_chi2_quantile():
    from scipy import stats

    from nanograd_cli import _api as api

    x, y = np.array(DECAY_X), np.array(DECAY_Y)
    sigma = np.array([0.05, 0.05, 0.04, 0.03, 0.03, 0.02, 0.02])
    columns = {"x": x, "y": y, "s": sigma}
    result = api.fit(parse("a*exp(-b*x) + c"), columns, {"a": 1, "b": 1, "c": 0}, None, "s",
                     absolute_sigma=True, ci=0.9, profile=True)  # fmt: skip

    def rises(best, new):  # Δχ² against χ² with one degree of freedom
        return stats.chi2.cdf(new.chisqr - best.chisqr, 1)

    expected, *_ = _lmfit_intervals(
        lambda p: (y - _decay(x, p["a"], p["b"], p["c"])) / sigma,
        {"a": 1, "b": 1, "c": 0},
        0.9,
        prob_func=rises,
    )
    for name in "abc":
        assert result.ci[name] == pytest.approx(expected[name], rel=1e-6)


def test_profile_intervals_with_a_fixed_parameter_and_after_restarts():
    from nanograd_cli import _api as api

    x, y = np.array(DECAY_X), np.array(DECAY_Y)
    columns, starts = {"x": x, "y": y}, {"a": 1, "b": 1, "c": 0.5}
    held = api.fit(parse("a*exp(-b*x) + c"), columns, starts, fix=["c"], ci=0.95, profile=True)
    expected, *_ = _lmfit_intervals(
        lambda p: y - _decay(x, p["a"], p["b"], p["c"]), starts, 0.95, fixed=["c"]
    )
    assert set(held.ci) == {"a", "b"}
    for name in "ab":
        assert held.ci[name] == pytest.approx(expected[name], rel=1e-6)
    puromycin = {"S": np.array(PUROMYCIN_S), "y": np.array(PUROMYCIN_V, dtype=float)}
    good = api.fit(parse("Vm*S/(K + S)"), puromycin, {"Vm": 200, "K": 0.1}, ci=0.95, profile=True)
    restarted = api.fit(parse("Vm*S/(K + S)"), puromycin, {"Vm": 1, "K": 1}, ci=0.95,
                        profile=True, restarts=10, seed=1)  # fmt: skip
    for name in ("Vm", "K"):
        assert restarted.ci[name] == pytest.approx(good.ci[name], rel=1e-7)


RISE = {"x": [0.5, 1, 2, 3, 4, 5], "y": [1.80, 1.95, 2.03, 1.92, 2.06, 1.99]}


def test_a_side_the_data_do_not_bound_is_open_or_its_bound_with_a_note():
    from nanograd_cli import _api as api

    columns = {name: np.array(values) for name, values in RISE.items()}
    model, starts = parse("a*(1 - exp(-b*x))"), {"a": 2, "b": 3}
    # at 0.99, b's sum of squares levels off below the threshold as b grows: lmfit's inf
    open_ = api.fit(model, columns, starts, ci=0.99, profile=True)
    expected, *_ = _lmfit_intervals(
        lambda p: columns["y"] - p["a"] * (1 - np.exp(-p["b"] * columns["x"])), starts, 0.99
    )
    assert open_.ci["b"][1] == math.inf and expected["b"][1] == math.inf
    assert open_.ci["b"][0] == pytest.approx(expected["b"][0], rel=1e-6)
    assert open_.ci["a"] == pytest.approx(expected["a"], rel=1e-6)
    (note,) = open_.warnings
    assert note.startswith("the profile interval of b is open above the fit (inf): the sum of "
                           "squares stays below the level's threshold as far as ")  # fmt: skip
    assert json.loads(to_json(open_))["ci"]["b"][1] == "inf"
    # a bound of b inside: that side ends at the bound
    bounded = api.fit(model, columns, starts, ci=0.99, profile=True, bounds={"b": "0:8"})
    assert bounded.ci["b"] == pytest.approx((open_.ci["b"][0], 8.0), rel=1e-6)
    assert bounded.warnings == [
        "the profile interval of b ends at its bound 8: held there, the sum of squares is still "
        "below the level's threshold"
    ]


def test_derived_quantities_keep_asymptotic_intervals_under_profile():
    from nanograd_cli import _api as api

    columns = {"S": np.array(PUROMYCIN_S), "y": np.array(PUROMYCIN_V, dtype=float)}
    starts, derive = {"Vm": 200, "K": 0.1}, ["ratio = Vm/K"]
    profiled = api.fit(parse("Vm*S/(K + S)"), columns, starts, ci=0.95, profile=True,
                       derive=derive)  # fmt: skip
    asymptotic = api.fit(parse("Vm*S/(K + S)"), columns, starts, ci=0.95, derive=derive)
    assert profiled.derived["ratio"]["ci"] == asymptotic.derived["ratio"]["ci"]
    assert json.loads(to_json(profiled))["derived"]["ratio"]["ci_method"] == "asymptotic"


def test_ctrl_c_while_profiling_gives_the_fit_with_its_asymptotic_intervals(monkeypatch):
    from nanograd_cli import _api as api
    from nanograd_cli.errors import Interrupted

    def interrupted(self, value):
        raise KeyboardInterrupt

    monkeypatch.setattr(fitting._Profiled, "__call__", interrupted)
    columns = {"S": np.array(PUROMYCIN_S), "y": np.array(PUROMYCIN_V, dtype=float)}
    with pytest.raises(Interrupted) as caught:
        api.fit(parse("Vm*S/(K + S)"), columns, {"Vm": 200, "K": 0.1}, ci=0.95, profile=True)
    reached = caught.value.reached
    assert (
        reached.converged and reached.ci_method == "asymptotic" and set(reached.ci) == {"Vm", "K"}
    )


def test_ctrl_c_while_restarting_says_which_restart_and_gives_the_best_so_far(monkeypatch):
    """Ctrl-C in the second of four restarts: the best of the three fits so far, and a
    message that says where it stopped (not the interrupted restart's evaluations, which
    are not the output's)."""
    from nanograd_cli import _api as api
    from nanograd_cli.errors import Interrupted

    _, x, y = grouped_decay(rows=20)
    program, starts = parse("a*exp(-k*x) + c"), {"a": 1, "k": 0.5, "c": 0}
    first = api.fit(program, {"x": x, "y": y}, starts)
    fits = 0
    stages = fitting._Problem._stages

    def stopped(self, *arguments):
        nonlocal fits
        fits += 1
        if fits == 3:
            raise KeyboardInterrupt
        return stages(self, *arguments)

    monkeypatch.setattr(fitting._Problem, "_stages", stopped)
    with pytest.raises(Interrupted) as caught:
        api.fit(program, {"x": x, "y": y}, starts, restarts=4, seed=1)
    assert str(caught.value) == (
        "interrupted in restart 2 of 4: the output is the best point of the 3 fits so far"
    )
    assert caught.value.reached.rss <= first.rss


def test_ctrl_c_while_profiling_or_restarting_groups_gives_every_groups_fit(monkeypatch):
    """Ctrl-C in the second group's profile (or restarts) of a fit by group: the output is
    every group's fit, labelled, the message says where it stopped (it was the one group's
    fit, as if of all the rows)."""
    from nanograd_cli import _api as api
    from nanograd_cli.errors import Interrupted
    from nanograd_cli.results import Fits

    g, x, y = grouped_decay(rows=20)
    columns = {"x": x, "y": y}
    starts = {"a": 1, "k": 0.5, "c": 0}
    profiles = 0
    original = fitting.profile_intervals

    def interrupted(*arguments, **options):
        nonlocal profiles
        profiles += 1
        if profiles == 2:  # in the second group's profile
            raise KeyboardInterrupt
        return original(*arguments, **options)

    monkeypatch.setattr(fitting, "profile_intervals", interrupted)
    with pytest.raises(Interrupted) as caught:
        api.fit(parse("a*exp(-k*x) + c"), columns, starts, by=g, ci=0.95, profile=True)
    reached = caught.value.reached
    assert isinstance(reached, Fits) and list(reached) == list(dict.fromkeys(g))
    assert str(caught.value) == (
        "interrupted while profiling group 2 of 3: the output is every group's fit, the "
        "intervals of the groups not profiled asymptotic"
    )
    assert [fit.ci_method for fit in reached.values()] == ["profile", "asymptotic", "asymptotic"]

    fits = 0
    stages = fitting._Problem._stages

    def stopped(self, *arguments):
        nonlocal fits
        fits += 1
        if fits == 3:  # (the first group's 2 restarts done)
            raise KeyboardInterrupt
        return stages(self, *arguments)

    grouped = api.fit(parse("a*exp(-k*x) + c"), columns, starts, by=g)
    monkeypatch.setattr(fitting._Problem, "_stages", stopped)
    with pytest.raises(Interrupted) as caught:
        api.fit(parse("a*exp(-k*x) + c"), columns, starts, by=g, restarts=2, seed=1)
    reached = caught.value.reached
    assert isinstance(reached, Fits) and list(reached) == list(grouped)
    assert str(caught.value) == (
        "interrupted while restarting group 2 of 3: the output is each group's best fit so "
        "far, the groups after it not restarted"
    )
    assert not list(reached.values())[-1].restarts  # not restarted: no count of starts


def test_python_fit_takes_loss_f_scale_and_profile():
    import nanograd_cli
    from nanograd_cli import _api as api

    columns = {"x": OUTLIER_X, "y": OUTLIER_Y}
    robust = nanograd_cli.fit("a*exp(-b*x) + c", columns, loss="soft_l1", f_scale=0.05,
                              a=1, b=1, c=0)  # fmt: skip
    direct = api.fit(parse("a*exp(-b*x) + c"), columns, {"a": 1, "b": 1, "c": 0},
                     loss="soft_l1", f_scale=0.05)  # fmt: skip
    assert robust.parameters == direct.parameters and robust.loss == "soft_l1"
    profiled = nanograd_cli.fit("Vm*S/(K + S)", {"S": PUROMYCIN_S, "y": PUROMYCIN_V},
                                ci=0.95, profile=True, Vm=200, K=0.1)  # fmt: skip
    assert profiled.ci_method == "profile" and profiled.ci["K"][0] < profiled.parameters["K"]


# Fits by group (--by) and global fits sharing parameters (--shared), against SciPy's
# least_squares on each group's rows and on the stacked problem built by hand.

GROUPS = {"b": (2.0, 0.3), 2: (1.5, 0.2), "a": (3.0, 0.5)}  # a, c of each group; k = 1.1


def grouped_decay(rows: int = 12):
    """Rows of a*exp(-k*x) + c and noise, the groups' rows interleaved, and each row's group."""
    rng = np.random.default_rng(3)
    g, x = [], []
    for i in range(rows):
        for label in GROUPS:
            g.append(label)
            x.append(i / 3)
    a, c = (np.array([GROUPS[label][j] for label in g]) for j in (0, 1))
    x = np.array(x)
    y = a * np.exp(-1.1 * x) + c + 0.01 * rng.standard_normal(x.size)
    return g, x, y


def _reference(residuals, start, dof_rows):
    """SciPy's fit of `residuals` to the limit, and its standard errors from its Jacobian."""
    from scipy.optimize import least_squares

    found = least_squares(residuals, start, xtol=1e-15, ftol=1e-15, gtol=1e-15, method="lm")
    rss = float(found.fun @ found.fun)
    covariance = np.linalg.inv(found.jac.T @ found.jac) * rss / (dof_rows - len(start))
    return found.x, np.sqrt(np.diag(covariance)), rss


def test_a_fit_by_group_is_each_groups_fit_alone():
    import nanograd_cli

    g, x, y = grouped_decay()
    fits = nanograd_cli.fit(
        "a*exp(-k*x) + c", data={"g": g, "x": x, "y": y}, by="g", a=1, k=0.5, c=0
    )
    assert list(fits) == ["b", 2, "a"]  # in the order they first appear
    assert fits.converged and fits.unconverged == []
    for label in GROUPS:
        rows = np.array([v == label for v in g])
        xs, ys = x[rows], y[rows]
        values, errors, rss = _reference(
            lambda p, xs=xs, ys=ys: ys - (p[0] * np.exp(-p[1] * xs) + p[2]), [1, 0.5, 0], 12
        )
        got = fits[label]
        assert got.n == 12 and got.dof == 9
        assert [got.parameters[n] for n in "akc"] == pytest.approx(values, rel=1e-9)
        assert [got.stderr[n] for n in "akc"] == pytest.approx(errors, rel=1e-6)
        assert got.rss == pytest.approx(rss, rel=1e-9)
        assert got.fitted == pytest.approx(fits.fitted[rows], rel=1e-15)
        assert fits.residuals[rows] == pytest.approx(ys - got.fitted, abs=1e-15)


def test_a_shared_parameter_is_one_fit_over_every_group():
    import nanograd_cli

    g, x, y = grouped_decay()
    labels = list(GROUPS)
    code = np.array([labels.index(v) for v in g])

    def stacked(p):  # k, then a and c of each group
        return y - (p[1:4][code] * np.exp(-p[0] * x) + p[4:7][code])

    values, errors, rss = _reference(stacked, [0.5, 1, 1, 1, 0, 0, 0], x.size)
    result = nanograd_cli.fit(
        "a*exp(-k*x) + c", data={"g": g, "x": x, "y": y}, by="g", shared="k", a=1, k=0.5, c=0
    )
    assert result.converged, result.message
    names = ["k", "a[b]", "a[2]", "a[a]", "c[b]", "c[2]", "c[a]"]
    assert sorted(result.parameters) == sorted(names)
    assert [result.parameters[n] for n in names] == pytest.approx(values, rel=1e-9)
    assert [result.stderr[n] for n in names] == pytest.approx(errors, rel=1e-6)
    assert (result.rss, result.n, result.dof) == (pytest.approx(rss, rel=1e-9), 36, 29)


def test_every_parameter_shared_is_the_fit_of_all_the_rows_and_says_so():
    g, x, y = grouped_decay()
    program, starts = parse("a*exp(-k*x) + c"), {"a": 1, "k": 0.5, "c": 0}
    joint = fit(program, {"x": x, "y": y}, starts, groups=g, shared=["a", "k", "c"])
    alone = fit(program, {"x": x, "y": y}, starts)
    assert joint.parameters == pytest.approx(alone.parameters, rel=1e-9)
    assert joint.warnings[0] == fitting.EVERY_PARAMETER_SHARED
    assert (
        fitting.EVERY_PARAMETER_SHARED
        not in fit(program, {"x": x, "y": y}, starts, groups=g, shared=["k"], fix=["c"]).warnings
    )


def test_a_group_with_too_few_rows_says_so_and_the_others_are_fitted():
    import nanograd_cli

    g, x, y = grouped_decay()
    g[-1] = "lone"  # one row: fewer than the 3 parameters
    fits = nanograd_cli.fit(
        "a*exp(-k*x) + c", data={"g": g, "x": x, "y": y}, by="g", a=1, k=0.5, c=0
    )
    lone = fits["lone"]
    assert not lone.converged and math.isnan(lone.parameters["a"]) and lone.n == 1
    assert lone.message == (
        "1 row for 3 parameters: a fit needs at least as many rows as free parameters"
    )
    assert fits.unconverged == ["lone"]
    assert all(fits[label].converged for label in GROUPS)
    assert math.isnan(fits.fitted[-1]) and not np.isnan(fits.fitted[:-1]).any()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"by": "G"},
            "by='G': the data has no column G (its columns: g, x, y); did you mean g?",
        ),
        (
            {"by": "x"},
            "by='x': the fit reads the column x; the column of the groups is not "
            "data of the model, the target or sigma",
        ),
        ({"by": "g", "shared": "q"}, "shared='q': q is not a parameter (parameters: a, k, c)"),
        (
            {"shared": "k"},
            "shared shares a parameter between the groups of by: give the column of the groups",
        ),
    ],
)
def test_bad_groups_are_bad_input(options, message):
    import nanograd_cli

    g, x, y = grouped_decay()
    with pytest.raises(InputError) as raised:
        nanograd_cli.fit(
            "a*exp(-k*x) + c", data={"g": g, "x": x, "y": y}, a=1, k=0.5, c=0, **options
        )
    assert str(raised.value) == message


# How many iterations a group fitted with the others may end apart from its single fit: the
# last steps are decided on rounding, which differs between OpenBLAS's kernels and versions.
# Measured on the two tests below under OPENBLAS_CORETYPE Prescott, Haswell, SkylakeX,
# Sandybridge, Zen and Nehalem: at most 2 with NumPy 2.4.6 and SciPy 1.17.1 (Python 3.11), at
# most 3 with NumPy 2.5.5 and SciPy 1.18.1 (Python 3.12), the parameters equal to 1e-9.
ITERATIONS_APART = 3


def test_groups_fitted_together_are_each_the_single_fit_of_their_rows():
    """The groups are fitted all at once (one pass of the tape over every row per step):
    each one's result is the single fit's of its rows, with sigma, a fixed parameter and
    rows left out, after as many iterations (to the last, which rounding decides); a group the
    batch cannot start is fitted alone, as a single fit is."""
    g, x, y = grouped_decay(rows=20)
    y = y.copy()
    y[7] = math.nan  # left out with drop_nan
    s = 0.01 + 0.02 * x
    columns = {"x": x, "y": y, "s": s}
    program = parse("a*exp(-k*x) + c + d")
    starts = {"a": 1, "k": 0.5, "c": 0, "d": 0.0}
    options = {"sigma": "s", "fix": ["d"], "drop_nan": True}
    fits = fit(program, columns, starts, groups=g, **options)
    for label in GROUPS:
        rows = np.array([v == label for v in g])
        alone = fit(program, {k: v[rows] for k, v in columns.items()}, starts, **options)
        got = fits[label]
        assert got.converged and alone.converged
        for name in "akc":
            assert got.parameters[name] == pytest.approx(alone.parameters[name], rel=1e-9)
            assert got.stderr[name] == pytest.approx(alone.stderr[name], rel=1e-9)
        assert got.rss == pytest.approx(alone.rss, rel=1e-9)
        assert (got.n, got.dof, got.parameters["d"]) == (alone.n, alone.dof, 0.0)
        assert got.warnings == alone.warnings
        # the same steps, but for the last few, which the tolerances at the limit of
        # precision (1e-15) decide on rounding: NumPy's and SciPy's linear algebra round
        # apart, by OpenBLAS's kernel (the single fit of group b takes 10 iterations, or 12
        # under OPENBLAS_CORETYPE=Sandybridge) and by version (12 with NumPy 2.5, SciPy 1.18)
        assert abs(got.iterations - alone.iterations) <= ITERATIONS_APART
    # a start where one group's model is not finite: that group's row says so, alone
    columns["x"], columns["y"] = np.where([v == 2 for v in g], -1000.0, x), grouped_decay(20)[2]
    fits = fit(program, columns, {**starts, "k": 1.0}, groups=g, fix=["d"])
    assert fits[2].converged is False and "start from values where it is finite" in fits[2].message
    assert fits["a"].converged and fits["b"].converged


def test_a_fit_that_its_first_stage_ends_never_loads_scipys_solver():
    """SciPy's least_squares, whose import costs a quarter of a second (more than the fits of
    a thousand groups), is loaded only for what nanograd's own steps do not cover: groups
    that converge together, or alone, never load it; bounds do."""
    import subprocess

    script = """if True:
        import json, sys
        import numpy as np
        from nanograd_cli._language import parse
        from nanograd_cli.fitting import fit
        x = np.tile(np.linspace(0, 4, 20), 2)
        y = np.r_[2 * np.exp(-1.5 * x[:20]), 3 * np.exp(-0.5 * x[20:])] + 0.5
        y += 0.01 * np.cos(7 * x)
        starts = {"a": 1, "b": 0.1, "c": 0}
        options = json.loads(sys.argv[1])
        fits = fit(parse("a*exp(-b*x) + c"), {"x": x, "y": y}, starts, groups=[1] * 20 + [2] * 20,
                   **options)
        print(fits.converged, "scipy.optimize" in sys.modules)
    """
    for options, loaded in (
        ({}, "False"),  # together
        ({"steps": 1000}, "False"),  # alone: a cap on the steps
        ({"bounds": {"b": [0, 10]}}, "True"),  # (a pair as a list: JSON has no tuple)
    ):
        ran = subprocess.run(
            [sys.executable, "-c", script, json.dumps(options)], capture_output=True, text=True
        )
        assert (ran.returncode, ran.stderr) == (0, "")
        assert ran.stdout.split() == ["True", loaded]


@pytest.mark.parametrize("start", [{"Vmax": 1, "Km": 1}, {"Vmax": 200, "Km": 0.1}])
def test_groups_fitted_together_reach_the_minimum_their_single_fit_reaches(start):
    """From a poor start, Michaelis-Menten has minima on either side of its pole: each group
    ends at the one its single fit ends at (here beyond the pole, with the same note)."""
    s, v = np.array(PUROMYCIN_S), np.array(PUROMYCIN_V, dtype=float)
    model, target = parse("Vmax*S/(Km + S)"), parse("v")
    alone = fit(model, {"S": s, "v": v}, start, target=target)
    fits = fit(model, {"S": np.r_[s, s], "v": np.r_[v, v]}, start, target=target,
               groups=["p"] * 12 + ["q"] * 12)  # fmt: skip
    for group in ("p", "q"):
        got = fits[group]
        assert got.parameters == pytest.approx(alone.parameters, rel=1e-9)
        assert got.warnings == alone.warnings and abs(got.iterations - alone.iterations) <= 1


@pytest.mark.parametrize("options", [{}, {"steps": 50}, {"bounds": {"k": (0, 5)}}])
def test_groups_of_very_different_sizes_or_capped_are_each_fitted_alone(options):
    """Where the groups are not fitted together (one far larger than the others, a cap on
    the steps, bounds), each is still its single fit."""
    rng = np.random.default_rng(5)
    x = np.r_[np.linspace(0, 4, 400), np.linspace(0, 4, 6), np.linspace(0, 4, 6)]
    y = 2 * np.exp(-x) + 0.3 + 0.01 * rng.standard_normal(x.size)
    g = ["big"] * 400 + ["s1"] * 6 + ["s2"] * 6
    program, starts = parse("a*exp(-k*x) + c"), {"a": 1, "k": 0.1, "c": 0}
    fits = fit(program, {"x": x, "y": y}, starts, groups=g, **options)
    for label in ("big", "s1", "s2"):
        rows = np.array([v == label for v in g])
        alone = fit(program, {"x": x[rows], "y": y[rows]}, starts, **options)
        assert fits[label].parameters == pytest.approx(alone.parameters, rel=1e-12)
        # the last steps, which tolerances at the limit of precision decide on rounding,
        # may differ (as above)
        assert abs(fits[label].iterations - alone.iterations) <= ITERATIONS_APART


def test_a_notebook_shows_the_intervals_and_the_statistics():
    import re

    from nanograd_cli import _api as api

    columns = {"x": np.array(DECAY_X), "y": np.array(DECAY_Y)}
    result = api.fit(parse("a*exp(-b*x) + c"), columns, {"a": 1, "b": 1, "c": 0}, ci=0.9)
    html = result._repr_html_()
    heads = re.findall(r"<th>([^<]*)</th>", html.split("</thead>")[0])
    assert heads == ["", "value", "stderr", "0.9 lower", "0.9 upper"]
    row = re.search(r"<tr><th>b</th>((?:<td>[^<]*</td>)+)", html).group(1)
    low, high = result.ci["b"]
    assert re.findall(r"<td>([^<]*)</td>", row)[2:] == [f"{low:.6g}", f"{high:.6g}"]
    for label, key in [("χ²/dof", "reduced_chi2"), ("R²", "r2"), ("AIC", "aic")]:
        assert f'<th>{label}</th><td colspan="4">{result.statistics[key]:.6g}</td>' in html
