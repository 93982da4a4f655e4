"""The ``train`` and ``evaluate`` commands.

    tinyalgo train                      # Q-learning on addition, the paper's best setting
    tinyalgo train --mode supervised --task reverse --controller ff
    tinyalgo train --resume --out runs/addition-gru-s0
    tinyalgo evaluate runs/addition-gru-s0/checkpoint.npz --complexities 100 1000 20000
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import asdict

from tinyalgo.checkpoint import load_checkpoint, save_checkpoint
from tinyalgo.cli.args import add_task_arguments, int_at_least, unit_interval
from tinyalgo.controller import Controller
from tinyalgo.environment import END_REASONS
from tinyalgo.evaluation import EpsilonGreedyAgent, GreedyAgent, evaluate, first_departures
from tinyalgo.experiments import figure3
from tinyalgo.experiments.table1 import (TABLE1_COLUMNS, TABLE1_ROWS, run_sweep, summarize_directory, table1_jobs,
                                         write_table1)
from tinyalgo.fileio import atomic_write_json
from tinyalgo.qconfig import DISCOUNTS, EXPLORATIONS, Q_KINDS, SOLVED_LR_AFTER, QConfig, RunState, default_controller
from tinyalgo.qtraining import QTrainer
from tinyalgo.render import action_name
from tinyalgo.rewards import REWARDS
from tinyalgo.supervised import SupervisedConfig, train_supervised

SAVE_EVERY_SECONDS = 30.0


def _dir(args, mode):
    controller = args.controller or (default_controller(args.task) if mode == "q" else "gru")
    return args.out or os.path.join("runs", f"{mode}-{args.task}-{controller}-s{args.seed}")


def _save(path, controller_cls, config, params, extra):
    save_checkpoint(path, controller_cls(config, params=params), extra)


def train_qlearning(args) -> int:

    out = _dir(args, "q")
    ckpt, log_path = os.path.join(out, "checkpoint.npz"), os.path.join(out, "log.json")
    best_path = os.path.join(out, "best.npz")          # the best model tested at --confirm-length (keep_best)
    if args.resume:
        controller, extra = load_checkpoint(ckpt)
        if extra.get("mode") != "qlearning":
            raise ValueError(f"{ckpt} is not a Q-learning run (mode {extra.get('mode')!r})")
        # runs saved before these options existed explored the release's way and stopped at the paper's solve
        saved = {"exploration": "release", "confirm_length": 0, "confirm_passes": 1, "keep_best": False,
                 **extra["config"]}
        cfg = QConfig(**{**saved, "report_lengths": tuple(saved["report_lengths"]),
                         **({"budget": args.budget} if args.budget is not None else {})})
        state = RunState(**extra["run"])
        trainer = QTrainer(cfg, controller=controller, state=state, log=print)
        if state.best is not None:
            if os.path.exists(best_path):
                best_model, best_extra = load_checkpoint(best_path)
                trainer.best_params, state.best = best_model.params, best_extra.get("best", state.best)
            else:
                print(f"{best_path} is missing: the run forgets its best tested model")
                state.best = None
        print(f"resuming {out}: complexity {trainer.curriculum.level}, {state.chars} characters trained")
    else:
        cfg = QConfig(task=args.task, controller=args.controller or "", units=args.units, layers=args.layers,
                      base=args.base, seed=args.seed, discount=args.discount, q=args.q, penalty=args.penalty,
                      reward=args.reward, exploration=args.exploration, dtype=args.dtype, gamma=args.gamma,
                      confirm_length=args.confirm_length, confirm_passes=args.confirm_passes,
                      keep_best=args.keep_best, threads=args.threads, solved_lr=args.solved_lr,
                      solved_lr_after=args.solved_lr_after, greedy_lanes=args.greedy_lanes,
                      **({"budget": args.budget} if args.budget is not None else {}))
        trainer = QTrainer(cfg, log=print)
        print(f"Q-learning {cfg.task} (base {cfg.base}) with a {cfg.controller.upper()}-{cfg.units} controller,"
              f" discount {cfg.discount}, {cfg.q} Q, penalty {'on' if cfg.penalty else 'off'},"
              f" {cfg.reward} reward, budget {cfg.budget:,} characters -> {out}")
    last_save, best_saved = [time.perf_counter()], [trainer.best_params]

    def save(t, force=False):
        if force or time.perf_counter() - last_save[0] > SAVE_EVERY_SECONDS:
            params, state = t.boundary()
            if t.best_params is not None and t.best_params is not best_saved[0]:    # before the run state names it
                _save(best_path, Controller, t.controller.config, t.best_params,
                      dict(mode="qlearning-best", config=asdict(t.cfg), best=t.state.best))
                best_saved[0] = t.best_params
            _save(ckpt, Controller, t.controller.config, params,
                  dict(mode="qlearning", config=asdict(t.cfg), run=asdict(state)))
            last_save[0] = time.perf_counter()

    try:
        state = trainer.run(on_boundary=save)
    except KeyboardInterrupt:
        save(trainer, force=True)
        print(f"stopped; saved the last segment boundary to {ckpt}; continue with"
              f" `tinyalgo train --resume --out {out}`")
        return 130
    save(trainer, force=True)
    report = trainer.final_report()
    atomic_write_json(log_path, report)
    verdict = "solved" if state.solved_at else "not solved within the budget"
    print(f"{verdict}; {state.chars:,} characters in {state.seconds / 60:.1f} minutes; checkpoint {ckpt}, log {log_path}")
    return 0


def train_supervised_cmd(args) -> int:

    if args.resume:
        raise ValueError("--resume is for Q-learning runs; supervised runs are short: start again")
    out = _dir(args, "sup")
    cfg = SupervisedConfig(task=args.task, controller=args.controller or "gru", units=args.units, layers=args.layers,
                           base=args.base, seed=args.seed, target=args.target, dtype=args.dtype, threads=args.threads,
                           **({"budget": args.budget} if args.budget is not None else {}))
    print(f"supervised {cfg.task} with a {cfg.controller.upper()}-{cfg.units} controller -> {out}")
    controller, report = train_supervised(cfg, log=print)
    ckpt = os.path.join(out, "checkpoint.npz")
    save_checkpoint(ckpt, controller, dict(mode="supervised", config=asdict(cfg), run=report))
    atomic_write_json(os.path.join(out, "log.json"), report)
    print(f"{'solved' if report['solved_target'] else 'did not solve'} complexity {cfg.target};"
          f" checkpoint {ckpt}")
    return 0


def cmd_train(args) -> int:
    return train_supervised_cmd(args) if args.mode == "supervised" else train_qlearning(args)


def cmd_evaluate(args) -> int:

    controller, extra = load_checkpoint(args.checkpoint)
    config = extra.get("config", {})
    task, base = config.get("task"), config.get("base", 10)
    if task is None:
        raise ValueError(f"{args.checkpoint} does not say which task it was trained on")
    exploring = None if args.epsilon is None else EpsilonGreedyAgent(controller, args.epsilon, args.seed)
    print(f"{args.checkpoint}: {task} (base {base}), {controller.config.core.upper()}-{controller.config.units}")
    rows = evaluate(GreedyAgent(controller), task, args.complexities, args.instances, base, args.seed, log=print)
    if exploring is not None:
        print(f"acting as a training lane (epsilon {args.epsilon}): 'solved' = training episodes that reach their end")
        evaluate(exploring, task, args.complexities, args.instances, base, args.seed, log=print)
    if args.departures:
        for i, c in enumerate(args.complexities):       # the same instances as above (same seeds)
            print_departures(first_departures(controller, task, c, args.instances, base, args.seed + 7919 * i),
                             c, controller.config.n_actions // 2)
    if args.json:
        atomic_write_json(args.json, dict(checkpoint=args.checkpoint, task=task, base=base, results=rows))
    return 0


def print_departures(rows, complexity: int, n_moves: int) -> None:
    """One line per failed instance: how it ended and the decision that started it."""

    failed = [r for r in rows if not r["solved"]]
    departed = sum(r["departure"] is not None for r in rows)
    print(f"complexity {complexity}: {len(failed)} of {len(rows)} failed; {departed} left the ground-truth actions")
    for r in failed:
        d = r["departure"]
        where = "never left the ground-truth actions" if d is None else (
            f"left them at step {d['step']} (output {d['output']}): {action_name(d['action'], n_moves)}"
            f" (Q {d['q_action']:.3f}) instead of {action_name(d['truth'], n_moves)} (Q {d['q_truth']:.3f})")
        print(f"  instance {r['lane']:>3d}: {END_REASONS[r['reason']]}; {where}")


def cmd_experiment(args) -> int:

    command = "tinyalgo " + " ".join(sys.argv[1:])
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    if args.name == "figure3":
        tasks = args.tasks or list(figure3.TASKS)
        out = args.out or "figures"
        print(f"Figure 3: {len(tasks) * len(args.controllers) * args.seeds} supervised runs,"
              f" {args.workers} worker processes -> {out}")
        rows = figure3.run_figure3(tasks, args.controllers, seeds, args.budget or 3_000_000,
                                   args.complexities, args.instances, args.workers)
        if args.merge:
            rows = figure3.merge_rows(args.merge, rows)
        figure3.write_figure3(rows, out)
        print(f"wrote {out}/supervised_accuracy.png and .csv ({command})")
        return 0
    out, budget = args.out or "figures/table1", args.budget or 30_000_000
    if args.summarize:
        rows = summarize_directory(out)
        if not rows:
            raise ValueError(f"no run logs in {out}/runs to summarize")
        write_table1(rows, out, budget, command)
        print(open(os.path.join(out, "table1.md")).read())
        return 0
    jobs = table1_jobs(args.tasks or list(TABLE1_ROWS), args.columns, seeds, budget, out,
                       gamma=args.gamma, confirm_length=args.confirm_length, confirm_passes=args.confirm_passes,
                       solved_lr=args.solved_lr, solved_lr_after=args.solved_lr_after,
                       greedy_lanes=args.greedy_lanes)
    print(f"Table 1: {len(jobs)} runs, {args.workers} worker processes -> {out}"
          f" (each run's progress: {out}/runs/<task>-<column>-s<seed>.log)")
    rows = run_sweep(jobs, workers=args.workers, on_result=lambda rows: write_table1(rows, out, budget, command))
    write_table1(rows, out, budget, command)
    print(open(os.path.join(out, "table1.md")).read())
    return 0


def _shared_q_options(parser) -> None:
    """The Q-learning options of both train and experiment: the greedy lanes and what a run does after the
    paper's solve."""
    parser.add_argument("--greedy-lanes", type=int_at_least(0), default=0, metavar="N",
                        help="N of the 20 training lanes never explore (default 0: epsilon on all, the paper); with"
                             " epsilon everywhere no training episode of 3-number addition past complexity ~150"
                             " reaches its last column, and the final carry is forgotten")
    parser.add_argument("--confirm-length", type=int_at_least(0), default=1000, metavar="L",
                        help="after the paper's solve (length 100), train on until 50 instances of length L pass"
                             " too (default 1000; 0: stop at the paper's solve)")
    parser.add_argument("--confirm-passes", type=int_at_least(1), default=5, metavar="N",
                        help="the length-L test must pass N times in a row, once after each curriculum advance"
                             " (default 5: 250 fresh instances)")
    parser.add_argument("--solved-lr", type=float, default=0.0, metavar="LR",
                        help="the SGD learning rate once the paper's solve is recorded (default 0: keep 0.1); 0.03"
                             " stopped the late collapses of solved reverse and addition models but slowed 3-number"
                             " addition")
    parser.add_argument("--solved-lr-after", choices=SOLVED_LR_AFTER, default="solve",
                        help="when --solved-lr takes over: at the paper's solve (default) or at the first pass of"
                             " the length-L test")


def register(sub) -> None:

    train = sub.add_parser("train", help="train a controller (Q-learning by default)",
                           description="Q-learning from input-output pairs (paper section 6) or the supervised"
                                       " setting (section 5).  With no arguments: addition, GRU-200, dynamic"
                                       " discount, Watkins Q(lambda), penalty.")
    train.add_argument("--mode", choices=("q", "supervised"), default="q")
    add_task_arguments(train)
    train.add_argument("--controller", choices=("ff", "gru", "lstm"), default=None,
                       help="default: ff for reverse and walk, gru otherwise (paper Table 1)")
    train.add_argument("--units", type=int_at_least(1), default=200)
    train.add_argument("--layers", type=int_at_least(1), default=1)
    train.add_argument("--discount", choices=DISCOUNTS, default="dynamic")
    train.add_argument("--q", choices=Q_KINDS, default="watkins")
    train.add_argument("--penalty", action=argparse.BooleanOptionalAction, default=True)
    train.add_argument("--reward", choices=REWARDS, default="binary")
    train.add_argument("--exploration", choices=EXPLORATIONS, default="constant",
                       help="constant: epsilon 0.05 on every training lane (paper); release: 0 once validation"
                            " characters are right (>= 90%% after the penalty switch), as the Torch release")
    train.add_argument("--gamma", type=unit_interval, default=1.0,
                       help="the paper's gamma in gamma * V'/V of the dynamic discount (default 1, the release)")
    _shared_q_options(train)
    train.add_argument("--keep-best", action=argparse.BooleanOptionalAction, default=True,
                       help="out of budget before the length-L test passed: end with the model that did best on"
                            " it (kept in <out>/best.npz) if it beats the last one on a fresh test (default on)")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--budget", type=int_at_least(0), default=None,
                       help="characters (lane-steps) of training; default 3e7 (Q), 3e6 (supervised)")
    train.add_argument("--target", type=int_at_least(1), default=1000,
                       help="supervised: stop once this complexity is solved")
    train.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    train.add_argument("--threads", type=int, choices=(1, 2), default=2 if (os.cpu_count() or 1) >= 2 else 1,
                       help="2 (default on a multi-core machine): backprop-through-time hands its weight gradients"
                            " to a helper thread on a second core; 1: one core")
    train.add_argument("--out", default=None, help="run directory (default runs/<mode>-<task>-<controller>-s<seed>)")
    train.add_argument("--resume", action="store_true", help="continue the run saved in --out")
    train.set_defaults(func=cmd_train)

    ev = sub.add_parser("evaluate", help="accuracy of a checkpoint at chosen complexities")
    ev.add_argument("checkpoint")
    ev.add_argument("--complexities", type=int_at_least(1), nargs="+", default=[100, 1000])
    ev.add_argument("--instances", type=int_at_least(1), default=50)
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--json", default=None, help="also write the results to this JSON file")
    ev.add_argument("--departures", action="store_true",
                    help="for each failed instance, the first step where the controller left the ground-truth actions")
    ev.add_argument("--epsilon", type=float, default=None, metavar="EPS",
                    help="also run the instances epsilon-greedily, as Q-learning's training lanes act (0.05):"
                         " how many training episodes reach their end")
    ev.set_defaults(func=cmd_evaluate)

    ex = sub.add_parser("experiment", help="reproduce the paper's Table 1 (Q-learning) or Figure 3 (supervised)")
    ex.add_argument("name", choices=("table1", "figure3"))
    ex.add_argument("--tasks", nargs="+", choices=list(TABLE1_ROWS), default=None, help="default: all six")
    ex.add_argument("--columns", nargs="+", choices=list(TABLE1_COLUMNS), default=["full"], help="table1 columns")
    ex.add_argument("--controllers", nargs="+", choices=("ff", "gru", "lstm"), default=["ff", "gru", "lstm"],
                    help="figure3 controllers")
    ex.add_argument("--complexities", nargs="+", type=int_at_least(1),
                    default=[10, 30, 100, 300, 1000, 3000, 10000, 20000], help="figure3 test complexities")
    ex.add_argument("--instances", type=int_at_least(1), default=50, help="figure3 test instances")
    ex.add_argument("--seeds", type=int_at_least(1), default=10)
    ex.add_argument("--first-seed", type=int, default=0)
    ex.add_argument("--budget", type=int_at_least(1), default=None,
                    help="characters per run (default 3e7 for table1, 3e6 for figure3)")
    ex.add_argument("--gamma", type=unit_interval, default=1.0, help="table1: gamma of the dynamic discount")
    _shared_q_options(ex)
    ex.add_argument("--workers", type=int_at_least(1), default=2)
    ex.add_argument("--out", default=None, help="default figures/table1 (table1) or figures (figure3)")
    ex.add_argument("--merge", default=None, metavar="CSV",
                    help="figure3: keep this CSV's rows for the (task, controller) pairs not re-run")
    ex.add_argument("--summarize", action="store_true",
                    help="table1: only rebuild table1.csv/.md from the run logs already in --out")
    ex.set_defaults(func=cmd_experiment)
