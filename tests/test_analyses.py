"""The analyses behind figures/README.md, each a ``tinyalgo experiment``
command (tinyalgo.experiments: reverse_first_step, departures, q_margins,
hazard, figure4b; their committed outputs come from the sweeps' final models,
which are not committed): each runs on models trained or built here in
seconds, counts what its docstring says, writes its CSV into --out, and
refuses bad input (missing models, a table without the task) before any work."""
import csv
import json
import math
import shutil

import numpy as np
import pytest

from sweep_helpers import run
from tinyalgo.cli import main
from tinyalgo.cli.main import build_parser
from tinyalgo.controller import Controller, ControllerConfig
from tinyalgo.environment import Environment
from tinyalgo.evaluation import GreedyAgent, fresh_environment, run_instances
from tinyalgo.experiments import departures, figure4b, hazard, q_margins, reverse_first_step
from tinyalgo.experiments.runlogs import pack
from tinyalgo.experiments.table1_report import summarize_directory
from tinyalgo.runs.checkpoint import load_checkpoint, save_checkpoint
from tinyalgo.runs.rundir import checkpoint_path


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def addition_models(out, columns, seed=3):
    env = Environment("addition", batch_size=1, complexity=6)
    for i, column in enumerate(columns):
        save_checkpoint(checkpoint_path(str(out / "runs" / f"addition-{column}-s0")),
                        Controller(ControllerConfig.for_environment(env, "gru", 16),
                                   rng=np.random.default_rng(seed + i)))


def no_work(*args, **kw):
    raise AssertionError("work started before the input was checked")


def test_reverse_first_step_reads_the_appendix_b_reverse_runs_only_packed_or_loose(tmp_path):
    run("appendix-b", tmp_path, [3, 10], tasks=("reverse", "copy"), budget=300)
    run("appendix-c", tmp_path, ["continuous"], tasks=("reverse",), budget=300)        # another reward: left out
    pack(tmp_path)
    for log in (tmp_path / "runs").glob("*.json"):
        log.unlink()                                      # the logs packed, the models still in their folders
    assert main(["experiment", "reverse-first-step", "--out", str(tmp_path)]) == 0
    rows = read_csv(tmp_path / reverse_first_step.CSV)
    assert [(r["run"], r["base"]) for r in rows] == [("reverse-full-b3-s0", "3"), ("reverse-full-s0", "10")]
    assert all(r["instances"] == "20" and 0 <= int(r["write_at_step_1"]) <= int(r["failed"]) <= 20 for r in rows)


def test_reverse_first_step_counts_only_a_write_at_step_1_of_a_failed_instance(tmp_path, monkeypatch):
    run("appendix-b", tmp_path, [3], tasks=("reverse",), budget=300)
    (run_row,) = summarize_directory(tmp_path)

    def departure(step, action, q_action, q_truth):
        return dict(step=step, action=action, truth=1, q_action=q_action, q_truth=q_truth)

    # reverse has 2 moves: a joint action a writes when a // 2 == 1 (2: left + write, 3: right + write)
    found = [dict(solved=False, departure=departure(1, 3, 0.8, 0.3)),      # the trap
             dict(solved=False, departure=departure(1, 2, 0.6, 0.5)),      # the trap, writing while moving left
             dict(solved=False, departure=departure(1, 0, 0.9, 0.1)),      # turns back without writing
             dict(solved=False, departure=departure(2, 3, 0.9, 0.1)),      # writes later
             dict(solved=True, departure=departure(1, 3, 0.9, 0.1)),       # another path that works
             dict(solved=True, departure=None)]
    monkeypatch.setattr(reverse_first_step, "first_departures", lambda *args, **kw: found)
    row = reverse_first_step.first_step_row(run_row, None)
    assert row["failed"] == 4 and row["write_at_step_1"] == 2
    assert (row["q_write_min"], row["q_write_max"], row["q_right_min"], row["q_right_max"]) == (0.6, 0.8, 0.3, 0.5)


def test_the_analyses_of_models_refuse_missing_models_before_any_work(tmp_path, monkeypatch, capsys):
    addition_models(tmp_path, ["full"])
    monkeypatch.setattr(departures, "first_departures", no_work)
    monkeypatch.setattr(reverse_first_step, "first_departures", no_work)
    monkeypatch.setattr(q_margins, "run_instances", no_work)
    for command in (["departures", "--columns", "full", "classic", "--seeds", "1"],
                    ["q-margins", "--columns", "full", "--seeds", "2"]):
        assert main(["experiment", *command, "--out", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "checkpoint.npz is missing: give as --out the sweep folder" in err
    assert main(["experiment", "reverse-first-step", "--out", str(tmp_path)]) == 2
    assert "has no Appendix B reverse runs" in capsys.readouterr().err
    assert main(["experiment", "departures", "--out", str(tmp_path / "none")]) == 2
    assert "--out " + str(tmp_path / "none") + ": no such folder" in capsys.readouterr().err
    assert main(["experiment", "q-margins", "--columns", "classic-400", "--out", str(tmp_path)]) == 2
    assert "argument --columns: invalid choice: 'classic-400'" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.csv"))


def test_q_margins_are_the_greedy_gap_over_the_first_instance_of_each_lane(tmp_path):
    addition_models(tmp_path, ["classic", "full"], seed=5)
    assert main(["experiment", "q-margins", "--out", str(tmp_path), "--columns", "classic", "full", "--seeds", "1",
                 "--complexity", "6", "--instances", "4"]) == 0
    rows = read_csv(tmp_path / q_margins.CSV)
    assert [(r["column"], r["seed"]) for r in rows] == [("classic", "0"), ("full", "0")]
    assert all(0 <= float(r["p01"]) <= float(r["p1"]) <= float(r["median"]) and int(r["steps"]) >= 4 for r in rows)

    # the same margins from every step's Q-values, lane by lane
    controller, _ = load_checkpoint(checkpoint_path(str(tmp_path / "runs" / "addition-full-s0")))

    class Recorder(GreedyAgent):
        def start(self, batch):
            super().start(batch)
            self.steps = []

        def act(self, env, obs, reset):
            out = super().act(env, obs, reset)
            self.steps.append((self.q.copy(), reset.copy()))
            return out

    margin_agent, recorder = q_margins.MarginAgent(controller), Recorder(controller)
    run_instances(margin_agent, fresh_environment("addition", 6, 4, seed=7))
    run_instances(recorder, fresh_environment("addition", 6, 4, seed=7))
    expected, second = [], np.zeros(4, dtype=bool)
    for t, (q, reset) in enumerate(recorder.steps):
        second |= reset & (t > 0)                               # a lane in its second instance
        for lane in np.nonzero(~second)[0]:
            q1, q2 = sorted(q[lane])[-1], sorted(q[lane])[-2]
            expected.append((q1 - q2) / abs(q1))
    assert np.concatenate(margin_agent.margins) == pytest.approx(expected, rel=1e-12)
    summary = q_margins.column_summary([dict(column="full", median=m, p1=m / 10, below_1pct=b)
                                        for m, b in ((0.2, 0.0), (0.4, 0.5), (0.9, 0.1))])
    assert summary == {"full": (0.4, pytest.approx(0.04), pytest.approx(0.2))}


def test_departures_names_the_first_wrong_decision_of_every_failed_instance(tmp_path, monkeypatch):
    addition_models(tmp_path, ["gamma-0.95", "full"])
    assert main(["experiment", "departures", "--out", str(tmp_path), "--columns", "gamma-0.95", "full",
                 "--seeds", "1", "--complexity", "6", "--instances", "8"]) == 0
    rows = read_csv(tmp_path / departures.CSV)
    for column, discount in (("gamma-0.95", "0.95"), ("full", "dynamic")):
        mine = [r for r in rows if r["column"] == column]
        assert mine and all(r["discount"] == discount and r["instances"] == "8" for r in mine)
        assert sum(int(r["count"]) for r in mine) == int(mine[0]["failed"]) > 0          # an untrained model fails
    assert all(r["departure"] == "none" or " -> " in r["departure"] for r in rows)

    found = [dict(solved=False, departure=dict(truth=2, action=7)), dict(solved=False, departure=None),
             dict(solved=True, departure=dict(truth=0, action=1))]                # a solved one is not counted
    monkeypatch.setattr(departures, "first_departures", lambda *args, **kw: found)
    models = departures.addition_models(str(tmp_path), ["gamma-0.95", "full"], [0])
    rows = departures.departures(models, 6, 3, log=lambda s: None)
    assert [(r["column"], r["departure"], r["count"], r["failed"]) for r in rows] == [
        ("gamma-0.95", "down -> up+write", 1, 2), ("gamma-0.95", "none", 1, 2),
        ("full", "down -> up+write", 1, 2), ("full", "none", 1, 2)]
    totals = departures.by_discount(rows)
    assert totals["constant"][:2] == (["gamma-0.95"], 2) and totals["dynamic"][:2] == (["full"], 2)
    assert dict(totals["dynamic"][2]) == {"down -> up+write": 1, "none": 1}


@pytest.mark.slow
def test_figure4b_trains_extracts_and_writes_its_figure_and_numbers(tmp_path):
    assert main(["experiment", "figure4b", "--out", str(tmp_path), "--budget", "3000"]) == 0
    result = json.loads((tmp_path / "figure4b.json").read_text())
    assert (tmp_path / "figure4b.png").stat().st_size > 10_000
    assert result["training"]["budget"] == 3000 and result["seed"] == 0 and result["max_training_digits"] == 2
    assert set(result["network_solved"]) == {str(d) for d in figure4b.DIGITS}
    assert set(result["machine_alone_solved"]) == {"reduced", "minimal"}
    counts = np.array(result["moving_right_clusters"]["counts"])
    assert counts[:, 0].sum() == figure4b.INSTANCES * 12          # every recorded instance's first state, 1-6 digits
    assert (np.diff(counts.sum(axis=0)) <= 0).all()               # fewer instances are still moving right each step
    for found in result["network_first_departures"].values():
        assert sum(found.values()) == figure4b.INSTANCES


def test_hazard_tells_a_fixed_error_rate_from_one_that_grows_with_length(tmp_path, capsys):
    def points(task, column, seed, rate):
        return [dict(task=task, column=column, seed=seed, complexity=n, instances=50, solved=rate(n))
                for n in (100, 1000, 10000, 20000)]

    fixed = points("addition", "gamma-0.95", 0, lambda n: math.exp(-2e-5 * n))   # h = 2 per 10^5 at every length
    drifting = points("addition", "full", 0, lambda n: math.exp(-(n / 10000) ** 2))   # h grows with n
    never = points("addition", "dynamic", 1, lambda n: 0.0)                      # solves none: half an instance
    other = points("addition", "classic-400", 0, lambda n: 0.5)                  # not a 200-unit column
    three = points("addition3", "classic", 2, lambda n: 0.5)
    with open(tmp_path / hazard.FIGURE, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(fixed[0]))
        writer.writeheader()
        writer.writerows(fixed + drifting + never + other + three)
    assert main(["experiment", "hazard", "--out", str(tmp_path)]) == 0            # every task of the figure
    rows = read_csv(tmp_path / hazard.CSV)
    assert [(r["task"], r["column"], r["kind"]) for r in rows] == [
        ("addition", "dynamic", "dynamic"), ("addition", "full", "dynamic"), ("addition", "gamma-0.95", "constant"),
        ("addition3", "classic", "constant")]
    assert [float(rows[2][f"h_{n}"]) for n in (1000, 10000, 20000)] == [2.0, 2.0, 2.0]
    assert float(rows[0]["h_20000"]) == pytest.approx(-math.log(0.01) / 20000 * 1e5, abs=1e-3)

    mine = hazard.hazard_table(str(tmp_path), ["addition"])
    assert hazard.growth([mine[2]], 20000) == 1.0 and hazard.growth([mine[1]], 20000) == pytest.approx(20, rel=1e-3)
    summary = hazard.summary(mine)
    assert set(summary) == {("addition", "constant"), ("addition", "dynamic")}
    runs, levels, growth = summary["addition", "constant"]
    assert runs == 1 and levels == {1000: 2.0, 10000: 2.0, 20000: 2.0} and growth == {10000: 1.0, 20000: 1.0}
    assert summary["addition", "dynamic"][0] == 2

    capsys.readouterr()
    assert main(["experiment", "hazard", "--tasks", "walk", "--out", str(tmp_path)]) == 2
    assert "has no walk runs of Table 1's 200-unit columns" in capsys.readouterr().err
    (tmp_path / hazard.FIGURE).write_text("a,b\n1,2\n")
    assert main(["experiment", "hazard", "--out", str(tmp_path)]) == 2
    assert "is not a Figure 5 table" in capsys.readouterr().err


def test_compact_packs_a_sweep_folder_and_refuses_one_without_logs(tmp_path, capsys):
    run("appendix-b", tmp_path / "sweep", [10], budget=300)
    assert main(["experiment", "compact", "--out", str(tmp_path / "sweep")]) == 0
    rows = summarize_directory(tmp_path / "sweep")
    shutil.rmtree(tmp_path / "sweep" / "runs")
    assert summarize_directory(tmp_path / "sweep") == rows and len(rows) == 1
    capsys.readouterr()
    assert main(["experiment", "compact", "--out", str(tmp_path / "empty")]) == 2
    assert ": no such folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["experiment", "compact", "--out", str(tmp_path / "empty")]) == 2
    assert "no run logs in" in capsys.readouterr().err
    assert main(["experiment", "compact"]) == 2                                 # --out is required


def test_every_experiment_option_has_help_with_its_default(capsys):
    experiment = build_parser()._subparsers._group_actions[0].choices["experiment"]
    names = experiment._subparsers._group_actions[0].choices
    assert {"table1", "figure3", "figure5", "appendix-b", "appendix-c", "compact", "departures", "q-margins", "hazard",
            "reverse-first-step", "automata", "figure4b", "sb3-example", "certified", "aalpy"} == set(names)
    for name, parser in names.items():
        for action in parser._actions:
            if action.option_strings and action.dest != "help":
                assert action.help and ("default" in action.help or action.required and "required" in action.help), \
                    (name, action.dest)
        assert main(["experiment", name, "--help"]) == 0
