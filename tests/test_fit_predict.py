"""Predictions of a fit with their standard errors and bands (`fit --predict`, `--band`,
`Fit.predict`), and a fit saved and loaded (`--save`, `--load`, `Fit.save`, `load_fit`),
against statsmodels' linear models, curve_fit's covariance with the delta method by hand,
and lmfit's `eval_uncertainty`."""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import nanograd_cli as ng
from nanograd_cli.errors import InputError

from .helpers import in_process

pytest.importorskip("scipy")
stats = pytest.importorskip("scipy.stats")

# a straight line with noise, and an exponential decay with noise
LINE_X = np.array([0.0, 1, 2, 3, 4, 5, 6, 7])
LINE_Y = np.array([1.1, 2.9, 5.2, 7.1, 8.8, 11.3, 12.9, 15.2])
LINE_SIGMA = np.array([0.1, 0.2, 0.1, 0.3, 0.2, 0.2, 0.4, 0.3])
DECAY_T = np.linspace(0, 5, 30)
DECAY_Y = 2.5 * np.exp(-1.3 * DECAY_T) + 0.5 + np.random.default_rng(1).normal(0, 0.05, 30)
AT = np.array([-1.0, 0.5, 2.5, 6.0, 9.0])


def written(tmp_path, name: str, **columns) -> str:
    """A CSV file of `columns`, every number in full."""
    path = tmp_path / name
    names = list(columns)
    rows = zip(*columns.values(), strict=True)
    path.write_text(
        ",".join(names) + "\n" + "".join(",".join(repr(float(v)) for v in r) + "\n" for r in rows)
    )
    return str(path)


def decay_reference(absolute_sigma: bool = False, sigma=None):
    """curve_fit's parameters and covariance for the decay, and the model's gradient by the
    parameters at AT, written by hand."""
    from scipy.optimize import curve_fit

    def model(t, a, b, c):
        return a * np.exp(-b * t) + c

    p, cov = curve_fit(  # to the limit of double precision, as nanograd's fit goes
        model,
        DECAY_T,
        DECAY_Y,
        p0=[1, 0.5, 0],
        sigma=sigma,
        absolute_sigma=absolute_sigma,
        ftol=1e-15,
        xtol=1e-15,
        gtol=1e-15,
    )
    a, b, _ = p
    gradient = np.column_stack([np.exp(-b * AT), -a * AT * np.exp(-b * AT), np.ones_like(AT)])
    return model(AT, *p), gradient, cov


def test_a_straight_line_predicts_as_statsmodels_ols_does():
    sm = pytest.importorskip("statsmodels.api")
    fit = ng.fit("a*x + b", {"x": LINE_X, "y": LINE_Y}, a=1, b=0)
    found = fit.predict({"x": AT}, band=0.9)
    ols = sm.OLS(LINE_Y, sm.add_constant(LINE_X)).fit()
    frame = ols.get_prediction(sm.add_constant(AT)).summary_frame(alpha=0.1)
    for ours, theirs in [
        ("fitted", "mean"),
        ("fitted_se", "mean_se"),
        ("lower", "mean_ci_lower"),
        ("upper", "mean_ci_upper"),
        ("pred_lower", "obs_ci_lower"),
        ("pred_upper", "obs_ci_upper"),
    ]:
        assert found[ours] == pytest.approx(frame[theirs].to_numpy(), rel=1e-10), ours


def test_a_weighted_line_predicts_as_statsmodels_wls_does_with_sigma_at_the_new_rows():
    sm = pytest.importorskip("statsmodels.api")
    data = {"x": LINE_X, "y": LINE_Y, "dy": LINE_SIGMA}
    fit = ng.fit("a*x + b", data, sigma="dy", a=1, b=0)
    new_sigma = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    found = fit.predict({"x": AT, "dy": new_sigma}, band=0.95)
    wls = sm.WLS(LINE_Y, sm.add_constant(LINE_X), weights=LINE_SIGMA**-2).fit()
    frame = wls.get_prediction(sm.add_constant(AT), weights=new_sigma**-2).summary_frame(0.05)
    assert found["fitted_se"] == pytest.approx(frame["mean_se"].to_numpy(), rel=1e-10)
    assert found["lower"] == pytest.approx(frame["mean_ci_lower"].to_numpy(), rel=1e-10)
    assert found["pred_upper"] == pytest.approx(frame["obs_ci_upper"].to_numpy(), rel=1e-10)
    # without sigma at the new rows there is no band for a new observation, and a note says so
    with pytest.warns(ng.NanogradWarning, match="^no prediction band: sigma reads dy, which data"):
        found = fit.predict({"x": AT}, band=0.95)
    assert set(found) == {"fitted", "fitted_se", "lower", "upper"}


def test_a_curve_predicts_by_the_delta_method_with_the_exact_gradient():
    fit = ng.fit("a*exp(-b*t) + c", {"t": DECAY_T, "y": DECAY_Y}, a=1, b=0.5, c=0)
    found = fit.predict({"t": AT}, band=0.95)
    value, gradient, cov = decay_reference()
    se = np.sqrt(np.einsum("ij,jk,ik->i", gradient, cov, gradient))
    half = stats.t.ppf(0.975, 27)
    assert found["fitted"] == pytest.approx(value, rel=1e-8)
    assert found["fitted_se"] == pytest.approx(se, rel=1e-6)
    assert found["upper"] - found["fitted"] == pytest.approx(half * se, rel=1e-6)
    observation = fit.rss / fit.dof
    spread = half * np.sqrt(se**2 + observation)
    assert found["pred_upper"] - found["fitted"] == pytest.approx(spread, rel=1e-6)


def test_the_bands_agree_with_lmfits_eval_uncertainty():
    lmfit = pytest.importorskip("lmfit")
    model = lmfit.Model(lambda t, a, b, c: a * np.exp(-b * t) + c)
    theirs = model.fit(DECAY_Y, t=DECAY_T, a=1, b=0.5, c=0)
    half = theirs.eval_uncertainty(t=AT, sigma=0.95)  # (sigma < 1 is a level)
    fit = ng.fit("a*exp(-b*t) + c", {"t": DECAY_T, "y": DECAY_Y}, a=1, b=0.5, c=0)
    found = fit.predict({"t": AT}, band=0.95)
    # lmfit differentiates by finite differences: agreement to its accuracy
    assert found["upper"] - found["fitted"] == pytest.approx(half, rel=1e-4)
    assert found["pred_upper"] - found["fitted"] == pytest.approx(theirs.dely_predicted, rel=1e-4)


def test_with_absolute_sigma_the_band_uses_the_normal_quantile_and_sigma_alone():
    sigma = np.full(DECAY_T.size, 0.05)
    data = {"t": DECAY_T, "y": DECAY_Y, "s": sigma}
    fit = ng.fit("a*exp(-b*t) + c", data, sigma="s", absolute_sigma=True, a=1, b=0.5, c=0)
    found = fit.predict({"t": AT, "s": np.full(AT.size, 0.05)}, band=0.9)
    _, gradient, cov = decay_reference(absolute_sigma=True, sigma=sigma)
    se = np.sqrt(np.einsum("ij,jk,ik->i", gradient, cov, gradient))
    z = stats.norm.ppf(0.95)
    assert found["fitted_se"] == pytest.approx(se, rel=1e-6)
    assert found["upper"] - found["fitted"] == pytest.approx(z * se, rel=1e-6)
    assert found["pred_upper"] - found["fitted"] == pytest.approx(
        z * np.sqrt(se**2 + 0.05**2), rel=1e-6
    )


def test_an_array_parameter_predicts_a_polynomial():
    sm = pytest.importorskip("statsmodels.api")
    fit = ng.fit("c[0] + c[1]*x + c[2]*x**2", {"x": LINE_X, "y": LINE_Y}, c=np.zeros(3))
    found = fit.predict({"x": AT}, band=0.95)
    design = np.column_stack([np.ones_like(LINE_X), LINE_X, LINE_X**2])
    frame = (
        sm.OLS(LINE_Y, design)
        .fit()
        .get_prediction(np.column_stack([np.ones_like(AT), AT, AT**2]))
        .summary_frame(alpha=0.05)
    )
    assert found["fitted"] == pytest.approx(frame["mean"].to_numpy(), rel=1e-9)
    assert found["pred_lower"] == pytest.approx(frame["obs_ci_lower"].to_numpy(), rel=1e-9)


def test_a_saved_fit_loads_back_and_predicts_the_same_bit_for_bit(tmp_path):
    fit = ng.fit("a*exp(-b*t) + c", {"t": DECAY_T, "y": DECAY_Y}, a=1, b=0.5, c=0, ci=0.95)
    fit.save(tmp_path / "decay.json")
    back = ng.load_fit(tmp_path / "decay.json")
    assert back == fit  # the parameters, errors, covariance, statistics of the fit
    assert (back.source, back.ci, back.ci_level) == ("a*exp(-b*t) + c", fit.ci, 0.95)
    assert back.cost == fit.cost == fit.rss / 2  # (not saved: a least-squares fit's)
    for name, values in fit.predict({"t": AT}, band=0.95).items():
        assert back.predict({"t": AT}, band=0.95)[name].tolist() == values.tolist()


# The command line: what is written where.


@pytest.fixture
def line(tmp_path):
    return written(tmp_path, "line.csv", x=LINE_X, y=LINE_Y)


@pytest.fixture
def new_rows(tmp_path):
    return written(tmp_path, "new.csv", x=AT)


def test_predict_writes_the_rows_with_fitted_and_the_bands_as_csv(line, new_rows):
    done = in_process(
        "fit", "a*x + b", "--data", line, "--a", "1", "--b", "0", "--predict", new_rows,
        "--band", "0.9",
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert lines[0] == "x,fitted,fitted_se,lower,upper,pred_lower,pred_upper"
    table = np.loadtxt(io.StringIO(done.stdout), delimiter=",", skiprows=1)
    expected = ng.fit("a*x + b", {"x": LINE_X, "y": LINE_Y}, a=1, b=0).predict({"x": AT}, 0.9)
    assert table[:, 0].tolist() == AT.tolist()
    assert table[:, 1:].T.tolist() == [values.tolist() for values in expected.values()]
    as_json = in_process(
        "fit", "a*x + b", "--data", line, "--a", "1", "--b", "0", "--predict", new_rows,
        "--format", "json",
    )  # fmt: skip
    first = json.loads(as_json.stdout.splitlines()[0])
    assert first == {"x": -1.0, "fitted": expected["fitted"][0], "fitted_se": pytest.approx(
        expected["fitted_se"][0], rel=1e-15)}  # fmt: skip


def test_predict_as_a_table_shows_the_columns_read_and_predicted(line, new_rows):
    done = in_process(
        "fit", "a*x + b", "--data", line, "--a", "1", "--b", "0", "--predict", new_rows,
        "--format", "table", "--digits", "3",
    )  # fmt: skip
    fit = ng.fit("a*x + b", {"x": LINE_X, "y": LINE_Y}, a=1, b=0).predict({"x": AT})
    rows = [line.split() for line in done.stdout.splitlines()]
    assert rows[0] == ["x", "fitted", "fitted_se"] and len(rows) == 1 + AT.size
    for row, x, fitted, se in zip(rows[1:], AT, fit["fitted"], fit["fitted_se"], strict=True):
        assert [float(cell) for cell in row] == pytest.approx([x, fitted, se], rel=5e-3)


def test_predict_with_o_writes_the_file_and_shows_the_fit(line, new_rows, tmp_path):
    out = tmp_path / "predicted.jsonl"
    done = in_process(
        "fit", "a*x + b", "--data", line, "--a", "1", "--b", "0", "--predict", new_rows,
        "-o", str(out),
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.splitlines()[1].split()[0] == "a"
    rows = [json.loads(text) for text in out.read_text().splitlines()]
    assert [r["x"] for r in rows] == AT.tolist() and set(rows[0]) == {"x", "fitted", "fitted_se"}


def test_o_of_the_data_has_fitted_se_and_the_bands(line, tmp_path):
    out = tmp_path / "fitted.csv"
    done = in_process(
        "fit", "a*x + b", "--data", line, "--a", "1", "--b", "0", "-o", str(out), "--band",
        "0.95",
    )  # fmt: skip
    assert done.returncode == 0
    header = out.read_text().splitlines()[0]
    assert header == "x,y,fitted,fitted_se,lower,upper,pred_lower,pred_upper,residual"
    fit = ng.fit("a*x + b", {"x": LINE_X, "y": LINE_Y}, a=1, b=0)
    expected = fit.predict({"x": LINE_X}, band=0.95)
    table = np.loadtxt(out, delimiter=",", skiprows=1)
    assert table[:, 3] == pytest.approx(expected["fitted_se"], rel=1e-12)
    assert table[:, 6] == pytest.approx(expected["pred_lower"], rel=1e-12)
    assert table[:, 8] == pytest.approx(fit.residuals, abs=1e-12)


def test_load_predicts_without_the_data(line, new_rows, tmp_path):
    saved = tmp_path / "line.json"
    fitted = in_process(
        "fit", "a*x + b", "--data", line, "--a", "1", "--b", "0", "--predict", new_rows,
        "--save", str(saved),
    )  # fmt: skip
    document = json.loads(saved.read_text())
    assert (document["format"], document["version"], document["source"]) == (
        "nanograd fit",
        1,
        "a*x + b",
    )
    assert set(document) >= {"parameters", "covariance", "dof", "r2", "aic", "stderr"}
    loaded = in_process("fit", "--load", str(saved), "--predict", new_rows)
    assert (loaded.returncode, loaded.stdout) == (0, fitted.stdout)
    shown = in_process("fit", "--load", str(saved), "--format", "json")
    assert json.loads(shown.stdout)["parameters"] == document["parameters"]


def test_the_plot_shades_the_band(line, tmp_path):
    picture = tmp_path / "line.svg"
    done = in_process(
        "fit", "a*x + b", "--data", line, "--a", "1", "--b", "0", "--band", "0.95", "--plot",
        str(picture),
    )  # fmt: skip
    assert done.returncode == 0
    svg = picture.read_text()
    assert 'id="band' in svg and 'id="pred_lower' in svg and "0.95 confidence band" in svg


def test_a_fit_that_fails_saves_nothing(line, tmp_path):
    saved = tmp_path / "line.json"
    done = in_process(
        "fit", "a*exp(b*x)", "--data", line, "--a", "1", "--b", "0", "--steps", "1", "--save",
        str(saved),
    )  # fmt: skip
    assert done.returncode == 1 and not saved.exists()
    assert f"{saved} not written: the fit did not converge" in done.stderr


@pytest.mark.parametrize("level", [True, 95, "x"])
def test_a_band_from_python_is_a_level(level):
    """Python's band= takes a level as --band does: not True (which level?), nor a percentage."""
    fitted = ng.fit("a*x + b", {"x": [0.0, 1, 2, 3], "y": [1, 3.1, 4.9, 7]}, a=1, b=0)
    with pytest.raises(InputError) as error:
        fitted.predict({"x": [5.0]}, band=level)
    assert (
        str(error.value)
        == {
            True: "band=True: a level between 0 and 1, such as 0.95",
            95: "band=95: a level between 0 and 1, such as 0.95 (95 is a percentage: 0.95)",
            "x": "invalid value for band: 'x' is not a valid float",
        }[level]
    )
    with pytest.raises(InputError, match=r"^ci=True: a level"):
        ng.fit("a*x + b", {"x": [0.0, 1, 2, 3], "y": [1, 3.1, 4.9, 7]}, a=1, b=0, ci=True)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--band", "0.9"], "--band LEVEL is drawn on --plot and written with --predict or -o"),
        (
            ["--predict", "NEW", "--band", "95"],
            "--band 95: a level between 0 and 1, such as 0.95 (95 is a percentage: 0.95)",
        ),
        (["--predict", "NEW", "--band", "1"], "--band 1: a level between 0 and 1, such as 0.95"),
        (["--predict", "DATA"], "missing value for input x: give --predict a column x"),
        (["-o", "DATA"], "DATA is the --data file, which is read: write to another file"),
    ],
)  # fmt: skip
def test_bad_prediction_options_are_exit_2(line, tmp_path, options, message):
    (tmp_path / "new.csv").write_text("t\n1\n")
    given = [{"NEW": str(tmp_path / "new.csv"), "DATA": line}.get(o, o) for o in options]
    if "DATA" in options and "--predict" in options:
        given[given.index(line)] = str(tmp_path / "new.csv")
    done = in_process("fit", "a*x + b", "--data", line, "--a", "1", "--b", "0", *given)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.replace(line, "DATA") == f"error: {message}\n"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "not JSON: Expecting value: line 1 column 1 (char 0)"),
        ("[1, 2]", 'no "format": "nanograd fit"'),
        ('{"format": "nanograd fit", "version": 2}', "version 2, where this nanograd reads 1"),
        ('{"format": "nanograd fit", "version": 1}', 'no "parameters"'),
    ],
)
def test_a_damaged_fit_file_is_exit_2(tmp_path, text, why):
    path = tmp_path / "fit.json"
    path.write_text(text)
    done = in_process("fit", "--load", str(path))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: {path}: not a fit saved by nanograd fit --save ({why})\n"


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"parameters": None}, '"parameters" is not an object of names'),
        ({"covariance": {"a": {"a": -1.0, "b": 0.0}, "b": {"a": 0.0, "b": 1.0}}},
         "a variance, on its covariance's diagonal, that is negative"),
        ({"converged": False}, '"converged": false, where --save writes a fit that converged'),
        ({"r2": "hi"}, "a statistic that is not a number"),
        ({"t": {"a": "x", "b": 1.0}}, "a statistic that is not a number"),
        ({"dof": "x"}, '"dof" is "x", not a whole number from 0'),
        ({"dof": -3}, '"dof" is -3, not a whole number from 0'),
        ({"dof": 2.5}, '"dof" is 2.5, not a whole number from 0'),
        ({"dof": 8}, '"dof" 8 of "n" 8 rows: no parameter was fitted'),
        ({"n": True}, '"n" is true, not a whole number from 1'),
        ({"parameters": {"a": "x", "b": 1.0}}, '"parameters" of a is "x", not a number'),
        ({"residual_sd": None}, '"residual_sd" is null, not a number'),
        ({"rss": [1.0]}, '"rss" is a list, not a number'),
        ({"covariance": {"a": {"a": 1.0, "b": {}}, "b": {"a": 0.0, "b": 1.0}}},
         '"covariance" of a and b is {}, not a number'),
        ({"covariance": {"a": {"a": 1.0, "b": "nan"}, "b": {"a": 0.0, "b": 1.0}}},
         "its covariance is not symmetric"),
    ],
)  # fmt: skip
def test_a_saved_fit_changed_by_hand_is_exit_2(line, tmp_path, change, why):
    """Damage that reads as a fit: a negative variance gave fitted_se 0, an unconverged fit
    printed its table where --predict was asked (exit 1), a null gave Python's words."""
    saved = tmp_path / "line.json"
    in_process("fit", "a*x + b", "--data", line, "--a", "1", "--b", "0", "--save", str(saved))
    saved.write_text(json.dumps({**json.loads(saved.read_text()), **change}))
    (tmp_path / "new.csv").write_text("x\n1\n")
    done = in_process("fit", "--load", str(saved), "--predict", str(tmp_path / "new.csv"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: {saved}: not a fit saved by nanograd fit --save ({why})\n"


def test_a_saved_model_that_does_not_parse_is_exit_2(line, tmp_path):
    saved = tmp_path / "line.json"
    in_process("fit", "a*x + b", "--data", line, "--a", "1", "--b", "0", "--save", str(saved))
    document = json.loads(saved.read_text())
    saved.write_text(json.dumps({**document, "source": "a*x +"}))
    done = in_process("fit", "--load", str(saved))
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {saved}: the saved model does not parse: ")


def test_a_saved_model_without_a_saved_parameter_is_exit_2(line, tmp_path):
    """A source edited by hand to name another parameter: it was blamed on --predict's rows,
    as a fit of groups sharing parameters."""
    saved = tmp_path / "line.json"
    in_process("fit", "a*x + b", "--data", line, "--a", "1", "--b", "0", "--save", str(saved))
    document = json.loads(saved.read_text())
    saved.write_text(json.dumps({**document, "source": "a*x + q"}))
    (tmp_path / "new.csv").write_text("x\n1\n")
    done = in_process("fit", "--load", str(saved), "--predict", str(tmp_path / "new.csv"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"error: {saved}: the saved model a*x + q has no input b, a parameter of the saved fit: "
        "the file's source and parameters disagree\n"
    )


@pytest.mark.parametrize("grouping", [["--by", "g"], ["--shared", "a"]])
def test_load_alone_refuses_by_and_shared_before_it_checks_them(line, tmp_path, grouping):
    """--by was taken for a column --predict lacks, --shared for one without --by: the
    refusal that says what is wrong comes first."""
    saved = tmp_path / "line.json"
    in_process("fit", "a*x + b", "--data", line, "--a", "1", "--b", "0", "--save", str(saved))
    (tmp_path / "new.csv").write_text("x\n1\n")
    done = in_process("fit", "--load", str(saved), "--predict", str(tmp_path / "new.csv"),
                      *grouping)  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"error: --load alone takes a saved fit, not another one: leave out {grouping[0]} (or "
        "give SOURCE and --data for a new fit from its values)\n"
    )


def test_load_alone_refuses_what_would_make_another_fit(line, tmp_path):
    saved = tmp_path / "line.json"
    in_process("fit", "a*x + b", "--data", line, "--a", "1", "--b", "0", "--save", str(saved))
    done = in_process("fit", "--load", str(saved), "--a", "2", "--fix", "b")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: --load alone takes a saved fit, not another one: leave out --a, --fix (or give "
        "SOURCE and --data for a new fit from its values)\n"
    )
    model = in_process("fit", "--load", str(saved), "--data", line)
    assert (model.returncode, model.stderr) == (
        2,
        "error: --load FIT.json with --data starts a new fit from the saved values: give the "
        "model, SOURCE, too\n",
    )
    data = in_process("fit", "a*x + b", "--load", str(saved))
    assert (data.returncode, data.stderr) == (
        2,
        "error: fit needs the data: --data FILE (- for standard input)\n",
    )
    missing = in_process("fit", "--load", str(tmp_path / "none.json"))
    assert (missing.returncode, missing.stderr) == (
        1,
        f"error: cannot read {tmp_path / 'none.json'}: No such file or directory\n",
    )


def test_python_errors_name_the_keyword():
    fit = ng.fit("a*x + b", {"x": LINE_X, "y": LINE_Y}, a=1, b=0)
    with pytest.raises(ng.errors.InputError, match=r"^band=1.5: a level between 0 and 1"):
        fit.predict({"x": AT}, band=1.5)
    with pytest.raises(
        ng.errors.InputError, match=r"^missing value for input x: give data a column x$"
    ):
        fit.predict({"t": AT})


def test_log_axes_draw_the_rows_they_can_show_and_say_how_many_they_cannot(tmp_path):
    from nanograd_cli import _api as api
    from nanograd_cli._language import parse
    from nanograd_cli.render.figures import fit_figure

    x = np.geomspace(0.01, 100, 20)
    data = {"x": np.append(x, 0.0), "y": np.append(3 * np.sqrt(x), 0.5)}
    fit = ng.fit("a*x**k", data, a=1, k=1)
    drawn = api.fit_curve(parse("a*x**k"), data, fit, None, logx=True, logy=True)
    assert drawn.hidden == 1 and drawn.x.tolist() == x.tolist()
    steps = np.diff(np.log(drawn.curve_x))  # sampled evenly along the log axis
    assert steps == pytest.approx(np.full(steps.size, steps[0]), rel=1e-9)
    assert drawn.curve_x[0] == pytest.approx(0.01) and drawn.curve_x[-1] == pytest.approx(100)
    assert fit_figure(drawn, "svg").startswith(b"<?xml")
    path = written(tmp_path, "p.csv", **data)
    done = in_process(
        "fit", "a*x**k", "--data", path, "--a", "1", "--k", "1", "--plot",
        str(tmp_path / "p.svg"), "--logx", "--logy",
    )  # fmt: skip
    assert done.returncode == 0 and (tmp_path / "p.svg").exists()
    assert done.stderr == "note: 1 row is not drawn: a log axis cannot show 0 or below\n"
    alone = in_process("fit", "a*x**k", "--data", path, "--a", "1", "--k", "1", "--logx")
    assert (alone.returncode, alone.stderr) == (
        2,
        "error: --logx is an axis of --plot FILE: give one\n",
    )


def test_a_saved_robust_fit_keeps_its_loss_and_a_bound_parameter_is_held(tmp_path):
    data = {"x": LINE_X, "y": np.where(LINE_X == 4, 30.0, LINE_Y)}
    robust = ng.fit("a*x + b", data, a=1, b=0, loss="huber", f_scale=0.2)
    robust.save(tmp_path / "robust.json")
    back = ng.load_fit(tmp_path / "robust.json")
    assert (back.loss, back.f_scale, back.cost) == ("huber", 0.2, robust.cost)
    # a parameter that ends at its bound is held there: the others' errors are those with it
    # fixed at that value (on n - k degrees of freedom, not n - k + 1), and so the predictions'
    bounded = ng.fit("a*x + b", {"x": LINE_X, "y": LINE_Y}, a=1, b=1.5, bounds={"b": "1.5:2"})
    assert bounded.at_bound == ["b"]
    held = ng.fit("a*x + b", {"x": LINE_X, "y": LINE_Y}, a=1, b=1.5, fix="b")
    ours, theirs = bounded.predict({"x": AT}), held.predict({"x": AT})
    assert ours["fitted"] == pytest.approx(theirs["fitted"], rel=1e-9)
    ratio = math.sqrt(held.dof / bounded.dof)
    assert ours["fitted_se"] == pytest.approx(theirs["fitted_se"] * ratio, rel=1e-9)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda d: d.update(covariance={"a": {"a": 1.0}}), "its covariance is not of every "
         "parameter by every parameter"),
        (lambda d: d["parameters"].pop("b"), "its parameters, standard errors and starts name "
         "different parameters"),
        (lambda d: d.update(covariance="x"), "its covariance is not of every parameter by "
         "every parameter"),
    ],
)  # fmt: skip
def test_a_hand_edited_fit_that_does_not_hold_together_is_exit_2(line, tmp_path, change, why):
    saved = tmp_path / "line.json"
    in_process("fit", "a*x + b", "--data", line, "--a", "1", "--b", "0", "--save", str(saved))
    document = json.loads(saved.read_text())
    change(document)
    saved.write_text(json.dumps(document))
    done = in_process("fit", "--load", str(saved))
    assert (done.returncode, done.stderr) == (
        2,
        f"error: {saved}: not a fit saved by nanograd fit --save ({why})\n",
    )


def test_each_groups_fit_predicts_and_a_shared_fit_says_it_does_not():
    data = {"run": ["A", "B"] * 5, "t": np.repeat(np.arange(5.0), 2)}
    data["y"] = np.where(np.array(data["run"]) == "A", 5.0, 3.0) * np.exp(-0.4 * data["t"])
    data["y"] = data["y"] * (1 + 0.01 * np.tile([1.0, -1.0, -1.0, 1.0], 3)[:10])
    fits = ng.fit("a*exp(-k*t)", data, by="run", a=1, k=0.1)
    alone = ng.fit("a*exp(-k*t)", {"t": data["t"][::2], "y": data["y"][::2]}, a=1, k=0.1)
    assert fits["A"].predict({"t": [6.0]})["fitted"] == pytest.approx(
        alone.predict({"t": [6.0]})["fitted"], rel=1e-9
    )
    shared = ng.fit("a*exp(-k*t)", data, by="run", shared="k", a=1, k=0.1)
    with pytest.raises(ng.errors.InputError, match=r"^this fit's parameter a\[A\] is none"):
        shared.predict({"t": [1.0]})


# --by with --predict and -o: each row with its group's fit, against each group's rows fitted
# alone and statsmodels' OLS (a line per group; with a shared slope, group dummies)
GROUPED = {
    "g": ["A", "B", "C"] * 6,
    "x": np.repeat(np.arange(6.0), 3),
}
GROUPED["y"] = (
    np.tile([1.0, -2.0, 0.5], 6)
    + np.tile([2.0, 1.5, 2.2], 6) * GROUPED["x"]
    + np.random.default_rng(4).normal(0, 0.1, 18)
)
NEW = {"g": ["C", "A", "B", "A"], "x": [-1.0, 2.5, 7.0, 10.0]}


def grouped_csv(tmp_path, name: str, columns: dict) -> str:
    path = tmp_path / name
    rows = zip(*columns.values(), strict=True)
    cells = (",".join(v if isinstance(v, str) else repr(float(v)) for v in r) for r in rows)
    path.write_text(",".join(columns) + "\n" + "".join(line + "\n" for line in cells))
    return str(path)


def lines_of(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


BANDS = [("fitted", "mean"), ("fitted_se", "mean_se"), ("lower", "mean_ci_lower"),
         ("upper", "mean_ci_upper"), ("pred_lower", "obs_ci_lower"),
         ("pred_upper", "obs_ci_upper")]  # fmt: skip


def test_by_predicts_each_row_with_its_groups_fit(tmp_path):
    sm = pytest.importorskip("statsmodels.api")
    data = grouped_csv(tmp_path, "data.csv", GROUPED)
    new = grouped_csv(tmp_path, "new.csv", NEW)
    done = in_process("fit", "a*x + b", "--data", data, "--by", "g", "--a", "1", "--b", "0",
                      "--predict", new, "--band", "0.9", "--format", "json")  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    found = lines_of(done.stdout)
    assert [(row["g"], row["x"]) for row in found] == list(zip(NEW["g"], NEW["x"], strict=True))
    groups = np.array(GROUPED["g"])
    for row in found:
        mine = groups == row["g"]
        x, y = GROUPED["x"][mine], GROUPED["y"][mine]
        alone = ng.fit("a*x + b", {"x": x, "y": y}, a=1, b=0).predict({"x": [row["x"]]}, 0.9)
        ols = sm.OLS(y, sm.add_constant(x)).fit()
        frame = ols.get_prediction(np.array([[1.0, row["x"]]])).summary_frame(alpha=0.1)
        for ours, theirs in BANDS:
            assert row[ours] == pytest.approx(alone[ours][0], rel=1e-12, abs=1e-14), ours
            assert row[ours] == pytest.approx(frame[theirs].iloc[0], rel=1e-9), ours


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--shared", "a", "--fix", "b[A]"],
         "--fix b[A]: --fix holds a parameter of the model in every group (--fix b), not one "
         "group's alone"),
        (["--bound", "b[B]=0:1"],
         "--bound b[B]: --bound bounds a parameter of the model in every group (--bound "
         "b=LO:HI), not one group's alone"),
        (["--shared", "a", "--derive", "r = b[A]/b[B]"],
         "--derive r reads b, which is fitted per group (b[A], b[B], b[C]): a derived quantity "
         "of a fit with --shared reads its shared parameters (a)"),
    ],
)  # fmt: skip
def test_one_groups_own_parameter_is_refused_where_a_models_is_meant(tmp_path, options, message):
    """b[A], as a fit with --shared names group A's b: it was read as an element of an array
    (`--wrt b[A]: b is a number`)."""
    data = grouped_csv(tmp_path, "data.csv", GROUPED)
    done = in_process("fit", "a*x + b", "--data", data, "--by", "g", "--a", "1", "--b", "0",
                      *options)  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {message}\n")


def test_a_saved_shared_fit_starts_another_but_for_its_per_group_parameters(tmp_path):
    """It said `no start for parameter b`, where the file holds b[A], b[B], b[C]: it says so,
    and with --b given, the shared a starts from the file."""
    data = grouped_csv(tmp_path, "data.csv", GROUPED)
    saved = tmp_path / "shared.json"
    fit = ["fit", "a*x + b", "--data", data, "--by", "g", "--shared", "a"]
    in_process(*fit, "--a", "1", "--b", "0", "--save", str(saved))
    done = in_process(*fit, "--load", str(saved))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"error: {saved} holds b per group (b[A], b[B], b[C]), as a fit with --shared saves "
        "it, and no one value of it: give --b a start (the file's values start the others)\n"
    )
    again = in_process(*fit, "--load", str(saved), "--b", "0", "--format", "json")
    assert again.returncode == 0
    assert (
        json.loads(again.stdout)["inputs"]["a"] == json.loads(saved.read_text())["parameters"]["a"]
    )


def test_shared_predicts_with_the_joint_fits_covariance(tmp_path):
    sm = pytest.importorskip("statsmodels.api")
    data = grouped_csv(tmp_path, "data.csv", GROUPED)
    new = grouped_csv(tmp_path, "new.csv", NEW)
    done = in_process("fit", "a*x + b", "--data", data, "--by", "g", "--shared", "a", "--a",
                      "1", "--b", "0", "--predict", new, "--band", "0.95")  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    rows = done.stdout.splitlines()
    assert rows[0] == "g,x,fitted,fitted_se,lower,upper,pred_lower,pred_upper"
    groups = np.array(GROUPED["g"])
    dummies = np.column_stack([groups == g for g in "ABC"] + [GROUPED["x"]]).astype(float)
    ols = sm.OLS(GROUPED["y"], dummies).fit()
    at = np.column_stack([np.array(NEW["g"]) == g for g in "ABC"] + [NEW["x"]]).astype(float)
    frame = ols.get_prediction(at).summary_frame(alpha=0.05)
    for row, (_, expected) in zip(rows[1:], frame.iterrows(), strict=True):
        cells = [float(v) for v in row.split(",")[2:]]
        assert cells == pytest.approx([expected[theirs] for _, theirs in BANDS], rel=1e-9)


@pytest.mark.parametrize("shared", [[], ["--shared", "a"]])
def test_by_output_has_fitted_se_and_the_bands_of_the_groups_predictions(tmp_path, shared):
    data = grouped_csv(tmp_path, "data.csv", GROUPED)
    out = tmp_path / "fitted.jsonl"
    arguments = ["fit", "a*x + b", "--data", data, "--by", "g", *shared, "--a", "1", "--b", "0"]
    done = in_process(*arguments, "-o", str(out), "--band", "0.8")
    assert done.returncode == 0
    written = lines_of(out.read_text())
    assert list(written[0]) == ["g", "x", "y", "fitted", "fitted_se", "lower", "upper",
                                "pred_lower", "pred_upper", "residual"]  # fmt: skip
    predicted = lines_of(
        in_process(*arguments, "--predict", data, "--band", "0.8", "--format", "json").stdout
    )
    for row, again in zip(written, predicted, strict=True):
        assert row["residual"] == pytest.approx(row["y"] - row["fitted"], abs=1e-13)
        for name in ("fitted", "fitted_se", "lower", "upper", "pred_lower", "pred_upper"):
            assert row[name] == again[name], name


def test_a_row_of_a_group_not_fitted_is_exit_2(tmp_path):
    data = grouped_csv(tmp_path, "data.csv", GROUPED)
    new = grouped_csv(tmp_path, "new.csv", {"g": ["A", "D"], "x": [1.0, 2.0]})
    done = in_process("fit", "a*x + b", "--data", data, "--by", "g", "--a", "1", "--b", "0",
                      "--predict", new)  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert (
        done.stderr
        == "error: row 2: g = D, a group that was not fitted (the groups fitted: A, B, C)\n"
    )


def test_rows_to_predict_without_the_groups_column_say_so_of_the_predict_file(
    tmp_path, monkeypatch
):
    """The rows to predict at lack the column of the groups: the --predict file is named,
    not the data (which has it), before the fit (which may be long), also for a loaded fit,
    whose --by was never typed."""
    from nanograd_cli import _api as api

    real_fit = api.fit

    def no_fit(*arguments, **options):
        raise AssertionError("the fit ran before the --predict file was checked")

    data = grouped_csv(tmp_path, "data.csv", GROUPED)
    new = grouped_csv(tmp_path, "new.csv", {"x": [1.0, 2.0]})
    saved = str(tmp_path / "fits.json")
    message = (
        "error: --predict has no column g, which names the group whose fit predicts each row "
        "(its columns: x)\n"
    )
    monkeypatch.setattr(api, "fit", no_fit)
    done = in_process("fit", "a*x + b", "--data", data, "--by", "g", "--a", "1", "--b", "0",
                      "--predict", new, "--save", saved)  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message)
    assert not (tmp_path / "fits.json").exists()  # a failed run writes no file
    monkeypatch.setattr(api, "fit", real_fit)
    in_process("fit", "a*x + b", "--data", data, "--by", "g", "--a", "1", "--b", "0",
               "--save", saved)  # fmt: skip
    done = in_process("fit", "--load", saved, "--predict", new)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message)


def test_load_with_save_is_refused(tmp_path):
    data = written(tmp_path, "line.csv", x=LINE_X, y=LINE_Y)
    saved = tmp_path / "line.json"
    assert in_process("fit", "a*x + b", "--data", data, "--a", "1", "--b", "0",
                      "--save", str(saved)).returncode == 0  # fmt: skip
    done = in_process("fit", "--load", str(saved), "--save", str(tmp_path / "copy.json"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: --load with --save would copy the saved fit: copy the file itself instead\n"
    )
    assert not (tmp_path / "copy.json").exists()


@pytest.mark.parametrize("gap", ["", "NA", "nan", "null"])
def test_a_missing_value_in_the_rows_to_predict_at_is_exit_2_naming_it(line, tmp_path, gap):
    """Every kind of missing value is said alike, as the data's are, and no file is written."""
    rows = tmp_path / "gaps.csv"
    rows.write_text(f"x,note\n1,a\n{gap},b\n")
    out = tmp_path / "predicted.csv"
    done = in_process(
        "fit", "a*x + b", "--data", line, "--a", "1", "--b", "0", "--predict", str(rows),
        "-o", str(out),
    )  # fmt: skip
    assert (done.returncode, done.stderr.splitlines()[-1]) == (
        2, "error: --predict row 2, column x: a missing value (empty, NA or nan); give x on "
        "every row to predict at",
    )  # fmt: skip
    assert not out.exists()


@pytest.mark.parametrize("gap", ["", "NA", "nan"])
def test_python_predict_refuses_a_missing_value_as_the_command_line_does(line, tmp_path, gap):
    """From a file or from arrays, a missing value among the rows to predict at is the
    command line's error, in Python's words; a fit that did not converge is not saved."""
    fit = ng.fit("a*x + b", line, a=1, b=0)
    rows = tmp_path / "gaps.csv"
    rows.write_text(f"x,note\n1,a\n{gap},b\n")
    message = "data row 2, column x: a missing value (empty, NA or nan); give x on every row to "
    for data in (str(rows), {"x": np.array([1.0, np.nan])}):
        with pytest.raises(ng.errors.InputError, match=f"^{re.escape(message)}predict at$"):
            fit.predict(data)


def test_python_saves_no_fit_that_did_not_converge_and_notes_a_missing_band(line, tmp_path):
    failed = ng.fit("a*exp(b*x)", line, a=1, b=0, steps=1)
    assert not failed.converged
    saved = tmp_path / "failed.json"
    with pytest.raises(ng.errors.NanogradError, match=r"failed\.json not written: the fit did not"):
        failed.save(saved)
    assert not saved.exists()
    data = tmp_path / "weighted.csv"
    data.write_text(
        "x,y,s\n" + "".join(f"{x},{2 * x + 1 + (-1) ** x / 10},0.1\n" for x in range(6))
    )
    weighted = ng.fit("a*x + b", str(data), a=1, b=0, sigma="s")
    with pytest.warns(ng.NanogradWarning, match="^no prediction band: sigma reads s, which data "):
        found = weighted.predict({"x": [7.0]}, band=0.95)
    assert sorted(found) == ["fitted", "fitted_se", "lower", "upper"]


def test_python_saves_no_fit_over_the_data_it_was_fitted_to(line, runs_file, tmp_path):
    """As fit --save refuses the --data file, Fit.save and Fits.save (and a group's) refuse
    the file their data came from, through another name too; a new file is written."""
    original = Path(line).read_text()
    fitted = ng.fit("a*x + b", line, a=1, b=0)
    (tmp_path / "alias.csv").symlink_to(line)
    for target in (line, tmp_path / "alias.csv"):
        with pytest.raises(ng.errors.InputError, match="is a file this command reads"):
            fitted.save(target)
    fits = ng.fit("a*exp(-b*t) + c", str(runs_file), a=1, b=0.5, c=0, by="run")
    for saving in (fits, fits["late"]):
        with pytest.raises(ng.errors.InputError, match="is a file this command reads"):
            saving.save(runs_file)
    assert Path(line).read_text() == original
    fitted.save(tmp_path / "line.json")
    assert ng.load_fit(tmp_path / "line.json").parameters == fitted.parameters
    with pytest.raises(TypeError, match=r"^save\(path\): path is a str or a path, not bytes$"):
        fitted.save(b"line.json")


@pytest.mark.parametrize(
    ("options", "message"),
    [({"band": 0.9}, "band is drawn on plot: give both"), ({"logx": True}, "logx is an axis")],
)
def test_python_fit_refuses_a_band_or_log_axis_without_a_plot(line, options, message):
    with pytest.raises(ng.errors.InputError, match=f"^{message}"):
        ng.fit("a*x + b", line, a=1, b=0, **options)


def test_rows_to_predict_at_without_the_models_columns_name_them_all(tmp_path):
    data = written(tmp_path, "two.csv", x=LINE_X, w=LINE_X**2, y=LINE_Y)
    other = written(tmp_path, "other.csv", z=AT)
    done = in_process(
        "fit", "a*x + b*w", "--data", data, "--a", "1", "--b", "0", "--predict", other
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "error: missing values for inputs x, w: give --predict columns x, w\n"
    only_w = written(tmp_path, "w.csv", w=AT)
    done = in_process(
        "fit", "a*x + b*w", "--data", data, "--a", "1", "--b", "0", "--predict", only_w
    )
    assert done.stderr == (
        "error: missing value for input x: give --predict a column x (the model reads x, w)\n"
    )


def test_load_fits_of_a_fit_by_groups_gives_each_groups_fit(tmp_path):
    groups = np.repeat(["early", "late"], DECAY_T.size)
    t = np.concatenate([DECAY_T, DECAY_T])
    y = np.concatenate([DECAY_Y, 0.5 * DECAY_Y])
    path = written(tmp_path, "decays.csv", t=t, y=y)
    path_groups = tmp_path / "groups.csv"
    lines = Path(path).read_text().splitlines()
    path_groups.write_text(
        "run,"
        + lines[0]
        + "\n"
        + "".join(f"{g},{line}\n" for g, line in zip(groups, lines[1:], strict=True))
    )
    saved = tmp_path / "groups.json"
    done = in_process("fit", "a*exp(-b*t) + c", "--data", str(path_groups), "--by", "run",
                      "--a", "1", "--b", "0.5", "--c", "0", "--save", str(saved))  # fmt: skip
    assert done.returncode == 0
    back = ng.load_fits(saved)
    assert isinstance(back, ng._fitted.Fits) and (back.by, list(back)) == ("run", ["early", "late"])
    alone = ng.fit("a*exp(-b*t) + c", {"t": DECAY_T, "y": 0.5 * DECAY_Y}, a=1, b=0.5, c=0)
    assert back["late"].parameters == pytest.approx(alone.parameters, rel=1e-12)
    found = back["late"].predict({"t": AT}, band=0.95)
    expected = alone.predict({"t": AT}, band=0.95)
    for name, values in expected.items():
        assert found[name] == pytest.approx(values, rel=1e-9)


def test_fits_save_as_fit_by_save_does_and_each_load_takes_its_kind(tmp_path):
    data = {"run": np.repeat(["A", "B"], DECAY_T.size), "t": np.concatenate([DECAY_T, DECAY_T]),
            "y": np.concatenate([DECAY_Y, 0.5 * DECAY_Y])}  # fmt: skip
    fits = ng.fit("a*exp(-b*t) + c", data, by="run", a=1, b=0.5, c=0)
    assert isinstance(fits, ng._fitted.Fits)
    fits.save(tmp_path / "python.json")
    table = tmp_path / "runs.csv"
    table.write_text("run,t,y\n" + "".join(f"{g},{t!r},{y!r}\n" for g, t, y in zip(
        data["run"], data["t"].tolist(), data["y"].tolist(), strict=True)))  # fmt: skip
    done = in_process("fit", "a*exp(-b*t) + c", "--data", str(table), "--by", "run", "--a", "1",
                      "--b", "0.5", "--c", "0", "--save", str(tmp_path / "cli.json"))  # fmt: skip
    assert done.returncode == 0
    python, cli = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("python", "cli"))
    assert python == cli and python["target"] is None  # (the default: the column y)
    back = ng.load_fits(tmp_path / "python.json")
    assert back["B"].parameters == fits["B"].parameters
    # curve_fit of group B's rows alone
    from scipy.optimize import curve_fit

    expected, _ = curve_fit(lambda t, a, b, c: a * np.exp(-b * t) + c, DECAY_T, 0.5 * DECAY_Y,
                            p0=[1, 0.5, 0], xtol=1e-15, ftol=1e-15, gtol=1e-15)  # fmt: skip
    assert [back["B"].parameters[n] for n in "abc"] == pytest.approx(expected, rel=1e-7)
    predicted = back["B"].predict({"t": AT})["fitted"]
    assert predicted == pytest.approx(expected[0] * np.exp(-expected[1] * AT) + expected[2])
    with pytest.raises(ng.errors.InputError) as raised:
        ng.load_fit(tmp_path / "python.json")
    assert str(raised.value) == (
        f"{tmp_path / 'python.json'} holds a fit per run (2 groups): load it with load_fits(path)"
    )
    one = ng.fit("a*exp(-b*t) + c", {"t": DECAY_T, "y": DECAY_Y}, a=1, b=0.5, c=0)
    one.save(tmp_path / "one.json")
    with pytest.raises(ng.errors.InputError) as raised:
        ng.load_fits(tmp_path / "one.json")
    assert (
        str(raised.value) == f"{tmp_path / 'one.json'} holds one fit: load it with load_fit(path)"
    )
    with pytest.raises(TypeError, match=r"^load_fits\(path\): path is a str or a path, not int$"):
        ng.load_fits(3)  # type: ignore[arg-type]


def test_load_with_source_and_data_starts_a_new_fit_from_the_saved_values(tmp_path):
    from scipy.optimize import curve_fit

    first = written(tmp_path, "first.csv", t=DECAY_T, y=DECAY_Y)
    y = 1.1 * DECAY_Y + 0.05
    second = written(tmp_path, "second.csv", t=DECAY_T, y=y)
    saved = tmp_path / "first.json"
    model = "a*exp(-b*t) + c"
    done = in_process("fit", model, "--data", first, "--a", "1", "--b", "0.5", "--c", "0",
                      "--save", str(saved))  # fmt: skip
    assert done.returncode == 0
    parameters = json.loads(saved.read_text())["parameters"]
    again = in_process("fit", model, "--data", second, "--load", str(saved), "--c", "0.7",
                       "--format", "json", "--save", str(tmp_path / "second.json"))  # fmt: skip
    assert (again.returncode, again.stderr) == (0, "")
    result = json.loads(again.stdout)
    # the saved values start the parameters given none; --c wins over the saved c
    assert result["inputs"] == {"a": parameters["a"], "b": parameters["b"], "c": 0.7}
    tight = {"xtol": 1e-15, "ftol": 1e-15, "gtol": 1e-15}
    expected, covariance = curve_fit(
        lambda t, a, b, c: a * np.exp(-b * t) + c, DECAY_T, y, p0=[1, 0.5, 0], **tight
    )
    assert [result["parameters"][n] for n in "abc"] == pytest.approx(expected, rel=1e-7)
    assert [result["stderr"][n] for n in "abc"] == pytest.approx(
        np.sqrt(np.diag(covariance)), rel=1e-5
    )
    assert json.loads((tmp_path / "second.json").read_text())["inputs"] == result["inputs"]
    # a point minimize saved starts a fit alike; a column of the data is never a start
    point = tmp_path / "point.json"
    point.write_text(json.dumps({"format": "nanograd minimize", "version": 1, "source": "",
                                 "parameters": {"a": 2.0, "b": 1.0, "t": 9.0}}))  # fmt: skip
    from_point = in_process("fit", model, "--data", second, "--load", str(point), "--c", "0",
                            "--format", "json")  # fmt: skip
    assert json.loads(from_point.stdout)["inputs"] == {"a": 2.0, "b": 1.0, "c": 0.0}
    missing = in_process("fit", model, "--data", second, "--load", str(point))
    assert (missing.returncode, missing.stderr) == (
        2,
        "error: no start for parameter c: give a start value for each input that is not a "
        "column of the data\n",
    )


def test_a_saved_fit_by_groups_is_no_start(runs_file):
    saved = runs_file.with_suffix(".json")
    fit = ["fit", "a*exp(-b*t) + c", "--data", str(runs_file)]
    done = in_process(*fit, "--by", "run", "--a", "1", "--b", "0.5", "--c", "0", "--save",
                      str(saved))  # fmt: skip
    assert done.returncode == 0
    again = in_process(*fit, "--load", str(saved))
    assert (again.returncode, again.stderr) == (
        2,
        f"error: {saved}: a fit per run (fit --by --save) has no one value of each parameter: "
        "save a group's fit alone to start from it\n",
    )


@pytest.fixture
def runs_file(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("run,t,y\n" + "".join(
        f"{run},{t!r},{scale * y!r}\n"
        for run, scale in (("early", 1.0), ("late", 0.5))
        for t, y in zip(DECAY_T.tolist(), DECAY_Y.tolist(), strict=True)
    ))  # fmt: skip
    return path


@pytest.mark.parametrize("gap", [float("nan"), None])
def test_a_missing_value_in_data_from_python_is_said_as_a_files_is(gap):
    """A nan (or None) in a column of the data is the error a file's empty cell is."""
    message = (
        "data row 2, column y: a missing value (empty, NA or nan); drop_nan leaves out the rows "
        "with one"
    )
    data = {"x": [0.0, 0.5, 1.0, 1.5], "y": [1.0, gap, 2.0, 2.5]}
    with pytest.raises(ng.errors.InputError, match=f"^{re.escape(message)}$"):
        ng.fit("a*x + b", data, a=1, b=1)
    with pytest.raises(ng.errors.InputError, match=f"^{re.escape(message)}$"):
        ng.minimize("(a*x - y)**2", data=data, a=1, b=1)
    with pytest.warns(ng.NanogradWarning, match="^1 row with a missing value"):
        kept = ng.fit("a*x + b", data, a=1, b=1, drop_nan=True)
    assert kept.parameters == pytest.approx({"a": 1.0, "b": 1.0})  # (0, 1), (1, 2), (1.5, 2.5)


def test_python_saves_the_file_the_command_line_saves(tmp_path):
    """Byte for byte: the target said as the command line says it (none given: the column y)."""
    data = written(tmp_path, "decay.csv", x=DECAY_T, y=DECAY_Y)
    ng.fit("a*exp(-b*x) + c", data, a=1, b=1, c=0).save(tmp_path / "python.json")
    done = in_process(
        "fit", "a*exp(-b*x) + c", "--data", data, "--a", "1", "--b", "1", "--c", "0", "--save",
        str(tmp_path / "cli.json"),
    )  # fmt: skip
    assert done.returncode == 0
    assert (tmp_path / "python.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
