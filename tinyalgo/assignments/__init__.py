"""Course assignments made from the package (the nbgrader convention).

=============  ==============================================================
module         what it does
=============  ==============================================================
registry       the assignments: functions, points per test, tutorial, time,
               what each solution may not call
stubs          finds a function's ``### BEGIN/END SOLUTION`` region and
               replaces it by ``raise NotImplementedError(...)``
make           writes a student copy (the package with the bodies stubbed,
               its tests, tutorials and README) and the instructor's folder
manifest       what was handed out; a submission's bodies and its changes
screen         what a solution body may name, checked before it runs
sandbox        runs the grading tests in an isolated process (``runner``)
runner         the isolated grading process: audit hook, signed results
grade          scores a submission with the instructor's tests; grade-all
reports        the grade as Gradescope's or PrairieLearn's results.json, CSV
autograder     the Gradescope autograder zip
grading/       the grading tests (pytest)
=============  ==============================================================

The command line is ``tinyalgo assignment list | make | grade | grade-all``
(``tinyalgo/cli/assignment.py``).
"""
from tinyalgo.assignments.registry import ASSIGNMENTS, Assignment, Function

__all__ = ["ASSIGNMENTS", "Assignment", "Function"]
