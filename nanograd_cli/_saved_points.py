"""A point saved to a file and read back: `minimize --save` writes the point a descent
reached, and `--load FILE` of any command that takes inputs' values reads them from it, or
from a fit saved by `fit --save` (its parameters)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._fit_predictions import FORMAT as FIT_FORMAT
from ._fit_predictions import VERSION as FIT_VERSION
from ._fit_predictions import named_numbers
from .errors import InputError

if TYPE_CHECKING:
    from .results import InputValue

# What a saved descent says it is, and the version of its layout.
FORMAT, VERSION = "nanograd minimize", 1


def saved(source: str, summary: Mapping[str, Any]) -> str:
    """A descent's point as a JSON document that `loaded` reads back: what `minimize
    --format json` prints (`summary`), the source, and the point as `parameters`, as a saved
    fit has its own."""
    document = {
        "format": FORMAT,
        "version": VERSION,
        "source": source,
        "parameters": summary["inputs"],
        **summary,
    }
    return json.dumps(document, allow_nan=True) + "\n"


def loaded(text: str, path: str) -> dict[str, InputValue]:
    """The values of the `parameters` saved in `text` (the file `path`) by `minimize --save`
    or `fit --save`: bad input where it is neither."""

    def damaged(why: str) -> InputError:
        return InputError(
            f"{path}: not a point saved by nanograd minimize --save or fit --save ({why})"
        )

    try:
        document = json.loads(text)
    except ValueError as error:
        raise damaged(f"not JSON: {error}") from None
    versions = {FORMAT: VERSION, FIT_FORMAT: FIT_VERSION}
    if not isinstance(document, dict) or document.get("format") not in versions:
        raise damaged(f'no "format": "{FORMAT}" or "{FIT_FORMAT}"')
    read = versions[document["format"]]
    if document.get("version") != read:
        raise damaged(f"version {document.get('version')!r}, where this nanograd reads {read}")
    parameters = document.get("parameters")
    if parameters is None and "groups" in document:
        raise InputError(
            f"{path}: a fit per {document.get('by', 'group')} (fit --by --save) has no one "
            "value of each parameter: save a group's fit alone to start from it"
        )
    if not isinstance(parameters, dict):
        raise damaged('no "parameters" of names and values')
    try:
        return named_numbers(document, "parameters")
    except (TypeError, ValueError) as error:
        raise damaged(str(error)) from None
