"""The command line: ``tinyalgo show`` and one-line errors with status 2."""
import re
import subprocess
import sys

import pytest

from tinyalgo.cli import main


def test_show_steps_through_the_ground_truth(capsys):
    assert main(["show", "--task", "addition", "--complexity", "12", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "frame 1/" in out and "episode ended: all written, 7 of 7 outputs right" in out


def test_show_step_mode_quits_on_q(monkeypatch, capsys):
    monkeypatch.setattr("builtins.input", lambda prompt="": "q")
    assert main(["show", "--task", "copy", "--complexity", "5", "--step"]) == 0
    assert "frame 2/" not in capsys.readouterr().out


@pytest.mark.parametrize("argv,message", [
    (["show", "--task", "division"], "unknown task 'division'"),
    (["show", "--base", "12"], "base must be an integer from 2 to 10"),
    (["show", "--task", "multiplication", "--base", "2"], "needs a base of at least 3"),
    (["show", "--task", "reverse", "--complexity", "-1"], "complexity must be an integer of at least 2"),
    (["train", "--greedy-lanes", "20", "--budget", "0"], "greedy_lanes must be 0..19 (at least one lane explores)"),
])
def test_errors_are_one_line_with_status_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_python_dash_m_runs_without_traceback():
    done = subprocess.run([sys.executable, "-m", "tinyalgo", "show", "--task", "nope"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr and "unknown task" in done.stderr


def test_train_then_resume_then_evaluate(tmp_path, capsys):
    out = str(tmp_path / "run")
    assert main(["train", "--task", "copy", "--units", "16", "--budget", "4000", "--out", out]) == 0
    assert (tmp_path / "run" / "checkpoint.npz").exists() and (tmp_path / "run" / "log.json").exists()
    assert main(["train", "--resume", "--out", out, "--budget", "8000"]) == 0
    text = capsys.readouterr().out
    assert "resuming" in text and "characters" in text
    assert main(["evaluate", out + "/checkpoint.npz", "--complexities", "10", "--instances", "5",
                 "--json", str(tmp_path / "e.json")]) == 0
    assert (tmp_path / "e.json").exists()
    capsys.readouterr()
    assert main(["evaluate", out + "/checkpoint.npz", "--complexities", "10", "--instances", "5", "--departures"]) == 0
    text = capsys.readouterr().out        # a barely trained copy model: failed instances, each with its first departure
    check_departures(text, complexity=10, instances=5)
    assert main(["evaluate", out + "/checkpoint.npz", "--complexities", "10", "12", "--epsilon", "0.05"]) == 0
    text = capsys.readouterr().out        # the greedy lines, then the same complexities acting as training lanes
    assert "acting as a training lane (epsilon 0.05)" in text and text.count("complexity     1") == 4
    assert main(["evaluate", out + "/checkpoint.npz", "--epsilon", "1.5"]) == 2
    captured = capsys.readouterr()
    assert "epsilon must be in [0, 1]; got 1.5" in captured.err and captured.out == ""


DEPARTURE = re.compile(r"left them at step (\d+) \(output (\d+)\): (\S+) \(Q (-?\d+\.\d+)\)"
                       r" instead of (\S+) \(Q (-?\d+\.\d+)\)")


def check_departures(text: str, complexity: int, instances: int) -> None:
    """``evaluate --departures`` on copy: the instances the greedy line counts
    as failed (at least one), each listed once with how it ended and the
    greedy action it took instead of copy's ground truth (right+write)."""
    solved = float(re.search(rf"complexity +{complexity}: solved +([\d.]+)%", text)[1]) / 100
    failed = int(re.search(rf"complexity {complexity}: (\d+) of {instances} failed;", text)[1])
    assert failed == round(instances * (1 - solved)) and failed >= 1, text
    lines = re.findall(r"^  instance +(\d+): ([a-z ]+); (.*)$", text, flags=re.M)
    assert len(lines) == failed and len({lane for lane, _, _ in lines}) == failed, text
    for lane, reason, where in lines:
        assert 0 <= int(lane) < instances and reason in ("wrong write", "timeout"), where
        if where != "never left the ground-truth actions":
            step, output, action, q_action, truth, q_truth = DEPARTURE.fullmatch(where).groups()
            assert truth == "right+write" and action != truth, where     # copy's ground truth, every step
            assert int(output) == int(step) < complexity, where           # each step before it wrote one output
            assert float(q_action) >= float(q_truth), where               # greedy: the taken action's Q is the max


def test_resume_of_a_missing_run_is_one_line(tmp_path, capsys):
    assert main(["train", "--resume", "--out", str(tmp_path / "none")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_resume_loads_the_best_tested_model(tmp_path, capsys):
    """A run's best tested model (best.npz) comes back on --resume; without
    the file the run says so and forgets it."""
    from tinyalgo.checkpoint import load_checkpoint, save_checkpoint
    out = tmp_path / "run"
    assert main(["train", "--task", "copy", "--units", "16", "--budget", "4000", "--out", str(out)]) == 0
    controller, extra = load_checkpoint(out / "checkpoint.npz")
    extra["run"]["best"] = dict(solved=0.9, seconds=1.0, chars=2000, level=6)
    save_checkpoint(out / "checkpoint.npz", controller, extra)
    save_checkpoint(out / "best.npz", controller, dict(mode="qlearning-best", best=dict(extra["run"]["best"])))
    capsys.readouterr()
    assert main(["train", "--resume", "--out", str(out), "--budget", "6000"]) == 0
    assert "is missing" not in capsys.readouterr().out
    (out / "best.npz").unlink()
    save_checkpoint(out / "checkpoint.npz", controller, extra)
    assert main(["train", "--resume", "--out", str(out), "--budget", "8000"]) == 0
    assert "best.npz is missing: the run forgets its best tested model" in capsys.readouterr().out


def test_the_best_tested_model_can_be_evaluated(tmp_path, capsys):
    """best.npz says which task and configuration it comes from, as checkpoint.npz does."""
    out = tmp_path / "run"
    assert main(["train", "--task", "copy", "--units", "24", "--budget", "300000", "--confirm-length", "200",
                 "--confirm-passes", "3", "--out", str(out)]) == 0
    assert (out / "best.npz").exists()
    capsys.readouterr()
    assert main(["evaluate", str(out / "best.npz"), "--complexities", "20", "--instances", "5"]) == 0
    assert "best.npz: copy (base 10), GRU-24" in capsys.readouterr().out
