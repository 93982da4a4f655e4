"""The verifier (tinyalgo.automata.verify; paper section 6.4): hand-built
correct machines of every task are proved; single-transition mutants are
refuted by an instance that fails in the environment, and never proved when
random concrete runs can refute them; the exports; the command."""
import copy as copying
import json

import numpy as np
import pytest

from tinyalgo.automata.agent import MachineAgent
from tinyalgo.automata.export import parse_aalpy_dot, to_aalpy_dot, to_dot
from tinyalgo.automata.machine import Machine
from tinyalgo.automata.verify import verify
from tinyalgo.automata.witness import make, rebuild, run_on
from tinyalgo.cli.main import main
from tinyalgo.evaluation import evaluate_complexity
from tinyalgo.symbols import Vocabulary

L, R, D, U = 0, 1, 2, 3
LEFT_WRITE = 2                                  # a tape's joint action: move left and write


def machine(task, base, n_moves, table, start=0):
    """A machine from {(state, symbol): (move, symbol written or None, next state)}."""
    V, S = Vocabulary(base).size, 1 + max(max(s, q) for (s, _), (_, _, q) in table.items())
    action, symbol, nxt = (np.full((S, V), -1) for _ in range(3))
    for (s, x), (move, w, q) in table.items():
        action[s, x], symbol[s, x], nxt[s, x] = move + (n_moves if w is not None else 0), -1 if w is None else w, q
    raw = np.stack([np.zeros(S), *np.zeros((4, S)), np.arange(S)], 1).astype(np.int64)
    return Machine(task, base, n_moves, action, symbol, nxt, start, np.zeros((1, 0)), np.zeros(S, np.int64),
                   np.zeros((S, 4), np.int64), raw, np.ones(S, np.int64))


def copy_machine(base):
    return machine("copy", base, 2, {(0, d): (R, d, 0) for d in range(base)})


def reverse_machine(base):
    """Figure 4a: move right over the digits; at p turn; write what is read, moving left."""
    t = {(0, d): (R, None, 0) for d in range(base)}
    t[(0, Vocabulary(base).P)] = (L, None, 1)
    t.update({(1, d): (L, d, 1) for d in range(base)})
    return machine("reverse", base, 2, t)


def walk_machine(base):
    v = Vocabulary(base)
    t = {(0, d): (R, None, 0) for d in range(base)}
    for s, (arrow, move) in enumerate([(v.L, L), (v.U, U), (v.D, D)], start=1):
        t[(0, arrow)] = (move, None, s)
        t.update({(s, d): (move, d, s) for d in range(base)})
    return machine("walk", base, 4, t)


def addition_machine(base, rows=2):
    """The carry machine: down (or up) a column summing its digits, write the sum's
    last digit moving left, keep the carry; on the empty column write the carry."""
    ids = {}

    def sid(*key):
        return ids.setdefault(key, len(ids))

    start, t = sid(0, 0, 0), {}
    for direction in (0, 1):
        for k in range(rows):
            for p in range(rows * base):
                s = sid(direction, k, p)
                for d in range(base):
                    if k < rows - 1:
                        t[(s, d)] = (D if direction == 0 else U, None, sid(direction, k + 1, p + d))
                    else:
                        t[(s, d)] = (L, (p + d) % base, sid(1 - direction, 0, (p + d) // base))
                if k == 0:
                    t[(s, Vocabulary(base).E)] = (L, p % base, s)
    return machine("addition3" if rows == 3 else "addition", base, 4, t, start)


def multiplication_machine(base):
    ids = {"start": 0}
    t = {}
    for m in range(2, base):
        t[(0, m)] = (D, None, ids.setdefault((m, 0), len(ids)))
        for c in range(m):
            for d in range(base):
                x = d * m + c
                t[(ids.setdefault((m, c), len(ids)), d)] = (L, x % base, ids.setdefault((m, x // base), len(ids)))
    return machine("multiplication", base, 4, t)


CORRECT = {"copy": lambda: copy_machine(4), "reverse": lambda: reverse_machine(4), "walk": lambda: walk_machine(3),
           "addition": lambda: addition_machine(3), "addition3": lambda: addition_machine(3, rows=3),
           "multiplication": lambda: multiplication_machine(4)}


def refuted_by_sampling(m, lengths=(1, 2, 3, 5, 9), instances=64) -> bool:
    """Whether random instances at a few lengths make the machine fail in the environment."""
    task = make(m.task, m.base)
    for n in lengths:
        c = {"walk": 2 * n, "multiplication": n}.get(m.task, n * task.factor)
        if evaluate_complexity(MachineAgent(m), m.task, max(c, task.min_complexity), instances, m.base,
                               seed=n)["solved"] < 1:
            return True
    return False


@pytest.mark.parametrize("task", sorted(CORRECT))
def test_hand_built_correct_machines_are_proved_at_every_length(task):
    m = CORRECT[task]()
    assert not refuted_by_sampling(m)
    r = verify(m, max_window=1)
    assert r["verdict"] == "proved", r
    assert "every instance of every length" in r["established"] and r["exact_below"] > 1


def back_up_addition_machine(base):
    """A carry machine that goes back up a column after writing, as some 3-number addition networks do: down
    the column summing, write the sum's last digit moving up, and on the top digit read again move left
    keeping the carry.  The state that reads the top digit again holds the whole sum s, and answers only the
    digits a board can hold there (at most s): the others are never recorded."""
    ids = {}

    def sid(*key):
        return ids.setdefault(key, len(ids))

    t = {}
    for c in (0, 1):
        t[(sid("top", c), Vocabulary(base).E)] = (L, c, sid("top", c))
        for a in range(base):
            t[(sid("top", c), a)] = (D, None, sid("mid", c + a))
    for p in range(base + 1):
        for b in range(base):
            t[(sid("mid", p), b)] = (U, (p + b) % base, sid("back", p + b))
    for s in range(2 * base):
        for a in range(min(s, base - 1) + 1):
            t[(sid("back", s), a)] = (L, None, sid("top", s // base))
    return machine("addition", base, 4, t)


def test_a_machine_that_reads_a_summed_column_again_is_proved():
    m = back_up_addition_machine(3)
    assert not refuted_by_sampling(m)
    r = verify(m)
    assert r["verdict"] == "proved" and r["window"] == 1 and not r["every_cell_kept"], r     # the cells that matter
    broken = copying.deepcopy(m)
    state = int(np.nonzero(broken.action[:, 2] >= 0)[0][-1])            # the last "back" state (s = 5) on a 2
    broken.next[state, 2] = broken.next[state, 0] ^ 1                   # keeps the wrong carry
    assert refuted_by_sampling(broken) and verify(broken)["verdict"] == "counterexample"


def mutants(m, rng, n):
    """Up to n machines differing from ``m`` in one recorded transition: its move,
    whether it writes, the symbol written or the next state."""
    pairs = np.argwhere(m.action >= 0)
    for i in rng.permutation(len(pairs))[:n]:
        s, x = pairs[i]
        for kind in range(3):
            mm = copying.deepcopy(m)
            if kind == 0:
                mm.action[s, x] = (m.action[s, x] + 1 + rng.integers(2 * m.n_moves - 1)) % (2 * m.n_moves)
                mm.symbol[s, x] = rng.integers(m.base) if mm.action[s, x] >= m.n_moves else -1
            elif kind == 1 and m.action[s, x] >= m.n_moves:
                mm.symbol[s, x] = (m.symbol[s, x] + 1 + rng.integers(m.base - 1)) % m.base
            elif kind == 2 and m.n_states > 1:
                mm.next[s, x] = (m.next[s, x] + 1 + rng.integers(m.n_states - 1)) % m.n_states
            else:
                continue
            yield (int(s), int(x), kind), mm


@pytest.mark.parametrize("task,count", [("reverse", 9), ("copy", 4), ("walk", 3), ("addition", 3),
                                        ("multiplication", 3)])
def test_mutants_are_refuted_in_the_environment_and_never_proved_when_sampling_refutes_them(task, count):
    rng = np.random.default_rng(27)
    refuted = 0
    for where, mm in mutants(CORRECT[task](), rng, count):
        r = verify(mm, max_window=1)
        if refuted_by_sampling(mm):
            assert r["verdict"] != "proved", (where, r)
        if r["verdict"] == "counterexample":
            refuted += 1
            solved, reasons, _ = run_on(mm, rebuild(r["instance"]))
            assert not solved[0] and reasons[0] == r["reason"], (where, r)
            assert r["length"] >= 1 and r["reason"] in ("wrong write", "timeout")
    assert refuted >= count


def test_the_counterexample_is_the_shortest_when_every_shorter_length_is_proved():
    m = reverse_machine(4)
    m.symbol[1, 2] = 3                          # writes 3 where it read 2: fails whenever a 2 is met
    r = verify(m, max_window=1)
    assert r["verdict"] == "counterexample" and r["length"] == 1 and r["shortest"]
    assert r["instance"]["targets"] == [2] and r["reason"] == "wrong write"
    m = reverse_machine(4)
    m.action[0, 1], m.next[0, 1] = 0, 0        # turns back on a 1: loops until the timeout
    r = verify(m, max_window=1)
    assert r["verdict"] == "counterexample" and r["reason"] == "timeout"


def test_the_aalpy_file_has_aalpys_mealy_structure_and_round_trips():
    m = reverse_machine(10)
    text = to_aalpy_dot(m)
    assert text.startswith("digraph LearnedModel {") and text.rstrip().endswith("}")
    assert '__start0 [label="", shape=none];' in text and f'__start0 -> s{m.start} [label=""];' in text
    d = parse_aalpy_dot(text)
    V = Vocabulary(10)
    assert d["initial"] == f"s{m.start}" and d["states"] == ["s0", "s1"]
    assert len(d["transitions"]) == m.n_states * V.size                  # input complete, as AALpy's loader asks
    assert d["transitions"][("s0", "p")] == ("s1", "left")
    assert d["transitions"][("s1", 7)] == ("s1", "left+w7")              # digit labels read as integers
    assert d["transitions"][("s1", "q")] == ("s1", "left")               # never recorded: the default
    assert 's0 -> s1 [label="p/left"];' in to_dot(m)


def test_the_aalpy_file_loads_in_aalpy_when_it_is_installed(tmp_path):
    fh = pytest.importorskip("aalpy.utils.FileHandler")
    m = reverse_machine(10)
    path = tmp_path / "m.dot"
    path.write_text(to_aalpy_dot(m))
    a = fh.load_automaton_from_file(str(path), "mealy")
    assert len(a.states) == 2 and a.initial_state.state_id == f"s{m.start}"
    assert a.execute_sequence(a.initial_state, [3, 5, "p", 5, 3]) == ["right", "right", "left", "left+w5", "left+w3"]


def test_verify_command_writes_its_report_and_exports(tmp_path, capsys):
    path = tmp_path / "machine.json"
    reverse_machine(10).save(path)
    out = tmp_path / "out"
    assert main(["verify", str(path), "--json", str(out / "r.json"), "--dot", str(out / "m.dot"),
                 "--aalpy", str(out / "m-aalpy.dot")]) == 0
    text = capsys.readouterr().out
    assert "proved: every instance of every length >= 1" in text
    report = json.loads((out / "r.json").read_text())
    assert report["verdict"] == "proved" and report["task"] == "reverse"
    assert (out / "m.dot").read_text().startswith("digraph machine") and "__start0" in (out / "m-aalpy.dot").read_text()


@pytest.mark.parametrize("argv,message", [
    (["verify", "nowhere.json"], "no such file"),
    (["verify", "MACHINE", "--window", "0"], "--window"),
    (["verify", "MACHINE", "--window", "3", "--max-window", "2"], "larger than --max-window"),
    (["verify", "MACHINE", "--json", "DIR"], "is a folder"),
    (["verify-loop", "nowhere.npz", "--out", "DIR", "--census", "-1"], "--census"),
    (["verify-loop", "nowhere.npz", "--out", "DIR", "--census", "1000000000000"], "--census must be at most"),
    (["verify-loop", "nowhere.npz", "--out", "DIR", "--census-recorded", "0"], "--census-recorded"),
])
def test_verify_command_refuses_bad_input_in_one_line(tmp_path, capsys, argv, message):
    path = tmp_path / "machine.json"
    reverse_machine(4).save(path)
    argv = [str(path) if a == "MACHINE" else str(tmp_path) if a == "DIR" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


# ------------------------------------------------------------ the counterexample-guided loop
def small(**options):
    """The loop's options for a small test loop: no corner instances, and no repair or census unless asked."""
    from tinyalgo.automata.loop import LoopOptions
    return LoopOptions(**{"corners": False, "repairs": 0, "census": 0, **options})


def test_the_loop_turns_a_damaged_machine_back_into_a_proved_one():
    from test_automata import reverse_controller
    from tinyalgo.automata.loop import refine
    from tinyalgo.automata.rounds import recording_with, select
    controller = reverse_controller()                       # the network of Figure 4a
    m = select(controller, recording_with(controller, "reverse", 10, [2, 10], 20, 0, False, []))[0]
    assert verify(m)["verdict"] == "proved"
    damaged = copying.deepcopy(m)
    left = 1 - m.start
    damaged.action[left, 3] = damaged.symbol[left, 3] = damaged.next[left, 3] = -1     # a transition removed
    lines = []
    out = refine(controller, "reverse", 10, small(complexities=(2,), instances=2, rounds=12), machine=damaged,
                 log=lines.append)
    rounds = out["rounds"]
    assert rounds[0]["verdict"] == "counterexample" and rounds[0]["network_solves"] and rounds[0]["length"] == 1
    assert rounds[-1]["verdict"] == "proved" and out["report"]["verdict"] == "proved"
    assert all(r["verdict"] == "counterexample" for r in rounds[:-1]) and len(out["counterexamples"]) == len(rounds) - 1
    final = out["machine"]
    assert final.action[1 - final.start, 3] == LEFT_WRITE and final.symbol[1 - final.start, 3] == 3
    assert len(lines) == len(rounds) and lines[-1].startswith(f"round {len(rounds) - 1}: 2 states; proved")
    short = refine(controller, "reverse", 10, small(complexities=(2,), instances=2, rounds=1), machine=damaged)
    assert short["machine"] is damaged and short["rounds"][0]["stopped"] == "no proof in 1 rounds"


def test_completion_by_the_network_fills_every_unknown_pair_and_keeps_the_recorded_ones():
    from test_automata import reverse_controller
    from tinyalgo.automata.extract import machines
    from tinyalgo.automata.rounds import complete_with_network, recording_with
    controller = reverse_controller()
    m = machines(recording_with(controller, "reverse", 10, [2], 2, 0, False, []), 1)[2]
    assert (m.action < 0).any()
    done = complete_with_network(m, controller)
    assert not (done.action < 0).any() and not (done.next < 0).any()
    seen = m.action >= 0
    assert (done.action[seen] == m.action[seen]).all() and (done.symbol[seen] == m.symbol[seen]).all()
    assert done.info["completed_by_network"] == int(((m.action < 0) | (m.next < 0)).sum())


def test_verify_loop_command_reports_each_round(tmp_path, capsys):
    from test_automata import reverse_controller
    from tinyalgo.runs.checkpoint import save_checkpoint
    model = tmp_path / "model.npz"
    save_checkpoint(model, reverse_controller(), dict(config=dict(task="reverse", base=10)))
    assert main(["verify-loop", str(model), "--out", str(tmp_path / "loop"), "--complexities", "2", "--instances",
                 "1", "--no-corners", "--rounds", "12"]) == 0
    text = capsys.readouterr().out
    assert "round 0:" in text and "counterexample of length 1, which the network solves" in text
    assert "proved after" in text
    report = json.loads((tmp_path / "loop" / "loop.json").read_text())
    assert report["report"]["verdict"] == "proved" and report["rounds"][-1]["verdict"] == "proved"
    assert len(report["counterexamples"]) == len(report["rounds"]) - 1 >= 1
    assert all(r["cpu_seconds"] >= 0 for r in report["rounds"])


def test_verify_loop_options_are_the_fields_of_loop_options(tmp_path, monkeypatch):
    from test_automata import reverse_controller
    from tinyalgo.automata import loop
    from tinyalgo.cli import verify as verify_cli
    from tinyalgo.runs.checkpoint import save_checkpoint
    model, given = tmp_path / "model.npz", []

    def spy(controller, task, base, options, **kwargs):
        given.append(options)
        return loop.refine(controller, task, base, options, **kwargs)

    monkeypatch.setattr(verify_cli, "refine", spy)
    save_checkpoint(model, reverse_controller(), dict(config=dict(task="reverse", base=10)))
    assert main(["verify-loop", str(model), "--out", str(tmp_path / "a")]) == 0
    assert given[0] == loop.LoopOptions()                                  # the command's defaults are the record's
    more = ["--complexities", "2", "4", "--instances", "3", "--no-corners", "--rounds", "2", "--seed", "5",
            "--train-updates", "7", "--repairs", "9", "--faithful", "--census", "11", "--complete"]
    assert main(["verify-loop", str(model), "--out", str(tmp_path / "b"), *more]) == 0
    assert given[1] == loop.LoopOptions(complexities=(2, 4), instances=3, corners=False, rounds=2, seed=5,
                                        train_updates=7, repairs=9, faithful=True, census=11, complete=True)
    assert json.loads((tmp_path / "b" / "loop.json").read_text())["options"] == given[1].as_dict()
    fields = {f.replace("_", "-") for f in loop.LoopOptions.__dataclass_fields__} - {"corners"}
    assert all(f"--{f}" in " ".join(more) for f in fields)               # every field is an option


@pytest.fixture(scope="module")
def trained_reverse():
    """A feed-forward reverse controller trained by Q-learning to the paper's solve (about 1.5 s), its run's
    configuration and state."""
    from tinyalgo.qtraining import QTrainer
    from tinyalgo.runs.config import QConfig
    cfg = QConfig(task="reverse", controller="ff", seed=0, budget=2_000_000, confirm_length=0)
    trainer = QTrainer(cfg, log=lambda line: None)
    state = trainer.run()
    assert state.solved_at is not None
    return trainer.controller, cfg, state


def _damaged(trained):
    """The trained controller made to read the digit 3 as a 5: its embedding row for 3 is the one for 5."""
    controller = copying.deepcopy(trained[0])
    controller.params["embed.w"][3] = controller.params["embed.w"][5]
    return controller


@pytest.mark.slow
def test_the_loop_trains_a_network_that_fails_its_counterexample_until_its_machine_is_proved(trained_reverse):
    from tinyalgo.automata.loop import refine
    from tinyalgo.automata.retrain import retrain, solves
    _, cfg, state = trained_reverse
    controller = _damaged(trained_reverse)
    before = {k: v.copy() for k, v in controller.params.items()}
    calls, lines = [], []

    def train(net, counterexamples):
        calls.append(len(counterexamples))
        assert not solves(net, "reverse", 10, concatenate_all(counterexamples)).all()
        return retrain(net, cfg, state, counterexamples, max_updates=500, check_every=25, log=lines.append)

    out = refine(controller, "reverse", 10, small(complexities=(2, 10), instances=20, rounds=4), train=train,
                 log=lines.append)
    first, last = out["rounds"][0], out["rounds"][-1]
    assert first["verdict"] == "counterexample" and not first["network_solves"]
    assert 3 in np.asarray(out["counterexamples"][0]["cells"]).ravel().tolist()       # the digit it misreads
    assert first["training"]["fixed"] and first["training"]["solved_counterexamples"] == 1 and calls[0] == 1
    assert last["verdict"] == "proved" and out["trained"]
    assert any(not np.array_equal(before[k], v) for k, v in controller.params.items())
    again = concatenate_all([rebuild(d) for d in out["counterexamples"]])
    assert solves(controller, "reverse", 10, again).all()
    assert any("counterexamples solved" in line for line in lines)
    stopped = refine(_damaged(trained_reverse), "reverse", 10, small(complexities=(2, 10), instances=20, rounds=4))
    assert stopped["rounds"][-1]["stopped"].startswith("the network fails the counterexample too")
    assert not stopped["trained"] and stopped["report"]["verdict"] == "counterexample"


def concatenate_all(batches):
    from tinyalgo.tasks.instances import concatenate
    return concatenate(batches, Vocabulary(10).NONE)


def test_verify_loop_command_trains_the_network_and_saves_it(trained_reverse, tmp_path, capsys):
    from dataclasses import asdict

    from tinyalgo.automata.machine import load_machine
    from tinyalgo.runs.checkpoint import load_checkpoint, save_checkpoint
    _, cfg, state = trained_reverse
    model = tmp_path / "model.npz"
    save_checkpoint(model, _damaged(trained_reverse), dict(mode="qlearning", config=asdict(cfg), run=asdict(state)))
    common = [str(model), "--complexities", "2", "10", "--instances", "20", "--no-corners", "--rounds", "4"]
    assert main(["verify-loop", *common, "--out", str(tmp_path / "no-training"), "--train-updates", "0"]) == 0
    assert "which the network fails too" in capsys.readouterr().out
    assert not (tmp_path / "no-training" / "checkpoint.npz").exists()
    assert main(["verify-loop", *common, "--out", str(tmp_path / "loop")]) == 0
    text = capsys.readouterr().out
    assert "which the network fails too" in text and "counterexamples solved, the test 100%" in text
    assert "proved after" in text
    trained, extra = load_checkpoint(tmp_path / "loop" / "checkpoint.npz")
    assert extra["retrained"]["source"] == str(model) and extra["config"]["task"] == "reverse"
    machine = load_machine(tmp_path / "loop" / "machine.json")
    assert verify(machine)["verdict"] == "proved"
    counterexample = rebuild(json.loads((tmp_path / "loop" / "loop.json").read_text())["counterexamples"][0])
    from tinyalgo.automata.retrain import solves
    assert solves(trained, "reverse", 10, counterexample).all()
    assert not solves(_damaged(trained_reverse), "reverse", 10, counterexample).any()


def test_a_round_keeps_the_first_proved_machine_else_the_one_replaying_most(monkeypatch):
    from tinyalgo.automata import rounds
    good = reverse_machine(4)
    bad, worse = [m for _, m in mutants(good, np.random.default_rng(3), 50)
                  if verify(m)["verdict"] == "counterexample"][:2]
    offered = []

    def fake(controller, rec, *args, **kwargs):
        for i, (m, replayed) in enumerate(rec):
            offered.append(i)
            yield dict(k=i + 1), m, replayed, None

    monkeypatch.setattr(rounds, "candidates", fake)
    machine, report, how, tried = rounds.select(None, [(bad, 0.9), (good, 0.5), (worse, 1.0)])
    assert machine is good and report["verdict"] == "proved" and how == dict(k=2, replay=0.5) and tried == 2
    assert offered == [0, 1]                               # nothing is verified after a proof
    machine, report, how, tried = rounds.select(None, [(bad, 0.9), (worse, 0.95)])
    assert machine is worse and report["verdict"] == "counterexample" and tried == 2


def without_writes(digits):
    """Figure 4a's machine with its writes of ``digits`` removed."""
    m = reverse_machine(10)
    left = 1 - m.start
    for d in digits:
        m.action[left, d] = m.symbol[left, d] = m.next[left, d] = -1
    return m


def test_a_round_keeps_a_refuted_machine_over_one_the_verifier_could_not_decide(monkeypatch):
    from tinyalgo.automata import rounds
    good = reverse_machine(4)
    undecided, refuted, other = (copying.deepcopy(good) for _ in range(3))
    verdicts = {id(undecided): "not proved", id(refuted): "counterexample", id(other): "counterexample"}
    monkeypatch.setattr(rounds, "candidates", lambda controller, rec, *args, **kwargs: iter(
        [(dict(k=i + 1), m, replayed, None) for i, (m, replayed) in enumerate(rec)]))
    monkeypatch.setattr(rounds, "verify", lambda m, **options: dict(verdict=verdicts[id(m)]))
    machine, report, how, tried = rounds.select(None, [(undecided, 1.0), (refuted, 0.9), (other, 0.8)])
    assert machine is refuted and report["verdict"] == "counterexample" and how["k"] == 2 and tried == 3
    machine, report, how, tried = rounds.select(None, [(other, 0.8), (undecided, 1.0)])
    assert machine is other
    verdicts[id(other)] = "not proved"                      # none refuted: the one replaying most
    assert rounds.select(None, [(other, 0.8), (undecided, 1.0)])[0] is undecided


def test_a_round_offers_its_extractions_in_order_computing_each_kind_of_tag_once(monkeypatch):
    from tinyalgo.automata import loop, rounds
    from tinyalgo.automata.extract import replay
    from tinyalgo.controller import Controller, ControllerConfig
    from tinyalgo.environment import Environment
    config = ControllerConfig.for_environment(Environment("reverse", batch_size=1), "gru", 4)
    controller = Controller(config, rng=np.random.default_rng(0))            # recurrent: every extraction
    rec = rounds.recording_with(controller, "reverse", 10, [2, 4], 10, 0, False, [])
    computed = []
    real = rounds.behaviour_tags

    def counting(rec, controller, depth, tests, seed=0, context="feedback", paths=None):
        computed.append((context, depth, tests))
        return real(rec, controller, depth, tests, seed, context=context, paths=paths)

    monkeypatch.setattr(rounds, "behaviour_tags", counting)
    offered = [(how["context"], how["depth"], how["k"]) for how, *_ in rounds.candidates(controller, rec)]
    wanted = [(v["context"], v["depth"], k) for v, ks in rounds.EXTRACTIONS for k in ks]
    assert offered == wanted and len(offered) == 16 and offered[-1] == ("feedback", 6, 512)
    assert computed == [("feedback", 6, 8), ("previous", 1, 1)]          # the fine k's reuse the first tags
    for _, m, replayed, rows in rounds.candidates(controller, rec):
        assert rows.max() < m.n_states and replayed == replay(m, rec)
    row = dict(round=0, states=2, verdict="proved", extract_seconds=1.0, verify_seconds=0.1,
               extraction=dict(offered and dict(context="feedback", depth=6, k=512), candidates=16))
    assert "k 512, 16 machines verified" in loop._line(row)


def _gru_reverse(units=4, seed=0):
    """A recurrent reverse controller with random weights."""
    from tinyalgo.controller import Controller, ControllerConfig
    from tinyalgo.environment import Environment
    config = ControllerConfig.for_environment(Environment("reverse", batch_size=1), "gru", units)
    return Controller(config, rng=np.random.default_rng(seed))


def test_context_tests_draw_paths_for_every_context_and_behaviour_tags_run_the_given_paths(monkeypatch):
    from tinyalgo.automata import rounds
    from tinyalgo.automata.behaviour import behaviour_tags, context_tests, contexts
    controller = _gru_reverse(8, 2)                 # two contexts in the small recording, five in the grown
    small = rounds.recording_with(controller, "reverse", 10, [2, 4], 5, 0, False, [])
    grown = rounds.recording_with(controller, "reverse", 10, [2, 4, 9], 40, 3, False, [])
    first = context_tests(small, 4, 3, seed=0)
    assert set(first) == {tuple(k) for k in contexts(small)[0].tolist()}
    paths = context_tests(grown, 4, 3, seed=0)
    assert set(paths) == {tuple(k) for k in contexts(grown)[0].tolist()} and set(paths) > set(first)
    again = context_tests(grown, 4, 3, seed=0)
    assert all(np.array_equal(again[key][0], paths[key][0]) for key in paths)      # one seed, the same paths
    assert context_tests(grown, 1, 3) == {}
    plain = behaviour_tags(grown, controller, 4, 3, seed=0)
    assert (behaviour_tags(grown, controller, 4, 3, seed=0, paths=paths) == plain).all()
    import tinyalgo.automata.behaviour as behaviour
    run = []
    real = behaviour.run_tests
    monkeypatch.setattr(behaviour, "run_tests", lambda model, h, fb, tests, *a, **kw: run.append(tests) or
                        real(model, h, fb, tests, *a, **kw))
    behaviour_tags(grown, controller, 4, 3, seed=0, paths=paths)
    longer = [t for t in run if t.shape[1] == 4]
    assert len(longer) == len(paths)
    assert all(any(t is inputs for t in longer) for inputs, _ in paths.values())   # the given paths are run


def test_behaviour_tags_in_the_previous_symbols_context_never_mix_contexts():
    from tinyalgo.automata.behaviour import behaviour_tags, contexts
    from tinyalgo.automata.record import record
    from tinyalgo.controller import make_controller
    from tinyalgo.environment import Environment
    from tinyalgo.runs.config import QConfig
    net = make_controller(Environment("addition", batch_size=1), QConfig(task="addition", units=8), seed=1)
    rec = record(net, "addition", [2, 6], instances=8, seed=0)
    keys, group = contexts(rec, "previous")
    previous = np.full(len(rec), -1)
    previous[rec.next_row[rec.next_row >= 0]] = rec.obs[rec.next_row >= 0, 0]
    assert (keys[group][:, :4] == rec.obs[:, 1:5]).all() and (keys[group][:, 4] == previous).all()
    narrow = behaviour_tags(rec, net, context="previous")
    for t in np.unique(narrow):
        assert len(np.unique(group[narrow == t])) == 1
    from tinyalgo.automata.behaviour import run_tests
    g = np.bincount(group).argmax()                         # the biggest context: tags are its one-step answers
    rows = np.nonzero(group == g)[0]
    answers = run_tests(net.rollout(), rec.state[rows], keys[g][:4], np.unique(rec.obs[rows, 0])[:, None],
                        rec.n_moves, Vocabulary(10).NONE)
    same_answers = (answers[:, None, :] == answers[None, :, :]).all(axis=2)
    assert (same_answers == (narrow[rows][:, None] == narrow[rows][None, :])).all()
    with pytest.raises(ValueError, match="context must be one of feedback, previous"):
        behaviour_tags(rec, net, context="column")


def test_a_counterexample_recorded_five_times_is_five_episodes():
    from test_automata import reverse_controller
    from tinyalgo.automata.rounds import recording_with
    controller = reverse_controller()
    counterexample = rebuild(verify(damaged_reverse_machine())["instance"])
    once = recording_with(controller, "reverse", 10, [2, 6], 5, 0, False, [counterexample])
    often = recording_with(controller, "reverse", 10, [2, 6], 5, 0, False, [counterexample] * 5)
    assert once.first.sum() == 2 * 5 + 1 and often.first.sum() == 2 * 5 + 5
    assert len(often) - len(once) == 4 * (len(once) - len(recording_with(controller, "reverse", 10, [2, 6], 5, 0,
                                                                          False, [])))


def damaged_reverse_machine():
    """Figure 4a's machine with the write of a 3 removed."""
    m = reverse_machine(10)
    left = 1 - m.start
    m.action[left, 3] = m.symbol[left, 3] = m.next[left, 3] = -1
    return m


def test_every_instance_of_a_short_length_is_each_board_once_with_its_answer():
    from tinyalgo.automata.witness import every_instance
    from tinyalgo.tasks.instances import digits_to_int
    adds = every_instance("addition", 10, 1)
    assert len(adds) == 100 and len({tuple(c.ravel()) for c in adds.cells}) == 100
    for cells, targets in zip(adds.cells, adds.targets):
        assert digits_to_int(targets[:2], 10) == int(cells[0, 0]) + int(cells[1, 0])
    muls = every_instance("multiplication", 10, 2)
    assert len(muls) == 800 and len({(tuple(c.ravel()), tuple(t)) for c, t in zip(muls.cells, muls.targets)}) == 800
    assert len(every_instance("reverse", 4, 3)) == 64
    assert every_instance("addition", 10, 2) is None and every_instance("walk", 10, 1) is None
    m = reverse_machine(10)
    assert run_on(m, every_instance("reverse", 10, 3))[0] == [True] * 1000


def test_retraining_a_checkpoint_fixes_its_counterexample(trained_reverse):
    from tinyalgo.automata.retrain import retrain, solves
    _, cfg, state = trained_reverse
    controller = _damaged(trained_reverse)
    counterexample = rebuild(verify(select_machine(controller))["instance"])
    assert not solves(controller, "reverse", 10, counterexample).any()
    out = retrain(controller, cfg, state, [counterexample], max_updates=500, check_every=25)
    assert out["fixed"] and solves(controller, "reverse", 10, counterexample).all()
    with pytest.raises(ValueError, match="max_updates and check_every must be at least 1"):
        retrain(controller, cfg, state, [counterexample], max_updates=0)


def select_machine(controller):
    from tinyalgo.automata.rounds import recording_with, select
    return select(controller, recording_with(controller, "reverse", 10, [2, 10], 20, 0, False, []))[0]


# ------------------------------------------------------------ repairing a machine where it leaves the network
def _reverse_machine_and_rows():
    """The Figure 4a network's machine (proved), its recording and the state of each recorded row."""
    from test_automata import reverse_controller
    from tinyalgo.automata.rounds import candidates, recording_with
    controller = reverse_controller()
    rec = recording_with(controller, "reverse", 10, [2, 10, 40], 40, 0, False, [])
    _, m, _, rows = next(candidates(controller, rec))
    assert verify(m)["verdict"] == "proved" and m.n_states == 2
    return controller, rec, m, rows


@pytest.mark.parametrize("kind", ["next", "answer"])
def test_repair_follows_the_network_back_to_a_proved_machine(kind):
    from tinyalgo.automata.repair import repair
    controller, rec, m, rows = _reverse_machine_and_rows()
    left = 1 - m.start
    damaged = copying.deepcopy(m)
    if kind == "next":
        damaged.next[left, 3] = m.start                   # after writing a 3, back to moving right
    else:
        damaged.symbol[left, 3] = 5                       # a 3 read is written as a 5
    assert verify(damaged)["verdict"] == "counterexample"
    lines = []
    fixed, report, done = repair(damaged, rec, rows, controller, log=lines.append)
    assert report["verdict"] == "proved" and done["stopped"] is None and done["verifications"] == 2
    assert [c["kind"] for c in done["changes"]] == [kind] and len(lines) == 1
    change = done["changes"][0]
    assert (change["state"], change["input"]) == (left, 3)
    assert (fixed.action == m.action).all() and (fixed.symbol == m.symbol).all() and (fixed.next == m.next).all()
    assert fixed.info["repairs"] == 1 and damaged.symbol[left, 3] == (5 if kind == "answer" else 3)   # a copy
    none, report, done = repair(damaged, rec, rows, controller, limit=0)
    assert report["verdict"] == "counterexample" and done == dict(changes=[], stopped="0 changes made", verifications=1)


def test_repair_stops_where_the_network_fails_the_counterexample_too(trained_reverse):
    from tinyalgo.automata.rounds import candidates, recording_with
    from tinyalgo.automata.repair import repair
    controller = _damaged(trained_reverse)                 # reads 3 as 5: its machine writes 5 for a 3
    rec = recording_with(controller, "reverse", 10, [2, 10], 20, 0, False, [])
    _, m, _, rows = next(candidates(controller, rec))
    same, report, done = repair(m, rec, rows, controller)
    assert report["verdict"] == "counterexample" and done["changes"] == []
    assert done["stopped"] == "the network fails the counterexample too"
    assert (same.next == m.next).all() and (same.symbol == m.symbol).all()


def test_a_round_that_proves_no_candidate_repairs_the_one_it_keeps(monkeypatch):
    from tinyalgo.automata import loop, rounds
    controller, rec, m, rows = _reverse_machine_and_rows()
    damaged = copying.deepcopy(m)
    damaged.next[1 - m.start, 3] = m.start
    monkeypatch.setattr(rounds, "candidates", lambda *a, **k: iter([(dict(k=1), damaged, 0.5, rows)]))
    machine, report, how, tried = rounds.select(controller, rec, repairs=10)
    assert report["verdict"] == "proved" and how["repairs"] == 1 and tried == 1
    assert how["replay_repaired"] == 1.0 and how["replay"] == 0.5
    row = dict(round=0, states=machine.n_states, verdict="proved", extract_seconds=1.0, verify_seconds=0.1,
               extraction=dict(how, context="feedback", depth=6, candidates=tried))
    assert loop._line(row).endswith("1 machines verified; 1 transitions repaired)")
    machine, report, how, tried = rounds.select(controller, rec)          # repairs=0: the round's machine as it is
    assert report["verdict"] == "counterexample" and "repairs" not in how


def test_repair_stops_rather_than_lose_recorded_episodes(monkeypatch):
    from tinyalgo.automata import repair as repairing
    controller, rec, m, rows = _reverse_machine_and_rows()
    damaged = copying.deepcopy(m)
    damaged.next[1 - m.start, 3] = m.start
    scores = iter([1.0] + [0.5] * 10)                        # before the repair, then after each option
    monkeypatch.setattr(repairing, "replay", lambda machine, recording: next(scores))
    same, report, done = repairing.repair(damaged, rec, rows, controller)
    assert report["verdict"] == "counterexample" and done["changes"] == [] and (same.next == damaged.next).all()
    assert done["stopped"].startswith("every change would replay fewer recorded episodes than 95.00%")


def test_followed_steps_end_at_each_episodes_departure():
    from tinyalgo.automata.extract import departures, followed
    controller, rec, m, rows = _reverse_machine_and_rows()
    assert followed(m, rec).all()
    damaged = copying.deepcopy(m)
    damaged.next[1 - m.start, 3] = m.start
    kept, leaves = followed(damaged, rec), departures(damaged, rec)
    assert not kept[leaves[leaves >= 0]].any() and kept.sum() < len(rec)
    starts = np.nonzero(rec.first)[0]
    for episode, row in zip(leaves, starts):            # every step before the departure is followed
        while row >= 0 and row != episode:
            assert kept[row]
            row = rec.next_row[row]


def test_a_faithful_repair_never_answers_a_followed_recorded_step_otherwise(monkeypatch):
    from tinyalgo.automata import repair as repairing
    controller, rec, m, rows = _reverse_machine_and_rows()
    damaged = copying.deepcopy(m)
    damaged.next[1 - m.start, 3] = m.start                 # the change back follows the network everywhere
    fixed, report, done = repairing.repair(damaged, rec, rows, controller, faithful=True)
    assert report["verdict"] == "proved" and len(done["changes"]) == 1
    assert repairing.followed(fixed, rec)[repairing.followed(damaged, rec)].all()
    real, calls = repairing.followed, []

    def losing(machine, recording):                        # every change loses one followed step
        kept = real(machine, recording)
        calls.append(1)
        if len(calls) > 1:
            kept[np.nonzero(kept)[0][0]] = False
        return kept

    monkeypatch.setattr(repairing, "followed", losing)
    same, report, done = repairing.repair(damaged, rec, rows, controller, faithful=True)
    assert report["verdict"] == "counterexample" and done["changes"] == [] and (same.next == damaged.next).all()
    assert done["stopped"].startswith("every change would answer a recorded step otherwise than the network")
    assert repairing.repair(damaged, rec, rows, controller)[1]["verdict"] == "proved"    # not faithful: repaired


def test_a_round_repairs_its_candidates_best_first_until_one_is_proved(monkeypatch):
    from tinyalgo.automata import loop, rounds
    controller, rec, m, rows = _reverse_machine_and_rows()
    left = 1 - m.start
    twice, once = copying.deepcopy(m), copying.deepcopy(m)
    twice.next[left, 3] = twice.next[left, 7] = m.start       # two changes to repair
    once.symbol[left, 4] = 6                                   # one
    offered = [(dict(k=1), twice, 0.9, rows), (dict(k=2), once, 0.8, rows)]
    monkeypatch.setattr(rounds, "candidates", lambda *a, **k: iter(offered))
    machine, report, how, tried = rounds.select(controller, rec, repairs=3)
    assert report["verdict"] == "proved" and how["k"] == 1 and how["repairs"] == 2 and tried == 2
    machine, report, how, tried = rounds.select(controller, rec, repairs=1)       # none proved: as without repairs
    assert machine is twice and report["verdict"] == "counterexample" and how["k"] == 1 and "repairs" not in how
    # the round's one change went to the best machine: the second, one change from a proof, is not repaired
    assert how["repaired_unproved"] == [dict(k=1, context=None, repairs=1, stopped="1 changes made")]
    assert report["instance"] == verify(twice)["instance"]
    row = dict(round=0, states=machine.n_states, verdict="counterexample", length=report["length"],
               network_solves=True, extract_seconds=1.0, verify_seconds=0.1,
               extraction=dict(how, context="feedback", depth=6, candidates=tried))
    assert loop._line(row).endswith("2 machines verified; 1 repaired without a proof)")


def test_a_rounds_repairs_share_one_budget_of_changes(monkeypatch):
    from tinyalgo.automata import rounds
    controller, rec, m, rows = _reverse_machine_and_rows()
    damaged = copying.deepcopy(m)
    damaged.next[1 - m.start, 3] = m.start
    offered = [(dict(k=k), damaged, 0.9 - k / 10, rows) for k in (1, 2, 3, 4)]
    monkeypatch.setattr(rounds, "candidates", lambda *a, **k: iter(offered))
    limits, made = [], iter([3, 4, 2])

    def fake_repair(machine, recording, machine_rows, network, limit, **options):
        limits.append(limit)
        changes = [dict()] * min(limit, next(made))
        return machine, verify(machine), dict(changes=changes, stopped=f"{len(changes)} changes made")

    monkeypatch.setattr(rounds, "repair", fake_repair)
    machine, report, how, tried = rounds.select(controller, rec, repairs=9)
    assert limits == [9, 6, 2] and tried == 4 and report["verdict"] == "counterexample"
    assert [a["repairs"] for a in how["repaired_unproved"]] == [3, 4, 2]        # the fourth: no change left


# ------------------------------------------------------------ the census of a counterexample's length
def test_numbered_instances_enumerate_every_instance_in_any_chunks():
    from tinyalgo.automata.witness import count_of_length, every_instance, numbered_instances
    for task, n in (("multiplication", 2), ("addition3", 1), ("copy", 3)):
        whole, count = every_instance(task, 10, n), count_of_length(task, 10, n)
        assert len(whole) == count
        parts = [numbered_instances(task, 10, n, np.arange(i, min(i + 77, count))) for i in range(0, count, 77)]
        joined = concatenate_all(parts)
        assert (joined.cells == whole.cells).all() and (joined.targets == whole.targets).all()
    assert count_of_length("addition3", 10, 2) == 10 ** 6 and count_of_length("walk", 10, 3) is None


@pytest.mark.slow
def test_the_census_finds_every_instance_of_a_length_the_machine_fails_and_the_network_solves(monkeypatch):
    from test_automata import reverse_controller
    from tinyalgo.automata import census as census_module
    controller, m = reverse_controller(), damaged_reverse_machine()
    monkeypatch.setattr(census_module, "CHUNK", 7)                  # batches of 7: the chunking is exercised
    c = census_module.census(m, controller, 2, limit=1000)
    has_3 = sum(3 in (a, b) for a in range(10) for b in range(10))  # 19 boards of two digits hold a 3
    assert (c["tested"], c["exhaustive"], c["machine_fails"], c["network_solves"], c["recorded"]) == (100, True, has_3,
                                                                                                      has_3, has_3)
    assert all((cells == 3).any() for cells in c["instances"].cells)
    assert not any(run_on(m, c["instances"])[0])
    sampled = census_module.census(m, controller, 4, limit=500, seed=1)
    assert (sampled["tested"], sampled["exhaustive"]) == (500, False) and sampled["machine_fails"] > 100
    capped = census_module.census(m, controller, 2, limit=1000, recorded=10)
    assert capped["recorded"] == len(capped["instances"]) == 10 and capped["network_solves"] == has_3
    clean = census_module.census(reverse_machine(10), controller, 3)
    assert clean["machine_fails"] == 0 and clean["instances"] is None and clean["tested"] == 1000


def describe_reverse():
    from tinyalgo.automata.witness import describe, numbered_instances
    return describe("reverse", numbered_instances("reverse", 10, 2, [7]))


def last_arguments(monkeypatch, module, name) -> list:
    """Replace ``module.name`` by a spy that calls it and lists the last positional argument of each call."""
    seen, real = [], getattr(module, name)

    def spy(*args, **kwargs):
        seen.append(args[-1])
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return seen


def test_the_loop_records_the_census_failures_in_its_next_round(monkeypatch):
    from test_automata import reverse_controller
    from tinyalgo.automata import loop
    controller = reverse_controller()
    seen = last_arguments(monkeypatch, loop, "recording_with")
    damaged = damaged_reverse_machine()
    out = loop.refine(controller, "reverse", 10, small(complexities=(2,), instances=2, rounds=2, census=1000),
                      machine=damaged)
    c = out["rounds"][0]["census"]
    assert c == dict(length=1, tested=10, exhaustive=True, machine_fails=1, network_solves=1, recorded=1)
    failing = [b for b in seen[0] if len(b) == 1 and not run_on(damaged, b)[0][0]]
    assert len(failing) == 2 + 1          # the counterexample twice (instances=2) and the census' one
    plain = loop.refine(controller, "reverse", 10, small(complexities=(2,), instances=2, rounds=2), machine=damaged)
    assert "census" not in plain["rounds"][0]


# ------------------------------------------------------------ where a machine leaves the network
def test_departures_are_the_first_rows_where_the_machine_answers_otherwise():
    from test_automata import reverse_controller
    from tinyalgo.automata.extract import departures, replay
    from tinyalgo.automata.rounds import recording_with
    rec = recording_with(reverse_controller(), "reverse", 10, [2, 6], 20, 0, False, [])
    assert (departures(reverse_machine(10), rec) == -1).all()
    damaged = damaged_reverse_machine()
    leaves, firsts = departures(damaged, rec), np.nonzero(rec.first)[0]
    for episode, row in enumerate(firsts):
        path = []
        while row >= 0:
            path.append(row)
            row = rec.next_row[row]
        reads = rec.obs[path, 0]
        turn = int(np.argmax(reads == Vocabulary(10).P))
        threes = [r for r, x in zip(path[turn + 1:], reads[turn + 1:]) if x == 3]
        assert leaves[episode] == (threes[0] if threes else -1)
    assert replay(damaged, rec) == (leaves < 0).mean() < 1
