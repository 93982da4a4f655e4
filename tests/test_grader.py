"""The grader's instructor surface: what a submission changed, an endless loop costs one test, a
syntax error is reported with its line, bad folders and options are one line before any work, a
killed run leaves nothing behind, the platforms' formats (Gradescope, PrairieLearn) and
grade-all's CSV with folders and zips.  The attacks are in test_grader_redteam.py."""
import csv
import io
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from tinyalgo.assignments import grade as grading
from tinyalgo.assignments import stubs
from tinyalgo.assignments.autograder import unpack
from tinyalgo.assignments.grade import grade
from tinyalgo.assignments.make import make
from tinyalgo.assignments.registry import ASSIGNMENTS
from tinyalgo.assignments.reports import as_format, class_csv
from tinyalgo.cli import assignment as cli

pytestmark = pytest.mark.slow           # each grade starts confined worker processes

PACKAGE = pathlib.Path(__import__("tinyalgo").__file__).parent
TWO = ["gru_backward", "dynamic_discount"]
PKG, TESTS = "tinyalgo", "tests"               # folders of a copy (not paths of this repository)


def instructor_tests_of(out) -> pathlib.Path:
    return pathlib.Path(f"{out}-instructor") / "tests"


def write_body(out, assignment, body: str, function=0):
    """Replace the stub of the assignment's function in the copy at ``out`` by ``body`` (indented to fit)."""
    f = ASSIGNMENTS[assignment].functions[function]
    path = out / f.path
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    stub = next(i for i, line in enumerate(lines) if "raise NotImplementedError" in line and
                f"(assignment {assignment})" in line and f"{f.what.split(':')[0]}:" in line)
    indent = lines[stub][:len(lines[stub]) - len(lines[stub].lstrip())]
    lines[stub] = textwrap.indent(textwrap.dedent(body).strip("\n") + "\n", indent)
    path.write_text("".join(lines), encoding="utf-8")


def write_solution(out, assignment, old: str = "", new: str = ""):
    """Write the solution of every function of ``assignment`` into the copy at ``out`` (``old`` replaced by
    ``new`` in them: a planted bug)."""
    for k in range(len(ASSIGNMENTS[assignment].functions)):
        write_body(out, assignment, solution_of(assignment, k).replace(old, new) if old else
                   solution_of(assignment, k), function=k)


def solution_of(assignment, function=0) -> str:
    f = ASSIGNMENTS[assignment].functions[function]
    return textwrap.dedent(stubs.solution_text((PACKAGE.parent / f.path).read_text(encoding="utf-8"), f.qualname))


def grade_copy(copy, **kw) -> dict:
    """``grade`` with the instructor's tests ``make`` wrote beside ``copy``."""
    return grade(copy, instructor_tests_of(copy), **kw)


@pytest.fixture
def copy(tmp_path):
    out = tmp_path / "copy"
    make(TWO, out)
    return out


def copy_of(assignment, tmp_path):
    out = tmp_path / assignment
    make([assignment], out)
    return out


# A test that only looks at a refused assignment grades a copy of that assignment alone: a refused assignment's
# tests are not run, so the grade starts no grading process for another assignment's stubs that nobody looks at.
@pytest.fixture
def gru_alone(tmp_path):
    return copy_of("gru_backward", tmp_path)


@pytest.fixture
def discount_alone(tmp_path):
    return copy_of("dynamic_discount", tmp_path)


def scores(result):
    return {name: (a["earned"], a["status"], " ".join(a["reasons"])) for name, a in result["assignments"].items()}


# ---------------------------------------------------------------- what a submission changed

def test_code_outside_the_function_is_refused(discount_alone):
    write_body(discount_alone, "dynamic_discount", "return r\n")
    path = discount_alone / "tinyalgo" / "qlearning.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("    return r\n", "    return r\nimport os\n", 1), encoding="utf-8")
    earned, status, reason = scores(grade_copy(discount_alone))["dynamic_discount"]
    assert (earned, status) == (0, "refused") and "must stay inside the function" in reason


def test_changes_outside_the_regions_and_added_modules(copy):
    qlearning = copy / "tinyalgo" / "qlearning.py"
    text = qlearning.read_text(encoding="utf-8")
    qlearning.write_text(text.replace("def penalty(q, kappa, mask=None):", "def penalty(q, kappa, mask=None):  # mine"),
                         encoding="utf-8")
    result = grade_copy(copy)
    assert scores(result)["dynamic_discount"][1] == "refused" and "changed outside the solution regions" in \
        scores(result)["dynamic_discount"][2]
    assert scores(result)["gru_backward"][1] == "graded"              # another file: unaffected
    qlearning.write_text(text, encoding="utf-8")
    (copy / "tinyalgo" / "helper.py").write_text("X = 1\n", encoding="utf-8")
    assert f"{PKG}/helper.py was added" in scores(grade_copy(copy))["gru_backward"][2]


def test_what_is_ignored_and_a_zipped_folder(tmp_path):
    out = tmp_path / "student" / "hw"                             # a submission holding the copy's folder
    make(["dynamic_discount"], out, instructor=tmp_path / "mine")
    write_body(out, "dynamic_discount", solution_of("dynamic_discount"))
    (out / "tests" / "test_dynamic_discount.py").write_text("def test_mine():\n    assert True\n", encoding="utf-8")
    (out / "notes.md").write_text("my notes\n", encoding="utf-8")
    (out / "tinyalgo" / "__pycache__").mkdir(exist_ok=True)
    (out / "tinyalgo" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    venv_dir = out / ".venv"
    venv_dir.mkdir()
    (venv_dir / "pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")
    (venv_dir / "evil.pth").write_text("import os\n", encoding="utf-8")
    text = (out / "tinyalgo" / "qlearning.py").read_text(encoding="utf-8")      # Windows line endings
    (out / "tinyalgo" / "qlearning.py").write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    result = grade(tmp_path / "student", tmp_path / "mine" / "tests")
    assert result["earned"] == result["total"] == 6, scores(result)
    assert any(f"{TESTS}/test_dynamic_discount.py was changed (not used" in n for n in result["notes"])
    assert any("notes.md was added (ignored)" in n for n in result["notes"])


# ---------------------------------------------------------------- feedback: loops, syntax errors, folders

def test_an_endless_loop_costs_one_test(copy):
    write_body(copy, "dynamic_discount", "if r.shape == (2, 2):\n    while True:\n        pass\n" +
               solution_of("dynamic_discount"))
    write_solution(copy, "gru_backward")
    result = grade_copy(copy, test_timeout=3.0)
    rows = {r["test"]: r for r in result["tests"]}
    assert rows["test_dynamic_targets_new_episode"]["outcome"] == "timeout"
    assert "no answer within 3 s" in rows["test_dynamic_targets_new_episode"]["message"]
    assert result["earned"] == 14 - 2


def test_a_syntax_error_is_reported_with_its_line(copy):
    write_body(copy, "gru_backward", "return (dh_new,\n")
    write_body(copy, "dynamic_discount", solution_of("dynamic_discount"))
    result = grade_copy(copy)
    earned, status, reason = scores(result)["gru_backward"]
    line = next(i for i, text in enumerate((copy / "tinyalgo" / "cores.py").read_text().splitlines(), 1)
                if "return (dh_new," in text)
    assert (earned, status) == (0, "does not compile")
    assert f"tinyalgo/cores.py, line {line}: SyntaxError" in reason, reason
    assert scores(result)["dynamic_discount"][0] == 6


# ---------------------------------------------------------------- platforms and a class

GRADESCOPE_TEST_KEYS = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format",
                        "tags", "visibility", "extra_data"}
GRADESCOPE_KEYS = {"score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
                   "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


def check_gradescope(results: dict):
    """Gradescope's documented results.json: known keys, numbers where numbers go, a score or per-test scores."""
    assert set(results) <= GRADESCOPE_KEYS, set(results) - GRADESCOPE_KEYS
    assert "score" in results or all("score" in t for t in results["tests"])
    assert isinstance(results.get("score", 0.0), (int, float))
    assert results.get("visibility", "visible") in VISIBILITY
    assert results.get("stdout_visibility", "visible") in VISIBILITY
    for t in results["tests"]:
        assert set(t) <= GRADESCOPE_TEST_KEYS, set(t) - GRADESCOPE_TEST_KEYS
        assert isinstance(t["score"], (int, float)) and isinstance(t["max_score"], (int, float))
        assert 0 <= t["score"] <= t["max_score"] and isinstance(t["name"], str) and isinstance(t["output"], str)
        assert t.get("status", "passed") in ("passed", "failed") and t.get("visibility", "visible") in VISIBILITY
        assert all(isinstance(tag, str) for tag in t.get("tags", []))


def check_prairielearn(results: dict):
    """PrairieLearn's external grader results.json: gradable, score in [0, 1], tests with points and max_points."""
    assert isinstance(results["gradable"], bool)
    assert isinstance(results["score"], (int, float)) and 0.0 <= results["score"] <= 1.0
    assert set(results) <= {"gradable", "score", "message", "output", "images", "tests", "format_errors",
                            "partial_scores", "feedback"}
    for t in results["tests"]:
        assert set(t) <= {"name", "description", "points", "max_points", "message", "output", "images"}
        assert isinstance(t["name"], str) and 0 <= t["points"] <= t["max_points"]
        assert isinstance(t.get("message", ""), str) and isinstance(t.get("output", ""), str)


def test_formats_follow_the_platforms_schemas(copy):
    write_body(copy, "dynamic_discount", solution_of("dynamic_discount"))
    result = grade_copy(copy)
    gs, pl = as_format(result, "gradescope"), as_format(result, "prairielearn")
    check_gradescope(gs)
    check_prairielearn(pl)
    assert gs["score"] == 6.0 and pl["score"] == pytest.approx(6 / 14)
    failed = next(t for t in gs["tests"] if t["name"] == "gru_backward: test_gru_three_steps")
    assert "NotImplementedError" in failed["output"] and "tutorial 02" in failed["output"]
    with pytest.raises(ValueError, match="allowed: tinyalgo, gradescope, prairielearn"):
        as_format(result, "moodle")


def test_gradescope_autograder_zip_runs_in_an_autograder_shaped_folder(tmp_path):
    out = tmp_path / "hw"
    summary = make(TWO, out, autograder="gradescope")
    root = unpack(summary["autograder"], tmp_path / "autograder")
    for name in ("setup.sh", "run_autograder", f"{TESTS}/manifest.json", f"{TESTS}/handout/{PKG}/__init__.py",
                 "tinyalgo-src/tinyalgo/assignments/grade.py"):
        assert (root / "source" / name).is_file(), name
    import shutil
    shutil.copytree(out, root / "submission" / "hw")
    write_body(root / "submission" / "hw", "dynamic_discount", solution_of("dynamic_discount"))
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), TINYALGO_PYTHON=sys.executable)
    run = subprocess.run(["bash", str(root / "run_autograder")], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    check_gradescope(results)
    assert results["score"] == 6.0 and len(results["tests"]) == 6, results["output"]
    shutil.rmtree(root / "submission" / "hw")                # nothing gradable: still a results.json
    run = subprocess.run(["bash", str(root / "run_autograder")], env=env, capture_output=True, text=True, timeout=300)
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    check_gradescope(results)
    assert results["score"] == 0.0 and "is empty" in results["output"]


def test_grade_all_a_class_of_six_and_a_zip(tmp_path, capsys):
    out = tmp_path / "hw"
    make(TWO, out)
    tests = instructor_tests_of(out)
    room = tmp_path / "submissions"
    honest = solution_of("dynamic_discount")
    kinds = {
        "ana_stub": None,
        "ben_solution": {"gru_backward": (), "dynamic_discount": honest},
        "cat_bug": {"gru_backward": ("\"bhh\": dcand.sum(0)", "\"bhh\": 2 * dcand.sum(0)"),
                    "dynamic_discount": honest},
        "dan_cheat": {"gru_backward": "from tinyalgo.gradcheck import numerical_gradient\nreturn None",
                      "dynamic_discount": honest},
        "eve_syntax": {"gru_backward": "return (", "dynamic_discount": honest},
        "fay_loop": {"gru_backward": (), "dynamic_discount": "while True:\n    pass"},
    }
    import shutil
    for student, bodies in kinds.items():
        shutil.copytree(out, room / student)
        for assignment, body in (bodies or {}).items():      # a tuple: the solution, with (old, new) replaced
            if isinstance(body, tuple):
                write_solution(room / student, assignment, *body)
            else:
                write_body(room / student, assignment, body)
    (room / "gus_empty").mkdir()
    shutil.make_archive(str(room / "hal_zip"), "zip", room / "ben_solution")
    (room / "ivy_broken.zip").write_bytes(b"not a zip")
    assert cli.main(["grade-all", str(room), "--tests", str(tests), "--csv", str(tmp_path / "grades.csv"),
                     "--test-timeout", "5", "--submission-timeout", "120"]) == 0
    progress = capsys.readouterr().err
    assert "graded 9/9" in progress
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO((tmp_path / "grades.csv").read_text()))}
    got = {s: (int(r["gru_backward"]), int(r["dynamic_discount"]), int(r["total"])) for s, r in rows.items()}
    assert got == {"ana_stub": (0, 0, 0), "ben_solution": (8, 6, 14), "cat_bug": (0, 6, 6),
                   "dan_cheat": (0, 6, 6), "eve_syntax": (0, 6, 6), "fay_loop": (8, 0, 8), "gus_empty": (0, 0, 0),
                   "hal_zip": (8, 6, 14), "ivy_broken": (0, 0, 0)}
    assert "does not compile" in rows["eve_syntax"]["status"]
    assert "is empty" in rows["gus_empty"]["status"] and "not a readable zip" in rows["ivy_broken"]["status"]
    assert not list(pathlib.Path(__import__("tempfile").gettempdir()).glob(f"tinyalgo-grade-{os.getpid()}-*"))


def test_class_csv_keeps_a_failed_submission():
    table = class_csv([("x", None, "ValueError: broken")], ["layers"])
    assert table.splitlines() == ["student,layers,total,max,status", "x,0,0,,error: ValueError: broken"]


@pytest.mark.parametrize("extra, says", [
    (["--test-timeout", "-1"], "--test-timeout: must be 0.5 to 600 seconds"),
    (["--test-timeout", "nan"], "--test-timeout: must be 0.5 to 600 seconds"),
    (["--test-timeout", "1e12"], "--test-timeout: must be 0.5 to 600 seconds"),
    (["--submission-timeout", "0"], "--submission-timeout: must be 5 to 7200 seconds"),
    (["--format", "moodle"], "--format: invalid choice"),
    (["--confinement", "docker"], "--confinement: invalid choice"),
])
def test_bad_grade_options_are_one_line_before_any_work(copy, extra, says):
    run = subprocess.run([sys.executable, "-m", "tinyalgo", "assignment", "grade", str(copy), "--tests",
                          str(instructor_tests_of(copy))] + extra, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and run.stdout == "" and run.stderr.count("\n") == 1 and says in run.stderr, run.stderr


@pytest.mark.parametrize("folder, says", [("missing", "does not exist"), ("empty", "is empty"),
                                          ("other", "is not a copy")])
def test_a_folder_that_is_not_a_copy_is_one_line(tmp_path, copy, folder, says):
    target = tmp_path / folder
    if folder != "missing":
        target.mkdir()
    if folder == "other":
        (target / "notes.txt").write_text("hello\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "tinyalgo", "assignment", "grade", str(target), "--tests",
                          str(instructor_tests_of(copy))], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and run.stdout == "" and run.stderr.count("\n") == 1 and says in run.stderr, run.stderr


def test_tests_of_another_handout_are_named_as_the_instructors_mistake(tmp_path, copy):
    other = tmp_path / "other"
    make(TWO, other)
    with pytest.raises(ValueError, match=r"belongs to another handout .* must be the one 'assignment make' wrote"):
        grade(copy, instructor_tests_of(other))


def test_a_killed_run_leaves_nothing_behind(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f"{grading.TEMP_PREFIX}{int(dead.stdout)}-abc"
    live = tmp_path / f"{grading.TEMP_PREFIX}{os.getpid()}-abc"
    for folder in (stale, live):
        (folder / "grading").mkdir(parents=True)
    assert grading.clean_stale(tmp_path) == 1
    assert not stale.exists() and live.exists()


@pytest.mark.parametrize("confinement", ["bubblewrap", "fallback"])
def test_each_confinement_grades_and_says_which(discount_alone, confinement):
    write_body(discount_alone, "dynamic_discount", solution_of("dynamic_discount"))
    result = grade_copy(discount_alone, confinement=confinement)
    assert result["earned"] == result["total"] == 6 and result["confinement"].startswith(confinement)
