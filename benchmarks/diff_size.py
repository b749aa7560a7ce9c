"""How long `nanograd diff`'s derivatives are, against SymPy's `diff`, and whether they are right.

Over 200 random expressions (seeded, the grammar of the tests' `expressions()`), the examples
of the docs and the worked example: for each input of each, the operations in our printed
derivative and in `str(sympy.diff(...))`, both counted the same way (parsed by Python's `ast`:
one per operator and function call, none for a number such as `3/2` or `-1`, and a bound
sub-expression's operations once). Also: the printed derivative, parsed back and evaluated at
random points, against `grad`, to 1e-12 relative, wherever grad is finite (see `round_trip`).

Also, for the textbook exercises of tests/test_textbook.py (powers, exponentials and logs
of any base, quotients, chains, inverse trigonometric and hyperbolic functions, products,
programs with names): the operations of `diff`'s derivative against SymPy's, and over every
derivative, the share that has a helper function (`powlog`, or `step` or `sign` in the
derivative of a source that has no function with a kink): the target is 0.

The docs' implicit derivatives (`--implicit y --wrt x`) are measured against SymPy's `idiff`
of lhs - rhs to the same order (`diff` of the equation, a comparison, would be 0).

And over the answer keys of tests/test_answer_keys.py (a course's exercises, each with the
form its answer key has): how many of diff's derivatives have at most the key's operations.

Run: python benchmarks/diff_size.py   (needs SymPy: pip install -e . --group test)
"""

from __future__ import annotations

import math
import random
import re
import shlex
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sympy  # noqa: E402

import nanograd_cli as nanograd  # noqa: E402
from nanograd_cli import parse  # noqa: E402
from nanograd_cli._symbolic import derivatives_text  # noqa: E402
from nanograd_cli.errors import NanogradError  # noqa: E402
from tests.oracle import derivative_at, operations, symbol, to_sympy  # noqa: E402
from tests.test_answer_keys import KEYS  # noqa: E402
from tests.test_textbook import EXERCISES  # noqa: E402

SEED = 16
COUNT = 200
SMOOTH = ["tanh", "sin", "cos", "sigmoid", "exp", "atan", "softplus"]
LEAVES = ["x", "y", "z", "0.5", "2", "1.5", "pi"]
EXAMPLES = ["3*x**2+2*x+1", "log(x**2)"]  # the two that started this
HELPER = re.compile(r"\b(powlog|step|sign)\(")
KINKED = re.compile(r"\b(relu|abs|step|sign|max|min|clamp|floor|ceil|round)\(")


def random_expression(rng: random.Random, leaves: int) -> str:
    """An expression with about `leaves` leaves, built as the tests' `expressions()` builds."""
    if leaves <= 1:
        text = rng.choice(LEAVES)
    else:
        left = rng.randint(1, leaves - 1)
        a, b = random_expression(rng, left), random_expression(rng, leaves - left)
        if rng.random() < 0.8:
            text = f"({a} {rng.choice('+-*')} {b})"
        else:
            text = f"{a} / (1 + ({b})**2)"
    while rng.random() < 0.35:  # the one-argument forms, around any part
        form = rng.randrange(3)
        if form == 0:
            text = f"{rng.choice(SMOOTH)}({text})"
        elif form == 1:
            text = f"-{text}"
        else:
            text = f"({text})**2"
    return text


def doc_examples() -> list[tuple[str, list[str], str | None, int]]:
    """(source, --wrt names, --implicit name or None, --order) of every `$ nanograd diff` of
    numbers (no --shape) in README.md and docs/."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("$ nanograd diff ") and "--shape" not in line:  # (numbers)
                words = shlex.split(line[2:])[2:]
                given = {w: words[i + 1] for i, w in enumerate(words[:-1]) if w.startswith("--")}
                wrt = [words[i + 1] for i, w in enumerate(words) if w == "--wrt"]
                order = int(given.get("--order", 1))
                found.append((words[0], wrt, given.get("--implicit"), order))
    return found


def implicit_cases(examples) -> list[Case]:
    """The docs' implicit derivatives (`--implicit y --wrt x`, of an equation or of an
    expression that is 0) against SymPy's `idiff` of lhs - rhs, to the same order; the
    examples of an error (no --wrt, no such input, F_y = 0) are left out. No round trip:
    grad has no implicit derivative to hold them to."""
    cases = []
    for source, wrt, implicit, order in examples:
        try:
            ours = nanograd.diff(source, wrt=wrt, implicit=implicit, order=order)
        except NanogradError:
            continue
        lhs, _, rhs = source.partition("==")
        equation = parse(f"({lhs}) - ({rhs or 0})")
        y, x = symbol(implicit), symbol(wrt[0])
        theirs = str(sympy.idiff(to_sympy(equation), y, x, order))
        cases.append(Case("implicit", source, wrt[0], ours, theirs, None))
    return cases


def round_trip(program, text: str, name: str, rng: random.Random) -> tuple | None:
    """The printed derivative, parsed back, against grad at three random points where grad's
    value is finite: ("equal",) if to 1e-12 relative at all, else ("differs", ours, grad):
    the largest relative errors of ours and grad against SymPy's 30-digit value where they
    differ (an expression that amplifies rounding, as sin(exp(t)) for t large, leaves both
    off). None: grad is finite at none of the points."""
    derivative = parse(text)
    verdict = None
    for _ in range(3):
        point = {n: rng.uniform(-2.0, 2.0) for n in program.inputs}
        expected = program.grad(point).gradients[name]
        if not math.isfinite(expected):
            continue
        got = derivative.values({n: point[n] for n in derivative.inputs})[derivative.result]
        if abs(got - expected) <= 1e-12 * max(abs(got), abs(expected)):
            verdict = verdict or ("equal",)
            continue
        exact = derivative_at(program, name, point)
        errors = abs(got - exact) / abs(exact), abs(expected - exact) / abs(exact)
        worst = verdict[1:] if verdict and verdict[0] == "differs" else (0.0, 0.0)
        verdict = ("differs", *map(max, zip(worst, errors, strict=True)))
    return verdict


@dataclass
class Case:
    origin: str
    source: str
    name: str
    ours: str
    theirs: str
    check: tuple | None

    @property
    def counts(self) -> tuple[int, int]:
        return operations(self.ours), operations(self.theirs)

    @property
    def ratio(self) -> float:
        ours, theirs = self.counts
        return 1.0 if ours == theirs else ours / theirs if theirs else math.inf


def has_helper(source: str, derivative: str) -> bool:
    """Whether a derivative has a helper function: powlog, or step or sign where the source
    has no function with a kink (whose derivative they are)."""
    found = set(HELPER.findall(derivative))
    return "powlog" in found or bool(found and not KINKED.search(source))


def main() -> None:
    rng = random.Random(SEED)
    sources = [(random_expression(rng, rng.randint(2, 12)), [], "random") for _ in range(COUNT)]
    examples = doc_examples()
    sources += [(s, w, "docs") for s, w, implicit, _ in examples if implicit is None]
    sources += [(s, [], "issue") for s in EXAMPLES]
    worked = (ROOT / "tests" / "data" / "worked_example.txt").read_text()
    sources.append((worked, [], "worked example"))
    sources += [(s, ["x"], "textbook") for s, *_ in EXERCISES]
    cases = []
    points = random.Random(SEED + 1)
    for source, wrt, origin in sources:
        program = parse(source)
        expr = to_sympy(program, exact=origin == "textbook")  # a textbook's pi and 2/3
        for name in wrt or program.inputs:
            ours = derivatives_text(program, [name])
            exact = derivatives_text(program, [name], exact=True)
            theirs = str(sympy.diff(expr, symbol(name)))
            check = round_trip(program, exact, name, points)
            cases.append(Case(origin, source, name, ours, theirs, check))
    cases += implicit_cases([e for e in examples if e[2] is not None])
    ratios = [c.ratio for c in cases]
    checked = [c for c in cases if c.check]
    differ = [c for c in checked if c.check[0] == "differs"]
    implicit = sum(c.origin == "implicit" for c in cases)
    print(
        f"derivatives: {len(cases)} (of {len(sources)} expressions, one per input, and "
        f"{implicit} implicit derivatives of the docs against idiff)"
    )
    print(f"median operations, ours / SymPy's: {statistics.median(ratios):.3f}")
    print(f"share with at most SymPy's operations: {sum(r <= 1 for r in ratios) / len(cases):.1%}")
    ours, theirs = (sum(c.counts[k] for c in cases) for k in (0, 1))
    print(f"all operations: ours {ours}, SymPy's {theirs} ({ours / theirs:.3f})")
    print(
        f"round trip of --exact equals grad to 1e-12: {len(checked) - len(differ)}/{len(checked)}"
    )
    helped = [c for c in cases if has_helper(c.source, c.ours)]
    share = len(helped) / len(cases)
    print(f"derivatives with a helper function: {len(helped)}/{len(cases)} ({share:.1%})")
    for c in helped:
        print(f"  d/d{c.name} {c.source}: {c.ours!r}")
    textbook = [c for c in cases if c.origin == "textbook"]
    at_most = sum(c.counts[0] <= c.counts[1] for c in textbook)
    print(
        f"textbook exercises with at most SymPy's operations: {at_most}/{len(textbook)} "
        f"({at_most / len(textbook):.1%})"
    )
    ours_t, theirs_t = (sum(c.counts[k] for c in textbook) for k in (0, 1))
    print(f"textbook exercises, all operations: ours {ours_t}, SymPy's {theirs_t}")
    keys = [(derivatives_text(parse(s), ["x"]), key) for s, key, _ in KEYS]
    within = sum(operations(ours) <= operations(key) for ours, key in keys)
    print(f"answer keys with at most the key's operations: {within}/{len(keys)}")
    print("\nthe examples (operations ours | SymPy's, then the derivatives):")
    for c in cases:
        if c.origin != "random":
            shown = c.source if c.origin != "worked example" else c.origin
            print(f"  d/d{c.name} {shown}: {c.counts[0]} | {c.counts[1]}")
            if c.origin != "worked example":
                print(f"    {c.ours} | {c.theirs}")
    print("\nthe longest against SymPy's:")
    for c in sorted(cases, key=lambda c: -c.ratio)[:5]:
        print(f"  d/d{c.name} {c.source}: {c.counts[0]} | {c.counts[1]}")
        print(f"    {c.ours!r}\n    {c.theirs}")
    if differ:
        print(
            "\nwhere not equal to 1e-12, relative errors against SymPy's 30 digits (ours, grad's):"
        )
    for c in differ:
        print(f"  {c.check[1]:.1e}, {c.check[2]:.1e}: d/d{c.name} {c.source}\n    {c.ours!r}")


if __name__ == "__main__":
    main()
