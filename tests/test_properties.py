"""Random expressions through the whole path: text -> program -> graph -> gradients, checked
against central finite differences and, for the parse, against precedence rules."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nanograd_cli import parse

from .helpers import POINT, expressions


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(expressions())
def test_gradients_match_finite_differences(source):
    program = parse(source)
    values = {name: POINT[name] for name in program.inputs}
    evaluation = program.gradients(values)
    assume(math.isfinite(evaluation.result.data) and abs(evaluation.result.data) < 1e6)
    for name, node in evaluation.inputs.items():
        h = 1e-6
        up = parse(source).evaluate({**values, name: values[name] + h}).result.data
        down = parse(source).evaluate({**values, name: values[name] - h}).result.data
        numeric = (up - down) / (2 * h)
        assert math.isclose(node.grad, numeric, rel_tol=1e-4, abs_tol=1e-5), (source, name)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(expressions())
def test_same_source_same_bits(source):
    values = {name: POINT[name] for name in parse(source).inputs}
    a = parse(source).gradients(values)
    b = parse(source).gradients(values)
    assert repr(a.result.data) == repr(b.result.data)
    assert [repr(v.grad) for v in a.inputs.values()] == [repr(v.grad) for v in b.inputs.values()]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(expressions(), st.sampled_from(["\n", " ", "\t"]))
def test_whitespace_and_newlines_in_parentheses_do_not_matter(source, blank):
    values = {name: POINT[name] for name in parse(source).inputs}
    spaced = source.replace("(", "(" + blank).replace(")", blank + ")")
    assert parse(spaced).evaluate(values).result.data == parse(source).evaluate(values).result.data
