"""A program compiled to a Python function of straight-line code: its value, or its value and
gradient, at a point, the same bits as the engine computes, with no graph.

The engine builds a `Value` per node and walks the graph back through a dispatch per node;
here the walk is done once, when compiling, and what is left is the arithmetic: a statement
per instruction, the forward pass in program order, then the backward pass in the order the
engine visits the nodes, so that every gradient is the same sum of the same products, added
in the same order. Instructions that no input reaches are computed when compiling, with the
ops table, as the engine would compute them.

Each op's forward and local derivatives are its row of the ops table: a call of the row's own
`forward` and `derivative`, or, for the common ops, the same arithmetic written inline (each
template below mirrors its function in `_ops.py`, IEEE guards and kink conventions included;
tests/test_compiled.py holds every op to the engine, bit for bit, at edge points).

No text of the source reaches `compile()`: inputs are positional arguments `a0, a1, ...` in
the program's input order, every other value is a local `r0, r1, ...`, numbers are float
literals (`repr`, which round-trips; inf and nan are the names INF and NAN), and ops are names
bound in the function's globals, which hold nothing else (no builtins). So the code depends
only on the program's structure: two sources that differ in names and comments compile to the
same text.

Compiling costs time in proportion to the program (`worth_compiling` says when it pays), and
the functions are cached per program.
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, cast, overload

from . import _ops as ops
from ._instructions import Apply, Const, Input
from ._ops import INF, NAN, OPS, SMALLEST_NORMAL, WHERE, Op

if TYPE_CHECKING:
    from ._instructions import Code

# When compiling pays, measured by `python benchmarks/compiled.py --switch` on the 2-core
# development machine, CPU time, random expressions of 10 to 300,000 instructions: compiling
# the gradient costs 55 to 85 µs per instruction (writing the code, then Python's `compile`)
# and the value alone 15 to 30, and each evaluation then saves 3.5 to 8.6 µs per instruction
# against the engine, or 0.8 to 2.4 against Program.values, so compiling has paid after 10 to
# 21 evaluations, whatever the size. Below this many, the engine (or `values`) is used.
EVALUATIONS_TO_COMPILE = 20
# Python's compiler needs about 6 kB per instruction while it works (150 MB at 20,000, 2.2 GB
# at 300,000), where the engine needs 0.15 kB per node: longer programs stay with the engine.
MAX_INSTRUCTIONS = 20_000


def worth_compiling(program: Code, evaluations: int) -> bool:
    """Whether `evaluations` evaluations of `program` are done sooner by compiling it first."""
    return evaluations >= EVALUATIONS_TO_COMPILE and len(program.code) <= MAX_INSTRUCTIONS


class Compiled:
    """A program's compiled functions, each made on first use.

    `gradient(*values)` takes one float per input, in `program.inputs` order, and returns
    (value, d/d input 1, d/d input 2, ...); `value(*values)` returns the value alone. The
    arguments must be floats, as the engine makes them (`float(x)`).

    Each is written twice. The exact version mirrors the ops table's guards (a zero divisor,
    a logarithm of 0, exp past 709.78, ...); the fast one, which is called, leaves them out,
    since each guarded case is one where the plain Python expression raises (`1.0 / 0.0`,
    `math.log(0.0)`, `math.exp(1000.0)`, `0.0 ** -1.0`) and gives the table's value otherwise:
    on ArithmeticError or ValueError it returns what the exact version, compiled then, gives.
    """

    def __init__(self, program: Code):
        # a weak reference, as the cache is keyed by the program: the functions are for as
        # long as it lives
        self._program = weakref.ref(program)
        self._functions: dict[object, Callable] = {}

    @property
    def gradient(self) -> Callable[..., tuple[float, ...]]:
        return self._function("gradient")

    @property
    def value(self) -> Callable[..., float]:
        return self._function("value")

    @property
    def forward(self) -> Callable[..., tuple[float, ...]]:
        """Forward mode's pass (see `forward_source`)."""
        return self._function("forward")

    def _function(self, kind: str) -> Callable:
        """`gradient` or `value`, or `exact gradient` or `exact value`."""
        function = self._functions.get(kind)
        if function is None:
            program = self._program()
            if program is None:
                raise ReferenceError("the program compiled is no more")
            exact, name = kind.startswith("exact "), kind.split()[-1]
            source = _SOURCES[name](program, exact)
            extra = {} if exact else {"EXACT": self._exact(kind)}
            function = self._functions[kind] = function_of(source, name, extra)
        return function

    def _exact(self, kind: str) -> Callable:
        """The exact version of `kind`, compiled on its first call."""
        return lambda *values: self._function(f"exact {kind}")(*values)

    @property
    def exact_gradient(self) -> Callable[..., tuple[float, ...]]:
        """`gradient`'s exact version (compiled on its first call), for the code of
        `gradient_body` to fall back on."""
        return self._exact("gradient")

    def cached(self, key: object, make: Callable[[], Callable]) -> Callable:
        """A function of this program that `make` makes, made once per `key`."""
        function = self._functions.get(key)
        if function is None:
            function = self._functions[key] = make()
        return function


_cache: weakref.WeakKeyDictionary[Code, Compiled] = weakref.WeakKeyDictionary()


def compiled(program: Code) -> Compiled:
    """The program's compiled functions, made once per program."""
    found = _cache.get(program)
    if found is None:
        found = _cache[program] = Compiled(program)
    return found


def gradient_source(program: Code, exact: bool = False) -> str:
    """The Python source of `gradient(a0, a1, ...)`: the value and every input's gradient."""
    writer = _Writer(program, exact)
    writer.forward()
    writer.backward()
    return writer.source("gradient")


def value_source(program: Code, exact: bool = False) -> str:
    """The Python source of `value(a0, a1, ...)`: the value alone."""
    writer = _Writer(program, exact)
    writer.forward()
    writer.returns = [writer.name[program.result]]
    return writer.source("value")


def forward_source(program: Code, exact: bool = False) -> str:
    """The Python source of `forward(a0, a1, ...)`: forward mode (`forward.duals`) written
    out, bit for bit. It returns a number that is finite only where every instruction's value
    is (their sum; an overflow may make it inf too), then each output's value, then each
    output's derivatives by the inputs (output by output, inputs in order). Where the first
    number is not finite, `duals` is the answer: it says where the first nan or inf came
    from."""
    writer = _Writer(program, exact)
    writer.forward(every=True)
    writer.tangents()
    return writer.source("forward")


def gradient_body(program: Code) -> tuple[list[str], list[str]]:
    """The fast gradient's statements, reading the inputs `a0, a1, ...` and writing only
    locals `r0, r1, ...`, and the expressions of its value and each input's gradient (in
    `program.inputs` order): for code that computes the gradient in a loop of its own. Where
    a statement raises ArithmeticError or ValueError, the exact gradient is the answer."""
    writer = _Writer(program, exact=False)
    writer.forward()
    writer.backward()
    return writer.allocated()


_SOURCES = {"gradient": gradient_source, "value": value_source, "forward": forward_source}


# --- what the generated code may name -------------------------------------------------------

_TABLE = list(OPS.values())
_INDEX = {op: k for k, op in enumerate(_TABLE)}

_GLOBALS: dict[str, object] = {
    "__builtins__": {},
    "INF": INF,
    "NAN": NAN,
    "ABS": abs,
    "EXP": math.exp,
    "LOG": math.log,
    "SQRT": math.sqrt,
    "SIN": math.sin,
    "COS": math.cos,
    "TAN": math.tan,
    "TANH": math.tanh,
    "ATAN": math.atan,
    "DIVIDE": ops.divide,
    "ARITHMETIC": (ArithmeticError, ValueError),
    "POWER": ops.power,
    "POWLOG": ops._powlog,
    "POWER_SLOPE": ops.power_slope,
    "EXP_SAFE": ops._exp,
    **{f"F{k}": op.forward for k, op in enumerate(_TABLE)},
    **{f"D{k}": op.derivative for k, op in enumerate(_TABLE)},
}


def function_of(source: str, name: str, names: Mapping[str, object] | None = None) -> Callable:
    """The function `name` defined by `source`, generated code that may read the names above
    (and `names`) and nothing else."""
    namespace = {**_GLOBALS, **(names or {})}
    exec(compile(source, f"<nanograd {name}>", "exec"), namespace)
    function = namespace[name]
    assert callable(function)
    return function


def literal(x: float) -> str:
    """`x` as Python source that evaluates to the same float, sign of zero included."""
    if x != x:
        return "NAN"
    if x == INF:
        return "INF"
    if x == -INF:
        return "(-INF)"
    text = repr(float(x))
    return f"({text})" if text.startswith("-") else text


_ATOM = re.compile(r"[A-Za-z_]\w*|\d[\w.+-]*|\(-[\w.+-]+\)")


def _is_atom(expression: str) -> bool:
    """A name or a number: free to repeat, where an expression would be computed again."""
    return _ATOM.fullmatch(expression) is not None


# Local derivatives of exactly 1 and -1: the gradient is passed on, or negated.
ONE, MINUS_ONE = "ONE", "MINUS_ONE"


class _Writer:
    """The statements of a compiled function, written instruction by instruction.

    Every value is first a symbol of its own, `s<n>`, assigned once; `source` then gives each
    symbol a local, `r<k>`, reusing the local of a symbol that is no longer needed. A float
    that is freed as soon as it is dead is what the next one is allocated from (CPython keeps
    freed floats on a free list), where a fresh local per value keeps every float of the call
    alive to the end: reusing them made a 200-node chain of products 1.7x faster.
    """

    def __init__(self, program: Code, exact: bool):
        self.program = program
        self.exact = exact
        self.code = program.code
        self.statements: list[tuple[tuple[str, ...], str]] = []  # (targets, expression)
        self.name: list[str] = [""] * len(self.code)  # each needed instruction's value
        self.constant: list[float | None] = [None] * len(self.code)  # where no input reaches
        self.symbols = 0
        self.returns: list[str] = []
        self.check = "0.0"  # with forward(every=True), the sum of every value

    def assign(self, expression: str, count: int = 1) -> str:
        """`count` fresh symbols assigned `expression` (unpacked if more than one), joined by
        commas."""
        names = tuple(f"s{self.symbols + k}" for k in range(count))
        self.symbols += count
        self.statements.append((names, expression))
        return ", ".join(names)

    def forward(self, every: bool = False) -> None:
        """Each instruction the result needs, in order; with `every`, every instruction, and
        `check`, the sum of all their values."""
        program = self.program
        index = {name: k for k, name in enumerate(program.inputs)}
        needed = [True] * len(self.code) if every else _needed(self.code, program.result)
        for i, ins in enumerate(self.code):
            if isinstance(ins, Input):
                self.name[i] = f"a{index[ins.name]}"
            elif not needed[i]:
                continue
            elif isinstance(ins, Const):
                self.constant[i] = float(ins.value)
                self.name[i] = literal(ins.value)
            else:
                constants = [self.constant[a] for a in ins.args]
                if None not in constants:  # as the engine computes it, once
                    self.constant[i] = value = ins.op.forward(*constants)
                    self.name[i] = literal(value)
                else:
                    args = [self.name[a] for a in ins.args]
                    forward, _ = _TEMPLATES.get(ins.op, _GENERIC)
                    self.name[i] = self.assign(forward(self, ins.op, args, constants))
            if every:  # nan or inf anywhere makes the sum nan or inf (as may an overflow)
                self.check = self.assign(f"{self.check} + {self.name[i]}")

    def tangents(self) -> None:
        """Forward mode after `forward(every=True)`: per instruction the outputs need, its
        derivative by each input it depends on, each sum as `forward.duals` adds it; then the
        returns."""
        program = self.program
        index = {name: k for k, name in enumerate(program.inputs)}
        needed = program.needed()
        tangent: list[dict[int, str] | None] = [None] * len(self.code)
        for i, ins in enumerate(self.code):
            if type(ins) is Input:
                tangent[i] = {index[ins.name]: "1.0"}
            elif type(ins) is Apply and needed[i] and self.constant[i] is None:
                tangent[i] = self._tangent(ins, self.name[i], [tangent[a] for a in ins.args])
        slots = list(program.results.values())
        inputs = range(len(program.inputs))
        self.returns = [self.check, *(self.name[s] for s in slots)]
        self.returns += [(tangent[s] or {}).get(k, "0.0") for s in slots for k in inputs]

    def _tangent(self, ins: Apply, y: str, tangents: list[dict[int, str] | None]) -> dict:
        """An instruction's tangent from its arguments' (None for a constant): _forward.py's
        _times, _two and _sum, term by term."""
        constants = [self.constant[a] for a in ins.args]
        args = [self.name[a] for a in ins.args]
        if ins.op is WHERE:  # the tangent of the argument taken: the other one adds nothing
            ta, tb = tangents[1] or {}, tangents[2] or {}
            return {
                k: self._atom(f"({ta.get(k, '0.0')} if {args[0]} != 0.0 else {tb.get(k, '0.0')})")
                for k in sorted({*ta, *tb})
            }
        _, local = _TEMPLATES.get(ins.op, _GENERIC)
        present = [
            (self._atom(d), t)
            for d, t in zip(local(self, ins.op, args, y, constants), tangents, strict=True)
            if t is not None
        ]
        if len(ins.args) == 1 or (len(ins.args) == 2 and len(present) == 1):  # _times
            ((d, t),) = present
            return {k: self._atom(_times(d, s)) for k, s in t.items()}
        out: dict[int, str]
        if len(ins.args) == 2:  # _two: da*s + 0.0, plus db*t, + 0.0, where both have k
            (da, ta), (db, tb) = present
            out = {k: _times(da, s) for k, s in ta.items()}
            for k, s in tb.items():
                term = _term(db, s)
                if k not in out:
                    out[k] = _times(db, s)
                elif term != "0.0":  # (out[k] is never -0.0: + 0.0 leaves it as it is)
                    out[k] = f"({self._atom(out[k])} + {term}) + 0.0"
            return {k: self._atom(e) for k, e in out.items()}
        out = {}  # _sum: from 0.0, each term added where its tangent is not 0
        for d, t in present:
            for k, s in t.items():
                o = out.get(k, "0.0")
                if s == "1.0":  # d * 1.0 is d
                    out[k] = self._atom(f"{o} + {d}")
                elif s != "0.0":
                    out[k] = self._atom(f"({o} + {d} * {s} if {s} else {o})")
                else:
                    out[k] = o
        return out

    @overload
    def _atom(self, expression: str) -> str: ...
    @overload
    def _atom(self, expression: Callable[[str], str]) -> Callable[[str], str]: ...
    def _atom(self, expression: str | Callable[[str], str]) -> str | Callable[[str], str]:
        """An expression as an atom (assigned once, where it is more than that); a function
        writing d * g, ONE and MINUS_ONE as they are."""
        if callable(expression) or expression in (ONE, MINUS_ONE) or _is_atom(expression):
            return expression
        return self.assign(expression)

    def backward(self) -> None:
        """The engine's backward pass: each node in its order passes its gradient on, each
        argument's gradient the sum of its contributions, added in the engine's order.

        Below a `where`, as in the engine, a node passes its gradient on only where it is live
        (the result depends on it through the branches taken), and a `where` only to the
        argument it takes: each contribution there is added under a condition, computed at
        run time, and its arguments are live where one of their contributions was added."""
        program = self.program
        root = program.result
        gradient: dict[int, Gradient] = {root: (False, "1.0")}
        # per node reached, the conditions of its contributions (None: always added)
        reached: dict[int, list[str | None]] = {root: [None]}
        for i in _engine_order(self.code, root):
            ins = self.code[i]
            if type(ins) is not Apply or self.constant[i] is not None or i not in gradient:
                continue  # an input, a constant, or a node whose gradient reaches no input
            live = self._live(reached[i])
            constants = [self.constant[a] for a in ins.args]
            g = gradient[i]
            if ins.op is WHERE:
                passed = self._taken(ins.args[0], live)
            else:
                args = [self.name[a] for a in ins.args]
                _, local = _TEMPLATES.get(ins.op, _GENERIC)
                derivatives = local(self, ins.op, args, self.name[i], constants)
                passed = [(d, live) for d in derivatives]
            for a, (d, condition), c in zip(ins.args, passed, constants, strict=True):
                if c is None and condition != "False":
                    self._add(gradient, a, _contribution(d, g), condition)
                    reached.setdefault(a, []).append(condition)
        # An input's gradient starts at 0.0 in the engine: adding it to 0.0 gives the same
        # sign of zero (0.0 - g for a negated one).
        slots = program.input_slots
        self.returns = [self.name[root]]
        for name in program.inputs:
            negated, total = gradient.get(slots[name], (False, "0.0"))
            self.returns.append(f"0.0 - {total}" if negated else f"{total} + 0.0")

    def _live(self, conditions: list[str | None]) -> str | None:
        """Where a node is live, from the conditions of its contributions: None, always."""
        if None in conditions:
            return None
        distinct = list(dict.fromkeys(cast("list[str]", conditions)))
        return distinct[0] if len(distinct) == 1 else self.assign(" or ".join(distinct))

    def _taken(self, c: int, live: str | None) -> list[tuple[str, str | None]]:
        """A where's contributions, the gradient itself, to its condition (none: "False"),
        to a where c is not 0 and to b where it is, and each only where the where is live."""
        value = self.constant[c]
        if value is not None:
            on_a = value != 0.0
            return [
                (ONE, "False"),
                (ONE, live if on_a else "False"),
                (ONE, "False" if on_a else live),
            ]
        test = f"{self.name[c]} != 0.0"
        if live is None:
            chosen = self.assign(test)
            return [(ONE, "False"), (ONE, chosen), (ONE, self.assign(f"not {chosen}"))]
        # below a branch not taken, neither argument is live: not `not (live and c != 0)`
        test = self.assign(test)
        return [
            (ONE, "False"),
            (ONE, self.assign(f"{live} and {test}")),
            (ONE, self.assign(f"{live} and not {test}")),
        ]

    def _add(
        self,
        gradient: dict[int, Gradient],
        a: int,
        contribution: Gradient,
        condition: str | None = None,
    ) -> None:
        """gradient[a] += contribution (only where `condition` holds, if one is given),
        negations folded in: -h + c is c - h, -h + -c is -(h + c), exactly. The first
        contribution is taken as it is, where the engine adds it to 0.0: that differs only in
        the sign of a zero, which changes only the signs of zeros (and of nans) downstream,
        and an input's final addition to 0.0 undoes that."""
        held = gradient.get(a)
        negated, c = contribution
        if held is None:
            if condition is not None:
                c = self.assign(f"{c} if {condition} else 0.0")
            gradient[a] = (negated, c if _is_atom(c) else self.assign(c))
            return
        held_negated, h = held
        if held_negated == negated:
            total, otherwise = (negated, f"{h} + {c}"), h
        elif held_negated:
            total, otherwise = (False, f"{c} - {h}"), f"-{h}"
        else:
            total, otherwise = (False, f"{h} - {c}"), h
        expression = (
            total[1] if condition is None else f"{total[1]} if {condition} else {otherwise}"
        )
        gradient[a] = (total[0], self.assign(expression))

    def allocated(self) -> tuple[list[str], list[str]]:
        """The statements, each symbol given a local, and the returns as expressions of them."""
        # each expression split at its symbols: text, symbol, text, ..., text
        statements = [(t, _SYMBOL.split(e)) for t, e in self.statements]
        statements += [((), _SYMBOL.split(r)) for r in self.returns]
        last: dict[str, int] = {}  # symbol -> the statement that reads it last
        for k, (_, parts) in enumerate(statements):
            for name in parts[1::2]:
                last[name] = k
        returned = len(self.statements)  # the returns come after, and free nothing
        local: dict[str, str] = {}
        free: list[str] = []  # locals whose symbol is dead, the latest freed last
        count = 0
        lines = []
        for k, (targets, parts) in enumerate(statements):
            read = parts[1::2]
            parts[1::2] = [local[name] for name in read]
            if k >= returned:
                lines.append("".join(parts))
                continue
            for name in read:
                if last[name] == k and name in local:  # (a symbol read twice is freed once)
                    free.append(local.pop(name))
            chosen = []
            for target in targets:
                if free:
                    chosen.append(free.pop())
                else:
                    chosen.append(f"r{count}")
                    count += 1
                local[target] = chosen[-1]
            for target in targets:
                if target not in last:  # never read: its local is free again at once
                    free.append(local.pop(target))
            lines.append(f"{', '.join(chosen)} = {''.join(parts)}")
        return lines[:returned], lines[returned:]

    def source(self, function: str) -> str:
        """The function's text: `return` the returns (a tuple for a gradient, the value
        alone); the fast version falls back on the exact one."""
        lines, returns = self.allocated()
        parameters = ", ".join(f"a{k}" for k in range(len(self.program.inputs)))
        result = returns[0] if function == "value" else f"({', '.join(returns)},)"
        if self.exact or not lines:
            body = [*lines, f"return {result}"]
        else:
            body = [
                "try:",
                *(f"    {line}" for line in lines),
                "except ARITHMETIC:",
                f"    return EXACT({parameters})",
                f"return {result}",
            ]
        return f"def {function}({parameters}):\n" + "".join(f"    {line}\n" for line in body)


_SYMBOL = re.compile(r"\b(s\d+)\b")


# A gradient as code: (negated, an atom); the gradient is minus the atom where negated.
Gradient = tuple[bool, str]


def _contribution(d: str | Callable[[str], str], g: Gradient) -> Gradient:
    """d * g, the contribution of a local derivative `d` (or a function writing d * g) and
    the gradient `g` passed back, as the engine computes it: d * 1.0 is d, 1.0 * g is g,
    -1.0 * g is -g, and d * -h is -(d * h), exactly."""
    negated, h = g
    if d == ONE:
        return g
    if d == MINUS_ONE:
        return (not negated, h)
    if callable(d):
        return (negated, d(h))
    return (negated, d if h == "1.0" else f"{d} * {h}")


def _times(d: str | Callable[[str], str], s: str) -> str:
    """_forward.py's `d * s + 0.0 if s else 0.0`, for a tangent's term s (an atom, never -0.0:
    every term is made + 0.0, or is 0.0 or 1.0): d * 1.0 is d, 1.0 * s is s, exactly."""
    if s == "0.0":
        return "0.0"
    if d == ONE:
        return s
    d = "(-1.0)" if d == MINUS_ONE else d
    if s == "1.0":
        return f"({d('1.0') if callable(d) else d} + 0.0)"
    product = d(s) if callable(d) else f"{d} * {s}"
    return f"({product} + 0.0 if {s} else 0.0)"


def _term(d: str | Callable[[str], str], t: str) -> str:
    """_forward.py's `d * t if t else 0.0`, the second term of a sum of two."""
    if t == "0.0":
        return "0.0"
    if d == ONE:
        return t
    d = "(-1.0)" if d == MINUS_ONE else d
    if t == "1.0":
        return d("1.0") if callable(d) else d
    product = d(t) if callable(d) else f"{d} * {t}"
    return f"({product} if {t} else 0.0)"


def _needed(code: list, root: int) -> list[bool]:
    """Per instruction: does `root` depend on it?"""
    needed = [False] * len(code)
    needed[root] = True
    for i in range(root, -1, -1):
        ins = code[i]
        if needed[i] and type(ins) is Apply:
            for a in ins.args:
                needed[a] = True
    return needed


def _engine_order(code: list, root: int) -> list[int]:
    """The order in which `Value.backward` visits the nodes of the graph of `root`: the same
    walk as `Value._order`, on instruction numbers (a node per instruction)."""
    order: list[int] = []
    visited: set[int] = set()
    stack: list[int | None] = [root]
    while stack:
        v = stack.pop()
        if v is None:
            order.append(cast(int, stack.pop()))  # the node pushed before its None
        elif v not in visited:
            visited.add(v)
            ins = code[v]
            if type(ins) is Apply:
                stack.append(v)
                stack.append(None)
                stack.extend(ins.args)
            else:
                order.append(v)
    order.reverse()
    return order


# --- the templates: per op, its forward and its local derivatives as code -------------------
#
# forward(writer, op, args, constants) -> an expression of the arguments' names (or numbers);
# local(writer, op, args, y, constants) -> per argument, its local derivative as an atom or a
# parenthesized expression (or ONE, MINUS_ONE), or None for an argument that does not vary;
# `constants` holds each argument's value where no input reaches it, else None.
# Each mirrors its row of _ops.py; without a template, the row's functions are called.


def _call_forward(w: _Writer, op: Op, args: list[str], constants) -> str:
    return f"F{_INDEX[op]}({', '.join(args)})"


def _call_local(w: _Writer, op: Op, args: list[str], y: str, constants) -> list[str]:
    call = f"D{_INDEX[op]}({', '.join(args)}, {y})"
    if op.arity == 1:
        return [w.assign(f"{call}[0]")]
    return w.assign(call, len(args)).split(", ")


_GENERIC = (_call_forward, _call_local)


def _periodic(w: _Writer, f: str, x: str) -> str:
    """ops._periodic: nan at ±inf, where math raises."""
    return f"({f}({x}) if {x} - {x} == 0.0 else NAN)" if w.exact else f"{f}({x})"


def _divide(w: _Writer, a: str, b: str, constant: float | None = None) -> str:
    """ops.divide(a, b): a / b, and divide's own answer for a zero divisor (a / b raises)."""
    if constant == 0.0:
        return f"DIVIDE({a}, {b})"
    if constant is not None or not w.exact:
        return f"({a} / {b})"
    return f"({a} / {b} if {b} else DIVIDE({a}, {b}))"


def _guarded(w: _Writer, guard: str, plain: str, otherwise: str) -> str:
    """`plain` where `guard` holds, else `otherwise`, where `plain` raises unless it holds;
    in the fast version, `plain`."""
    return f"({plain} if {guard} else {otherwise})" if w.exact else f"({plain})"


def _power(w: _Writer, a: str, b: str, exponent: float | None) -> str:
    """ops.power(a, b). For an exponent that is a whole number, a ** b is real and raises
    only where power catches (overflow, 0 to a negative power): the fast version writes it."""
    if w.exact or exponent is None or not (math.isfinite(exponent) and exponent.is_integer()):
        return f"POWER({a}, {b})"
    return f"({a} ** {b})"


def _sigmoid(w: _Writer, x: str) -> str:
    """ops._sigmoid; `z`, assigned inside the expression, is read only there (a statement has
    at most one sigmoid)."""
    return f"(1.0 / (1.0 + EXP(-{x})) if {x} >= 0.0 else (z := EXP({x})) / (1.0 + z))"


def _times_step(x: str) -> Callable[[str], str]:
    """g times ops._step(x): 1.0 * g is g."""
    return lambda g: f"({g} if {x} > 0.0 else (0.0 * {g} if {x} == {x} else NAN))"


def _times_sign(x: str) -> Callable[[str], str]:
    """g times ops._sign(x): 1.0 * g is g, -1.0 * g is -g."""
    return lambda g: (
        f"({g} if {x} > 0.0 else (-{g} if {x} < 0.0 else (0.0 * {g} if {x} == {x} else NAN)))"
    )


def _divide_forward(w, op, args, constants):
    return _divide(w, args[0], args[1], constants[1])


def _divide_local(w, op, args, y, constants):
    """(divide(1.0, b), divide(-y, b)); a constant divisor's 1/b is a number."""
    b = args[1]
    divisor = constants[1]
    if divisor is not None:
        return [literal(ops.divide(1.0, divisor)), None]
    return [_divide(w, "1.0", b), _divide(w, f"-{y}", b)]


def _power_local(w, op, args, y, constants):
    """ops._pow_derivative: ops.power_slope(a, b), b * a**(b - 1) (0 where b = 0, and again
    exactly where that is below the normal floats), and y * log(a) where a > 0 and y is a
    normal float, else powlog(a, b)."""
    a, b = args
    base, exponent = constants
    da = db = None
    if base is None:
        if exponent is None:
            da = f"POWER_SLOPE({a}, {b})"
        elif exponent == 0.0:  # 0 at a = 0, else 0 * a**-1 (nan where a is nan or subnormal)
            da = f"POWER_SLOPE({a}, 0.0)"
        else:
            slope = f"{literal(exponent)} * {_power(w, a, literal(exponent - 1.0), exponent - 1.0)}"
            # power_slope computes it again below the normal floats, where |b| > 1; but 2*a
            # is exact, as its decimal product is
            if abs(exponent) > 1.0 and exponent != 2.0:
                slope = f"q if ABS(q := {slope}) >= {SMALLEST_NORMAL!r} else "
                slope += f"POWER_SLOPE({a}, {literal(exponent)})"
            da = f"({slope})"
    if exponent is None:
        if base is None:
            normal = f"({y} * LOG({a}) if {y} >= {SMALLEST_NORMAL!r} else POWLOG({a}, {b}))"
            db = _guarded(w, f"{a} > 0.0", normal, f"POWLOG({a}, {b})")
        elif base > 0.0:  # below the normal floats, powlog by halves, as ops._pow_derivative
            db = f"({y} * {literal(math.log(base))} if {y} >= {SMALLEST_NORMAL!r} "
            db += f"else POWLOG({literal(base)}, {b}))"
        else:
            db = f"POWLOG({a}, {b})"
    return [da, db]


def _tanh_local(w, op, args, y, constants):
    """ops._tanh_derivative: 4e/(1 + e)**2 with e = exp(-2|x|), as 4.0 * e * r * r; -2|x| is
    2x for x < 0 and else -2x (which differs only at x = 0, in the sign of zero: exp is 1)."""
    x = args[0]
    e = w.assign(f"EXP(2.0 * {x} if {x} < 0.0 else -2.0 * {x})")
    r = w.assign(f"1.0 / (1.0 + {e})")
    return [f"(4.0 * {e} * {r} * {r})"]


def _sigmoid_local(w, op, args, y, constants):
    """y * sigmoid(-x): ops._sigmoid of -x, where -(-x) is x and -x >= 0 is x <= 0."""
    x = args[0]
    return [f"({y} * (1.0 / (1.0 + EXP({x})) if {x} <= 0.0 else (z := EXP(-{x})) / (1.0 + z)))"]


_TEMPLATES: dict[Op, tuple[Callable, Callable]] = {
    OPS["+"]: (lambda w, op, a, c: f"{a[0]} + {a[1]}", lambda w, op, a, y, v: [ONE, ONE]),
    OPS["-"]: (lambda w, op, a, c: f"{a[0]} - {a[1]}", lambda w, op, a, y, v: [ONE, MINUS_ONE]),
    OPS["*"]: (lambda w, op, a, c: f"{a[0]} * {a[1]}", lambda w, op, a, y, v: [a[1], a[0]]),
    OPS["/"]: (_divide_forward, _divide_local),
    OPS["**"]: (lambda w, op, a, c: _power(w, a[0], a[1], c[1]), _power_local),
    OPS["pow"]: (lambda w, op, a, c: _power(w, a[0], a[1], c[1]), _power_local),
    OPS["neg"]: (lambda w, op, a, c: f"-{a[0]}", lambda w, op, a, y, v: [MINUS_ONE]),
    # math.exp overflows (and raises) only past 709.78
    OPS["exp"]: (
        lambda w, op, a, c: _guarded(w, f"{a[0]} < 709.0", f"EXP({a[0]})", f"EXP_SAFE({a[0]})"),
        lambda w, op, a, y, v: [y],
    ),
    OPS["log"]: (
        lambda w, op, a, c: _guarded(w, f"{a[0]} > 0.0", f"LOG({a[0]})", f"F{_INDEX[op]}({a[0]})"),
        lambda w, op, a, y, v: [_divide(w, "1.0", a[0])],
    ),
    OPS["sqrt"]: (
        lambda w, op, a, c: _guarded(w, f"{a[0]} >= 0.0", f"SQRT({a[0]})", "NAN"),
        lambda w, op, a, y, v: [_divide(w, "0.5", y)],
    ),
    OPS["sin"]: (
        lambda w, op, a, c: _periodic(w, "SIN", a[0]),
        lambda w, op, a, y, v: [_periodic(w, "COS", a[0])],
    ),
    OPS["cos"]: (
        lambda w, op, a, c: _periodic(w, "COS", a[0]),
        lambda w, op, a, y, v: [f"(-{_periodic(w, 'SIN', a[0])})"],
    ),
    OPS["tan"]: (
        lambda w, op, a, c: _periodic(w, "TAN", a[0]),
        lambda w, op, a, y, v: [f"(1.0 + {y} * {y})"],
    ),
    OPS["tanh"]: (lambda w, op, a, c: f"TANH({a[0]})", _tanh_local),
    OPS["sigmoid"]: (lambda w, op, a, c: _sigmoid(w, a[0]), _sigmoid_local),
    OPS["softplus"]: (_call_forward, lambda w, op, a, y, v: [_sigmoid(w, a[0])]),
    OPS["relu"]: (
        lambda w, op, a, c: f"({a[0]} if {a[0]} > 0.0 else 0.0)",
        lambda w, op, a, y, v: [_times_step(a[0])],
    ),
    OPS["abs"]: (
        lambda w, op, a, c: f"ABS({a[0]})",
        lambda w, op, a, y, v: [_times_sign(a[0])],
    ),
    OPS["atan"]: (
        lambda w, op, a, c: f"ATAN({a[0]})",
        lambda w, op, a, y, v: [f"(1.0 / (1.0 + {a[0]} * {a[0]}))"],
    ),
}


def gradients_at(program: Code, point: Mapping[str, float]) -> tuple[float, dict[str, float]]:
    """The value and gradient at `point` (checked as the engine checks it), compiled."""
    program.check_inputs(point)
    value, *grads = compiled(program).gradient(*[float(point[n]) for n in program.inputs])
    return value, dict(zip(program.inputs, grads, strict=True))


def value_at(program: Code, point: Mapping[str, float]) -> float:
    """The value at `point` (checked as `Program.values` checks it), compiled."""
    program.check_inputs(point)
    return compiled(program).value(*[float(point[n]) for n in program.inputs])
