"""Writing output files so that a failed or stopped run never leaves a partial one.

What is written goes to a temporary file beside the target, renamed into place when all went
well. A symbolic link is written through: the file it points to is replaced, the link is kept.
A file that is not a regular one (a terminal, a pipe, `/dev/null`), and a name of a stream
(`/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`), is written directly: there is nothing to
replace, and a stream's file must stay the one the shell opened.

The temporary file is removed when the run fails, and also when it is stopped: Ctrl-C
(SIGINT), `kill` and `timeout` (SIGTERM), a closed terminal (SIGHUP). Every file a command
writes goes through `OutputFile`, the one place that does this.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from types import FrameType
from typing import BinaryIO

from .errors import InputError, NanogradError, file_name, printable

# The signals that stop a run, after which no temporary file may be left behind.
STOPPING_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


# The regular files this run has read, by (device, inode), and their names: no output may be
# written over one of them (a picture over the data it was drawn from).
_inputs: dict[tuple[int, int], str] = {}


def new_run() -> None:
    """Forget the files a run before this one read (a repl's line, a call from Python)."""
    _inputs.clear()


def files_read() -> frozenset[tuple[int, int]]:
    """The regular files this run has read, to refuse an output over one of them later (a fit
    from Python, saved by another call): for `read_before`."""
    return frozenset(_inputs)


def read_before(files: frozenset[tuple[int, int]]) -> None:
    """Refuse an output over `files` in this run too, as over those it reads."""
    _inputs.update(dict.fromkeys(files, ""))


def reading(file: object) -> None:
    """Note that this run reads the open `file`: an output written over it is refused."""
    with contextlib.suppress(AttributeError, OSError, ValueError):  # (no file, a stream)
        info = os.fstat(file.fileno())  # type: ignore[attr-defined]
        if stat.S_ISREG(info.st_mode):
            _inputs[(info.st_dev, info.st_ino)] = str(getattr(file, "name", ""))


def _not_read(path: str, target: str) -> None:
    """Refuse to write `path` (whose file is `target`) where this run read that file."""
    with contextlib.suppress(OSError):
        info = os.stat(target)
        if (info.st_dev, info.st_ino) in _inputs:
            raise InputError(
                f"{printable(path)} is a file this command reads: write to another file"
            )


def check_output(path: str, known: Iterable[str] = ()) -> None:
    """Refuse, at the start of a run and not after its work, a name to write that is one of
    the `known` extensions alone (`.csv`), a directory (or ends in `/`), or a file in a
    directory that does not exist. `-`, standard output, is no file."""
    if path == "-":
        return
    extension(path, known)
    a_directory(path)
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise NanogradError(f"cannot write {printable(path)}: No such file or directory")


def a_directory(path: str) -> None:
    """Refuse to write `path` where it names a directory: bad input, not a file to make (`-o
    sub/` made a file `sub`)."""
    if os.path.isdir(path):
        raise InputError(f"{printable(path)} is a directory: give the name of a file to write")
    if path.endswith(("/", os.sep)):
        raise InputError(
            f"{printable(path)} ends in /, as a directory's name: give the name of a file to write"
        )


class OutputFile:
    """`path` opened for writing in binary, as `file`. `commit()` puts what was written in
    place (through a symbolic link, at the file it names), `discard()` removes it. A path that
    is no regular file, or names a stream, is written directly (see `target`). As a context
    manager, it commits when the block ends normally and discards when it raises."""

    def __init__(self, path: str):
        self.path = file_name(path)
        self.temporary: str | None = None
        a_directory(path)  # (whichever door wrote it, before any file is made)
        try:
            self.target = target(path)
            _not_read(path, self.target)  # (bad input, before any file is made)
            mode = os.stat(self.target).st_mode if os.path.exists(self.target) else None
            if _stream(self.target) or (mode is not None and not stat.S_ISREG(mode)):
                # appended: /dev/stdout redirected to a file (> out.txt) keeps what this
                # process wrote there before, which goes first
                sys.stdout.flush()
                self.file: BinaryIO = open(path, "ab")
                return
            directory = os.path.dirname(self.target)
            self.mode = stat.S_IMODE(mode) if mode is not None else _new_file_mode()
            _watch()
            with _held():  # a signal now would find the file made but not yet known
                fd, self.temporary = tempfile.mkstemp(
                    dir=directory, prefix=".nanograd-", suffix=".tmp"
                )
                _temporaries.add(self.temporary)
            self.file = os.fdopen(fd, "wb")
        except OSError as error:
            self.discard()
            _release(None)
            raise NanogradError(f"cannot write {printable(path)}: {error.strerror}") from None

    def commit(self) -> None:
        self.finish()
        with _held():
            self.put_in_place()

    def finish(self) -> None:
        """What was written, on the disk, ready to be put in place."""
        try:
            self.file.flush()
            if self.temporary is not None:
                os.fsync(self.file.fileno())
            self.file.close()
            if self.temporary is not None:
                os.chmod(self.temporary, self.mode)
        except OSError as error:
            self.discard()
            raise NanogradError(f"cannot write {printable(self.path)}: {error.strerror}") from None
        except BaseException:  # (no temporary file is left behind, whatever stopped it)
            self.discard()
            raise

    def put_in_place(self) -> None:
        """The finished file in place of the target (a signal held off by the caller)."""
        if self.temporary is not None:
            try:
                os.replace(self.temporary, self.target)
            except OSError as error:
                self.discard()
                message = f"cannot write {printable(self.path)}: {error.strerror}"
                raise NanogradError(message) from None
            _release(self.temporary)
            self.temporary = None

    def discard(self) -> None:
        file = getattr(self, "file", None)
        if file is not None:
            with contextlib.suppress(OSError):  # what failed to be written is thrown away
                file.close()
        if self.temporary is not None:
            with contextlib.suppress(FileNotFoundError):  # a signal may have removed it
                os.unlink(self.temporary)
            _release(self.temporary)
            self.temporary = None

    def __enter__(self) -> OutputFile:
        return self

    def __exit__(self, kind, error, traceback) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


def write_atomically(path: str, data: bytes) -> None:
    """Write `data` to `path` whole, or not at all: if anything fails, or the run is stopped,
    `path` is left as it was. Inside `together()`, it is put in place with the others."""
    output = OutputFile(path)
    try:
        output.file.write(data)
        output.file.flush()
    except BrokenPipeError:  # a stream's reader went away (| head -1): as for stdout
        output.discard()
        raise
    except OSError as error:
        output.discard()
        raise NanogradError(f"cannot write {printable(path)}: {error.strerror}") from None
    except BaseException:
        output.discard()
        raise
    if _together is None:
        output.commit()
    else:
        _together.append(output)


# The files written inside `together()`, each waiting to be put in place with the others.
_together: list[OutputFile] | None = None


@contextlib.contextmanager
def together() -> Iterator[list[bool]]:
    """The files `write_atomically` writes in the block are put in place together at its
    end, each whole, a signal held off until all are: where the block raises or the run is
    stopped before, none is (a fit's rows, picture and saved fit are all new, or all old).
    It gives a list that holds True once they are in place (a signal held off till then
    comes after)."""
    global _together
    outer, _together = _together, []
    pending, placed = _together, list[bool]()
    try:
        yield placed
        for output in pending:
            output.finish()
        with _held():
            for output in pending:
                output.put_in_place()
            placed.append(True)
    finally:
        for output in pending:
            output.discard()  # (those put in place have nothing left to discard)
        _together = outer


def target(path: str) -> str:
    """The file that writing `path` writes: `path` with its symbolic links followed, each
    one from where it is, up to the first name of a stream (`/dev/stdout` is a link to
    `/proc/self/fd/1`, which is one) or the first name that is no link (a link that points
    at nothing names the file it would make). A loop of links is left to `open` to report."""
    here = os.path.abspath(path)
    for _ in range(40):  # as many links as Linux follows
        if _stream(here) or not os.path.islink(here):
            break
        here = os.path.join(os.path.realpath(os.path.dirname(here)), os.readlink(here))
        here = os.path.normpath(here)
    if _stream(here):
        return here
    return os.path.join(os.path.realpath(os.path.dirname(here)), os.path.basename(here))


def _stream(path: str) -> bool:
    """Whether `path` names a file of the system's own (`/dev/...`, `/proc/...`): a stream
    or a device, written as it is, never replaced."""
    return path.startswith(("/dev/", "/proc/")) and not path.startswith("/dev/shm/")


def _new_file_mode() -> int:
    """The usual permissions of a new file, not mkstemp's 0600."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


# The temporary files being written, and the handlers that were there before the ones that
# remove them on a stopping signal (installed while there is any).
_temporaries: set[str] = set()
# (what signal.getsignal returns)
_previous: dict[int, Callable[[int, FrameType | None], object] | int | signal.Handlers | None] = {}
_deferred: list[int] = []  # signals that came while `_held`
_holding = 0


def _watch() -> None:
    """Install the handlers that remove the temporary files, unless they are installed."""
    if not _previous and threading.current_thread() is threading.main_thread():
        for number in STOPPING_SIGNALS:
            handler = signal.getsignal(number)
            # One that is ignored (nohup) stays so; one handled outside Python is left alone.
            if handler is signal.SIG_DFL or callable(handler):
                _previous[number] = handler
                signal.signal(number, _remove_then_stop)


def _release(temporary: str | None) -> None:
    """`temporary` is gone or in place; with no other left, the handlers are put back."""
    _temporaries.discard(temporary)
    if not _temporaries and threading.current_thread() is threading.main_thread():
        for number, handler in _previous.items():
            signal.signal(number, handler)
        _previous.clear()


@contextlib.contextmanager
def _held():
    """A signal that comes in the block is acted on at its end, so that the files known to
    exist are the files that do."""
    global _holding
    _holding += 1
    try:
        yield
    finally:
        _holding -= 1
        if not _holding and _deferred:
            number = _deferred.pop()
            _deferred.clear()
            signal.raise_signal(number)  # to the handler there now


def _remove_then_stop(number: int, frame: FrameType | None) -> None:
    """Remove every temporary file, then do what the signal did before: raise
    KeyboardInterrupt for Ctrl-C, end the process for SIGTERM and SIGHUP."""
    if _holding:
        _deferred.append(number)
        return
    for temporary in list(_temporaries):
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    _temporaries.clear()
    previous = _previous.get(number, signal.SIG_DFL)
    for other, handler in _previous.items():
        signal.signal(other, handler)
    _previous.clear()
    if callable(previous):
        previous(number, frame)
    else:
        signal.raise_signal(number)


def extension(path: str, known: Iterable[str]) -> str:
    """The extension of the file name `path`, lower case ('' for none). A name that is one of
    the `known` extensions alone (`-o .svg`) is an InputError: a file's name goes before it."""
    name = os.path.basename(path)
    if name.lower() in known:
        raise InputError(
            f"{printable(path)} is an extension alone: give the file a name before it (out{name})"
        )
    return os.path.splitext(path)[1].lower()
