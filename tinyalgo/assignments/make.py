"""``make``: write a student copy of the package with the chosen assignments stubbed.

The copy holds the whole ``tinyalgo`` tree (so everything not stubbed runs),
``setup.cfg`` and ``pyproject.toml`` (``pip install -e DIR`` works), the
grading tests in ``tests/`` with ``points.json``, a student
``README.md`` and an ``INSTRUCTOR.md``.

Two more edits make every copy, student or solution, train on the student's
functions:

* the fast path's twins of the chosen assignments' functions
  (``Assignment.twins``: the same gradients, vectorised or factored, in
  ``tinyalgo/fast/``) keep their signature and docstring and raise
  ``NotImplementedError`` (``stubs.stub_body``), so the answer cannot be read
  there;
* the reference path is the default (``REFERENCE_DEFAULTS``: the
  ``reference`` option declared on, ``Controller(..., fast=False)``), so
  ``tinyalgo train`` runs the taught layers, cores and BPTT loop.  Each
  default is located with ``ast`` and checked: a declaration that changed
  shape is refused (nothing is written) rather than copied as is.
"""
from __future__ import annotations

import json
import pathlib
import shutil

import tinyalgo
from tinyalgo.assignments import registry
from tinyalgo.assignments.stubs import set_argument_default, set_field_default, stub_body, stub_function

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


FAST_MESSAGE = "the fast path is not part of this assignment's copy: train with --reference"

# The defaults a copy changes so that training takes the reference path: (file, setter, owner, name, old, new).
REFERENCE_DEFAULTS = (
    ("tinyalgo/options.py", set_field_default, "TrainingOptions", "reference", False, True),
    ("tinyalgo/controller.py", set_argument_default, "Controller.__init__", "fast", True, False),
    ("tinyalgo/controller.py", set_argument_default, "make_controller", "fast", True, False),
)


def twins_of(chosen) -> list:
    """The fast twins of the assignments ``chosen``, each once, in registry order."""
    seen = {}
    for a in chosen:
        for t in a.twins:
            seen.setdefault((t.module, t.qualname), t)
    return list(seen.values())


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
    The fast twins of the chosen functions are stubbed and the reference
    path made the default in every copy, ``solution`` or not (module docstring).
    Returns a summary: {"out", "assignments", "stubbed": ["module:qualname"] (the
    assignments' functions), "fast_stubbed": ["module:qualname"] (their fast twins), "points"}."""
    chosen = registry.get(names)
    out = check_out(out)
    source = pathlib.Path(package or pathlib.Path(tinyalgo.__file__).parent)
    # edit in memory first: a bad region or declaration leaves nothing on disk
    edits, stubbed = {}, []

    def text(path):
        return edits.get(path) or (source / pathlib.Path(path).relative_to("tinyalgo")).read_text(encoding="utf-8")
    if not solution:
        for a in chosen:
            for f in a.functions:
                edits[f.path] = stub_function(text(f.path), f.qualname, stub_message(a, f), where=f.path)
                stubbed.append(f"{f.module}:{f.qualname}")
    twins = twins_of(chosen)
    for t in twins:
        edits[t.path] = stub_body(text(t.path), t.qualname, FAST_MESSAGE, where=t.path, docstring=t.docstring)
    for path, setter, owner, name, old, new in REFERENCE_DEFAULTS:
        edits[path] = setter(text(path), owner, name, old, new, where=path)
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
            "fast_stubbed": [f"{t.module}:{t.qualname}" for t in twins], "points": sum(a.total for a in chosen)}


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
                 "your copy is graded with the instructor's tests.\n")
    parts.append(_training(chosen, student=True))
    return "\n".join(parts)


def _training(chosen, student: bool) -> str:
    """The paragraph on how a copy trains: the reference path by default, the fast twins stubbed."""
    twins = twins_of(chosen)
    you = "your" if student else "the student's"
    text = (f"## Training with {you} code\n\n"
            "In this copy `tinyalgo train` runs the reference path (the `reference` option is on by default, "
            "`Controller(...)` and `make_controller(...)` default to `fast=False`): the taught layers, cores and "
            "backprop-through-time loop (`tinyalgo/layers.py`, `tinyalgo/cores.py`, `tinyalgo/bptt.py`), so "
            f"training runs {you} functions wherever it uses them.  Once they are right, for example\n\n"
            f"    tinyalgo train --task copy --out run1\n\n"
            f"trains a controller with them (slower than the package's fast path, the same maths).\n")
    if twins:
        text += ("\nThe fast path's versions of these gradients (in `tinyalgo/fast/`) are not part of this "
                 "copy: their bodies raise `NotImplementedError`, so `--no-reference` stops there.\n\n" +
                 "\n".join(f"  - `{t.module}.{t.qualname}` ({t.path}): {t.computes}" for t in twins) + "\n")
    return text


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

{_training(chosen, student=False)}
The reference default and the stubbed fast twins hold in every copy, solution copies included (a
solution copy is what a correct student copy becomes): `tinyalgo train` in a solution copy checks
that the reference path trains with the solution bodies.  The rest of `tinyalgo/fast/` (the fast
forward steps, frozen inference, the interfaces' lanes) is intact.

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
