"""``grade``: run a copy's grading tests against the copy's own package and score them.

pytest runs in a subprocess whose working directory is the copy and whose
PYTHONPATH is the copy alone, so ``import tinyalgo`` finds the student's
package, not an installed one (checked before the tests run).  The outcome of
every test comes from pytest's JUnit XML report; its points from
the copy's ``points.json``.  A test that did not run (its file failed to import)
scores 0.
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def _env(directory: pathlib.Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(directory), PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTEST_ADDOPTS", None)
    return env


def imported_package(directory) -> str:
    """Where ``import tinyalgo`` resolves with the grader's environment for ``directory``."""
    directory = pathlib.Path(directory).resolve()
    out = subprocess.run([sys.executable, "-c", "import tinyalgo; print(tinyalgo.__file__)"], cwd=directory,
                         env=_env(directory), capture_output=True, text=True)
    if out.returncode != 0:
        raise ValueError(f"the copy's package does not import: {out.stderr.strip().splitlines()[-1:]}")
    return out.stdout.strip()


def _outcomes(xml_path) -> dict:
    """{test function name: (outcome, message)} from a JUnit XML report."""
    results = {}
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        name = case.get("name", "").split("[")[0]
        outcome, message = "passed", ""
        for kind in ("failure", "error", "skipped"):
            child = case.find(kind)
            if child is not None:
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[kind]
                message = (child.get("message") or child.text or "").strip()
                break
        previous = results.get(name)
        if previous is None or previous[0] == "passed":       # a parametrised test passes only if all cases do
            results[name] = (outcome, message)
    return results


def grade(directory, tests=None, timeout: float = 900.0) -> dict:
    """Grade the copy in ``directory`` with the tests in ``tests`` (default
    ``directory/tests``).  Returns {"directory", "package", "tests": [{"assignment",
    "test", "points", "earned", "outcome", "message"}], "earned", "total"}."""
    directory = pathlib.Path(directory).resolve()
    if not (directory / "tinyalgo" / "__init__.py").is_file():
        raise ValueError(f"{directory} holds no tinyalgo package; give a directory written by 'assignment make'")
    tests = pathlib.Path(tests).resolve() if tests else directory / "tests"
    points_file = tests / "points.json"
    if not points_file.is_file():
        raise ValueError(f"{points_file} is missing; give the tests directory written by 'assignment make'")
    points = json.loads(points_file.read_text(encoding="utf-8"))
    package = imported_package(directory)
    if not pathlib.Path(package).resolve().is_relative_to(directory):
        raise ValueError(f"the tests would import tinyalgo from {package}, not from the copy in {directory}")
    with tempfile.TemporaryDirectory() as tmp:
        xml_path = pathlib.Path(tmp) / "report.xml"
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
               f"--junitxml={xml_path}", "--rootdir", str(tests), str(tests)]
        try:
            run = subprocess.run(cmd, cwd=directory, env=_env(directory), capture_output=True, text=True,
                                 timeout=timeout)
        except subprocess.TimeoutExpired:
            raise ValueError(f"the tests took more than {timeout:.0f} s") from None
        outcomes = _outcomes(xml_path) if xml_path.is_file() else {}
    rows = []
    for assignment, table in points.items():
        for test, worth in table.items():
            outcome, message = outcomes.get(test, ("not run", "the test did not run (see pytest's output)"))
            rows.append({"assignment": assignment, "test": test, "points": worth,
                         "earned": worth if outcome == "passed" else 0, "outcome": outcome, "message": message})
    return {"directory": str(directory), "package": package, "tests": rows,
            "earned": sum(r["earned"] for r in rows), "total": sum(r["points"] for r in rows),
            "pytest_output": run.stdout[-4000:] if not outcomes else ""}


def format_grade(result: dict) -> str:
    """One line per test (points, outcome, the failure's first line) and the total."""
    wa = max([len(r["assignment"]) for r in result["tests"]] + [10])
    wt = max([len(r["test"]) for r in result["tests"]] + [4])
    lines = [f"grading {result['directory']} (package {result['package']})"]
    for r in result["tests"]:
        first = r["message"].splitlines()[0] if r["message"] and r["outcome"] != "passed" else ""
        lines.append(f"{r['assignment']:<{wa}}  {r['test']:<{wt}}  {r['earned']:>2}/{r['points']:<2}  "
                     f"{r['outcome']:<7}  {first[:160]}".rstrip())
    if result.get("pytest_output"):
        lines.append(result["pytest_output"])
    lines.append(f"total: {result['earned']}/{result['total']} points")
    return "\n".join(lines)
