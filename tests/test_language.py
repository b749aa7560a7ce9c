"""The language: grammar, precedence, programs, scale, and every error message."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from nanograd_cli import grammar
from nanograd_cli._language import _Parser, parse
from nanograd_cli.errors import (
    InputError,
    MissingInputs,
    SourceError,
    UnknownInputs,
    speaking,
    spell,
)

ROOT = Path(__file__).resolve().parents[1]
WORKED_EXAMPLE = (ROOT / "tests" / "data" / "worked_example.txt").read_text()


ASSIGNED = (
    "only a name can be assigned to, with '='; to compare, or to write an equation (for "
    "--implicit y of nanograd diff), write '=='"
)


def value(source: str, **inputs: float) -> float:
    return parse(source).evaluate(inputs).result.data


def message(source: str) -> str:
    with pytest.raises(SourceError) as caught:
        parse(source)
    return spell(caught.value.message, "cli")


def test_grammar_has_no_conflicts():
    lark = pytest.importorskip("lark")
    lark.Lark(Path(grammar.grammar_path()).read_text(), parser="lalr", strict=True)


def test_stored_tables_match_the_grammar_file():
    """The stored tables were made from this grammar; rebuilt ones parse the same."""
    from nanograd_cli import _tables

    text = Path(grammar.grammar_path()).read_text()
    assert _tables.TABLES["grammar"] == text, "run: python -m nanograd_cli.grammar"
    fresh = _Parser(grammar.build_tables(text))
    for source in [WORKED_EXAMPLE, "-x**2^y; z = 2**-x\n(x\n+1)", "sin(x)*e/pi"]:
        a, b = parse(source), fresh.parse(source)
        assert (a.code, a.inputs, a.result, a.labels) == (b.code, b.inputs, b.result, b.labels)


def test_edited_grammar_is_used_without_stored_tables(monkeypatch, tmp_path):
    edited = Path(grammar.grammar_path()).read_text().replace('POW: "**" | "^"', 'POW: "**"')
    path = tmp_path / "nanograd.lark"
    path.write_text(edited)
    monkeypatch.setattr(grammar, "grammar_path", lambda: path)
    with pytest.raises(SourceError):
        _Parser(grammar.load_tables()).parse("2^3")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("-x**2", -9.0),
        ("2**3**2", 512.0),
        ("2^3^2", 512.0),
        ("2**-x", 0.125),
        ("-2**2", -4.0),
        ("1 - 2 - 3", -4.0),
        ("12 / 3 / 2", 2.0),
        ("2 + 3 * 4", 14.0),
        ("(2 + 3) * 4", 20.0),
        ("+x", 3.0),
        ("--x", 3.0),
        ("x * -x", -9.0),
        ("2.", 2.0),
        (".5", 0.5),
        ("1e-3", 0.001),
        ("2.5E+4", 25000.0),
        ("pi", math.pi),
        ("e", math.e),
        ("log(e)", 1.0),
    ],
)
def test_precedence_and_numbers(source, expected):
    inputs = {"x": 3.0} if "x" in source else {}
    assert value(source, **inputs) == pytest.approx(expected, rel=1e-15)


def test_statements_and_result():
    assert value("a = 2; b = a * 3") == 6.0
    assert value("a = 2\n\nb = a * 3\n# done\n") == 6.0
    assert value("x;;y;", x=1.0, y=2.0) == 2.0
    assert value("a = 1\r\na += 2\r\n") == 3.0
    assert value("a = 10; a -= 1; a *= 2; a /= 3") == 6.0
    assert value("\ta = 2 ;\ta") == 2.0
    assert value("s = (x +\n y\n)", x=1.0, y=2.0) == 3.0


def test_inputs_in_order_of_first_read():
    assert parse("y = x + y").inputs == ["x", "y"]
    assert parse("b = c * a; a").inputs == ["c", "a"]
    assert parse("x += y").inputs == ["x", "y"]
    assert parse("q = 1; q + z").inputs == ["z"]
    assert parse("Xy_1 + xy_1").inputs == ["Xy_1", "xy_1"]


def test_worked_example_program():
    program = parse(WORKED_EXAMPLE)
    assert program.inputs == ["x", "y"]
    evaluation = program.gradients({"x": -4.0, "y": 2.0})
    grads = {name: node.grad for name, node in evaluation.inputs.items()}
    assert round(evaluation.result.data, 4) == 4.6945
    assert (round(grads["x"], 4), round(grads["y"], 4)) == (24.7180, 106.6648)


def test_evaluate_many_points_without_reparsing():
    program = parse("x*y + tanh(x)")
    for x in (-1.0, 0.0, 2.0):
        evaluation = program.gradients({"x": x, "y": 3.0})
        assert evaluation.inputs["x"].grad == pytest.approx(3 + 1 - math.tanh(x) ** 2)


def test_missing_and_unknown_inputs_listed_at_once():
    program = parse("a * b + c")
    with pytest.raises(MissingInputs) as caught:
        program.evaluate({"b": 1.0})
    assert str(caught.value) == "missing values for inputs a, c"
    assert caught.value.hint == "give a=VALUE, c=VALUE"  # as Python words it
    with speaking("cli"):
        assert caught.value.hint == "pass --a VALUE --c VALUE"
    with pytest.raises(UnknownInputs) as caught:
        program.evaluate({"a": 1.0, "b": 1.0, "c": 1.0, "z": 2.0})
    assert str(caught.value) == "z is not an input of this source (its inputs: a, b, c)"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("2x", "missing operator between '2' and 'x': write 2*x"),
        ("x y", "missing operator between 'x' and 'y': write x*y"),
        ("2(x+1)", "missing operator before '(': write 2*(...)"),
        ("x +", "expected an expression after '+'"),
        ("x + * y", "expected an expression after '+', found '*'"),
        ("x = ", "expected an expression after '='"),
        ("* x", "expected an expression, found '*'"),
        ("(x + 1", "'(' is never closed"),
        ("x)", "unmatched ')'"),
        ("tahn(x)", "unknown function tahn: did you mean tan or tanh or atan?"),
        ("pi = 3", "pi is a constant and cannot be assigned: choose another name, such as pi1"),
        ("e += 1", "e is a constant and cannot be assigned: choose another name, such as e1"),
        (
            "e1 = 2; e = c - d",
            "e is a constant and cannot be assigned: choose another name, such as e2",
        ),
        ("π = 3", "π is a constant and cannot be assigned: choose another name, such as pi1"),
        ("sin = 3", "sin is a function and cannot be assigned: choose another name, such as sin1"),
        ("√x", "unexpected character '√': write 'sqrt(...)'"),
        ("sin + 1", "sin is a function: call it as sin(...)"),
        ("x = 1; x(2)", "x is not a function; to multiply, write x*(...)"),
        ("sin(x, y)", "sin takes 1 argument, not 2"),
        ("sin()", "sin takes 1 argument, not 0"),
        ("3 = x", ASSIGNED),
        ("where(x = 2, 1, 0)", ASSIGNED),
        ("x <> y", "unknown comparison '<>': write '!='"),
        ("x =< y", "unknown comparison '=<': write '<='"),
        ("x => y", "unknown comparison '=>': write '>='"),
        ("x === y", "unknown comparison '===': write '=='"),
        ("sum(W, axis=0)", "sum takes its arguments in order, not by name: write 0, not axis=0"),
        (
            "softmax(z, dim = -1)",
            "softmax takes its arguments in order, not by name: write -1, not dim=-1",
        ),
        ("sum(W, axis=)", "sum takes its arguments in order, not by name: write a value"),
        ("True + x", "True is Python's, not the language's: a comparison is 1 or 0 (x > 0)"),
        (
            "sum(W[:, None])",
            "None is Python's, not the language's: an array gains no new axis (x[:, None]); "
            "arrays broadcast from their last axes, as NumPy's do, and .T turns a matrix",
        ),
        ("where(x =< 0, 0, x)", "unknown comparison '=<': write '<='"),
        ("y = x => 0", "unknown comparison '=>': write '>='"),
        ("x < > y", "expected an expression after '<', found '>'"),
        (
            "0 < x <= 1",
            "unexpected '<=': comparisons do not chain; for a < b < c write (a < b)*(b < c), "
            "or put one comparison in parentheses",
        ),
        ("!x", "unexpected character '!': write x != y for not equal, and x == 0 for not x"),
        ("x ! y", "unexpected character '!': write x != y for not equal, and x == 0 for not x"),
        ("5!", "unexpected character '!': the language has no factorial: n! is gamma(n + 1)"),
        (
            "(n + 1)! / 2",
            "unexpected character '!': the language has no factorial: n! is gamma(n + 1)",
        ),
        ("arcsinh(x)", "unknown function arcsinh: did you mean asinh?"),
        ("gammaln(x)", "unknown function gammaln: did you mean lgamma?"),
        ("arcsec(x)", "unknown function arcsec: did you mean acos(1/x)?"),
        ("arcsech(x)", "unknown function arcsech: did you mean acosh(1/x)?"),
        ("arctan2(y, x)", "unknown function arctan2: did you mean atan2?"),
        ("trigamma(x)", "unknown function trigamma: did you mean polygamma(1, x)?"),
        ("trigamma(t + 1)", "unknown function trigamma: did you mean polygamma(1, t + 1)?"),
        ("arcsec(2*t)", "unknown function arcsec: did you mean acos(1/(2*t))?"),
        ("exp2(y - 1)", "unknown function exp2: did you mean 2**(y - 1)?"),
        ("root(y, 3)", "unknown function root: did you mean x**(1/n)?"),
        ("inverf(x)", "unknown function inverf: did you mean erfinv?"),
        (
            "acot(x)",
            "unknown function acot: did you mean atan(1/x) (a jump at 0, as SymPy's acot) or "
            "pi/2 - atan(x) (continuous)?",
        ),
        ("x % % 2", "expected an expression after '%', found '%'"),
        ("1e400", "the number 1e400 is too large for a float"),
        (
            "x*1e-400",
            "the number 1e-400 is too small for a float (it would be 0): write 0 if 0 is meant",
        ),
        ("{1, 2}", "unexpected character '{': the language has no sets; an array is [1, 2, 3]"),
        ("[1, 2", "'[' is never closed"),
        ("(1 + 2]", "'(' is not closed before the ']' at column 7"),
        ("x]", "unmatched ']'"),
        ("__import__('os')", 'unexpected character "\'": the language has no strings'),
        ("x.__class__", "unexpected character '.'"),
        ("lambda: x", "unexpected 'lambda': Python's keywords are not part of the language"),
        ("x:2", "unexpected ':': a colon is for slices, inside brackets, as in x[1:3]"),
        ("x if y else z", "unexpected 'if': Python's keywords are not part of the language"),
        ("x\x00", "unexpected character '\\x00'"),
        ("(,)", "expected an expression after '(', found ','"),
    ],
)
def test_error_messages(source, expected):
    assert message(source) == expected


def test_error_shows_line_column_and_caret():
    with pytest.raises(SourceError) as caught:
        parse("a = 1\nb = a +\n")
    error = caught.value
    assert (error.line, error.column) == (2, 8)
    assert str(error) == (
        "line 2, column 8: expected an expression after '+', found end of line\n"
        "  2 | b = a +\n"
        "             ^"
    )


def test_end_of_input_is_reported_at_the_end():
    with pytest.raises(SourceError) as caught:
        parse("x = (1 +\n  2 *")
    assert (caught.value.line, caught.value.column) == (1, 5)  # the '(' never closed
    with pytest.raises(SourceError) as caught:
        parse("x = 1 +   \n\n")
    assert (caught.value.line, caught.value.column) == (1, 8)


def test_empty_sources():
    for source in ("", "   ", "# only a comment\n", ";;\n"):
        with pytest.raises(InputError, match="no statements"):
            parse(source)


@pytest.mark.slow
def test_huge_sources_parse_without_recursion():
    deep = "(" * 100_000 + "x" + ")" * 100_000
    assert value(deep, x=2.0) == 2.0
    nested = "x" + "".join(f"*tanh(x+{i % 7})" for i in range(1000))
    assert parse(nested).inputs == ["x"]
    long_sum = "+".join(["x"] * 1_000_000)
    program = parse(long_sum)
    evaluation = program.gradients({"x": 1.0})
    assert evaluation.result.data == 1_000_000.0
    assert evaluation.inputs["x"].grad == 1_000_000.0
    deep_calls = "tanh(" * 100_000 + "x" + ")" * 100_000
    expected = 0.5
    for _ in range(100_000):
        expected = math.tanh(expected)
    assert parse(deep_calls).gradients({"x": 0.5}).result.data == expected


def test_non_finite_operation_is_located():
    evaluation = parse("a = x + 1\nb = log(a - 2)\nc = b * 2").evaluate({"x": 0.0})
    where = evaluation.first_non_finite()
    assert (where.line, where.column, where.message) == (2, 5, "log gave nan")
    assert parse("1/x").evaluate({"x": 0.0}).first_non_finite().message == "'/' gave inf"
    assert parse("x + 1").evaluate({"x": 0.0}).first_non_finite() is None


def test_language_reference_lists_every_operation_with_its_derivative():
    from nanograd_cli._ops import OPS

    reference = (ROOT / "docs" / "language.md").read_text()
    for name, op in OPS.items():
        shown = f"`{op.name}({', '.join(op.parameters)})`" if op.syntax == "call" else f"`{name}`"
        formulas = ", ".join(f"`{f}`" for f in op.formulas)
        row = f"| {shown} | {op.doc} | {formulas} |"
        assert row in reference, (
            f"docs/language.md's function table lacks (or differs from):\n{row}"
        )


@pytest.mark.parametrize(
    ("source", "named"),
    [
        ("a*e + b", ["e"]),
        ("-e*x + pi", ["e", "pi"]),
        ("- pi*x", ["pi"]),
        ("π*x", ["pi"]),
        ("f(t) = e*t; f(x)", ["e"]),
        ("x*2.5e3 - 2*x + exp(1)", []),
        ("sigmoid(x)", []),
    ],
)
def test_a_program_names_the_constants_its_source_writes_by_name(source, named):
    """What a column named e or pi is checked against: the constants written by name, not
    those made of digits (2.5e3) or inside a built-in function."""
    assert parse(source).constants_by_name() == named
