"""A fit as Python gets it from `nanograd_cli.fit`, `load_fit` and `load_fits`: the result,
and what can be done with it: the model at new rows with its bands (`fit --predict`), and the
fit saved to a file (`fit --save`)."""

from __future__ import annotations

import os
from collections.abc import ItemsView, ValuesView
from dataclasses import fields
from typing import TYPE_CHECKING, Any, cast

from . import results
from ._door import note, python_door, saved_path, table

if TYPE_CHECKING:
    import numpy as np

    from ._door import Data


class Fit(results.Fit):
    """A least-squares fit (see `nanograd_cli.results.Fit`) that predicts and saves."""

    # the data files it was fitted to, which `save` does not write over
    read: frozenset[tuple[int, int]] = frozenset()

    @classmethod
    def of(cls, fit: results.Fit) -> Fit:
        """`fit`, with the methods of a fit from Python."""
        return cls(**{field.name: getattr(fit, field.name) for field in fields(fit)})

    @python_door
    def predict(self, data: Data, band: float | None = None) -> dict[str, np.ndarray]:
        """The model at the rows of `data` (a mapping of column names to 1-D arrays, a
        pandas DataFrame, or the path of a table): `fitted` and its standard error
        `fitted_se`, and with `band` (a level, 0.95) the confidence band `lower`, `upper`
        and the band of one new observation `pred_lower`, `pred_upper`."""
        from . import _api as api

        needed = api.prediction_columns(self)
        rows = table(data, needed, "data", "fit", drop_nan=False, predicting=True)
        found = api.predict(self, rows, band)
        if band is not None and "pred_lower" not in found:
            note(f"no prediction band: sigma reads {self.sigma}, which data lacks")
        return found

    @python_door
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the fit to `path` as JSON, whole or not at all (as `fit --save` does), for
        `nanograd_cli.load_fit`; a fit that did not converge is not saved (NanogradError)."""
        _save(self, path)


class Fits(results.Fits):
    """Fits by group (see `nanograd_cli.results.Fits`): each group's Fit predicts and saves,
    and the whole saves (as `fit --by COLUMN --save` does) for `nanograd_cli.load_fits`."""

    read: frozenset[tuple[int, int]] = frozenset()  # as a Fit's

    @classmethod
    def of(cls, fits: results.Fits) -> Fits:
        """`fits`, each group's Fit with the methods of a fit from Python."""
        groups: dict[Any, results.Fit] = {group: Fit.of(fit) for group, fit in fits.items()}
        return cls(groups, fits.fitted, fits.residuals, fits.by)

    def __getitem__(self, group: Any) -> Fit:
        return cast(Fit, self.fits[group])

    def items(self) -> ItemsView[Any, Fit]:
        """Each group's value with its Fit, in the order the groups first appear."""
        return cast("ItemsView[Any, Fit]", super().items())

    def values(self) -> ValuesView[Fit]:
        """Each group's Fit, in the order the groups first appear."""
        return cast("ValuesView[Fit]", super().values())

    @python_door
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write every group's fit to `path` as JSON, whole or not at all (as `fit --by
        COLUMN --save` does), for `nanograd_cli.load_fits`; not where a group's fit did not
        converge (NanogradError)."""
        _save(self, path)


def _save(fit: Fit | Fits, path: str | os.PathLike[str]) -> None:
    """`fit` written to `path` as `fit --save` writes it, or, where it failed, the error
    that says why it is not."""
    from . import _api as api
    from ._output_files import check_output, read_before, write_atomically
    from .errors import NanogradError, printable

    name = saved_path(path, "save")
    check_output(name, api.SAVED)
    if api.failure(fit):
        raise NanogradError(f"{printable(name)} not written: {api.unconverged(fit)}")
    read_before(fit.read)  # (never over the data, as fit --save)
    write_atomically(name, api.saved_fit(fit).encode())
