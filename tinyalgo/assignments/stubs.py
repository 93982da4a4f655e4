"""Solution regions and stubs (the nbgrader convention).

A solution region is a block of a function's body between two comment lines
at the block's indentation::

    def affine_backward(dout, cache):
        \"\"\"dout (B, H) -> dx (B, D), dw (D, H), db (H,).\"\"\"
        ### BEGIN SOLUTION
        x, w = cache
        return dout @ w.T, x.T @ dout, dout.sum(axis=0)
        ### END SOLUTION

The package runs as is (the markers are comments).  ``stub_function``
replaces the region, markers included, by one line
``raise NotImplementedError("<what>: see tutorial NN")``; the signature, the
docstring and the code before the region (argument checks) stay.
"""
from __future__ import annotations

import ast

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def find_function(tree: ast.AST, qualname: str):
    """The ``def`` node of ``qualname`` ("f" or "Class.method") in a module's tree, else None."""
    node, parts = tree, qualname.split(".")
    for part in parts:
        node = next((n for n in getattr(node, "body", []) if isinstance(n, (ast.FunctionDef, ast.ClassDef))
                     and n.name == part), None)
        if node is None:
            return None
    return node if isinstance(node, ast.FunctionDef) else None


def solution_region(source: str, qualname: str, where: str = "the module"):
    """(first line, last line) (0-based, inclusive: the two marker lines) of
    the one solution region in ``qualname``'s body, or a ValueError."""
    node = find_function(ast.parse(source), qualname)
    if node is None:
        raise ValueError(f"no function {qualname!r} in {where}")
    lines = source.splitlines()
    def_indent = node.col_offset
    last = node.end_lineno                  # the AST ends at the last statement: take the comments after it
    while last < len(lines) and (not lines[last].strip() or (lines[last].lstrip().startswith("#") and
                                 len(lines[last]) - len(lines[last].lstrip()) > def_indent)):
        last += 1
    body = range(node.lineno - 1, last)
    begins = [i for i in body if lines[i].strip() == BEGIN]
    ends = [i for i in body if lines[i].strip() == END]
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise ValueError(f"{qualname} in {where} must hold exactly one solution region ({BEGIN!r} ... {END!r});"
                         f" found {len(begins)} begin and {len(ends)} end markers")
    start, end = begins[0], ends[0]
    indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
    if lines[end][:len(indent)] != indent or lines[end].strip() != END or \
            len(lines[end]) - len(lines[end].lstrip()) != len(indent):
        raise ValueError(f"the solution markers of {qualname} in {where} are not at the same indentation")
    return start, end


def stub_function(source: str, qualname: str, message: str, where: str = "the module") -> str:
    """``source`` with the solution region of ``qualname`` replaced by
    ``raise NotImplementedError(message)``; the result must compile."""
    start, end = solution_region(source, qualname, where)
    lines = source.splitlines(keepends=True)
    indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
    stub = f"{indent}raise NotImplementedError({_quote(message)})\n"
    out = "".join(lines[:start]) + stub + "".join(lines[end + 1:])
    try:
        compile(out, where, "exec")
    except SyntaxError as err:
        raise ValueError(f"stubbing {qualname} in {where} leaves invalid Python: {err}") from None
    return out


def _quote(message: str) -> str:
    return '"' + message.replace("\\", "\\\\").replace('"', '\\"') + '"'


def solution_text(source: str, qualname: str, where: str = "the module") -> str:
    """The lines of ``qualname``'s solution region, markers excluded."""
    start, end = solution_region(source, qualname, where)
    return "".join(source.splitlines(keepends=True)[start + 1:end])
