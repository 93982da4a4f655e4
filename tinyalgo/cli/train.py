"""The ``train`` command.

    tinyalgo train                      # Q-learning on addition, the paper's best setting
    tinyalgo train --mode supervised --task reverse --controller ff
    tinyalgo train --resume --out runs/addition-gru-s0

Its flags are made from the declared options of ``QConfig`` and
``SupervisedConfig`` (``tinyalgo.options``).
"""
from __future__ import annotations

import os
from dataclasses import asdict

from tinyalgo.checkpoint import save_checkpoint
from tinyalgo.cli.args import add_task_arguments
from tinyalgo.fileio import atomic_write_json
from tinyalgo.options import add_arguments, from_args
from tinyalgo.qconfig import QConfig
from tinyalgo.qtraining import QTrainer
from tinyalgo.rundir import RunSaver, checkpoint_path, resume_run
from tinyalgo.supervised import SupervisedConfig, train_supervised

CONFIGS = {"Q-learning": QConfig, "supervised": SupervisedConfig}


def run_dir(args, cfg, mode: str) -> str:
    return args.out or os.path.join("runs", f"{mode}-{cfg.task}-{cfg.controller}-s{cfg.seed}")


def train_qlearning(args) -> int:

    cfg = from_args(QConfig, args)
    out = run_dir(args, cfg, "q")
    ckpt, log_path = checkpoint_path(out), os.path.join(out, "log.json")
    if args.resume:
        trainer = resume_run(out, log=print, budget=args.budget)
        print(f"resuming {out}: complexity {trainer.curriculum.level}, {trainer.state.chars} characters trained")
    else:
        trainer = QTrainer(cfg, log=print)
        print(f"Q-learning {cfg.task} (base {cfg.base}) with a {cfg.controller.upper()}-{cfg.units} controller,"
              f" discount {cfg.discount}, {cfg.q} Q, penalty {'on' if cfg.penalty else 'off'},"
              f" {cfg.reward} reward, budget {cfg.budget:,} characters -> {out}")
    save = RunSaver(out, trainer)
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
    cfg = from_args(SupervisedConfig, args)
    out = run_dir(args, cfg, "sup")
    print(f"supervised {cfg.task} with a {cfg.controller.upper()}-{cfg.units} controller -> {out}")
    controller, report = train_supervised(cfg, log=print)
    ckpt = checkpoint_path(out)
    save_checkpoint(ckpt, controller, dict(mode="supervised", config=asdict(cfg), run=report))
    atomic_write_json(os.path.join(out, "log.json"), report)
    print(f"{'solved' if report['solved_target'] else 'did not solve'} complexity {cfg.target};"
          f" checkpoint {ckpt}")
    return 0


def cmd_train(args) -> int:
    return train_supervised_cmd(args) if args.mode == "supervised" else train_qlearning(args)


def register(sub) -> None:

    train = sub.add_parser("train", help="train a controller (Q-learning by default)",
                           description="Q-learning from input-output pairs (paper section 6) or the supervised"
                                       " setting (section 5).  With no arguments: addition, GRU-200, dynamic"
                                       " discount, Watkins Q(lambda), penalty.")
    train.add_argument("--mode", choices=("q", "supervised"), default="q")
    add_task_arguments(train)
    add_arguments(train, CONFIGS)
    train.add_argument("--out", default=None, help="run directory (default runs/<mode>-<task>-<controller>-s<seed>)")
    train.add_argument("--resume", action="store_true", help="continue the run saved in --out")
    train.set_defaults(func=cmd_train)
