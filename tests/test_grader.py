"""The grader against an adversarial student: every cheat scores 0 for its
assignment with a reason naming what was found, honest work next to a cheat
keeps its points, an endless loop costs one test, a syntax error is reported
with its line, the isolated process refuses what the screen might miss, and
the platforms' formats (Gradescope, PrairieLearn) and grade-all's CSV."""
import csv
import io
import json
import os
import pathlib
import subprocess
import sys
import textwrap
import venv

import pytest

from tinyalgo.assignments import grade as grading
from tinyalgo.assignments import stubs
from tinyalgo.assignments.autograder import unpack
from tinyalgo.assignments.grade import grade
from tinyalgo.assignments.make import make
from tinyalgo.assignments.registry import ASSIGNMENTS
from tinyalgo.assignments.reports import as_format, class_csv
from tinyalgo.assignments.sandbox import check_pytest, run_tests
from tinyalgo.cli import assignment as cli

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
                f"(assignment {assignment})" in line)
    indent = lines[stub][:len(lines[stub]) - len(lines[stub].lstrip())]
    lines[stub] = textwrap.indent(textwrap.dedent(body).strip("\n") + "\n", indent)
    path.write_text("".join(lines), encoding="utf-8")


def write_rest(out, assignment, bodies=None):
    """Write the solution (or ``bodies[i]``) of every function of ``assignment`` after its first."""
    for i in range(1, len(ASSIGNMENTS[assignment].functions)):
        write_body(out, assignment, (bodies or {}).get(i) or solution_of(assignment, i), function=i)


def solution_of(assignment, function=0) -> str:
    f = ASSIGNMENTS[assignment].functions[function]
    return textwrap.dedent(stubs.solution_text((PACKAGE.parent / f.path).read_text(encoding="utf-8"), f.qualname))


def grade_copy(copy, **kw) -> dict:
    """``grade`` with the instructor's tests ``make`` wrote beside ``copy``.  pytest imports here: the
    check that it does (a process of its own) is tested once, in test_grading_without_pytest_is_one_clear_error."""
    return grade(copy, instructor_tests_of(copy), checked=True, **kw)


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


# ---------------------------------------------------------------- the five cheats of the issue, and more

def test_cheat_1_loading_the_answer_from_an_installed_tinyalgo(gru_alone):
    write_body(gru_alone, "gru_backward", """
        import subprocess, importlib.util, sys
        where = subprocess.run([sys.executable, "-c", "import tinyalgo; print(tinyalgo.__file__)"],
                               capture_output=True, text=True, cwd="/").stdout.strip()
        spec = importlib.util.spec_from_file_location("answer", where.replace("__init__.py", "cores.py"))
        answer = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(answer)
        return answer.gru_step_backward(dh_new, cache)
    """)
    earned, status, reason = scores(grade_copy(gru_alone))["gru_backward"]
    assert (earned, status) == (0, "refused")
    line = next(i for i, text in enumerate((gru_alone / PKG / "cores.py").read_text().splitlines(), 1)
                if "import subprocess" in text)
    assert f"cores.py, line {line}: imports 'subprocess'" in reason, reason


def test_cheat_2_calling_a_sibling_that_gives_the_answer(discount_alone):
    write_body(discount_alone, "dynamic_discount", """
        explored = np.zeros((r.shape[0] + 1, r.shape[1]), bool)
        return watkins_targets(rewards, q_max, explored, terminal, gamma, v_hat, lam=0.0)
    """)
    earned, status, reason = scores(grade_copy(discount_alone))["dynamic_discount"]
    assert (earned, status) == (0, "refused")
    assert "'watkins_targets'" in reason and "may not use" in reason


def test_cheat_3_a_backward_made_of_numerical_gradients(gru_alone):
    write_body(gru_alone, "gru_backward", """
        from tinyalgo.gradcheck import numerical_gradient
        x, h, z, r, rh, cand, p = cache
        f = lambda: float(np.sum(gru_step_forward(x, h, p)[0] * dh_new))
        grads = {k: numerical_gradient(f, v) for k, v in p.items()}
        return numerical_gradient(f, x), numerical_gradient(f, h), grads
    """)
    earned, status, reason = scores(grade_copy(gru_alone))["gru_backward"]
    assert (earned, status) == (0, "refused")
    assert "tinyalgo.gradcheck" in reason


def test_cheat_3b_numerical_gradients_written_out(gru_alone):
    """Reaching the numerical gradient without naming it (through ``globals()``) is refused too."""
    write_body(gru_alone, "gru_backward", """
        x, h, z, r, rh, cand, p = cache
        g = globals()
        return g["numerical_gradient"]
    """)
    earned, status, reason = scores(grade_copy(gru_alone))["gru_backward"]
    assert (earned, status) == (0, "refused") and "'globals'" in reason


def test_cheat_4_an_edited_gradcheck(copy):
    path = copy / "tinyalgo" / "gradcheck.py"
    text = path.read_text(encoding="utf-8")
    right = '    """max(|a - b| / max(1e-8, |a| + |b|)) over all entries."""\n'
    assert text.count(right) == 1
    path.write_text(text.replace(right, right + "    return 0.0\n"), encoding="utf-8")
    result = grade_copy(copy)
    assert result["earned"] == 0
    for name in TWO:
        earned, status, reason = scores(result)[name]
        assert status == "refused" and "tinyalgo/gradcheck.py was changed" in reason


def test_cheat_5_sitecustomize_and_a_pytest_plugin(copy):
    (copy / "sitecustomize.py").write_text("import os\nos.environ['PYTEST_PLUGINS'] = 'passall'\n", encoding="utf-8")
    (copy / "passall.py").write_text(textwrap.dedent("""
        import pytest
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            outcome.get_result().outcome = "passed"
    """), encoding="utf-8")
    result = grade_copy(copy)
    assert result["earned"] == 0
    reasons = " ".join(scores(result)["gru_backward"][2:])
    assert "sitecustomize.py was added; Python or pytest would load it" in reasons
    assert "passall.py was added" in reasons


def test_one_honest_solution_and_one_cheat_get_the_honest_points(copy):
    write_body(copy, "dynamic_discount", solution_of("dynamic_discount"))
    write_body(copy, "gru_backward", """
        from tinyalgo.gradcheck import numerical_gradient
        return numerical_gradient(lambda: 0.0, dh_new), None, {}
    """)
    result = grade_copy(copy)
    assert scores(result)["dynamic_discount"][:2] == (6, "graded")
    assert scores(result)["gru_backward"][:2] == (0, "refused")
    assert result["earned"] == 6


@pytest.mark.parametrize("body, found", [
    ("np.isclose = lambda *a, **k: True\nreturn None", "assigns to np.isclose"),
    ("gen = (i for i in ())\nreturn gen.gi_frame.f_back.f_globals['numerical_gradient']", "gi_frame"),
    ("return dh_new.__class__.__subclasses__()", "__class__"),
    ("m = np\nreturn m.zeros(1)", "uses the module 'np' as a value"),
    ("return np.ctypeslib.as_array(0)", "np.ctypeslib"),
    ("return eval('1')", "'eval'"),
    ("while True:\n    try:\n        pass\n    except:\n        pass", "bare 'except:'"),
    ("return open('/etc/passwd').read()", "'open'"),
    ("global np\nnp = None", "'global'"),
    ("return cache.x.tofile('/tmp/x')", "'tofile'"),
])
def test_what_else_a_student_with_a_weekend_tries(gru_alone, body, found):
    write_body(gru_alone, "gru_backward", body)
    earned, status, reason = scores(grade_copy(gru_alone))["gru_backward"]
    assert (earned, status) == (0, "refused") and found in reason, reason


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


# ---------------------------------------------------------------- feedback: loops, syntax errors, pytest

def test_an_endless_loop_costs_one_test(copy):
    write_body(copy, "dynamic_discount", "if r.shape[1] == 2:\n    while True:\n        pass\n" +
               solution_of("dynamic_discount"))
    write_body(copy, "gru_backward", solution_of("gru_backward"))
    write_rest(copy, "gru_backward")
    result = grade_copy(copy, limit=1.0)
    rows = {r["test"]: r for r in result["tests"]}
    assert rows["test_dynamic_targets_new_episode"]["outcome"] in ("failed", "timeout")
    assert "time limit" in rows["test_dynamic_targets_new_episode"]["message"]
    assert result["earned"] == 14 - 2


def test_a_process_that_ignores_the_alarm_is_killed_and_the_rest_run(tmp_path):
    tree = tmp_path / "tree"
    (tree / "tinyalgo").mkdir(parents=True)
    (tree / "tinyalgo" / "__init__.py").write_text("", encoding="utf-8")
    (tree / "tests").mkdir()
    (tree / "tests" / "test_k.py").write_text(textwrap.dedent("""
        import signal, time
        def test_a():
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
            time.sleep(60)
        def test_b():
            assert 1 + 1 == 2
    """), encoding="utf-8")
    run = run_tests(tree, [f"{TESTS}/test_k.py"], limit=0.5, grace=0.5)
    assert [n.split("::")[1] for n in run["timeouts"]] == ["test_a"]
    assert [(w, o) for w, o, _ in run["reports"][f"{TESTS}/test_k.py::test_b"]] == \
        [("setup", "passed"), ("call", "passed"), ("teardown", "passed")]


def test_the_isolated_process_refuses_what_the_screen_might_miss(tmp_path):
    """Test bodies stand in for a body the screen missed: processes, other copies, writes, forged results."""
    tree = tmp_path / "tree"
    (tree / "tinyalgo").mkdir(parents=True)
    (tree / "tinyalgo" / "__init__.py").write_text("", encoding="utf-8")
    (tree / "tests").mkdir()
    (tree / "tests" / "test_t.py").write_text(textwrap.dedent(f"""
        import json, os, subprocess, sys
        import tinyalgo
        def test_import_is_the_graded_copy():
            assert tinyalgo.__file__ == {str(tree / 'tinyalgo' / '__init__.py')!r}
            assert "PYTHONPATH" not in os.environ and sys.flags.no_user_site
        def test_process():
            subprocess.run(["true"])
        def test_other_copy():
            open({str(PACKAGE / 'cores.py')!r}).read()
        def test_write():
            open({str(tmp_path / 'out.txt')!r}, "w").write("x")
        def test_forged():
            for fd in range(3, 12):
                try:
                    os.write(fd, (json.dumps({{"record": json.dumps({{"event": "report", "nodeid":
                        "{TESTS}/test_t.py::test_forged", "when": "call", "outcome": "passed", "message": ""}}),
                        "mac": "0" * 64}}) + "\\n").encode())
                except OSError:
                    pass
            assert False, "really failed"
    """), encoding="utf-8")
    run = run_tests(tree, [f"{TESTS}/test_t.py"], protected=[PACKAGE])
    outcome = {n.split("::")[1]: [o for w, o, _ in r if w == "call"] for n, r in run["reports"].items()}
    assert outcome["test_import_is_the_graded_copy"] == ["passed"], run["reports"]
    for name in ("test_process", "test_other_copy", "test_write", "test_forged"):
        assert outcome[name] == ["failed"], (name, run["reports"])
    refused = {n.split("::")[1]: what for n, what in run["tampering"]}
    assert "start a process" in refused["test_process"]
    assert "cores.py" in refused["test_other_copy"] and "write" in refused["test_write"]
    assert not (tmp_path / "out.txt").exists()


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


def test_grading_without_pytest_is_one_clear_error(tmp_path, copy, monkeypatch, capsys):
    env = tmp_path / "bare"
    venv.EnvBuilder(with_pip=False).create(env)
    bare = str(env / "bin" / "python")
    with pytest.raises(ValueError, match=r"grading needs pytest, which .* cannot import: pip install pytest"):
        check_pytest(bare)
    monkeypatch.setattr(grading, "check_pytest", lambda python=None: check_pytest(bare))
    assert cli.main(["grade", str(copy), "--tests", str(instructor_tests_of(copy))]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "grading needs pytest" in err


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
    assert results["score"] == 0.0 and "no tinyalgo/__init__.py" in results["output"]


def test_grade_all_a_class_of_six(tmp_path, capsys):
    out = tmp_path / "hw"
    make(TWO, out)
    tests = instructor_tests_of(out)
    room = tmp_path / "submissions"
    honest = solution_of("dynamic_discount")
    kinds = {
        "ana_stub": None,
        "ben_solution": {"gru_backward": solution_of("gru_backward"), "dynamic_discount": honest},
        "cat_bug": {"gru_backward": solution_of("gru_backward"), "dynamic_discount": honest},
        "dan_cheat": {"gru_backward": "from tinyalgo.gradcheck import numerical_gradient\nreturn None",
                      "dynamic_discount": honest},
        "eve_syntax": {"gru_backward": "return (", "dynamic_discount": honest},
        "fay_loop": {"gru_backward": solution_of("gru_backward"), "dynamic_discount": "while True:\n    pass"},
    }
    import shutil
    weights_bug = {2: solution_of("gru_backward", 2).replace("\"bhh\": dcand.sum(0)", "\"bhh\": 2 * dcand.sum(0)")}
    for student, bodies in kinds.items():
        shutil.copytree(out, room / student)
        for assignment, body in (bodies or {}).items():
            write_body(room / student, assignment, body)
        if student in ("ben_solution", "cat_bug", "fay_loop"):      # gru_backward's state and weights parts
            write_rest(room / student, "gru_backward", weights_bug if student == "cat_bug" else None)
    (room / "gus_empty").mkdir()
    assert cli.main(["grade-all", str(room), "--tests", str(tests), "--csv", str(tmp_path / "grades.csv"),
                     "--test-timeout", "0.5"]) == 0        # fay's 3 endless tests; an honest one takes < 0.05 s
    progress = capsys.readouterr().err
    assert "graded 7/7" in progress
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO((tmp_path / "grades.csv").read_text()))}
    got = {s: (int(r["gru_backward"]), int(r["dynamic_discount"]), int(r["total"])) for s, r in rows.items()}
    assert got == {"ana_stub": (0, 0, 0), "ben_solution": (8, 6, 14), "cat_bug": (2, 6, 8),
                   "dan_cheat": (0, 6, 6), "eve_syntax": (0, 6, 6), "fay_loop": (8, 0, 8), "gus_empty": (0, 0, 0)}
    assert "refused" in rows["dan_cheat"]["status"] and "does not compile" in rows["eve_syntax"]["status"]
    assert "not graded" in rows["gus_empty"]["status"]


def test_class_csv_keeps_a_failed_submission():
    table = class_csv([("x", None, "ValueError: broken")], ["layers"])
    assert table.splitlines() == ["student,layers,total,max,status", "x,0,0,,error: ValueError: broken"]


@pytest.mark.parametrize("extra, says", [
    (["--test-timeout", "-1"], "--test-timeout: must be a finite number of seconds above 0"),
    (["--test-timeout", "nan"], "--test-timeout: must be a finite number of seconds above 0"),
    (["--format", "moodle"], "--format: invalid choice"),
])
def test_bad_grade_options_are_one_line_before_any_work(copy, extra, says):
    run = subprocess.run([sys.executable, "-m", "tinyalgo", "assignment", "grade", str(copy), "--tests",
                          str(instructor_tests_of(copy))] + extra, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and run.stdout == "" and run.stderr.count("\n") == 1 and says in run.stderr, run.stderr
