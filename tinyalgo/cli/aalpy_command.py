"""``tinyalgo experiment aalpy``: AALpy's L* and KV learn trained networks,
and tinyalgo's verifier checks what they learn (the aalpy extra):

    tinyalgo experiment aalpy --networks RUNS/copy-full-s100 RUNS/walk-full-s101 --out figures/automata/aalpy
"""
from __future__ import annotations

import os
import sys

from tinyalgo.automata.rules import SPECS
from tinyalgo.cli.args import (UsageError, check_writable_folder, checkpoint_run, int_at_least, output_path,
                               seconds_within)

DEFAULT_PROOFS = "figures/automata/fresh_seeds/proofs"


def cmd_aalpy(args) -> int:
    from tinyalgo.automata import aalpy_sul
    from tinyalgo.experiments import aalpy_table
    try:
        aalpy_sul.require_aalpy()
    except ImportError as err:
        raise UsageError(str(err)) from None
    check_writable_folder(args.out, "--out")
    networks = []
    for folder in args.networks:
        path = os.path.join(folder, "checkpoint.npz")
        if not os.path.isfile(path):
            raise UsageError(f"--networks {folder}: no checkpoint.npz there")
        try:
            aalpy_table.seed_of(folder)
            controller, _, task, base = checkpoint_run(path, None)
        except ValueError as err:
            raise UsageError(str(err)) from None
        if task not in SPECS:
            raise UsageError(f"--networks {folder}: a controller of task {task!r}, which the verifier does not know")
        networks.append((folder, controller, task, base))
    try:
        prepared = aalpy_table.prepare(networks, args.proofs, args.out)
    except ValueError as err:
        raise UsageError(str(err)) from None
    os.makedirs(args.out, exist_ok=True)
    command = "tinyalgo " + " ".join(sys.argv[1:])
    aalpy_table.run(prepared, args.out, command, args.steps, args.seconds, args.seed, args.verify_seconds)
    print(f"wrote {os.path.join(args.out, aalpy_table.CSV)} and README.md")
    return 0


def register_aalpy(names) -> None:
    p = names.add_parser("aalpy", help="AALpy's L* and KV learn trained networks; tinyalgo's verifier checks what"
                                       " they learn (the aalpy extra)",
                         description="Each network is AALpy's system under learning; L* and KV learn it with the"
                                     " W-method, random-walk and state-prefix oracles within one budget, and"
                                     " tinyalgo's verifier checks each learned machine.  Against tinyalgo's kept"
                                     " proof of the same network (--proofs): its states and time, the oracles'"
                                     " counterexamples replayed on its machine, and each oracle run on it."
                                     " Writes results.csv and README.md in --out (rows of other networks kept).")
    p.add_argument("--networks", nargs="+", required=True, metavar="DIR",
                   help="run folders <task>-<column>-s<seed>, each with a checkpoint.npz (required)")
    p.add_argument("--proofs", nargs="+", default=[DEFAULT_PROOFS], metavar="DIR",
                   help="where tinyalgo's proofs are: folders holding <task>-s<seed> (kept proofs) or"
                        " loop-<task>-s<seed> (verify-loop folders), each with machine.json and loop.json, searched"
                        f" in order (default {DEFAULT_PROOFS}); a network without one is compared without it."
                        " Each proof found is checked before any learning: of the network's task, base and seed,"
                        " and of that very network where the folder records it (agreement.json's SHA-256)")
    p.add_argument("--out", type=output_path, required=True, metavar="DIR",
                   help="where results.csv and README.md go (required)")
    p.add_argument("--steps", type=int_at_least(1), default=50_000, metavar="N",
                   help="network steps a learning run may use, membership and equivalence queries together"
                        " (default 50,000)")
    p.add_argument("--seconds", type=seconds_within(1, 86400), default=None, metavar="S",
                   help="wall-clock seconds a learning run may use besides --steps (default: no limit, so that a"
                        " run does not depend on the machine's speed)")
    p.add_argument("--verify-seconds", type=seconds_within(1, 86400), default=60.0, metavar="S",
                   help="the verifier's time budget per learned machine (default 60)")
    p.add_argument("--seed", type=int_at_least(0), default=0,
                   help="the seed of AALpy's random tests and of the verifier (default 0)")
    p.set_defaults(func=cmd_aalpy)
