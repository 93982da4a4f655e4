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
screen         notes on names a body uses that its assignment replaces
grade          scores a submission with the instructor's tests; grade-all
sandbox        the worker that runs a submission's code: start, call, stop
confinement    its walls: bubblewrap and its seccomp filter, or the fallback
worker         the worker's side: requests in, answers out, an audit hook
wire           what crosses the pipe: arrays in NumPy's format, no pickle
probes         the calls into a submission, run in the worker
reports        the grade as Gradescope's or PrairieLearn's results.json, CSV
autograder     the Gradescope autograder zip
grading/       the grading tests: run by the grader, compared with the
               reference solution on inputs drawn at grading time
selfcheck/     the student's self-check tests (pytest), copied into a copy
=============  ==============================================================

The command line is ``tinyalgo assignment list | make | grade | grade-all``
(``tinyalgo/cli/assignment.py``).
"""
from tinyalgo.assignments.registry import ASSIGNMENTS, Assignment, Function

__all__ = ["ASSIGNMENTS", "Assignment", "Function"]
