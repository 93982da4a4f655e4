"""Options are declared once (tinyalgo.runs.options): the checks, the command-line
flags, the sweep's jobs and its CSV rows all come from the declarations, and
runs saved by an earlier tinyalgo (tests/fixtures) still resume, evaluate and
summarize."""
import argparse
import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from tinyalgo.runs.checkpoint import load_checkpoint
from tinyalgo.cli import main
from tinyalgo.cli.main import build_parser
from tinyalgo.experiments import table1, table1_report
from tinyalgo.runs.options import RETIRED, add_arguments, from_args, option, overrides_from_args, sweep_options
from tinyalgo.runs.config import QConfig
from tinyalgo.runs.config import SupervisedConfig

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass
class Extended(QConfig):
    """QConfig with one more option, declared as any option is."""

    wobble: int = option(3, "a throwaway option", minimum=0, metavar="W", sweep=True)


def test_one_declaration_makes_the_check_the_flags_the_job_and_the_csv_column(monkeypatch):
    with pytest.raises(ValueError, match="wobble must be at least 0; got -1"):
        Extended(wobble=-1)
    train = argparse.ArgumentParser()
    add_arguments(train, {"Q-learning": Extended})
    assert from_args(Extended, train.parse_args(["--wobble", "5"])).wobble == 5
    assert from_args(Extended, train.parse_args([])).wobble == 3
    assert "a throwaway option (default 3)" in train.format_help()
    experiment = argparse.ArgumentParser()
    add_arguments(experiment, {"table1": Extended}, sweep=True)
    assert overrides_from_args(Extended, experiment.parse_args(["--wobble", "7"])) == {"wobble": 7}
    assert "--units" not in experiment.format_help()                    # not a sweep option
    monkeypatch.setattr(table1, "QConfig", Extended)
    monkeypatch.setattr(table1_report, "QConfig", Extended)
    job = table1.table1_jobs(["copy"], ["full"], [0], 1000, wobble=7)[0]
    cfg = job.config()
    assert isinstance(cfg, Extended) and cfg.wobble == 7
    report = json.loads((FIXTURES / "table1" / "runs" / "copy-full-s0.json").read_text())
    row = table1_report.summarize_run("copy", "full", 0, dict(report, config=asdict(cfg)))
    assert row["wobble"] == 7
    notes = table1_report.option_notes([row, dict(row, task="walk", wobble=3)])
    assert notes == ["- ``--wobble``, a throwaway option (default 3): 3 (walk); 7 (copy)."]


def test_the_train_flags_keep_their_names_and_defaults():
    parse = build_parser().parse_args
    assert from_args(QConfig, parse(["train"])) == QConfig()
    assert from_args(SupervisedConfig, parse(["train-supervised"])) == SupervisedConfig(task="addition")
    given = dict(controller="lstm", units=3, layers=2, seed=4, budget=100, dtype="float64",
                 discount="dynamic", gamma=0.9, q="one-step", penalty=False, reward="discretized",
                 exploration="release", greedy_lanes=2, solved_lr=0.03, solved_lr_after="pass", confirm_length=0,
                 confirm_passes=2, keep_best=False)
    argv = ["train", "--controller", "lstm", "--units", "3", "--layers", "2", "--seed", "4", "--budget", "100",
            "--dtype", "float64", "--gamma", "0.9", "--q",
            "one-step", "--no-penalty", "--reward", "discretized", "--exploration", "release", "--greedy-lanes", "2",
            "--solved-lr", "0.03", "--solved-lr-after", "pass", "--confirm-length", "0", "--confirm-passes", "2",
            "--no-keep-best"]
    cfg = from_args(QConfig, parse(argv))
    assert {k: getattr(cfg, k) for k in given} == given
    assert from_args(SupervisedConfig, parse(["train-supervised", "--target", "50"])).target == 50
    ex = parse(["experiment", "table1", "--gamma", "0.9", "--greedy-lanes", "5", "--confirm-length", "0",
                "--confirm-passes", "2", "--solved-lr", "0.03", "--solved-lr-after", "pass"])
    assert overrides_from_args(QConfig, ex) == dict(gamma=0.9, greedy_lanes=5, confirm_length=0, confirm_passes=2,
                                                   solved_lr=0.03, solved_lr_after="pass")
    assert overrides_from_args(QConfig, parse(["experiment", "table1"])) == {}


def test_options_that_changed_nothing_are_read_back_and_ignored():
    for name in RETIRED:
        assert not hasattr(QConfig(), name) and not hasattr(SupervisedConfig(), name)
        assert name not in sweep_options(QConfig)
    saved = dict(asdict(QConfig(task="copy")), reference=False, threads=2)
    assert QConfig.from_saved(saved) == QConfig(task="copy")


def test_saved_configs_read_back_with_the_values_older_runs_had():
    cfg = QConfig(task="copy", greedy_lanes=3, report_lengths=(20,))
    assert QConfig.from_saved(json.loads(json.dumps(asdict(cfg)))) == cfg
    _, extra = load_checkpoint(FIXTURES / "q-copy-old" / "checkpoint.npz")
    old = QConfig.from_saved(extra["config"])
    assert (old.exploration, old.confirm_length, old.confirm_passes, old.keep_best, old.solved_lr_after) == \
        ("release", 0, 1, False, "solve")
    assert old.greedy_lanes == 0 and old.units == 16
    with pytest.raises(ValueError, match="saved config has options this QConfig does not know: wobble"):
        QConfig.from_saved(dict(asdict(cfg), wobble=1))


@pytest.mark.parametrize("run", ["q-copy", "q-copy-old"])
def test_an_earlier_run_directory_resumes_and_evaluates(tmp_path, run, capsys):
    out = tmp_path / run
    shutil.copytree(FIXTURES / run, out)
    _, saved = load_checkpoint(out / "checkpoint.npz")
    assert main(["evaluate", str(out / "checkpoint.npz"), "--complexities", "8", "--instances", "3"]) == 0
    assert "copy (base 10), GRU-16" in capsys.readouterr().out
    assert main(["train", "--resume", "--out", str(out), "--budget", "6000"]) == 0
    assert f"resuming {out}: complexity 6, 3080 characters trained" in capsys.readouterr().out
    _, extra = load_checkpoint(out / "checkpoint.npz")
    assert extra["run"]["chars"] >= 6000 and extra["config"]["budget"] == 6000
    expected = QConfig.from_saved(saved["config"])
    assert QConfig.from_saved(extra["config"]) == QConfig(**dict(asdict(expected), budget=6000))


def test_earlier_sweep_logs_give_their_rows():
    rows = table1_report.summarize_directory(FIXTURES / "table1")
    earlier = json.loads((FIXTURES / "table1" / "rows.json").read_text())
    assert [{k: r[k] for k in e} for r, e in zip(rows, earlier)] == earlier
    assert [(r["confirm_length"], r["confirm_passes"]) for r in rows] == [(1000, 5), (0, 1)]
    assert all(r["gamma"] == 1.0 for r in rows)
