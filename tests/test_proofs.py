"""Proofs that say what they know: machines checked against their task, verdicts that name what stopped
them, certificates that a separate checker accepts (and rejects when one fact is removed or changed), and
the verifier's task models run against the environment step for step."""
from __future__ import annotations

import copy as copying
import json
import re
from pathlib import Path

import numpy as np
import pytest

from test_verify import CORRECT, R, addition_machine, copy_machine, machine, mutants, reverse_machine

from tinyalgo.automata.agent import MachineAgent
from tinyalgo.automata.check import CertificateError, Steps, check_certificate, read_certificate
from tinyalgo.automata.machine import MachineError, load_machine
from tinyalgo.automata.offsets import FAR
from tinyalgo.automata.product import Config, Search
from tinyalgo.automata.rules import SPECS, board_symbols, check_machine, make, ranges
from tinyalgo.automata.verify import verify
from tinyalgo.automata.witness import random_instances, run_on
from tinyalgo.cli.main import main
from tinyalgo.environment import ALL_WRITTEN, RUNNING, WRONG_WRITE, Environment
from tinyalgo.symbols import Vocabulary

FIGURES = Path(__file__).resolve().parent.parent / "figures" / "automata"


# ------------------------------------------------------------ a machine fits the task it names
def _relabelled(m, **changes):
    out = copying.deepcopy(m)
    for k, v in changes.items():
        setattr(out, k, v)
    return out


def _bad_machines():
    four_moves = _relabelled(copy_machine(10), n_moves=4)
    outside = copy_machine(10)
    outside.symbol[0, 3] = 40
    reverse_as_copy = _relabelled(reverse_machine(10), task="copy")
    other_base = _relabelled(copy_machine(10), base=8)
    addition_as_multiplication = _relabelled(addition_machine(10), task="multiplication")
    return {"declares 4 moves; task copy has 2": four_moves, "symbol[0][3] = 40": outside,
            "recorded reading 'p', which no board of task copy": reverse_as_copy,
            "the vocabulary of base 8 has 15": other_base,
            "recorded reading 'e', which no board of task multiplication": addition_as_multiplication}


@pytest.mark.parametrize("message", sorted(_bad_machines()))
def test_a_machine_that_does_not_fit_its_task_is_refused_before_any_search(message, tmp_path, capsys):
    m = _bad_machines()[message]
    with pytest.raises(MachineError, match=re.escape(message)):
        verify(m)
    path = tmp_path / "m.json"
    m.save(path)
    assert main(["verify", str(path)]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and len(captured.err.strip().splitlines()) == 1 and not captured.out


def test_the_symbols_a_machine_may_read_are_those_the_tasks_boards_show():
    rng = np.random.default_rng(0)
    for task_name in SPECS:
        task = make(task_name, 10)
        shown = set()
        for n in (1, 2, 5):
            env = Environment(task, batch_size=64, base=10)
            env.load(random_instances(task_name, 10, n, 64, rng))
            obs = env.observe()
            for _ in range(40):                         # a random walk of the heads, which never writes
                shown |= set(obs[:, 0].tolist())
                obs = env.step(rng.integers(0, task.n_moves, size=64), np.zeros(64, np.int64)).obs
        assert shown <= board_symbols(task_name, 10) and set(range(10)) <= shown, task_name
        assert task.n_moves == (2 if task_name in ("copy", "reverse") else 4)


def test_every_committed_machine_fits_its_task():
    for name in ("copy-gru-s0", "reverse-ff-s0", "walk-ff-s0", "addition-gru-s0", "addition3-gru-s1",
                 "multiplication-gru-s0"):
        check_machine(load_machine(f"{FIGURES}/{name}.json"))


# ------------------------------------------------------------ every length, one digit included
def addition3_wrong_on_one_digit(base=3):
    """The 3-number carry machine, except that after the first column it writes the final carry plus one:
    wrong on every one-digit board, right on every longer one."""
    m = addition_machine(base, rows=3)
    E = Vocabulary(base).E
    S = m.n_states
    # states of the first column: the start, and the states it reaches before its first write
    frontier, column = [m.start], {}
    while frontier:
        s = frontier.pop()
        if s in column:
            continue
        column[s] = S + len(column)
        for x in range(base):
            a = m.action[s, x]
            if a >= 0 and a < m.n_moves:
                frontier.append(int(m.next[s, x]))
    after = {}                                       # the states the first column's writes lead to, copied
    for s in column:
        for x in range(base):
            if m.action[s, x] >= m.n_moves:
                q = int(m.next[s, x])
                after.setdefault(q, S + len(column) + len(after))
    n = S + len(column) + len(after)
    tables = [np.full((n, m.n_inputs), -1) for _ in range(3)]
    for t, src in zip(tables, (m.action, m.symbol, m.next)):
        t[:S] = src
    for s, c in column.items():
        for t, src in zip(tables, (m.action, m.symbol, m.next)):
            t[c] = src[s]
        for x in range(base):
            q = int(m.next[s, x])
            tables[2][c, x] = column.get(q, q) if m.action[s, x] < m.n_moves else after[q]
    for q, c in after.items():
        for t, src in zip(tables, (m.action, m.symbol, m.next)):
            t[c] = src[q]
        tables[1][c, E] = (m.symbol[q, E] + 1) % base
    out = _relabelled(m, action=tables[0], symbol=tables[1], next=tables[2], start=column[m.start],
                      raw=np.stack([np.zeros(n), *np.zeros((4, n)), np.arange(n)], 1).astype(np.int64),
                      cluster=np.zeros(n, np.int64), feedback=np.zeros((n, 4), np.int64), visits=np.ones(n, np.int64))
    return out


def test_three_number_addition_is_verified_from_one_digit_boards():
    m = addition3_wrong_on_one_digit()
    rng = np.random.default_rng(0)
    one = random_instances("addition3", 3, 1, 30, rng)
    two = random_instances("addition3", 3, 2, 200, rng)
    assert not any(run_on(m, one)[0]) and all(run_on(m, two)[0])
    r = verify(m)
    assert r["verdict"] == "counterexample" and r["length"] == 1 and r["shortest"], r
    proved = verify(addition_machine(3, rows=3))
    assert proved["verdict"] == "proved" and proved["smallest"] == 1 and "length >= 1" in proved["established"]


# ------------------------------------------------------------ what "not proved" says
def test_not_proved_says_which_budget_stopped_the_search():
    r = verify(CORRECT["walk"](), max_configs=50, max_window=1)
    assert r["verdict"] == "not proved"
    assert r["undecided"][0]["cause"] == "budget" and "50 configurations ran out" in r["reasons"][0]
    assert "ran out of its budget" in r["summary"]
    r = verify(CORRECT["walk"](), max_seconds=1e-9, max_window=3)
    assert r["verdict"] == "not proved" and r["undecided"][-1]["budget"] == "time" and r["seconds"] < 5
    assert "s ran out" in r["reasons"][-1]


def counting_copy_machine(base, wrong_at):
    """Copy, counting the digits written: the ``wrong_at``-th is written wrong (then it copies on)."""
    t = {}
    for k in range(wrong_at + 1):
        for d in range(base):
            w = (d + 1) % base if k == wrong_at - 1 else d
            t[(k, d)] = (R, w, min(k + 1, wrong_at))
    return machine("copy", base, 2, t)


def test_a_machine_wrong_only_at_long_lengths_gets_its_counterexample():
    m = counting_copy_machine(3, wrong_at=100)           # beyond the lengths N0..N0 + 47 tried first
    r = verify(m, max_window=1)
    assert r["verdict"] == "counterexample" and r["length"] == 100 and r["seconds"] < 60, r
    assert not r["shortest"] and "not every shorter length was proved" in r["note"]


def test_not_proved_names_the_failing_abstract_path_it_could_not_reproduce(monkeypatch):
    import tinyalgo.automata.verify as verifier
    monkeypatch.setattr(verifier, "_concretise", lambda *a, **k: None)
    monkeypatch.setattr(verifier, "_sample", lambda *a, **k: None)
    r = verify(counting_copy_machine(3, wrong_at=4), max_window=1)
    assert r["verdict"] == "not proved" and r["undecided"][0]["cause"] == "failing path"
    assert r["undecided"][0]["steps"] >= 4 and r["undecided"][0]["failure"] == "wrong write"
    assert "failing abstract path of" in r["summary"] and "no concrete instance" in r["reasons"][0]


# ------------------------------------------------------------ certificates
def certified(m):
    r = verify(m, certify=True, max_window=1)
    assert r["verdict"] == "proved", r
    return json.loads(json.dumps(r["certificate"]))


@pytest.mark.parametrize("task", sorted(CORRECT))
def test_the_checker_accepts_the_certificate_of_every_proof(task):
    m = CORRECT[task]()
    got = check_certificate(m, certified(m))
    assert got["configurations"] > 0 and got["smallest"] == 1


@pytest.mark.parametrize("name", ["copy-gru-s0", "reverse-ff-s0", "walk-ff-s0", "addition-gru-s0",
                                  "multiplication-gru-s0"])
def test_the_checker_accepts_the_committed_machines_proofs(name, tmp_path, capsys):
    path = f"{FIGURES}/{name}.json"
    cert = tmp_path / "c.json.gz"
    assert main(["verify", path, "--certificate", str(cert)]) == 0
    assert read_certificate(cert)["task"] == load_machine(path).task
    assert main(["check-proof", path, str(cert)]) == 0
    assert "accepted: every instance of every length >= 1" in capsys.readouterr().out


def test_removing_any_configuration_is_rejected():
    m = reverse_machine(4)
    cert = certified(m)
    for si, section in enumerate(cert["sections"]):
        for i in range(len(section["configurations"])):
            bad = copying.deepcopy(cert)
            del bad["sections"][si]["configurations"][i]
            with pytest.raises(CertificateError):
                check_certificate(m, bad)


FIELD_CHANGES = {"state": lambda c, S: [(c[0] + 1) % S] + c[1:],
                 "psi": lambda c, S: c[:4] + [c[4] + 1] + c[5:],
                 "wrote": lambda c, S: c[:5] + [not c[5]] + c[6:],
                 "last write": lambda c, S: c[:3] + [[c[3][0] + 1, c[3][1]]] + c[4:],
                 "pointer": lambda c, S: [c[0], [p if p is None or j else [p[0] + 1, p[1]]
                                                 for j, p in enumerate(c[1])]] + c[2:],
                 "cells": lambda c, S: c[:2] + [[[[0, 0], [0]]] if not c[2] else c[2][1:]] + c[3:]}


@pytest.mark.parametrize("task", ["copy", "reverse", "walk", "addition", "multiplication"])
def test_changing_one_fact_of_a_certificate_is_rejected(task):
    m = CORRECT[task]()
    cert = certified(m)
    rng = np.random.default_rng(1)
    changed = 0
    for change in FIELD_CHANGES.values():
        for _ in range(2 if task == "walk" else 4):     # walk: 27 sets, of which a change may hit the last
            bad = copying.deepcopy(cert)
            section = bad["sections"][rng.integers(len(bad["sections"]))]
            i = rng.integers(len(section["configurations"]))
            new = change(section["configurations"][i], m.n_states)
            if new == section["configurations"][i] or new in section["configurations"]:
                continue                                # the same set: not a change
            section["configurations"][i] = new
            with pytest.raises(CertificateError):
                check_certificate(m, bad)
            changed += 1
    assert changed >= 8
    N0 = cert["exact_below"]
    claims = [("smallest", 2), ("exact_below", N0 + 1), ("machine_sha256", "0" * 64),
              ("task", "copy" if task != "copy" else "reverse")]
    if task == "walk":                                  # walk's N0 grows with psi_cap (elsewhere any cap is sound)
        claims.append(("psi_cap", cert["psi_cap"] + 1))
    for key, value in claims:
        bad = dict(cert, **{key: value})
        with pytest.raises(CertificateError):
            check_certificate(m, bad)
    for drop in (0, len(cert["sections"]) - 1):         # the first length, or the lengths >= N0
        bad = dict(cert, sections=cert["sections"][:drop] + cert["sections"][drop + 1:])
        with pytest.raises(CertificateError):
            check_certificate(m, bad)
    K = cert["sections"][-1]["window"]
    if ranges(task, K + 1, cert["psi_cap"])[1] != N0:   # a window with another N0: the sections no longer cover
        bad = copying.deepcopy(cert)
        bad["sections"][-1]["window"] = K + 1
        with pytest.raises(CertificateError):
            check_certificate(m, bad)


@pytest.mark.parametrize("where,value", [("state", "0"), ("state", True), ("psi", 0.0), ("wrote", "no"),
                                         ("wrote", 1), ("psi_cap", True), ("window", True), ("length", True)])
def test_a_certificate_holds_json_integers_and_booleans_only(where, value):
    m = reverse_machine(4)
    cert = certified(m)
    section = cert["sections"][0]
    fields = {"state": 0, "psi": 4, "wrote": 5}
    if where in fields:
        section["configurations"][0][fields[where]] = value
    elif where == "psi_cap":
        cert["psi_cap"] = value
    else:
        section[where] = value
    with pytest.raises(CertificateError, match="malformed"):
        check_certificate(m, cert)


def test_a_certificate_larger_than_the_checker_reads_is_refused(tmp_path, monkeypatch):
    import gzip
    import tinyalgo.automata.check as checker
    path = tmp_path / "c.json.gz"
    with gzip.open(path, "wt") as f:
        f.write(json.dumps(dict(format="tinyalgo-certificate", version=1, pad="x" * 5000)))
    assert read_certificate(path)["pad"] == "x" * 5000
    monkeypatch.setattr(checker, "MAX_BYTES", 4096)
    with pytest.raises(CertificateError, match="more than 4,096 bytes of JSON decompressed; allowed: at most that"):
        read_certificate(path)


def test_a_certificate_does_not_prove_a_changed_machine():
    m = reverse_machine(4)
    cert = certified(m)
    wrong = copying.deepcopy(m)
    wrong.symbol[1, 2] = 3                              # writes 3 where it read 2
    with pytest.raises(CertificateError, match="another machine"):
        check_certificate(wrong, cert)
    from tinyalgo.automata.check import digest
    with pytest.raises(CertificateError, match="can fail: wrong write"):
        check_certificate(wrong, dict(cert, machine_sha256=digest(wrong)))


def test_check_proof_command_rejects_and_refuses_in_one_line(tmp_path, capsys):
    m = reverse_machine(4)
    path, cert = tmp_path / "m.json", tmp_path / "c.json"
    m.save(path)
    assert main(["verify", str(path), "--certificate", str(cert)]) == 0
    data = json.loads(cert.read_text())
    del data["sections"][0]["configurations"][0]
    cert.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["check-proof", str(path), str(cert)]) == 1
    assert capsys.readouterr().out.startswith("rejected: length 1: an initial configuration is missing")
    cert.write_text("[" * 100000 + "]" * 100000)
    assert main(["check-proof", str(path), str(cert)]) == 2
    err = capsys.readouterr().err.strip()
    assert "not readable JSON" in err and len(err.splitlines()) == 1
    _relabelled(m, n_moves=4).save(path)                # a machine that does not fit its task: bad input
    assert main(["check-proof", str(path), str(cert)]) == 2
    assert "declares 4 moves" in capsys.readouterr().err


# ------------------------------------------------------------ the task models against the environment
def _product_step(search):
    """One step of the verifier's product (tinyalgo/automata/product.py) reading ``read``: its outcomes."""
    def step(cfg, read):
        for events, out in search.successors(cfg):
            if any(e[0] == "read" and read in e[1] for e in events):
                yield out if isinstance(out, Config) else "done" if out == "done" else "fail"
    return step


def _checker_step(steps):
    """One step of the certificate checker (tinyalgo/automata/check.py, written apart) reading ``read``."""
    def step(cfg, read):
        for out in steps.after(cfg, read):
            yield out if isinstance(out, Config) or out == "done" else "fail"
    return step


def _abstract_run(m, inst, spec, K, R_, side="verifier", strict=False):
    """Run ``m`` on one instance in the environment and, step for step, the abstract steps on the same symbols
    read (``side``: the verifier's product or the checker's steps): the set of configurations that agree with
    the run.  Returns (environment's end reason, whether the abstraction covered the run): every step the
    environment continues has a configuration, the step where it ends is an outcome of the abstraction (a
    failure where the environment fails), unless the abstraction has already allowed a failure on the way (it
    over-approximates; with ``strict``, a run the environment solves is covered only if no failure was
    allowed on the way)."""
    if side == "verifier":
        search = Search(m, spec, K=K, R=R_)
        step, start = _product_step(search), {search.tidy(c) for c, _ in spec.initial(search)}
    else:
        steps = Steps(m, spec, K, FAR // 2 if R_ is None else R_, False, 12)
        step, start = _checker_step(steps), {steps.forget(c) for c, _ in spec.initial(steps)}
    env = Environment(make(m.task, m.base), batch_size=1, base=m.base)
    env.load(inst)
    agent = MachineAgent(m)
    agent.start(1)
    obs, reset = env.observe(), np.ones(1, dtype=bool)
    current, failed = start, False
    while True:
        read = int(obs[0, 0])
        nxt, outcomes = set(), set()
        for cfg in current:
            for out in step(cfg, read):
                if isinstance(out, Config):
                    nxt.add(out)
                else:
                    outcomes.add(out)
                    failed |= out != "done"
        actions, symbols = agent.act(env, obs, reset)
        result = env.step(actions, symbols)
        reason = int(result.reason[0])
        if reason != RUNNING:
            if failed:
                return reason, reason != ALL_WRITTEN or not strict   # it allowed a failure by then
            return reason, ("done" in outcomes) if reason == ALL_WRITTEN else ("fail" in outcomes)
        if not nxt:
            return reason, failed
        current, obs, reset = nxt, result.obs, result.done


def _models_cases():
    cases = [(task, make_one) for task, make_one in CORRECT.items()]
    rng = np.random.default_rng(5)
    for task in CORRECT:
        for k, (_, mutant) in enumerate(mutants(CORRECT[task](), rng, 2)):
            cases.append((f"{task}-mutant{k}", lambda mutant=mutant: mutant))
    return cases


@pytest.mark.parametrize("side", ["verifier", "checker"])
@pytest.mark.parametrize("name,make_machine", _models_cases(), ids=[c[0] for c in _models_cases()])
def test_the_task_models_follow_the_environment_step_for_step(name, make_machine, side):
    m = make_machine()
    rng = np.random.default_rng(7)
    K = 2 if m.task == "addition3" else 1
    R_, N0 = ranges(m.task, K, 12)
    ends = set()
    for n in (1, 2, 4, N0 + 2):
        spec = SPECS[m.task](make(m.task, m.base), None if n >= N0 else n, min_length=N0 if n >= N0 else n)
        batch = random_instances(m.task, m.base, n, 4, rng)
        for i in range(len(batch)):
            reason, covered = _abstract_run(m, batch.take(np.array([i])), spec, K,
                                            R_ if n >= N0 else None, side, strict="mutant" not in name)
            assert covered, (name, side, n, i, reason)
            ends.add(reason)
    if "mutant" not in name:
        assert ends == {ALL_WRITTEN}


def test_the_product_follows_an_environment_failure():
    m = copy_machine(3)
    m.symbol[0, 1] = 2                                  # copies 1 as 2
    spec = SPECS["copy"](make("copy", 3), 3, min_length=3)
    inst = make("copy", 3).build(np.array([[0, 1, 2]]), np.array([3]), np.array([5]))
    for side in ("verifier", "checker"):
        reason, covered = _abstract_run(m, inst, spec, 1, None, side)
        assert reason == WRONG_WRITE and covered


# ------------------------------------------------------------ bad inputs of the certified table and the loop
def _certified_inputs(tmp_path, loop):
    folder = tmp_path / "loop-addition-s100"
    folder.mkdir(exist_ok=True)
    (folder / "loop.json").write_text(loop if isinstance(loop, str) else json.dumps(loop))
    return ["experiment", "certified", "--keep", str(folder), "--proofs", str(tmp_path / "kept"), "--out",
            str(tmp_path / "t")]


GOOD_ROUND = dict(round=0, states=30, verdict="counterexample", length=3, extract_seconds=5.0, verify_seconds=0.5)
GOOD_LOOP = dict(checkpoint="somewhere/addition-full-s100/checkpoint.npz", task="addition", rounds=[GOOD_ROUND])


@pytest.mark.parametrize("loop,message", [
    ([GOOD_LOOP], "the file: found list; allowed: an object"),
    ({k: v for k, v in GOOD_LOOP.items() if k != "rounds"}, "field rounds is missing"),
    (dict(GOOD_LOOP, rounds="x"), "field rounds: found 'x'; allowed: a list"),
    (dict(GOOD_LOOP, rounds=[]), "a list of at least one round"),
    (dict(GOOD_LOOP, rounds=[dict(GOOD_ROUND, verdict="maybe")]), "field rounds[0].verdict: found 'maybe'"),
    (dict(GOOD_LOOP, rounds=[dict(GOOD_ROUND, states=-3)]), "field rounds[0].states: found -3"),
    (dict(GOOD_LOOP, rounds=[dict(GOOD_ROUND, census=dict(recorded="many"))]), "rounds[0].census"),
    ("[" * 100000 + "]" * 100000, "not readable JSON"),
])
def test_the_certified_table_refuses_bad_files_in_one_line(tmp_path, capsys, loop, message):
    argv = _certified_inputs(tmp_path, loop)
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert not (tmp_path / "t" / "certified.csv").exists() and not (tmp_path / "kept").exists()


def test_the_certified_table_keeps_a_loop_that_did_not_prove_as_a_row_about_no_proof(tmp_path, capsys):
    repaired = dict(GOOD_ROUND, round=1, extraction=dict(k=4, repairs=6), cpu_seconds=30.0)
    trained = dict(GOOD_ROUND, training=dict(fixed=True, updates=50), cpu_seconds=90.0)
    assert main(_certified_inputs(tmp_path, dict(GOOD_LOOP, rounds=[trained, repaired]))) == 0
    table = (tmp_path / "t" / "certified.md").read_text()
    assert "0 of 1 networks proved" in table
    assert "| addition | 100 | counterexample | 30 | 2 | - | - / - / - |" in table
    import csv
    [row] = csv.DictReader((tmp_path / "t" / "certified.csv").open())
    assert (row["about"], row["repaired"], row["retrained_updates"]) == ("", "6", "50")
    assert sorted(p.name for p in (tmp_path / "kept" / "addition-s100").iterdir()) == ["loop.json"]
    assert main(["experiment", "certified", "--proofs", str(tmp_path / "nothing"), "--out", str(tmp_path / "t")]) == 2
    assert "no kept loops there" in capsys.readouterr().err


def test_verify_loop_refuses_a_folder_that_is_not_empty_and_sizes_named_by_their_options(tmp_path, capsys):
    from test_automata import reverse_controller
    from tinyalgo.runs.checkpoint import save_checkpoint
    ckpt = tmp_path / "checkpoint.npz"
    controller = reverse_controller()
    save_checkpoint(ckpt, controller, dict(config=dict(task="reverse", base=10)))
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    for argv, message in ((["--out", str(mine)], "is not empty"),
                          (["--out", str(tmp_path / "o"), "--instances", "1000000000"], "--instances 1000000000"),
                          (["--out", str(tmp_path / "o"), "--complexities", "10000000000000"], "--complexities"),
                          (["--out", str(tmp_path / "o"), "--complexities", "1"], "--complexities must be at least 2")):
        assert main(["verify-loop", str(ckpt), *argv]) == 2
        captured = capsys.readouterr()
        err = captured.err.strip()
        assert message in err and len(err.splitlines()) == 1 and "batch_size" not in err, err
        assert not captured.out
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"] and not (tmp_path / "o").exists()


# ------------------------------------------------------------ the proofs kept in the repository
PROOFS = FIGURES / "fresh_seeds" / "proofs"
KEPT_ROOTS = ([PROOFS, FIGURES / "fresh_seeds" / "faithful" / "proofs"]             # and verify-loop --faithful's
              + sorted((FIGURES / "fresh_seeds" / "retrained").glob("*/proofs")))       # the networks retrained


def test_the_kept_proofs_are_checked_again_from_the_repository(tmp_path, capsys):
    import gzip
    import shutil
    fast = [p for p in sorted(PROOFS.iterdir()) if p.name.split("-s")[0] in ("copy", "reverse")][:4]
    assert fast, "no kept copy or reverse proof"
    root = tmp_path / "proofs"
    for p in fast:
        shutil.copytree(p, root / p.name)
    assert main(["experiment", "certified", "--proofs", str(root), "--out", str(tmp_path / "o")]) == 0
    assert f"{len(fast)} of {len(fast)} kept proofs re-verified" in capsys.readouterr().out
    cert = root / fast[0].name / "certificate.json.gz"
    data = json.loads(gzip.decompress(cert.read_bytes()))
    data["sections"][-1]["configurations"].pop()
    cert.write_bytes(gzip.compress(json.dumps(data).encode()))
    assert main(["experiment", "certified", "--proofs", str(root), "--out", str(tmp_path / "o")]) == 1
    assert "certificate rejected" in (tmp_path / "o" / "certified.md").read_text()


def _tamper(root, name, edit):
    """Copy the kept proof ``name`` to ``root`` and apply ``edit`` to the copy; the copy's folder."""
    import shutil
    folder = root / name
    shutil.copytree(PROOFS / name, folder)
    edit(folder)
    return folder


def _edit_json(file, **changes):
    def edit(folder):
        data = json.loads((folder / file).read_text())
        for path, value in changes.items():
            target = data
            *parents, last = path.split("__")
            for key in parents:
                target = target[int(key)] if isinstance(target, list) else target[key]
            if value is None:
                del target[last]
            else:
                target[last] = value
        (folder / file).write_text(json.dumps(data))
    return edit


@pytest.mark.parametrize("name,edit,message", [
    ("walk-s100", lambda f: f.rename(f.parent / "reverse-s100"), "holds the loop of walk-s100"),
    ("reverse-s100", _edit_json("loop.json", rounds__0__states=999), "loop.json says 999 states"),
    ("reverse-s100", lambda f: (f / "machine.json").unlink(), "says 'proved' but the folder lacks machine.json"),
    ("reverse-s100", _edit_json("machine.json", task="copy"), "not of task 'reverse'"),
    ("addition-s100", _edit_json("agreement.json", lengths__0__step=7.5), "field lengths[0].step: found 7.5"),
    ("addition-s100", _edit_json("agreement.json", lengths__0__network_solved=-3), "lengths[0].network_solved"),
    ("addition-s100", _edit_json("agreement.json", lengths__0__step=None), "field lengths[0].step is missing"),
    ("reverse-s100", lambda f: (f / "machine.json").write_text("[" * 100000 + "]" * 100000), "nested too deeply"),
])
def test_the_certified_table_refuses_a_kept_folder_that_is_not_what_it_says(tmp_path, capsys, name, edit, message):
    root = tmp_path / "proofs"
    root.mkdir()
    _tamper(root, name, edit)
    assert main(["experiment", "certified", "--proofs", str(root), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert not (tmp_path / "o" / "certified.md").exists()


def test_every_kept_proof_names_its_machine_and_loop():
    assert len(KEPT_ROOTS) == 5 and all(root.is_dir() for root in KEPT_ROOTS)
    for p in sorted(p for root in KEPT_ROOTS for p in root.iterdir()):
        if (p / "machine.json").is_file():
            m = load_machine(p / "machine.json")
            cert = read_certificate(p / "certificate.json.gz")
            loop = json.loads((p / "loop.json").read_text())
            assert cert["task"] == m.task == loop["task"] and p.name.startswith(m.task + "-s")
            assert loop["rounds"][-1]["verdict"] == "proved"


# ------------------------------------------------------------ the proved machine beside its network
def test_agreement_is_one_for_the_networks_own_machine_and_below_one_with_a_transition_changed():
    from test_automata import reverse_controller
    from tinyalgo.automata.agreement import agreement
    controller = reverse_controller()                          # Figure 4a's network, whose machine is reverse_machine
    same = agreement(reverse_machine(10), controller, lengths=(5, 20), instances={5: 30, 20: 10})
    assert [(r["length"], r["complexity"], r["instances"]) for r in same] == [(5, 10, 30), (20, 40, 10)]
    assert all(r["step"] == r["instance"] == r["network_solved"] == r["machine_solved"] == 1.0 for r in same)
    m = reverse_machine(10)
    m.symbol[1 - m.start, 3] = 5                               # writes a 5 for a 3
    changed = agreement(m, controller, lengths=(5, 20), instances={5: 30, 20: 10})
    assert all(r["step"] < 1 and r["instance"] < 1 and r["machine_solved"] < 1 for r in changed)
    assert all(r["network_solved"] == 1.0 for r in changed)   # the same instances: the network solves them all
    per_step = 1 - changed[1]["step"]                          # a 3 in about a tenth of the digits, one write each
    assert 0 < per_step < 0.2 and changed[1]["instance"] < changed[0]["instance"] + 0.5


@pytest.mark.slow
def test_the_certified_table_measures_each_proof_beside_its_network(tmp_path, capsys, monkeypatch):
    from test_automata import reverse_controller
    from tinyalgo.automata import agreement
    from tinyalgo.runs.checkpoint import save_checkpoint
    monkeypatch.setattr(agreement, "INSTANCES", {100: 4, 1000: 2, 10000: 1})
    runs = tmp_path / "runs"
    (runs / "reverse-full-s7").mkdir(parents=True)
    save_checkpoint(runs / "reverse-full-s7" / "checkpoint.npz", reverse_controller(),
                    dict(config=dict(task="reverse", base=10)))
    wrong = reverse_controller()
    wrong.params["embed.w"][3] = wrong.params["embed.w"][5]   # a network that reads 3 as 5: the machine is right
    (runs / "reverse-full-s8").mkdir()
    save_checkpoint(runs / "reverse-full-s8" / "checkpoint.npz", wrong, dict(config=dict(task="reverse", base=10)))
    loops = {}
    for seed in (7, 8):
        folder = tmp_path / f"loop-{seed}"
        folder.mkdir()
        reverse_machine(10).save(folder / "machine.json")
        (folder / "loop.json").write_text(json.dumps(dict(
            checkpoint=str(runs / f"reverse-full-s{seed}" / "checkpoint.npz"), task="reverse",
            rounds=[dict(round=0, states=2, verdict="proved", extract_seconds=1.0, verify_seconds=0.1)])))
        loops[seed] = folder
    proofs, out = tmp_path / "p", tmp_path / "t"
    assert main(["experiment", "certified", "--keep", *map(str, loops.values()), "--proofs", str(proofs),
                 "--networks", str(runs), "--out", str(out)]) == 0
    table = (out / "certified.md").read_text()
    agree = "| 100.000 / 100.000 / 100.000 | 100 / 100 / 100 | 100 / 100 / 100 |"
    assert "| reverse | 7 | yes | 2 | 1 | as extracted " + agree in table
    kept = json.loads((proofs / "reverse-s8" / "agreement.json").read_text())
    assert kept["network"] == "reverse-full-s8/checkpoint.npz" and len(kept["network_sha256"]) == 64
    assert [r["length"] for r in kept["lengths"]] == [100, 1000, 10000]
    assert all(r["step"] < 1 and r["network_solved"] < 1 and r["machine_solved"] == 1 for r in kept["lengths"])
    assert "| reverse | 8 | yes | 2 | 1 | as extracted | 100.000 / 100.000 / 100.000 |" not in table
    assert main(["experiment", "certified", "--proofs", str(proofs), "--out", str(tmp_path / "again")]) == 0
    assert (tmp_path / "again" / "certified.md").read_text() == table    # from the repository alone: as kept
    assert main(["experiment", "certified", "--proofs", str(proofs), "--networks",
                 str(tmp_path / "none"), "--out", str(tmp_path / "x")]) == 2
    assert "--networks" in capsys.readouterr().err


def test_a_machine_completed_by_the_network_is_verified_although_it_answers_every_symbol():
    from test_automata import reverse_controller
    from tinyalgo.automata.rounds import complete_with_network
    done = complete_with_network(reverse_machine(10), reverse_controller())
    assert (done.action[:, Vocabulary(10).L] >= 0).all()      # answers an arrow, which no reverse board shows
    assert verify(done)["verdict"] == "proved"


def test_verify_loop_writes_the_certificate_of_its_proof(tmp_path, capsys):
    from test_automata import reverse_controller
    from tinyalgo.runs.checkpoint import save_checkpoint
    ckpt = tmp_path / "checkpoint.npz"
    save_checkpoint(ckpt, reverse_controller(), dict(config=dict(task="reverse", base=10)))
    out = tmp_path / "loop"
    assert main(["verify-loop", str(ckpt), "--out", str(out), "--complexities", "2", "--instances", "1",
                 "--no-corners", "--rounds", "12"]) == 0
    assert "certificate.json.gz" in capsys.readouterr().out and (out / "certificate.json.gz").is_file()
    assert main(["check-proof", str(out / "machine.json"), str(out / "certificate.json.gz")]) == 0


def test_the_pages_count_the_rows_of_the_kept_table():
    import csv
    rows = list(csv.DictReader((FIGURES / "fresh_seeds" / "certified.csv").open()))
    proved = [r for r in rows if r["verified_again"] == "proved" and r["certificate"] == "accepted"]
    extracted = sum(r["about"] == "as extracted" for r in proved)
    readme = (FIGURES.parent.parent / "README.md").read_text()
    m = re.search(r"the table has (\d+) networks, and the default command alone proved a machine for (\d+)", readme)
    assert m and (int(m[1]), int(m[2])) == (len(rows), len(proved)), m and m.groups()
    assert f"- {extracted} of those machines are as extracted" in readme
    for page in (FIGURES / "README.md", FIGURES.parent.parent / "docs" / "automata.md"):
        text = " ".join(page.read_text().split())
        m = re.search(r"\*\*What the table counts:\*\* (\d+) networks, (\d+) with a machine proved", text)
        assert m and (int(m[1]), int(m[2])) == (len(rows), len(proved)), (page, m and m.groups())
        assert f"Of the {len(proved)} proofs, {extracted} are about the machine as extracted" in text, page
    text = " ".join((FIGURES / "fresh_seeds" / "README.md").read_text().split())
    assert f"**What the table counts ({len(rows)} rows, {len(proved)} proved):**" in text
    assert f"**As extracted: {extracted} of the {len(proved)} proofs**" in text
    about = {(r["task"], r["seed"]): r["about"] for r in rows}
    assert about["addition3", "100"] == "retrained 1,200 updates"           # a comma in a field is quoted
    first = (FIGURES / "fresh_seeds" / "certified.md").read_text().splitlines()[0]
    assert first.startswith(f"{len(proved)} of {len(rows)} networks proved")


# ------------------------------------------------------------ the certified table checks everything before it writes
PROVED_ROUND = dict(round=0, states=2, verdict="proved", extract_seconds=1.0, verify_seconds=0.1)


def _reverse_loop(tmp_path, name, seed, machine=True, **round_changes):
    """A verify-loop folder ``name`` of reverse seed ``seed`` that proved ``reverse_machine(10)`` (``machine``:
    that machine, another one to save, or False for none)."""
    folder = tmp_path / name
    folder.mkdir()
    if machine is not False:
        (reverse_machine(10) if machine is True else machine).save(folder / "machine.json")
    (folder / "loop.json").write_text(json.dumps(dict(
        checkpoint=str(tmp_path / "runs" / f"reverse-full-s{seed}" / "checkpoint.npz"), task="reverse",
        rounds=[dict(PROVED_ROUND, **round_changes)])))
    return str(folder)


def _tree(root):
    """{relative path: bytes, or None for a folder} of everything under ``root``."""
    return {str(p.relative_to(root)): None if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}


def _wrong_reverse():
    m = reverse_machine(10)
    m.symbol[1 - m.start, 3] = 5                                # writes a 5 for a 3: not a proof
    return m


@pytest.mark.parametrize("make,message", [
    (lambda t: [_reverse_loop(t, "cex", 7, verdict="counterexample")], "holds a proof"),
    (lambda t: [_reverse_loop(t, "none", 9, machine=False)], "no such file"),
    (lambda t: [_reverse_loop(t, "wrong", 9, machine=_wrong_reverse())], "is counterexample by this verifier"),
    (lambda t: [_reverse_loop(t, "states", 9, states=3)], "loop.json says 3 states"),
    (lambda t: [_reverse_loop(t, "good", 8), _reverse_loop(t, "none", 9, machine=False)], "no such file"),
    (lambda t: [_reverse_loop(t, "good", 8), _reverse_loop(t, "twin", 8)], "are both the loop of reverse-s8"),
    (lambda t: [_reverse_loop(t, "good", 8), (t / "p" / "reverse-s7" / "agreement.json").write_text("{}")],
     "reverse-s7/agreement.json: field network is missing"),
], ids=["counterexample over a proof", "no machine", "machine disproved", "states differ", "good then no machine",
        "two loops of one network", "another kept folder does not fit"])
def test_keeping_loops_that_do_not_fit_leaves_the_proofs_folder_as_it_was(tmp_path, capsys, make, message):
    proofs = tmp_path / "p"
    argv = ["experiment", "certified", "--proofs", str(proofs)]
    assert main([*argv, "--keep", _reverse_loop(tmp_path, "first", 7), "--out", str(tmp_path / "o1")]) == 0
    capsys.readouterr()
    keep = [k for k in make(tmp_path) if isinstance(k, str)]
    before = _tree(proofs)
    assert main([*argv, "--keep", *keep, "--out", str(tmp_path / "o2")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err, err
    if "agreement.json" in message:
        (proofs / "reverse-s7" / "agreement.json").write_text("{}")         # as the case wrote it, to compare
    assert _tree(proofs) == before and not (tmp_path / "o2").exists()


def _stub_agreement(machine, controller, log=None):
    return [dict(length=n, complexity=n, instances=1, step=0.5, instance=0.0, network_solved=1.0, machine_solved=1.0)
            for n in (100, 1000, 10000)]


def _kept_with_network(tmp_path, capsys, monkeypatch):
    """--proofs p holding reverse-s7, whose agreement.json was measured with runs/reverse-full-s7 (the
    agreement itself stubbed); (proofs, the checkpoint, the command's arguments but --out)."""
    from test_automata import reverse_controller
    from tinyalgo.automata import agreement
    from tinyalgo.runs.checkpoint import save_checkpoint
    monkeypatch.setattr(agreement, "agreement", _stub_agreement)
    proofs, runs = tmp_path / "p", tmp_path / "runs"
    net = runs / "reverse-full-s7" / "checkpoint.npz"
    net.parent.mkdir(parents=True)
    save_checkpoint(net, reverse_controller(), dict(config=dict(task="reverse", base=10)))
    argv = ["experiment", "certified", "--proofs", str(proofs), "--networks", str(runs)]
    assert main([*argv, "--keep", _reverse_loop(tmp_path, "l7", 7), "--out", str(tmp_path / "o")]) == 0
    assert json.loads((proofs / "reverse-s7" / "agreement.json").read_text())["network_sha256"]
    assert "the network of its kept agreement.json" not in capsys.readouterr().out
    return proofs, net, argv


def test_keeping_a_new_loop_drops_the_agreement_of_the_machine_it_replaces(tmp_path, capsys, monkeypatch):
    proofs, net, argv = _kept_with_network(tmp_path, capsys, monkeypatch)
    without = [a for a in argv if a not in ("--networks", str(net.parent.parent))]
    assert main([*without, "--keep", _reverse_loop(tmp_path, "again", 7), "--out", str(tmp_path / "o2")]) == 0
    assert not (proofs / "reverse-s7" / "agreement.json").exists()
    row = (tmp_path / "o2" / "certified.csv").read_text().splitlines()[1].split(",")
    assert row[:3] == ["reverse", "7", "proved"] and row[8] == ""               # agreement: not measured
    assert main([*argv, "--keep", _reverse_loop(tmp_path, "third", 7), "--out", str(tmp_path / "o3")]) == 0
    assert json.loads((proofs / "reverse-s7" / "agreement.json").read_text())["network_sha256"]


def test_the_certified_table_says_when_a_network_is_not_the_one_of_the_kept_agreement(tmp_path, capsys,
                                                                                        monkeypatch):
    from test_automata import reverse_controller
    from tinyalgo.runs.checkpoint import save_checkpoint
    proofs, net, argv = _kept_with_network(tmp_path, capsys, monkeypatch)
    other = reverse_controller()
    other.params["embed.w"][3] = other.params["embed.w"][5]
    save_checkpoint(net, other, dict(config=dict(task="reverse", base=10)))
    assert main([*argv, "--out", str(tmp_path / "o")]) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if "the network of its kept agreement.json" in line]
    assert len(said) == 1 and str(net) in said[0] and "reverse-full-s7/checkpoint.npz of SHA-256" in said[0], said


@pytest.mark.parametrize("header,message", [
    (dict(task="walk", base=10), "is a network of walk in base 10; {folder} proves a machine of reverse in base"),
    (dict(task="reverse", base=2), "is a network of reverse in base 2; {folder} proves a machine of reverse in"),
    (None, "not a readable .npz archive"),
], ids=["walk", "base 2", "truncated"])
def test_the_networks_are_checked_before_any_proof_is_verified_again(tmp_path, capsys, monkeypatch, header, message):
    from test_automata import reverse_controller
    from tinyalgo.experiments import certified
    from tinyalgo.runs.checkpoint import save_checkpoint
    proofs, net, argv = _kept_with_network(tmp_path, capsys, monkeypatch)

    def not_now(*args, **kwargs):
        raise AssertionError("a proof verified again before the networks were checked")
    monkeypatch.setattr(certified, "recheck", not_now)
    monkeypatch.setattr(certified, "measure_agreement", not_now)
    monkeypatch.setattr(certified, "certify_keep", not_now, raising=False)
    if header:
        save_checkpoint(net, reverse_controller(), dict(config=header))
    else:
        net.write_bytes(net.read_bytes()[:1000])
    before = _tree(proofs)
    for keep in ([], ["--keep", _reverse_loop(tmp_path, "l8", 7)]):
        assert main([*argv, *keep, "--out", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err.strip()
        assert message.format(folder=proofs / "reverse-s7") in err and str(net) in err, err
        assert len(err.splitlines()) == 1 and "Traceback" not in err
        assert _tree(proofs) == before and not (tmp_path / "x").exists()


@pytest.mark.parametrize("seconds,message", [
    ("1e400", "rounds[0].cpu_seconds: found inf"), ("1" + "0" * 400, "rounds[0].cpu_seconds: found 1000"),
    ("1.7e308", "rounds[].cpu_seconds: found numbers whose sum is beyond"),
], ids=["1e400", "10**400", "1.7e308 twice"])
def test_the_certified_table_refuses_cpu_seconds_beyond_a_float_in_one_line(tmp_path, capsys, seconds, message):
    loop = dict(GOOD_LOOP, rounds=[dict(GOOD_ROUND, cpu_seconds="SECONDS")] * 2)
    text = json.dumps(loop).replace('"SECONDS"', seconds)
    assert main(_certified_inputs(tmp_path, text)) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert not (tmp_path / "kept").exists()
