"""`diff`'s note under a textbook derivative that loses digits the engine keeps: its exact
text, and that it is true, the printed form evaluated against mpmath at 50 digits. Every
note is asked for (`--notes all`) but where the default is the subject."""

from __future__ import annotations

import json
import math
import warnings

import mpmath
import pytest

import nanograd_cli as ng
from tests.helpers import run

mpmath.mp.dps = 50

KEEP = "; diff --exact keeps them"
SQUARES = "# loses digits where x**2 + y**2 overflows or underflows" + KEEP
HYPOT = "# loses digits where hypot(x, y) overflows or is subnormal" + KEEP
GAUSSIAN = "# loses digits as |x| grows, up to 3 digits near 26.6 (its square rounds)" + KEEP


def _diff(*args: str, notes: str = "all") -> str:
    code, out, err = run("diff", *args, "--notes", notes)
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
            "# loses digits as x grows, all past 37 (where sigmoid rounds to 1)" + KEEP,
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
            "d_x = y*asinh(x)**(y - 1)/sqrt(x**2 + 1)\n# asinh(x) != 0; loses digits where "
            "asinh(x)**(y - 1) is below 2.2e-308 (it rounds first) and for "
            "|x| > 1e154 (its square overflows)" + KEEP + "\nd_y = asinh(x)**y*log(asinh(x))\n"
            "# asinh(x) > 0; loses digits where asinh(x)**y is below 2.2e-308 (it rounds first)"
            + KEEP,
        ),
        (
            "atan2(y, x)",
            "d_y = x/(x**2 + y**2)\n" + SQUARES + "\nd_x = -y/(x**2 + y**2)\n" + SQUARES,
        ),
        ("atan2(3, x)", "-3/(x**2 + 9)\n" + SQUARES.replace("y**2", "9")),
        ("hypot(x, y)", "d_x = x/hypot(x, y)\n" + HYPOT + "\nd_y = y/hypot(x, y)\n" + HYPOT),
        ("tanh(x)", "1/cosh(x)**2\n# loses digits for |x| > 355 (cosh's square overflows)" + KEEP),
        ("erf(x)", "2*exp(-x**2)/sqrt(pi)\n" + GAUSSIAN),
        ("erfc(3*x)", "-6*exp(-9*x**2)/sqrt(pi)\n" + GAUSSIAN.replace("|x|", "|3*x|")),
        (
            "x**y",
            "d_x = y*x**(y - 1)\n# x != 0; loses digits where x**(y - 1) is below 2.2e-308 (it "
            "rounds first)" + KEEP + "\nd_y = x**y*log(x)\n# x > 0; "
            "loses digits where x**y is below 2.2e-308 (it rounds first)" + KEEP,
        ),
        # no note where the rewrite loses nothing: tan's 1/cos(x)**2 (as near mpmath as
        # 1 + tan(x)**2), hypot of a number (never subnormal), a power of a number exponent
        # or of a number base (at most |n|/2 units of the subnormal grid more), x**x (never
        # below 0.69), nor where erf's exp(-x**2) is merged into another exp
        ("tan(x)", "1/cos(x)**2"),
        ("hypot(x, 3)", "x/hypot(x, 3)"),
        ("x**3", "3*x**2"),
        ("2**x", "2**x*log(2)"),
        ("x**x", "x**x*(log(x) + 1)\n# x > 0"),
        ("erfinv(erf(x))", "exp(erfinv(erf(x))**2 - x**2)"),
        (
            "asinh(x)*sigmoid(x)",
            "sigmoid(x)*(1/sqrt(x**2 + 1) - asinh(x)*(sigmoid(x) - 1))\n# loses digits as x "
            "grows, all past 37 (where sigmoid rounds to 1) and for |x| > 1e154 (its square "
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
    # a short one on one line
    assert _diff("--format", "latex", "sin(x)/x") == (
        "\\begin{aligned}\n"
        r"\frac{df}{dx} &= \frac{x \cos(x) - \sin(x)}{x^{2}} \\"
        "\n"
        r"&\qquad \text{loses digits where } x^{2} \text{ overflows};\ \text{diff -{}-exact "
        r"keeps them}"
        "\n\\end{aligned}\n"
    )
    assert _diff("--format", "latex", "asin(x)") == (
        "\\begin{aligned}\n"
        "\\frac{df}{dx} &= \\frac{1}{\\sqrt{1 - x^{2}}} \\\\\n"
        "&\\qquad \\text{loses digits near } \\lvert x \\rvert \\text{ = 1 (1 - its square "
        "cancels)}; \\\\\n&\\qquad \\text{diff -{}-exact keeps them}\n"
        "\\end{aligned}\n"
    )
    d = ng.diff("asinh(x)", notes="all")
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
    textbook, exact = ng.diff(source, notes="all"), ng.diff(source, exact=True)
    assert "loses digits" in textbook.conditions["x"]
    # where the note says so, the printed form loses digits (near 1, up to half of them, at
    # 1e-8 from it: closer, the square of a float near 1 is nearly exact) and the exact one
    # keeps them; elsewhere the two agree with the true value
    assert max(_error(textbook.text, reference, x) for x in lost) > 1e-10
    for x in lost + kept:
        assert _error(exact.text, reference, x) < 1e-14, x
    for x in kept:
        assert _error(textbook.text, reference, x) < 1e-14, x


# Measured in units in the last place of the true value (of the subnormal grid below
# 2.2e-308, where these derivatives often are): source, the derivative's name, the
# derivative in mpmath, points where the note says digits are lost, points where it does not.
CASES_2 = [
    # cosh(x)**2 overflows past 355.58, where the derivative is 5.6e-309
    (
        "tanh(x)",
        "x",
        lambda x: 1 / mpmath.cosh(x) ** 2,
        [{"x": 356.0}, {"x": -360.0}, {"x": 370.0}],
        [{"x": 0.5}, {"x": -3.0}, {"x": 20.0}, {"x": 354.0}],
    ),
    # x**2 rounds, and exp(-x**2) multiplies its error by x**2 (165 units in the last place
    # at 26.12, 97 at -26.6, 18 at 5.1); past 26.62 the subnormal grid is coarser than that
    (
        "erf(x)",
        "x",
        lambda x: 2 * mpmath.exp(-x * x) / mpmath.sqrt(mpmath.pi),
        [{"x": 26.12}, {"x": -26.6}, {"x": 13.37}, {"x": 5.1}],
        [{"x": 0.5}, {"x": -2.0}, {"x": 0.25}],
    ),
    # x**2 + y**2 overflows past 1.3e154 and underflows below 1.5e-154
    (
        "atan2(y, x)",
        "y",
        lambda x, y: x / (x * x + y * y),
        [{"x": 1e155, "y": 1e155}, {"x": 1e300, "y": 1.0}, {"x": 1e-160, "y": 1e-160}],
        [{"x": 3.0, "y": 2.0}, {"x": 3e150, "y": 1e150}, {"x": 2e-150, "y": 1e-150}],
    ),
    (
        "atan2(y, x)",
        "x",
        lambda x, y: -y / (x * x + y * y),
        [{"x": 1.7e308, "y": 1.6e308}, {"x": 3e-200, "y": 1e-200}],
        [{"x": 3.0, "y": 2.0}, {"x": 1e-300, "y": 1.0}],
    ),
    # hypot(x, y) overflows past 1.8e308, and rounds to the subnormal grid below 2.2e-308
    (
        "hypot(x, y)",
        "x",
        lambda x, y: x / mpmath.hypot(x, y),
        [{"x": 1.6e308, "y": 1.7e308}, {"x": 5e-324, "y": 5e-324}, {"x": 3e-310, "y": 1e-310}],
        [{"x": 2.0, "y": 3.0}, {"x": 1e200, "y": 3e200}, {"x": 1e-200, "y": 3e-200}],
    ),
    # found in the printed form: x**3/(x**2 + y**2) (by y, of x**2*atan2(y, x)) where x**3
    # overflows or underflows while x**2 + y**2 does not
    (
        "x**2*atan2(y, x)",
        "y",
        lambda x, y: x**3 / (x * x + y * y),
        [{"x": 1e120, "y": 1e100}, {"x": 1e-110, "y": 1e-100}, {"x": -1e110, "y": 1e100}],
        [{"x": 3.0, "y": 2.0}, {"x": 1e90, "y": 1e100}, {"x": 1e-90, "y": 1e-100}],
    ),
    # a subnormal second argument: hypot(x, 1e-320) is subnormal where x is
    (
        "hypot(x, 1e-320)",
        "x",
        lambda x: x / mpmath.hypot(x, mpmath.mpf(1e-320)),
        [{"x": 1e-320}, {"x": -3e-320}],
        [{"x": 1.0}, {"x": -1e-300}, {"x": 1e300}],
    ),
    # the power rule and a**b*log(a) where the power is subnormal
    (
        "x**y",
        "x",
        lambda x, y: y * x ** (y - 1),
        [{"x": 2.0, "y": -1074.0}, {"x": 1e-8, "y": 40.0}, {"x": 3.0, "y": -650.0}],
        [{"x": 2.0, "y": 3.0}, {"x": 1.5, "y": -20.0}, {"x": 1e-5, "y": 62.0}],
    ),
    (
        "x**y",
        "y",
        lambda x, y: x**y * mpmath.log(x),
        [{"x": 1e300, "y": -1.05}, {"x": 7.077603431103868e-282, "y": 1.1367007420577941}],
        [{"x": 2.0, "y": 3.0}, {"x": 1e10, "y": -30.0}, {"x": 7.0, "y": 0.5}],
    ),
]


def _ulps_at(text: str, reference, point: dict[str, float]) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = ng.parse(text)
        got = program.values({n: point[n] for n in program.inputs})[program.result]
    true = reference(**{n: mpmath.mpf(v) for n, v in point.items()})
    return float(abs(mpmath.mpf(got) - true) / math.ulp(float(true)))


@pytest.mark.parametrize(("source", "wrt", "reference", "lost", "kept"), CASES_2)
def test_the_note_is_true_to_units_in_the_last_place(source, wrt, reference, lost, kept):
    textbook = ng.diff(source, wrt=[wrt], notes="all")
    exact = ng.diff(source, wrt=[wrt], exact=True)
    assert "loses digits" in textbook.conditions[wrt]
    # at each point where the note says so, the printed form is more than 8 units in the last
    # place off, and grad and the exact form (grad's steps) within 4; elsewhere all within 4
    for point in lost:
        assert _ulps_at(textbook.text, reference, point) > 8, point
    program = ng.parse(source)
    for point in lost + kept:
        assert _ulps_at(exact.text, reference, point) <= 4, point
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            engine = program.grad(point).gradients[wrt]
        true = reference(**{n: mpmath.mpf(v) for n, v in point.items()})
        assert float(abs(engine - true)) <= 4 * math.ulp(float(true)), ("grad", point)
    for point in kept:
        assert _ulps_at(textbook.text, reference, point) <= 4, point


def test_a_note_names_the_parts_of_the_printed_form_that_overflow():
    """Found in the form printed, not in the rule it came from: the rule's x**2 + y**2, and the
    x**3 and x**2*y that the product rule put over it (atan2(y, x) underflows too, at
    (1e50, 1e-300), but there the engine loses the same digits); a quotient whose numerator
    is a number (its value underflows where its denominator overflows) has none."""
    assert _diff("x**2*atan2(y, x)") == (
        "d_x = 2*x*atan2(y, x) - x**2*y/(x**2 + y**2)\n"
        + SQUARES.replace(KEEP, "")
        + " and where x**2*y overflows or underflows"
        + KEEP
        + "\nd_y = x**3/(x**2 + y**2)\n"
        + SQUARES.replace(KEEP, " and where x**3 overflows or underflows" + KEEP)
        + "\n"
    )
    assert _diff("sin(x)/x") == (
        "(x*cos(x) - sin(x))/x**2\n# loses digits where x**2 overflows" + KEEP + "\n"
    )
    assert _diff("(3*x + 2)/(5*x - 7)") == "-31/(5*x - 7)**2\n"
    assert _diff("1/(x**2 + 1)") == "-2*x/(x**2 + 1)**2\n"  # the engine loses them too


def test_a_higher_derivative_is_noted_for_the_form_it_prints():
    """The second derivative of x**y is y*x**(y - 2)*(y - 1): the first's x**(y - 1) is not
    printed, and its note goes; the first's condition stays."""
    assert _diff("x**y", "--wrt", "x", "--order", "2") == (
        "y*x**(y - 2)*(y - 1)\n# x != 0; loses digits where x**(y - 2) is below 2.2e-308 (it "
        "rounds first)" + KEEP + "\n"
    )


def test_the_notes_in_latex_fit_an_article_page(tmp_path):
    """A note wider than the page's text is broken after its `;`, before an `and`, or between
    the words of its last part (acosh's alone was 18 pt too wide, x**y's notes with their
    conditions 180 pt): pdflatex reports no overfull box."""
    from tests.helpers import overfull, pdflatex

    sources = [
        "acosh(x)",
        "x**y",
        "asinh(x)**y",
        "asinh(x)*sigmoid(x)",
        "atan2(y, x)",
        "hypot(x, y)",
        "erf(x)*tanh(x)",
        "acosh(x)*asin(x)*x**y",
    ]
    shown = [_diff("--format", "latex", source) for source in sources]
    assert all(r"\text{diff -{}-exact keeps them}" in text for text in shown)
    assert r"&\qquad \text{and past 1e154 (it overflows)};" in shown[0]
    pdflatex(tmp_path, "\n".join(rf"\[ {text} \]" for text in shown))
    assert overfull(tmp_path) == []


def test_the_probe_finds_a_loss_near_exps_overflow_and_at_higher_orders():
    assert _diff("exp(x)/x") == (
        "exp(x)*(x - 1)/x**2\n# loses digits where exp(x)*(x - 1) overflows" + KEEP + "\n"
    )
    # against taylor's coefficient times 2!: -2*sinh(x)/cosh(x)**3 is 0 at 300, where the
    # second derivative is -2.1e-260
    assert _diff("tanh(x)", "--order", "2") == (
        "-2*sinh(x)/cosh(x)**3\n# loses digits where cosh(x)**3 overflows" + KEEP + "\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cosh(x)**3 gave inf
        assert ng.grad("-2*sinh(x)/cosh(x)**3", x=300.0).value == 0.0
        second = ng.hessian("tanh(x)", x=300.0).matrix[0][0]
    assert second == pytest.approx(-2 * mpmath.sinh(300) / mpmath.cosh(300) ** 3, rel=1e-14)


def test_no_probe_for_a_derivative_in_the_sources_names_and_no_loss_note_when_implicit():
    """A name of the source is no input of the probe (it crashed with a KeyError); an implicit
    slope is no form of the engine's, and --exact does not take --implicit."""
    assert _diff("s = x + y; x/s") == "s = x + y\nd_x = (s - x)/s**2\nd_y = -x/s**2\n"
    assert _diff("atan2(y, x)", "--implicit", "y", "--wrt", "x") == "y/x\n"
    assert _diff("asinh(x) + y", "--implicit", "y", "--wrt", "x") == "-1/sqrt(x**2 + 1)\n"


def test_a_note_of_another_kind_does_not_hide_an_overflow():
    """atanh's note is of its 1 - y**2 cancelling, not of y**2 overflowing: that is said too."""
    assert _diff("x/y + atanh(y)", "--wrt", "y") == (
        "-x/y**2 - 1/(y**2 - 1)\n# loses digits near |y| = 1 (1 - its square cancels) and where "
        "y**2 overflows or underflows" + KEEP + "\n"
    )
    assert _diff("x/sinh(x)") == (
        "(sinh(x) - x*cosh(x))/sinh(x)**2\n# loses digits where sinh(x)**2 overflows" + KEEP + "\n"
    )
    # 2*x overflows at 1.5e308, where y**3 does not
    assert _diff("x/y", "--wrt", "y", "--order", "2") == (
        "2*x/y**3\n# loses digits where y**3 overflows or underflows and where 2*x overflows"
        + KEEP
        + "\n"
    )


def test_the_exact_form_never_begins_with_two_minus_signs():
    """`--x/...` is read as an option even after -e; -(-x/...) is the same number."""
    exact = _diff("x/y", "--wrt", "y", "--order", "2", "--exact").rstrip("\n")
    assert exact == "-(-x/y/y)/y - (-x/y)/y*(1/y)"
    code, out, err = run("grad", "-e", exact, "--x", "2", "--y", "3", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["value"] == pytest.approx(2 * 2 / 27, rel=1e-15)


@pytest.mark.parametrize(
    ("args", "printed"),
    [
        # past 1e30 in size only: (x**2 + 1)**2 overflows at 1e77, x**2 at 1e154
        (["x/(x**2 + 1)"], "(1 - x**2)/(x**2 + 1)**2"),
        (["sin(x)/x"], "(x*cos(x) - sin(x))/x**2"),
        (["x**(1/3)*(x - 4)"], "4*(x - 1)/(3*x**(2/3))"),
        (["asinh(x)"], "1/sqrt(x**2 + 1)"),
        (["atan2(y, x)"], "d_y = x/(x**2 + y**2)\nd_x = -y/(x**2 + y**2)"),
        (["hypot(x, y)"], "d_x = x/hypot(x, y)\nd_y = y/hypot(x, y)"),
        (["x/y", "--wrt", "y", "--order", "2"], "2*x/y**3"),
        # x**(sin(y) - 1) is 1e-60 at the least for such inputs (not below 2.2e-308)
        (["x**sin(y)", "--wrt", "x"], "x**(sin(y) - 1)*sin(y)\n# x != 0"),
        # at inputs of usual size: exp overflows at 709.8, cosh's cube at 237
        (["exp(x)/x"], "exp(x)*(x - 1)/x**2\n# loses digits where exp(x)*(x - 1) overflows" + KEEP),
        (
            ["tanh(x)", "--order", "2"],
            "-2*sinh(x)/cosh(x)**3\n# loses digits where cosh(x)**3 overflows" + KEEP,
        ),
        (
            ["x/y + atanh(y)", "--wrt", "y"],
            "-x/y**2 - 1/(y**2 - 1)\n# loses digits near |y| = 1 (1 - its square cancels)" + KEEP,
        ),
        (
            ["x**y", "--wrt", "x", "--order", "2"],
            "y*x**(y - 2)*(y - 1)\n# x != 0; loses digits where x**(y - 2) is below 2.2e-308 (it "
            "rounds first)" + KEEP,
        ),
    ],
)
def test_by_default_the_notes_are_of_inputs_of_usual_size(args, printed):
    """A course's quotient rule has no note of a part that overflows only past 1e30 in size;
    a loss for inputs from 1e-30 to 1e30 (exp(709), x**39 at 1e-8) is said as before."""
    assert _diff(*args, notes="usual") == printed + "\n"
    default = ng.diff(
        args[0],
        **({"wrt": [args[2]]} if "--wrt" in args else {}),
        **({"order": int(args[-1])} if "--order" in args else {}),
    )
    assert str(default) == printed


def test_the_power_rules_note_goes_where_the_power_is_never_below_the_normal_range():
    """The power rule's note says that x**(y - 1) may be below 2.2e-308; of x**sin(y), it
    is only past 1e30 in size (x**(sin(y) - 1) is at least 1e-60 below), so only --notes
    all says it; of x**y it is at x = 1e-8, y = 40, and the default says it too."""
    note = "loses digits where x**(sin(y) - 1) is below 2.2e-308 (it rounds first)"
    assert note not in _diff("x**sin(y)", "--wrt", "x", notes="usual")
    assert note in _diff("x**sin(y)", "--wrt", "x")
    assert note not in _diff("x**sin(y)", "--wrt", "x", "--steps", notes="usual")
    assert "x**(y - 1) is below 2.2e-308" in _diff("x**y", "--wrt", "x", notes="usual")
