"""The Rich table writer, for a terminal: the only module that imports Rich."""

from __future__ import annotations

import sys


def print_table(rows: list[list[str]], title: str | None = None) -> None:
    """Print rows (the first is the header) as a Rich table on standard output."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, header_style="bold")
    for i, heading in enumerate(rows[0]):
        table.add_column(heading, justify="left" if i == 0 else "right", no_wrap=i > 0)
    for row in rows[1:]:
        table.add_row(*row)
    Console(file=sys.stdout).print(table)
