"""The ``verify`` command: prove an extracted machine right at every length,
or give an instance it fails (tinyalgo.automata.verify; paper section 6.4).

    tinyalgo verify figures/automata/reverse-ff-s0.json --json report.json --dot m.dot --aalpy m-aalpy.dot

prints the verdict (proved, with what was established; a counterexample,
with its length and how the environment ended it; or not proved, with the
reasons), and writes the report as JSON, the machine as Graphviz DOT and in
AALpy's Mealy ``.dot`` form when asked, and with ``--certificate FILE`` what
a proof established, which

    tinyalgo check-proof figures/automata/reverse-ff-s0.json CERTIFICATE

checks without searching (tinyalgo/automata/check.py).  Exit status 0
whatever the verdict (check-proof: 1 when it rejects the certificate); 2 for
bad input, such as a machine that does not fit the task it names (one line
on stderr, before any work).

    tinyalgo verify-loop runs/q-reverse-ff-s0/checkpoint.npz --out runs/loop-reverse

runs the counterexample-guided loop (tinyalgo/automata/loop.py) from a
checkpoint: extract, verify, record the network on the counterexample (or,
where the network fails it too, train the network on the counterexamples
with the run's Q-learning: tinyalgo/automata/retrain.py), extract again,
until a proof; one line a round (states, counterexample length, proof or
not); writes DIR/machine.json (the last machine), DIR/loop.json (the rounds,
the counterexamples, the last verification), where the last machine is
proved DIR/certificate.json.gz (its certificate, for check-proof) and, when it
trained the network, DIR/checkpoint.npz (the trained network, whose machine
is the last).
"""
from __future__ import annotations

import os

from tinyalgo.automata.export import save_aalpy, save_dot
from tinyalgo.automata.loop import LoopOptions, refine
from tinyalgo.automata.check import MAX_WINDOW, CertificateError, check_certificate, read_certificate
from tinyalgo.automata.machine import load_machine
from tinyalgo.automata.retrain import retrain
from tinyalgo.automata.rules import SPECS, check_machine
from tinyalgo.automata.verify import verify, write_certificate
from tinyalgo.automata.extract import default_complexities
from tinyalgo.cli.automaton import add_extraction_arguments, check_sizes
from tinyalgo.cli.args import (UsageError, check_distinct_outputs, check_empty_folder, check_writable_file,
                               check_writable_folder, checkpoint_run, int_at_least, int_in_range, output_path)
from tinyalgo.runs.checkpoint import save_checkpoint
from tinyalgo.runs.fileio import atomic_write_json
from tinyalgo.runs.rundir import saved_run

CENSUS_MAX = 10 ** 8      # instances a census may run: about 5 minutes a round at 3 s a million
# --window and --max-window: from 1 to the largest window check-proof accepts in a certificate
WINDOW_TYPE = int_in_range(1, MAX_WINDOW, " (the largest window check-proof accepts)")
OUTPUTS = ("json", "dot", "aalpy", "certificate")


def cmd_verify(args) -> int:
    for option in OUTPUTS:
        if getattr(args, option) is not None:
            check_writable_file(getattr(args, option), f"--{option}")
    check_distinct_outputs({f"--{option}": getattr(args, option) for option in OUTPUTS},
                           {"the machine": args.machine})
    if args.window is not None and args.window > args.max_window:
        raise UsageError(f"--window {args.window} is larger than --max-window {args.max_window}")
    machine = load_machine(args.machine)
    check_machine(machine, f"machine {args.machine}")
    print(f"{args.machine}: {machine.task} (base {machine.base}), {machine.n_states} states,"
          f" {int((machine.action < 0).sum())} (state, symbol) pairs never recorded (they move left, no write)")
    report = verify(machine, window=args.window, max_window=args.max_window, max_configs=args.max_configurations,
                    max_seconds=args.max_seconds, seed=args.seed, certify=args.certificate is not None, log=print)
    report["machine"] = args.machine
    cert = report.pop("certificate", None)
    if report["verdict"] == "proved":
        print(f"proved: {report['established']}; {report['configurations']} configurations,"
              f" {report['seconds']:.2f} s")
    elif report["verdict"] == "counterexample":
        print(f"counterexample: length {report['length']} (complexity {report['complexity']}), {report['reason']}"
              f" after {report['correct_outputs']} correct outputs in the environment; {report['note']};"
              f" {report['seconds']:.2f} s")
        print(f"  board cells from x = {report['instance']['x0']}: {report['instance']['cells']};"
              f" targets {report['instance']['targets']}; random key {report['instance']['key']}")
    else:
        print(f"not proved ({report['seconds']:.2f} s): {report['summary']}")
        for reason in report["reasons"]:
            print(f"  {reason}")
    if args.certificate is not None:
        if cert is None:
            print(f"no certificate written to {args.certificate}: the machine was not proved")
        else:
            write_certificate(args.certificate, cert)
    if args.json is not None:
        atomic_write_json(args.json, report)
    if args.dot is not None:
        save_dot(machine, args.dot, f"{machine.task}: {machine.n_states} states")
    if args.aalpy is not None:
        save_aalpy(machine, args.aalpy)
    written = [getattr(args, o) for o in ("json", "dot", "aalpy") if getattr(args, o) is not None] + \
        ([args.certificate] if cert is not None and args.certificate is not None else [])
    if written:
        print(f"wrote {', '.join(written)}")
    return 0


def cmd_check_proof(args) -> int:
    machine = load_machine(args.machine)
    check_machine(machine, f"machine {args.machine}")
    cert = read_certificate(args.certificate)
    try:
        summary = check_certificate(machine, cert)
    except CertificateError as err:
        print(f"rejected: {err}")
        return 1
    print(f"accepted: {summary['established']}; {summary['configurations']} configurations in"
          f" {summary['sections']} sets, each closed under the machine's steps, none failing")
    return 0


def cmd_verify_loop(args) -> int:
    if args.census > CENSUS_MAX:
        raise UsageError(f"--census must be at most {CENSUS_MAX:,} instances (a census of 10^6 takes about 3 s);"
                         f" got {args.census:,}")
    check_writable_folder(args.out, "--out")
    check_empty_folder(args.out, "--out", "the loop writes machine.json, loop.json, certificate.json.gz and"
                                          " checkpoint.npz")
    controller, extra, task, base = checkpoint_run(args.checkpoint, args.task)
    if task not in SPECS:
        raise UsageError(f"{args.checkpoint}: a controller of task {task!r}, which the verifier does not know")
    check_sizes(args, controller, task, base, args.complexities or default_complexities(task))
    options = LoopOptions(**{f: getattr(args, f) for f in LOOP_FIELDS},
                          corners=not args.no_corners,
                          complexities=None if args.complexities is None else tuple(args.complexities))
    train = None
    if options.train_updates and "run" in extra:
        cfg, state = saved_run(extra)
        def train(net, counterexamples):
            return retrain(net, cfg, state, counterexamples, options.train_updates, seed=options.seed, log=print)
    elif options.train_updates:
        print(f"{args.checkpoint} holds no run to go on with (no Q-learning run state): the network is not trained")
    print(f"{args.checkpoint}: {task} (base {base}), {controller.config.core.upper()}-{controller.config.units}")
    out = refine(controller, task, base, options, train=train, log=print)
    os.makedirs(args.out, exist_ok=True)
    out["machine"].save(os.path.join(args.out, "machine.json"))
    if out["trained"]:
        save_checkpoint(os.path.join(args.out, "checkpoint.npz"), controller,
                        dict(extra, retrained=dict(source=args.checkpoint, rounds=out["rounds"])))
    atomic_write_json(os.path.join(args.out, "loop.json"),
                      dict(checkpoint=args.checkpoint, task=task, base=base, options=options.as_dict(),
                           rounds=out["rounds"],
                           counterexamples=out["counterexamples"], report=out["report"]))
    written = "machine.json, loop.json"
    if out["report"]["verdict"] == "proved":
        cert = verify(out["machine"], certify=True).get("certificate")
        if cert is not None:
            write_certificate(os.path.join(args.out, "certificate.json.gz"), cert)
            written += ", certificate.json.gz"
    print(f"{out['report']['verdict']} after {len(out['rounds'])} round(s); wrote {args.out}/{written}")
    return 0


def register(sub) -> None:
    v = sub.add_parser("verify", help="prove a machine right at every length, or find an instance it fails",
                       description="Decide, for every length at once, whether an extracted machine (tinyalgo"
                                   " automaton's machine.json) solves its task: a proof saying what was"
                                   " established, or an instance that fails in the environment.")
    v.add_argument("machine", metavar="MACHINE.json")
    v.add_argument("--window", type=WINDOW_TYPE, default=None, metavar="K",
                   help=f"cells remembered within K of the head, the first window tried, 1..{MAX_WINDOW} (default:"
                        " 1, 2 for 3-number addition)")
    v.add_argument("--max-window", type=WINDOW_TYPE, default=3, metavar="K",
                   help=f"largest window tried while a failing path is not reproduced, 1..{MAX_WINDOW} (default 3)")
    v.add_argument("--seed", type=int_at_least(0), default=0,
                   help="seed of the free cells of the concrete instances tried (default 0)")
    v.add_argument("--json", type=output_path, default=None, metavar="OUT",
                   help="write the report as JSON (default: not written)")
    v.add_argument("--dot", type=output_path, default=None, metavar="OUT",
                   help="write the machine as Graphviz DOT (default: not written)")
    v.add_argument("--aalpy", type=output_path, default=None, metavar="OUT",
                   help="write the machine in AALpy's Mealy .dot form (default: not written)")
    v.add_argument("--certificate", type=output_path, default=None, metavar="OUT",
                   help="where a proof is found, write what it established (the configurations explored, closed"
                        " under the machine's steps), which check-proof checks; gzip-compressed if OUT ends in .gz"
                        " (default: not written)")
    v.add_argument("--max-configurations", type=int_at_least(1), default=400_000, metavar="N",
                   help="stop an exploration above N configurations, the verdict then not proved (default 400,000)")
    v.add_argument("--max-seconds", type=int_at_least(1), default=None, metavar="S",
                   help="stop after S seconds, the verdict then not proved (default: no limit)")
    v.set_defaults(func=cmd_verify)
    c = sub.add_parser("check-proof", help="check a proof's certificate (verify --certificate) without searching",
                       description="Check that a certificate written by tinyalgo verify --certificate proves its"
                                   " machine right at every length: each listed set of configurations holds the"
                                   " task's start, is closed under the machine's steps and never fails"
                                   " (tinyalgo/automata/check.py).  Exit 0: accepted; 1: rejected.")
    c.add_argument("machine", metavar="MACHINE.json")
    c.add_argument("certificate", metavar="CERTIFICATE")
    c.set_defaults(func=cmd_check_proof)
    loop = sub.add_parser("verify-loop", help="extract, verify, record the counterexamples, extract again, until"
                                              " a proof", description="Counterexample-guided extraction from a"
                                              " checkpoint (tinyalgo/automata/loop.py): one line a round.")
    add_extraction_arguments(loop, "the last machine and the rounds' report", "100")
    add_loop_arguments(loop)
    loop.set_defaults(func=cmd_verify_loop)


LOOP_FIELDS = ("rounds", "seed", "train_updates", "repairs", "faithful", "census", "complete", "instances")


def add_loop_arguments(loop) -> None:
    """verify-loop's options, with ``LoopOptions``' defaults (--complexities and --instances come with the
    extraction's arguments)."""
    d = LoopOptions()
    loop.add_argument("--rounds", type=int_at_least(1), default=d.rounds,
                      help=f"at most this many rounds (default {d.rounds})")
    loop.add_argument("--no-corners", action="store_true",
                      help="do not record the task's corner instances (default: recorded)")
    loop.add_argument("--seed", type=int_at_least(0), default=d.seed,
                      help=f"seed of the recorded instances, of k-means and of the census (default {d.seed})")
    loop.add_argument("--train-updates", type=int_at_least(0), default=d.train_updates, metavar="N",
                      help="where the network fails a counterexample, train it (the run's Q-learning, half the"
                           f" episodes on the counterexamples) for at most N updates; 0: stop there"
                           f" (default {d.train_updates})")
    loop.add_argument("--repairs", type=int_at_least(0), default=d.repairs, metavar="N",
                      help="where a round proves no machine, change the transitions of the candidates whose"
                           " counterexample the network solves to follow the network, best candidate first,"
                           " verifying after each change, until one is proved or the round has changed N in all;"
                           f" 0: no repair (default {d.repairs})")
    loop.add_argument("--faithful", action="store_true", default=d.faithful,
                      help="repair only by changes that keep every recorded step the machine answers as the"
                           " network (no repair against what the network does on its recorded episodes)"
                           " (default: a change may lose up to 5%% of the recorded episodes replayed)")
    loop.add_argument("--census", type=int_at_least(0), default=d.census, metavar="N",
                      help="run each counterexample's length on the machine, every instance or N random ones if"
                           " there are more, and record the network next round on those the machine fails and"
                           f" the network solves; 0: only the counterexample; at most {CENSUS_MAX:,}"
                           f" (default {d.census:,})")
    loop.add_argument("--complete", action="store_true", default=d.complete,
                      help="answer each machine's pairs never recorded by the network before verifying it"
                           " (default: they move left without writing, as MachineAgent without a controller)")
