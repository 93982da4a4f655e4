"""Course assignments made from the package (the nbgrader convention).

=============  ==============================================================
module         what it does
=============  ==============================================================
registry       the assignments: functions, points per test, tutorial, time
stubs          finds a function's ``### BEGIN/END SOLUTION`` region and
               replaces it by ``raise NotImplementedError(...)``
make           writes a student copy: the package with the bodies stubbed,
               ``setup.cfg``/``pyproject.toml``, ``tests/``, the READMEs
grade          runs a copy's tests against the copy's package and scores them
grading/       the grading tests (pytest), copied into a copy's ``tests/``
=============  ==============================================================

The command line is ``tinyalgo assignment list | make | grade``
(``tinyalgo/cli/assignment.py``).
"""
from tinyalgo.assignments.registry import ASSIGNMENTS, Assignment, Function

__all__ = ["ASSIGNMENTS", "Assignment", "Function"]
