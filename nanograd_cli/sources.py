"""What the commands read: SOURCE (text, a file or standard input) and input values."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Iterator

from .errors import BadInputValue, InputError, NanogradError, SourceError
from .program import Program

INPUT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Text that reads as a file name rather than an expression: a path, or a name with an
# extension (model.txt, ./nosuch, ../m.ng).
LOOKS_LIKE_A_PATH = re.compile(r"[\w./~-]*(?:/[\w./~-]*|\.[A-Za-z]\w*)")


def input_values(pairs: Iterable[tuple[str, str]], var: Iterable[str]) -> dict[str, float]:
    """The values of `--NAME VALUE` (as pairs) and `--var NAME=VALUE`, as floats."""
    pairs = list(pairs)
    for item in var:
        name, equals, value = item.partition("=")
        if not equals or not INPUT_NAME.fullmatch(name):
            raise InputError(f"--var expects NAME=VALUE, got {item!r}")
        pairs.append((name, value))
    values: dict[str, float] = {}
    for name, text in pairs:
        if name in values:
            raise InputError(f"a value for {name} is given twice")
        try:
            values[name] = float(text)
        except ValueError:
            raise BadInputValue(name, text) from None
        if values[name] in (float("inf"), float("-inf")) and "inf" not in text.lower():
            raise InputError(f"--{name} {text} is too large for a float")
    return values


def read_source(source: str) -> str:
    """SOURCE as text: `-` is standard input, an existing path is read, anything else is text."""
    if source == "-":
        return decode(sys.stdin.buffer.read(), "standard input")
    if os.path.exists(source):
        try:
            with open(source, "rb") as f:
                return decode(f.read(), source)
        except OSError as error:
            raise NanogradError(f"cannot read {source}: {error.strerror}") from None
    return source


def load_program(source: str) -> Program:
    """SOURCE parsed. Text that is no expression but reads as a file name is a missing file."""
    from .language import parse

    text = read_source(source)
    try:
        return parse(text)
    except SourceError:
        if text is source and LOOKS_LIKE_A_PATH.fullmatch(source):
            raise NanogradError(f"no such file: {source}") from None
        raise


def source_lines(source: str) -> Iterator[tuple[int, str]]:
    """SOURCE line by line (numbered from 1), read as it arrives: for `--each-line`."""
    if source == "-":
        for number, raw in enumerate(sys.stdin.buffer, 1):
            yield number, decode(raw, f"line {number}")
    else:
        yield from enumerate(read_source(source).splitlines(), 1)


def decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"{where} is not valid UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})"
        ) from None
