"""Feedback on a solution body before it is graded: the names it uses that the assignment replaces.

``screen`` reads a student's body (the code that replaces a stub) and lists,
with the line, each use of a name the assignment asks the student to write
rather than call (``Assignment.off_limits``: a numerical gradient, the
sibling function that computes the same answer).  It refuses nothing: it is
a note in the report.  What keeps grades honest is not this list but the
grader's design (``sandbox.py``, ``grading/checks.py``): the body runs in a
confined worker, answers are compared with the reference solution on inputs
drawn at grading time, and a call slower than the reference by far fails.
"""
from __future__ import annotations

import ast


def wrap(body: str, indent: int) -> str:
    """The body as the inside of a function at indentation 4, so that it compiles on its own."""
    lines = [line[indent:] if line[:indent].strip() == "" else line.lstrip() for line in body.splitlines()]
    return "def _solution():\n" + "\n".join("    " + line if line else "" for line in lines) + "\n    pass\n"


def screen(body: str, indent: int, off_limits=(), what: str = "this assignment") -> list:
    """[(line within the body, message)] for each use of a name in ``off_limits``
    (as a name, an attribute or an imported name); [] if there is none."""
    names = set(off_limits)
    found = []
    for node in ast.walk(ast.parse(wrap(body, indent))):
        used = None
        if isinstance(node, ast.Name) and node.id in names:
            used = node.id
        elif isinstance(node, ast.Attribute) and node.attr in names:
            used = node.attr
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            used = next((a.name for a in node.names if a.name.split(".")[-1] in names), None)
        if used is not None:
            found.append((node.lineno - 1, f"note: this body uses {used}, which {what} asks you to replace with"
                                           " your own computation (the grader checks answers and speed, not names)"))
    return sorted(set(found))
