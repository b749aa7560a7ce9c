"""`diff`'s note under a textbook derivative that loses digits the engine keeps: its exact
text, and that it is true, the printed form evaluated against mpmath at 50 digits."""

from __future__ import annotations

import warnings

import mpmath
import pytest

import nanograd_cli as ng
from tests.helpers import run

mpmath.mp.dps = 50

KEEP = "; diff --exact keeps them"


def _diff(*args: str) -> str:
    code, out, err = run("diff", *args)
    assert code == 0, err
    return out


@pytest.mark.parametrize(
    ("source", "printed"),
    [
        (
            "asinh(x)",
            "1/sqrt(x**2 + 1)\n# loses digits for |x| > 1e154 (its square overflows)" + KEEP,
        ),
        (
            "sigmoid(x)",
            "sigmoid(x)*(1 - sigmoid(x))\n"
            "# loses digits as x grows, all past 37 (1 - sigmoid cancels)" + KEEP,
        ),
        (
            "acosh(x)",
            "1/sqrt(x**2 - 1)\n# loses digits near x = 1 (its square - 1 cancels) and past "
            "1e154 (it overflows)" + KEEP,
        ),
        (
            "asin(x)",
            "1/sqrt(1 - x**2)\n# loses digits near |x| = 1 (1 - its square cancels)" + KEEP,
        ),
        (
            "acos(x)",
            "-1/sqrt(1 - x**2)\n# loses digits near |x| = 1 (1 - its square cancels)" + KEEP,
        ),
        (
            "atanh(2*x)",
            "2/(1 - 4*x**2)\n# loses digits near |2*x| = 1 (1 - its square cancels)" + KEEP,
        ),
        # with a condition, and two notes in one line
        (
            "asinh(x)**y",
            "d_x = y*asinh(x)**(y - 1)/sqrt(x**2 + 1)\n# asinh(x) != 0; loses digits for |x| > "
            "1e154 (its square overflows)" + KEEP + "\nd_y = asinh(x)**y*log(asinh(x))\n"
            "# asinh(x) > 0",
        ),
        (
            "asinh(x)*sigmoid(x)",
            "sigmoid(x)*(1/sqrt(x**2 + 1) - asinh(x)*(sigmoid(x) - 1))\n# loses digits as x "
            "grows, all past 37 (1 - sigmoid cancels) and for |x| > 1e154 (its square "
            "overflows)" + KEEP,
        ),
        # no note where the rule is not used, nor in the exact form
        ("sinh(x)", "cosh(x)"),
        ("--exact asinh(x)", "1/hypot(1, x)"),
    ],
)
def test_the_note_as_printed(source: str, printed: str) -> None:
    args = source.split(" ") if source.startswith("--") else [source]
    assert _diff(*args) == printed + "\n"


def test_the_note_in_latex_and_python() -> None:
    assert _diff("--format", "latex", "asin(x)") == (
        "\\begin{aligned}\n"
        "d_{x} &= \\frac{1}{\\sqrt{1 - x^{2}}} \\\\\n"
        "&\\qquad \\text{loses digits near } \\lvert x \\rvert \\text{ = 1 (1 - its square "
        "cancels)};\\ \\text{diff -{}-exact keeps them}\n"
        "\\end{aligned}\n"
    )
    d = ng.diff("asinh(x)")
    assert d.text == "1/sqrt(x**2 + 1)"
    assert d.conditions == {"x": "loses digits for |x| > 1e154 (its square overflows)" + KEEP}


def _sigmoid_slope(x: mpmath.mpf) -> mpmath.mpf:
    return mpmath.exp(-x) / (1 + mpmath.exp(-x)) ** 2


# source, its derivative in mpmath, points where the note says digits are lost, points
# where it does not
CASES = [
    (
        "asinh(x)",
        lambda x: 1 / mpmath.sqrt(x**2 + 1),
        [1e155, -1e200, 1e300],
        [1e150, -3.0, 0.5, 1e-200],
    ),
    ("sigmoid(x)", _sigmoid_slope, [25.0, 30.0, 40.0], [-40.0, -5.0, 0.0, 2.0]),
    (
        "acosh(x)",
        lambda x: 1 / mpmath.sqrt(x**2 - 1),
        [1 + 1e-8, 1 + 3e-8, 1e155, 1e300],
        [1.5, 10.0, 1e150],
    ),
    (
        "asin(x)",
        lambda x: 1 / mpmath.sqrt(1 - x**2),
        [1 - 1e-8, -(1 - 3e-8), 1 - 7e-9],
        [0.5, -0.3, 0.9, 1e-200],
    ),
    (
        "atanh(2*x)",
        lambda x: 2 / (1 - 4 * x**2),
        [0.5 - 5e-9, -(0.5 - 1.5e-8), 0.5 - 3.5e-9],
        [0.1, -0.3, 0.45],
    ),
]


def _error(text: str, reference, x: float) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ng.grad(text, x=x).value
    true = reference(mpmath.mpf(x))
    return float(abs((mpmath.mpf(got) - true) / true))


@pytest.mark.parametrize(("source", "reference", "lost", "kept"), CASES)
def test_the_note_is_true(source: str, reference, lost: list[float], kept: list[float]) -> None:
    textbook, exact = ng.diff(source), ng.diff(source, exact=True)
    assert "loses digits" in textbook.conditions["x"]
    # where the note says so, the printed form loses digits (near 1, up to half of them, at
    # 1e-8 from it: closer, the square of a float near 1 is nearly exact) and the exact one
    # keeps them; elsewhere the two agree with the true value
    assert max(_error(textbook.text, reference, x) for x in lost) > 1e-10
    for x in lost + kept:
        assert _error(exact.text, reference, x) < 1e-14, x
    for x in kept:
        assert _error(textbook.text, reference, x) < 1e-14, x
