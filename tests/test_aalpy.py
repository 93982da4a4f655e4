"""AALpy's learners on tinyalgo's systems (tinyalgo/automata/aalpy_sul.py,
aalpy_learn.py; the aalpy extra, skipped without it): a committed proved
machine wrapped as a system under learning is learned back, equivalent, and
proved by the verifier; a damaged one is learned as damaged and refuted; the
network as a SUL answers as it acts in the environment; budgets hold; the
command refuses bad input in one line."""
import random
from collections import deque
from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("aalpy")

from tinyalgo.automata import aalpy_sul  # noqa: E402
from tinyalgo.automata.aalpy_learn import ORACLES, learn  # noqa: E402
from tinyalgo.automata.aalpy_sul import (Budget, MachineSteps, NetworkSteps, alphabet, label,  # noqa: E402
                                         to_machine, to_mealy)
from tinyalgo.automata.machine import load_machine  # noqa: E402
from tinyalgo.automata.record import record  # noqa: E402
from tinyalgo.automata.verify import verify  # noqa: E402
from tinyalgo.cli.main import main  # noqa: E402
from tinyalgo.controller import Controller  # noqa: E402
from tinyalgo.controller_config import ControllerConfig  # noqa: E402
from tinyalgo.environment import Environment  # noqa: E402
from tinyalgo.symbols import Vocabulary  # noqa: E402

PROOFS = "figures/automata/fresh_seeds/proofs"


def committed(name):
    return load_machine(f"{PROOFS}/{name}/machine.json")


def difference(a, b, inputs):
    """A word on which machines ``a`` and ``b`` (run without a controller)
    answer differently, shortest first; None if they are equivalent."""
    sa, sb = MachineSteps(a), MachineSteps(b)
    seen, todo = {(a.start, b.start)}, deque([(a.start, b.start, ())])
    while todo:
        p, q, word = todo.popleft()
        for char in inputs:
            sa.state, sb.state = p, q
            if sa.step(char) != sb.step(char):
                return word + (char,)
            if (sa.state, sb.state) not in seen:
                seen.add((sa.state, sb.state))
                todo.append((sa.state, sb.state, word + (char,)))
    return None


@pytest.mark.parametrize("name,learner,oracle", [("reverse-s100", "lstar", "w-method"),
                                                 ("reverse-s100", "kv", "random-walk"),
                                                 ("walk-s100", "kv", "state-prefix"),
                                                 ("walk-s100", "lstar", "random-walk")])
def test_a_committed_machine_is_learned_back_equivalent_and_proved(name, learner, oracle):
    m = committed(name)
    budget = Budget(200_000, 120)
    got = learn(MachineSteps(m, budget), budget, learner, oracle, seed=0)
    learned, inputs = got["machine"], alphabet(m.task, m.base)
    assert got["stopped"] == "learned" and learned.task == m.task and learned.n_moves == m.n_moves
    assert difference(learned, m, inputs) is None
    assert learned.n_states <= m.n_states                   # AALpy's is minimal; tinyalgo's may not be
    assert verify(learned)["verdict"] == "proved"
    used = got["membership_steps"] + got["equivalence_steps"]
    assert 0 < used <= 200_000 and got["membership_queries"] > 0


def test_a_damaged_machine_is_learned_as_damaged_and_refuted_on_a_board_the_original_solves():
    m = committed("reverse-s100")
    bad = replace(m, symbol=m.symbol.copy())
    s, x = np.argwhere(m.symbol == 3)[0]                    # a recorded write of 3 ...
    bad.symbol[s, x] = 5                                    # ... writes 5 instead
    budget = Budget(200_000, 120)
    got = learn(MachineSteps(bad, budget), budget, "kv", "state-prefix", seed=1)
    assert difference(got["machine"], bad, alphabet(m.task, m.base)) is None
    report = verify(got["machine"])
    assert report["verdict"] == "counterexample" and 3 in report["instance"]["cells"][0]


@pytest.mark.parametrize("task,core", [("copy", "gru"), ("walk", "ff")])
def test_the_network_as_a_sul_answers_as_it_acts_in_the_environment(task, core):
    env = Environment(task, batch_size=1)
    cfg = ControllerConfig(obs_sizes=env.obs_sizes, n_actions=2 * env.n_moves, n_symbols=Vocabulary(10).size,
                           core=core, units=16)
    controller = Controller(cfg, rng=3)
    rec = record(controller, task, [4, 7], instances=6, seed=5)
    chars = Vocabulary(10).chars
    net = NetworkSteps(controller, task, 10)
    for row in np.nonzero(rec.first)[0]:
        net.reset()
        while row >= 0:
            assert net.feedback == tuple(rec.obs[row, 1:5])
            assert net.step(chars[rec.obs[row, 0]]) == label(rec.action[row], rec.symbol[row], env.n_moves, chars)
            row = rec.next_row[row]


def test_a_machine_with_equivalent_states_reaches_aalpy_minimised_so_the_w_method_can_run():
    from dataclasses import replace
    m = committed("addition-s100")
    x = int(np.nonzero(m.next[m.start] >= 0)[0][0])
    q, twin = int(m.next[m.start, x]), m.n_states           # a copy of state q, entered from the start on x
    grow = lambda t: np.concatenate([t, t[q:q + 1]])  # noqa: E731
    nxt = grow(m.next)
    nxt[m.start, x] = twin
    doubled = replace(m, action=grow(m.action), symbol=grow(m.symbol), next=nxt, cluster=grow(m.cluster),
                      feedback=grow(m.feedback), visits=grow(m.visits))
    inputs = alphabet(m.task, m.base)
    assert difference(doubled, m, inputs) is None
    mealy = to_mealy(doubled, inputs)
    assert len(mealy.states) == len(to_mealy(m, inputs).states)
    assert mealy.compute_characterization_set() is not None          # AALpy's W-method needs it


def test_conversions_keep_the_machine_and_leave_unshown_symbols_unknown():
    m = committed("walk-s100")
    inputs = alphabet(m.task, m.base)
    back = to_machine(to_mealy(m, inputs), m.task, m.base, m.n_moves)
    assert difference(back, m, inputs) is None
    shown = [Vocabulary(m.base).chars.index(c) for c in inputs]
    hidden = [x for x in range(back.n_inputs) if x not in shown]
    assert (back.action[:, shown] >= 0).all() and (back.action[:, hidden] == -1).all()


@pytest.mark.parametrize("oracle", ORACLES)
def test_the_budget_stops_learning_within_its_steps_and_leaves_pythons_random_as_it_was(oracle):
    random.seed(123)
    expected = random.random()
    random.seed(123)
    m = committed("walk-s100")
    budget = Budget(300, 60)
    got = learn(MachineSteps(m, budget), budget, "lstar", oracle, seed=0)
    assert got["stopped"].startswith("budget") and budget.spent == "steps"
    assert got["membership_steps"] + got["equivalence_steps"] == 300
    assert random.random() == expected


def test_without_seconds_a_run_depends_on_its_steps_alone_and_with_them_it_stops_in_time():
    from tinyalgo.experiments import aalpy_table
    m = committed("walk-s100")
    runs = []
    for _ in range(2):
        budget = Budget(300)
        got = learn(MachineSteps(m, budget), budget, "kv", "random-walk", seed=0)
        runs.append((got["membership_steps"], got["equivalence_steps"], got["rounds"], budget.spent))
    assert runs[0] == runs[1] and runs[0][3] == "steps"
    budget = Budget(10 ** 9, 0.0)
    got = learn(MachineSteps(m, budget), budget, "lstar", "w-method", seed=0)
    assert budget.spent == "seconds" and got["stopped"].startswith("budget")
    assert "300 network steps (membership and equivalence queries together) (no wall-clock limit)" \
        in aalpy_table.markdown([], 300)
    assert "or 60 s, whichever ends first" in aalpy_table.markdown([], 300, 60)


def test_the_command_refuses_bad_input_in_one_line(tmp_path, capsys, monkeypatch):
    assert main(["experiment", "aalpy", "--networks", str(tmp_path / "nowhere-s1"), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "no checkpoint.npz there" in err and "\n" not in err
    monkeypatch.setattr(aalpy_sul, "require_aalpy", lambda: (_ for _ in ()).throw(ImportError(aalpy_sul.MISSING)))
    assert main(["experiment", "aalpy", "--networks", str(tmp_path), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "pip install -e '.[aalpy]'" in err and "\n" not in err


def test_a_networks_rows_say_what_the_verifier_and_the_oracles_found(tmp_path):
    from tinyalgo.experiments import aalpy_table
    from tinyalgo.automata.aalpy_learn import compare
    env = Environment("copy", batch_size=1)
    cfg = ControllerConfig(obs_sizes=env.obs_sizes, n_actions=4, n_symbols=Vocabulary(10).size, core="ff", units=8)
    untrained = Controller(cfg, rng=0)                     # fails copy: its machine is refuted
    rows = compare(untrained, "copy", 10, committed("copy-s100"), steps=3000, seconds=30, verify_seconds=20,
                   complexity=5, instances=4, log=lambda _: None)
    assert [(r["learner"], r["oracle"]) for r in rows] == [(a, o) for a in ("lstar", "kv") for o in ORACLES]
    learned = [r for r in rows if r["verdict"] != "no hypothesis"]
    assert learned and all(r["verdict"] == "counterexample" for r in learned)
    for r in learned:
        assert r["network_solves_cex"] is False and r["tinyalgo_solves_cex"] is True
        assert r["cexes_tinyalgo_agrees"] + r["cexes_tinyalgo_recorded"] + r["cexes_tinyalgo_unrecorded"] \
            == r["oracle_cexes"]
        assert r["membership_steps"] + r["equivalence_steps"] <= 3000
    assert all(r["oracle_on_tinyalgo"] != "none" for r in rows)   # the network does not act as the copy machine
    for r in rows:
        r.update(seed=7, command="tinyalgo experiment aalpy ...")
    aalpy_table.write(rows, str(tmp_path), 3000, 30)
    again = aalpy_table.read_rows(str(tmp_path))
    assert [(r["learner"], r["oracle"], r["verdict"]) for r in again] == \
        [(r["learner"], r["oracle"], r["verdict"]) for r in rows]
    text = (tmp_path / "README.md").read_text()
    n = len(learned)
    assert "    tinyalgo experiment aalpy ..." in text and f"| copy | {n} / {n} | 0 | {n} |" in text


def _network(root, name, task="copy", rng=0):
    """A run folder ``root``/``name`` with an untrained controller of ``task``'s checkpoint.npz."""
    from tinyalgo.runs.checkpoint import save_checkpoint
    env = Environment(task, batch_size=1)
    cfg = ControllerConfig(obs_sizes=env.obs_sizes, n_actions=2 * env.n_moves, n_symbols=Vocabulary(10).size,
                           core="ff", units=8)
    folder = root / name
    folder.mkdir(parents=True)
    save_checkpoint(str(folder / "checkpoint.npz"), Controller(cfg, rng=rng), dict(config=dict(task=task, base=10)))
    return str(folder)


def _kept(root, name, machine_of, files=("machine.json",)):
    """A kept proof folder ``root``/``name`` holding the committed proof ``machine_of``'s ``files``."""
    import shutil
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    for f in files:
        shutil.copy(f"{PROOFS}/{machine_of}/{f}", folder / f)
    return folder


def _no_learning(monkeypatch):
    from tinyalgo.experiments import aalpy_table

    def learning(*args, **kwargs):
        raise AssertionError("the learning started")
    monkeypatch.setattr(aalpy_table, "compare", learning)


HEADER = ("task,seed,learner,oracle,states,verdict,cex_length,network_solves_cex,tinyalgo_solves_cex,stopped,rounds,"
          "membership_queries,membership_steps,equivalence_queries,equivalence_steps,seconds,verify_seconds,"
          "agree_step,agree_instance,oracle_cexes,cexes_tinyalgo_agrees,cexes_tinyalgo_recorded,"
          "cexes_tinyalgo_unrecorded,oracle_on_tinyalgo,tinyalgo_states,tinyalgo_verdict,tinyalgo_seconds,command")
ROW = ("walk,7,lstar,w-method,0,no hypothesis,,,,budget in membership queries,0,709,2000,0,0,0.3,0,nan,nan,0,0,0,0,"
       '"step 1, a recorded pair",1,proved,54.9,tinyalgo experiment aalpy')


@pytest.mark.parametrize("text,says", [
    ("foo,bar\n1,2\n", "line 1: it lacks 28 of the table's columns (task, seed, learner, ...)"),
    (HEADER.replace("task,", "tusk,", 1) + "\n" + ROW + "\n", "line 1: it lacks 1 of the table's columns (task)"),
    (HEADER + "\n" + ROW.replace(",709,", ",x,") + "\n", "line 2, column membership_queries: found 'x'"),
    (HEADER + "\n" + ROW.replace(",709,", "," + "9" * 5000 + ",") + "\n", "line 2, column membership_queries"),
    (HEADER + "\n" + ROW.replace(",nan,", ",1.5,", 1) + "\n", "line 2, column agree_step: found '1.5'"),
    (HEADER + "\n" + ROW + "\n" + 'walk,7,"unterminated\n', "line 3: not CSV (unexpected end of data)"),
    (HEADER + "\n" + ROW + ",extra\n", "line 2: 29 fields; allowed: 28"),
    (HEADER + "\n" + "copy,5,lstar\n", "line 2: 3 fields; allowed: 28"),
    ("\xb9\x9c\xd1".encode("latin-1"), "not UTF-8 text"),
])
def test_a_results_csv_that_cannot_be_read_is_refused_before_any_learning_and_left_as_it_was(
        tmp_path, capsys, monkeypatch, text, says):
    network = _network(tmp_path / "runs", "copy-full-s3")
    out = tmp_path / "out"
    out.mkdir()
    data = text if isinstance(text, bytes) else text.encode()
    (out / "results.csv").write_bytes(data)
    _no_learning(monkeypatch)
    assert main(["experiment", "aalpy", "--networks", network, "--proofs", str(tmp_path / "none"),
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"tinyalgo: error: {out / 'results.csv'}") and says in err and "\n" not in err
    assert (out / "results.csv").read_bytes() == data and not (out / "README.md").exists()


def test_a_results_csv_with_a_byte_order_mark_is_read_as_without_one():
    import shutil
    import tempfile
    from tinyalgo.experiments import aalpy_table
    committed_rows = aalpy_table.read_rows("figures/automata/aalpy")          # the committed table reads back
    assert len(committed_rows) > 100 and committed_rows[0]["task"]
    with tempfile.TemporaryDirectory() as out:
        shutil.copy("figures/automata/aalpy/results.csv", out)
        path = f"{out}/results.csv"
        with open(path, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(b"\xef\xbb\xbf" + data)
        assert aalpy_table.read_rows(out) == committed_rows


@pytest.mark.parametrize("machine_of,files,says", [
    ("reverse-s100", ("machine.json",), "is a machine of task 'reverse', not of task 'copy'"),
    ("copy-s102", ("machine.json", "loop.json"), "its loop.json is of copy seed 102 in base 10; the network is copy"
                                                 " seed 999 in base 10"),
])
def test_every_networks_proof_is_checked_before_the_first_learning_run(tmp_path, capsys, monkeypatch, machine_of,
                                                                      files, says):
    first = _network(tmp_path / "runs", "copy-full-s102")
    second = _network(tmp_path / "runs", "copy-full-s999")
    _kept(tmp_path / "proofs", "copy-s102", "copy-s102")
    _kept(tmp_path / "proofs", "copy-s999", machine_of, files)
    _no_learning(monkeypatch)
    out = tmp_path / "out"
    assert main(["experiment", "aalpy", "--networks", first, second, "--proofs", str(tmp_path / "proofs"),
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "copy-s999" in err and says in err and "\n" not in err
    assert not (out / "results.csv").exists()


def test_a_proof_of_another_network_than_the_one_given_is_refused(tmp_path, capsys, monkeypatch):
    import hashlib
    import json
    from tinyalgo.experiments import aalpy_table
    network = _network(tmp_path / "runs", "copy-full-s102")
    proof = _kept(tmp_path / "proofs", "copy-s102", "copy-s102", ("machine.json", "loop.json", "agreement.json"))
    _no_learning(monkeypatch)
    out = tmp_path / "out"
    assert main(["experiment", "aalpy", "--networks", network, "--proofs", str(tmp_path / "proofs"),
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{proof}: its proof is of another network than {network}/checkpoint.npz" in err and "\n" not in err
    assert "agreement.json says copy-full-s102/checkpoint.npz" in err and not out.exists()
    agreement = json.loads((proof / "agreement.json").read_text())          # measured on this very network
    agreement["network_sha256"] = hashlib.sha256((tmp_path / "runs/copy-full-s102/checkpoint.npz").read_bytes()
                                                 ).hexdigest()
    (proof / "agreement.json").write_text(json.dumps(agreement))
    rows, plan = aalpy_table.prepare([(network, None, "copy", 10)], [str(tmp_path / "proofs")], str(out))
    assert rows == [] and plan[0]["proved"] is not None and plan[0]["ref"]["tinyalgo_verdict"] == "proved"
    retrained = _network(tmp_path / "loops", "loop-copy-s102", rng=1)    # a verify-loop that retrained its network
    _kept(tmp_path / "loops", "loop-copy-s102", "copy-s102", ("machine.json", "loop.json"))
    assert main(["experiment", "aalpy", "--networks", network, "--proofs", str(tmp_path / "loops"),
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{retrained}: its proof is of another network" in err and "its retrained checkpoint.npz" in err
    assert aalpy_table.prepare([(retrained, None, "copy", 10)], [str(tmp_path / "loops")], str(out))[1][0]["proved"]
