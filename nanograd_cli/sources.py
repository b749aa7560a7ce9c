"""What the commands read: SOURCE (text, a file or standard input) and input values."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

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
            if "_" in text:  # float() takes 1_000; the language does not
                raise ValueError(text)
            values[name] = float(text)
        except ValueError:
            raise BadInputValue(name, text) from None
        if values[name] in (float("inf"), float("-inf")) and "inf" not in text.lower():
            raise InputError(f"--{name} {text} is too large for a float")
    return values


class Source(NamedTuple):
    """Where the source comes from: `-e TEXT` ("text"), `-f PATH` ("file"), or a bare
    SOURCE ("either": `-` is standard input, an existing path a file, else text)."""

    kind: str
    value: str


def read_source(source: Source) -> str:
    """The source's text."""
    kind, value = source
    if kind == "text":
        return value
    if value == "-":
        return decode(sys.stdin.buffer.read(), "standard input")
    if kind == "file" or os.path.exists(value):
        try:
            with open(value, "rb") as f:
                return decode(f.read(), value)
        except OSError as error:
            raise NanogradError(f"cannot read {value}: {error.strerror}") from None
    return value


def load_program(
    source: Source, warn: Callable[[str], None] | None = None, several: bool = False
) -> Program:
    """The source parsed. A bare SOURCE that is no expression but reads as a file name is a
    missing file; one that is both a file and an expression is read as the file, and `warn`
    is told so. A source that lists several outputs is bad input unless `several`."""
    from .language import parse

    text = read_source(source)
    kind, value = source
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
        program = parse(text)
    except SourceError:
        if kind == "either" and text is value and LOOKS_LIKE_A_PATH.fullmatch(value):
            raise NanogradError(f"no such file: {value}") from None
        raise
    return program if several else program.single()


def source_lines(source: Source) -> Iterator[tuple[int, str]]:
    """The source line by line (numbered from 1), read as it arrives: for `--each-line`."""
    if source.kind != "text" and source.value == "-":
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
