"""What the commands report: one type per kind of result, each written by `render`."""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import SourceError


@dataclass
class Gradients:
    """The value at one point and its gradient with respect to the inputs asked for.

    `non_finite` is where the first operation that made nan or inf is, if one did.
    """

    value: float
    inputs: dict[str, float]
    gradients: dict[str, float]
    non_finite: SourceError | None = field(default=None, compare=False, repr=False)

    def only(self, wrt: list[str] | tuple[str, ...]) -> Gradients:
        """The same result with the gradients with respect to `wrt` only (0 for a name it
        does not read); all of them when `wrt` is empty."""
        if not wrt:
            return self
        gradients = {name: self.gradients.get(name, 0.0) for name in wrt}
        return Gradients(self.value, self.inputs, gradients, self.non_finite)


@dataclass
class LineGradients:
    """`grad --each-line`: one line's result, with the line's number and text."""

    line: int
    expression: str
    result: Gradients


@dataclass
class Hessian:
    """Value, gradient and the matrix of second derivatives: hessian[x][y] = d2f/dx dy."""

    value: float
    inputs: dict[str, float]
    gradients: dict[str, float]
    hessian: dict[str, dict[str, float]]
    non_finite: SourceError | None = field(default=None, compare=False, repr=False)


@dataclass
class Check:
    """One input's analytic derivative against its central finite difference."""

    analytic: float
    numeric: float
    abs_error: float
    rel_error: float
    passed: bool


@dataclass
class GradientCheck:
    """Every input's check, and whether all passed."""

    value: float
    inputs: dict[str, float]
    checks: dict[str, Check]
    non_finite: SourceError | None = field(default=None, compare=False, repr=False)

    @property
    def passed(self) -> bool:
        return all(check.passed for check in self.checks.values())


@dataclass
class Minimum:
    """Where gradient descent stopped: the point, its value and gradient, and how it got there."""

    value: float
    inputs: dict[str, float]
    gradients: dict[str, float]
    gradient_norm: float
    steps: int
    converged: bool
