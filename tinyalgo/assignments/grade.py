"""``grade``: score a student's copy with the instructor's tests, trusting nothing in it.

What runs is built from the instructor's side (the threat model is in
INSTRUCTOR.md, written by ``make``):

1. the instructor's folder (``make`` wrote it beside the copy) holds the
   grading tests, ``points.json``, ``manifest.json`` and ``handout/``, the
   package exactly as handed out;
2. ``manifest.read_submission`` takes from the submission only the bodies
   that replace the stubs, and lists every other change: an assignment
   touched by one is refused (0 points, with the reason);
3. each body must compile (else the assignment is not graded: file, line,
   message) and pass ``screen`` (what a solution may name): a refused body
   scores 0, with its line;
4. the grading folder is a temporary copy of ``handout/`` with the accepted
   bodies spliced in and the instructor's tests beside it; a refused
   assignment keeps its stub, so tests of other assignments that call it fail
   as if it were not written;
5. ``sandbox.run_tests`` runs pytest there in an isolated process, with a
   time limit per test; a test the audit hook catches reaching outside costs
   its assignment all of its points.

Points come only from tests that ran and passed.
"""
from __future__ import annotations

import ast
import json
import pathlib
import shutil
import sys
import tempfile

import tinyalgo
from tinyalgo.assignments import manifest as manifests
from tinyalgo.assignments import registry
from tinyalgo.assignments.sandbox import check_pytest, run_tests
from tinyalgo.assignments.screen import screen, wrap
from tinyalgo.assignments.stubs import find_function
from tinyalgo.runs.schema import Field, check

SUPPORT = ("conftest.py", "grading.py")
# points.json: {assignment: {test: points}}
POINTS = {name: Field("dict", items=Field("number", minimum=0), required=False) for name in registry.ASSIGNMENTS}


def instructor_tests(tests) -> dict:
    """The instructor's grading material at ``tests`` (the ``tests`` folder
    of the instructor's folder written by ``make``, or that folder itself):
    {"dir", "points", "manifest", "handout"}, or a ValueError."""
    tests = pathlib.Path(tests)
    if (tests / "tests" / "manifest.json").is_file():
        tests = tests / "tests"
    need = [tests / "points.json", tests / "manifest.json", tests / "handout" / "tinyalgo" / "__init__.py"]
    missing = [str(p) for p in need if not p.is_file()]
    if missing:
        raise ValueError(f"--tests {tests}: not an instructor's tests folder written by 'assignment make' (missing"
                         f" {', '.join(missing)}); give <out>-instructor/tests")
    read = {}
    for path, schema in zip(need[:2], (POINTS, manifests.SCHEMA)):
        try:
            read[path.name] = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as err:
            raise ValueError(f"--tests {tests}: {path.name} is not valid JSON ({err})") from None
        check(read[path.name], schema, f"--tests {tests}: {path.name}")
    points, manifest = read["points.json"], read["manifest.json"]
    unknown = [a for a in points if a not in registry.ASSIGNMENTS]
    if unknown or manifest.get("format") != manifests.FORMAT or set(manifest.get("assignments", [])) != set(points):
        raise ValueError(f"--tests {tests}: points.json and manifest.json do not describe the same known assignments"
                         f" (this tinyalgo knows {', '.join(registry.ASSIGNMENTS)})")
    for name in points:
        if not (tests / registry.ASSIGNMENTS[name].test_file).is_file():
            raise ValueError(f"--tests {tests}: {registry.ASSIGNMENTS[name].test_file} is missing")
    return {"dir": tests.resolve(), "points": points, "manifest": manifest, "handout": (tests / "handout").resolve()}


def _package_modules(handout: pathlib.Path) -> set:
    return {".".join(p.relative_to(handout).with_suffix("").parts).removesuffix(".__init__")
            for p in (handout / "tinyalgo").rglob("*.py")}


def check_body(body: str, line: int, path: str, function: ast.FunctionDef, module: ast.Module,
               assignment, modules: set):
    """("ok" | "syntax" | "refused", [messages]) for one student body starting at ``line`` of ``path``."""
    indent = function.body[-1].col_offset
    for k, text in enumerate(body.splitlines()):
        if text.strip() and len(text) - len(text.lstrip()) < indent:
            return "refused", [f"{path}, line {line + k}: the solution of {function.name} must stay inside the"
                               f" function (indented at least {indent} spaces)"]
    try:
        compile(wrap(body, indent), path, "exec")
    except SyntaxError as err:
        at = line + (err.lineno or 2) - 2
        return "syntax", [f"{path}, line {at}: {type(err).__name__}: {err.msg}"]
    found = screen(body, indent, function, module, assignment.off_limits, assignment.name, modules)
    if found:
        return "refused", [f"{path}, line {line + k - 1}: {message}" for k, message in found]
    return "ok", []


def _splice(handout_text: str, entries: list, bodies: dict) -> str:
    """The handed-out file with each stub line of ``entries`` replaced by ``bodies[qualname]`` (if given)."""
    lines = handout_text.splitlines(keepends=True)
    for entry in sorted(entries, key=lambda e: -e["line"]):
        body = bodies.get(entry["qualname"])
        if body is not None:
            lines[entry["line"]:entry["line"] + 1] = [body if body.endswith("\n") else body + "\n"]
    return "".join(lines)


def _test_name(nodeid: str) -> str:
    return nodeid.split("::")[-1].split("[")[0]


def grade(directory, tests, limit: float = 30.0, python: str = sys.executable, checked: bool = False) -> dict:
    """Grade the student's copy in ``directory`` with the instructor's tests
    ``tests`` (see ``instructor_tests``); ``limit``: seconds per test.
    Returns {"submission", "assignments": {name: {"earned", "total",
    "status", "reasons"}}, "tests": [{"assignment", "test", "points",
    "earned", "outcome", "message", "tutorial"}], "earned", "total",
    "notes", "output"}.  ``checked``: pytest is known to import (grade-all)."""
    inst = instructor_tests(tests)
    if not checked:
        check_pytest(python)
    directory = pathlib.Path(directory)
    if not directory.is_dir():
        raise ValueError(f"{directory} is not a folder; give a student's copy (a folder holding tinyalgo/)")
    points, handout, manifest = inst["points"], inst["handout"], inst["manifest"]
    chosen = [registry.ASSIGNMENTS[name] for name in points]
    status = {a.name: ["graded", []] for a in chosen}

    def refuse(names, reason, kind="refused"):
        for name in (names if names is not None else list(status)):
            if status[name][0] == "graded":
                status[name][0] = kind
            status[name][1].append(reason)

    copy = manifests.find_copy(directory)
    notes, bodies, files = [], {}, {}
    if copy is None:
        refuse(None, f"no tinyalgo/__init__.py in {directory} (or in one folder inside it): submit the copy's folder",
               "not graded")
    else:
        sub = manifests.read_submission(copy, handout, manifest)
        notes, bodies, files = sub["notes"], sub["bodies"], sub["files"]
        for names, reason in sub["problems"]:
            refuse(names, reason)
    modules = _package_modules(handout)
    accepted = {}
    trees = {}
    for a in chosen:
        for f in a.functions:
            if f.qualname not in bodies or status[a.name][0] != "graded":
                continue
            if f.path not in trees:
                trees[f.path] = ast.parse((handout / f.path).read_text(encoding="utf-8"))
            function = find_function(trees[f.path], f.qualname)
            body, line = bodies[f.qualname]
            kind, messages = check_body(body, line, files[f.qualname], function, trees[f.path], a, modules)
            if kind == "ok":
                accepted[f.qualname] = body
            else:
                refuse([a.name], "; ".join(messages), "does not compile" if kind == "syntax" else "refused")
    for a in chosen:                        # an assignment is graded whole: a refused function drops its siblings
        if status[a.name][0] != "graded":
            for f in a.functions:
                accepted.pop(f.qualname, None)

    run = {"reports": {}, "timeouts": [], "collect_errors": [], "tampering": [], "output": ""}
    graded = [a for a in chosen if status[a.name][0] == "graded"]
    if graded:
        with tempfile.TemporaryDirectory(prefix="tinyalgo-grade-") as tmp:
            tree = pathlib.Path(tmp) / "grading"
            shutil.copytree(handout, tree, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            for path, entries in manifest["stubs"].items():
                spliced = _splice((handout / path).read_text(encoding="utf-8"), entries, accepted)
                (tree / path).write_text(spliced, encoding="utf-8")
            (tree / "tests").mkdir()
            for name in SUPPORT + tuple(a.test_file for a in graded):
                shutil.copyfile(inst["dir"] / name, tree / "tests" / name)
            protected = [directory.resolve(), inst["dir"].parent,
                         pathlib.Path(tinyalgo.__file__).resolve().parent]
            run = run_tests(tree, [f"tests/{a.test_file}" for a in graded], protected, limit, python)
    owner = {test: name for name, table in points.items() for test in table}
    for nodeid, what in run["tampering"]:
        name = owner.get(_test_name(nodeid)) if nodeid else None
        refuse([name] if name else None, f"the grading process refused: {what}"
                                         f"{' (in ' + _test_name(nodeid) + ')' if nodeid else ''}")
    rows = _rows(chosen, points, status, run)
    assignments = {a.name: {"earned": sum(r["earned"] for r in rows if r["assignment"] == a.name),
                            "total": sum(points[a.name].values()), "status": status[a.name][0],
                            "reasons": status[a.name][1]} for a in chosen}
    ran_nothing = not run["reports"] and graded
    return {"submission": str(directory), "copy": str(copy) if copy else None, "assignments": assignments,
            "tests": rows, "earned": sum(r["earned"] for r in rows), "total": sum(r["points"] for r in rows),
            "notes": notes, "output": run["output"][-6000:] if ran_nothing or run["collect_errors"] else ""}


def _rows(chosen, points, status, run) -> list:
    by_test = {}                            # a parametrised test: the reports of each of its cases
    for nodeid, reports in run["reports"].items():
        by_test.setdefault(_test_name(nodeid), []).append(reports)
    timeouts = {_test_name(n) for n in run["timeouts"]}
    collect = "\n".join(text for _, text in run["collect_errors"])
    rows = []
    for a in chosen:
        kind, reasons = status[a.name]
        for test, worth in points[a.name].items():
            outcome, message = "passed", ""
            if kind != "graded":
                outcome, message = kind, "; ".join(reasons)
            elif test in timeouts:
                outcome = "timeout"
                message = "the test did not finish within its time limit (an endless loop?); the process was stopped"
            elif test not in by_test:
                outcome = "not run"
                message = ("the tests did not load:\n" + collect) if collect else \
                    "the test did not run (the grading process stopped before it)"
            else:
                for reports in by_test[test]:
                    for when, result, text in reports:
                        if result == "failed" and outcome == "passed":
                            outcome = "failed" if when == "call" else "error"
                            message = text
                    if not any(when == "call" and result == "passed" for when, result, _ in reports) and \
                            outcome == "passed":
                        outcome, message = "not run", "the test was skipped"
            if outcome != "passed":
                message += f"\nSee tutorial {a.tutorial} ({a.title})."
            rows.append({"assignment": a.name, "test": test, "points": worth,
                         "earned": worth if outcome == "passed" else 0, "outcome": outcome,
                         "message": message.strip(), "tutorial": a.tutorial})
    return rows


def format_grade(result: dict) -> str:
    """The report: per assignment its status and reasons, per test its points,
    outcome and full message (indented), notes, and the total."""
    lines = [f"grading {result['submission']}"]
    for name, a in result["assignments"].items():
        lines.append(f"\n{name}: {a['earned']}/{a['total']} points" + ("" if a["status"] == "graded" else
                                                                      f" ({a['status'].upper()})"))
        for reason in a["reasons"]:
            lines.append(f"    {reason}")
        for r in result["tests"]:
            if r["assignment"] != name:
                continue
            lines.append(f"  {r['earned']:>2}/{r['points']:<2} {r['outcome']:<8} {r['test']}")
            if r["outcome"] not in ("passed", "refused", "not graded", "does not compile") and r["message"]:
                lines.extend("        " + text for text in r["message"].splitlines())
    if result["notes"]:
        lines.append("\nnotes:")
        lines.extend(f"  {n}" for n in result["notes"])
    if result.get("output"):
        lines.append("\npytest's output:")
        lines.append(result["output"])
    lines.append(f"\ntotal: {result['earned']}/{result['total']} points")
    return "\n".join(lines)


def submissions(folder) -> list:
    """The student folders of ``folder`` (one per student, named by the student), sorted by name."""
    folder = pathlib.Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder; give a folder holding one folder per student")
    found = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "__")))
    if not found:
        raise ValueError(f"{folder} holds no student folders")
    return found


def grade_all(folder, tests, limit: float = 30.0, workers: int | None = None, progress=None,
              python: str = sys.executable) -> list:
    """Grade every student folder of ``folder`` with the instructor's ``tests``,
    ``workers`` at a time (default: one per core).  A submission that cannot be
    graded is a row with its error; it never stops the others.
    ``progress(done, total, student, result or None, error or None)`` is called
    after each.  Returns [(student, result or None, error or None)] by name."""
    import concurrent.futures
    import os

    instructor_tests(tests)                     # the instructor's side is checked once, before any work
    check_pytest(python)
    students = submissions(folder)
    workers = workers or os.cpu_count() or 1
    rows = {}

    def one(path):
        try:
            return path.name, grade(path, tests, limit=limit, python=python, checked=True), None
        except Exception as err:                # one bad submission never stops the class
            return path.name, None, f"{type(err).__name__}: {err}"

    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        for done, future in enumerate(concurrent.futures.as_completed([pool.submit(one, p) for p in students]), 1):
            student, result, error = future.result()
            rows[student] = (student, result, error)
            if progress is not None:
                progress(done, len(students), student, result, error)
    return [rows[p.name] for p in students]
