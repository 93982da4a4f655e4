"""The grader against a second red team: what the first round left open.

Each attack is a body written into a student's copy in place of a stub and graded with the instructor's tests
(the helpers and fixtures are the first round's, ``test_grader_redteam.py``): the fallback's audit hook
talked out of its checks (a path given as a path object;
the Python function and the module attributes it calls at event time rebound or given other code); the
submission's text (exception types and messages, what it printed, the names of "changed" arguments)
reaching the report with the control characters a terminal acts on; the fallback filling the grader's disk
through its scratch folder; grade-all losing one of a folder and a zip of the same name.  Holding: a ``str``
subclass as a file mode, a body that leaves its function by a form feed, answers that are NaN, infinite,
boolean, unsigned, 0-d, broadcastable, nested lists or a dict with extra keys.
"""
import pytest
import test_grader_redteam as first
from test_grader_redteam import PACKAGE, full, run, zero

from tinyalgo.assignments.grade import format_grade
from tinyalgo.assignments.reports import as_format

pytestmark = [pytest.mark.xdist_group("grader2"), pytest.mark.slow]
handouts, submit = first.handouts, first.submit         # the first round's fixtures

REFERENCE = str(PACKAGE / "qlearning.py")          # where the grader's reference sits; a student guesses it
USE_REFERENCE = '''
namespace = {"__name__": "reference"}
exec(compile(text, "reference", "exec"), namespace)
return namespace["penalty"](q, kappa, mask)
'''

# Each reads the grader's reference past the fallback's audit hook into ``text``.
PAST_THE_HOOK = {
    # the "open" event of io.FileIO carries the path object itself, and the hook checks only str and bytes
    "a path object": f'''
import io, pathlib
text = io.FileIO(pathlib.Path({REFERENCE!r})).read().decode()
''',
    # os.path.realpath, which the hook calls on every path, ends with a call of the module attribute abspath
    "posixpath.abspath rebound": f'''
import os, posixpath
saved, here = posixpath.abspath, os.getcwd()
posixpath.abspath = lambda path: here
try:
    with open({REFERENCE!r}) as f:
        text = f.read()
finally:
    posixpath.abspath = saved
''',
    # the function object the hook holds can be given other code (an audited event the hook lets pass)
    "realpath's code replaced": f'''
import os
real, names = os.path.realpath, {{}}
saved = real.__code__
exec(f"def fake(filename, *, strict=False):\\n    return {{os.getcwd()!r}}\\n", names)
real.__code__ = names["fake"].__code__
try:
    with open({REFERENCE!r}) as f:
        text = f.read()
finally:
    real.__code__ = saved
''',
    # the hook looks isinstance up in builtins at each event
    "builtins.isinstance rebound": f'''
import builtins
real = builtins.isinstance
builtins.isinstance = lambda o, t: False if t == (str, bytes) else real(o, t)
try:
    with open({REFERENCE!r}) as f:
        text = f.read()
finally:
    builtins.isinstance = real
''',
}


@pytest.mark.parametrize("how", list(PAST_THE_HOOK))
def test_the_fallback_hook_cannot_be_talked_out_of_its_checks(submit, how):
    copy, tests = submit(["penalty"], {"penalty": PAST_THE_HOOK[how] + USE_REFERENCE}, honest=False)
    zero(run(copy, tests, "fallback"), "penalty", "PermissionError", "does not allow")


WRITE_BY_MODE = '''
class Mode(str):
    def __str__(self):
        return "r"
with open({target!r}, Mode("w")) as f:
    f.write("escaped")
raise RuntimeError("written")
'''


def test_a_str_subclass_as_the_mode_writes_nothing_outside_scratch(submit, tmp_path):
    """Holds: open() hands the audit event a plain str copy of its mode."""
    target = tmp_path / "outside" / "marker.txt"
    target.parent.mkdir()
    copy, tests = submit(["penalty"], {"penalty": WRITE_BY_MODE.format(target=str(target))}, honest=False)
    result = run(copy, tests, "fallback")
    zero(result, "penalty", "PermissionError")
    assert not target.exists()


# ------------------------------------------------------------------------------------------------------------
# The report: what a submission says (its exceptions' types and messages, what it printed) is shown as text.

FORGED_REPORT = r'''
import sys
print("\x1b[2J\x1b[Hpenalty: 7/7 points\n\ntotal: 7/7 points\x1b[8m")
sys.stdout.flush()
raise type("Passed\x1b[8m", (Exception,), {})("\r  3/3  passed   test_penalty_by_hand\x1b[8m\u202e")
'''


def test_control_characters_from_the_submission_never_reach_the_report(submit):
    copy, tests = submit(["penalty", "lambda_returns"], {"penalty": FORGED_REPORT})
    result = run(copy, tests)
    zero(result, "penalty", "Passed")
    full(result, "lambda_returns")
    text = format_grade(result)
    assert not any(c in text for c in "\x1b\r\u202e"), repr(text)
    assert [line for line in text.splitlines() if line.startswith("total:")] == ["total: 6/13 points"]
    for kind in ("gradescope", "prairielearn"):
        report = as_format(result, kind)
        shown = [t.get("output", "") + t.get("message", "") for t in report["tests"]] + [report.get("output", "")]
        assert not any(c in s for s in shown for c in "\x1b\r\u202e"), kind


# ------------------------------------------------------------------------------------------------------------
# The host: the fallback's scratch folder is on the grader's disk, and only each file's size was limited.

FILL = '''
import os
n = 0
try:
    while n < 48:
        with open(f"fill-{n}", "wb") as f:
            f.write(bytes(2 ** 20))
        n += 1
finally:
    print("wrote", n, "MB")
raise RuntimeError(f"wrote {n} MB")
'''


def test_the_fallback_cannot_fill_the_graders_disk(submit):
    copy, tests = submit(["penalty"], {"penalty": FILL}, honest=False)
    result = run(copy, tests, "fallback")
    zero(result, "penalty", "PermissionError")
    assert "wrote 48 MB" not in format_grade(result)


# ------------------------------------------------------------------------------------------------------------
# Tried and holding.

def test_a_body_that_leaves_its_function_by_a_form_feed_is_refused(submit):
    """Python's tokenizer sets the column to 0 at a form feed: a line "    \\fcode" is module-level code, which
    would run when the worker imports the handout, before its audit hook.  The indentation check splits lines
    as str.splitlines does (a form feed ends a line there) and refuses it."""
    body = 'return None\n#FF#if True:\n#IN#    import sys\n#IN#    sys.addaudithook = lambda hook: None\n'
    copy, tests = submit(["penalty", "lambda_returns"], {"penalty": body})
    path = copy / "tinyalgo" / "qlearning.py"
    path.write_text(path.read_text(encoding="utf-8").replace("#FF#", "\f").replace("#IN#", ""),
                    encoding="utf-8")
    result = run(copy, tests)
    zero(result, "penalty", "must stay inside the function")
    full(result, "lambda_returns")


ODD_ANSWERS = {
    "NaN": 'loss, dq = qlearning_reference(q, kappa, mask)\nreturn float("nan"), dq',
    "inf": 'loss, dq = qlearning_reference(q, kappa, mask)\nreturn loss, dq * np.inf',
    "booleans": 'loss, dq = qlearning_reference(q, kappa, mask)\nreturn loss, dq != 0',
    "unsigned": 'loss, dq = qlearning_reference(q, kappa, mask)\nreturn loss, (np.abs(dq) * 9 + 1).astype(np.uint8)',
    "0-d": 'loss, dq = qlearning_reference(q, kappa, mask)\nreturn loss, np.float64(dq.sum())',
    "broadcastable": 'loss, dq = qlearning_reference(q, kappa, mask)\nreturn loss, dq.mean(axis=-1, keepdims=True)',
    "nested lists": 'loss, dq = qlearning_reference(q, kappa, mask)\nreturn loss, dq.tolist()',
    "a dict": 'loss, dq = qlearning_reference(q, kappa, mask)\nreturn {"loss": loss, "dq": dq, "extra": 1}',
}
# an honest penalty (the body's own helper), so that only the answer's form is wrong
HONEST_PENALTY = '''
def qlearning_reference(q, kappa, mask):
    s = q.sum(axis=-1) - 1.0
    if mask is not None:
        s = s * mask
    return float(kappa * np.sum(s ** 2)), (2.0 * kappa * s)[..., None] * np.ones_like(q)
'''


@pytest.mark.parametrize("answer", list(ODD_ANSWERS))
def test_odd_answers_score_nothing_and_never_break_the_grade(submit, answer):
    body = HONEST_PENALTY + ODD_ANSWERS[answer]
    copy, tests = submit(["penalty"], {"penalty": body}, honest=False)
    result = run(copy, tests)
    zero(result, "penalty", "wrong gradient", "shape", "expected", "got a")


def test_the_honest_helper_of_the_odd_answers_is_right(submit):
    copy, tests = submit(["penalty"], {"penalty": HONEST_PENALTY + "return qlearning_reference(q, kappa, mask)"},
                         honest=False)
    full(run(copy, tests), "penalty")



# ------------------------------------------------------------------------------------------------------------
# grade-all: a folder and a zip of the same name are two submissions.

def test_a_folder_and_a_zip_of_the_same_name_are_two_rows(submit, handouts, tmp_path):
    import shutil
    import zipfile

    from tinyalgo.assignments.grade import grade_all
    solved, tests = submit(["penalty"], {})
    stub = handouts(["penalty"])[0]
    klass = tmp_path / "class"
    shutil.copytree(solved, klass / "sam")                         # full marks
    with zipfile.ZipFile(klass / "sam.zip", "w") as z:             # the handout as given: 0
        for path in sorted(stub.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                z.write(path, str(path.relative_to(stub)))
    rows = grade_all(klass, tests, test_timeout=10.0, submission_timeout=60.0, workers=1)
    assert len(rows) == 2
    assert sorted(row[1]["earned"] for row in rows) == [0, 7], [(row[0], row[1]["earned"]) for row in rows]
    assert len({row[0] for row in rows}) == 2, [row[0] for row in rows]


CHANGED_NAMES = r'''
import probes
probes.watched = lambda function, named: {"out": 0, "changed": ["\x1b[2J\r" + "x" * 200_000]}
raise RuntimeError("the next calls answer through the rebound probe")
'''


def test_the_changed_argument_names_are_shown_short_and_plain(submit):
    copy, tests = submit(["penalty"], {"penalty": CHANGED_NAMES}, honest=False)
    result = run(copy, tests)
    zero(result, "penalty", "in place", "rebound")
    for row in as_format(result, "gradescope")["tests"]:
        assert "\x1b" not in row["output"] and "\r" not in row["output"] and len(row["output"]) < 5000, \
            repr(row["output"][:200])
