"""The Q-learning loop computes what it computed before it was rewritten to
read like section 6: fixed-seed runs on both paths, with every option beyond
the paper switched on in some of them, end with the same parameters (a
SHA-256 of every array), characters, updates and curriculum as recorded by
the earlier loop (tests/fixtures/q_runs.json)."""
import hashlib
import json
import pathlib

import numpy as np
import pytest

from tinyalgo.qtraining import QTrainer
from tinyalgo.runs.config import QConfig

FIXTURE = json.loads((pathlib.Path(__file__).parent / "fixtures" / "q_runs.json").read_text(encoding="utf-8"))


def digest(params: dict) -> str:
    h = hashlib.sha256()
    for name in sorted(params):
        h.update(name.encode())
        h.update(np.ascontiguousarray(params[name]).tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("run", sorted(FIXTURE["runs"]))
def test_a_fixed_seed_run_ends_where_the_earlier_loop_ended(run):
    case, path = run.rsplit("-", 1)
    cfg = QConfig(**FIXTURE["cases"][case], reference=path == "reference")
    trainer = QTrainer(cfg, log=lambda line: None)
    s = trainer.run()
    got = dict(params=digest(trainer.controller.params), chars=s.chars, updates=s.updates,
               solved_at=s.solved_at and s.solved_at["chars"], levels=[h["level"] for h in trainer.curriculum.history],
               best=s.best and s.best["chars"], restored=s.restored_best is not None,
               passed=s.passed_at and s.passed_at["chars"])
    assert got == FIXTURE["runs"][run]


def test_the_fixture_covers_every_option_beyond_the_paper():
    """Some recorded run solves, confirms at a longer length, ends out of budget with a best model, uses a
    second learning rate, greedy lanes and the release's exploration; so the rewrite is checked where they act."""
    runs, cases = FIXTURE["runs"], FIXTURE["cases"]
    assert any(r["solved_at"] for r in runs.values()) and any(r["passed"] for r in runs.values())
    assert any(r["best"] and r["chars"] >= cases[k.rsplit("-", 1)[0]]["budget"] for k, r in runs.items())
    used = {k for c in cases.values() for k in c}
    assert {"confirm_length", "keep_best", "solved_lr", "solved_lr_after", "greedy_lanes", "exploration",
            "discount", "q"} <= used
