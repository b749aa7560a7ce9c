"""What the commands read: SOURCE (text, a file or standard input) and input values."""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

from ._output_files import reading
from ._program import Program
from .errors import (
    BadInputValue,
    InputError,
    NanogradError,
    SourceError,
    StreamError,
    command,
    option,
    printable,
    value_hint,
)

if TYPE_CHECKING:
    import numpy as np

    from .results import InputValue

INPUT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Text that reads as a file name rather than an expression: a path, or a name with an
# extension (model.txt, ./nosuch, ../m.ng).
LOOKS_LIKE_A_PATH = re.compile(r"[\w./~-]*(?:/[\w./~-]*|\.[A-Za-z]\w*)")


def input_values(
    pairs: Iterable[tuple[str, str]],
    var: Iterable[str],
    warn: Callable[[str], None] | None = None,
    seed: int | None = None,
    draws: bool = False,
) -> dict[str, InputValue]:
    """The values of `--NAME VALUE` (as pairs) and `--var NAME=VALUE`: numbers (`nan` and
    `inf` too) or constant expressions of the language (`pi/2`), as floats; arrays
    (`[1, 2]`, `eye(3)`, `@FILE`) as NumPy arrays. A non-zero number too small for a float,
    which becomes 0, is told to `warn`. A random start, `normal(16, 2)` or `uniform(16, 2)`,
    is drawn with `seed` (for `--seed`), in the order the values are given, by a command that
    `draws` them (minimize); another says that it takes none."""
    given = [(name, text, False) for name, text in pairs]  # False: not from --var
    for item in var:
        name, equals, value = item.partition("=")
        if not equals or not INPUT_NAME.fullmatch(name):
            raise InputError(f"{option('var')} expects NAME=VALUE, got {item!r}")
        given.append((name, value, True))
    values: dict[str, InputValue] = {}
    draw = _RandomStarts(seed, draws)
    for name, text, by_var in given:
        if name in values:
            raise InputError(f"a value for {name} is given twice")
        shown = printable(shortened(text))  # a tab as \t, as a message shows a file's name
        typed = option("var", f"{name}={shown}") if by_var else f"--{name} {shown}"
        if RANDOM_CALL.search(text):
            values[name] = draw(text, typed)
            continue
        number = text_number(text, typed)
        if number is None and ARRAY_VALUE.search(text):
            values[name] = array_value(text, typed)
            continue
        if number is None:
            if by_var:
                raise InputError(
                    f"{option('var', f'{name}=VALUE')} expects a number, got "
                    f"{shortened(text)!r}{value_hint(name, shortened(text))}"
                )
            raise BadInputValue(name, shortened(text))
        if number == 0 and UNDERFLOWS.fullmatch(text.strip()) and warn:
            warn(f"warning: {typed} is too small for a float: it is taken as 0.0")
        values[name] = number
    return values


# A random start: normal(16, 2), uniform(3), alone or scaled by a number, before or after:
# 0.1*uniform(2, 3), normal(16, 2)/4, normal(16)*sqrt(1/16).
RANDOM_VALUE = re.compile(
    r"\s*(?:(?P<before>.+?)\s*\*\s*)?(?P<kind>normal|uniform)\s*\((?P<sizes>[^()]*)\)"
    r"\s*(?:(?P<op>[*/])\s*(?P<after>.+?))?\s*"
)
# A value that calls for a random start, scaled as RANDOM_VALUE says or not.
RANDOM_CALL = re.compile(r"\b(?:normal|uniform)\s*\(")
# What a random start may be, said where one is not.
RANDOM_FORMS = (
    "a random start is normal(...) or uniform(...), alone, times a number or divided by "
    "one: 0.1*uniform(2, 3), normal(16, 2)/4"
)


class _RandomStarts:
    """Draws the random starts of one run, in turn, from one generator seeded with `seed`:
    `normal` from the standard normal distribution, `uniform` from -1 to 1 (as micrograd's
    neurons start)."""

    def __init__(self, seed: int | None, draws: bool):
        self.seed = seed
        self.draws = draws  # whether the command takes random starts
        self.generator: np.random.Generator | None = None

    def __call__(self, text: str, typed: str) -> np.ndarray:
        import numpy as np

        match = RANDOM_VALUE.fullmatch(text)
        before, after = (
            text_number(match[part], typed) if match and match[part] else 1.0
            for part in ("before", "after")
        )
        if match is None or before is None or after is None:
            raise InputError(f"{typed}: {RANDOM_FORMS}")
        if not (math.isfinite(before) and math.isfinite(after)) or (
            match["op"] == "/" and after == 0
        ):
            raise InputError(f"{typed}: a random start is scaled by a finite number, not 0")
        kind = match["kind"]
        shape = _random_shape(kind, match["sizes"], typed)
        if not self.draws:
            raise InputError(
                f"{typed} is random: random starts are for {command('minimize')}, which draws "
                f"them with {option('seed', 'N')}; here, give the values (a list, zeros(...) "
                "or @FILE)"
            )
        if self.seed is None:
            raise InputError(
                f"{typed} is random: give {option('seed', 'N')} to draw it, and to draw the "
                "same one again"
            )
        if self.seed < 0:
            raise InputError(f"invalid value for {option('seed')}: {self.seed} is not at least 0")
        if self.generator is None:
            self.generator = np.random.default_rng(self.seed)
        if kind == "normal":
            drawn = self.generator.standard_normal(shape)
        else:
            drawn = self.generator.uniform(-1.0, 1.0, shape)
        if match["before"]:
            drawn = before * drawn
        return drawn / after if match["op"] == "/" else drawn * after


def _random_shape(kind: str, sizes: str, typed: str) -> tuple[int, ...]:
    """The shape a random start's sizes give (`16, 2`), read as `zeros(16, 2)` reads them:
    whole numbers of 1 or more, written as constant expressions (`3.0`, `2*8`) if need be."""
    from ._arrays import TooLarge
    from ._language import parse

    try:
        zeros = literal_array(parse(f"zeros({sizes})")) if sizes.strip() else None
    except TooLarge as error:
        raise error.of_value(typed) from None
    except SourceError as error:  # zeros(3.5): said of the random start
        raise InputError(f"{typed}: {error.message.replace('zeros', kind)}") from None
    if zeros is None:
        raise InputError(f"{typed}: give the shape as whole numbers of 1 or more, {kind}(16, 2)")
    return zeros.shape


# A value that is an array: a literal, an array function's call, or @FILE.
ARRAY_VALUE = re.compile(r"^\s*[\[@]|\b(?:zeros|ones|eye)\s*\(")
# What `@FILE` may hold: a CSV of numbers without a header, a .npy file, or JSON nested lists.
ARRAY_FILES = "a CSV of numbers without a header, a .npy file, or a .json of nested lists"


# The values an array typed on the command line may hold besides numbers: warned of, as
# `--x nan` is, by the element that holds one.
NON_FINITE = {"nan": math.nan, "inf": math.inf, "infinity": math.inf}


def array_value(text: str, typed: str) -> InputValue:
    """The array an input's value `text` gives (typed as `typed`, for messages): `[1, 2]`,
    `[[1, 2], [3, 4]]`, `zeros(3)`, `2*eye(3)`, or `@FILE`."""
    import numpy as np

    if text.startswith("@"):
        return _array_file(text[1:], typed)
    if re.fullmatch(r"[\s\[\]]*\[\s*\][\s\[\]]*", text):  # [], [[]]
        raise InputError(f"{typed}: an array has at least one element, such as [1, 2, 3]")
    from ._arrays import TooLarge
    from ._language import parse

    try:
        value = literal_array(parse(text))
    except TooLarge as error:
        raise error.of_value(typed) from None
    except SourceError as error:
        element = _element_at(text, error.offset)
        if len(element) > 60:  # 40 axes deep: the place of an element is no help
            element = ""
        said = f"element {element}: " if element else ""
        raise InputError(f"{typed}: {said}{error.message}") from None
    if value is None:
        raise InputError(f"{typed}: an array's elements are numbers, such as [1, 2, 3]")
    return np.asarray(value, dtype=float)


def _element_at(text: str, offset: int) -> str:
    """The element of the array literal `text` at `offset` (`[1, 0]`), or "" outside its
    elements."""
    at: list[int] = []
    depth = 0  # of parentheses, whose commas separate arguments
    for char in text[:offset]:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif depth:
            continue
        elif char == "[":
            at.append(0)
        elif char == "]" and at:
            at.pop()
        elif char == "," and at:
            at[-1] += 1
    return _element(tuple(at)) if at else ""


def literal_array(program: Program) -> np.ndarray | None:
    """The array a value's parsed text writes (`[1, nan]`, `2*eye(3)`), its names nan and
    inf read as those numbers; None where it reads another name."""
    from ._arrays import constant_array

    named = {n: NON_FINITE[n.lower()] for n in program.inputs if n.lower() in NON_FINITE}
    return constant_array(program, named)


def _array_file(path: str, typed: str) -> InputValue:
    """The array in the file `path` (a CSV, which may begin with a UTF-8 byte order mark, a
    .npy or a .json file); a file that cannot be read is exit 1, as `--data FILE`'s is."""
    import io
    import warnings

    import numpy as np

    from ._arrays import numbers_array

    if not path.strip():
        raise InputError(f"{typed}: the file's name is missing after @ (@FILE)")
    try:
        with open(path, "rb") as file:
            reading(file)
            data = file.read()
    except OSError as error:
        raise NanogradError(f"{typed}: cannot read {printable(path)}: {error.strerror}") from None
    extension = os.path.splitext(path)[1].lower()  # (w.JSON is JSON)
    if extension == ".npz":
        raise InputError(
            f"{typed}: a .npz holds several arrays: save one with numpy.save (.npy), or give "
            "it as CSV or JSON"
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # NumPy's warnings are errors of the file's
            if extension == ".npy":
                value = _npy_array(data)
            elif extension == ".json":
                value = _json_array(data)
            else:
                text = data.decode("utf-8-sig")
                delimiter = _delimiter(extension, text)
                try:
                    value = np.loadtxt(io.StringIO(text), delimiter=delimiter, dtype=float, ndmin=2)
                except (ValueError, UserWarning):  # quoted, or where it says why not
                    value = np.array(_csv_numbers(text, delimiter))
                if np.isinf(value).any():  # an inf written as such, not a number too large
                    _csv_numbers(text, delimiter)
                if 1 in value.shape:  # one line, or one column: a vector
                    value = value.ravel()
    except _NotNumbers as error:
        raise InputError(f"{typed}: {error}") from None
    except UnicodeDecodeError as error:
        raise InputError(
            f"{typed}: not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start})"
        ) from None
    except (ValueError, TypeError, OSError, Warning):
        raise InputError(f"{typed}: not an array of numbers ({ARRAY_FILES})") from None
    if np.ndim(value) == 0:  # one number
        return float(numbers_array(np.reshape(value, 1), typed)[0])
    return numbers_array(value, typed)


# How every .npy file begins (NumPy's format, versions 1 to 3).
NPY_MAGIC = b"\x93NUMPY"


def _npy_array(data: bytes) -> np.ndarray:
    """The array a .npy file's bytes hold; _NotNumbers says why there is none."""
    import io

    import numpy as np

    if not data.startswith(NPY_MAGIC):
        raise _NotNumbers("not a .npy file: it does not begin as NumPy's files do")
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except ValueError as error:
        said = str(error)
        if "pickle" in said:
            raise _NotNumbers("an array of real numbers, not of Python objects") from None
        if said.startswith("EOF"):  # EOF: reading array data, expected 80 bytes got 72
            part = "header ends" if "header" in said else "numbers end"
            raise _NotNumbers(f"the file is cut short: its {part} early") from None
        raise _NotNumbers("not a .npy file of numbers: its header cannot be read") from None


def _json_array(data: bytes) -> np.ndarray:
    """The array of numbers a .json file's bytes write (nested lists, or one number);
    _NotNumbers says where they write none, by line and column or by element (`[1, 0]`)."""
    import json

    import numpy as np

    from ._arrays import BOOLEANS, MAX_AXES

    text = data.decode("utf-8-sig")
    try:
        value = json.loads(text, parse_float=_json_float)
    except json.JSONDecodeError as error:
        place = f"line {error.lineno}, column {error.colno}"
        if not text[error.pos :].strip():
            raise _NotNumbers(f"{place}: the JSON ends before its lists are closed") from None
        raise _NotNumbers(f"{place}: not JSON ({error.msg[0].lower()}{error.msg[1:]})") from None
    except RecursionError:
        raise _NotNumbers(f"its lists are nested more than {MAX_AXES} deep") from None
    if isinstance(value, dict):
        raise _NotNumbers(
            f"the file holds a JSON object ({_json_text(value)}), not a list: an array is "
            "nested lists of numbers, [[1, 2], [3, 4]]"
        )
    level: list[tuple[tuple[int, ...], Any]] = [((), value)]
    while level:  # one depth of the nesting at a time: no recursion on what a file holds
        lists = [(at, v) for at, v in level if isinstance(v, list)]
        if lists and len(lists) < len(level):
            number = next(at for at, v in level if not isinstance(v, list))
            raise _NotNumbers(
                f"{_element(number)} is a number where {_element(lists[0][0])} is a list: "
                "an array's rows are equally long"
            )
        if not lists:
            for at, v in level:
                if isinstance(v, bool):  # as a .npy file of booleans is refused
                    raise _NotNumbers(
                        f"{_element(at)}: {_json_text(v)} is a boolean, not a number: {BOOLEANS}"
                    )
                if not isinstance(v, (int, float)):
                    raise _NotNumbers(f"{_element(at)}: {_json_text(v)} is not a number")
            break
        first_at, first = lists[0]
        for at, v in lists:
            if len(v) != len(first):
                raise _NotNumbers(
                    f"{_element(at)} has {len(v)} element{'s' * (len(v) != 1)}, "
                    f"{_element(first_at)} has "
                    f"{len(first)}: an array's rows are equally long"
                )
        level = [((*at, k), e) for at, v in lists for k, e in enumerate(v)]
    return np.array(value, dtype=float)


def _element(at: tuple[int, ...]) -> str:
    """An element of a file's nested lists as a message names it: `[1, 0]`, or `the file`."""
    return f"[{', '.join(map(str, at))}]" if at else "the file"


def _json_text(value: object) -> str:
    """A JSON value as a message quotes it, short."""
    import json

    return shortened(json.dumps(value, ensure_ascii=False), 20)


def _json_float(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise _NotNumbers(f"the number {text} is too large for a float")
    return number


class _NotNumbers(ValueError):
    """What keeps a file from being a CSV of numbers, said by line and field."""


# What separates the numbers of an array file, by its extension: a comma in a .csv, a tab in
# a .tsv; in another (.txt, .dat), a comma if a line has one, else any run of spaces and tabs
# (None), as NumPy's loadtxt reads a file by default.
DELIMITERS = {".csv": ",", ".tsv": "\t"}
SEPARATORS = {",": "commas", "\t": "tabs", None: "spaces or tabs"}


def _delimiter(extension: str, text: str) -> str | None:
    if extension in DELIMITERS:
        return DELIMITERS[extension]
    lines = (line for line in text.splitlines() if not line.lstrip().startswith("#"))
    return "," if any("," in line for line in lines) else None


def _csv_numbers(text: str, delimiter: str | None = ",") -> list[list[float]]:
    """The rows of numbers of the CSV `text`, its fields separated by `delimiter` (None: by
    spaces and tabs), blank lines and `#` comments skipped, a field may be quoted;
    _NotNumbers says where it holds something else (`line 2, field 1: 1e999 is too large
    for a float`)."""
    import csv

    lines = text.splitlines()
    rows: list[list[float]] = []
    first = 0  # the line of the first row
    split = (line.split() for line in lines) if delimiter is None else None
    for number, fields in enumerate(split or csv.reader(lines, delimiter=delimiter or ","), 1):
        if not fields or fields[0].lstrip().startswith("#"):
            continue  # a blank line or a comment, as NumPy's loadtxt skips
        rows.append([_csv_number(field, f"line {number}, field {k}", not rows and k == 1,
                                 SEPARATORS[delimiter])
                     for k, field in enumerate(fields, 1)])  # fmt: skip
        first = first or number
        if len(fields) != len(rows[0]):
            many = "s" * (len(fields) != 1)
            raise _NotNumbers(
                f"line {number} has {len(fields)} number{many}, line {first} has "
                f"{len(rows[0])}: a matrix's rows are equally long"
            )
    if not rows:
        raise _NotNumbers("no numbers in the file")
    return rows


def _csv_number(field: str, where: str, first: bool, separator: str = "commas") -> float:
    """The number a CSV `field` writes; _NotNumbers, said of `where`, where it is none
    (`first`: the file's first field, where a header would be; `separator`: what the file
    separates its numbers by)."""
    written = field.strip()
    try:
        value = float(written)
    except ValueError:
        if not written:
            raise _NotNumbers(f"{where} is empty") from None
        if re.search(r"\d[;\t ]+[-+.\d]", written):
            tsv = " (or name the file .tsv)" if separator == "commas" and "\t" in written else ""
            raise _NotNumbers(
                f"{where}: {written!r} is not a number: separate by {separator}{tsv}"
            ) from None
        header = ": an array file has no header" if first and not re.search(r"\d", written) else ""
        raise _NotNumbers(f"{where}: {written!r} is not a number{header}") from None
    if math.isinf(value) and "inf" not in written.lower():
        raise _NotNumbers(f"{where}: {written} is too large for a float")
    return value


# A number written with a non-zero digit, which is 0 only if it is too small for a float.
UNDERFLOWS = re.compile(r"[-+]?[0-9.]*[1-9][0-9.]*[eE][-+]?[0-9]+")
# A number as written, not worked out (1e999, not 1/0).
_NUMBER = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def text_number(text: str, typed: str) -> float | None:
    """`text`, an input's value as typed, as a number (see `_number`), or None where it is
    none; bad input where it overflows a float (`1e999`, or `1/0` not written as inf),
    said of `typed`, the value as a message quotes it (`--x 1e999`)."""
    number = _number(text)
    if number in (math.inf, -math.inf) and "inf" not in text.lower():
        if _NUMBER.fullmatch(text.strip()):
            raise InputError(f"{typed} is too large for a float")
        raise InputError(
            f"{typed} is {number!r} (an overflow or a division by zero): "
            f"give {number!r} if that is meant"
        )
    return number


def _number(text: str) -> float | None:
    """`text` as a number: what Python's float reads, in ASCII and without `_` (as the
    language writes numbers), or else a constant expression of the language."""
    if text.isascii() and "_" not in text:
        try:
            return float(text)
        except ValueError:
            pass
    from ._language import constant_value

    return constant_value(text)


def shortened(text: str, width: int = 40) -> str:
    """`text` as an error message quotes it: cut to `width` characters (a value can be a
    100,000-digit number)."""
    return text if len(text) <= width else f"{text[: width - 1]}…"


class Source(NamedTuple):
    """Where the source comes from: `-e TEXT` ("text"), `-f PATH` ("file"), a bare SOURCE
    ("either": `-` is standard input, an existing path a file, else text), or, with none
    given, standard input ("implied", `-`)."""

    kind: str
    value: str

    @property
    def stdin(self) -> bool:
        """Whether the source is read from standard input: a bare `-` (`-f -` is the file
        named -, as -f is always a file)."""
        return self.kind in ("either", "implied") and self.value == "-"


def read_source(source: Source) -> str:
    """The source's text."""
    with opened(source) as (file, name):
        return source.value if file is None else decode(without_bom(read_bounded(file)), name)


BOM = b"\xef\xbb\xbf"


def without_bom(data: bytes) -> bytes:
    """`data` without the UTF-8 byte order mark that Windows editors put at a file's start."""
    return data.removeprefix(BOM)


@contextmanager
def opened(source: Source) -> Iterator[tuple[BinaryIO | None, str]]:
    """The file to read the source from and its name for messages: standard input, or the
    file (closed afterwards), or None for text. Errors reading it say what could not be read."""
    kind, value = source
    if source.stdin:
        try:
            yield sys.stdin.buffer, "standard input"
        except OSError as error:
            raise StreamError(f"cannot read standard input: {error.strerror}") from None
    elif kind == "file" or (kind == "either" and os.path.exists(value)):
        try:
            with open(value, "rb") as f:
                reading(f)
                yield f, printable(value)
        except OSError as error:
            raise NanogradError(f"cannot read {printable(value)}: {error.strerror}") from None
    else:
        yield None, "the text"


# Sources are read this many bytes at a time, so that memory is checked as they grow.
CHUNK = 1 << 16


def read_bounded(file: BinaryIO, line: bool = False) -> bytes:
    """All of `file` or, with `line`, its next line (newline included), read a chunk at a
    time. Past `language.LARGE_SOURCE` bytes, and each time it doubles, what has been read is
    held to `language.check_memory`, so that an endless file (/dev/zero) or line is refused
    before memory runs out."""
    from ._language import LARGE_SOURCE, check_memory

    chunks = []
    size, check_at = 0, LARGE_SOURCE
    while True:
        # read1: one read of the file, so that on a terminal one Ctrl-D ends the input
        # (a buffered file, as open(..., "rb") and stdin.buffer are: BinaryIO has no read1)
        chunk = file.readline(CHUNK) if line else file.read1(CHUNK)  # type: ignore[attr-defined]
        chunks.append(chunk)
        size += len(chunk)
        if size > check_at:
            check_memory(size, so_far=True)
            check_at = 2 * size
        # An empty read is the end: on a terminal, a short one is only the line typed.
        if not chunk or (line and chunk.endswith(b"\n")):
            return b"".join(chunks)


def load_program(source: Source, warn: Callable[[str], None] | None = None) -> Program:
    """The source parsed. A bare SOURCE that is no expression but reads as a file name is a
    missing file; one that is both a file and an expression is read as the file, and `warn`
    is told so."""
    from ._language import parse

    text = read_source(source)
    kind, value = source
    if kind == "implied" and not text.strip():
        raise InputError(
            "give a source: SOURCE (- for standard input), -e TEXT or -f PATH (standard input, "
            "read for want of one, is empty)"
        )
    if kind == "either" and text is not value and warn:
        try:
            parse(value)
        except NanogradError:
            pass
        else:
            warn(
                f"warning: {value} is a file and also an expression: read the file (-e TEXT "
                "takes the text)"
            )
    try:
        return parse(text)
    except SourceError as error:
        # (1/2x is an expression with a number glued to a name, as 2x is, more likely than a
        # file; model/2.txt, with an extension, a file)
        glued = "missing operator between" in error.message and not re.search(r"\.[A-Za-z]", value)
        if kind == "either" and text is value and LOOKS_LIKE_A_PATH.fullmatch(value) and not glued:
            raise NanogradError(f"no such file: {printable(value)}") from None
        raise


def glued_source(args: list[str], error: NanogradError) -> str | None:
    """The source meant by an argument such as `-exp(x)` or `-fx`, which the command line
    reads as the option -e or -f with the rest as its value: the argument, when reading that
    value is what failed (a text that does not parse, a file that cannot be read) and the
    whole argument parses."""
    from ._language import parse

    for arg in args:
        if arg == "--":
            break
        option, value = arg[:2], arg[2:]
        if option == "-e" and isinstance(error, SourceError):
            failed = error.source == value
        elif option == "-f":
            failed = str(error).startswith(f"cannot read {printable(value)}:")
        else:
            continue
        if failed and value:
            try:
                parse(arg)
            except NanogradError:
                continue
            return arg
    return None


def source_lines(source: Source) -> Iterator[tuple[int, bytes]]:
    """The source's lines, numbered from 1, for `--each-line`: split at newlines (LF or CRLF)
    only, as the language splits statements, the same for text, a file or standard input;
    read as they arrive; undecoded, so that a line that is not UTF-8 fails alone."""
    with opened(source) as (file, _):
        lines: Iterable[bytes]
        if file is None:
            lines = source.value.encode("utf-8", "surrogateescape").split(b"\n")
        else:
            lines = iter(lambda: read_bounded(file, line=True), b"")
        for number, line in enumerate(lines, 1):
            if number == 1 and file is not None:
                line = without_bom(line)
            yield number, line.removesuffix(b"\n").removesuffix(b"\r")


def decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"{where} is not valid UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})"
        ) from None
