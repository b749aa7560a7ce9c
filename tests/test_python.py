"""The Python door: every command a function of the package, its options keywords named as
on the command line, the source's inputs keywords too (or in `inputs=`), nan and inf a
NanogradWarning or, with strict=True, an error."""

from __future__ import annotations

import importlib
import math
import pkgutil
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import nanograd_cli
from nanograd_cli import NanogradWarning
from nanograd_cli.errors import InputError, MissingInputs, NonFiniteResult
from nanograd_cli.sampling import Curve, Surface


def test_every_command_has_a_function():
    for name in ("grad", "jacobian", "hessian", "check", "diff", "explain", "draw", "plot"):
        assert callable(getattr(nanograd_cli, name)), name
    for name in ("minimize", "fit", "NanogradWarning"):
        assert name in nanograd_cli.__all__


def test_every_public_name_is_listed_by_dir_also_those_loaded_when_first_named():
    """Completion (IPython, a REPL's tab) lists what dir() gives: Fit, Fits, BatchFunction and
    Program are imported only when first named, and dir() names them before that."""
    code = (
        "import sys, nanograd_cli as n; names = dir(n); "
        "print(all(x in names for x in n.__all__), 'nanograd_cli._fitted' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == ["True", "False"], done.stderr


def test_no_module_of_the_package_is_named_as_one_of_its_functions():
    """Importing a module puts it on the package under its name: a module named as a
    function (explain, plot) would hide the function."""
    modules = {m.name for m in pkgutil.iter_modules(nanograd_cli.__path__)}
    assert modules.isdisjoint(nanograd_cli.__all__)
    for module in ("_descent", "sampling", "_written_out"):
        importlib.import_module(f"nanograd_cli.{module}")
    assert nanograd_cli.plot.__module__ == nanograd_cli.explain.__module__ == "nanograd_cli"


def test_the_modules_without_an_underscore_are_those_the_docs_name():
    """A module users may import is listed in docs/python.md; every other one's name begins
    with an underscore, so that type checkers (pyright's --verifytypes) and readers see it is
    the package's own. A new module is private unless the docs name it."""
    render = importlib.import_module("nanograd_cli.render")
    found = {m.name for m in pkgutil.iter_modules(nanograd_cli.__path__)} | {
        f"render.{m.name}" for m in pkgutil.iter_modules(render.__path__)
    }
    public = {name for name in found if not name.split(".")[-1].startswith("_")}
    page = " ".join(
        (Path(__file__).resolve().parents[1] / "docs" / "python.md").read_text().split()
    )
    listed = page.split("The public modules are those these pages name:")[1]
    named = set(re.findall(r"`([\w.]+)`", listed.split(". Every other module")[0]))
    assert public == named | {"render"}, public ^ (named | {"render"})


def test_options_are_keywords_named_as_on_the_command_line():
    assert nanograd_cli.grad("x*y", x=2, y=3, wrt="x").gradients == {"x": 3.0}
    assert nanograd_cli.grad("x*y", x=2, y=3, wrt=["y"], mode="forward").gradients == {"y": 2.0}
    assert nanograd_cli.check("x**3", x=1).passed
    assert not nanograd_cli.check("x**3", x=1, rtol=1e-14, atol=0).passed
    assert nanograd_cli.diff("x*y", wrt="y") == nanograd_cli.diff("x*y", "y")
    assert nanograd_cli.diff("x*y", "y").text == "x"
    found = nanograd_cli.minimize("(x - 3)**2", x=0, lr=0.1, method="sgd", steps=500)
    assert found.converged and math.isclose(found.inputs["x"], 3, abs_tol=1e-6)
    held = nanograd_cli.minimize("(x - 3)**2 + (y + 1)**2", x=0, y=0, fix="y", lr=0.1)
    assert held.inputs["y"] == 0 and math.isclose(held.inputs["x"], 3, abs_tol=1e-6)


def test_an_input_named_like_an_option_goes_in_inputs():
    result = nanograd_cli.hessian("x*strict", x=1, inputs={"strict": 2})
    assert result.value == 2 and result.gradients == {"x": 2.0, "strict": 1.0}
    with pytest.raises(MissingInputs) as missing:
        nanograd_cli.hessian("x*strict", x=1, strict=True)  # the option, not the input
    assert str(missing.value) == "missing value for input strict: give inputs={'strict': VALUE}"
    assert nanograd_cli.grad("wrt*2", inputs={"wrt": 1}).gradients == {"wrt": 2.0}
    with pytest.raises(InputError, match="given twice: as x= and in inputs="):
        nanograd_cli.grad("x", x=1, inputs={"x": 2})


def test_a_keyword_that_is_no_option_and_no_input_is_said_to_be_neither():
    with pytest.raises(InputError) as error:
        nanograd_cli.grad("x*y", x=1, y=2, rtol=1e-3)
    assert str(error.value) == (
        "grad() has no option rtol, and rtol is not an input of this source (its inputs: x, y)"
    )
    with pytest.raises(InputError, match=r"^missing value for input y: give y=VALUE$"):
        nanograd_cli.explain("x*y", x=1)


def test_a_nan_warns_with_the_packages_category_at_the_callers_line():
    with pytest.warns(NanogradWarning, match="log gave nan") as caught:
        result = nanograd_cli.grad("log(x)", x=-1)
    assert math.isnan(result.value)
    assert (caught[0].filename, caught[0].lineno) == (__file__, _line_of('log(x)", x=-1)'))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NanogradWarning)  # as a user silences them
        assert math.isnan(nanograd_cli.hessian("log(x)", x=-1).value)
    with pytest.raises(NonFiniteResult, match="log gave nan"):
        nanograd_cli.grad("log(x)", x=-1, strict=True)
    with pytest.raises(NonFiniteResult):
        nanograd_cli.minimize("log(x)", x=-1, strict=True)


def _line_of(text: str) -> int:
    with open(__file__) as file:
        return next(n for n, line in enumerate(file, 1) if text in line and "grad(" in line)


def test_check_against_formulas_over_ranges_as_the_command_line_writes_them():
    over = nanograd_cli.check("sin(x)/x", against="cos(x)/x - sin(x)/x**2", x="0.1:3")
    assert over.passed and over.checks["x"].points == 101
    tupled = nanograd_cli.check("x*y", against=["x=y", "y=x"], x=(-1, 1, 5), y=2)
    assert tupled.passed and tupled.checks["x"].points == 5
    wrong = nanograd_cli.check("x**3", against="3*x", x=2)
    assert not wrong.passed  # a failure is a result, not an error, in Python
    with pytest.raises(InputError, match=r"^x is given a range: .* grad\(\) takes a number$"):
        nanograd_cli.grad("x", x="0:1")


def test_explain_draw_and_plot():
    explained = nanograd_cli.explain("x*y + tanh(x)", x=2, y=3)
    assert explained.value == nanograd_cli.grad("x*y + tanh(x)", x=2, y=3).value
    dot = nanograd_cli.draw("x*y", x=2, y=3, format="dot", rankdir="TB", hide_constants=True)
    assert dot.startswith(b"digraph")
    curve = nanograd_cli.plot("x**2", x=(-1, 1, 5))
    assert isinstance(curve, Curve) and list(curve.gradient) == [-2.0, -1.0, 0.0, 1.0, 2.0]
    surface = nanograd_cli.plot("x*y", x="0:1", y="0:1")  # no picture needed to have it
    assert isinstance(surface, Surface)


def test_draw_and_plot_write_their_pictures_whole(tmp_path):
    svg = tmp_path / "graph.svg"
    data = nanograd_cli.draw("x*y", x=2, y=3, output=svg)
    assert svg.read_bytes() == data and data.lstrip().startswith(b"<?xml")
    picture = tmp_path / "plot.svg"
    nanograd_cli.plot("sin(x)", x="-3:3", output=str(picture))
    assert b"<svg" in picture.read_bytes()
    with pytest.raises(InputError, match="cannot tell the format"):
        nanograd_cli.draw("x", x=1, output=tmp_path / "graph.txt")
    assert not (tmp_path / "graph.txt").exists()


def test_minimize_over_data_and_fit_with_a_wrong_fix():
    x = np.linspace(0, 1, 20)
    data = {"x": x, "y": 3 * x + 1}
    found = nanograd_cli.minimize("(a*x + b - y)**2", data=data, a=0, b=0, lr=0.1, steps=20000)
    assert found.converged and math.isclose(found.inputs["a"], 3, abs_tol=1e-3)
    fitted = nanograd_cli.fit("a*x + b", data, a=1, b=0)
    assert np.allclose(fitted.fitted, 3 * x + 1) and np.allclose(fitted.residuals, 0, atol=1e-9)
    with pytest.raises(InputError) as error:
        nanograd_cli.fit("a*x + b", data, a=1, b=0, fix="q")
    assert str(error.value) == "fix='q': q is not a parameter (parameters: a, b)"
    with pytest.raises(InputError) as error:
        nanograd_cli.minimize("(a*x + b - y)**2", data=data, a=0, b=0, fix="q")
    assert str(error.value) == "fix='q': q is not a parameter (parameters: a, b)"


def test_the_dy_dx_note_is_a_warning():
    with pytest.warns(NanogradWarning) as caught:
        text = nanograd_cli.diff("y = x**2; dy/dx").text
    assert "d_dy" in text
    assert str(caught[0].message) == (
        "dy and dx are inputs here; the derivative of y by x is what diff() prints with wrt='x'"
    )


def test_the_python_page_shows_what_python_prints():
    import doctest
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "python.md"
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testfile(str(page), module_relative=False, optionflags=flags)
    assert (result.failed, result.attempted > 20) == (0, True)


def test_fit_draws_its_curve_when_it_converges(tmp_path):
    x = np.linspace(0, 1, 20)
    data = {"x": x, "z": x, "y": 3 * x + 1 + 0.01 * np.sin(40 * x)}
    picture = tmp_path / "fit.svg"
    assert nanograd_cli.fit("a*x + b", data, a=1, b=0, plot=picture).converged
    assert b"<svg" in picture.read_bytes()
    with pytest.raises(InputError) as error:
        nanograd_cli.fit("a*x*z + b", data, a=1, b=0, plot=tmp_path / "two.svg")
    assert str(error.value) == "plot draws a fit over one column; the model reads x, z"
    with pytest.warns(NanogradWarning, match=r"stalled.svg not written: the fit did not converge"):
        stalled = nanograd_cli.fit(
            "a*x + b", data, a=1, b=0, steps=1, plot=tmp_path / "stalled.svg"
        )
    assert not stalled.converged and not (tmp_path / "stalled.svg").exists()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: nanograd_cli.grad("x", x=1, wrt=2), "invalid value for wrt: 2 is not a name"),
        (lambda: nanograd_cli.diff("x", 2), "invalid value for wrt: (2,) is not a name"),
        (lambda: nanograd_cli.grad("x", x=10**400), "x=1000000000"),
        (lambda: nanograd_cli.grad(b"x", x=1), "the source is text, a str, not bytes"),
        (
            lambda: nanograd_cli.minimize("x*x", x=1, method="adamw"),
            "invalid value for method: 'adamw' is not one of 'sgd', 'momentum', 'adam'",
        ),
        (
            lambda: nanograd_cli.grad("x", x=1, mode="fwd"),
            "invalid value for mode: 'fwd' is not one of 'auto', 'reverse', 'forward'",
        ),
        (lambda: nanograd_cli.check("x*x", x=1, rtol="a"), "invalid value for rtol: 'a' is not"),
        (lambda: nanograd_cli.minimize("x*x", x=1, steps=10.5), "invalid value for steps: 10.5"),
        (lambda: nanograd_cli.grad("x", x="abc"), "x='abc': expected a number"),
        (lambda: nanograd_cli.grad("x", x="1e400"), "x='1e400' is too large for a float"),
    ],
    ids=lambda v: None,
)
def test_a_bad_value_is_a_typed_error_of_one_line(call, message):
    """No TypeError, KeyError, ValueError or OverflowError from a value given to a command:
    bad input, said in one line that names what was given."""
    with pytest.raises(InputError) as raised:
        call()
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


def test_a_value_that_is_no_number_names_a_range_where_the_command_takes_one():
    for call in (lambda: nanograd_cli.grad("x", x="abc"), lambda: nanograd_cli.fit(
            "a*x", {"x": [1, 2], "y": [2, 4]}, a="abc")):  # fmt: skip
        with pytest.raises(InputError, match=r"^(x|a)='abc': expected a number$"):
            call()
    with pytest.raises(InputError, match=r"^x='abc': expected a number \(or a range LO:HI"):
        nanograd_cli.plot("x", x="abc")


def test_an_input_given_as_a_str_is_read_as_the_command_line_reads_it():
    assert nanograd_cli.grad("x*y", x="2", y="pi/2").inputs == {"x": 2.0, "y": math.pi / 2}
    assert nanograd_cli.grad("x", x=" -1.5e-3 ").inputs == {"x": -1.5e-3}


# the note of the power rule where a power is below the smallest normal float
_LOSES = "loses digits where {} is below 2.2e-308 (it rounds first); diff --exact keeps them"


@pytest.mark.parametrize(
    ("args", "text", "conditions"),
    [
        (("x**x",), "x**x*(log(x) + 1)", {"x": "x > 0"}),
        (("x**3",), "3*x**2", {}),
        (
            ("x**y",),
            "d_x = y*x**(y - 1)\nd_y = x**y*log(x)",
            {"x": "x != 0; " + _LOSES.format("x**(y - 1)"), "y": "x > 0; " + _LOSES.format("x**y")},
        ),
        (
            ("x**y", "--order", "2"),
            "d2_x = y*x**(y - 2)*(y - 1)\nd2_y = x**y*log(x)**2",
            {
                "x": "x != 0; " + _LOSES.format("x**(y - 2)"),  # (the form printed)
                "y": "x > 0; " + _LOSES.format("x**y"),
            },
        ),
        (
            ("x**y", "--wrt", "x", "--shape", "x=2"),
            "[[y*x[0]**(y - 1), 0], [0, y*x[1]**(y - 1)]]",
            {
                "x": "x[0] != 0 and x[1] != 0; "
                + _LOSES.format("x[0]**(y - 1)").replace(
                    "; diff",
                    " and where x[1]**(y - 1) is below 2.2e-308 (it rounds first); diff",
                )
            },
        ),
        (("log(y)*x - 1", "--implicit", "y", "--wrt", "x"), "-y*log(y)/x", {}),
    ],
)
def test_diff_gives_the_derivative_and_where_it_holds_apart(args, text, conditions):
    """Python's diff: the text a program (no comment), the conditions by name, and str() the
    command line's and the repl's output, which keep each condition on a `#` line."""
    from nanograd_cli._session import Session

    from .helpers import in_process

    source, *options = args
    keywords: dict = {}
    for flag, value in zip(options[::2], options[1::2], strict=True):
        key = {"--shape": "shapes"}.get(flag, flag[2:])
        keywords[key] = {"x": 2} if key == "shapes" else int(value) if key == "order" else value
    found = nanograd_cli.diff(source, **keywords)
    assert (found.text, dict(found.conditions)) == (text, conditions)
    assert "#" not in found.text
    done = in_process("diff", *args)
    assert done.returncode == 0
    assert done.stdout == str(found) + "\n"
    repl = " ".join(o.lstrip("-") for o in options)
    assert Session().run(f":diff {source} {repl}").text() == str(found)
    for name, where in conditions.items():
        assert f"# {where}" in done.stdout.splitlines(), name


def test_diff_and_explain_take_the_command_lines_formats():
    assert nanograd_cli.diff("x**3", format="latex") == nanograd_cli.diff("x**3", latex=True)
    assert nanograd_cli.diff("x**3", format="text").text == "3*x**2"
    with pytest.raises(InputError, match="latex=True and format='text' disagree"):
        nanograd_cli.diff("x**3", format="text", latex=True)
    from .helpers import in_process

    for fmt in ("table", "markdown", "latex", "json"):
        done = in_process("explain", "x*y + tanh(x)", "--x", "2", "--y", "3", "--format", fmt)
        text = nanograd_cli.explain("x*y + tanh(x)", x=2, y=3, format=fmt)
        assert text + "\n" == done.stdout, fmt
        # --digits is digits=, with the same numbers
        done = in_process(
            "explain", "x*y + tanh(x)", "--x", "2", "--y", "3", "--format", fmt, "--digits", "3"
        )
        text = nanograd_cli.explain("x*y + tanh(x)", x=2, y=3, format=fmt, digits=3)
        assert text + "\n" == done.stdout, fmt
    with pytest.raises(InputError, match="digits= shapes the text that format= gives"):
        nanograd_cli.explain("x*y", x=2, y=3, digits=3)
    with pytest.raises(InputError, match="invalid value for digits: 18 is neither"):
        nanograd_cli.explain("x*y", x=2, y=3, format="latex", digits=18)
    with pytest.raises(TypeError, match="digits=True: give a number of digits or 'full'"):
        nanograd_cli.explain("x*y", x=2, y=3, format="latex", digits=True)
    # a format in any case, as the command line takes it, and digits full too
    latex = nanograd_cli.explain("x*y", x=2, y=3, format="latex")
    assert nanograd_cli.explain("x*y", x=2, y=3, format="LATEX") == latex
    full = nanograd_cli.explain("x*y", x=2, y=3, format="latex", digits="full")
    assert nanograd_cli.explain("x*y", x=2, y=3, format="latex", digits="FULL") == full
    assert nanograd_cli.diff("x**3", format="LaTeX") == nanograd_cli.diff("x**3", format="latex")


def test_minimize_draws_its_descent(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "descent.svg"
    result = nanograd_cli.minimize("(x - 3)**2", x=0, lr=0.1, plot=path)
    assert result.converged and path.read_text().lstrip().startswith("<?xml")
    result = nanograd_cli.minimize("(x - 3)**2", x=0, lr=0.1, steps=2, plot=tmp_path / "two.svg")
    assert not result.converged and (tmp_path / "two.svg").exists()  # every descent that ran
    with pytest.raises(InputError):
        nanograd_cli.minimize("(x - 3)**2", x=0, plot=tmp_path / "descent.jpg")


def test_a_mistyped_keyword_gets_the_nearest_option_or_input():
    with pytest.raises(InputError, match=r"has no option wrtt, .*; did you mean wrt\?$"):
        nanograd_cli.grad("x", x=1, wrtt="x")
    with pytest.raises(InputError, match=r"; did you mean hide_constants\?$"):
        nanograd_cli.draw("x", x=1, hide_constant=True)
    with pytest.raises(InputError, match=r"; did you mean y\?$"):
        nanograd_cli.grad("x*y", x=1, yy=2)


@pytest.mark.signals
def test_ctrl_c_in_python_is_a_keyboard_interrupt_with_the_point_reached():
    import os
    import signal
    import threading

    # Python's own handler, as a Python started from a terminal has it (a suite started with
    # SIGINT ignored has none)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as caught:
            nanograd_cli.minimize("(x - 3)**2", x=0, steps=10**9, tol=0, lr=1e-12)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert isinstance(caught.value, nanograd_cli.errors.Interrupted)
    assert caught.value.reached.interrupted and caught.value.reached.steps > 0


def test_grad_of_an_array_result_is_jacobians_as_grad_of_several_outputs_is():
    """grad() gives Gradients, as its type says: a result that is an array is the Jacobian's
    to give, and the error says so, as for a source that lists several outputs."""
    with pytest.raises(nanograd_cli.errors.SeveralOutputs) as error:
        nanograd_cli.grad("W @ x", W=[[1, 2], [3, 4]], x=[1.0, 2.0])
    assert str(error.value) == (
        "the result is an array of 2 elements, and grad() takes one number: end the source "
        "with a number made of it, such as sum(...) or one element [0] (jacobian() takes "
        "several)"
    )
    W, x = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1.0, 2.0])
    np.testing.assert_array_equal(nanograd_cli.jacobian("W @ x", W=W, x=x, wrt="x").matrix, W)


def test_results_as_numpy_arrays_in_input_order():
    """A gradient as a vector, a Jacobian (a row per output element) and a Hessian as
    matrices, by input in order, an array input's elements row-major: as NumPy computes them."""
    A, x = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([5.0, 6.0])
    gradient = nanograd_cli.grad("sum(A@x)*t", A=A, x=x, t=2.0)
    expected = np.concatenate(
        [np.outer([2.0, 2.0], x).ravel(), 2 * A.sum(axis=0), [A @ x @ [1, 1]]]
    )
    np.testing.assert_array_equal(gradient.to_numpy(), expected)
    np.testing.assert_array_equal(np.asarray(gradient), expected)
    np.testing.assert_array_equal(nanograd_cli.jacobian("A@x", A=A, x=x, wrt="x").matrix, A)
    np.testing.assert_array_equal(nanograd_cli.jacobian("x*[1, 2]", x=3.0).matrix, [[1.0], [2.0]])
    hessian = nanograd_cli.hessian("x[0]**2*x[1] + y*x[1]", x=[1.0, 2.0], y=3.0)
    np.testing.assert_array_equal(
        hessian.matrix, [[4.0, 2.0, 0.0], [2.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
    )


def test_diff_takes_the_names_after_the_source_one_by_one_or_as_one_list():
    assert (
        nanograd_cli.diff("x*y", ["x", "y"])
        == nanograd_cli.diff("x*y", "x", "y")
        == "d_x = y\nd_y = x"
    )


def test_completion_offers_the_public_names_only():
    """dir() (what an editor or IPython completes) lists the public names and modules, not
    what the package itself imports (os, Any, cast) or its helpers."""
    listed = dir(nanograd_cli)
    assert set(nanograd_cli.__all__) <= set(listed)
    assert {"errors", "results", "engine", "Fit", "Program"} <= set(listed)
    assert not {"os", "Any", "Literal", "cast", "TYPE_CHECKING", "annotations"} & set(listed)
    assert all(hasattr(nanograd_cli, name) for name in listed)
