"""Results as a notebook shows them: HTML tables, the same rows as the plain table."""

from __future__ import annotations

from html import escape

from ..results import flattened
from ._text import table_rows


def html_table(result: object) -> str:
    """`result`'s table (render.text.table_rows) as an HTML table, full precision; the first
    row is the header and the first column names the rows."""
    head, *body = table_rows(flattened(result), repr)
    lines = ["<table>", "<thead><tr>", *(f"<th>{escape(cell)}</th>" for cell in head)]
    lines.append("</tr></thead><tbody>")
    for name, *cells in body:
        lines.append(f"<tr><th>{escape(name)}</th>")
        lines += [f"<td>{escape(cell)}</td>" for cell in cells]
        lines.append("</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)
