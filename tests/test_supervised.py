"""The supervised setting learns and generalises beyond its training lengths."""
import numpy as np

from tinyalgo.evaluation import GreedyAgent, evaluate_complexity
from tinyalgo.supervised import SupervisedConfig, train_supervised


def test_ff_learns_copy_and_generalises():
    cfg = SupervisedConfig(task="copy", controller="ff", units=32, seed=0, target=200, budget=400_000,
                           validate_every=5, val_instances=20)
    lines = []
    controller, report = train_supervised(cfg, log=lines.append)
    assert report["solved_target"], "\n".join(lines[-10:])
    trained_max = max(h["level"] for h in report["history"])
    row = evaluate_complexity(GreedyAgent(controller), "copy", 300, instances=20, seed=123)
    assert trained_max < 300 and row["solved"] == 1.0


def test_curriculum_history_only_advances_after_perfect_scores():
    cfg = SupervisedConfig(task="reverse", controller="ff", units=32, seed=1, target=100, budget=300_000,
                           validate_every=5, val_instances=20)
    _, report = train_supervised(cfg, log=lambda s: None)
    levels = [h["level"] for h in report["history"]]
    for before, after, h in zip(levels, levels[1:], report["history"]):
        assert after == before + (4 if h["advanced"] else 0)
        assert h["advanced"] == (h["solved"] == 1.0)
    assert np.all(np.diff(levels) >= 0)
