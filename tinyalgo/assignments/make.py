"""``make``: write a student copy of the package with the chosen assignments stubbed.

The copy holds the whole ``tinyalgo`` tree (so everything not stubbed runs),
``setup.cfg`` and ``pyproject.toml`` (``pip install -e DIR`` works), the
self-check tests in ``tests/`` with ``points.json`` (``selfcheck/``: pytest,
centred differences of the student's own code and the hand-worked cases),
the tutorials that teach the assigned functions and a student ``README.md``.
Beside it, ``<out>-instructor/`` holds what is not handed out:
``INSTRUCTOR.md`` (with the grader's threat model) and ``tests/``, the
grading tests (``grading/``) with ``points.json``, ``manifest.json``
(``manifest.py``) and ``handout/``, the package as handed out, from which
``grade`` builds what it runs.

Every copy, student or solution, trains on the student's functions:
``tinyalgo train`` runs the taught layers, cores, controller and BPTT, and
no other function in the package computes their gradients.  Nothing but the
stubbed solution regions differs from the package.
"""
from __future__ import annotations

import json
import pathlib
import secrets
import shutil
import tempfile

import tinyalgo
from tinyalgo.assignments import registry
from tinyalgo.assignments.manifest import build as build_manifest
from tinyalgo.assignments.stubs import stub_function

SELFCHECK = pathlib.Path(__file__).resolve().parent / "selfcheck"     # the student's tests (pytest)
GRADING = pathlib.Path(__file__).resolve().parent / "grading"         # the grader's tests (grade.py)
SUPPORT = ("conftest.py", "grading.py")          # copied into a copy's tests/ with every assignment

SETUP_CFG = """\
[metadata]
name = tinyalgo
version = {version}
description = tinyalgo course assignment: {names}
# tinyalgo handout {handout}

[options]
packages = find:
python_requires = >=3.9
install_requires =
    numpy>=1.21
    matplotlib>=3.3

[options.packages.find]
include = tinyalgo, tinyalgo.*

[options.entry_points]
console_scripts =
    tinyalgo = tinyalgo.cli:main

[tool:pytest]
testpaths = tests
"""

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61", "wheel"]
build-backend = "setuptools.build_meta"
"""


def stub_message(assignment, function) -> str:
    return f"{function.what} (assignment {assignment.name}): see tutorial {assignment.tutorial}"


def check_out(out, option: str = "--out") -> pathlib.Path:
    out = pathlib.Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"{option} {out} already exists and is not an empty directory; give a new or empty one"
                         " (make never overwrites)")
    return out


def instructor_folder(out) -> pathlib.Path:
    """Where ``make`` writes the instructor's folder by default: ``<out>-instructor`` beside the copy."""
    out = pathlib.Path(out)
    return out.with_name(out.name + "-instructor")


def tutorial_files(chosen, tutorials: pathlib.Path) -> list:
    """The tutorials (scripts and their notebooks) that teach the assignments ``chosen``."""
    numbers = sorted({a.tutorial for a in chosen})
    return [p for n in numbers for p in sorted(tutorials.glob(f"{n}_*")) if p.suffix in (".py", ".ipynb")]


def _write_copy(root: pathlib.Path, source: pathlib.Path, edits: dict, chosen, tutorials, handout: str) -> None:
    """A copy of the package at ``root``: ``source`` with ``edits`` ({path: text}), the set-up files, the
    grading tests (a student's self-check), the README and the tutorials."""
    shutil.copytree(source, root / "tinyalgo",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "*.npz"))
    for path, text in edits.items():
        (root / path).write_text(text, encoding="utf-8")
    names_line = ", ".join(a.name for a in chosen)
    (root / "setup.cfg").write_text(SETUP_CFG.format(version=tinyalgo.__version__, names=names_line,
                                                                     handout=handout),
                                    encoding="utf-8")
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    _write_tests(root / "tests", chosen)
    (root / "README.md").write_text(student_readme(chosen, [p.name for p in tutorials]), encoding="utf-8")
    if tutorials:
        (root / "tutorials").mkdir()
        for p in tutorials:
            shutil.copyfile(p, root / "tutorials" / p.name)


def _write_tests(tests: pathlib.Path, chosen, grader: bool = False) -> None:
    """The student's self-check tests (pytest) into ``tests``, or with ``grader`` the grader's tests."""
    tests.mkdir()
    for name in () if grader else SUPPORT:
        shutil.copyfile(SELFCHECK / name, tests / name)
    for a in chosen:
        shutil.copyfile((GRADING if grader else SELFCHECK) / a.test_file, tests / a.test_file)
    points = {a.name: dict(a.points) for a in chosen}
    (tests / "points.json").write_text(json.dumps(points, indent=1) + "\n", encoding="utf-8")


def make(names, out, solution: bool = False, package=None, instructor=None, autograder: str | None = None) -> dict:
    """Write the copy of assignments ``names`` into ``out`` (new or empty) and
    the instructor's folder into ``instructor`` (default ``<out>-instructor``).
    ``solution``: keep the solution bodies in the copy (an instructor's check
    copy, full points).  ``package``: the tinyalgo directory to copy (default:
    this one).  ``autograder="gradescope"`` also writes the
    autograder zip into the instructor's folder (``autograder.py``).
    Both folders are written in full or not at all.  Returns a summary:
    {"out", "instructor", "assignments", "stubbed": ["module:qualname"] (the
    assignments' functions), "tutorials", "points", "autograder"}."""
    chosen = registry.get(names)
    if autograder not in (None, "gradescope"):
        raise ValueError(f"--autograder {autograder!r}: allowed: gradescope")
    out = check_out(out)
    instructor = check_out(instructor or instructor_folder(out), "--instructor")
    if instructor.resolve() == out.resolve():
        raise ValueError("--instructor must differ from --out: the instructor's folder is not handed out")
    source = pathlib.Path(package or pathlib.Path(tinyalgo.__file__).parent)
    tutorials_dir = source.parent / "tutorials"
    tutorials = tutorial_files(chosen, tutorials_dir) if tutorials_dir.is_dir() else []
    # edit in memory first: a bad region or declaration leaves nothing on disk
    edits, stubbed = {}, []

    def text(path):
        return edits.get(path) or (source / pathlib.Path(path).relative_to("tinyalgo")).read_text(encoding="utf-8")
    for a in chosen:
        for f in a.functions:
            edits[f.path] = stub_function(text(f.path), f.qualname, stub_message(a, f), where=f.path)
            stubbed.append(f"{f.module}:{f.qualname}")
    for target in (out, instructor):
        target.resolve().parent.mkdir(parents=True, exist_ok=True)
    staging = pathlib.Path(tempfile.mkdtemp(prefix=".tinyalgo-make-", dir=out.resolve().parent))
    try:
        handout = staging / "handout"
        handout_id = secrets.token_hex(8)
        _write_copy(handout, source, edits, chosen, tutorials, handout_id)
        manifest = dict(build_manifest(handout, chosen), handout=handout_id)
        inst = staging / "instructor"
        inst.mkdir()
        _write_tests(inst / "tests", chosen, grader=True)
        (inst / "tests" / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        shutil.copytree(handout / "tinyalgo", inst / "tests" / "handout" / "tinyalgo")
        (inst / "INSTRUCTOR.md").write_text(instructor_readme(chosen, solution, out, instructor), encoding="utf-8")
        zip_path = None
        if autograder == "gradescope":
            from tinyalgo.assignments.autograder import write_gradescope
            zip_path = write_gradescope(inst, source, inst / "tests", chosen)
        copy = handout
        if solution:
            copy = staging / "solution"
            _write_copy(copy, source, {}, chosen, tutorials, handout_id)
        for target, folder in ((out, copy), (instructor, inst)):
            if target.exists():
                target.rmdir()
            folder.rename(target)
    except (OSError, shutil.Error) as err:
        first = err.args[0][0] if isinstance(err, shutil.Error) and err.args and err.args[0] else None
        reason = first[2] if first else (err.strerror or str(err))
        raise OSError(f"cannot write the copy in {out.resolve().parent} ({reason.split(':')[0]}); nothing was"
                      " written") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {"out": str(out), "instructor": str(instructor), "assignments": [a.name for a in chosen],
            "stubbed": [] if solution else stubbed,
            "tutorials": [p.name for p in tutorials], "points": sum(a.total for a in chosen),
            "autograder": str(instructor / zip_path.relative_to(inst)) if zip_path else None}


def _functions(a) -> str:
    return "\n".join(f"  - `{f.module}.{f.qualname}` ({f.path}): {f.what}" for f in a.functions)


def _rules(a) -> str:
    return ", ".join(f"`{n}`" for n in a.forbidden) if a.forbidden else "the general rules only"


def student_readme(chosen, tutorials=()) -> str:
    total = sum(a.total for a in chosen)
    parts = [f"# tinyalgo assignment: {', '.join(a.name for a in chosen)}\n",
             "This directory is a copy of the tinyalgo package (\"Learning Simple Algorithms from Examples\", "
             "Zaremba et al., ICLR 2016, in NumPy) in which some function bodies were replaced by "
             "`raise NotImplementedError(...)`.  Write them; everything else already works.\n",
             "Setup (in a fresh virtualenv):\n\n    pip install -e .\n    pip install pytest\n",
             "Check your work at any time (these self-check tests hold the hand-worked cases and check your gradients"
             " against centred differences of your own code; the grader draws other inputs and compares with a"
             " reference solution):\n\n"
             "    python -m pytest tests -q\n",
             "Each failing test says which gradient or which target is wrong.  The gradient tests compare "
             "your backward pass with centred differences of the forward pass (`tinyalgo.gradcheck`), in "
             "float64, with random biases and initial states: a relative error below 1e-6 passes.\n"]
    if tutorials:
        parts.append("The tutorials that teach these functions are in `tutorials/` (plain scripts with `# %%` "
                     "cells, and the same as notebooks): " + ", ".join(f"`{t}`" for t in tutorials) + ".  They run "
                     "on your copy: a cell that needs a function you have not written yet says which one and "
                     "the rest runs; once your functions are right, every cell runs.\n")
    parts.append(f"## What to implement ({total} points)\n")
    for a in chosen:
        parts.append(f"### {a.name}: {a.title} ({a.total} points, about {a.minutes} minutes; "
                     f"tutorial {a.tutorial})\n\n{_functions(a)}\n")
        parts.append("\n".join(f"  - `{t}`: {p} points" for t, p in a.points.items()) + "\n")
        parts.append(f"  Off limits in this assignment: {_rules(a)}.\n")
    parts.append("""## How your copy is graded

- Write only the bodies that replace the `raise NotImplementedError(...)` lines, inside the function (a
  helper can be a function nested in the body).  Keep the signatures, the docstrings and the rest of every
  file as they are: a change anywhere else in the package, in `setup.cfg` or `pyproject.toml`, or an added
  file that Python or pytest would load (`conftest.py`, `sitecustomize.py`, `*.pth`, a new module) gives
  0 points for the assignments it touches, with the reason.  Your `tests/` and `tutorials/` are yours to
  change: the instructor's tests grade.
- A body computes with its arguments, numpy (`np`), math, the names its module defines or imports, and
  ordinary builtins (`len`, `range`, `zip`, ...).  It may not import other modules, open files, start
  processes, use `exec`/`eval`/`getattr`/`globals`, touch `__dunder__` names, or assign to anything it
  does not own (such as `np.sum = ...`).  It may not call the numerical gradient (`numerical_gradient`,
  `rel_error`), or what the assignment lists as off limits.  A body
  that does scores 0 for its assignment; the report names the line.
- Each test has a time limit (30 s by default): an endless loop costs that test.
- A syntax error is reported with its file and line; that assignment scores 0, the others are graded.
""")
    parts.append(_training(chosen, student=True))
    return "\n".join(parts)


def _training(chosen, student: bool) -> str:
    """The paragraph on how a copy trains: ``tinyalgo train`` runs the taught functions."""
    you = "your" if student else "the student's"
    return (f"## Training with {you} code\n\n"
            "`tinyalgo train` runs the taught layers, cores, controller and backprop through time "
            "(`tinyalgo/layers.py`, `tinyalgo/cores.py`, `tinyalgo/controller.py`, `tinyalgo/bptt.py`), so "
            f"training runs {you} functions wherever it uses them.  Once they are right, for example\n\n"
            f"    tinyalgo train --task copy --out run1\n\n"
            f"trains a controller with them.\n")


def instructor_readme(chosen, solution: bool, out, instructor) -> str:
    total = sum(a.total for a in chosen)
    minutes = sum(a.minutes for a in chosen)
    rows = "\n".join(f"| {a.name} | {', '.join(f'`{f.qualname}`' for f in a.functions)} | {a.total} | "
                     f"{a.tutorial} | {a.minutes} min | {', '.join(a.uses) or '-'} | {_rules(a)} |" for a in chosen)
    kind = (f"`{out}` is a SOLUTION copy (made with --solution): the bodies are intact and it grades full points."
            if solution else f"`{out}` is the copy to hand out: its bodies are stubbed and it grades 0 points.")
    tests = pathlib.Path(instructor) / "tests"
    return f"""# Instructor notes: {', '.join(a.name for a in chosen)}

{kind}  This folder (`{instructor}`) is yours: do not hand it out.

| assignment | functions | points | tutorial | expected time | its tests also run | off limits |
|---|---|---|---|---|---|---|
{rows}

Total: {total} points, about {minutes} minutes.

## What the student implements
{chr(10).join(f"- {a.name}: {a.title}.{chr(10)}{_functions(a)}" for a in chosen)}

{_training(chosen, student=False)}
`tinyalgo train` in a solution copy (what a correct student copy becomes) checks that training
runs with the solution bodies.

## How the tests grade
Every test is worth the points of `points.json`.  The grading tests run in the grader's own
process and call the student's functions in a separate, confined worker (below).  Each test draws
its shapes and values at grading time from a seed the student never sees (the report names it, so
a grade can be reproduced), besides the hand-worked cases, and compares the student's answers with
the reference solution (the grader's own `tinyalgo`) on the same inputs: gradients per array and
per gate block for fused GRU/LSTM matrices, each entry to 1e-7 of its array's or block's largest
and the whole to 1e-11 (analytic formulas reach it in float64; finite differences do not), targets
per (step, lane).  A call whose CPU time is more than 60 times the reference's on the same
arguments fails ("too slow for an analytic backward"): a gradient by finite differences takes
O(parameters) forward passes.
A call that changes one of its arguments in place fails.  "Its tests also run": those tests call
functions of the listed assignments too; made together, they pass once all are written.  The
copy's own `tests/` are the student's self-check (centred differences of their own code, the
hand-worked cases): useful to them, never used to grade.

## How to grade
    tinyalgo assignment grade STUDENT_DIR --tests {tests} --json grade.json [--format gradescope|prairielearn]
    tinyalgo assignment grade-all SUBMISSIONS/ --tests {tests} --csv grades.csv

`grade-all` grades every folder of SUBMISSIONS (one per student, named by the student) in parallel
and writes one row per student, one column per assignment.  `make ... --autograder gradescope`
also writes `autograder.zip` here, to upload as a Gradescope programming assignment.

## Threat model
The student is assumed clever, with a weekend, and in control of every byte of the submission.
Each layer below says what it stops and what it does not.

- **The submission's code never runs in the grader's process.**  The grader holds the tests, the
  expected values (the reference solution run on the same inputs), the seed and the report.  The
  student's functions run in a worker that holds none of them: it receives fresh copies of each
  call's inputs on a pipe and sends back arrays in NumPy's `.npy` format, read with
  `allow_pickle=False`, numeric dtypes only, sizes capped before anything is read; nothing it sends
  is unpickled or executed.  Stops: forged results, patched helpers (`rel_error`, `np.allclose`),
  walking frames to the reporter, `sys.exit`, printing fake output.  Does not stop: a worker that
  computes the right answer by a means the tests cannot tell from honest work.
- **Checks the student can neither see nor steer.**  Inputs are drawn at grading time; a table of
  the self-check tests' answers earns nothing.  Gradients are compared with the reference's, never
  with numerical gradients of the student's own forward or loss.  Stops: hard-coded answers,
  in-place changes to `dout` or the cache that make a self-check's loss constant, lookups by input.
  Does not stop: a student who copies a correct solution from someone else (that is plagiarism,
  not a grader question).
- **Budgets that fit honest work.**  Each call's CPU time is capped at 60 x the reference's (and
  at least 0.25 s); each call's wall time at `--test-timeout` (default 30 s): past it the worker is
  killed and the next test starts a new one, so an endless loop costs its test; the whole submission
  at `--submission-timeout` (default 300 s).  Stops: finite differences by hand, loops, slow
  cheats.
- **The worker is confined by the operating system** (`tinyalgo/assignments/sandbox.py`; each
  report says which confinement it ran under):
  - *bubblewrap* (Debian package `bubblewrap`, installed by the Gradescope `setup.sh`): new user,
    PID, network, IPC, UTS and cgroup namespaces, uid 65534 with no capabilities, `/usr` and the
    Python installation read-only with every site-packages folder hidden, NumPy alone at `/site`,
    the graded package read-only, a 64 MB scratch tmpfs; no network, no other file (not this
    folder, not the submission, not the installed solution), no other process.
  - *fallback*, where bubblewrap cannot run: a separate process in its own session as uid 65534
    (the grader must be root, and that user able to run the interpreter), with a PEP 578 audit hook
    that refuses processes, sockets, `ctypes`, file writes and reads outside the graded
    package, NumPy and the standard library.  The uid is the wall here: uid 65534 cannot write the
    grader's files, signal its processes or start new ones (`RLIMIT_NPROC` 0), and reads only what
    is world-readable.  The audit hook is a second, Python-level layer that determined code can
    undo.  Where no uid change is possible, or uid 65534 can read the reference solution (the
    grader's own `tinyalgo`), `--confinement auto` refuses to grade (one line, before any work);
    `--confinement fallback` then grades anyway and every report says "NOT ISOLATED": the worker
    runs as your own user, and code that undoes the hook can read or change your files.
    The grading tests are read into memory before any submitted code runs.
  - Both: resource limits on address space (4 GiB), CPU seconds, file size (1 MiB, which also caps
    what the worker prints), open files.
- **Only the function bodies are taken from the submission.**  `tests/` holds the grading tests,
  `points.json`, `manifest.json` (the SHA-256 of every file handed out and where each stub sits) and
  `handout/`, the package exactly as handed out; the graded package is `handout/` with the bodies
  spliced in.  A changed line outside the solution regions, an added module or a changed
  `setup.cfg` costs the assignments it touches their points, with the file and line.  Caches,
  virtual environments, notebooks and the student's own `tests/` are ignored and listed.
- **The static screen is feedback, not a wall** (`screen.py`): a body that uses a name the
  assignment replaces (the numerical gradient, a sibling function) gets a note; nothing is refused
  for what it names.

What this does not do: grade on a machine whose kernel lets an unprivileged process escape a
user namespace (keep the kernel patched), or stop a submission from using its whole time budget.
"""
