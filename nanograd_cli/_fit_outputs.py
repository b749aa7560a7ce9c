"""What a fit writes and shows once it ends, the same for the command line's `fit` and the
repl's `:fit`: the fit itself, its notes, the predictions at the rows of --predict (with
--band), the rows of the data with their fitted values (-o), the picture (--plot) and the
saved fit (--save); and the rule that a fit that failed or was interrupted writes no file.

Each door says how it shows a fit, a note, a table of predictions, a plot in text and a file
(`Door`); the checks before a fit (a file that could not be written, --band with nothing to
draw or write it on, --load with what would make another fit) are here too, named as data
(`errors.option`), so that each door words them its own way.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from . import _api as api
from . import _io as io
from ._output_files import check_output, together
from .errors import InputError, Interrupted, NanogradError, option, printable

if TYPE_CHECKING:
    import numpy as np

    from ._program import Program
    from .results import Fit, Fits, InputValue


class Door(Protocol):
    """How a door shows what a fit gives."""

    def fit(self, result: Fit | Fits) -> None:
        """Show the fit (the point reached, for one that failed)."""

    def note(self, text: str) -> None:
        """A note on the fit (`text` without its `note: `), which the user may silence."""

    def report(self, text: str) -> None:
        """A message on standard error, whole (`note: out.csv not written: ...`)."""

    def write(self, path: str, data: bytes) -> None:
        """`data` to the file `path`, or (`-`) as the output."""

    def table(self, columns: Mapping[str, np.ndarray]) -> None:
        """The predictions as a table (`--format table`): the columns read, then those made."""

    def plot(self, text: str) -> None:
        """`--plot -`: the plot in text."""


@dataclass
class Files:
    """What a fit is asked to write besides itself: the rows to `predict` at, the `output`
    file (of the data's rows, or of the predictions), the `picture` (`-`: in text), the
    `save` file, the level of the `band`, log axes; `rows_format`, the format of the rows
    written (None where none are), and `picture_format` (None for a plot in text)."""

    predict: str | None = None
    output: str | None = None
    picture: str | None = None
    save: str | None = None
    band: float | None = None
    logx: bool = False
    logy: bool = False
    rows_format: str | None = None
    picture_format: str | None = None

    @classmethod
    def asked(
        cls,
        predict: str | None,
        output: str | None,
        picture: str | None,
        save: str | None,
        band: object,
        logx: bool,
        logy: bool,
        fmt: str | None = None,
    ) -> Files:
        """The files asked for, checked before the fit: a band with nothing to draw or write
        it on, log axes without a picture, a name whose extension says no format."""
        from .render import figures

        level = None if band is None else api.confidence("band", band)
        api.check_fit_axes(picture, logx, logy)
        if level is not None and not (predict or output or picture):
            raise InputError(
                f"{option('band', 'LEVEL')} is drawn on {option('plot')} and written with "
                f"{option('predict')} or {option('-o')}"
            )
        rows_format = predictions_format(predict, output, fmt)
        picture_format = figures.format_of(picture) if picture and picture != "-" else None
        return cls(predict, output, picture, save, level, logx, logy, rows_format, picture_format)

    def written(self) -> list[str]:
        """The files to write (not standard output)."""
        return [path for path in (self.output, self.picture, self.save) if path and path != "-"]

    def streamed(self) -> list[str]:
        """What goes to standard output in place of the fit's own table or JSON: the rows
        of -o -, the predictions where there is no -o, the saved fit of --save -."""
        rows = self.output == "-" or (self.predict and not self.output)
        return [
            *([option("-o", "-") if self.output else option("predict")] if rows else []),
            *([option("save", "-")] if self.save == "-" else []),
        ]

    def check(
        self, load: str | None, model: bool, data: str | None, named: str, by: str | None = None
    ) -> None:
        """Before the fit: refuse --load with --save alone (a copy of the file), a file that
        could not be written or is one of the files read, --load with the data but no `model`
        (which the door calls `named`: SOURCE, EXPR), and with `by`, rows to predict at
        without the column of the groups."""
        if load and self.save and not model and data is None:
            raise InputError(
                f"{option('load')} with {option('save')} would copy the saved fit: copy the "
                "file itself instead"
            )
        streamed = self.streamed()
        if len(streamed) > 1:
            raise InputError(
                f"{' and '.join(streamed)} would both write to standard output: give "
                f"{option('save')} a file"
            )
        outputs = [(n, p) for n, p in (("-o", self.output), ("plot", self.picture),
                                       ("save", self.save)) if p and p != "-"]  # fmt: skip
        for i, (first, path) in enumerate(outputs):
            for second, other in outputs[i + 1 :]:
                if os.path.realpath(path) == os.path.realpath(other):
                    raise InputError(
                        f"{option(first)} and {option(second)} both name {path}: give each "
                        "its own file"
                    )
        for path in self.written():
            for name, read in (("data", data), ("predict", self.predict)):
                if read and read != "-" and os.path.exists(path) and os.path.samefile(path, read):
                    raise InputError(
                        f"{path} is the {option(name)} file, which is read: write to another file"
                    )
            check_output(path, api.SAVED if path == self.save else ())  # (the others: by format)
        header = _header(self.predict) if by is not None and self.predict else None
        if by is not None and header is not None:  # not after a fit that may take minutes
            api.check_group_column(by, header, (), predicting=True)
        if load and not model and data is not None:
            raise InputError(
                f"{option('load', 'FIT.json')} with {option('data')} starts a new fit from the "
                f"saved values: give the model, {named}, too"
            )


def _header(path: str) -> list[str] | None:
    """The columns of the file `path`, from its header (None where it is a stream, read once
    and later, or cannot be read now: its reading says why)."""
    from ._io.readers import open_points

    if not os.path.isfile(path):
        return None
    try:
        with open_points(path, io.input_format(path, None, "predict", None)) as reader:
            return list(reader.columns)
    except (NanogradError, OSError):
        return None


def predictions_format(predict: str | None, output: str | None, fmt: str | None) -> str | None:
    """The format of the rows written: -o's by its extension; on standard output CSV, JSON
    Lines for --format json, a table for --format table (of predictions; -o - writes CSV).
    None where no rows are written."""
    if output == "-" and fmt != "json":
        return "csv"
    if output and output != "-":
        return io.output_format(output, None, None)
    if not (predict or output):
        return None
    return fmt if fmt == "table" else io.output_format(None, fmt, None) if fmt else "csv"


def refuse_with_load(given: list[str], files: Files, named: str) -> None:
    """--load without a model and data takes the fit from its file: what would make another
    fit (`given`, each an option or an input named as data) is refused, and so are a picture
    (of the data) and -o of the data's rows; `named` is how the door calls the model."""
    given = list(given)
    if files.picture:
        given.append(f"{option('plot')} (it draws the data)")
    if files.output and not files.predict:
        given.append(
            f"{option('-o')} (it writes the data's rows; {option('predict', 'FILE')} writes a "
            "prediction)"
        )
    if given:
        raise InputError(
            f"{option('load')} alone takes a saved fit, not another one: leave out "
            f"{', '.join(given)} (or give {named} and {option('data')} for a new fit from its "
            "values)"
        )


# The options that make a fit, which the fit --load takes was made with (a model and the data
# make a new fit from its values).
FITTING = (
    "data-format",
    "target",
    "sigma",
    "fix",
    "bound",
    "absolute-sigma",
    "derive",
    "drop-nan",
    "restarts",
    "seed",
    "loss",
    "f-scale",
    "ci",
    "profile",
    "steps",
    "by",
    "shared",
)


def saved_starts(
    load: str, program: Program, columns: Mapping[str, object], given: Mapping[str, object]
) -> dict[str, InputValue]:
    """The values saved in `load` (a fit, or a point of minimize --save) of the parameters
    of `program` (its inputs that are no column of the data). A parameter the file holds
    per group (a[A], a[B], ... of a fit with --shared) and none is `given` is bad input."""
    saved = api.load_point(load)
    for name in program.inputs:
        groups = [n for n in saved if n.startswith(f"{name}[")]
        if groups and name not in saved and name not in columns and name not in given:
            raise InputError(
                f"{printable(load)} holds {name} per group ({', '.join(groups)}), as a fit "
                f"with {option('shared')} saves it, and no one value of it: give "
                f"{option(name)} a start (the file's values start the others)"
            )
    return {n: v for n, v in saved.items() if n in program.inputs and n not in columns}


def finish(
    result: Fit | Fits,
    interrupted: Interrupted | None,
    table: io.Table | None,
    files: Files,
    door: Door,
    by: str | None,
    stats: bool = False,
    null: bool = False,
    color: bool = False,
) -> None:
    """Show `result` (a fit, a fit by groups, one loaded, or the point an `interrupted` fit
    reached) through `door`, with its notes (and with `stats` its statistics in the table),
    and write what `files` asks: only when the fit converged (a failed or interrupted fit
    writes no file and says which it did not write). `table` is the data (None for a loaded
    fit); `by` the column of the groups asked for (a loaded fit's own, if not); a plot in
    text is as wide as the terminal, in colour with `color`. Raises the interruption, or the
    failure, last."""
    from .results import Fit

    result.by = by = by or result.by  # (of one Fit, the column of groups sharing parameters)
    for fit in [result] if isinstance(result, Fit) else result.values():
        fit.table_statistics = stats
    failed = interrupted is not None or not result.converged
    streamed = files.streamed()  # what standard output carries in place of the fit
    if failed or not streamed:  # (a failed run shows the point reached there)
        door.fit(result)  # first: a file that cannot be written loses no result
    for remark in api.fit_notes(result):
        door.note(remark)
    written = files.written()
    streamed = [f"the predictions of {s}" if s == option("predict") else s for s in streamed]
    if failed and (written or streamed):  # a failed run leaves no file behind
        why = "the fit was interrupted" if interrupted else api.unconverged(result)
        door.report(f"note: {_listed(written + streamed)} not written: {why}")
    placed: list[bool] = []
    try:
        with together() as placed:  # every file new, or (stopped on the way) none
            _write(result, table, files, door, by, null, color, failed, written)
    except KeyboardInterrupt:
        if written and not failed and not placed:
            door.report(f"note: {_listed(written)} not written: the run was interrupted")
        raise
    if interrupted:
        raise interrupted
    failure = api.failure(result)
    if failure:
        raise NanogradError(failure)


def _listed(paths: list[str]) -> str:
    return paths[0] if len(paths) == 1 else f"{', '.join(paths[:-1])} and {paths[-1]}"


def _write(
    result: Fit | Fits,
    table: io.Table | None,
    files: Files,
    door: Door,
    by: str | None,
    null: bool,
    color: bool,
    failed: bool,
    written: list[str],
) -> None:
    """What `files` asks of a fit (`finish`): none of the files `written` where it `failed`."""
    from .results import Fit

    if files.predict and not failed:
        predictions(result, files, door, by, null)
    elif files.output and not failed:  # (-o - too: standard output has the point reached)
        assert table is not None and files.rows_format  # (--load alone writes no data rows)
        of_rows = None if by is None else api.group_column(by, table, set(table.columns))
        door.write(
            files.output, api.fit_rows(table, result, files.rows_format, files.band, of_rows, null)
        )
    if files.picture and not (failed and files.picture in written):
        assert table is not None  # (--load alone draws nothing)
        from .render import figures

        one = result if isinstance(result, Fit) else next(iter(result.values()))
        groups = None if by is None else api.group_column(by, table, set(table.columns))
        width = figures.terminal_width(shutil.get_terminal_size((80, 24)).columns)
        drawn, notes = api.fit_picture(
            _parse(one.source), table.columns, result, groups, by, files.picture_format,
            files.band, files.logx, files.logy, width, color,
        )  # fmt: skip
        for note in notes:
            door.note(note)
        if isinstance(drawn, bytes):
            door.write(files.picture, drawn)
        else:
            door.plot(drawn)
    if files.save and not failed:
        door.write(files.save, api.saved_fit(result).encode())


def predictions(result: Fit | Fits, files: Files, door: Door, by: str | None, null: bool) -> None:
    """The fit's predictions at the rows of --predict (each row with its group's fit, with
    `by`), written to -o or shown."""
    from .results import Fit

    assert files.predict and files.rows_format
    one = result if isinstance(result, Fit) else next(iter(result.values()))
    read = api.prediction_columns(one)
    predict = files.predict
    rows = io.read_rows(
        predict,
        io.input_format(predict, None, "predict", None),
        read,
        "predict",
        "fit",
        predicting=True,
    )
    if by is None:
        assert isinstance(result, Fit)  # (--by: the fits of groups)
        count = sum(batch.num_rows for _, batch in rows.batches)
        found = api.predict(result, rows.columns, files.band, count, "predict")
    else:
        found = api.predict_groups(
            result, rows.columns, api.group_column(by, rows, read, True), files.band, by, "predict"
        )
    if files.band is not None and "pred_lower" not in found:
        door.note(f"no prediction band: sigma reads {one.sigma}, which {predict} lacks")
    if files.rows_format == "table":  # a table of the columns read and those predicted
        shown = {name: rows.columns[name] for name in read if name in rows.columns}
        if by is not None:
            shown = {by: api.group_column(by, rows, read, True), **shown}
        door.table({**shown, **found})
    else:
        door.write(files.output or "-", api.with_columns(rows, found, files.rows_format, null))


def _parse(source: str) -> Program:
    from ._language import parse

    return parse(source)
