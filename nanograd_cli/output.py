"""Writing output files so that a failed run never leaves a partial one."""

from __future__ import annotations

import errno
import os
import stat
import tempfile

from .errors import NanogradError


def write_atomically(path: str, data: bytes) -> None:
    """Write `data` to a temporary file beside `path`, then rename it into place.

    If anything fails, the temporary file is removed and `path` is left as it was. A path that
    is a device or a pipe (`/dev/stdout`) is written directly: there is nothing to replace.
    """
    temporary = None
    try:
        mode = os.stat(path).st_mode if os.path.exists(path) else None
        if mode is not None and stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if mode is not None and not stat.S_ISREG(mode):
            with open(path, "wb") as f:
                f.write(data)
            return
        directory = os.path.dirname(os.path.abspath(path))
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=".nanograd-", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is None:  # a new file gets the usual permissions, not mkstemp's 0600
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(temporary, stat.S_IMODE(mode))
        os.replace(temporary, path)
        temporary = None
    except OSError as error:
        raise NanogradError(f"cannot write {path}: {error.strerror}") from None
    finally:
        if temporary is not None:
            os.unlink(temporary)
