"""The SB3 worked example (tinyalgo.experiments.sb3_example, figures/sb3_example)
with budgets of seconds: every (task, method) trains, is tested at C, 10 C and
100 C, and its rows reach results.csv.  Needs the sb3 extra: skips without it
(RecurrentPPO: skips without sb3-contrib)."""
import csv
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.sb3, pytest.mark.slow]
pytest.importorskip("gymnasium")
pytest.importorskip("stable_baselines3")

from tinyalgo.experiments import sb3_example  # noqa: E402


def methods():
    try:
        import sb3_contrib  # noqa: F401
    except ImportError:
        return ("ppo", "q")
    return ("ppo", "recurrent_ppo", "q")


def test_rows_at_the_three_lengths(tmp_path):
    chosen = methods()
    rows = sb3_example.run_example(tasks=("copy", "reverse"), methods=chosen, steps=64, complexity=3,
                                   q_budget=2000, instances=4, n_envs=4, n_steps=16, log=lambda *a: None)
    assert len(rows) == 2 * len(chosen) * len(sb3_example.FACTORS)
    for row in rows:
        assert set(row) == set(sb3_example.COLUMNS)
        assert 0.0 <= row["solved"] <= row["char_accuracy"] <= 1.0     # equal lengths: solved => all chars right
        assert row["instances"] == 4
        assert row["trained_steps"] >= (64 if row["method"] != "q" else 1)
    for task in ("copy", "reverse"):
        for method in chosen:
            tested = [r["test_complexity"] for r in rows if r["task"] == task and r["method"] == method]
            assert tested == [3, 30, 300]
    path = sb3_example.write_rows(rows, str(tmp_path))
    with open(path, encoding="utf-8", newline="") as f:
        read = list(csv.DictReader(f))
    assert len(read) == len(rows) and tuple(read[0]) == sb3_example.COLUMNS


def test_sb3_agent_acts_as_the_ground_truth_would_be_scored():
    """A policy that always writes 'move right, write the symbol read' solves copy: the gym action
    (move, write, symbol) reaches the batched Environment as its joint action and symbol."""
    import numpy as np

    from tinyalgo.evaluation import evaluate_complexity
    from tinyalgo.tasks import make_task

    class Copier:
        def predict(self, obs, state=None, episode_start=None, deterministic=True):
            return np.stack([np.ones(len(obs), int), np.ones(len(obs), int), obs[:, 0]], axis=1), None

    task = make_task("copy")
    r = evaluate_complexity(sb3_example.SB3Agent(Copier(), task.n_moves), task, 20, 5)
    assert r["solved"] == 1.0 and r["char_accuracy"] == 1.0


def test_command_refuses_bad_input_and_a_missing_extra(tmp_path):
    def run(*args, prelude=""):
        code = (f"import sys; {prelude}sys.argv = ['tinyalgo'] + {list(args)!r}\n"
                "from tinyalgo.cli import main; sys.exit(main())")
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)

    out = str(tmp_path / "out")
    bad = run("experiment", "sb3-example", "--tasks", "walk", "--out", out)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
    bad = run("experiment", "sb3-example", "--steps", "0", "--out", out)
    assert bad.returncode == 2
    gone = run("experiment", "sb3-example", "--out", out, prelude="sys.modules['stable_baselines3'] = None; ")
    assert gone.returncode == 2 and "stable-baselines3, which is not installed" in gone.stderr
    assert len(gone.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
