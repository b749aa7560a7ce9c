"""What a user's code does with each public name of nanograd_cli, type-checked with `mypy
--strict`: by CI (.ci/run), and against the installed wheel, where the types come from its
py.typed (tests/test_packaging.py). Not a test module: nothing here runs under pytest."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

import nanograd_cli
from nanograd_cli import (
    BatchFunction,
    Fit,
    Fits,
    NanogradWarning,
    Program,
    Value,
    check,
    compile,
    diff,
    draw,
    draw_dot,
    explain,
    fit,
    grad,
    hessian,
    jacobian,
    load_fit,
    load_fits,
    minimize,
    parse,
    plot,
    taylor,
)
from nanograd_cli.errors import ShapeProblem
from nanograd_cli.results import DerivedQuantity, FitStatistics

# The engine: every operator and function returns a Value.
x = Value(2.0)
y = Value(-3)
z = (x * y + 1) ** 2 - x / 3 + 2 * x.tanh() + (-y).exp() + abs(y) + 1 / x
z = z.sigmoid() + z.relu() + z.log1p() + z.sqrt() + z.sin() + 2.0**x
z.backward()
gradient: float = x.grad
data: float = z.data
order: list[Value] = z.topological_order()
children: tuple[Value, ...] = z.children
z.zero_grad()

# One function per command.
result = grad("x*y + tanh(x)", x=2, y=3)
value: float = result.value
gradients: dict[str, float] = result.gradients
only = result.only(["x"])
outputs = jacobian("u = x*y; v = x + y; u, v", x=2, y=3)
values: dict[str, float] = outputs.values
du_dx: float = outputs.jacobian["u"]["x"]
second = hessian("x*y + tanh(x)", x=2, y=3)
d2: float = second.hessian["x"]["y"]
as_vector: np.ndarray = result.to_numpy()
as_matrices: tuple[np.ndarray, np.ndarray] = (outputs.matrix, second.matrix)
eigenvalues = np.linalg.eigvalsh(np.asarray(second))
series = taylor("exp(x)", wrt="x", order=3, x=0)
coefficients: list[float] = series.coefficients
written: str = series.polynomial
checked = check("x*y", x=2, y=3)
passed: bool = checked.passed and checked.checks["x"].passed
derivative: str = diff("x**3", "x").text
holds_where: str = diff("x**x").conditions["x"]
printed: str = str(diff("x**x"))
derivation: str = diff("x**3", steps=True)
latex: str = diff("sqrt(x)/x", latex=True)
by_keyword: str = diff("x*y", wrt=["x", "y"], exact=True).text

# Options are keywords; an input named like one goes in inputs=.
some = grad("x*y", x=2, y=3, wrt="x", mode="forward", strict=True).gradients
shifted: float = hessian("x*strict", x=1, inputs={"strict": 2}).value
tight: bool = check("x**3", x=1, rtol=1e-6, atol=0.0).passed
by_hand: bool = check("x**3", against="3*x**2", x="0:1").passed
over_grid: int = check("x*y", against=["x=y", "y=x"], x=(0.0, 1.0, 5), y=2).checks["x"].points
steps = explain("x*y", x=2, y=3)
graph: bytes = draw("x*y", x=2, y=3, format="dot", rankdir="TB", hide_constants=True)
sampled = plot("sin(x)", x=(-3.0, 3.0), ylim="full")
lowest = minimize("(x - 3)**2", x=0, lr=0.1, method="sgd", steps=100, tol=1e-6)
moved: dict[str, float] = lowest.inputs
fitted = fit("a*x + b", {"x": [0.0, 1.0, 2.0], "y": [1.0, 3.0, 5.0]}, a=1, b=0, fix=())
parameters: dict[str, float] = fitted.parameters
statistics: FitStatistics = fitted.statistics
r2: float = fitted.statistics["r2"]
t_values: dict[str, float] = fitted.statistics["t"]
derived: dict[str, DerivedQuantity] = fitted.derived
predicted: np.ndarray = fitted.predict({"x": [3.0]}, band=0.95)["pred_upper"]
fitted.save("fit.json")
reloaded = load_fit("fit.json")  # one fit: a file of fits by group is load_fits'
again: np.ndarray = reloaded.predict({"x": [3.0]})["fitted"]
by_run = fit("a*x + b", {"run": ["A", "A", "B", "B"], "x": [0.0, 1.0, 0.0, 1.0],
                         "y": [1.0, 3.0, 2.0, 5.0]}, by="run", a=1, b=0)  # fmt: skip
by_run.save("fits.json")  # by= without shared=: Fits
for run, each_fit in by_run.items():
    each_fit.save(f"{run}.json")
rows: list[np.ndarray] = [one.predict({"x": [2.0]})["fitted"] for one in by_run.values()]
groups = load_fits("fits.json")
each: dict[str, float] = groups["A"].parameters
of_b: np.ndarray = groups["B"].predict({"x": [2.0]}, band=0.95)["upper"]
category: type[Warning] = NanogradWarning

# Input values as the functions take them: numbers (NumPy's too), the command line's text,
# NumPy arrays and lists, nested for a matrix.
as_arrays = grad("x*y + sum(w)", x=2, y=np.float32(3), w=np.array([1.0, 2.0])).to_numpy()
as_lists = grad("sum(x**2)", x=[1.0, 2.0], wrt=["x"]).gradients
as_text = grad("sin(x) + sum(y)", x="pi/2", inputs={"y": [1, 2]}).value
as_matrix = hessian("sum(W**3)", W=[[1, 2], [3, 4]]).matrix
along = check("x**2 + sum(y)", against="2*x", wrt="x", x=(0.0, 1.0), y=[1.0, 2.0]).passed

# Rows of data: a mapping of any columns (arrays, lists of numbers or of text), a
# DataFrame-like table, or a path.
xs, ys = np.array([0.0, 1.0, 2.0]), np.array([1.0, 3.0, 5.0])
from_arrays: Fit = fit("a*x + b", {"x": xs, "y": ys}, a=1, b=0)
mixed = {"run": ["A", "B", "A", "B"], "x": [0.0, 0.0, 1.0, 1.0], "y": [1.0, 2.0, 3.0, 2.0]}
groups_of_mixed: Fits = fit("a*x + b", mixed, by="run", a=1, b="0")
one_of_all: Fit = fit("a*x + b", mixed, by="run", shared="a", a=1, b=0)
fitted_rows: np.ndarray | None = from_arrays.fitted  # None for a loaded fit
descended = minimize("(a*x - y)**2", data={"x": xs, "y": ys}, a=0.0)
from_file: Fit = fit("a*x + b", "rows.csv", a=1, b=0)


class Frame:
    """A table as a DataFrame is one, without pandas: columns, iterated and read by name."""

    def __init__(self, columns: dict[str, np.ndarray]) -> None:
        self.data = columns

    @property
    def columns(self) -> list[str]:
        return list(self.data)

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.data[name]


from_frame: Fit = fit("a*x + b", Frame({"x": xs, "y": ys}), a=1, b=0)
at_frame: np.ndarray = from_frame.predict(Frame({"x": xs}))["fitted"]
loaded: Fit = load_fit("fit.json")
loaded.save("again.json")
groups_loaded: Fits = load_fits("fits.json")

# What a function returns, named from the package.
named_batch: BatchFunction = compile("x*y", "x", y=np.array([1.0, 2.0]))
named_program: Program = parse("x*y")
try:
    diff("A @ x", shapes={"A": (3, 2), "x": 3})
except ShapeProblem as problem:
    where: int = problem.offset

# A program, evaluated at many points.
program = parse("x*y + tanh(x)")
inputs: list[str] = program.inputs
at_point = program.grad({"x": 2.0, "y": 3.0})
batch = compile("x*y + tanh(x)", "x", y=3.0)
arrays: dict[str, np.ndarray] = batch(x=np.linspace(0, 1, 5))
also: dict[str, np.ndarray] = batch({"x": [0.0, 1.0]})

# The graph, for Graphviz.
picture = draw_dot(z, rankdir="TB")
version: str = nanograd_cli.__version__
