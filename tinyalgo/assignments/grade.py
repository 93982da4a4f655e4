"""``grade``: score a student's copy with the instructor's tests, trusting nothing in it.

The submission's code never runs in this process (the threat model is in
INSTRUCTOR.md, written by ``make``):

1. the instructor's folder (``make`` wrote it beside the copy) holds the
   grading tests, ``points.json``, ``manifest.json`` and ``handout/``, the
   package exactly as handed out;
2. ``manifest.read_submission`` takes from the submission only the bodies
   that replace the stubs, and lists every other change: an assignment
   touched by one is refused (0 points, with the reason);
3. each body must compile (else the assignment is not graded: file, line,
   message); ``screen`` adds notes on names the assignment replaces;
4. the grading folder is a temporary copy of ``handout/`` with the bodies
   spliced in; each assignment is graded by a fresh ``sandbox.Worker`` on it,
   confined by bubblewrap or the fallback;
5. the grading tests run here: they draw their inputs from a seed made at
   grading time, call the student's functions in the worker
   (``grading/checks.py``) and compare the answers with the reference
   solution, this process's own ``tinyalgo``, on the same inputs.

Points come only from tests that ran here and passed.
"""
from __future__ import annotations

import ast
import importlib.util
import json
import os
import pathlib
import re
import secrets
import shutil
import tempfile

import numpy as np

import tinyalgo
from tinyalgo.assignments import manifest as manifests
from tinyalgo.assignments import registry, sandbox
from tinyalgo.assignments.grading.checks import Session
from tinyalgo.assignments.screen import screen, wrap
from tinyalgo.assignments.stubs import find_function
from tinyalgo.runs.schema import Field, check

# points.json: {assignment: {test: points}}
POINTS = {name: Field("dict", items=Field("number", minimum=0), required=False) for name in registry.ASSIGNMENTS}
TEMP_PREFIX = "tinyalgo-grade-"
LIMITS = {"test_timeout": (0.5, 600.0), "submission_timeout": (5.0, 7200.0)}


def check_limits(test_timeout: float, submission_timeout: float) -> None:
    """A ValueError unless both time limits are numbers within ``LIMITS``."""
    for name, value in (("test_timeout", test_timeout), ("submission_timeout", submission_timeout)):
        low, high = LIMITS[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise ValueError(f"--{name.replace('_', '-')} {value!r}: allowed {low:g} to {high:g} seconds")


def clean_stale(root=None) -> int:
    """Remove the grading folders (``tinyalgo-grade-<pid>-...``) that a killed grader left in the temporary
    folder: those of this user whose process is gone.  Returns how many were removed."""
    removed = 0
    for path in pathlib.Path(root or tempfile.gettempdir()).glob(TEMP_PREFIX + "*"):
        pid = path.name[len(TEMP_PREFIX):].split("-")[0]
        try:
            if not pid.isdigit() or path.stat().st_uid != os.geteuid():
                continue
            os.kill(int(pid), 0)
            continue                                # its grader still runs
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
            removed += 1
        except OSError:
            continue
    return removed


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


def check_body(body: str, line: int, path: str, function: ast.FunctionDef, assignment):
    """("ok" | "syntax" | "refused", [messages], [notes]) for one student body starting at ``line`` of
    ``path``; the notes are ``screen``'s (they refuse nothing)."""
    indent = function.body[-1].col_offset
    for k, text in enumerate(body.splitlines()):
        if text.strip() and len(text) - len(text.lstrip()) < indent:
            return "refused", [f"{path}, line {line + k}: the solution of {function.name} must stay inside the"
                               f" function (indented at least {indent} spaces)"], []
    try:
        compile(wrap(body, indent), path, "exec")
    except SyntaxError as err:
        at = line + (err.lineno or 2) - 2
        return "syntax", [f"{path}, line {at}: {type(err).__name__}: {err.msg}"], []
    notes = screen(body, indent, assignment.off_limits, f"assignment {assignment.name}")
    return "ok", [], [f"{path}, line {line + k - 1}: {message}" for k, message in notes]


def _splice(handout_text: str, entries: list, bodies: dict) -> str:
    """The handed-out file with each stub line of ``entries`` replaced by ``bodies[qualname]`` (if given)."""
    lines = handout_text.splitlines(keepends=True)
    for entry in sorted(entries, key=lambda e: -e["line"]):
        body = bodies.get(entry["qualname"])
        if body is not None:
            lines[entry["line"]:entry["line"] + 1] = [body if body.endswith("\n") else body + "\n"]
    return "".join(lines)


def find_submission(directory) -> pathlib.Path:
    """The copy inside the submission folder ``directory``, or a ValueError saying what it is instead."""
    directory = pathlib.Path(directory)
    if not directory.exists():
        raise ValueError(f"{directory} does not exist; give a student's copy (a folder holding tinyalgo/)")
    if not directory.is_dir():
        raise ValueError(f"{directory} is not a folder; give a student's copy (a folder holding tinyalgo/)")
    if not any(directory.iterdir()):
        raise ValueError(f"{directory} is empty; give a student's copy (a folder holding tinyalgo/)")
    copy = manifests.find_copy(directory)
    if copy is None:
        raise ValueError(f"{directory} is not a copy: no tinyalgo/__init__.py in it or in one folder inside it")
    return copy


def check_handout(copy: pathlib.Path, manifest: dict, tests) -> None:
    """A ValueError when the copy names another handout than the instructor's ``--tests`` folder."""
    try:
        found = re.search(r"^# tinyalgo handout (\w+)$", (copy / "setup.cfg").read_text(encoding="utf-8"), re.M)
    except (OSError, UnicodeDecodeError):
        return
    if found and manifest.get("handout") and found.group(1) != manifest["handout"]:
        raise ValueError(f"--tests {tests} belongs to another handout ({', '.join(manifest['assignments'])};"
                         f" handout {manifest['handout']}) than this copy (handout {found.group(1)}): the"
                         " instructor's folder must be the one 'assignment make' wrote with this copy")


def _load(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(f"tinyalgo_grading_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def grade(directory, tests, test_timeout: float = 30.0, submission_timeout: float = 300.0,
          confinement: str = "auto", seed: int | None = None) -> dict:
    """Grade the student's copy in ``directory`` with the instructor's tests
    ``tests`` (see ``instructor_tests``).  test_timeout : seconds a call into
    the submission may take; submission_timeout : seconds for the whole
    submission; confinement : "auto", "bubblewrap" or "fallback"
    (``sandbox.confinement``); seed : the grading inputs' seed (default: new).
    Returns {"submission", "copy", "assignments": {name: {"earned", "total",
    "status", "reasons"}}, "tests": [{"assignment", "test", "points",
    "earned", "outcome", "message", "tutorial"}], "earned", "total", "notes",
    "output", "confinement", "seed"}.  A ValueError (before any work) for a
    folder that is not a copy, a ``tests`` folder of another handout or a
    limit out of range."""
    check_limits(test_timeout, submission_timeout)
    inst = instructor_tests(tests)
    copy = find_submission(directory)
    directory = pathlib.Path(directory)
    points, handout, manifest = inst["points"], inst["handout"], inst["manifest"]
    check_handout(copy, manifest, tests)
    kind = sandbox.confinement(confinement)
    seed = secrets.randbits(63) if seed is None else int(seed)
    chosen = [registry.ASSIGNMENTS[name] for name in points]
    status = {a.name: ["graded", []] for a in chosen}

    def refuse(names, reason, what="refused"):
        for name in (names if names is not None else list(status)):
            if status[name][0] == "graded":
                status[name][0] = what
            status[name][1].append(reason)

    sub = manifests.read_submission(copy, handout, manifest)
    notes, bodies, files = list(sub["notes"]), sub["bodies"], sub["files"]
    for names, reason in sub["problems"]:
        refuse(names, reason)
    accepted, trees = {}, {}
    for a in chosen:
        for f in a.functions:
            if f.qualname not in bodies or status[a.name][0] != "graded":
                continue
            if f.path not in trees:
                trees[f.path] = ast.parse((handout / f.path).read_text(encoding="utf-8"))
            body, line = bodies[f.qualname]
            function = find_function(trees[f.path], f.qualname)
            what, messages, found = check_body(body, line, files[f.qualname], function, a)
            notes += found
            if what == "ok":
                accepted[f.qualname] = body
            else:
                refuse([a.name], "; ".join(messages), "does not compile" if what == "syntax" else "refused")
    for a in chosen:                        # an assignment is graded whole: a refused function drops its siblings
        if status[a.name][0] != "graded":
            for f in a.functions:
                accepted.pop(f.qualname, None)

    results, printed = {}, ""
    graded = [a for a in chosen if status[a.name][0] == "graded"]
    if graded:
        clean_stale()
        tmp = pathlib.Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-"))
        try:
            tree = tmp / "grading"
            shutil.copytree(handout, tree, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            for path, entries in manifest["stubs"].items():
                spliced = _splice((handout / path).read_text(encoding="utf-8"), entries, accepted)
                (tree / path).write_text(spliced, encoding="utf-8")
            sandbox.prepare(tree)
            protected = [directory.resolve(), inst["dir"].parent, pathlib.Path(tinyalgo.__file__).resolve().parent]
            protected += [pathlib.Path(p) / "tinyalgo" for p in sandbox.site_folders()]
            budget = [float(submission_timeout)]
            modules = {a.name: _load(inst["dir"] / a.test_file, a.name) for a in graded}   # read before any
            for i, a in enumerate(graded):                                                # submitted code runs
                module = modules[a.name]
                worker = sandbox.Worker(tree, kind, protected, cpu_seconds=submission_timeout,
                                        scratch=tmp / f"scratch-{a.name}")
                try:
                    for j, test in enumerate(points[a.name]):
                        results[(a.name, test)] = _run_test(module, test, worker, seed, (i, j), test_timeout, budget)
                finally:
                    worker.close()
                    if any(r[0] != "passed" for (name, _), r in results.items() if name == a.name):
                        printed += worker.printed(2000)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    rows = []
    for a in chosen:
        what, reasons = status[a.name]
        for test, worth in points[a.name].items():
            outcome, message = (what, "; ".join(reasons)) if what != "graded" else results[(a.name, test)]
            if outcome != "passed":
                message += f"\nSee tutorial {a.tutorial} ({a.title})."
            rows.append({"assignment": a.name, "test": test, "points": worth,
                         "earned": worth if outcome == "passed" else 0, "outcome": outcome,
                         "message": message.strip(), "tutorial": a.tutorial})
    assignments = {a.name: {"earned": sum(r["earned"] for r in rows if r["assignment"] == a.name),
                            "total": sum(points[a.name].values()), "status": status[a.name][0],
                            "reasons": status[a.name][1]} for a in chosen}
    return {"submission": str(directory), "copy": str(copy), "assignments": assignments, "tests": rows,
            "earned": sum(r["earned"] for r in rows), "total": sum(r["points"] for r in rows), "notes": notes,
            "output": printed[-6000:], "confinement": sandbox.describe(kind), "seed": seed}


def _run_test(module, test: str, worker, seed: int, index: tuple, timeout: float, budget: list) -> tuple:
    """(outcome, message) of the grading test ``module.test`` on the worker."""
    function = getattr(module, test, None)
    if not callable(function):
        return "error", f"the instructor's test file has no test {test} (points.json names it)"
    if budget[0] <= 0:
        return "not run", "not run: the submission used its whole time budget"
    session = Session(worker, np.random.default_rng([seed, *index]), timeout, budget)
    try:
        function(session)
    except AssertionError as err:
        message = str(err)
        return ("timeout" if message.startswith("no answer within") else
                "not run" if message.startswith("not run") else "failed"), message
    except Exception as err:                # the student's answer broke a check's assumptions: never a pass
        return "failed", f"{type(err).__name__}: {err}"
    return "passed", ""


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
        lines.append("\nwhat the submission printed:")
        lines.extend("  | " + text for text in result["output"].splitlines())
    if result.get("confinement"):
        lines.append(f"\nconfinement: {result['confinement']}")
    lines.append(f"\ntotal: {result['earned']}/{result['total']} points")
    return sandbox.printable("\n".join(lines))


MAX_ZIP = 512 * 2 ** 20              # the uncompressed size of a submitted zip, bytes


def submissions(folder) -> list:
    """The submissions of ``folder``, sorted by name: one folder or ``.zip`` per student (named by the
    student)."""
    folder = pathlib.Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder; give a folder holding one folder or .zip per student")
    found = sorted(p for p in folder.iterdir() if not p.name.startswith((".", "__"))
                   and (p.is_dir() or p.suffix.lower() == ".zip"))
    if not found:
        raise ValueError(f"{folder} holds no student folders or .zip files")
    return found


def unzip(path: pathlib.Path, into: pathlib.Path) -> pathlib.Path:
    """Extract the submission ``path`` into the folder ``into``; a ValueError for a zip that is not one,
    that writes outside its folder or that is larger than ``MAX_ZIP`` uncompressed."""
    import zipfile
    try:
        with zipfile.ZipFile(path) as z:
            members = z.infolist()
            if sum(m.file_size for m in members) > MAX_ZIP or len(members) > 50_000:
                raise ValueError(f"{path.name}: larger than {MAX_ZIP // 2 ** 20} MB uncompressed")
            for m in members:
                target = (into / m.filename).resolve()
                if not str(target).startswith(str(into.resolve()) + os.sep) and target != into.resolve():
                    raise ValueError(f"{path.name}: a member ({m.filename}) would land outside its folder")
            z.extractall(into)
    except (zipfile.BadZipFile, OSError) as err:
        raise ValueError(f"{path.name} is not a readable zip ({err})") from None
    return into


def grade_all(folder, tests, test_timeout: float = 30.0, submission_timeout: float = 300.0,
              workers: int | None = None, progress=None, confinement: str = "auto") -> list:
    """Grade every submission of ``folder`` (``submissions``) with the
    instructor's ``tests``, ``workers`` at a time (default: one per core).  A
    submission that cannot be graded is a row with its reason; it never stops
    the others.  ``progress(done, total, student, result or None, error or
    None)`` is called after each.  Returns [(student, result or None, error or
    None)] by name (a zip's student is its name without ``.zip``, or with it where a folder has that
    name too)."""
    import concurrent.futures

    check_limits(test_timeout, submission_timeout)
    instructor_tests(tests)                     # the instructor's side is checked once, before any work
    sandbox.confinement(confinement)
    students = submissions(folder)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"--workers {workers!r}: allowed a positive whole number")
    workers = workers or os.cpu_count() or 1
    rows, stems = {}, [p.stem if p.suffix.lower() == ".zip" else p.name for p in students]
    names = {p: p.name if stems.count(stem) > 1 else stem for p, stem in zip(students, stems)}

    def one(path):
        name = names[path]
        try:
            if path.is_dir():
                return name, grade(path, tests, test_timeout, submission_timeout, confinement), None
            with tempfile.TemporaryDirectory(prefix=f"{TEMP_PREFIX}{os.getpid()}-zip-") as tmp:
                folder = unzip(path, pathlib.Path(tmp) / name)
                result = grade(folder, tests, test_timeout, submission_timeout, confinement)
                return name, dict(result, submission=str(path)), None
        except Exception as err:                # one bad submission never stops the class
            return name, None, f"{type(err).__name__}: {err}" if not isinstance(err, ValueError) else str(err)

    def run(path):
        return path, one(path)

    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        for done, future in enumerate(concurrent.futures.as_completed([pool.submit(run, p) for p in students]), 1):
            path, (student, result, error) = future.result()
            rows[path] = (student, result, error)
            if progress is not None:
                progress(done, len(students), student, result, error)
    return [rows[p] for p in students]
