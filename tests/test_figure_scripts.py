"""The analysis scripts under figures/ (their committed outputs come from the
sweeps' final models, which are not committed): each runs on models trained
or built here in seconds, counts what its docstring says, and writes its
rows where it is told to."""
import csv
import importlib.util
import json
import math
import pathlib

import numpy as np
import pytest

from sweep_helpers import run
from tinyalgo.runs.checkpoint import load_checkpoint, save_checkpoint
from tinyalgo.controller import Controller, ControllerConfig
from tinyalgo.environment import Environment
from tinyalgo.evaluation import GreedyAgent, fresh_environment, run_instances
from tinyalgo.runs.rundir import checkpoint_path

FIGURES = pathlib.Path(__file__).resolve().parent.parent / "figures"


def script(path):
    """The script ``figures/<path>`` as a module (its ``main`` not run)."""
    spec = importlib.util.spec_from_file_location(pathlib.Path(path).stem, FIGURES / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_reverse_first_step_reads_the_appendix_b_reverse_runs_only(tmp_path):
    run("appendix-b", tmp_path, [3, 10], tasks=("reverse", "copy"), budget=300)
    run("appendix-c", tmp_path, ["continuous"], tasks=("reverse",), budget=300)        # another reward: left out
    rows = script("appendix/reverse_first_step.py").main(["--out", str(tmp_path), "--csv", str(tmp_path / "r.csv")])
    assert [(r["run"], r["base"]) for r in rows] == [("reverse-full-b3-s0", 3), ("reverse-full-s0", 10)]
    assert all(r["instances"] == 20 and 0 <= r["write_at_step_1"] <= r["failed"] <= 20 for r in rows)
    assert [r["run"] for r in read_csv(tmp_path / "r.csv")] == [r["run"] for r in rows]


def test_reverse_first_step_counts_only_a_write_at_step_1_of_a_failed_instance(tmp_path, monkeypatch):
    run("appendix-b", tmp_path, [3], tasks=("reverse",), budget=300)
    module = script("appendix/reverse_first_step.py")

    def departure(step, action, q_action, q_truth):
        return dict(step=step, action=action, truth=1, q_action=q_action, q_truth=q_truth)

    # reverse has 2 moves: a joint action a writes when a // 2 == 1 (2: left + write, 3: right + write)
    found = [dict(solved=False, departure=departure(1, 3, 0.8, 0.3)),      # the trap
             dict(solved=False, departure=departure(1, 2, 0.6, 0.5)),      # the trap, writing while moving left
             dict(solved=False, departure=departure(1, 0, 0.9, 0.1)),      # turns back without writing
             dict(solved=False, departure=departure(2, 3, 0.9, 0.1)),      # writes later
             dict(solved=True, departure=departure(1, 3, 0.9, 0.1)),       # another path that works
             dict(solved=True, departure=None)]
    monkeypatch.setattr(module, "first_departures", lambda *args, **kw: found)
    (row,) = module.main(["--out", str(tmp_path), "--csv", str(tmp_path / "r.csv")])
    assert row["failed"] == 4 and row["write_at_step_1"] == 2
    assert (row["q_write_min"], row["q_write_max"], row["q_right_min"], row["q_right_max"]) == (0.6, 0.8, 0.3, 0.5)


def test_q_margins_are_the_greedy_gap_over_the_first_instance_of_each_lane(tmp_path):
    env = Environment("addition", batch_size=1, complexity=6)
    for column in ("classic", "full"):
        save_checkpoint(checkpoint_path(str(tmp_path / "runs" / f"addition-{column}-s0")),
                        Controller(ControllerConfig.for_environment(env, "gru", 16), rng=np.random.default_rng(len(column))))
    module = script("figure5_ablations/q_margins.py")
    rows = module.main(["--out", str(tmp_path), "--columns", "classic", "full", "--seeds", "1", "--complexity", "6",
                        "--instances", "4", "--csv", str(tmp_path / "m.csv")])
    assert [(r["column"], r["seed"]) for r in rows] == [("classic", 0), ("full", 0)]
    assert all(0 <= r["p01"] <= r["p1"] <= r["median"] and r["steps"] >= 4 for r in rows)
    assert [r["column"] for r in read_csv(tmp_path / "m.csv")] == ["classic", "full"]

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

    margin_agent, recorder = module.MarginAgent(controller), Recorder(controller)
    run_instances(margin_agent, fresh_environment("addition", 6, 4, seed=7))
    run_instances(recorder, fresh_environment("addition", 6, 4, seed=7))
    expected, second = [], np.zeros(4, dtype=bool)
    for t, (q, reset) in enumerate(recorder.steps):
        second |= reset & (t > 0)                               # a lane in its second instance
        for lane in np.nonzero(~second)[0]:
            q1, q2 = sorted(q[lane])[-1], sorted(q[lane])[-2]
            expected.append((q1 - q2) / abs(q1))
    assert np.concatenate(margin_agent.margins) == pytest.approx(expected, rel=1e-12)


def test_departures_names_the_first_wrong_decision_of_every_failed_instance(tmp_path, monkeypatch):
    env = Environment("addition", batch_size=1, complexity=6)
    for column in ("gamma-0.95", "full"):
        save_checkpoint(checkpoint_path(str(tmp_path / "runs" / f"addition-{column}-s0")),
                        Controller(ControllerConfig.for_environment(env, "gru", 16), rng=np.random.default_rng(3)))
    module = script("figure5_ablations/departures.py")
    rows = module.main(["--out", str(tmp_path), "--columns", "gamma-0.95", "full", "--seeds", "1",
                        "--complexity", "6", "--instances", "8", "--csv", str(tmp_path / "d.csv")])
    for column, discount in (("gamma-0.95", "0.95"), ("full", "dynamic")):
        mine = [r for r in rows if r["column"] == column]
        assert mine and all(r["discount"] == discount and r["instances"] == 8 for r in mine)
        assert sum(r["count"] for r in mine) == mine[0]["failed"] > 0           # an untrained model fails
    assert all(r["departure"] == "none" or " -> " in r["departure"] for r in rows)
    assert len(read_csv(tmp_path / "d.csv")) == len(rows)

    found = [dict(solved=False, departure=dict(truth=2, action=7)), dict(solved=False, departure=None),
             dict(solved=True, departure=dict(truth=0, action=1))]                # a solved one is not counted
    monkeypatch.setattr(module, "first_departures", lambda *args, **kw: found)
    rows = module.main(["--out", str(tmp_path), "--columns", "full", "--seeds", "1", "--csv", str(tmp_path / "d.csv")])
    assert [(r["departure"], r["count"], r["failed"]) for r in rows] == [("down -> up+write", 1, 2), ("none", 1, 2)]


def test_figure4b_trains_extracts_and_writes_its_figure_and_numbers(tmp_path):
    module = script("automata/figure4b.py")
    result = module.main(["--out", str(tmp_path), "--budget", "3000"])
    assert json.loads((tmp_path / "figure4b.json").read_text()) == json.loads(json.dumps(result))
    assert (tmp_path / "figure4b.png").stat().st_size > 10_000
    assert result["training"]["budget"] == 3000
    assert set(result["network_solved"]) == {str(d) for d in module.DIGITS}
    assert set(result["machine_alone_solved"]) == {"reduced", "minimal"}
    counts = np.array(result["moving_right_clusters"]["counts"])
    assert counts[:, 0].sum() == module.INSTANCES * 12          # every recorded instance's first state, 1-6 digits
    assert (np.diff(counts.sum(axis=0)) <= 0).all()             # fewer instances are still moving right each step
    for departures in result["network_first_departures"].values():
        assert sum(departures.values()) == module.INSTANCES


def test_hazard_tells_a_fixed_error_rate_from_one_that_grows_with_length(tmp_path, capsys):
    def points(column, seed, rate):
        return [dict(task="addition", column=column, seed=seed, complexity=n, instances=50, solved=rate(n))
                for n in (100, 1000, 10000, 20000)]

    fixed = points("gamma-0.95", 0, lambda n: math.exp(-2e-5 * n))              # h = 2 per 10^5 at every length
    drifting = points("full", 0, lambda n: math.exp(-(n / 10000) ** 2))          # h grows with n
    never = points("dynamic", 1, lambda n: 0.0)                                 # solves none: half an instance
    other = points("classic-400", 0, lambda n: 0.5)                             # not a discount column
    figure = tmp_path / "figure5.csv"
    with open(figure, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(fixed[0]))
        writer.writeheader()
        writer.writerows(fixed + drifting + never + other)
    module = script("figure5_ablations/hazard.py")
    rows = module.main(["--figure", str(figure), "--csv", str(tmp_path / "h.csv")])
    assert [(r["column"], r["kind"]) for r in rows] == [("dynamic", "dynamic"), ("full", "dynamic"),
                                                       ("gamma-0.95", "constant")]
    assert [rows[2][f"h_{n}"] for n in (1000, 10000, 20000)] == [2.0, 2.0, 2.0]
    assert rows[0]["h_20000"] == pytest.approx(-math.log(0.01) / 20000 * 1e5, abs=1e-3)
    assert module.growth([rows[2]], 20000) == 1.0 and module.growth([rows[1]], 20000) == pytest.approx(20, rel=1e-3)
    said = capsys.readouterr().out
    assert "constant discount, 1 runs: median h per 10^5 at 1,000: 2.0, 10,000: 2.0, 20,000: 2.0" in said
    assert [r["column"] for r in read_csv(tmp_path / "h.csv")] == ["dynamic", "full", "gamma-0.95"]
    with pytest.raises(SystemExit):
        module.main(["--figure", str(figure), "--task", "walk", "--csv", str(tmp_path / "w.csv")])
