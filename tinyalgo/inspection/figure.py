"""The matplotlib figure every tinyalgo picture is drawn on.

``Figure`` is a ``matplotlib.figure.Figure`` made directly, never through
``matplotlib.pyplot``: it is not registered with pyplot, needs no backend
(``savefig`` renders with Agg whatever the backend), and so drawing a picture
leaves matplotlib's global backend and pyplot's figures as they were.  It
shows itself as a PNG in Jupyter (``_repr_png_``): a drawing function returns
its ``Figure``, and the figure as the last expression of a notebook cell (or
``IPython.display.display(fig)``) shows it inline.  Save it with
``tinyalgo.runs.fileio.atomic_savefig``.
"""
from __future__ import annotations

import io

import matplotlib.figure


class Figure(matplotlib.figure.Figure):
    """A matplotlib figure outside pyplot that Jupyter displays as a PNG."""

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png")
        return buffer.getvalue()
