"""tinyalgo assignment: the solution regions, the student copies, their grading
tests (fail on the stubs, pass on the solution, name what a wrong solution
gets wrong), the grader (the copy's package is the one tested), make's
refusals, and training in a copy running the copy's functions."""
import ast
import json
import os
import pathlib
import subprocess
import sys

import pytest


from tinyalgo.assignments import stubs
from tinyalgo.assignments.grade import grade
from tinyalgo.assignments.make import GRADING, make
from tinyalgo.assignments.registry import ASSIGNMENTS
from tinyalgo.cli import assignment as cli

pytestmark = pytest.mark.slow           # each grade starts confined worker processes

PACKAGE = pathlib.Path(__import__("tinyalgo").__file__).parent
ALL = list(ASSIGNMENTS)

# (file, solution text, wrong text, the test that must fail, what its message must name)
WRONG = [
    ("tinyalgo/cores.py", "dz = dhz * (cand - h) * (1.0 - z)", "dz = dhz * (h - cand) * (1.0 - z)",
     "test_gru_step_parameter_gradients", "wx[z] (relative error"),
    ("tinyalgo/cores.py", "dc_total * c * f * (1.0 - f)", "dc_total * c * f * (1.0 + f)",
     "test_lstm_step_parameter_gradients", "wx[f] (relative error"),
    ("tinyalgo/layers.py", "return dout * (1.0 - cache * cache)", "return dout * (1.0 + cache * cache)",
     "test_tanh_backward_gradient_check", "wrong gradient of x"),
    ("tinyalgo/layers.py", "dlogp[rows, targets[mask]] = -1.0", "dlogp[rows, targets[mask]] = 1.0",
     "test_nll_loss_by_hand", "wrong gradient of dlogp"),
    ("tinyalgo/controller.py", "tanh_backward(dt, cache.tanh)",
     "tanh_backward(dt - dscores @ cache.sym.w.T, cache.tanh)",                # the symbol head's part of dt lost
     "test_step_backward_ff", "extra.w"),
    ("tinyalgo/bptt.py", "        if keep is not None:", "        if False:",
     "test_episode_barrier", "crossed the episode barrier"),
    ("tinyalgo/qlearning.py", "return r / v[:-1] + np.where(", "return r / v[1:] + np.where(",
     "test_dynamic_targets_by_hand", "step t 0, lane b 0: got 0.833333, expected 0.666667"),
    ("tinyalgo/qlearning.py", "l_t = np.where(cut[t + 1], 0.0, lam)", "l_t = np.where(cut[t], 0.0, lam)",
     "test_watkins_exploratory_cut", "wrong at step t"),
    ("tinyalgo/qlearning.py", "g = r[t] + d[t] * ((1.0 - lam[t]) * boot[t + 1]",
     "g = r[t] + d[t] * ((1.0 - lam[t]) * boot[t]",
     "test_lambda_zero", "wrong at step t"),
    ("tinyalgo/qlearning.py", "dq = np.repeat((2.0 * kappa * excess)", "dq = np.repeat((kappa * excess)",
     "test_penalty_by_hand", "wrong gradient of dq"),
    ("tinyalgo/tasks/arithmetic.py", "np.where(column % 2 == 0, self.action(DOWN, 0), self.action(UP, 0))",
     "np.where(column % 2 == 0, self.action(UP, 0), self.action(DOWN, 0))",
     "test_addition_actions_by_hand", "expected ['down', 'left+write'"),
    ("tinyalgo/curriculum.py", "self.level += self.increment", "self.level += self.increment - 1",
     "test_curriculum_advances_after_a_perfect_validation", "expected True, level 10"),
    ("tinyalgo/automata/minimise.py", "        if new.max() == block.max():", "        if True:",     # outputs only
     "test_refinement_needs_several_rounds", "were merged but are not equivalent"),
]


def outcomes(result):
    return {r["test"]: r for r in result["tests"]}


def instructor(out) -> pathlib.Path:
    """The instructor's tests folder that ``make`` wrote beside the copy ``out``."""
    return pathlib.Path(f"{out}-instructor") / "tests"


@pytest.fixture(scope="module")
def stub_copy(tmp_path_factory):
    out = tmp_path_factory.mktemp("student") / "all"
    return out, make(ALL, out), grade(out, instructor(out))


@pytest.fixture(scope="module")
def solution_copy(tmp_path_factory):
    out = tmp_path_factory.mktemp("solution") / "all"
    return out, make(ALL, out, solution=True), grade(out, instructor(out))


def test_registry_matches_the_grading_tests_and_the_regions():
    assert len(ASSIGNMENTS) >= 8
    for a in ASSIGNMENTS.values():
        tree = ast.parse((GRADING / a.test_file).read_text(encoding="utf-8"))
        tests = {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}
        assert tests == set(a.points), (f"{a.name}: the registry's points {sorted(a.points)}"
                                        f" != the tests {sorted(tests)}")
        assert all(p > 0 for p in a.points.values()) and a.tutorial and a.minutes > 0
        for f in a.functions:
            source = (PACKAGE.parent / f.path).read_text(encoding="utf-8")
            body = stubs.solution_text(source, f.qualname, f.path)
            assert "return" in body or "=" in body, f"{f.qualname}: an empty solution region"
    names = [t for a in ASSIGNMENTS.values() for t in a.points]
    assert len(names) == len(set(names)), "test names must be unique across assignments"


def test_stub_keeps_signature_and_docstring():
    src = (PACKAGE / "cores.py").read_text(encoding="utf-8")
    out = stubs.stub_function(src, "gru_step_backward", "gru_step_backward: the gradients: see tutorial 02")
    node = stubs.find_function(ast.parse(out), "gru_step_backward")
    assert [a.arg for a in node.args.args] == ["dh_new", "cache"]
    assert ast.get_docstring(node).startswith("dh' (B, H) -> (dx (B, D), dh (B, H)")
    assert isinstance(node.body[1], ast.Raise) and len(node.body) == 2
    assert 'raise NotImplementedError("gru_step_backward: the gradients: see tutorial 02")' in out
    assert "def lstm_step_backward" in out and stubs.BEGIN in out     # the other functions keep theirs
    with pytest.raises(ValueError, match="no function 'nope'"):
        stubs.stub_function(src, "nope", "x")
    with pytest.raises(ValueError, match="exactly one solution region"):
        stubs.stub_function(src, "gru_step_forward", "x")


def test_every_test_fails_on_the_stubs(stub_copy):
    out, summary, result = stub_copy
    assert len(summary["stubbed"]) == sum(len(a.functions) for a in ASSIGNMENTS.values())
    assert pathlib.Path(result["copy"]).resolve() == out.resolve()
    assert len(result["tests"]) == sum(len(a.points) for a in ASSIGNMENTS.values())
    for r in result["tests"]:
        assert r["outcome"] == "failed", f"{r['test']} on the stubs: {r['outcome']} {r['message'][:300]}"
        assert "NotImplementedError" in r["message"] and "see tutorial" in r["message"], r["message"][:300]
    assert result["earned"] == 0 and result["total"] == sum(a.total for a in ASSIGNMENTS.values())


def test_every_test_passes_on_the_solution(solution_copy):
    out, summary, result = solution_copy
    assert summary["stubbed"] == []
    failed = [(r["test"], r["message"][:300]) for r in result["tests"] if r["outcome"] != "passed"]
    assert not failed
    assert result["earned"] == result["total"] == sum(a.total for a in ASSIGNMENTS.values())
    assert all(a["status"] == "graded" and not a["reasons"] for a in result["assignments"].values())


def test_a_wrong_solution_fails_naming_what_is_wrong(tmp_path):
    out = tmp_path / "wrong"
    make(ALL, out, solution=True)
    for path, right, wrong, _, _ in WRONG:
        text = (out / path).read_text(encoding="utf-8")
        assert text.count(right) == 1, f"{path}: {right!r} is not in the solution once"
        (out / path).write_text(text.replace(right, wrong), encoding="utf-8")
    result = outcomes(grade(out, instructor(out)))
    for path, _, wrong, test, message in WRONG:
        r = result[test]
        assert r["outcome"] == "failed", f"{test} passed with {wrong!r} in {path}"
        assert message in r["message"], (f"{test} with {wrong!r}: the message does not say {message!r}:"
                                         f" {r['message'][:400]}")
    assert result["test_lstm_three_steps"]["outcome"] == "failed"


def test_the_student_copy_runs_everything_not_stubbed(stub_copy):
    out = stub_copy[0]
    env = dict(os.environ, PYTHONPATH=str(out))
    run = subprocess.run([sys.executable, "-m", "tinyalgo", "show", "--task", "copy", "--complexity", "4"], cwd=out,
                         env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "frame 1/" in run.stdout
    code = ("import numpy as np, tinyalgo\nfrom tinyalgo.cores import gru_step_forward, core_param_shapes\n"
            "from tinyalgo.layers import affine_backward\n"
            "p = {k: np.ones(s) for k, s in core_param_shapes('gru', 2, 3).items()}\n"
            "print(gru_step_forward(np.ones((2, 2)), np.zeros((2, 3)), p)[0].shape)\n"
            "try:\n    affine_backward(None, None)\nexcept NotImplementedError as e:\n    print(tinyalgo.__file__, e)\n"
            "import tinyalgo.controller, tinyalgo.bptt\n"
            "print(tinyalgo.controller.__file__.startswith(tinyalgo.__file__[:-11]),"
            " tinyalgo.bptt.__file__.startswith(tinyalgo.__file__[:-11]))\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=out, env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "(2, 3)"
    assert lines[1].startswith(str(out)) and lines[1].endswith("see tutorial 02")
    assert lines[2] == "True True", "a copy trains with its own controller and bptt"
    for name in ("runs/options.py", "qtraining.py"):  # copied as is (controller.py holds stubs)
        assert (out / "tinyalgo" / name).read_text(encoding="utf-8") == (PACKAGE / name).read_text(encoding="utf-8")
    for name in ("README.md", "setup.cfg", "pyproject.toml", pathlib.Path("tests", "points.json")):
        assert (out / name).is_file(), name
    assert not (out / "INSTRUCTOR.md").exists() and (pathlib.Path(f"{out}-instructor") / "INSTRUCTOR.md").is_file()
    assert sorted(p.name for p in (out / "tutorials").glob("*.py")) == \
        sorted(p.name for p in (PACKAGE.parent / "tutorials").glob("0[1-6]_*.py"))
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "pip install -e ." in readme
    assert "tinyalgo train --task copy" in readme and "--reference" not in readme


def test_train_in_a_solution_copy_runs_the_solution_bodies(solution_copy, stub_copy, tmp_path):
    argv = [sys.executable, "-m", "tinyalgo", "train", "--task", "copy", "--budget", "2000", "--units", "16",
            "--confirm-length", "0"]
    out = solution_copy[0]
    run = subprocess.run(argv + ["--out", str(tmp_path / "solution")], cwd=out,
                         env=dict(os.environ, PYTHONPATH=str(out)), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert (tmp_path / "solution" / "checkpoint.npz").is_file()
    out = stub_copy[0]
    run = subprocess.run(argv + ["--out", str(tmp_path / "stub")], cwd=out,
                         env=dict(os.environ, PYTHONPATH=str(out)), capture_output=True, text=True,
                         timeout=120)                                       # the stubs are what trains
    assert run.returncode != 0 and "NotImplementedError" in run.stderr, run.stderr[-2000:]


def test_two_assignments_make_one_copy_with_both_stubbed(tmp_path):
    summary = make(["penalty", "curriculum"], tmp_path / "two")
    assert summary["stubbed"] == ["tinyalgo.curriculum:Curriculum.record", "tinyalgo.qlearning:penalty"]
    assert sorted(p.name for p in (tmp_path / "two" / "tests").glob("test_*.py")) == \
        ["test_curriculum.py", "test_penalty.py"]
    assert "raise NotImplementedError" not in (tmp_path / "two" / "tinyalgo" / "cores.py").read_text(encoding="utf-8")


def test_make_refuses_unknown_names_and_a_non_empty_out(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"unknown assignment 'nope'; allowed: layers, "):
        make(["layers", "nope"], tmp_path / "x")
    assert not (tmp_path / "x").exists(), "a refused make writes nothing"
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ValueError, match="already exists and is not an empty directory"):
        make(["layers"], full)
    assert [p.name for p in full.iterdir()] == ["notes.txt"]
    for argv in (["make", "nope", "--out", str(tmp_path / "y")], ["make", "layers", "--out", str(full)]):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("tinyalgo: error: "), err
    make(["layers"], tmp_path / "empty_ok")                   # new directories are fine
    (tmp_path / "empty").mkdir()
    make(["layers"], tmp_path / "empty")                      # and empty ones


def test_cli_list_and_grade_json(solution_copy, tmp_path, capsys):
    assert cli.main(["list"]) == 0
    listing = capsys.readouterr().out
    for name in ASSIGNMENTS:
        assert name in listing
    assert f"{len(ASSIGNMENTS)} assignments" in listing
    out, _, _ = solution_copy
    assert cli.main(["grade", str(out), "--tests", str(out / "tests")]) == 2    # the student's tests: refused
    assert capsys.readouterr().err.startswith("tinyalgo: error: ")
    assert cli.main(["grade", str(out), "--tests", str(instructor(out)), "--json", str(tmp_path / "g.json")]) == 0
    printed = capsys.readouterr().out.splitlines()
    total = sum(a.total for a in ASSIGNMENTS.values())
    assert printed[-1] == f"total: {total}/{total} points"
    saved = json.loads((tmp_path / "g.json").read_text(encoding="utf-8"))
    assert saved["earned"] == saved["total"] == total
    assert len(saved["tests"]) == sum(len(a.points) for a in ASSIGNMENTS.values())
