"""The supervised setting learns and generalises beyond its training lengths."""
import numpy as np

from tinyalgo.evaluation import GreedyAgent, evaluate_complexity
from tinyalgo.runs.config import SupervisedConfig
from tinyalgo.supervised import train_supervised


def test_ff_learns_copy_and_generalises():
    cfg = SupervisedConfig(task="copy", controller="ff", units=32, seed=0, target=200, budget=400_000,
                           validate_every=5, val_instances=20)
    lines = []
    controller, report = train_supervised(cfg, log=lines.append)
    assert report["solved_target"], "\n".join(lines[-10:])
    trained_max = max(h["level"] for h in report["history"])
    row = evaluate_complexity(GreedyAgent(controller), "copy", 300, instances=20, seed=123)
    assert trained_max < 300 and row["solved"] == 1.0


def test_the_curriculum_advances_by_4_after_each_perfect_validation():
    """Paper section 5: start at complexity 6, add 4 once the validation is
    100% correct, stop once the target complexity is solved.  A small GRU on
    reverse solves short instances before it generalises to length 1000, so
    the curriculum has to advance at least twice, each time from a level it
    first failed; a run is a few thousand characters (well under a second)."""
    cfg = SupervisedConfig(task="reverse", controller="gru", units=16, seed=0, target=1000, budget=60_000,
                           validate_every=5, val_instances=20)
    _, report = train_supervised(cfg, log=lambda s: None)
    history = report["history"]
    advances = [h for h in history if h["advanced"]]
    assert len(advances) >= 2, history
    level, first = 6, {}
    for h in history:
        assert h["level"] == level                       # the level moves only on an advance, by 4
        assert h["advanced"] == (h["solved"] == 1.0)     # every perfect validation advances, nothing else does
        first.setdefault(level, h["solved"])
        if h["advanced"]:
            level += 4
    assert report["final_level"] == level == 6 + 4 * len(advances)
    assert first[6] < 0.5 and all(h["target_solved"] < 1.0 for h in advances[:-1])   # learned, not given
    assert report["solved_target"] and history[-1]["advanced"] and history[-1]["target_solved"] == 1.0
    assert np.all(np.diff([h["chars"] for h in history]) > 0) and report["chars"] < cfg.budget
