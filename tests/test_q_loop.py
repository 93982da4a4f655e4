"""The Q-learning loop does what it did when tests/q_runs.py
recorded it, on any CPU: fixed-seed runs, with every option beyond the paper
switched on in some of them, train the same characters, pass the same
curriculum levels, solve (or not) at the same point, and end with parameters
within a tolerance of the recorded ones (tests/fixtures/q_runs.json,
q_runs.npz).  Another BLAS kernel or thread count moves the parameters by
about 1e-14 (float64) or 1e-6 (float32), a change to the maths by far more.

Bit for bit, a run is checked against itself on this machine: the same seed
twice ends with the same bits, and a run saved at a segment boundary and
resumed from its files ends exactly where the uninterrupted run ends."""
import dataclasses
import functools
import json
import pathlib

import numpy as np
import pytest

from q_runs import behaviour
from tinyalgo.runs.beyond import BeyondThePaper
from tinyalgo.runs import rundir
from tinyalgo.runs.config import QConfig

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
FIXTURE = json.loads((FIXTURES / "q_runs.json").read_text(encoding="utf-8"))
PARAMS = np.load(FIXTURES / "q_runs.npz")
TOLERANCE = {np.dtype(np.float64): 1e-9, np.dtype(np.float32): 1e-4}     # absolute, on parameters of order 1
# every path the controller can train on: the default and, where it exists, the reference path
PATHS = ["default"] + (["reference"] if "reference" in {f.name for f in dataclasses.fields(QConfig)} else [])
pytestmark = pytest.mark.slow


def config(case: str, path: str = "default") -> QConfig:
    return QConfig(**FIXTURE["cases"][case], **({"reference": True} if path == "reference" else {}))


@functools.cache
def trained(case: str, path: str = "default") -> BeyondThePaper:
    trainer = BeyondThePaper(config(case, path), log=lambda line: None)
    trainer.run()
    return trainer


def recorded_params(case: str) -> dict:
    prefix = f"{case}/"
    return {k[len(prefix):]: PARAMS[k] for k in PARAMS.files if k.startswith(prefix)}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", sorted(FIXTURE["cases"]))
def test_a_fixed_seed_run_behaves_as_recorded(case, path):
    trainer = trained(case, path)
    assert behaviour(trainer) == FIXTURE["runs"][case]
    recorded = recorded_params(case)
    assert sorted(recorded) == sorted(trainer.controller.params)
    for name, want in recorded.items():
        got = trainer.controller.params[name]
        assert got.dtype == want.dtype, name
        np.testing.assert_allclose(got, want, rtol=0, atol=TOLERANCE[want.dtype], err_msg=f"{case}: {name}")


@pytest.mark.parametrize("case", sorted(FIXTURE["cases"]))
def test_the_tolerance_is_far_below_what_training_moves(case):
    """The recorded parameters are far from where the run started: a loop
    that trained differently would fail the tolerance by orders of magnitude."""
    start = BeyondThePaper(config(case), log=lambda line: None).snapshot()
    recorded = recorded_params(case)
    moved = max(float(np.max(np.abs(recorded[name] - start[name]))) for name in recorded)
    assert moved > 1e3 * TOLERANCE[next(iter(recorded.values())).dtype]


def test_the_same_seed_twice_ends_with_the_same_bits():
    first = trained("budget_end")
    again = BeyondThePaper(config("budget_end"), log=lambda line: None)
    again.run()
    assert behaviour(again) == behaviour(first)
    for name, value in first.controller.params.items():
        np.testing.assert_array_equal(again.controller.params[name], value, err_msg=name)


def test_a_run_resumed_from_its_files_ends_as_the_uninterrupted_run(tmp_path):
    """Saved after the solve, while it trains on towards the confirmation
    (so its best tested model is saved too), resumed from the files."""
    straight = trained("budget_end")
    first = BeyondThePaper(config("budget_end"), log=lambda line: None)
    first.run(should_stop=lambda: first.state.best is not None)
    assert first.state.solved_at is not None and first.state.chars < straight.state.chars
    rundir.save_run(str(tmp_path), first)
    resumed = rundir.resume_run(str(tmp_path), log=lambda line: None)
    resumed.run()
    assert behaviour(resumed) == behaviour(straight)
    for name, value in straight.controller.params.items():
        np.testing.assert_array_equal(resumed.controller.params[name], value, err_msg=name)


def test_the_fixture_covers_every_option_beyond_the_paper():
    """Some recorded run solves, confirms at a longer length, ends out of budget with a best model, uses a
    second learning rate, greedy lanes and the release's exploration; so the loop is checked where they act."""
    runs, cases = FIXTURE["runs"], FIXTURE["cases"]
    assert any(r["solved_at"] for r in runs.values()) and any(r["passed"] for r in runs.values())
    assert any(r["best"] and r["chars"] >= cases[k]["budget"] for k, r in runs.items())
    used = {k for c in cases.values() for k in c}
    assert {"confirm_length", "keep_best", "solved_lr", "solved_lr_after", "greedy_lanes", "exploration",
            "discount", "q"} <= used
