"""The first stage of a fit without bounds or a robust loss takes SciPy's trust-region steps
(`least_squares(method="trf", x_scale="jac")`) without SciPy's per-step overhead: on the same
residuals it stops at the same point, bit for bit, after as many evaluations, for the same
reason. So does the second stage, MINPACK's Levenberg-Marquardt, called without
least_squares' wrappers."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nanograd_cli import fitting
from nanograd_cli._io import read_table
from nanograd_cli._language import parse
from nanograd_cli._trust_region import minimize

from .helpers import DATA

least_squares = pytest.importorskip("scipy.optimize").least_squares

NIST = DATA / "nist"
PROBLEMS = {p["name"]: p for p in json.loads((NIST / "problems.json").read_text())}
FAST = ["Misra1a", "DanWood", "Chwirut2", "MGH09", "BoxBOD", "Rat42", "Rat43", "Eckerle4"]
TOLERANCES = {name: fitting.FIRST_STAGE[name] for name in ("ftol", "xtol", "gtol")}


def problem_of(model: str, columns: dict, starts: dict, target: str | None = None):
    """A fit's residuals and Jacobian in the solver's units (as `fit` gives them to its
    solver), counting the trial points where a residual is not finite, and the start."""
    problem = fitting._Problem(
        parse(model), columns, starts, parse(target) if target else None, None, []
    )
    x0 = problem.choose_units()
    not_finite = []

    def residuals(x):
        problem.evaluate(x)
        if not np.all(np.isfinite(problem.residuals)):
            not_finite.append(x)
        return problem.residuals.copy()

    def jacobian(x):
        problem.evaluate(x)
        return problem.jacobian.copy(order="F")

    return residuals, jacobian, x0, not_finite


def assert_scipys_steps(residuals, jacobian, x0, max_nfev: int = 10_000):
    """The same steps as SciPy's, or the same error (a Jacobian that is not finite)."""
    with np.errstate(all="ignore"):
        try:
            theirs = least_squares(residuals, x0, jac=jacobian, max_nfev=max_nfev,
                                   **fitting.FIRST_STAGE)  # fmt: skip
        except ValueError as error:
            with pytest.raises(ValueError, match=f"^{re.escape(str(error))}$"):
                minimize(residuals, jacobian, x0, max_nfev, **TOLERANCES)
            return None
    ours = minimize(residuals, jacobian, x0, max_nfev, **TOLERANCES)
    assert ours.x.tobytes() == theirs.x.tobytes(), (ours.x, theirs.x)
    assert (ours.status, ours.nfev, ours.njev) == (theirs.status, theirs.nfev, theirs.njev)
    assert ours.message == theirs.message
    return ours


def nist(name: str, start: str):
    problem = PROBLEMS[name]
    columns = read_table(str(NIST / problem["data"]), "csv").columns
    starts = dict(zip(problem["parameters"], problem[start], strict=True))
    return problem_of(problem["model"], columns, starts, problem.get("target"))


@pytest.mark.parametrize("start", ["start1", "start2"])
@pytest.mark.parametrize("name", FAST)
def test_the_nist_problems_take_scipys_steps(name, start):
    with np.errstate(all="ignore"):
        assert_scipys_steps(*nist(name, start)[:3])


@pytest.mark.slow
def test_all_54_nist_problems_take_scipys_steps():
    with np.errstate(all="ignore"):
        for name in PROBLEMS:
            for start in ("start1", "start2"):
                assert_scipys_steps(*nist(name, start)[:3])


DECAY_X = np.linspace(0, 4, 30)
DECAY_Y = 2.5 * np.exp(-1.3 * DECAY_X) + 0.5 + 0.02 * np.cos(11 * DECAY_X)


@settings(max_examples=40, deadline=None)
@given(
    a=st.floats(-10, 10),
    b=st.floats(-3, 3),
    c=st.floats(-10, 10),
    max_nfev=st.sampled_from([1, 2, 5, 10_000]),
)
def test_any_start_and_any_budget_take_scipys_steps(a, b, c, max_nfev):
    """From any start, with any budget (1 evaluation: out of them at once, status 0)."""
    residuals, jacobian, x0, _ = problem_of(
        "a*exp(-b*x) + c", {"x": DECAY_X, "y": DECAY_Y}, {"a": a, "b": b, "c": c}
    )
    with np.errstate(all="ignore"):
        solved = assert_scipys_steps(residuals, jacobian, x0, max_nfev)
    if max_nfev == 1 and solved is not None:
        assert solved.status == 0 and solved.message.startswith("The maximum number")


def test_a_trial_point_where_a_residual_is_not_finite_is_a_shorter_step():
    """log(b*x) from b = 0.05: the first steps overshoot to b < 0 (nan), and the solver
    comes back with shorter ones, as SciPy's does."""
    x = np.linspace(1, 10, 12)
    residuals, jacobian, x0, not_finite = problem_of(
        "log(b*x) + a", {"x": x, "y": np.log(3 * x) + 0.01 * np.sin(x)}, {"a": 0, "b": 0.05}
    )
    with np.errstate(all="ignore"):
        solved = assert_scipys_steps(residuals, jacobian, x0)
    assert not_finite and solved.status > 0


def test_a_singular_jacobian_takes_scipys_steps():
    """a*b*x: the columns of a and b are proportional everywhere, the Jacobian is never of
    full rank, and the step is always the Levenberg-Marquardt one."""
    x = np.linspace(0, 2, 9)
    with np.errstate(all="ignore"):
        solved = assert_scipys_steps(
            *problem_of("a*b*x", {"x": x, "y": 3 * x + 0.1}, {"a": 1, "b": 1})[:3]
        )
    assert solved.status > 0


def test_a_start_whose_residuals_are_not_finite_is_refused_as_scipy_refuses_it():
    with pytest.raises(ValueError, match=r"^Residuals are not finite in the initial point\.$"):
        minimize(lambda x: np.array([math.nan, 1.0]), lambda x: np.eye(2), np.zeros(2), 10,
                 **TOLERANCES)  # fmt: skip


def test_a_jacobian_not_finite_is_scipys_error():
    """a = 0 and exp(-b*x) past the largest float: d/db is 0*inf, nan. SciPy's SVD refuses
    it with its message, which a fit's stage reports (the fit itself refuses such a start
    before any stage)."""
    residuals, jacobian, x0, _ = problem_of(
        "a*exp(-b*x) + c", {"x": DECAY_X, "y": DECAY_Y}, {"a": 0, "b": -300, "c": 0}
    )
    with np.errstate(all="ignore"):
        assert not np.all(np.isfinite(jacobian(x0)))
        assert assert_scipys_steps(residuals, jacobian, x0) is None


@pytest.mark.parametrize("start", ["start1", "start2"])
@pytest.mark.parametrize("name", FAST)
def test_the_second_stage_is_least_squares_lm_to_the_bit(name, start):
    """`levenberg_marquardt` is `least_squares(method="lm", x_scale="jac")`: the same point,
    evaluations and status, from NIST's starts (and with a budget it runs out of)."""
    residuals, jacobian, x0, _ = nist(name, start)
    tolerances = {k: fitting.SECOND_STAGE[k] for k in ("ftol", "xtol", "gtol")}
    for budget in (10_000, 3):
        with np.errstate(all="ignore"):
            theirs = least_squares(residuals, x0, jac=jacobian, max_nfev=budget,
                                   **fitting.SECOND_STAGE)  # fmt: skip
            ours = fitting.levenberg_marquardt(residuals, jacobian, x0, budget, **tolerances)
        assert ours.x.tobytes() == theirs.x.tobytes(), (ours.x, theirs.x)
        assert (ours.status, ours.nfev, ours.njev) == (theirs.status, theirs.nfev, theirs.njev)
        assert ours.message == theirs.message


def test_the_second_stage_refuses_a_start_whose_residuals_are_not_finite_as_scipy_does():
    with pytest.raises(ValueError, match=r"^Residuals are not finite in the initial point\.$"):
        fitting.levenberg_marquardt(lambda x: np.array([math.nan, 1.0]), lambda x: np.eye(2),
                                    np.zeros(2), 10, **TOLERANCES)  # fmt: skip
