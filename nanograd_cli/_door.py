"""The Python door: a command called as a function of the package (`nanograd_cli.grad`).

Its keywords are the command's options, named as on the command line (`wrt`, `strict`,
`rtol`, `hide_constants`), and the values of the source's inputs; an input named like an
option goes in the mapping `inputs=`. What the api passes to `warn` (the first nan or inf, a
note) becomes a `NanogradWarning` that points at the caller's line, and an error names an
option as Python writes it (`wrt='z'`). Kept small: `import nanograd_cli` loads it.
"""

from __future__ import annotations

import functools
import os
import re
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from numbers import Real
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, SupportsFloat, TypeAlias, TypeVar

from .errors import (
    InputError,
    MissingInputs,
    NanogradWarning,
    NotAnInput,
    SourceError,
    command,
    nearest,
    option,
    spell,
)

if TYPE_CHECKING:
    import numpy as np

    from ._program import Program
    from .results import InputValue
    from .sampling import Range


class DataFrameLike(Protocol):
    """A table as a pandas DataFrame is one: its `columns`, its column names when iterated,
    and a column by its name (`frame["x"]`). No pandas is needed to name it."""

    @property
    def columns(self) -> Any: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __getitem__(self, name: Any, /) -> Any: ...


# An input's value, as `split` reads it: a number (a NumPy scalar too), a str the command line
# reads (`"2"`, `"pi/2"`, `"[1, 2]"`), or for an array input a NumPy array or a list (nested,
# for a matrix).
InputArg: TypeAlias = "SupportsFloat | str | np.ndarray | list[Any]"
# Rows of data: a mapping of column names to columns (a list, an array, a pandas Series:
# anything the table reader takes), a DataFrame, or the path of a CSV, Parquet, Arrow or JSON
# Lines file.
Data: TypeAlias = "Mapping[str, Any] | DataFrameLike | str | os.PathLike[str]"

P = ParamSpec("P")
R = TypeVar("R")

# What the call in progress was warned of, to be shown once it returns.
_notes: ContextVar[list[str] | None] = ContextVar("notes", default=None)


def note(where: SourceError | str) -> None:
    """The api's `warn` for a call from Python: kept until the call returns."""
    notes = _notes.get()
    text = str(where) if isinstance(where, SourceError) else spell(where, "python")
    text = text.removeprefix("warning: ").removeprefix("note: ")
    if notes is None:  # not inside a call of this door's
        warnings.warn(text, NanogradWarning, stacklevel=3)
    else:
        notes.append(text)


# The annotations of the arguments that take text (a column's name, an expression, a word).
TEXT = ("str", "str | None")
# Those of the arguments that take one of some words (`Literal["LR", "TB"]`), and of those
# that take a whole number: a number that is not whole (2.5) is a wrong value, one that is
# no number (True, a list) a wrong type; text is read as the command line reads it.
WORDS = re.compile(r"Literal\[('[^']*'(, )?)+\]( \| None)?")
WHOLE = ("int", "int | None")


def python_door(function: Callable[P, R]) -> Callable[P, R]:
    """`function`, a command called from Python: its warnings shown as NanogradWarning at
    the caller's line, and its errors worded for Python."""
    code = function.__code__
    options = set(code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount])
    defaults = {**dict(zip(reversed(code.co_varnames[: code.co_argcount]),
                           reversed(function.__defaults__ or ()), strict=False)),
                **(function.__kwdefaults__ or {})}  # fmt: skip
    flags = {name for name, default in defaults.items() if isinstance(default, bool)}
    texts = {name for name, kind in function.__annotations__.items() if kind in TEXT}
    words = {
        name: (re.findall(r"'([^']*)'", kind), kind.endswith("None"))
        for name, kind in function.__annotations__.items()
        if WORDS.fullmatch(kind)
    }
    wholes = {name for name, kind in function.__annotations__.items() if kind in WHOLE}

    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        for flag in flags & kwargs.keys():
            given = kwargs[flag]
            numpy = getattr(given, "dtype", None) == "bool" and getattr(given, "shape", 0) == ()
            if not isinstance(given, bool) and not numpy:
                raise TypeError(
                    f"{flag}={given!r:.40}: give True or False, not {type(given).__name__}"
                )
        for name in texts & kwargs.keys():
            given = kwargs[name]
            if given is not None and not isinstance(given, str):
                # fit(..., sigma=1): a parameter named as an argument, most likely
                meant = (
                    f"; a parameter named {name} takes its start in inputs={{{name!r}: "
                    f"{given!r:.20}}}"
                    if "inputs" in options and isinstance(given, SupportsFloat)
                    else ""
                )
                raise TypeError(
                    f"{name}={given!r:.40}: give text, not {type(given).__name__}{meant}"
                )
        for name in words.keys() & kwargs.keys():
            given, (choices, optional) = kwargs[name], words[name]
            if not isinstance(given, str) and not (given is None and optional):
                listed = ", ".join(map(repr, choices))
                raise TypeError(
                    f"{name}={given!r:.40}: give one of {listed}, not {type(given).__name__}"
                )
        for name in wholes & kwargs.keys():
            given = kwargs[name]
            if isinstance(given, bool) or not isinstance(given, str | Real | None):
                raise TypeError(
                    f"{name}={given!r:.40}: give a whole number, not {type(given).__name__}"
                )
        from ._output_files import new_run

        new_run()
        notes: list[str] = []
        token = _notes.set(notes)
        try:
            result = function(*args, **kwargs)
        except NotAnInput as error:
            raise error.named() from None
        except MissingInputs as error:
            error.options = options  # an input named like one goes in inputs=
            error.message = f"{error.message}: {error.hint}"  # what a traceback shows
            raise
        finally:
            _notes.reset(token)
        for text in notes:
            warnings.warn(text, NanogradWarning, stacklevel=2)
        return result

    return call


def saved_path(path: object, function: str) -> str:
    """The path of a saved fit, as `load_fit`, `load_fits` and `save` (`function`) take it: a
    str or a path, else a TypeError naming it."""
    if not isinstance(path, str | os.PathLike) or isinstance(os.fspath(path), bytes):
        raise TypeError(f"{function}(path): path is a str or a path, not {type(path).__name__}")
    return os.fspath(path)


def bound_pairs(given: object) -> Mapping[str, tuple[float, float] | str] | None:
    """`bounds=` as given, checked: a mapping of names to (LO, HI) pairs or `LO:HI` text."""
    if given is None:
        return None
    if not isinstance(given, Mapping):
        raise TypeError(
            f"bounds={given!r:.40}: give a mapping of names to bounds, such as {{'b': (0, 1)}}"
        )
    for name, pair in given.items():
        if isinstance(pair, str):
            continue
        try:
            two = len(pair) == 2 and not isinstance(pair, Mapping)
        except TypeError:
            two = False
        if not isinstance(name, str) or not two:
            raise TypeError(f"bounds={{{name!r}: {pair!r:.40}}}: give (LO, HI) or 'LO:HI'")
    return given


def names(given: object, name: str) -> tuple[str, ...]:
    """Names given to the option `name`, which takes several (`wrt`, `fix`, `against`): one
    as a str, or a sequence of them."""
    if given is None:
        return ()
    if isinstance(given, str):
        return (given,)
    if isinstance(given, tuple) and len(given) == 1 and isinstance(given[0], list | tuple):
        given = given[0]  # the names after the source given as one list: diff(s, ["x", "y"])
    if isinstance(given, list | tuple) and all(isinstance(n, str) for n in given):
        return tuple(given)
    raise InputError(
        f"invalid value for {option(name)}: {given!r} is not a name (give a str, or a list "
        "or tuple of them)"
    )


# Keywords of an earlier version, by command, and their names now.
_RENAMED = {("minimize", "optimizer"): "method"}


def point(
    program: Program,
    name: str,
    values: Mapping[str, object],
    inputs: Mapping[str, object] | None,
    reads: tuple[str, ...] = (),
) -> dict[str, object]:
    """The input values a call to the command `name` gave: its keywords that are not options
    (`values`) and the mapping `inputs`. A keyword that is no input of the source (nor a
    name in `reads`, which the command reads as well) is neither an option of `name` nor an
    input, and said so, with the option or input it is nearest to, if one is near."""
    both = [n for n in values if inputs and n in inputs]
    if both:
        raise InputError(f"a value for {both[0]} is given twice: as {both[0]}= and in inputs=")
    known = set(program.inputs) | set(reads)
    stray = [n for n in values if n not in known]
    if stray:
        listed = ", ".join(program.inputs) or "none"
        close = _RENAMED.get((name, stray[0])) or nearest(
            stray[0], [*_keywords(name), *program.inputs], cutoff=0.65
        )
        meant = f"; did you mean {close}?" if close else ""
        raise InputError(
            f"{command(name)} has no option {stray[0]}, and {stray[0]} is not an input of "
            f"this source (its inputs: {listed}){meant}"
        )
    return {**(inputs or {}), **values}


def _keywords(name: str) -> list[str]:
    """The options of the package's function `name`: its keywords but `inputs`."""
    import nanograd_cli

    code = getattr(nanograd_cli, name).__wrapped__.__code__
    return list(code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount])


def split(
    given: Mapping[str, object], ranged: bool = True
) -> tuple[dict[str, InputValue], dict[str, Range]]:
    """Input values, each a number, a NumPy array or a list, or a range as the command line
    writes it (`"-3:3"`, `"0:1:50"`) or as a tuple (`(-3, 3)`, `(0, 1, 50)`), split into fixed
    values and ranges, each checked as the command line checks them. Where a value is none of
    these, the error names ranges too where the command takes one (`ranged`)."""
    from ._sources import ARRAY_VALUE, RANDOM_CALL, array_value, shortened, text_number
    from .sampling import parse_range

    fixed: dict[str, InputValue] = {}
    ranges: dict[str, Range] = {}
    for name, value in given.items():
        typed = f"{name}={shortened(repr(value))}"
        if getattr(value, "ndim", 0) or isinstance(value, list):  # an array input's value
            from ._arrays import numbers_array

            fixed[name] = numbers_array(value, name)
        elif isinstance(value, tuple):
            ranges[name] = parse_range(name, ":".join(repr(v) for v in value))
        elif isinstance(value, str) and ":" in value:
            ranges[name] = parse_range(name, value)
        elif isinstance(value, str):  # as the command line reads it: "2", "pi/2", "[1, 2]"
            if RANDOM_CALL.search(value):
                raise InputError(
                    f"{typed}: in Python, draw a random start with NumPy, as "
                    f"{name}=np.random.default_rng(0).standard_normal(3)"
                )
            number = text_number(value, typed)
            if number is None and ARRAY_VALUE.search(value):
                fixed[name] = array_value(value, typed)
                continue
            if number is None:
                ranges_too = " (or a range LO:HI, for plot)" if ranged else ""
                raise InputError(f"{typed}: expected a number{ranges_too}")
            fixed[name] = number
        elif isinstance(value, bool) or not hasattr(value, "__float__"):
            raise InputError(f"{typed}: the value of an input is a number")
        else:
            try:
                fixed[name] = float(value)  # type: ignore[arg-type]  # it has __float__
            except OverflowError:  # an int beyond a float's range
                raise InputError(f"{typed} is too large for a float") from None
    return fixed, ranges


def numbers(given: Mapping[str, object], name: str) -> dict[str, InputValue]:
    """Input values that must each be one number or array (a range is for plot and check's
    against)."""
    fixed, ranges = split(given, ranged=False)
    if ranges:
        (first, _), *_ = ranges.items()
        raise InputError(
            f"{first} is given a range: a range is for plot() and check(against=...); "
            f"{command(name)} takes a number"
        )
    return fixed


def table(
    data: Data,
    needed: set[str],
    option: str,
    name: str,
    drop_nan: bool | None = None,
    predicting: bool = False,
) -> dict[str, Any]:
    """The columns of `data` that `needed` names: `data` is a mapping of column names to
    1-D arrays (a pandas DataFrame is one), or the path of a CSV, Parquet, Arrow or JSON
    Lines file. For a command that takes `drop_nan`, an absent value is read as nan, and
    without `drop_nan` the first is an error that names the row and `drop_nan`, as the
    command line's is; rows to predict at (`predicting`, with `drop_nan` False) need every
    value, and the error says so."""
    from . import _io as io

    columns: Mapping[str, Any] | DataFrameLike
    if isinstance(data, str | os.PathLike):
        path = os.fspath(data)
        fmt = io.input_format(path, None, option, None)
        if drop_nan is None:
            columns = io.read_table(path, fmt, needed, option, name).columns
        else:  # (its missing values refused as it is read)
            read = io.read_rows(path, fmt, needed, option, name, drop_nan, predicting=predicting)
            columns = read.columns
    elif isinstance(data, Mapping) or hasattr(data, "columns"):  # (a DataFrame)
        columns = data
    else:
        raise InputError(
            f"{option}: a mapping of column names to arrays, a DataFrame or a file's path, not "
            f"{type(data).__name__}"
        )
    found = io.Columns((n, columns[n]) for n in columns if n in needed)
    found.names = io.names_of(columns)  # (for messages)
    if columns is data and drop_nan is False:  # a missing value in memory said as a file's is
        io.refuse_missing(found, list(found), needed, option, predicting)
    return found


def group_column(data: Data, by: str, read: set[str]) -> list:
    """The value of the column `by` of `data` (as `table` takes it) on each row, which names
    its group: numbers or text."""
    from . import _api as api

    if isinstance(data, str | os.PathLike):
        from . import _io as io

        path = os.fspath(data)
        whole = io.read_table(path, io.input_format(path, None, "data", None), (), "data", "fit")
        api.check_group_column(by, whole.names, read)
        return io.group_values(whole, by)
    api.check_group_column(by, list(data), read)
    values = data[by]
    groups = values.tolist() if hasattr(values, "tolist") else list(values)
    from . import _io as io

    io.refuse_missing_group(groups, by, "data")
    return groups
