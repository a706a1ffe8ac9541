"""Evaluate each markdown cell's ``{eval}`` after every cell above it has run.

With ``nb_execution_mode: inline`` myst-nb runs a notebook's code cells
lazily: a code cell runs when the page reaches the first *rendered* code cell
at or after it. A cell tagged ``remove-cell`` is never rendered, so a
``remove-cell`` cell that sets the names for the markdown right below it has
not run yet when that markdown is evaluated, and ``{eval}`name``` fails with
``NameError``. JupyterLab (jupyterlab-myst) has no such gap: it evaluates a
markdown cell when it is run, after the cells above it.

This extension makes the site agree with JupyterLab: before rendering a
markdown cell it asks the notebook client for the outputs of that cell, which
runs every cell above it first. Clients of the other execution modes only look
the outputs up, so nothing changes for them.
"""

from __future__ import annotations

from myst_nb.core.render import MditRenderMixin
from sphinx.application import Sphinx

_render_markdown = MditRenderMixin.render_nb_cell_markdown


def _render_nb_cell_markdown(self, token) -> None:
    self.nb_client.code_cell_outputs(token.meta["index"])
    _render_markdown(self, token)


def setup(app: Sphinx) -> dict:
    MditRenderMixin.render_nb_cell_markdown = _render_nb_cell_markdown
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
