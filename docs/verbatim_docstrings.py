"""A Sphinx extension: a docstring that is not valid reStructuredText is shown as written (a literal block)
instead of being rendered wrongly or failing the strict build.  tinyalgo's docstrings are plain text with
``literals``, shapes and small tables; most parse as reStructuredText, and those that do are rendered."""
from __future__ import annotations

import io

import docutils.core
import docutils.utils

_shown_as_written: list[str] = []


def _parses_cleanly(text: str) -> bool:
    stream = io.StringIO()
    try:
        docutils.core.publish_doctree(text, settings_overrides={
            "report_level": docutils.utils.Reporter.WARNING_LEVEL, "halt_level": 5, "warning_stream": stream,
            "file_insertion_enabled": False, "raw_enabled": False})
    except Exception:   # noqa: BLE001 - any parser failure means: show the text as written
        return False
    return stream.getvalue() == ""


def process_docstring(app, what, name, obj, options, lines):
    if not lines or _parses_cleanly("\n".join(lines)):
        return
    _shown_as_written.append(name)
    body = ["    " + line if line.strip() else "" for line in lines]
    lines[:] = ["::", ""] + body + [""]


def report(app, exception):
    if exception is None:
        from sphinx.util import logging
        logging.getLogger(__name__).info(f"verbatim_docstrings: {len(_shown_as_written)} docstrings shown as written")


def setup(app):
    app.connect("autodoc-process-docstring", process_docstring)
    app.connect("build-finished", report)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
