"""Columns of numbers: read from any Arrow column (text or numeric) with errors that name the
row, and written as text in the shortest form that reads back to the same float."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from ..errors import InputError, option

# What a table writes for a missing value, read as nan where missing values are left out: R's
# and a database's words, and a spreadsheet's (#N/A), as pandas reads them.
MISSING = ("", "NA", "N/A", "n/a", "#N/A", "#N/A N/A", "#NA", "<NA>", "NaN", "null", "NULL", "None")


class BadValue(InputError):
    """A value of a column that is not a number, in the row numbered `row`."""

    def __init__(self, message: str, row: int):
        super().__init__(message)
        self.row = row


def columns_floats(
    table: pa.Table, names: Sequence[str], first_row: int, missing: bool = False
) -> dict[str, np.ndarray]:
    """`floats` of each column of `table` named in `names`. Where values are not numbers,
    the error is that of the first row with one (of its leftmost column), as a reader of the
    file, going row by row, meets it."""
    found, bad = {}, []
    for name in names:
        try:
            found[name] = floats(table.column(name), name, first_row, missing)
        except BadValue as error:
            bad.append(error)
    if bad:
        raise min(bad, key=lambda error: error.row)
    return found


def floats(column, name: str, first_row: int, missing: bool = False) -> np.ndarray:
    """`column` (an Arrow array, chunked or not, of numbers or of text) as float64. Rows are
    numbered from `first_row` in errors. Text is read as by float(): nan, inf and -inf are
    values; one that overflows (1e400) is an error, as `--x 1e400` is. With `missing`, a
    value that is absent (null, empty, NA) is nan, for the caller to leave its row out."""
    kind = column.type
    if pa.types.is_dictionary(kind):
        column, kind = column.cast(kind.value_type), kind.value_type
    text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
    if column.null_count and missing:
        import pyarrow.compute as pc

        column = pc.fill_null(column if text else column.cast(pa.float64()), "" if text else np.nan)
        kind = column.type
    if column.null_count:
        row = _first_null(column)
        raise BadValue(
            f"{option('points')} {_at(row, name, first_row)} has no value: "
            f"{option('na')} reads a missing value as nan",
            first_row + row,
        )
    if text:
        if missing:
            import pyarrow.compute as pc

            absent = pc.is_in(pc.utf8_trim_whitespace(column), value_set=text_array(MISSING))
            column = pc.if_else(absent, literal("nan"), column)
        return _from_text(column, name, first_row)
    if kind == pa.float64():
        return to_numpy(column)  # no cast: it would import pyarrow.compute, 0.1 s
    if pa.types.is_floating(kind) or pa.types.is_integer(kind) or pa.types.is_decimal(kind):
        return to_numpy(column.cast(pa.float64(), safe=False))
    if _is_list(kind):
        axes = 0
        while _is_list(kind):
            axes, kind = axes + 1, kind.value_type
        first, second = (f"{name}[{','.join(['0'] * (axes - 1) + [k])}]" for k in "01")
        raise InputError(
            f"{option('points')} column {name} holds lists, not numbers: an array input is "
            f"a column per element, row-major, {first}, {second}, ... (a JSON Lines row "
            f'{{"{first}": 1, "{second}": 2}})'
        )
    raise InputError(f"{option('points')} column {name} holds {kind}, not numbers")


def as_read(column, values: np.ndarray):
    """A column that was read as text (`values`, its numbers, as `floats` read them with
    `missing`) as those numbers, with null where a value was missing (null, or text such as
    empty or NA that is no number), for a format that has types to write it in; text read
    as nan stays nan. A column of any other type as it is."""
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_dictionary(kind):
        column, kind = column.cast(kind.value_type), kind.value_type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        return column
    numbers = to_arrow(values)
    if not np.isnan(values).any():
        return numbers
    said = pc.utf8_lower(pc.utf8_trim_whitespace(pc.fill_null(column, "")))
    absent = np.isnan(values) & ~to_numpy(pc.equal(said, literal("nan")))
    return pc.if_else(to_arrow(absent), pa.scalar(None, pa.float64()), numbers)


def _is_list(kind) -> bool:
    return (
        pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind)
    )


def _from_text(column, name: str, first_row: int) -> np.ndarray:
    import pyarrow.compute as pc

    try:
        values = pc.cast(column, pa.float64())
    except pa.ArrowInvalid:
        column = pc.utf8_trim_whitespace(column)  # " 1.5": a space after the comma
        try:
            values = pc.cast(column, pa.float64())
        except pa.ArrowInvalid:
            bad = _first_unreadable(column)
            text = column[bad].as_py()
            what = f": {text!r} is not a number"
            if text == "":  # what pandas writes for nan unless told otherwise
                what = f" is empty: {option('na')} reads a missing value as nan"
            elif text in MISSING:  # R's NA, a database's NULL
                what = f": {text!r} is a missing value: {option('na')} reads it as nan"
            message = f"{option('points')} {_at(bad, name, first_row)}{what}"
            raise BadValue(message, first_row + bad) from None
    array = to_numpy(values)
    infinite = np.isinf(array)
    if infinite.any():
        # Arrow reads 1e400 as inf; float() reads only inf, infinity (any case) so.
        said = to_numpy(pc.match_substring(column, "inf", ignore_case=True))
        overflow = np.flatnonzero(infinite & ~said)
        if overflow.size:
            k = int(overflow[0])
            text = column[k].as_py()
            raise BadValue(
                f"{option('points')} {_at(k, name, first_row)}: {text} is too large for a float",
                first_row + k,
            )
    return array


def _first_unreadable(column) -> int:
    """The index of the first value that is no number: halve the column until one is left."""
    import pyarrow.compute as pc

    start, length = 0, len(column)
    while length > 1:
        half = length // 2
        try:
            pc.cast(column.slice(start, half), pa.float64())
        except pa.ArrowInvalid:
            length = half
        else:
            start, length = start + half, length - half
    return start


def _first_null(column) -> int:
    import pyarrow.compute as pc

    return int(np.argmax(to_numpy(pc.is_null(column))))


# Conversions between NumPy and Arrow by their buffers: pyarrow's own (pa.array, to_numpy)
# first look for pandas, and importing it takes half a second.


def to_numpy(column) -> np.ndarray:
    """An Arrow column of float64 or bool without nulls as a NumPy array."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    n, offset, data = len(column), column.offset, column.buffers()[1]
    if pa.types.is_boolean(column.type):
        bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")
        return bits[offset : offset + n].view(bool)
    return np.frombuffer(data, dtype=np.float64, count=n, offset=8 * offset)


def to_arrow(values: np.ndarray) -> pa.Array:
    """A 1-D NumPy array of bool, int64 or float64 as an Arrow array (numbers without a
    copy)."""
    values = np.ascontiguousarray(values)
    if values.dtype == bool:
        bits = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])
    if values.dtype == np.int64:
        kind = pa.int64()
    else:
        kind, values = pa.float64(), values.astype(np.float64, copy=False)
    return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(values)])


def text_array(texts: Sequence[str]) -> pa.Array:
    """Python strings as an Arrow string array."""
    data = [t.encode() for t in texts]
    offsets = np.zeros(len(data) + 1, dtype=np.int32)
    np.cumsum([len(d) for d in data], out=offsets[1:])
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]
    return pa.Array.from_buffers(pa.string(), len(data), buffers)


@functools.cache
def literal(text: str) -> pa.Scalar:
    """A string as an Arrow scalar, to hand to a compute function."""
    return text_array([text])[0]


def join(*pieces, separator: str = ""):
    """Row by row, the pieces (string arrays, or a str for every row) joined."""
    import pyarrow.compute as pc

    arrays = [literal(p) if isinstance(p, str) else p for p in pieces]
    return pc.binary_join_element_wise(*arrays, literal(separator))


def _at(index: int, name: str, first_row: int) -> str:
    return f"row {first_row + index}, column {name}"


def float_text(values: np.ndarray) -> pa.Array:
    """Each float as the shortest text that reads back to it, as repr writes it for a whole
    number (2.0, -0.0) so that readers take the column for floats; nan, inf and -inf as such.

    Arrow's cast writes the shortest round-trip digits (0.09114271676623718), in its own
    notation for the exponent (1e+22, 1e-7, 0.00001), which every float reader takes."""
    import pyarrow.compute as pc

    text = pc.cast(to_arrow(values), pa.string())
    whole = np.flatnonzero(np.isfinite(values) & (values == np.trunc(values)))
    if not whole.size:
        return text
    digits = pc.take(text, to_arrow(whole))
    plain = pc.invert(pc.match_substring(digits, "e"))  # 1e+16 reads as a float already
    fixed = pc.if_else(plain, join(digits, ".0"), digits)
    mask = np.zeros(len(values), dtype=bool)
    mask[whole] = True
    return pc.replace_with_mask(text, to_arrow(mask), fixed)
