"""A tutorial's ``# %%`` script as a Jupyter notebook: the script is the one
source, the notebook is made from it.

A line ``# %%`` starts a code cell, ``# %% [markdown]`` a markdown cell whose
lines are ``# text`` (``#`` or an empty line: a blank line).  Blank lines at
either end of a cell are dropped, and so are empty cells; code before the
first marker is a cell of its own.  The notebook is nbformat 4.5 JSON written
directly (no Jupyter package needed), without outputs: the same bytes for the
same script.

    tinyalgo notebooks tutorials           # write tutorials/*.ipynb, each from its NN_*.py
    tinyalgo notebooks --check tutorials   # exit status 1 if a notebook differs from its script

(the command is ``tinyalgo.cli.notebooks``).
"""
from __future__ import annotations

import json
import pathlib

from tinyalgo.runs.fileio import atomic_write_bytes

CODE, MARKDOWN = "# %%", "# %% [markdown]"
METADATA = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"}}


def script_cells(script: str, where: str = "the script") -> list:
    """The cells of a ``# %%`` script: [("code" | "markdown", source)], the
    markdown without its ``"# "`` prefixes; a ValueError names a bad line."""
    cells, kind, lines = [], "code", []

    def close():
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        if lines:
            cells.append((kind, "\n".join(lines)))

    for n, line in enumerate(script.splitlines(), 1):
        marker = line.rstrip()
        if marker in (CODE, MARKDOWN):
            close()
            kind, lines = ("markdown" if marker == MARKDOWN else "code"), []
        elif marker.startswith(CODE):
            raise ValueError(f"{where}, line {n}: a cell starts with {CODE!r} or {MARKDOWN!r}, not {marker!r}")
        elif kind == "markdown":
            if marker not in ("", "#") and not line.startswith("# "):
                raise ValueError(f"{where}, line {n}: a markdown cell's lines start with '# ' (or are '#'): {line!r}")
            lines.append(line[2:] if marker else "")
        else:
            lines.append(line)
    close()
    return cells


def _source(text: str) -> list:
    """nbformat's multi-line string: the lines, each but the last ending in a newline."""
    return text.splitlines(keepends=True)


def notebook(script: str, where: str = "the script") -> dict:
    """The nbformat 4.5 notebook of ``script``, without outputs."""
    cells = []
    for i, (kind, text) in enumerate(script_cells(script, where)):
        cell = {"cell_type": kind, "id": f"cell-{i:02d}", "metadata": {}, "source": _source(text)}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.append(cell)
    return {"cells": cells, "metadata": METADATA, "nbformat": 4, "nbformat_minor": 5}


def notebook_text(script: str, where: str = "the script") -> str:
    """``notebook(script)`` as JSON, laid out as Jupyter writes it (indent 1, sorted keys)."""
    return json.dumps(notebook(script, where), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def scripts(folder) -> list:
    """The tutorial scripts of ``folder``: ``NN_*.py``, in order."""
    return sorted(pathlib.Path(folder).glob("[0-9][0-9]_*.py"))


def notebook_path(script) -> pathlib.Path:
    return pathlib.Path(script).with_suffix(".ipynb")


def notebook_texts(folder) -> dict:
    """{notebook path: its text} for every script of ``folder``, all read first (a ValueError names the first
    bad line of any)."""
    return {notebook_path(s): notebook_text(s.read_text(encoding="utf-8"), str(s)) for s in scripts(folder)}


def _stale(texts) -> list:
    return [path for path, text in texts.items() if not path.exists() or path.read_text(encoding="utf-8") != text]


def stale(folder) -> list:
    """The notebooks of ``folder`` missing or different from what their scripts make."""
    return _stale(notebook_texts(folder))


def write_notebooks(folder) -> list:
    """Write the notebook of every script of ``folder`` that is stale, once every script has been read;
    returns their paths."""
    texts = notebook_texts(folder)
    written = _stale(texts)
    for path in written:
        atomic_write_bytes(path, texts[path].encode("utf-8"))
    return written


if __name__ == "__main__":
    raise SystemExit("the notebooks are made by the tinyalgo command: tinyalgo notebooks [--check] [FOLDER]")
