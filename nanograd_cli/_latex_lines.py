"""Displayed equations that fit a page: how wide a LaTeX formula is set, where it may be broken,
and a block of equations written so that every line fits the text width of a standard
article page (345 pt at 10 pt), broken over lines where it would not (explain's LaTeX, and
diff's, whose rows `formula` breaks with `pieces` and `broken`)."""

from __future__ import annotations

import functools
import re

# An em at 10 pt is 10 pt; a letter or digit of math about 0.55 em. Widths below are in
# those letters: the text width of an article page is 345 pt, about 62 of them, and a line
# is kept to LINE, which leaves room for the estimate to be short (a display fraction is
# wider than its letters).
LINE = 46
# A left side wider than this is set on a line of its own.
WIDEST_LEFT = 18

_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|[{}]|\s+|.", re.S)
# Commands set as one symbol; \qquad and \quad are spaces of 2 and 1 em.
_SPACES = {r"\qquad": 3.6, r"\quad": 1.8, r"\,": 0.3, r"\ ": 0.5, r"\!": 0.0, r"\;": 0.5}
_SKIPPED = {r"\left", r"\right", r"\displaystyle", r"\limits"}
_NAMED = {r"\operatorname", r"\mathrm", r"\text"}
_BINARY = set("+-=<>") | {r"\cdot", r"\ne", r"\le", r"\ge", r"\approx", r"\odot", r"\bmod"}


@functools.lru_cache(maxsize=4096)  # a row's parts are measured again when it is broken
def width(tex: str) -> float:
    """How wide `tex` is set in display math, in letters (an estimate, on the wide side)."""
    tokens = _TOKEN.findall(tex)
    total, _ = _width(tokens, 0)
    return total


def _group(tokens: list[str], k: int) -> tuple[float, int]:
    """The width of the group (or the one token) at k, and the index after it."""
    while k < len(tokens) and tokens[k].isspace():
        k += 1
    if k < len(tokens) and tokens[k] == "{":
        inner, k = _width(tokens, k + 1)
        return inner, k + 1
    if k >= len(tokens):
        return 0.0, k
    inner, _ = _width([tokens[k]], 0)
    return inner, k + 1


def _width(tokens: list[str], k: int) -> tuple[float, int]:
    """The width of the tokens from k to the closing brace of their group, and its index."""
    total = 0.0
    costs = _COSTS
    while k < len(tokens):
        token = tokens[k]
        k += 1
        cost = costs.get(token)
        if cost is not None:  # most tokens: a letter, a digit, an operator, a space
            total += cost
        elif token == "}":
            return total, k - 1
        elif token == "{":
            inner, k = _width(tokens, k)
            total, k = total + inner, k + 1
        elif token == r"\frac":
            top, k = _group(tokens, k)
            bottom, k = _group(tokens, k)
            total += max(top, bottom) + 0.4
        elif token in ("^", "_"):
            inner, k = _group(tokens, k)
            total += 0.75 * inner
        elif token in _NAMED:
            inner, k = _group(tokens, k)
            total += inner + 0.3
        else:
            total += costs.setdefault(token, _cost(token))
    return total, k


def _cost(token: str) -> float:
    """The width of a token that is no group, fraction, script or name."""
    if token.isspace() or token in _SKIPPED:
        return 0.0
    if token in _SPACES:
        return _SPACES[token]
    if token in _BINARY:
        return 2.0
    if token == ",":
        return 0.7
    if token.startswith("\\") and len(token) > 2 and token[1:].isalpha():
        # a function's name is set in letters (\tanh, \log); a symbol's is one
        return len(token) - 1 if token[1:] in _FUNCTIONS else 1.2
    return 1.0


# The widths of the tokens measured so far that are no structure (`_cost`).
_COSTS: dict[str, float] = {}

_FUNCTIONS = frozenset(
    "sin cos tan sinh cosh tanh arcsin arccos arctan log ln exp max min sec csc cot".split()
)


def pieces(tex: str) -> list[str]:
    """`tex` cut where it may be broken: before each `+`, `-`, `=` or `\\cdot` outside any
    brackets or braces, and before a `\\qquad`, never inside a number (`3.06 \\cdot 10^{-17}`).
    The pieces joined by spaces give `tex` back."""
    found, depth, start = [], 0, 0
    tokens = list(_TOKEN.finditer(tex))
    for k, match in enumerate(tokens):
        token = match.group()
        if token in ("{", "(", "[") or token in (r"\left", r"\begin"):
            depth += 1
        elif token in ("}", ")", "]") or token in (r"\right", r"\end"):
            depth -= 1
        previous = tokens[k - 1].group() if k else ""
        if (
            depth == 0
            and token in ("+", "-", "=", r"\cdot", r"\approx", r"\qquad")
            and previous.isspace()
            and tex[start : match.start()].strip() not in ("", "+", "-", "=", r"\cdot")
            and not _in_number(tex, match)
        ):
            found.append(tex[start : match.start()].strip())
            start = match.start()
    found.append(tex[start:].strip())
    return [p for p in found if p]


def _in_number(tex: str, match: re.Match[str]) -> bool:
    """Whether the `\\cdot` of `match` is a number's, between its digits and `10^{`."""
    before, after = tex[: match.start()].rstrip(), tex[match.end() :].lstrip()
    return match.group() == r"\cdot" and before[-1:].isdigit() and after.startswith("10^{")


def opened(part: str) -> list[str]:
    """A piece wider than a line cut inside its widest bracket, `\\left( ... \\right)` outside
    any other, before each `+` or `-` there, as far as that takes (`a \\left(b + c\\right)`:
    `a \\left(b \\right.` and `\\left. + c\\right)`); each cut again where still too wide."""
    if width(part) <= LINE:
        return [part]
    tokens = list(_TOKEN.finditer(part))
    groups, braces = [], 0
    stack: list[int] = []  # the \left of each bracket open, outside any braces
    for k, match in enumerate(tokens):
        token = match.group()
        braces += {"{": 1, "}": -1}.get(token, 0)
        if token == r"\left" and braces == 0:
            stack.append(k)
        elif token == r"\right" and braces == 0 and stack:
            start = stack.pop()
            # a bracket outside any other but the halves of one already cut (\left. ...)
            outer = all(tokens[s + 1].group() == "." for s in stack)
            if outer and k + 1 < len(tokens) and tokens[start + 1].group() == "(":
                groups.append((tokens[start + 1].end(), match.start(), tokens[k + 1].end()))
    if not groups:
        product = _over(part)
        return [part] if product is None else opened(product)
    inner_start, inner_end, end = max(groups, key=lambda g: width(part[g[0] : g[1]]))
    inside = pieces(part[inner_start:inner_end])
    if len(inside) < 2:
        return [part]
    head, tail = part[:inner_start], part[inner_end:end]  # ... \left( and \right)
    cut = [
        f"{head}{inside[0]} \\right.",
        *(rf"\left. {p} \right." for p in inside[1:-1]),
        rf"\left. {inside[-1]} {tail}{part[end:]}",
    ]
    return [p for piece in cut for p in opened(piece)]


def _over(part: str) -> str | None:
    """`part` with its widest fraction outside any braces, `\\frac{N}{D}`, written as the
    product `\\frac{1}{D} \\left(N\\right)` where N is a sum wider than a line: a
    numerator then breaks over lines, where no line may break inside one fraction. None
    where there is no such fraction."""
    tokens = list(_TOKEN.finditer(part))
    found: list[tuple[int, tuple[int, int, int], tuple[int, int, int]]] = []
    for k, match in enumerate(tokens):
        if match.group() != r"\frac" or part[: match.start()].count("{") != part[
            : match.start()
        ].count("}"):
            continue
        groups: list[tuple[int, int, int]] = []
        depth, begin = 0, 0
        for token in tokens[k + 1 :]:
            if token.group() == "{":
                depth += 1
                if depth == 1:
                    begin = token.end()
            elif token.group() == "}":
                depth -= 1
                if depth == 0:
                    groups.append((begin, token.start(), token.end()))
                    if len(groups) == 2:
                        break
            elif depth == 0 and not token.group().isspace():
                break
        if len(groups) == 2:
            found.append((match.start(), groups[0], groups[1]))
    wide = [f for f in found if width(part[f[1][0] : f[1][1]]) > LINE]
    if not wide:
        return None
    start, (top, top_end, _), (bottom, bottom_end, end) = max(
        wide, key=lambda f: width(part[f[1][0] : f[1][1]])
    )
    numerator, inverse = part[top:top_end], rf"\frac{{1}}{{{part[bottom:bottom_end]}}}"
    if len(pieces(numerator)) > 1:
        over = rf"{inverse} \left({numerator}\right)"
    elif numerator.startswith(r"\left(") or r" \left(" in numerator:  # 2 x (a + b + ...)
        at = numerator.index(r"\left(")
        factor = numerator[:at].strip() or "1"
        over = rf"\frac{{{factor}}}{{{part[bottom:bottom_end]}}} {numerator[at:]}"
    else:
        return None
    return part[:start] + over + part[end:]


def broken(parts: list[str], first: float, line: float = LINE) -> list[list[str]]:
    """`parts` (pieces of a right side) gathered into lines of `line` letters: the first line
    has `first` letters already, each one after it the indent of a continued line; a piece
    wider than a line is cut inside a bracket first (`opened`)."""
    parts = [p for part in parts for p in opened(part)]
    lines: list[list[str]] = [[]]
    used = first
    sizes = [width(part) + 0.5 for part in parts]
    for k, (part, size) in enumerate(zip(parts, sizes, strict=True)):
        # what follows a wide space (the product beside a local derivative) goes on a line
        # of its own where it does not fit whole
        rest = sum(sizes[k:]) if part.startswith(r"\qquad") else size
        if lines[-1] and used + rest > line:
            lines.append([])
            used = width(r"\quad") + 2.0
        if lines[-1] and lines[-1][-1].endswith(r" \right.") and part.startswith(r"\left. "):
            part = lines[-1].pop().removesuffix(r" \right.") + part.removeprefix(r"\left.")
        lines[-1].append(part)
        used += size
    return [_balanced(line) for line in lines]


def _balanced(line: list[str]) -> list[str]:
    """A line whose brackets a cut left open (a bracket cut inside one already cut) closed
    by `\\right.` at its end, or opened by `\\left.` at its start: LaTeX sets each line of a
    display alone, its \\left and \\right in pairs."""
    depth, lowest = 0, 0
    for token in _TOKEN.findall(" ".join(line)):
        depth += {r"\left": 1, r"\right": -1}.get(token, 0)
        lowest = min(lowest, depth)
    if not line or (depth == 0 and lowest == 0):
        return line
    opening, closing = -lowest, depth - lowest
    ends = [r"\left. " * opening + line[0], *line[1:]]
    ends[-1] += r" \right." * closing
    return ends


# An operator a continued line begins with, on its own or after `\left.`
_LEADING_OPERATOR = re.compile(r"^((?:\\left\. )?)(?=(?:[-+=]|\\cdot|\\approx) )")


def continued(line: str) -> str:
    r"""A line that goes on from the one above: `&\quad ...`, an operator it begins with set
    between operands (`{} + b`), not as a sign, as TeX sets `+ b` alone."""
    return "&\\quad " + _LEADING_OPERATOR.sub(r"\1{} ", line)


def equations(rows: list[tuple[str, str]]) -> list[str]:
    """Equations `left = right` (`right` may hold more relations, `= 4, \\qquad 4 \\cdot 1
    = 4`) as one display: aligned at their first `=` where every line fits the page so;
    else gathered, each equation broken over lines where it would not fit on one."""
    lefts = [width(left) for left, _ in rows]
    rights = [width(right) + 2.0 for _, right in rows]
    if max(lefts, default=0) + max(rights, default=0) <= LINE:
        body = [f"{left} &= {right}" for left, right in rows]
        return [r"\begin{align*}", " \\\\\n".join(body), r"\end{align*}"]
    body = []
    for (left, right), size in zip(rows, lefts, strict=True):
        if size + width(right) + 2.0 <= LINE:
            body.append(f"{left} = {right}")
            continue
        parts = pieces("= " + right)
        alone = size > WIDEST_LEFT or size + width(parts[0]) > LINE - 6
        lines = broken(parts, width(r"\quad") if alone else size)
        written = [" ".join(line) for line in lines]
        head = [f"& {left}", rf"&\quad {written[0]}"] if alone else [f"{left} &{written[0]}"]
        rest = [continued(line.removeprefix(chr(92) + "qquad ")) for line in written[1:]]
        body.append("\\begin{aligned}\n" + " \\\\\n".join([*head, *rest]) + "\n\\end{aligned}")
    return [r"\begin{gather*}", " \\\\\n".join(body), r"\end{gather*}"]
