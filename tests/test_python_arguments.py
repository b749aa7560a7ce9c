"""Every public function given a bad argument of any type raises the package's errors: an
InputError (or another NanogradError) that says what is wrong, or a TypeError that names the
argument; never a bare OverflowError, ValueError or AttributeError from inside."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nanograd_cli as ng
from nanograd_cli.errors import NanogradError

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**400), 10**400),
    st.floats(),
    st.text(max_size=4),
    st.lists(st.integers(-2, 2), max_size=3),
    st.dictionaries(st.sampled_from(["x", "y", "q", ""]), st.integers(-2, 2), max_size=2),
    st.sampled_from(
        [object(), np.array([[1.0, 2.0]]), np.array([True, False]), np.float64("nan"), b"x", 2j]
    ),
)
DATA = {"x": [1.0, 2.0, 3.0, 4.0], "y": [2.1, 3.9, 6.2, 7.8]}
# each function: a call that works, and the arguments that may be replaced by junk
CALLS = {
    "grad": (ng.grad, ("x*y",), {"x": 1.0, "y": 2.0, "wrt": "x", "mode": "auto", "strict": False}),
    "hessian": (ng.hessian, ("x*y",), {"x": 1.0, "y": 2.0, "strict": False}),
    "jacobian": (ng.jacobian, ("x*y",), {"x": 1.0, "y": 2.0, "wrt": "x", "mode": "auto"}),
    "check": (ng.check, ("x*y",), {"x": 1.0, "y": 2.0, "wrt": (), "rtol": 1e-6, "atol": 1e-9}),
    "check against": (ng.check, ("x*y",), {"x": "0:1", "y": 2.0, "against": "y", "wrt": "x"}),
    "diff": (ng.diff, ("x*y",), {"wrt": "x", "format": "text", "exact": False, "order": 1}),
    "explain": (ng.explain, ("x*y",), {"x": 1.0, "y": 2.0, "format": "table"}),
    "taylor": (ng.taylor, ("exp(x)*y",), {"x": 0.0, "y": 2.0, "wrt": "x", "order": 3}),
    "minimize": (
        ng.minimize,
        ("(x - y)**2",),
        {"x": 1.0, "y": 2.0, "steps": 3, "lr": 0.1, "method": "adam", "tol": 1e-8, "fix": "y"},
    ),
    "minimize with bounds": (ng.minimize, ("(x - 2)**2",), {"x": 1.0, "bounds": {"x": (0, 5)}}),
    "fit": (ng.fit, ("a*x + b",), {"data": DATA, "a": 1.0, "b": 0.0, "target": "y", "fix": ()}),
    "fit with bounds": (ng.fit, ("a*x",), {"data": DATA, "a": 1.0, "bounds": {"a": "0:5"}}),
    "fit's target": (ng.fit, ("a*x",), {"data": DATA, "a": 1.0, "target": None}),
    "compile": (ng.compile, ("x*y",), {"y": 2.0}),
    "parse": (ng.parse, ("x*y",), {}),
    "Value": (ng.Value, (2.0,), {}),
    "draw_dot": (ng.draw_dot, (ng.Value(2.0) * 3,), {"rankdir": "LR", "names": {}}),
    "load_fit": (ng.load_fit, ("no such fit.json",), {}),
    "load_fits": (ng.load_fits, ("no such fit.json",), {}),
}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(CALLS)), st.data())
def test_a_bad_argument_of_any_type_raises_the_packages_errors(name, data):
    function, args, keywords = CALLS[name]
    slots = ["source", *keywords]
    slot = data.draw(st.sampled_from(slots), label="argument")
    junk = data.draw(JUNK, label="value")
    if slot == "source":
        args = (junk,)
    else:
        keywords = {**keywords, slot: junk}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            function(*args, **keywords)
        except NanogradError:
            pass
        except TypeError as error:  # naming the argument at fault
            assert slot == "source" or slot in str(error), error


def test_options_take_numpy_numbers_as_numbers():
    """A NumPy integer or float is a number for an option, as for an input; a NumPy bool is
    not."""
    plain = ng.fit("a*x", DATA, a=1.0, bounds={"a": (0, 5)}, ci=0.9, restarts=2, seed=1)
    numpy = ng.fit("a*x", DATA, a=1.0, bounds={"a": np.array([0, 5])}, ci=np.float32(0.9),
                   restarts=np.int64(2), seed=np.int32(1))  # fmt: skip
    assert numpy.parameters == plain.parameters
    assert numpy.ci["a"] == pytest.approx(plain.ci["a"], rel=1e-6)  # (0.9 as a float32)
    with pytest.raises(NanogradError, match=r"invalid value for ci: np\.True_ is not a valid"):
        ng.fit("a*x", DATA, a=1.0, ci=np.bool_(True))


def test_fit_takes_target_none_as_its_default_column():
    """target=None is the default target, the column y, as the lower layer takes it."""
    default = ng.fit("a*x", DATA, a=1.0).parameters
    assert ng.fit("a*x", DATA, a=1.0, target=None).parameters == default


def test_a_parameter_named_as_an_argument_is_told_to_take_its_start_in_inputs():
    """sigma=1 for a Gaussian's width gives fit's sigma (a column's name) a number: a
    TypeError that says so and where the start goes, not a bare one from inside."""
    gaussian = "A*exp(-(x - mu)**2/(2*sigma**2))"
    with pytest.raises(TypeError) as error:
        ng.fit(gaussian, DATA, A=1, mu=2, sigma=1)
    assert str(error.value) == (
        "sigma=1: give text, not int; a parameter named sigma takes its start in "
        "inputs={'sigma': 1}"
    )
    assert ng.fit(gaussian, DATA, A=1, mu=2, inputs={"sigma": 1}).parameters["sigma"] != 1
    with pytest.raises(TypeError, match=r"^target=\['y'\]: give text, not list$"):
        ng.fit("a*x", DATA, a=1.0, target=["y"])


def test_a_word_or_a_whole_number_of_the_wrong_type_is_a_type_error():
    """draw(rankdir=1) and draw(dpi=True) were InputErrors where digits=True was a TypeError:
    an argument of the wrong type is a TypeError that names it, and a wrong value of the
    right type stays an InputError (a number that is not whole, for a whole number)."""
    from nanograd_cli.errors import InputError

    with pytest.raises(
        TypeError, match=r"^rankdir=1: give one of 'LR', 'TB', 'RL', 'BT', not int$"
    ):
        ng.draw("x*x", x=2, rankdir=1)
    with pytest.raises(TypeError, match=r"^dpi=True: give a whole number, not bool$"):
        ng.draw("x*x", x=2, format="png", dpi=True)
    with pytest.raises(TypeError, match=r"^method=None: give one of 'sgd', .*, not NoneType$"):
        ng.minimize("x*x", x=1, method=None)
    with pytest.raises(TypeError, match=r"^steps=\[3\]: give a whole number, not list$"):
        ng.minimize("x*x", x=1, steps=[3])
    with pytest.raises(InputError, match=r"^invalid value for steps: 2\.5 is not a valid integer"):
        ng.minimize("x*x", x=1, steps=2.5)
    with pytest.raises(InputError, match=r"^invalid value for rankdir: 'up' is not one of"):
        ng.draw("x*x", x=2, rankdir="up")
    with pytest.raises(InputError, match=r"^dpi must be from 1 to 2400, not 0$"):
        ng.draw("x*x", x=2, format="png", dpi=0)
    tb = ng.draw("x*x", x=2, format="dot", rankdir="TB")
    assert ng.draw("x*x", x=2, format="dot", rankdir="tb", dpi=None) == tb
    assert ng.draw("x*x", x=2, format="png", dpi=np.int64(50)).startswith(b"\x89PNG")
