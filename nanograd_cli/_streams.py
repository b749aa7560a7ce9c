"""Standard streams that the shell closed (`<&-`, `>&-`, `2>&-`).

Python starts with `sys.stdin` or `sys.stdout` None then: output would vanish without a word,
or end in an AttributeError. And the next file opened would take the free descriptor, 0, 1 or
2, where a child process (Graphviz) would take it for its own standard stream. `guard()` fills
each closed descriptor with /dev/null and puts in place of a closed `sys.stdin` or `sys.stdout`
a stream that fails, as a closed one does, with a StreamError on the first read or write, and
in place of a closed `sys.stderr` one that writes to /dev/null.
"""

from __future__ import annotations

import errno
import io
import os
import sys

from .errors import StreamError

CLOSED = os.strerror(errno.EBADF)


class _Closed(io.RawIOBase):
    """A closed standard stream (its descriptor holds /dev/null): reading or writing raises
    StreamError, until `discard` is set, after which what is written goes nowhere."""

    def __init__(self, fd: int, message: str):
        super().__init__()
        self.fd, self.message, self.discard = fd, message, False

    def fileno(self) -> int:
        return self.fd

    def readable(self) -> bool:
        return self.fd == 0

    def writable(self) -> bool:
        return self.fd != 0

    def readinto(self, buffer) -> int:
        raise StreamError(self.message)

    def write(self, data) -> int:
        if self.discard:
            return len(data)
        raise StreamError(self.message)


def closed(stream: object) -> bool:
    """Whether `stream` is one that `guard` put in place of a closed standard stream."""
    return isinstance(getattr(getattr(stream, "buffer", None), "raw", None), _Closed)


def guard() -> None:
    """Hold each closed standard descriptor with /dev/null; make a closed standard input or
    output fail when used."""
    for fd, name, message in (
        (0, "stdin", f"cannot read standard input: {CLOSED}"),
        (1, "stdout", f"cannot write standard output: {CLOSED}"),
        (2, "stderr", None),  # warnings and errors can go nowhere else: drop them
    ):
        try:
            os.fstat(fd)
        except OSError:
            os.open(os.devnull, os.O_RDWR)  # takes the lowest free descriptor: `fd`
        if getattr(sys, name) is not None:
            continue
        if message:
            raw = _Closed(fd, message)
            buffered = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
            setattr(sys, name, io.TextIOWrapper(buffered, encoding="utf-8"))
        else:
            # A None sys.stderr breaks code that asks it `isatty()`; this one writes to the
            # /dev/null now on descriptor 2.
            sys.stderr = open(fd, "w", encoding="utf-8", errors="backslashreplace", closefd=False)


def silence_stdout() -> None:
    """After standard output failed: let Python's flush at exit succeed, writing what is left
    nowhere, rather than fail again."""
    raw = getattr(getattr(sys.stdout, "buffer", None), "raw", None)
    if isinstance(raw, _Closed):
        raw.discard = True
    else:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
