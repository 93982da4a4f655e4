"""The ``experiment`` command: each result of the paper one subcommand.

The five sweeps (``tinyalgo.cli.sweeps``: table1, figure3, figure5,
appendix-b, appendix-c), each with its own options, and ``compact``, which
packs a sweep's run logs into one file:

    tinyalgo experiment table1 --tasks copy addition --columns full --seeds 10
    tinyalgo experiment figure5 --summarize      # the figure again from the run logs and tests in --out
    tinyalgo experiment compact --out figures/figure5

The analyses of a sweep's final models or table, and the automata (paper
Figure 4, section 6.4):

    tinyalgo experiment departures --out figures/figure5_ablations
    tinyalgo experiment q-margins --out figures/figure5_ablations
    tinyalgo experiment hazard --out figures/figure5_ablations
    tinyalgo experiment reverse-first-step --out figures/appendix
    tinyalgo experiment automata --models DIR [DIR ...] --out figures/automata
    tinyalgo experiment figure4b --out figures/automata

Stable-Baselines3's PPO and sb3-contrib's RecurrentPPO against the Q-learner
(the sb3 extra):

    tinyalgo experiment sb3-example --tasks copy reverse --steps 100000 --out figures/sb3_example

An output folder that cannot be written, models that are missing and sizes
that would not fit in memory are refused before any work starts.
"""
from __future__ import annotations

import glob
import os
import sys

from tinyalgo.cli.aalpy_command import register_aalpy
from tinyalgo.cli.args import UsageError, check_writable_folder, int_at_least, output_path
from tinyalgo.cli.sizes import check_memory, environment_bytes
from tinyalgo.cli.sweeps import SWEEPS, register_sweeps
from tinyalgo.experiments import (appendix, automata, certified, departures, figure4b, hazard, q_margins,
                                  reverse_first_step, sb3_example)
from tinyalgo.experiments.runlogs import archive_path, pack
from tinyalgo.experiments.table1_report import TABLE1_ROWS

def check_folder(out: str) -> None:
    """A UsageError unless ``out`` is an existing folder this process can write in."""
    if not os.path.isdir(out):
        raise UsageError(f"--out {out}: {'is a file' if os.path.exists(out) else 'no such folder'}; give the folder"
                         " of a sweep")
    check_writable_folder(out, "--out")


def cmd_compact(args) -> int:
    check_folder(args.out)
    names = pack(args.out)
    print(f"{archive_path(args.out)}: {len(names)} runs packed (the loose files in {args.out}/runs are left as"
          " they are; git ignores them)")
    return 0


def cmd_reverse_first_step(args) -> int:
    check_folder(args.out)
    reverse_first_step.reverse_first_step(args.out)
    print(f"wrote {os.path.join(args.out, reverse_first_step.CSV)}")
    return 0


def addition_models(args) -> dict:
    """The final addition models of --out's runs for --columns and --seeds, loaded before any work; the
    memory of the test instances checked first."""
    check_folder(args.out)
    check_memory([(environment_bytes(args.instances, args.complexity), f"--complexity {args.complexity}",
                   f"{args.instances} test instances of complexity {args.complexity} drawn at once")])
    return departures.addition_models(args.out, args.columns, range(args.seeds))


def cmd_departures(args) -> int:
    rows = departures.departures(addition_models(args), args.complexity, args.instances)
    path = departures.write_departures(rows, args.out)
    for kind, (columns, failed, total) in departures.by_discount(rows).items():
        print(f"{kind} discount ({', '.join(columns)}): {failed} failed; "
              + ", ".join(f"{name} {n}" for name, n in total.most_common()))
    print(f"wrote {path}")
    return 0


def cmd_q_margins(args) -> int:
    rows = q_margins.q_margins(addition_models(args), args.complexity, args.instances)
    path = q_margins.write_margins(rows, args.out)
    for column, (med, p1, below) in q_margins.column_summary(rows).items():
        print(f"{column:>16}: median of the runs' median margins {med:.3f}, of their 1st percentiles {p1:.4f},"
              f" steps under 1 %: {below:.4f}")
    print(f"wrote {path}")
    return 0


def cmd_hazard(args) -> int:
    check_folder(args.out)
    rows = hazard.hazard_table(args.out, args.tasks)
    for (task, kind), (runs, levels, growth) in hazard.summary(rows).items():
        print(f"{task}, {kind} discount, {runs} runs: median h per 10^5 at "
              + ", ".join(f"{n:,}: {h:.1f}" for n, h in levels.items()) + f"; median h(N) / h({hazard.SHORTEST:,}) at "
              + ", ".join(f"{n:,}: {g:.2f}" for n, g in growth.items() if g is not None))
    print(f"wrote {os.path.join(args.out, hazard.CSV)}")
    return 0


def cmd_figure4b(args) -> int:
    check_writable_folder(args.out, "--out")
    figure4b.figure4b(args.out, args.seed, args.max_digits, args.budget)
    print(f"wrote {os.path.join(args.out, 'figure4b.png')} and figure4b.json")
    return 0


def cmd_automata(args) -> int:
    check_writable_folder(args.out, "--out")
    chosen = automata.to_study(args.models, args.out, args.redo)
    if not chosen and not args.redraw and not glob.glob(os.path.join(args.out, "*.results.json")):
        raise UsageError(f"--out {args.out} has no results to tabulate; give --models")
    os.makedirs(args.out, exist_ok=True)
    for d in chosen:
        automata.study(os.path.join(d, "checkpoint.npz"), args.out, instances=args.instances,
                       long_instances={100000: (args.long_network, args.long_machine)},
                       adversarial_digits=args.adversarial_digits, record_instances=args.record_instances,
                       reuse_network=args.reuse_network, tests=args.tests)
    if args.redraw:
        automata.redraw(args.out)
    print(automata.write_table(args.out))
    return 0


def cmd_certified(args) -> int:
    check_writable_folder(args.out, "--out")
    for folder in args.keep or ():
        if not os.path.isfile(os.path.join(folder, "loop.json")):
            raise UsageError(f"--keep {folder}: no loop.json there (made by tinyalgo verify-loop --out {folder})")
    if args.keep:
        check_writable_folder(args.proofs, "--proofs")
    for folder in args.networks or ():
        if not os.path.isdir(folder):
            raise UsageError(f"--networks {folder}: no such folder")
    if not args.keep and not certified.kept_folders(args.proofs):
        raise UsageError(f"--proofs {args.proofs}: no kept loops there (folders with loop.json); give --keep LOOP...")
    rows = certified.write_table(args.proofs, args.out, args.networks, keep=args.keep or ())
    print(certified.markdown(rows))
    proofs = [r for r in rows if r["verified_again"]]
    good = sum(r["verified_again"] == "proved" and r["certificate"] == "accepted" for r in proofs)
    print(f"{good} of {len(proofs)} kept proofs re-verified and their certificates accepted;"
          f" wrote {os.path.join(args.out, 'certified.csv')} and certified.md")
    return 0 if good == len(proofs) else 1


def cmd_sb3_example(args) -> int:
    missing = sb3_example.missing_extra(args.methods)
    if missing:
        raise UsageError(f"sb3-example: {missing}; or leave it out with --methods")
    check_writable_folder(args.out, "--out")
    c = 100 * args.complexity
    check_memory([(environment_bytes(args.instances, c), f"--complexity {args.complexity}",
                   f"{args.instances} test instances of complexity {c} (100 x --complexity) drawn at once")])
    command = "tinyalgo " + " ".join(sys.argv[1:])
    print(f"sb3-example: {', '.join(args.methods)} on {', '.join(args.tasks)} -> {args.out} ({command})")
    rows = sb3_example.run_example(args.tasks, args.methods, args.steps, args.complexity, args.q_budget,
                                   args.instances, args.seed,
                                   on_rows=lambda rows: sb3_example.write_rows(rows, args.out))
    print(f"wrote {sb3_example.write_rows(rows, args.out)}")
    return 0


def add_model_arguments(p, instances: int, complexity: int) -> None:
    """departures and q-margins: which final addition models, tested how."""
    p.add_argument("--out", type=output_path, default=departures.DEFAULT_OUT, metavar="DIR",
                   help="the sweep folder whose runs/ holds the final models; the CSV goes there too"
                        f" (default {departures.DEFAULT_OUT})")
    p.add_argument("--columns", nargs="+", choices=departures.COLUMNS, default=list(departures.COLUMNS),
                   metavar="COLUMN", help=f"Table 1's 200-unit columns: {', '.join(departures.COLUMNS)} (default all)")
    p.add_argument("--seeds", type=int_at_least(1), default=10, metavar="N",
                   help="the runs of seeds 0 .. N-1 of each column (default 10)")
    p.add_argument("--complexity", type=int_at_least(1), default=complexity, metavar="C",
                   help=f"test complexity (default {complexity})")
    p.add_argument("--instances", type=int_at_least(1), default=instances, metavar="N",
                   help=f"fresh test instances per model (default {instances})")


def register_analyses(names) -> None:
    p = names.add_parser("compact", help="pack a sweep's run logs into one file, <out>/runs.jsonl.gz",
                         description="Pack the finished runs of a sweep folder (runs/<name>.json and the JSON files"
                                     " of runs/<name>/) into <out>/runs.jsonl.gz, one run a line, beside those"
                                     " already packed.  --summarize and the sweeps read it as they read the loose"
                                     " files; the models are not packed.")
    p.add_argument("--out", type=output_path, required=True, metavar="DIR", help="the sweep folder (required)")
    p.set_defaults(func=cmd_compact)

    p = names.add_parser("departures", help="the first wrong decision of every failed long addition instance",
                         description=departures.__doc__.split("\n\n")[0].replace("\n", " "))
    add_model_arguments(p, instances=50, complexity=3000)
    p.set_defaults(func=cmd_departures)

    p = names.add_parser("q-margins", help="the gap between the best and the next Q-value, addition models",
                         description=q_margins.__doc__.split("\n\n")[0].replace("\n", " "))
    add_model_arguments(p, instances=20, complexity=1000)
    p.set_defaults(func=cmd_q_margins)

    p = names.add_parser("hazard", help="the failures at long lengths as an error rate per step, from figure5.csv",
                         description=hazard.__doc__.split("\n\n")[0].replace("\n", " "))
    p.add_argument("--out", type=output_path, default=hazard.DEFAULT_OUT, metavar="DIR",
                   help=f"the folder of the figure5.csv to read; hazard.csv goes there (default {hazard.DEFAULT_OUT})")
    p.add_argument("--tasks", nargs="+", choices=list(TABLE1_ROWS), default=None, metavar="TASK",
                   help="the tasks (default: every task in figure5.csv)")
    p.set_defaults(func=cmd_hazard)

    p = names.add_parser("reverse-first-step", help="where Appendix B's reverse models first leave the ground truth",
                         description=reverse_first_step.__doc__.split("\n\n")[0].replace("\n", " "))
    p.add_argument("--out", type=output_path, default=appendix.DEFAULT_OUT, metavar="DIR",
                   help="the appendix-b sweep folder whose runs/ holds the final models; the CSV goes there too"
                        f" (default {appendix.DEFAULT_OUT})")
    p.set_defaults(func=cmd_reverse_first_step)

    p = names.add_parser("automata", help="extract the machines of trained models and test them against the"
                                          " networks (Figure 4, section 6.4)",
                         description=automata.__doc__.split("\n\n")[0].replace("\n", " "))
    p.add_argument("--models", nargs="+", default=[], metavar="DIR",
                   help="model directories, each with a checkpoint.npz (default: none, the table is rebuilt from"
                        " the results in --out)")
    p.add_argument("--out", type=output_path, default=automata.DEFAULT_OUT, metavar="DIR",
                   help=f"where the machines, drawings, results and table.md go (default {automata.DEFAULT_OUT})")
    p.add_argument("--instances", type=int_at_least(1), default=100, metavar="N",
                   help="fresh instances at each length and for the fidelity (default 100)")
    p.add_argument("--long-network", type=int_at_least(0), default=10, metavar="N",
                   help="network instances at length 100,000 (default 10)")
    p.add_argument("--long-machine", type=int_at_least(1), default=100, metavar="N",
                   help="machine instances at length 100,000 (default 100)")
    p.add_argument("--adversarial-digits", type=int_at_least(1), default=10000, metavar="DIGITS",
                   help="digits of the corner instances (default 10,000 digits)")
    p.add_argument("--record-instances", type=int_at_least(1), default=50, metavar="N",
                   help="instances recorded per complexity for the extraction (default 50)")
    p.add_argument("--tests", type=int_at_least(1), default=8, metavar="N",
                   help="recorded paths of six steps a feedback group for the behaviour tags (default 8)")
    p.add_argument("--redo", action="store_true", help="study again models that have results in --out (default off)")
    p.add_argument("--reuse-network", action="store_true",
                   help="take the network's figures from the earlier results in --out where they exist (default off)")
    p.add_argument("--redraw", action="store_true",
                   help="draw every machine JSON of --out again before the table (default off)")
    p.set_defaults(func=cmd_automata)

    p = names.add_parser("certified", help="the fresh-seed table from the kept verify-loop results: each proof"
                                           " verified again and its certificate checked",
                         description=certified.__doc__.split("\n\n")[0].replace("\n", " "))
    p.add_argument("--proofs", required=True, metavar="DIR",
                   help="the kept results, one folder per network (<task>-s<seed>: loop.json, and for a proof"
                        " machine.json, certificate.json.gz, agreement.json), e.g."
                        " figures/automata/fresh_seeds/proofs (required)")
    p.add_argument("--keep", nargs="+", default=None, metavar="LOOP",
                   help="first keep these verify-loop folders' results in --proofs DIR (the proved machine's"
                        " tables, its certificate and report; loop.json), after checking them all: a loop that"
                        " does not fit changes nothing in DIR (default: none)")
    p.add_argument("--networks", nargs="+", default=None, metavar="DIR",
                   help="measure each proved machine's agreement with its network again, at lengths 100, 1,000"
                        " and 10,000, and write it to the proof's agreement.json; DIR holds the run folders"
                        " (<task>-<column>-s<seed>/checkpoint.npz) and, for a retrained network, the loop's"
                        " folder (loop-<task>-s<seed>/checkpoint.npz); every network is checked first (a"
                        " network of another task or base than its proof is refused; one other than the kept"
                        " agreement.json's, by SHA-256, is named) (default: the kept agreement.json)")
    p.add_argument("--out", type=output_path, required=True, metavar="DIR",
                   help="where certified.csv and certified.md go (required)")
    p.set_defaults(func=cmd_certified)

    p = names.add_parser("figure4b", help="an LSTM trained on 1-2 digits of reverse and its machine (Figure 4b)",
                         description=figure4b.__doc__.split("\n\n")[0].replace("\n", " "))
    p.add_argument("--out", type=output_path, default=automata.DEFAULT_OUT, metavar="DIR",
                   help=f"where figure4b.png and figure4b.json go (default {automata.DEFAULT_OUT})")
    p.add_argument("--seed", type=int_at_least(0), default=0, help="the training seed (default 0)")
    p.add_argument("--max-digits", type=int_at_least(1), default=2, metavar="D",
                   help="the longest training instance, in digits (default 2)")
    p.add_argument("--budget", type=int_at_least(1), default=2_000_000, metavar="CHARS",
                   help="training characters at most (default 2,000,000 characters)")
    p.set_defaults(func=cmd_figure4b)

    p = names.add_parser("sb3-example", help="Stable-Baselines3's PPO and RecurrentPPO against the Q-learner on copy"
                                             " and reverse, tested at 1, 10 and 100 x the training complexity",
                         description=sb3_example.__doc__.split("\n\n")[0].replace("\n", " ")
                         + " Needs the sb3 extra (and sb3-contrib for recurrent_ppo).")
    p.add_argument("--tasks", nargs="+", choices=list(sb3_example.ENV_IDS), default=list(sb3_example.ENV_IDS),
                   metavar="TASK", help="copy, reverse (default both)")
    p.add_argument("--methods", nargs="+", choices=sb3_example.METHODS, default=list(sb3_example.METHODS),
                   metavar="METHOD", help="ppo (SB3, MLP policy), recurrent_ppo (sb3-contrib, LSTM policy), q"
                                          " (tinyalgo's Q-learner) (default all three)")
    p.add_argument("--steps", type=int_at_least(1), default=100_000, metavar="N",
                   help="SB3 training steps (lane-steps) per task and method (default 100,000)")
    p.add_argument("--complexity", type=int_at_least(2), default=6, metavar="C",
                   help="SB3's training complexity C; every method is tested at C, 10 C and 100 C (default 6)")
    p.add_argument("--q-budget", type=int_at_least(1), default=300_000, metavar="CHARS",
                   help="the Q-learner's budget in characters; it stops earlier at the paper's solve"
                        " (default 300,000)")
    p.add_argument("--instances", type=int_at_least(1), default=50, metavar="N",
                   help="fresh test instances at each complexity (default 50)")
    p.add_argument("--seed", type=int_at_least(0), default=0, help="the training seed (default 0)")
    p.add_argument("--out", type=output_path, default=sb3_example.DEFAULT_OUT, metavar="DIR",
                   help=f"where results.csv goes (default {sb3_example.DEFAULT_OUT})")
    p.set_defaults(func=cmd_sb3_example)


def register(sub) -> None:
    ex = sub.add_parser("experiment", help="reproduce a result of the paper: " + ", ".join(SWEEPS)
                                           + ", and the analyses and automata behind figures/README.md",
                        description="Each result of the paper, one subcommand: the sweeps (every sweep is"
                                    " resumable: the same command again continues it), compact (a sweep's logs"
                                    " in one file), the analyses of a sweep's models, and the automata.")
    names = ex.add_subparsers(dest="name", metavar="NAME", required=True)
    register_sweeps(names)
    register_analyses(names)
    register_aalpy(names)
