"""Output files written as a stream, so that a failed run leaves none behind: rows go to a
temporary file beside the target, renamed into place when the run succeeds."""

from __future__ import annotations

import os
import stat
import tempfile
from typing import BinaryIO

from ..errors import NanogradError


class OutputFile:
    """`path` opened for writing in binary. `commit()` puts it in place, `discard()` removes
    what was written. A path that exists and is no regular file (`/dev/stdout`, a pipe) is
    written directly: there is nothing to replace."""

    def __init__(self, path: str):
        self.path = path
        self.temporary = None
        try:
            mode = os.stat(path).st_mode if os.path.exists(path) else None
            if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
                self.file: BinaryIO = open(path, "wb")
                return
            directory = os.path.dirname(os.path.abspath(path))
            if mode is not None and stat.S_ISDIR(mode):
                raise IsADirectoryError(21, os.strerror(21))
            fd, self.temporary = tempfile.mkstemp(dir=directory, prefix=".nanograd-", suffix=".tmp")
            self.mode = stat.S_IMODE(mode) if mode is not None else _new_file_mode()
            self.file = os.fdopen(fd, "wb")
        except OSError as error:
            raise NanogradError(f"cannot write {path}: {error.strerror}") from None

    def commit(self) -> None:
        try:
            self.file.flush()
            if self.temporary is not None:
                os.fsync(self.file.fileno())
            self.file.close()
            if self.temporary is not None:
                os.chmod(self.temporary, self.mode)
                os.replace(self.temporary, self.path)
                self.temporary = None
        except OSError as error:
            self.discard()
            raise NanogradError(f"cannot write {self.path}: {error.strerror}") from None

    def discard(self) -> None:
        try:
            self.file.close()
        except OSError:
            pass  # what failed to be written is being thrown away
        if self.temporary is not None:
            os.unlink(self.temporary)
            self.temporary = None


def _new_file_mode() -> int:
    """The usual permissions of a new file, not mkstemp's 0600."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
