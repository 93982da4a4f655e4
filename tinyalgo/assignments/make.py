"""``make``: write a student copy of the package with the chosen assignments stubbed.

The copy holds the whole ``tinyalgo`` tree (so everything not stubbed runs,
and ``tinyalgo train --reference`` trains with the student's functions),
``setup.cfg`` and ``pyproject.toml`` (``pip install -e DIR`` works), the
grading tests in ``tests/`` with ``points.json``, a student
``README.md`` and an ``INSTRUCTOR.md``.
"""
from __future__ import annotations

import json
import pathlib
import shutil

import tinyalgo
from tinyalgo.assignments import registry
from tinyalgo.assignments.stubs import stub_function

GRADING = pathlib.Path(__file__).resolve().parent / "grading"
SUPPORT = ("conftest.py", "grading.py")          # copied into tests/ with every assignment

SETUP_CFG = """\
[metadata]
name = tinyalgo
version = {version}
description = tinyalgo course assignment: {names}

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
    return f"{function.what}: see tutorial {assignment.tutorial}"


def check_out(out) -> pathlib.Path:
    out = pathlib.Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"--out {out} already exists and is not an empty directory; give a new or empty one"
                         " (make never overwrites)")
    return out


def make(names, out, solution: bool = False, package=None) -> dict:
    """Write the copy of assignments ``names`` into ``out`` (new or empty).
    ``solution``: keep the solution bodies (an instructor's check copy, full
    points).  ``package``: the tinyalgo directory to copy (default: this one).
    Returns a summary: {"out", "assignments", "stubbed": ["module:qualname"], "points"}."""
    chosen = registry.get(names)
    out = check_out(out)
    source = pathlib.Path(package or pathlib.Path(tinyalgo.__file__).parent)
    # stub in memory first: a bad region leaves nothing on disk
    edits, stubbed = {}, []
    if not solution:
        for a in chosen:
            for f in a.functions:
                text = edits.get(f.path) or (source / pathlib.Path(f.path).relative_to("tinyalgo")).read_text()
                edits[f.path] = stub_function(text, f.qualname, stub_message(a, f), where=f.path)
                stubbed.append(f"{f.module}:{f.qualname}")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, out / "tinyalgo",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "*.npz"))
    for path, text in edits.items():
        (out / path).write_text(text, encoding="utf-8")
    names_line = ", ".join(a.name for a in chosen)
    (out / "setup.cfg").write_text(SETUP_CFG.format(version=tinyalgo.__version__, names=names_line), encoding="utf-8")
    (out / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    tests = out / "tests"
    tests.mkdir()
    for name in SUPPORT:
        shutil.copyfile(GRADING / name, tests / name)
    for a in chosen:
        shutil.copyfile(GRADING / a.test_file, tests / a.test_file)
    points = {a.name: dict(a.points) for a in chosen}
    (tests / "points.json").write_text(json.dumps(points, indent=1) + "\n", encoding="utf-8")
    (out / "README.md").write_text(student_readme(chosen), encoding="utf-8")
    (out / "INSTRUCTOR.md").write_text(instructor_readme(chosen, solution), encoding="utf-8")
    return {"out": str(out), "assignments": [a.name for a in chosen], "stubbed": stubbed,
            "points": sum(a.total for a in chosen)}


def _functions(a) -> str:
    return "\n".join(f"  - `{f.module}.{f.qualname}` ({f.path}): {f.what}" for f in a.functions)


def student_readme(chosen) -> str:
    total = sum(a.total for a in chosen)
    parts = [f"# tinyalgo assignment: {', '.join(a.name for a in chosen)}\n",
             "This directory is a copy of the tinyalgo package (\"Learning Simple Algorithms from Examples\", "
             "Zaremba et al., ICLR 2016, in NumPy) in which some function bodies were replaced by "
             "`raise NotImplementedError(...)`.  Write them; everything else already works.\n",
             "Setup (in a fresh virtualenv):\n\n    pip install -e .\n    pip install pytest\n",
             "Check your work at any time (this runs the grading tests against this copy):\n\n"
             "    python -m pytest tests -q\n",
             "Each failing test says which gradient or which target is wrong.  The gradient tests compare "
             "your backward pass with centred differences of the forward pass (`tinyalgo.gradcheck`), in "
             "float64, with random biases and initial states: a relative error below 1e-6 passes.\n",
             f"## What to implement ({total} points)\n"]
    for a in chosen:
        parts.append(f"### {a.name}: {a.title} ({a.total} points, about {a.minutes} minutes; "
                     f"tutorial {a.tutorial})\n\n{_functions(a)}\n")
        parts.append("\n".join(f"  - `{t}`: {p} points" for t, p in a.points.items()) + "\n")
    parts.append("Keep the signatures, the docstrings and the shapes they state.  Do not edit `tests/`: "
                 "your copy is graded with the instructor's tests.  Once your backward passes are right, "
                 "`tinyalgo train --reference` trains a controller with them.\n")
    return "\n".join(parts)


def instructor_readme(chosen, solution: bool) -> str:
    total = sum(a.total for a in chosen)
    minutes = sum(a.minutes for a in chosen)
    rows = "\n".join(f"| {a.name} | {', '.join(f'`{f.qualname}`' for f in a.functions)} | {a.total} | "
                     f"{a.tutorial} | {a.minutes} min | {', '.join(a.uses) or '-'} |" for a in chosen)
    kind = ("This is a SOLUTION copy (made with --solution): the bodies are intact and the grade is full points."
            if solution else "The marked bodies are stubbed; the grade of this copy as made is 0 points.")
    return f"""# Instructor notes: {', '.join(a.name for a in chosen)}

{kind}

| assignment | functions | points | tutorial | expected time | its tests also run |
|---|---|---|---|---|---|
{rows}

Total: {total} points, about {minutes} minutes.

## What the student implements
{chr(10).join(f"- {a.name}: {a.title}.{chr(10)}{_functions(a)}" for a in chosen)}

The stubbed bodies are the ones `tinyalgo train --reference` runs: a student's correct backward
pass trains the controller.  `tinyalgo/fast/` keeps the fast path's own (vectorised) steps, cores
and BPTT, which a student can read.

## How the tests grade
Every test is worth the points of `points.json` in the tests directory.  The gradient tests compare the student's
gradients with centred differences (`tinyalgo.gradcheck`, float64, random biases and initial
states, recurrent ones over T >= 3 steps and B >= 2 lanes) and fail above a relative error of 1e-6,
naming the wrong gradient (per gate block for fused GRU/LSTM matrices).  The target tests compare
with numbers worked by hand, written in the test, and name the wrong (step, lane).  No test compares
with a hidden copy of the answer.  "Its tests also run": those tests call functions of the listed
assignments too; made together, they pass once all are written.

## How to grade
    tinyalgo assignment grade STUDENT_DIR --tests THIS_DIR/tests --json grade.json

runs the tests (your copy of them, with `--tests`, so a student's edits to `tests/` do not count)
in a subprocess with PYTHONPATH=STUDENT_DIR: the student's package is the one imported.  It prints
the points of every test and the total; `--json` writes them for a gradebook.
"""
