"""Traces of a controller on one instance (tinyalgo.inspection.trace), their pictures
(tinyalgo.inspection.trace_plots), the state autocorrelation of the paper's Table 2
(tinyalgo.inspection.autocorrelation, tinyalgo.experiments.table2) and the ``trace``
command (tinyalgo.cli.trace).  Controllers are tiny with random weights: the
mechanics, not what a trained model does."""
import argparse
import importlib
import json

import numpy as np
import pytest

from tinyalgo.inspection.autocorrelation import autocorrelation, phase_means, within_phase_by_lag
from tinyalgo.runs.checkpoint import save_checkpoint
from tinyalgo.cli import trace as cli_trace
from tinyalgo.controller import Controller, ControllerConfig
from tinyalgo.environment import Environment
from tinyalgo.experiments.table2 import (analyse, instance_statistics, probe_reverse, table2_csv,
                                         write_table2_figure)
from tinyalgo.symbols import Vocabulary
from tinyalgo.inspection.trace import Trace, action_cycle, detour_free_actions, trace_instance, trace_to_dict
from tinyalgo.inspection.trace_plots import MOVE_DELTAS, write_trace_png, write_trajectory_png

cli_main = importlib.import_module("tinyalgo.cli.main")     # the module (tinyalgo.cli exports its function)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def tiny(task, core="gru", units=8, seed=0):
    return Controller(ControllerConfig.for_environment(Environment(task, batch_size=1), core, units),
                      rng=np.random.default_rng(seed))


def is_png(path):
    data = path.read_bytes()
    return len(data) > 1000 and data[:8] == PNG_MAGIC


# ------------------------------------------------------------ autocorrelation
def test_autocorrelation_is_the_footnote_formula_by_hand():
    h = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
    # E = (1, 1); h - E = (0, -1), (-1, 0), (1, 1); sigma^2 = (1 + 1 + 2) / 3 = 4/3
    expected = np.array([[1.0, 0.0, -1.0], [0.0, 1.0, -1.0], [-1.0, -1.0, 2.0]]) / (4.0 / 3.0)
    np.testing.assert_allclose(autocorrelation(h), expected, rtol=1e-12)


def test_autocorrelation_properties_over_random_shapes():
    rng = np.random.default_rng(0)
    for _ in range(20):
        T, H = rng.integers(2, 30), rng.integers(1, 12)
        h = rng.normal(size=(T, H))
        A = autocorrelation(h)
        assert A.shape == (T, T), (T, H)
        np.testing.assert_allclose(A, A.T, atol=1e-12)
        assert np.trace(A) == pytest.approx(T), (T, H)            # sum_i A_ii = T by the choice of sigma^2
        np.testing.assert_allclose(A.sum(axis=1), 0.0, atol=1e-9)  # the deviations from E sum to zero
        # a constant shift of every state and a common scale leave A unchanged
        np.testing.assert_allclose(autocorrelation(3.0 * h + rng.normal(size=H)), A, atol=1e-9)
        explicit = np.array([[np.dot(h[i] - h.mean(0), h[j] - h.mean(0)) for j in range(T)] for i in range(T)])
        np.testing.assert_allclose(A, explicit / (np.sum((h - h.mean(0)) ** 2) / T), rtol=1e-10, atol=1e-12)


def test_autocorrelation_rejects_bad_states():
    with pytest.raises(ValueError, match="shape"):
        autocorrelation(np.zeros(5))
    with pytest.raises(ValueError, match="T >= 2"):
        autocorrelation(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="undefined"):
        autocorrelation(np.ones((4, 3)))


def test_two_state_sequence_gives_two_blocks():
    h = np.array([[1.0, 0.0]] * 3 + [[0.0, 1.0]] * 2)
    A = autocorrelation(h)
    means = phase_means(A, np.array([0, 0, 0, 1, 1]))
    # E = (0.6, 0.4); d = +-(0.4, -0.4) and (-0.6, 0.6); sigma^2 = (3 * 0.32 + 2 * 0.72) / 5 = 0.48
    assert means["within_0"] == pytest.approx(0.32 / 0.48)
    assert means["within_1"] == pytest.approx(0.72 / 0.48)
    assert means["across"] == pytest.approx(-0.48 / 0.48)
    assert means["within"] == pytest.approx((6 * 0.32 + 2 * 0.72) / 8 / 0.48)


def test_within_phase_by_lag_by_hand():
    A = np.arange(16.0).reshape(4, 4)
    phases = np.array([0, 0, 0, 1])
    # same phase, lag 1: (0,1) (1,0) (1,2) (2,1) -> 1, 4, 6, 9; lag 2: (0,2) (2,0) -> 2, 8; lag 3: none
    assert within_phase_by_lag(A, phases, ((1, 1), (2, None), (3, 3)))[:2] == [5.0, 5.0]
    assert np.isnan(within_phase_by_lag(A, phases, ((3, 3),))[0])
    assert within_phase_by_lag(A, np.zeros(4), ((3, None),)) == [(3.0 + 12.0) / 2]


# -------------------------------------------------------------------- traces
@pytest.mark.parametrize("task,core", [("addition", "gru"), ("reverse", "ff"), ("walk", "lstm")])
def test_trace_records_every_step_consistently(task, core):
    controller = tiny(task, core)
    trace = trace_instance(controller, task, 8, seed=3)
    assert trace.steps and trace.reason != 0
    n = trace.n_moves
    for s in trace.steps:
        assert s.action == s.greedy == int(np.argmax(s.q)) and not s.explored
        assert (s.symbol >= 0) == (s.action >= n)
        assert "*" in s.text.splitlines()[-4] and "greedy" in s.text
        assert len(s.top_symbols) == 3 and s.top_symbols[0][1] >= s.top_symbols[1][1]
        assert s.t.shape == (8,) and (s.h is None) == (core == "ff")
    pos = trace.positions
    for i, s in enumerate(trace.steps):             # each move takes the head one cell the way it says
        dx, dy = MOVE_DELTAS[s.action % n]
        assert tuple(pos[i + 1] - pos[i]) == (dx, dy), (i, s.action)
    assert trace.hidden_states().shape == (len(trace.steps), 8)
    again = trace_instance(controller, task, 8, seed=3)
    assert [s.action for s in again.steps] == [s.action for s in trace.steps]
    assert json.dumps(trace_to_dict(trace))


def test_epsilon_greedy_trace_marks_exploratory_steps_and_is_seeded():
    controller = tiny("addition")
    a = trace_instance(controller, "addition", 12, seed=1, epsilon=1.0, explore_seed=5)
    b = trace_instance(controller, "addition", 12, seed=1, epsilon=1.0, explore_seed=5)
    assert all(s.explored for s in a.steps)
    assert [s.action for s in a.steps] == [s.action for s in b.steps]
    assert "exploratory" in a.steps[0].text
    with pytest.raises(ValueError, match="epsilon"):
        trace_instance(controller, "addition", 12, epsilon=1.5)


def test_trace_refuses_a_controller_of_another_task():
    with pytest.raises(ValueError, match="actions"):
        trace_instance(tiny("reverse", "ff"), "addition", 8)


def fake_trace(actions, reads=None, n_moves=4):
    """A trace of ``actions`` whose steps read ``reads`` (characters; default digits)."""
    vocab = Vocabulary(10)
    reads = reads or "5" * len(actions)
    steps = [type("S", (), dict(action=a, read=vocab.chars.index(r)))() for a, r in zip(actions, reads)]
    return Trace("addition", 8, 0, n_moves, "grid", vocab.chars, steps, np.zeros((1, 1)), np.zeros(1), np.zeros(1))


D, U, LW, L, DW = 2, 3, 4, 0, 6


def test_action_cycle_finds_the_repeating_column_pattern():
    zigzag = [D, LW, U, LW] * 6
    assert action_cycle(fake_trace(zigzag)) == ("down", "left+write", "up", "left+write")
    # the same cycle read from another step
    assert action_cycle(fake_trace(zigzag[1:] + [D])) == action_cycle(fake_trace(zigzag))
    assert action_cycle(fake_trace([DW, L, U] * 6)) == ("down+write", "left", "up")
    assert action_cycle(fake_trace([D, U, L, LW, D, U, U, L, D, LW, L, U, D, D])) == ()


def test_detours_through_blank_cells_are_dropped_and_reads_of_digits_kept():
    # a zigzag that dips into the blank row below before each climb: D Lw (D U) U Lw
    dipping, reads = [D, LW, D, U, U, LW] * 5, "555e55" * 5        # step 3 reads the blank cell the dip reached
    trace = fake_trace(dipping, reads)
    assert action_cycle(trace) == ("down", "left+write", "down", "up", "up", "left+write")
    assert action_cycle(trace, detours=False) == ("down", "left+write", "up", "left+write")
    # down to read the second number's digit and back up is not a detour (the paper's first solution)
    down_up_left = fake_trace([D, U, LW] * 6)
    assert detour_free_actions(down_up_left) == [D, U, LW] * 6
    assert action_cycle(down_up_left, detours=False) == ("down", "up", "left+write")


# ---------------------------------------------------------------- pictures
@pytest.mark.parametrize("task,core", [("addition", "gru"), ("reverse", "ff")])
def test_trace_pictures_are_written_headless(tmp_path, task, core):
    trace = trace_instance(tiny(task, core), task, 8, seed=2, epsilon=0.3, explore_seed=1)
    write_trace_png(trace, tmp_path / "trace.png", title="t")
    write_trajectory_png(trace, tmp_path / "trajectory.png")
    assert is_png(tmp_path / "trace.png") and is_png(tmp_path / "trajectory.png")


# ------------------------------------------------------------------ Table 2
def test_probe_reverse_follows_the_ground_truth_phases():
    probe = probe_reverse(tiny("reverse", "ff"), digits=5, seed=0)
    assert len(probe["p_left"]) == 11
    assert probe["phase"].tolist() == [0] * 5 + [1] * 6          # 5 moves right, the turn, 5 writes
    np.testing.assert_allclose(probe["p_left"] + probe["p_right"], 1.0, rtol=1e-9)
    assert probe["states"].shape == (11, 8)
    lstm = probe_reverse(tiny("reverse", "lstm", units=6), digits=4, seed=1)
    assert lstm["states"].shape == (9, 6)


def test_instance_statistics_average_the_single_instance_numbers():
    controller = tiny("reverse", "ff")
    stats = instance_statistics(controller, digits=4, instances=3, seed=7)
    single = [analyse("FF", "ff", probe_reverse(controller, 4, 7 + i)) for i in range(3)]
    assert stats["within"]["mean"] == pytest.approx(np.mean([r["within"] for r in single]))
    assert stats["across"]["sd"] == pytest.approx(np.std([r["across"] for r in single]))
    assert stats["within_lag_8-"]["mean"] != stats["within_lag_8-"]["mean"]       # no lag of 8 in 9 steps: NaN


@pytest.mark.slow
def test_table2_figure_and_csv_from_fake_data(tmp_path):
    rng = np.random.default_rng(0)
    phase = np.array([0] * 6 + [1] * 7)
    two_states = np.where(phase[:, None] == 0, 1.0, -1.0) * np.ones((13, 4)) + 0.1 * rng.normal(size=(13, 4))
    fake = dict(p_left=np.where(phase == 1, 0.9, 0.1), p_right=np.where(phase == 1, 0.1, 0.9), phase=phase,
                gold=np.where(phase == 1, 2, 1), greedy=np.where(phase == 1, 2, 1), states=two_states)
    results = [analyse("FF", "ff", fake), analyse("LSTM", "lstm", dict(fake, states=rng.normal(size=(13, 4))))]
    assert results[0]["within"] > 0.9 and results[0]["across"] < -0.9      # two blocks
    assert abs(results[1]["within"]) < 0.5                                 # no structure
    results[1]["stats"] = dict(instances=3, **{k: dict(mean=0.1, sd=0.01)
                                               for k in ("within", "across", "within_lag_1-2", "within_lag_8-")})
    write_table2_figure(results, tmp_path / "table2.png")
    assert is_png(tmp_path / "table2.png")
    lines = table2_csv(results).splitlines()
    assert len(lines) == 1 + 2 * 13 and lines[1].startswith("FF,0,right,1,1,0.10000,0.90000")


# ---------------------------------------------------------------------- CLI
def parse(argv):
    parser = argparse.ArgumentParser()
    cli_trace.register(parser.add_subparsers())
    return parser.parse_args(argv)


@pytest.fixture
def reverse_checkpoint(tmp_path):
    path = tmp_path / "reverse.npz"
    save_checkpoint(path, tiny("reverse", "ff"), dict(config=dict(task="reverse", base=10)))
    return str(path)


def test_trace_command_prints_frames_and_writes_files(tmp_path, reverse_checkpoint, capsys):
    args = parse(["trace", reverse_checkpoint, "--complexity", "6", "--png", str(tmp_path / "t.png"),
                  "--json", str(tmp_path / "t.json"), "--epsilon", "0.5"])
    assert cli_trace.cmd_trace(args) == 0
    out = capsys.readouterr().out
    assert "--- frame 1/" in out and "episode ended" in out and "Q: left=" in out
    assert is_png(tmp_path / "t.png")
    saved = json.loads((tmp_path / "t.json").read_text())
    assert saved["task"] == "reverse" and saved["steps"] and out.count("--- frame") == len(saved["steps"])


@pytest.mark.parametrize("argv,message", [
    (["--task", "addition"], "was trained on task 'reverse', not 'addition'"),
    (["--complexity", "1"], "--complexity must be at least 2 for task 'reverse'; got 1"),
])
def test_trace_command_bad_inputs_are_one_clear_error(reverse_checkpoint, argv, message):
    with pytest.raises(ValueError) as err:
        cli_trace.cmd_trace(parse(["trace", reverse_checkpoint] + argv))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_trace_command_missing_file(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        cli_trace.cmd_trace(parse(["trace", str(tmp_path / "missing.npz")]))


def test_main_turns_trace_errors_into_one_line_and_status_2(tmp_path, reverse_checkpoint, capsys):
    for argv in (["trace", str(tmp_path / "missing.npz")], ["trace", reverse_checkpoint, "--task", "addition"],
                 ["trace", reverse_checkpoint, "--complexity", "1"]):
        assert cli_main.main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("tinyalgo: error:") and "\n" not in err, err
