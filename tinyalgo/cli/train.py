"""The ``train`` and ``train-supervised`` commands.

    tinyalgo train                      # Q-learning on addition, the paper's best setting
    tinyalgo train-supervised --task reverse --controller ff
    tinyalgo train --resume --out runs/addition-gru-s0

Their flags are made from the declared options of ``QConfig`` and
``SupervisedConfig`` (``tinyalgo.runs.options``), each command its own.
``--resume`` continues the Q-learning run saved in ``--out`` (default: the
run directory the options name): the options given must be the run's own,
but ``--budget``, which it takes as the new budget; so the command that
started a run, with ``--resume``, continues it.  Everything is checked
before training starts: the options, the run directory and the memory the
run needs.
"""
from __future__ import annotations

import os
from dataclasses import asdict

from tinyalgo.cli.args import (UsageError, add_task_arguments, check_free_space, check_writable_folder, output_path,
                               was_given)
from tinyalgo.cli.progress import Progress
from tinyalgo.cli.sizes import check_memory, controller_bytes, environment_bytes
from tinyalgo.controller import PARAM_COPIES
from tinyalgo.host.allocator import keep_freed_memory
from tinyalgo.runs.beyond import BeyondThePaper
from tinyalgo.runs.checkpoint import load_checkpoint, save_checkpoint
from tinyalgo.runs.config import QConfig, SupervisedConfig
from tinyalgo.runs.fileio import atomic_write_json, remove_stale_temporaries
from tinyalgo.runs.options import add_arguments, declared, from_args
from tinyalgo.runs.rundir import RunSaver, checkpoint_path, held, resume_run
from tinyalgo.supervised import train_supervised
from tinyalgo.tasks import TASKS

CAN_CHANGE = ("budget",)          # what --resume takes from the command line; the rest is the saved run's


def run_dir(args, cfg, mode: str) -> str:
    return args.out or os.path.join("runs", f"{mode}-{cfg.task}-{cfg.controller}-s{cfg.seed}")


def cli_options(cls) -> set:
    return {name for name, (_, opt) in declared(cls).items() if opt.cli}


def _text(value) -> str:
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


def check_same_run(args, out: str) -> None:
    """With --resume: a UsageError unless every option given (but ``CAN_CHANGE``) is the saved run's own."""
    _, extra = load_checkpoint(checkpoint_path(out))
    if not isinstance(extra.get("config"), dict):
        return                               # resume_run says what is missing
    saved = QConfig.from_saved(extra["config"])
    given = [n for n in sorted(cli_options(QConfig) - set(CAN_CHANGE)) if getattr(args, n, None) is not None]
    given += [n for n in ("task", "base") if was_given(args, n)]
    for name in given:
        value, own = getattr(args, name), getattr(saved, name)
        if value != own:
            raise UsageError(f"--{name.replace('_', '-')}: the run in {out} was made with {_text(own)}, not"
                             f" {_text(value)};"
                             f" --resume continues a run as it was made (leave the option out, or give another"
                             f" --out to start a new run; {', '.join('--' + n for n in CAN_CHANGE)} can change)")


def check_out(args, out: str) -> None:
    """The run directory: a folder this user can write in; a run already in it
    is continued with --resume, never overwritten."""
    check_writable_folder(out, "--out")
    has_run = os.path.exists(checkpoint_path(out))
    if args.resume and not has_run:
        raise UsageError(f"--resume: {out} holds no run to continue (no such file {checkpoint_path(out)});"
                         " leave out --resume to start one")
    if not args.resume and has_run:
        raise UsageError(f"--out {out} already holds a run ({checkpoint_path(out)}): continue it with --resume,"
                         " or give another --out")


def check_room(out: str, cfg) -> None:
    """Room in ``out``'s file system for the run's checkpoint, best model and log."""
    params = controller_bytes(cfg.units, cfg.layers, cfg.controller, itemsize=4 if cfg.dtype == "float32" else 8)
    check_free_space(out, 3 * params // PARAM_COPIES + 2 ** 20, "--out",
                     "the run's checkpoint, best model and log (each written to a temporary file first)")


def check_run_memory(cfg) -> None:
    """The run's largest allocations: the controller with a rollout's caches,
    and the environment of its longest test (``tinyalgo.cli.sizes``)."""
    factor = TASKS[cfg.task].factor
    itemsize = 4 if cfg.dtype == "float32" else 8
    parts = [(controller_bytes(cfg.units, cfg.layers, cfg.controller, cfg.batch, cfg.max_rollout, itemsize),
              f"--units {cfg.units}", f"a {cfg.controller.upper()}-{cfg.units} controller, {cfg.layers} layer(s):"
                                      " parameters, gradients and a rollout's caches")]
    if isinstance(cfg, QConfig):
        length = max((*cfg.report_lengths, cfg.test_length, cfg.confirm_length))
        what = f"--confirm-length {length}" if length == cfg.confirm_length else f"length {length}"
        parts.append((environment_bytes(cfg.val_instances, length * factor), what,
                      f"{cfg.val_instances} test instances of length {length} (complexity {length * factor})"))
    else:
        parts.append((environment_bytes(cfg.val_instances, cfg.target), f"--target {cfg.target}",
                      f"{cfg.val_instances} test instances of complexity {cfg.target}"))
    check_memory(parts)


def train_qlearning(args) -> int:

    cfg = from_args(QConfig, args)
    out = run_dir(args, cfg, "q")
    check_out(args, out)
    if args.resume:
        check_same_run(args, out)
        cfg = None
    else:
        check_run_memory(cfg)
        check_room(out, cfg)
    with held(out, wait=False):                     # one process trains a run directory at a time
        check_out(args, out)                        # again, now that no other process can start the run
        return run_qlearning(args, cfg, out)


def run_qlearning(args, cfg, out: str) -> int:
    """Start the run of ``cfg`` in ``out``, or continue the one there (``cfg`` None), to its end."""
    if cfg is None:
        progress = Progress(0)
        trainer = resume_run(out, log=progress, budget=args.budget)
        progress.budget = trainer.cfg.budget
        check_run_memory(trainer.cfg)
        print(f"resuming {out}: complexity {trainer.curriculum.level}, {trainer.state.chars} characters trained")
    else:
        progress = Progress(cfg.budget)
        trainer = BeyondThePaper(cfg, log=progress)
        print(f"Q-learning {cfg.task} (base {cfg.base}) with a {cfg.controller.upper()}-{cfg.units} controller,"
              f" discount {cfg.discount}, {cfg.q} Q, penalty {'on' if cfg.penalty else 'off'},"
              f" {cfg.reward} reward, budget {cfg.budget:,} characters -> {out}")
    remove_stale_temporaries(out)
    ckpt, log_path = checkpoint_path(out), os.path.join(out, "log.json")
    save = RunSaver(out, trainer)
    try:
        state = trainer.run(on_boundary=save)
    except KeyboardInterrupt:
        progress.close()
        save(trainer, force=True)
        print(f"stopped; saved the last segment boundary to {ckpt}; continue with"
              f" `tinyalgo train --resume --out {out}`")
        return 130
    save(trainer, force=True)
    progress.close()
    report = trainer.final_report()
    atomic_write_json(log_path, report)
    verdict = "solved" if state.solved_at else "not solved within the budget"
    print(f"{verdict}; {state.chars:,} characters in {state.seconds / 60:.1f} minutes;"
          f" checkpoint {ckpt}, log {log_path}")
    return 0


def cmd_train_supervised(args) -> int:
    keep_freed_memory()                     # this process trains: rollouts reuse the heap (speed only)
    cfg = from_args(SupervisedConfig, args)
    out = run_dir(args, cfg, "sup")
    check_out(args, out)
    check_run_memory(cfg)
    check_room(out, cfg)
    print(f"supervised {cfg.task} with a {cfg.controller.upper()}-{cfg.units} controller -> {out}")
    progress = Progress(cfg.budget)
    try:
        controller, report = train_supervised(cfg, log=progress)
    finally:
        progress.close()
    ckpt = checkpoint_path(out)
    save_checkpoint(ckpt, controller, dict(mode="supervised", config=asdict(cfg), run=report))
    atomic_write_json(os.path.join(out, "log.json"), report)
    print(f"{'solved' if report['solved_target'] else 'did not solve'} complexity {cfg.target};"
          f" checkpoint {ckpt}")
    return 0


def cmd_train(args) -> int:
    keep_freed_memory()                     # this process trains: rollouts reuse the heap (speed only)
    return train_qlearning(args)


def register(sub) -> None:

    train = sub.add_parser("train", help="train a controller with Q-learning from input-output pairs (paper section 6)",
                           description="Q-learning from input-output pairs (paper section 6).  With no arguments:"
                                       " addition, GRU-200, dynamic discount, Watkins Q(lambda), penalty.  The"
                                       " progress line shows the curriculum's complexity, the last validation,"
                                       " characters per second, the time elapsed and the time left to the budget.")
    add_task_arguments(train)
    discount = ("discount", "gamma")        # gamma is the dynamic discount's (the default): one or the other
    add_arguments(train, {"Q-learning": QConfig}, skip=discount)
    add_arguments(train.add_mutually_exclusive_group(), {"Q-learning": QConfig},
                  skip=cli_options(QConfig) - set(discount))
    train.add_argument("--out", type=output_path, default=None, metavar="DIR",
                       help="run directory: checkpoint.npz, best.npz and log.json are written there"
                            " (default runs/q-<task>-<controller>-s<seed>)")
    train.add_argument("--resume", action="store_true",
                       help="continue the run saved in --out as it was made: the options given must be its own,"
                            " but --budget, its new budget (the command that started a run, with --resume,"
                            " continues it) (default off)")
    train.set_defaults(func=cmd_train)

    sup = sub.add_parser("train-supervised", help="train a controller on the ground-truth actions (paper section 5)",
                         description="The supervised setting (paper section 5): the controller learns the"
                                     " ground-truth actions of each instance, complexity by complexity, until it"
                                     " solves --target.")
    add_task_arguments(sup)
    add_arguments(sup, {"supervised": SupervisedConfig})
    sup.add_argument("--out", type=output_path, default=None, metavar="DIR",
                     help="run directory: checkpoint.npz and log.json are written there"
                          " (default runs/sup-<task>-<controller>-s<seed>)")
    sup.set_defaults(func=cmd_train_supervised, resume=False)
