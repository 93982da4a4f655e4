"""The ``automaton`` command: extract a trained controller's machine
(tinyalgo.automata; paper section 5, Figure 4).

    tinyalgo automaton runs/q-reverse-ff-s0/checkpoint.npz --out runs/automaton-reverse

writes DIR/machine.json (the reduced machine), DIR/machine-minimal.json (the
exact minimisation), DIR/machine.png (its drawing) and DIR/fidelity.json
(agreement with the network on held-out instances).
"""
from __future__ import annotations

import os

from tinyalgo.automata.extract import default_complexities, extract, fidelity
from tinyalgo.cli.args import (Remember, UsageError, check_empty_folder, check_writable_folder, checkpoint_task,
                               int_at_least, task_name, was_given)
from tinyalgo.cli.sizes import check_memory, environment_bytes
from tinyalgo.runs.fileio import atomic_write_json
from tinyalgo.tasks import TASKS, make_task

RECORDED_BYTES_PER_STEP = 64      # a recorded step's observation, action, symbol and links, besides its state
STEPS_PER_COMPLEXITY = 4          # steps of an instance per unit of complexity, at most (walk: 2, addition3: 3)


def check_sizes(args, controller, task: str, base: int, complexities) -> None:
    """The recording's and the tests' complexities (``args.fidelity``, where
    the command has it) against the task's minimum, and their memory against
    what this process can get, named by the options that make them (--top
    and --fidelity-instances where given)."""
    minimum = make_task(task, base).min_complexity
    fidelity = getattr(args, "fidelity", None)
    for option, values in (("--complexities", complexities), ("--fidelity", fidelity)):
        if values and min(values) < minimum:
            raise UsageError(f"{option} must be at least {minimum} for task {task!r}; got {min(values)}")
    top = max(complexities)
    recorded = f"--top {args.top}" if was_given(args, "top") else f"--complexities up to {top}"
    held_out = f"--fidelity {max(fidelity)}" if fidelity else ""
    if fidelity and was_given(args, "fidelity_instances"):
        held_out = f"--fidelity-instances {args.fidelity_instances} at {held_out}"
    state = controller.config.units * max(controller.config.layers, 1) * 2 * 8
    check_memory([
        (args.instances * sum(complexities) * STEPS_PER_COMPLEXITY * (state + RECORDED_BYTES_PER_STEP),
         f"--instances {args.instances} at {recorded}", "the recorded steps and states"),
        (environment_bytes(args.instances, top), f"--instances {args.instances} at {recorded}",
         "the instances drawn at once")]
        + ([(environment_bytes(args.fidelity_instances, max(fidelity)), held_out,
             f"{args.fidelity_instances} held-out instances drawn at once")] if fidelity else []))


def cmd_automaton(args) -> int:
    check_writable_folder(args.out, "--out")
    check_empty_folder(args.out, "--out", "automaton writes machine.json, machine-minimal.json, machine.png and"
                                          " fidelity.json")
    controller, task, base = checkpoint_task(args.checkpoint, args.task)
    complexities = args.complexities or default_complexities(task, args.top)
    check_sizes(args, controller, task, base, complexities)
    print(f"{args.checkpoint}: {task} (base {base}), {controller.config.core.upper()}-{controller.config.units}")
    r = extract(controller, task, base, complexities, args.instances, args.seed, args.max_clusters, log=print)
    raw, minimal, m = r["raw"], r["minimal"], r["reduced"]
    print(f"{r['steps']} steps recorded at complexities {complexities}; {r['k']} k-means clusters;"
          f" states: {raw.n_states} raw, {minimal.n_states} minimal, {m.n_states} with unseen transitions as"
          f" don't care; {raw.info['conflicts']} recorded steps disagree with their transition's majority;"
          f" {r['seconds']['total']:.1f} s")
    from tinyalgo.automata.draw import draw_machine, drawing_kind     # matplotlib loads only when drawing

    os.makedirs(args.out, exist_ok=True)
    m.save(os.path.join(args.out, "machine.json"))
    minimal.save(os.path.join(args.out, "machine-minimal.json"))
    draw_machine(m, os.path.join(args.out, "machine.png"), f"{task}: {m.n_states} states")
    reports = []
    for c in args.fidelity:
        f = fidelity(m, controller, c, args.fidelity_instances, seed=args.seed + 1000 + c, base=base)
        reports.append(f)
        print(f"fidelity at complexity {c}: {f['step']:.4%} of steps, {f['instance']:.0%} of instances agree"
              f" ({f['instances']} held-out instances; network solved {f['network_solved']:.0%};"
              f" {f['fallbacks']} unseen transitions answered by the network)")
    atomic_write_json(os.path.join(args.out, "fidelity.json"),
                      dict(checkpoint=args.checkpoint, task=task, base=base, k=r["k"], raw_states=raw.n_states,
                           minimal_states=minimal.n_states, states=m.n_states, conflicts=raw.info["conflicts"],
                           recorded_steps=r["steps"], seconds=r["seconds"], fidelity=reports))
    print(f"wrote {args.out}/machine.json, machine-minimal.json, machine.png ({drawing_kind(m)}), fidelity.json")
    return 0


def add_extraction_arguments(parser, out_what: str, top: str, complexities_group=None) -> None:
    """The arguments of a command that extracts a checkpoint's machine: the
    checkpoint, --out, --task, --complexities (default: 12 from the task's
    minimum to ``top``; added to ``complexities_group`` if given, e.g. a
    mutually exclusive group) and --instances."""
    parser.add_argument("checkpoint")
    parser.add_argument("--out", required=True, metavar="DIR", help=f"directory for {out_what} (required)")
    parser.add_argument("--task", type=task_name, default=None, metavar="TASK",
                        help=f"check that the checkpoint is of this task, one of {', '.join(TASKS)} (default: the"
                             " one it names)")
    (complexities_group or parser).add_argument("--complexities", type=int_at_least(1), nargs="+", default=None,
                        help=f"recording complexities (default: 12 from the task's minimum to {top})")
    parser.add_argument("--instances", type=int_at_least(1), default=50,
                        help="recorded instances per complexity (default 50)")


def register(sub) -> None:
    a = sub.add_parser("automaton", help="extract the Mealy machine of a trained controller (paper Figure 4)")
    recorded = a.add_mutually_exclusive_group()         # --top sets the default of --complexities
    add_extraction_arguments(a, "the machine, its drawing and report", "--top", complexities_group=recorded)
    recorded.add_argument("--top", type=int_at_least(2), default=100, action=Remember,
                          help="largest recording complexity when --complexities is not given (default 100)")
    a.add_argument("--max-clusters", type=int_at_least(1), default=256,
                   help="largest number of k-means clusters tried (default 256)")
    a.add_argument("--fidelity", type=int_at_least(1), nargs="+", default=[100, 1000],
                   help="held-out complexities of the fidelity report (default 100 1000)")
    a.add_argument("--fidelity-instances", type=int_at_least(1), default=100, action=Remember,
                   help="held-out instances at each of those complexities (default 100)")
    a.add_argument("--seed", type=int_at_least(0), default=0,
                   help="seed of the recorded and held-out instances and of k-means (default 0)")
    a.set_defaults(func=cmd_automaton)
