"""In a notebook: results show as HTML tables, derivatives in LaTeX as formulas, graphs as
SVG. docs/notebook.ipynb, run for real by `jupyter nbconvert --execute`, and each display
method alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nanograd_cli import check, diff, grad, hessian, jacobian

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_notebook_runs_and_shows_tables_formulas_and_graphs(tmp_path):
    jupyter = Path(sys.executable).parent / "jupyter"
    subprocess.run(
        [
            jupyter,
            "nbconvert",
            "--to",
            "notebook",
            "--execute",
            ROOT / "docs" / "notebook.ipynb",
            "--output-dir",
            tmp_path,
            "--output",
            "run",
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    cells = json.loads((tmp_path / "run.ipynb").read_text())["cells"]
    shown = {
        "".join(cell["source"]).splitlines()[-1]: [set(o.get("data", ())) for o in cell["outputs"]]
        for cell in cells
        if cell["cell_type"] == "code"
    }
    for line in [
        'grad("x*y + tanh(x)", x=2, y=3)',
        'jacobian("u = x*y; v = x + y; u, v", x=2, y=3)',
        'hessian("x*y + tanh(x)", x=2, y=3)',
        'check("x*y + tanh(x)", x=2, y=3)',
    ]:
        assert shown[line] == [{"text/html", "text/plain"}], line
    assert shown['diff("x*y + tanh(x)", "x")'] == [{"text/plain"}]
    assert shown['diff("x*y + tanh(x)", "x", latex=True)'] == [{"text/latex", "text/plain"}]
    assert shown['parse("x*y + tanh(x)").gradients({"x": 2, "y": 3})'] == [
        {"image/svg+xml", "text/plain"}
    ]
    assert shown["c"] == [{"image/svg+xml", "text/plain"}]
    assert not any(o.get("output_type") == "error" for c in cells for o in c.get("outputs", ()))


def test_results_are_html_tables_of_the_plain_tables_rows():
    html = grad("x*y + tanh(x)", x=2, y=3)._repr_html_()
    assert html.startswith("<table>\n<thead><tr>\n<th></th>\n<th>value</th>\n<th>gradient</th>")
    assert "<tr><th>x</th>\n<td>2.0</td>\n<td>3.0706508248531645</td>\n</tr>" in html
    assert "<th>d_y</th>" in jacobian("u = x*y; v = x + y; u, v", x=2, y=3)._repr_html_()
    assert "<td>-0.13621868742711307</td>" in hessian("x*y + tanh(x)", x=2, y=3)._repr_html_()
    assert "<td>yes</td>" in check("x*y", x=2, y=3)._repr_html_()
    # Names are escaped.
    assert "&lt;" not in grad("x", x=1)._repr_html_()


def test_latex_derivatives_are_strings_that_show_as_formulas():
    one = diff("x**3", "x", latex=True)
    assert one == "3 x^{2}" and isinstance(one, str) and str(one) == "3 x^{2}"
    assert one._repr_latex_() == "$$ 3 x^{2} $$"
    several = diff("x*y", latex=True)
    by_x, by_y = r"\frac{\partial f}{\partial x} &= y", r"\frac{\partial f}{\partial y} &= x"
    assert several == f"\\begin{{aligned}}\n{by_x} \\\\\n{by_y}\n\\end{{aligned}}"
    assert several._repr_latex_() == f"$$ \\begin{{aligned}} {by_x} \\\\ {by_y} \\end{{aligned}} $$"
    assert not hasattr(diff("x**3", "x"), "_repr_latex_")  # text in the language
