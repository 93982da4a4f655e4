"""A grade in the formats course platforms read, and a class's grades as CSV.

``as_format(result, kind)`` turns the result of ``grade.grade`` into

* ``tinyalgo``: the result itself (submission, assignments with status and
  reasons, every test with its full message, notes);
* ``gradescope``: Gradescope's ``results.json`` (``score``, ``output``,
  ``tests[]`` with ``name``, ``score``, ``max_score``, ``status``,
  ``output``, ``visibility``, ``tags``);
* ``prairielearn``: PrairieLearn's external-grader ``results.json``
  (``gradable``, ``score`` in [0, 1], ``message``, ``tests[]`` with
  ``name``, ``description``, ``points``, ``max_points``, ``message``,
  ``output``).

Each test's output is its full message and the tutorial to read.
"""
from __future__ import annotations

import csv
import io

FORMATS = ("tinyalgo", "gradescope", "prairielearn")


def summary(result: dict) -> str:
    """The lines a student reads first: each assignment's points, and why one was refused or not graded."""
    lines = []
    for name, a in result["assignments"].items():
        head = f"{name}: {a['earned']}/{a['total']}"
        if a["status"] != "graded":
            head += f" ({a['status']})"
        lines.append(head)
        lines.extend(f"  {reason}" for reason in a["reasons"])
    if result.get("notes"):
        lines.append("notes: " + "; ".join(result["notes"]))
    lines.append(f"total: {result['earned']}/{result['total']}")
    return "\n".join(lines)


def _output(row: dict) -> str:
    """A test's message (a failed one ends with the tutorial to read), or "passed"."""
    return row["message"] or row["outcome"]


def gradescope(result: dict) -> dict:
    tests = [{"name": f"{r['assignment']}: {r['test']}", "score": float(r["earned"]), "max_score": float(r["points"]),
              "status": "passed" if r["outcome"] == "passed" else "failed", "output": _output(r),
              "visibility": "visible", "tags": [r["assignment"], f"tutorial {r['tutorial']}"]}
             for r in result["tests"]]
    return {"score": float(result["earned"]), "output": summary(result), "visibility": "visible",
            "stdout_visibility": "hidden", "tests": tests}


def prairielearn(result: dict) -> dict:
    total = result["total"]
    gradable = result.get("copy") is not None
    out = {"gradable": gradable, "score": (result["earned"] / total) if total else 0.0, "message": summary(result),
           "output": "\n".join(result.get("notes", [])),
           "tests": [{"name": f"{r['assignment']}: {r['test']}", "description": f"{r['assignment']} (tutorial"
                      f" {r['tutorial']})", "points": float(r["earned"]), "max_points": float(r["points"]),
                      "message": _output(r), "output": r["outcome"]} for r in result["tests"]]}
    if not gradable:
        out["format_errors"] = [reason for a in result["assignments"].values() for reason in a["reasons"]][:1]
    return out


def as_format(result: dict, kind: str) -> dict:
    if kind not in FORMATS:
        raise ValueError(f"--format {kind!r}: allowed: {', '.join(FORMATS)}")
    return {"tinyalgo": lambda r: r, "gradescope": gradescope, "prairielearn": prairielearn}[kind](result)


def class_csv(rows: list, assignments: list) -> str:
    """One line per student: student, each assignment's points, total, max, status (ok or the first problem)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student"] + list(assignments) + ["total", "max", "status"])
    for student, result, error in rows:
        if error is not None:
            writer.writerow([student] + [0] * len(assignments) + [0, "", f"error: {error}"])
            continue
        per = result["assignments"]
        problems = [f"{n}: {a['status']} ({a['reasons'][0]})" if a["reasons"] else f"{n}: {a['status']}"
                    for n, a in per.items() if a["status"] != "graded"]
        for n in per:
            late = sum(r["outcome"] == "timeout" or "time limit" in r["message"]
                       for r in result["tests"] if r["assignment"] == n and r["outcome"] != "passed")
            if late and per[n]["status"] == "graded":
                problems.append(f"{n}: {late} test(s) past the time limit")
        writer.writerow([student] + [per[n]["earned"] for n in assignments] +
                        [result["earned"], result["total"], "; ".join(problems) or "ok"])
    return buffer.getvalue()
