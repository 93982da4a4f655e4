"""Certified length generalisation on fresh seeds (paper section 6.4): one row per trained network, from
the ``tinyalgo verify-loop`` results kept in the repository (one folder per network, ``<task>-s<seed>``).

    tinyalgo experiment certified --keep LOOP [LOOP ...] --proofs figures/automata/fresh_seeds/proofs --out OUT

first keeps each verify-loop folder's result: where it ended in a proof, the machine's tables
(machine.json), its certificate (certificate.json.gz), the verifier's report (verify.json); loop.json in
every case.  A loop that ended without a proof does not replace a kept proof.  Then, and with ``--proofs``
alone, every kept machine is verified again and its certificate
checked by the independent checker (tinyalgo/automata/check.py), from the repository alone, and
OUT/certified.csv and OUT/certified.md give one row per network: proved or not, the machine's states, the
loop's rounds, what the proof is about (the machine as extracted, repaired in N transitions, or extracted
from the network retrained for N updates), the machine's agreement with its network and the network's
own solved fraction at lengths 100, 1,000 and 10,000 (``agreement.json`` of each folder), the loop's CPU
minutes.

    tinyalgo experiment certified --proofs figures/automata/fresh_seeds/proofs --networks RUNS --out OUT

also measures that agreement again (tinyalgo/automata/agreement.py) with the networks themselves, which
are not in the repository (RUNS/<task>-<column>-s<seed>/checkpoint.npz, the run folder that loop.json's
``checkpoint`` names; for a loop that retrained its network, the retrained one:
RUNS/loop-<task>-s<seed>/checkpoint.npz), and writes each folder's agreement.json in place of the kept
one.  A network of another task or base than its proof's machine is refused; one other than the network
the kept agreement.json was measured with (its SHA-256 differs) is named in one line, and measured.

Everything is checked before any proof is verified again and anything written (``write_table``): every
--keep loop and the folder of --proofs it replaces, every other kept folder (loop.json against
``LOOP_SCHEMA``), every network the table uses, then the --keep machines are verified; a file that does not
fit, or a machine not proved, is one error naming it, and --proofs is left as it was.  Each file is written
atomically.
"""
from __future__ import annotations

import csv
import glob
import hashlib
import io
import json
import math
import os
import sys
import time
from dataclasses import replace

import numpy as np

from tinyalgo.runs.fileio import atomic_write_bytes, atomic_write_json
from tinyalgo.runs.schema import Field, FileFormatError, check

_SECONDS = Field("number", minimum=0)
_COUNT = Field("int", minimum=0)
# the fields of a verify-loop's loop.json that the table reads (others are allowed)
ROUND_SCHEMA = {"round": _COUNT, "states": Field("int", minimum=1),
                "verdict": Field("str", choices=("proved", "counterexample", "not proved")),
                "length": Field("int", minimum=1, nullable=True, required=False),
                "extract_seconds": _SECONDS, "verify_seconds": _SECONDS,
                "cpu_seconds": Field("number", minimum=0, required=False),
                "extraction": Field("dict", nullable=True, required=False), "training": Field("dict", required=False),
                "census": Field("dict", required=False)}
PART_SCHEMAS = {"extraction": {"repairs": Field("int", minimum=0, required=False)}, "training": {"updates": _COUNT},
                "census": {"recorded": _COUNT, "machine_fails": _COUNT, "network_solves": _COUNT}}
LOOP_SCHEMA = {"checkpoint": Field("str"),
               "task": Field("str", choices=("copy", "reverse", "walk", "addition", "addition3", "multiplication")),
               "rounds": Field("list", items=Field("dict")),
               "base": Field("int", minimum=2, maximum=10, required=False)}


def _read_json(path: str):
    """The JSON at ``path``; a ValueError naming the file if it is not readable JSON."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise ValueError(f"{path}: not readable JSON ({str(err)[:80] or 'nested too deeply'})") from None


def read_loop(folder: str) -> dict:
    """A verify-loop folder's loop.json, checked against ``LOOP_SCHEMA``: a ValueError naming the file and the
    field otherwise."""
    path = os.path.join(folder, "loop.json")
    loop = _read_json(path)
    try:
        check(loop, LOOP_SCHEMA, path, extra_fields=True)
        if not loop["rounds"]:
            raise FileFormatError(f"{path}: field rounds: found []; allowed: a list of at least one round")
        for i, r in enumerate(loop["rounds"]):
            check(r, ROUND_SCHEMA, path, f"rounds[{i}]", extra_fields=True)
            for part, schema in PART_SCHEMAS.items():
                if isinstance(r.get(part), dict):
                    check(r[part], schema, path, f"rounds[{i}].{part}", extra_fields=True)
    except FileFormatError as err:
        raise ValueError(str(err)) from None
    if not math.isfinite(sum(float(r.get("cpu_seconds", 0)) for r in loop["rounds"])):
        raise ValueError(f"{path}: field rounds[].cpu_seconds: found numbers whose sum is beyond"
                         f" {sys.float_info.max:.3g}; allowed: CPU seconds of a finite total")
    if not os.path.basename(os.path.dirname(loop["checkpoint"])).rsplit("-s", 1)[-1].isdigit():
        raise ValueError(f"{path}: field checkpoint: found {loop['checkpoint'][:60]!r}; allowed: a path in a run folder"
                         " named <task>-<column>-s<seed>")
    return loop


def seed_of(loop: dict) -> int:
    """The seed of the network a loop started from (its run folder is ``<task>-<column>-s<seed>``)."""
    return int(os.path.basename(os.path.dirname(loop["checkpoint"])).rsplit("-s", 1)[1])


def loop_row(loop: dict) -> dict:
    """What a loop established: the last machine's verdict and states, the rounds, the transitions repaired in
    the last machine (each round extracts its machine afresh), the updates of training the network on
    counterexamples, what a proof is about (``about``: "as extracted", "repaired N", "retrained N updates";
    empty where the loop ended without a proof), the loop's CPU minutes (empty for a loop.json without
    them)."""
    rounds, last = loop["rounds"], loop["rounds"][-1]
    repaired = (last.get("extraction") or {}).get("repairs", 0)
    trained = sum(r.get("training", {}).get("updates", 0) for r in rounds)
    retrained = any("training" in r for r in rounds)
    about = ", ".join((["retrained " + f"{trained:,} updates"] if retrained else [])
                      + ([f"repaired {repaired}"] if repaired else [])) or "as extracted"
    return dict(task=loop["task"], seed=seed_of(loop), verdict=last["verdict"], states=last["states"],
                rounds=len(rounds), repaired=repaired, retrained_updates=trained if retrained else "",
                about=about if last["verdict"] == "proved" else "",
                cpu_minutes=round(sum(r["cpu_seconds"] for r in rounds) / 60, 2)
                if all("cpu_seconds" in r for r in rounds) else "")


# ------------------------------------------------------------ the proofs kept in the repository
def _machine_of(folder: str, loop: dict):
    """The machine of ``folder``/machine.json, checked to be of ``loop``'s task and base with the loop's last
    number of states; a ValueError naming the folder or the file otherwise."""
    from tinyalgo.automata.machine import load_machine
    machine = load_machine(os.path.join(folder, "machine.json"), task=loop["task"])     # a MachineError: a ValueError
    last, base = loop["rounds"][-1], loop.get("base", 10)
    if (machine.n_states, machine.base) != (last["states"], base):
        raise ValueError(f"{folder}: its machine has {machine.n_states} states in base {machine.base}; its"
                         f" loop.json says {last['states']} states in base {base}")
    return machine


def plan_keep(loop_folder: str, root: str) -> dict:
    """What keeping a verify-loop's result in ``root``/<task>-s<seed> would write, checked and nothing
    written: a dict of ``loop_folder``, ``folder`` (the kept folder), ``loop`` (its loop.json) and
    ``machine`` (where the loop ended in a proof, the machine's tables without the recording's rows and
    cluster centres, which only the network's fallback uses; else None).  A ValueError where the loop.json
    or the machine does not fit (``read_loop``, ``_machine_of``), where ``folder`` is a file, holds an
    agreement.json that does not fit (``read_agreement``), or holds a proof and the loop ended without one."""
    loop = read_loop(loop_folder)
    folder = os.path.join(root, f"{loop['task']}-s{seed_of(loop)}")
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise ValueError(f"--proofs: {folder} is a file; the result of {loop_folder} is kept in a folder of that name")
    last, machine = loop["rounds"][-1], None
    if last["verdict"] == "proved":
        machine = _machine_of(loop_folder, loop)
        machine = replace(machine, raw=np.zeros((0, 6), dtype=np.int64), centroids=np.zeros((1, 0)),
                          info=dict(machine.info, kept="the tables only: the recording's rows and the cluster"
                                                        " centres are in the loop's machine.json"))
    elif has_proof(folder):
        raise ValueError(f"--keep {loop_folder}: its loop ended in {last['verdict']!r} but {folder} holds a proof"
                         " (machine.json, certificate.json.gz), which it would not replace; remove that folder"
                         " first to keep this loop")
    read_agreement(folder)
    return dict(loop_folder=loop_folder, folder=folder, loop=loop, machine=machine)


def certify_keep(plan: dict) -> dict:
    """``plan`` (``plan_keep``) with its machine verified (``report``, ``certificate``); a ValueError where the
    verifier does not prove it.  Nothing written."""
    from tinyalgo.automata.verify import verify
    if plan["machine"] is not None:
        report = verify(plan["machine"], certify=True)
        if report["verdict"] != "proved":
            raise ValueError(f"{plan['loop_folder']}: its machine is {report['verdict']} by this verifier; not kept")
        plan = dict(plan, certificate=report.pop("certificate"), report=report)
    return plan


def write_keep(plan: dict) -> str:
    """Write a certified plan (``certify_keep``) to its folder, each file atomically: machine.json,
    certificate.json.gz and verify.json where the loop proved, loop.json.  A kept agreement.json, which is
    about the machine replaced, is removed (``--networks`` measures the new one's).  Returns the folder."""
    from tinyalgo.automata.verify import write_certificate
    folder = plan["folder"]
    os.makedirs(folder, exist_ok=True)
    if os.path.isfile(os.path.join(folder, "agreement.json")):
        os.remove(os.path.join(folder, "agreement.json"))
    if plan["machine"] is not None:
        plan["machine"].save(os.path.join(folder, "machine.json"))
        write_certificate(os.path.join(folder, "certificate.json.gz"), plan["certificate"])
        atomic_write_json(os.path.join(folder, "verify.json"), plan["report"])
    atomic_write_json(os.path.join(folder, "loop.json"), plan["loop"])
    return folder


def keep_proof(loop_folder: str, root: str) -> str:
    """Keep a verify-loop's result in ``root``/<task>-s<seed> (``plan_keep``, ``certify_keep``, then
    ``write_keep``: nothing is written unless every check passed).  Returns the folder."""
    return write_keep(certify_keep(plan_keep(loop_folder, root)))


def kept_folders(root: str) -> list:
    """The folders of ``root`` holding a kept loop (loop.json), sorted."""
    return sorted(os.path.dirname(p) for p in glob.glob(os.path.join(root, "*", "loop.json")))


def has_proof(folder: str) -> bool:
    return all(os.path.isfile(os.path.join(folder, f)) for f in ("machine.json", "certificate.json.gz"))


def recheck(folder: str) -> dict:
    """Verify a kept machine again and check its certificate with the independent checker."""
    from tinyalgo.automata.check import CertificateError, check_certificate, read_certificate
    from tinyalgo.automata.machine import load_machine
    from tinyalgo.automata.verify import verify
    machine = load_machine(os.path.join(folder, "machine.json"))
    t = time.process_time()
    report = verify(machine)
    verify_seconds = time.process_time() - t
    t = time.process_time()
    try:
        summary = check_certificate(machine, read_certificate(os.path.join(folder, "certificate.json.gz")))
        verdict, configs = "accepted", summary["configurations"]
    except CertificateError as err:
        verdict, configs = f"rejected: {err}", ""
    return dict(verified_again=report["verdict"], verify_seconds=round(verify_seconds, 2), certificate=verdict,
                configurations=configs, check_seconds=round(time.process_time() - t, 2))


def network_of(folder: str, loop: dict, networks) -> str | None:
    """The checkpoint a kept proof is about, found in one of the folders ``networks``: the retrained network
    (``loop-<task>-s<seed>/checkpoint.npz`` or ``<task>-s<seed>/checkpoint.npz``) where the loop trained it,
    else the run folder that loop.json's ``checkpoint`` names; None if none is there."""
    name = os.path.basename(folder)
    retrained = loop_row(loop)["retrained_updates"] != ""
    wanted = [f"loop-{name}", name] if retrained else [os.path.basename(os.path.dirname(loop["checkpoint"]))]
    for root in networks:
        for w in wanted:
            path = os.path.join(root, w, "checkpoint.npz")
            if os.path.isfile(path):
                return path
    return None


def file_sha256(path: str) -> str:
    """The SHA-256 of the file ``path``'s bytes, in hex."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def check_network(checkpoint: str, folder: str, loop: dict) -> None:
    """A ValueError naming ``checkpoint`` unless it is a readable checkpoint (``load_checkpoint``) of a
    network for the kept proof in ``folder``: trained on ``loop``'s task in its base where its header says
    (a header without them is taken as that task's), with the observation fields, actions and symbols of
    that task's environment."""
    from tinyalgo.runs.checkpoint import check_task, load_checkpoint
    task, base = loop["task"], loop.get("base", 10)
    controller, extra = load_checkpoint(checkpoint)
    saved = extra.get("config") if isinstance(extra.get("config"), dict) else {}
    have = (saved.get("task", task), saved.get("base", 10 if "task" in saved else base))
    if have != (task, base):
        raise ValueError(f"--networks: {checkpoint} is a network of {have[0]} in base {have[1]}; {folder} proves a"
                         f" machine of {task} in base {base}")

    def fail(problem):
        raise ValueError(f"checkpoint {checkpoint}: {problem}")
    check_task(fail, controller.config, saved, task, base)


def check_networks(loops: dict, networks, log=print) -> dict:
    """{kept folder: the checkpoint its agreement is measured with} for the kept proofs among ``loops``
    ({folder: loop.json}) whose network is in ``networks`` (``network_of``), each checked
    (``check_network``).  Logs a proof with no network there, and a network other than the one its kept
    agreement.json was measured with (the SHA-256 differs)."""
    found = {}
    for folder, loop in sorted(loops.items()):
        if loop["rounds"][-1]["verdict"] != "proved":
            continue
        name, path = os.path.basename(folder), network_of(folder, loop, networks)
        if path is None:
            log(f"{name}: no network in {', '.join(networks)}; agreement not measured")
            continue
        check_network(path, folder, loop)
        kept = agreement_file(folder)
        if kept and kept["network_sha256"] != file_sha256(path):
            log(f"{name}: {path} is not {kept['network']} of SHA-256 {kept['network_sha256'][:12]}..., the network"
                " of its kept agreement.json; measured again with it, replacing that")
        found[folder] = path
    return found


def measure_agreement(folder: str, checkpoint: str, log=print) -> dict:
    """The kept machine beside its network (``automata.agreement``), written to ``folder``/agreement.json with
    the checkpoint's name and SHA-256."""
    from tinyalgo.automata.agreement import agreement
    from tinyalgo.automata.machine import load_machine
    from tinyalgo.runs.checkpoint import load_checkpoint
    machine = load_machine(os.path.join(folder, "machine.json"))
    controller, _ = load_checkpoint(checkpoint)
    sha = file_sha256(checkpoint)
    t = time.process_time()
    rows = agreement(machine, controller, log=log)
    got = dict(network=os.path.join(os.path.basename(os.path.dirname(checkpoint)), "checkpoint.npz"),
               network_sha256=sha, lengths=rows, cpu_seconds=round(time.process_time() - t, 1))
    atomic_write_json(os.path.join(folder, "agreement.json"), got)
    return got


_FRACTION = Field("number", minimum=0, maximum=1)
AGREEMENT_ROW = {"length": Field("int", minimum=1), "complexity": Field("int", minimum=1),
                 "instances": Field("int", minimum=1), "step": _FRACTION, "instance": _FRACTION,
                 "network_solved": _FRACTION, "machine_solved": _FRACTION}
AGREEMENT_SCHEMA = {"network": Field("str"), "network_sha256": Field("str"),
                    "lengths": Field("list", items=Field("dict", schema=AGREEMENT_ROW))}


def agreement_file(folder: str) -> dict | None:
    """A kept proof's agreement.json (None if there is none), checked against ``AGREEMENT_SCHEMA``: a
    ValueError naming the file and the field otherwise."""
    path = os.path.join(folder, "agreement.json")
    if not os.path.isfile(path):
        return None
    got = _read_json(path)
    try:
        check(got, AGREEMENT_SCHEMA, path, extra_fields=True)
    except FileFormatError as err:
        raise ValueError(str(err)) from None
    return got


def read_agreement(folder: str) -> dict:
    """{length: row} of a kept proof's agreement.json ({} if there is none; ``agreement_file``)."""
    got = agreement_file(folder)
    return {r["length"]: r for r in got["lengths"]} if got else {}


def check_kept(folder: str) -> dict:
    """A kept folder's loop.json, after checking that the folder is what it says: named ``<task>-s<seed>`` of
    its loop, holding a machine and a certificate exactly when the loop ended in a proof, that machine of the
    loop's task and base with the loop's last number of states, and a well-formed agreement.json if any.  A
    ValueError naming the folder and the problem otherwise."""
    loop = read_loop(folder)
    name = f"{loop['task']}-s{seed_of(loop)}"
    if os.path.basename(os.path.normpath(folder)) != name:
        raise ValueError(f"{folder}: holds the loop of {name}; a kept loop's folder is named after its task and seed")
    last = loop["rounds"][-1]
    if (last["verdict"] == "proved") != has_proof(folder):
        raise ValueError(f"{folder}: its loop.json says {last['verdict']!r} but the folder "
                         + ("lacks machine.json or certificate.json.gz" if last["verdict"] == "proved"
                            else "holds a machine and a certificate"))
    if has_proof(folder):
        _machine_of(folder, loop)
    read_agreement(folder)
    return loop


LENGTHS = (100, 1000, 10000)
COLUMNS = (("task", "seed", "verdict", "states", "rounds", "about", "repaired", "retrained_updates")
           + tuple(f"agree_{w}_{n}" for n in LENGTHS for w in ("step", "instance"))
           + tuple(f"network_solved_{n}" for n in LENGTHS)
           + ("cpu_minutes", "verified_again", "certificate", "verify_seconds", "check_seconds"))


def table_rows(root: str, networks=None, log=print) -> list:
    """One row (``COLUMNS``) per kept loop under ``root``; with ``networks`` ({kept folder: checkpoint}, from
    ``check_networks``), those proofs' agreement measured again first (``measure_agreement``)."""
    rows, loops = [], {folder: check_kept(folder) for folder in kept_folders(root)}
    networks = {os.path.basename(f): path for f, path in (networks or {}).items()}
    for folder, loop in loops.items():
        row = dict.fromkeys(COLUMNS, "")
        row.update(loop_row(loop))
        if has_proof(folder):
            row.update(recheck(folder))
            path = networks.get(os.path.basename(folder))
            if path is not None:
                log(f"{os.path.basename(folder)}: agreement with {path}")
                measure_agreement(folder, path, log)
            for n, r in read_agreement(folder).items():
                if n in LENGTHS:
                    row.update({f"agree_step_{n}": r["step"], f"agree_instance_{n}": r["instance"],
                                f"network_solved_{n}": r["network_solved"]})
        rows.append({k: row[k] for k in COLUMNS})
        r = rows[-1]
        log(f"{r['task']}-s{r['seed']}: {r['verdict']}, {r['states']} states"
            + (f"; verified again: {r['verified_again']}, certificate {r['certificate']}" if r["verified_again"]
               else ""))
    return sorted(rows, key=lambda r: (TASK_ORDER.index(r["task"]), r["seed"]))


TASK_ORDER = ("copy", "reverse", "walk", "addition", "multiplication", "addition3")


def _pct(x, digits=0) -> str:
    """A fraction as a percentage; below 1, never rounded up to 100."""
    if x == "":
        return "-"
    return f"{min(100 * x, 100 - 10 ** -digits) if x < 1 else 100:.{digits}f}"


def markdown(rows) -> str:
    """The table, one line per network, and the count of proofs that hold."""
    held = sum(r["verified_again"] == "proved" and r["certificate"] == "accepted" for r in rows)
    out = [f"{held} of {len(rows)} networks proved (machine verified again, certificate accepted)", "",
           "| task | seed | proved | states | rounds | proof about | agree, % steps @100 / 1k / 10k"
           " | agree, % instances @100 / 1k / 10k | network solves, % @100 / 1k / 10k | loop CPU, min |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ok = r["verified_again"] == "proved" and r["certificate"] == "accepted"
        proved = "yes" if ok else r["verdict"] if not r["verified_again"] else (
            f"FAILS: {r['verified_again']}, certificate {r['certificate']}")
        out.append(f"| {r['task']} | {r['seed']} | {proved} | {r['states']} | {r['rounds']} | {r['about'] or '-'}"
                   f" | {' / '.join(_pct(r[f'agree_step_{n}'], 3) for n in LENGTHS)}"
                   f" | {' / '.join(_pct(r[f'agree_instance_{n}']) for n in LENGTHS)}"
                   f" | {' / '.join(_pct(r[f'network_solved_{n}']) for n in LENGTHS)}"
                   f" | {r['cpu_minutes'] if r['cpu_minutes'] != '' else '-'} |")
    return "\n".join(out) + "\n"


def write_table(root: str, out: str, networks=None, log=print, keep=()) -> list:
    """Keep the verify-loop folders ``keep`` in ``root``, then OUT/certified.csv and OUT/certified.md from
    the kept loops under ``root``, with each proof's agreement measured again with its network where
    ``networks`` (folders of run folders) holds it; the rows.  Everything that can be refused is checked
    before any verification and any write, so a ValueError leaves ``root`` as it was: each loop of ``keep``
    and the folder it replaces (``plan_keep``; two loops of one network are refused), every other kept
    folder (``check_kept``), every network used (``check_networks``); then the machines of ``keep`` are
    verified (``certify_keep``), and only then written (``write_keep``)."""
    plans, loops = [], {}
    for loop_folder in keep:
        plan = plan_keep(loop_folder, root)
        twin = next((p for p in plans if p["folder"] == plan["folder"]), None)
        if twin:
            raise ValueError(f"--keep {twin['loop_folder']} and {loop_folder} are both the loop of"
                             f" {os.path.basename(plan['folder'])}; give one of them")
        plans.append(plan)
        loops[plan["folder"]] = plan["loop"]
    for folder in kept_folders(root):
        if folder not in loops:
            loops[folder] = check_kept(folder)
    if not loops:
        raise ValueError(f"--proofs {root}: no kept loops there (folders with loop.json)")
    found = check_networks(loops, networks, log) if networks else {}
    plans = [certify_keep(p) for p in plans]
    for plan in plans:
        log(f"{plan['loop_folder']}: kept in {write_keep(plan)}")
    rows = table_rows(root, found, log)
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")               # "retrained 1,200 updates" is quoted
    writer.writerows([COLUMNS] + [[r[c] for c in COLUMNS] for r in rows])
    os.makedirs(out, exist_ok=True)
    atomic_write_bytes(os.path.join(out, "certified.csv"), text.getvalue().encode())
    atomic_write_bytes(os.path.join(out, "certified.md"), markdown(rows).encode())
    return rows
