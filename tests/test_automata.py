"""Automaton extraction (tinyalgo.automata): a controller with a known answer
gives the paper's Figure 4a machine; minimisation merges exactly the
equivalent states; the machine acts like the network; drawing; bad inputs;
the ``tinyalgo experiment automata`` command (tinyalgo.experiments.automata)."""
import json

import numpy as np
import pytest

from tinyalgo.automata import MachineAgent, extract, fidelity
from tinyalgo.automata.discretise import kmeans
from tinyalgo.automata.extract import CORNER_DIGITS
from tinyalgo.automata.draw import draw_machine, drawing_kind
from tinyalgo.automata.machine import Machine, MachineError, build_machine, load_machine
from tinyalgo.automata.minimise import minimise, reduce_dont_care
from tinyalgo.automata.record import Recording, record
from tinyalgo.cli import main
from tinyalgo.runs.checkpoint import save_checkpoint
from tinyalgo.controller import Controller, ControllerConfig
from tinyalgo.environment import Environment
from tinyalgo.evaluation import GreedyAgent, evaluate_complexity
from tinyalgo.experiments.automata import study
from tinyalgo.symbols import Vocabulary
from tinyalgo.tasks.corners import corner_batch

V = Vocabulary(10)
LEFT, RIGHT, LEFT_WRITE = 0, 1, 2


def reverse_controller():
    """A feed-forward controller whose weights make it the paper's Figure 4a
    machine on reverse: move right over digits; at the marker p move left;
    after a move left, write the digit read and move left."""
    env = Environment("reverse", batch_size=1)
    sizes = env.obs_sizes                                   # (17, 17, 2, 3, 3)
    n_in = sum(sizes)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    H = n_in
    cfg = ControllerConfig(obs_sizes=sizes, n_actions=4, n_symbols=V.size, core="ff", units=H, dtype="float64")
    P = {"embed.w": np.eye(n_in, H), "embed.b": np.zeros(H), "extra.w": np.eye(H), "extra.b": np.zeros(H),
         "q.w": np.zeros((H, 4)), "q.b": np.array([0.0, 0.0, 0.0, -1.0]), "sym.w": np.zeros((H, V.size)),
         "sym.b": np.zeros(V.size)}
    read, prev_move = offsets[0], offsets[3]
    digits = read + np.arange(10)
    P["q.w"][digits, RIGHT] = 1.0
    P["q.w"][prev_move + LEFT, RIGHT] = -2.0
    P["q.w"][digits, LEFT_WRITE] = 0.5
    P["q.w"][prev_move + LEFT, LEFT_WRITE] = 1.0
    P["q.w"][read + V.P, LEFT] = 2.0
    P["sym.w"][digits, np.arange(10)] = 1.0
    return Controller(cfg, params=P)


@pytest.fixture(scope="module")
def reverse_extraction():
    controller = reverse_controller()
    assert evaluate_complexity(GreedyAgent(controller), "reverse", 60, instances=10)["solved"] == 1.0
    return controller, extract(controller, "reverse", complexities=[2, 10, 20, 40], instances=60)


def test_the_hand_built_reverse_controller_is_the_two_state_machine_of_figure_4a(reverse_extraction):
    _, r = reverse_extraction
    raw, minimal, m = r["raw"], r["minimal"], r["reduced"]
    # raw states: start, moving right, the first move left, writing after each of 10 digits
    assert raw.n_states == 13 and raw.info["conflicts"] == 0 and r["k"] == 1
    # exact minimisation keeps the start state apart (it never read p); the don't-care reduction does not
    assert minimal.n_states == 3 and m.n_states == 2
    digits = np.arange(10)
    right, left = m.start, 1 - m.start
    assert (m.action[right, digits] == RIGHT).all() and (m.next[right, digits] == right).all()
    assert m.action[right, V.P] == LEFT and m.next[right, V.P] == left
    assert (m.action[left, digits] == LEFT_WRITE).all() and (m.symbol[left, digits] == digits).all()
    assert (m.next[left, digits[1:]] == left).all()
    seen = m.action >= 0
    assert seen.sum() == 10 + 1 + 10                     # nothing else was ever seen


def test_machine_and_network_take_the_same_steps_where_fidelity_is_total(reverse_extraction, tmp_path):
    controller, r = reverse_extraction
    m = r["reduced"]
    report = fidelity(m, controller, 150, instances=8, seed=5)
    assert report["step"] == 1.0 and report["instance"] == 1.0 and report["fallbacks"] == 0
    m.save(tmp_path / "m.json")
    m = load_machine(tmp_path / "m.json", task="reverse")
    trails = []
    for agent in (GreedyAgent(controller), MachineAgent(m)):
        env = Environment("reverse", batch_size=8, complexity=150, seed=5, extra_curriculum=False)
        agent.start(8)
        obs, reset, steps = env.observe(), np.ones(8, bool), []
        for _ in range(160):
            a, y = agent.act(env, obs, reset)
            steps.append(np.stack([a, np.where(a >= 2, y, -1), obs[:, 0]]))
            result = env.step(a, y)
            obs, reset = result.obs, result.done
        trails.append(np.array(steps))
    np.testing.assert_array_equal(trails[0], trails[1])
    row = evaluate_complexity(MachineAgent(m), "reverse", 2000, instances=5, seed=9)
    assert row["solved"] == 1.0


def machine_of(action, nxt, symbol=None, start=0):
    action, nxt = np.array(action), np.array(nxt)
    S, Vin = action.shape
    symbol = np.full((S, Vin), -1) if symbol is None else np.array(symbol)
    return Machine("copy", 10, 2, action, symbol, nxt, start, np.zeros((1, 0)), np.zeros(S, np.int64),
                   np.zeros((S, 4), np.int64),
                   np.stack([np.zeros(S), *np.zeros((4, S)), np.arange(S)], 1).astype(np.int64),
                   np.ones(S, np.int64))


def run_machine(m, inputs, s=None):
    s, out = m.start if s is None else s, []
    for x in inputs:
        out.append((m.action[s, x], m.symbol[s, x]))
        s = m.next[s, x]
        if s < 0:
            break
    return out


def test_minimisation_needs_several_rounds_and_merges_only_equivalent_states():
    # a chain 0 -> 1 -> 2 -> 3 -> 3 on input 0; only state 3 says 'left' on input 1: each round splits one more
    chain = machine_of(action=[[1, 1], [1, 1], [1, 1], [1, 0]], nxt=[[1, 0], [2, 0], [3, 0], [3, 0]])
    assert minimise(chain)[0].n_states == 4
    # two copies of a two-state cycle fold into one; the third state differs in output
    twin = machine_of(action=[[1, 0], [0, 1], [1, 0], [0, 1], [0, 0]], nxt=[[1, 4], [2, 0], [3, 4], [0, 2], [4, 4]])
    m, block = minimise(twin)
    assert m.n_states == 3 and block[0] == block[2] and block[1] == block[3]
    assert len({block[0], block[1], block[4]}) == 3
    # random machines: the minimal one answers every input sequence as the original, from every state
    rng = np.random.default_rng(0)
    for _ in range(20):
        S = 8
        orig = machine_of(action=rng.integers(0, 2, (S, 2)), nxt=rng.integers(0, S, (S, 2)))
        m, block = minimise(orig)
        for s in range(S):
            for seq in rng.integers(0, 2, (30, 12)):
                assert run_machine(orig, seq, s) == run_machine(m, seq, block[s])
        for p in range(S):                         # states in different blocks differ on some sequence
            for q in range(p):
                if block[p] != block[q]:
                    assert any(run_machine(orig, seq, p) != run_machine(orig, seq, q)
                               for seq in np.array(np.meshgrid(*[[0, 1]] * 8)).reshape(8, -1).T)


def test_dont_care_reduction_merges_compatible_states_and_refuses_forced_clashes():
    # the start state never read input 1: it folds into state 1 (Figure 4a's right-moving state)
    m = machine_of(action=[[1, -1], [1, 0], [2, -1]], nxt=[[1, -1], [1, 2], [2, -1]])
    assert minimise(m)[0].n_states == 3
    reduced, block = reduce_dont_care(m)
    assert reduced.n_states == 2 and block[0] == block[1] != block[2]
    # 0 and 1 agree wherever both are known, but merging them forces 2 and 3 together, which clash on input 1
    clash = machine_of(action=[[1, -1], [1, 1], [0, 0], [0, 1]], nxt=[[2, -1], [3, 1], [2, 2], [3, 3]])
    reduced, block = reduce_dont_care(clash)
    assert block[0] != block[1] and block[2] != block[3]
    for s in range(4):                              # every known transition kept
        known = clash.action[s] >= 0
        assert (reduced.action[block[s], known] == clash.action[s, known]).all()


def test_kmeans_is_seeded_and_finds_separated_clusters():
    rng = np.random.default_rng(1)
    centres = rng.normal(size=(5, 3)) * 10
    X = np.concatenate([c + rng.normal(size=(40, 3)) * 0.1 for c in centres])
    C1, l1 = kmeans(X, 5, seed=3)
    C2, l2 = kmeans(X, 5, seed=3)
    np.testing.assert_array_equal(l1, l2)
    assert len(np.unique(l1)) == 5 and all(len(np.unique(l1[i * 40:(i + 1) * 40])) == 1 for i in range(5))


def test_drawings_are_written_headless(reverse_extraction, tmp_path):
    _, r = reverse_extraction
    assert drawing_kind(r["reduced"]) == "diagram"
    draw_machine(r["reduced"], tmp_path / "small.png")
    rng = np.random.default_rng(0)
    big = machine_of(action=rng.integers(-1, 4, (40, 17)), nxt=rng.integers(-1, 40, (40, 17)),
                     symbol=rng.integers(0, 10, (40, 17)))
    assert drawing_kind(big) == "heatmap"
    draw_machine(big, tmp_path / "big.png")
    for name in ("small.png", "big.png"):
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000


def test_bad_inputs_are_one_clear_error(reverse_extraction, tmp_path):
    _, r = reverse_extraction
    empty = Recording(np.zeros((0, 0)), np.zeros((0, 5), np.int64), *[np.zeros(0, np.int64)] * 3,
                      np.zeros(0, bool), "reverse", 10, 2)
    with pytest.raises(MachineError, match="no steps"):
        build_machine(empty, np.zeros(0, np.int64), np.zeros((1, 0)))
    path = tmp_path / "reverse.json"
    r["reduced"].save(path)
    with pytest.raises(MachineError, match="task 'reverse', not of task 'addition'"):
        load_machine(path, task="addition")
    with pytest.raises(MachineError, match="no such file"):
        load_machine(tmp_path / "missing.json")
    path.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(MachineError, match="not a tinyalgo automaton"):
        load_machine(path)


def test_recording_links_each_step_to_the_next_of_its_episode():
    rec = record(reverse_controller(), "reverse", [6], instances=3, seed=2)
    assert rec.first.sum() == 3 and len(rec) == 3 * (2 * 3 + 1)
    assert (rec.next_row >= 0).sum() == len(rec) - 3           # all but each episode's last step
    nxt = rec.next_row[rec.next_row >= 0]
    assert len(np.unique(nxt)) == len(nxt) and not rec.first[nxt].any()


def test_recording_runs_the_canned_instances_after_the_random_ones():
    plain = record(reverse_controller(), "reverse", [6], instances=3, seed=2)
    canned = corner_batch("reverse", [1, 4])          # 4 instances: 3, 3, 9 and 9 steps
    rec = record(reverse_controller(), "reverse", [6], instances=3, seed=2, canned=canned)
    assert rec.first.sum() == 3 + 4 and len(rec) == len(plain) + 3 + 3 + 9 + 9
    np.testing.assert_array_equal(rec.obs[:len(plain)], plain.obs)
    tail = rec.obs[len(plain):, 0]
    assert set(tail[tail < 10]) == {0, 9}             # all zeros and all maximal digits read
    only = record(reverse_controller(), "reverse", [6], instances=0, canned=canned)     # the canned ones alone
    assert only.first.sum() == 4 and len(only) == 3 + 3 + 9 + 9
    np.testing.assert_array_equal(only.obs, rec.obs[len(plain):])
    for instances, given in ((0, None), (-1, canned)):
        with pytest.raises(ValueError, match="record needs"):
            record(reverse_controller(), "reverse", [6], instances=instances, canned=given)


def test_extraction_records_the_corner_instances(reverse_extraction):
    controller, r = reverse_extraction
    plain = extract(controller, "reverse", complexities=[2, 10, 20, 40], instances=60, corners=False)
    corner_steps = sum(2 * (2 * d + 1) for d in CORNER_DIGITS)          # two corners a length, 2n + 1 steps each
    assert r["steps"] == plain["steps"] + corner_steps
    assert r["reduced"].info["corner_digits"] == list(CORNER_DIGITS) and plain["reduced"].info["corner_digits"] == []


def test_study_tests_at_the_papers_lengths_and_on_the_corner_instances(tmp_path):
    model = tmp_path / "reverse-hand" / "checkpoint.npz"
    model.parent.mkdir()
    save_checkpoint(model, reverse_controller(), dict(config=dict(task="reverse", base=10)))
    res = study(str(model), str(tmp_path), lengths=(10, 40), instances=4, adversarial_digits=30,
                record_instances=5, long_instances={40: (2, 3)}, log=lambda s: None)
    assert [(a["length"], a["complexity"]) for a in res["accuracy"]] == [(10, 20), (40, 80)]   # reverse: factor 2
    assert [(a["network_instances"], a["machine_instances"]) for a in res["accuracy"]] == [(4, 4), (2, 3)]
    assert all(a["machine_solved"] == 1.0 == a["network_solved"] for a in res["accuracy"])
    assert [a["instance"] for a in res["adversarial"]] == ["all maximal", "all zeros"]
    assert all(a["machine"] and a["network"] and a["digits"] == 30 for a in res["adversarial"])
    assert res["states"] == 2 and (tmp_path / "reverse-hand.png").stat().st_size > 1000
    # the table from the results; the model, which has results, is not studied again
    assert main(["experiment", "automata", "--models", str(model.parent), "--out", str(tmp_path)]) == 0
    table = (tmp_path / "table.md").read_text().splitlines()
    assert len(table) == 3 and table[2].startswith("| reverse-hand | ")


def test_merging_recorded_alternatives_joins_over_split_states_and_refuses_clashes():
    from tinyalgo.automata.minimise import merge_alternatives
    # state 0 on input 0 was recorded going to 1 (majority) and to 2: 1 and 2 agree where both are known
    m = machine_of(action=[[1, 1], [0, -1], [-1, 1]], nxt=[[1, 0], [1, -1], [-1, 2]])
    merged, block, refused = merge_alternatives(m, [[1, 2]])
    assert refused == 0 and merged.n_states == 2 and block[1] == block[2] != block[0]
    assert merged.action[block[1]].tolist() == [0, 1]
    # 1 and 3 answer input 0 differently: the merge is refused and nothing changes
    clash = machine_of(action=[[1, 1], [0, -1], [-1, 1], [1, 1]], nxt=[[1, 0], [1, -1], [-1, 2], [3, 3]])
    merged, block, refused = merge_alternatives(clash, [[1, 3]])
    assert refused == 1 and merged.n_states == 4


def test_suffix_tests_are_recorded_paths_and_longer_tags_split_no_less(reverse_extraction):
    from tinyalgo.automata.behaviour import behaviour_tags, suffix_tests
    rec = record(reverse_controller(), "reverse", [6], instances=3, seed=2)
    rows = np.nonzero(rec.first)[0]
    inputs, moves = suffix_tests(rec, rows, 3, 10, np.random.default_rng(0))
    r = rows[0]
    path = [r, rec.next_row[r], rec.next_row[rec.next_row[r]]]
    assert inputs.shape[1] == 3 and any((inputs[i] == rec.obs[path, 0]).all() and
                                        (moves[i] == rec.action[path] % rec.n_moves).all() for i in range(len(inputs)))
    with pytest.raises(ValueError, match="depth >= 1"):
        behaviour_tags(rec, reverse_controller(), depth=0)


def test_the_automata_command_refuses_bad_input_before_any_work(tmp_path, capsys):
    assert main(["experiment", "automata", "--tests", "0", "--out", str(tmp_path)]) == 2
    assert "argument --tests: must be at least 1; got 0" in capsys.readouterr().err
    (tmp_path / "untrained").mkdir()
    assert main(["experiment", "automata", "--models", str(tmp_path / "untrained"), "--out", str(tmp_path)]) == 2
    assert "untrained: no checkpoint.npz there" in capsys.readouterr().err
    assert main(["experiment", "automata", "--out", str(tmp_path)]) == 2              # nothing to study or tabulate
    assert "has no results to tabulate; give --models" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.md"))
