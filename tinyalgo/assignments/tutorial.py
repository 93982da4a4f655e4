"""Tutorial cells that run on a student's copy, where some functions are still stubs.

In an assignment copy (``tinyalgo assignment make``) each function a student
writes raises ``NotImplementedError("<what> (assignment <name>): see tutorial
NN")`` until it is written.  A tutorial cell that calls one runs inside
``skip_if_stub()``::

    with skip_if_stub():
        dx, dh, grads = gru_step_backward(dout, cache)

If the cell meets a stub, it stops there, prints which function is still a
stub and which assignment asks for it, and leaves nothing behind (the names it
bound are removed): the tutorial goes on with the next cell.  A later cell that
needs what a skipped cell would have made stops at its ``NameError`` and says
so, naming the same stub.  Any other error is raised as usual.  On the full
package, or once the student's functions are written, a cell runs as if the
``with`` were not there.  Use it at the top level of a script or notebook cell.

``show(fig)`` displays a figure inline when the tutorial runs in Jupyter, and
does nothing in a plain script.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass

# the end of a stub's message: "<what> (assignment <name>): see tutorial NN", or "<what>: see tutorial NN"
STUB_MESSAGE = re.compile(r"(?: \(assignment (?P<assignment>[\w-]+)\))?: see tutorial (?P<tutorial>\d+)\Z")


@dataclass(frozen=True)
class Stub:
    """A function still a stub: ``function`` (its module without ``tinyalgo.``, and
    qualified name), the ``assignment`` that asks for it (None if unknown), the ``tutorial``."""

    function: str
    assignment: str
    tutorial: str

    def __str__(self) -> str:
        which = f"assignment {self.assignment}" if self.assignment else f"see tutorial {self.tutorial}"
        return f"{self.function}, still a stub in your copy ({which})"


MET = []            # the stubs met so far, in order, each once
_MADE_BY = {}       # a name a skipped cell bound -> the stubs that stopped it


def stub_of(error: BaseException):
    """The ``Stub`` that raised ``error``, or None if ``error`` is not a stub's
    ``NotImplementedError``.  The function is the frame that raised it."""
    if not isinstance(error, NotImplementedError):
        return None
    match = STUB_MESSAGE.search(str(error))
    if match is None or error.__traceback__ is None:
        return None
    tb = error.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    module = tb.tb_frame.f_globals.get("__name__", "?")
    qualname = getattr(tb.tb_frame.f_code, "co_qualname", tb.tb_frame.f_code.co_name)
    known = _registered(module, qualname)
    if known is not None:
        qualname = known[1].qualname
    short = module[len("tinyalgo."):] if module.startswith("tinyalgo.") else module
    return Stub(f"{short}.{qualname}", match["assignment"] or (known and known[0].name), match["tutorial"])


def _registered(module: str, qualname: str):
    """(assignment, function) of the registry for the function ``qualname`` of
    ``module`` (before Python 3.11 ``qualname`` is the bare name), else None."""
    from tinyalgo.assignments.registry import ASSIGNMENTS
    return next(((a, f) for a in ASSIGNMENTS.values() for f in a.functions
                 if f.module == module and qualname in (f.qualname, f.qualname.split(".")[-1])), None)


def _missing_name(error: NameError) -> str:
    name = getattr(error, "name", None)          # Python 3.10 on
    if name is None:
        match = re.search(r"name '(\w+)' is not defined", str(error))
        name = match[1] if match else "?"
    return name


def _raised_in(error: BaseException, namespace: dict) -> bool:
    """Whether ``error`` was raised by code of ``namespace`` itself (the cell, or a function it defined)."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_globals is namespace


class skip_if_stub:
    """Run a cell; if it meets a stub (or needs a skipped cell's result), print
    why, undo its bindings and go on (module docstring)."""

    def __enter__(self):
        self.namespace = sys._getframe(1).f_globals
        self.before = dict(self.namespace)
        return self

    def __exit__(self, kind, error, tb) -> bool:
        if error is None:
            return False
        stub = stub_of(error)
        if stub is not None:
            if stub not in MET:
                MET.append(stub)
            self._undo((stub,))
            print(f"this cell needs {stub}; write it and run the cell again", flush=True)
            return True
        if isinstance(error, NameError) and MET and _raised_in(error, self.namespace):
            name = _missing_name(error)
            stubs = _MADE_BY.get(name, tuple(MET))
            self._undo(stubs)
            print(f"this cell needs `{name}`, which a skipped cell above did not make: it needs "
                  f"{'; '.join(map(str, stubs))}; write it and run the tutorial again", flush=True)
            return True
        return False

    def _undo(self, stubs) -> None:
        """Remove the names the cell bound or rebound, remembering which stubs stopped them."""
        for name, value in list(self.namespace.items()):
            if name not in self.before or self.before[name] is not value:
                del self.namespace[name]
                _MADE_BY[name] = tuple(stubs)


def show(fig) -> None:
    """Display ``fig`` inline when running under IPython (Jupyter); nothing in a plain script."""
    ipython = sys.modules.get("IPython")
    if ipython is not None and ipython.get_ipython() is not None:
        from IPython.display import display
        display(fig)
