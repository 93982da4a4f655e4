"""The ``train`` command.

    tinyalgo train                      # Q-learning on addition, the paper's best setting
    tinyalgo train --mode supervised --task reverse --controller ff
    tinyalgo train --resume --out runs/addition-gru-s0

Its flags are made from the declared options of ``QConfig`` and
``SupervisedConfig`` (``tinyalgo.runs.options``).  Everything is checked before
training starts: the options, the options the mode does not use, the run
directory (``--out``) and the memory the run needs.
"""
from __future__ import annotations

import os
from dataclasses import asdict

from tinyalgo.cli.args import (
    UsageError,
    add_task_arguments,
    check_free_space,
    check_writable_folder,
    output_path,
    refuse_given,
    was_given,
)
from tinyalgo.cli.progress import Progress
from tinyalgo.cli.sizes import check_memory, controller_bytes, environment_bytes
from tinyalgo.controller import PARAM_COPIES
from tinyalgo.host.allocator import keep_freed_memory
from tinyalgo.runs.beyond import BeyondThePaper
from tinyalgo.runs.checkpoint import save_checkpoint
from tinyalgo.runs.config import QConfig, SupervisedConfig
from tinyalgo.runs.fileio import atomic_write_json, remove_stale_temporaries
from tinyalgo.runs.options import add_arguments, declared, from_args
from tinyalgo.runs.rundir import RunSaver, checkpoint_path, held, resume_run
from tinyalgo.supervised import train_supervised
from tinyalgo.tasks import TASKS

CONFIGS = {"Q-learning": QConfig, "supervised": SupervisedConfig}
MODES = {"q": QConfig, "supervised": SupervisedConfig}
RESUME_OPTIONS = ("budget",)          # what --resume can change; the rest is the saved run's


def run_dir(args, cfg, mode: str) -> str:
    return args.out or os.path.join("runs", f"{mode}-{cfg.task}-{cfg.controller}-s{cfg.seed}")


def cli_options(cls) -> set:
    return {name for name, (_, opt) in declared(cls).items() if opt.cli}


def check_mode_options(args) -> None:
    """Refuse the options of the other mode (e.g. --target with Q-learning) and,
    with --resume, every option but --budget."""
    cls = MODES[args.mode]
    other = "supervised" if args.mode == "q" else "q"
    mode_words = {"q": "Q-learning (--mode q, the default)", "supervised": "supervised training (--mode supervised)"}
    refuse_given(args, sorted(cli_options(MODES[other]) - cli_options(cls)),
                 f"is an option of {mode_words[other]}; {mode_words[args.mode]} does not use it")
    if args.resume:
        if args.mode == "supervised":
            raise UsageError("--resume is for Q-learning runs; supervised runs are short: start again"
                             " without --resume")
        why = ("cannot change a saved run: --resume continues it with its own options"
               f" (only {', '.join('--' + n for n in RESUME_OPTIONS)} can be given)")
        for name in ("task", "base"):
            if was_given(args, name):
                raise UsageError(f"--{name} {why}")
        refuse_given(args, sorted(cli_options(cls) - set(RESUME_OPTIONS)), why)


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

    cfg = None if args.resume else from_args(QConfig, args)
    out = args.out if args.resume else run_dir(args, cfg, "q")
    check_out(args, out)
    if cfg is not None:
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


def train_supervised_cmd(args) -> int:

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
    check_mode_options(args)
    if args.resume and args.out is None:
        raise UsageError("--resume needs --out, the run directory to continue")
    keep_freed_memory()                     # this process trains: rollouts reuse the heap (speed only)
    return train_supervised_cmd(args) if args.mode == "supervised" else train_qlearning(args)


def register(sub) -> None:

    train = sub.add_parser("train", help="train a controller (Q-learning by default)",
                           description="Q-learning from input-output pairs (paper section 6) or the supervised"
                                       " setting (section 5).  With no arguments: addition, GRU-200, dynamic"
                                       " discount, Watkins Q(lambda), penalty.  The progress line shows the"
                                       " curriculum's complexity, the last validation, characters per second,"
                                       " the time elapsed and the time left to the budget.")
    train.add_argument("--mode", choices=("q", "supervised"), default="q",
                       help="q: Q-learning from input-output pairs (paper section 6); supervised: the"
                            " ground-truth actions are given (section 5) (default q)")
    add_task_arguments(train)
    add_arguments(train, CONFIGS)
    train.add_argument("--out", type=output_path, default=None, metavar="DIR",
                       help="run directory: checkpoint.npz, best.npz and log.json are written there"
                            " (default runs/<mode>-<task>-<controller>-s<seed>)")
    train.add_argument("--resume", action="store_true",
                       help="continue the Q-learning run saved in --out, with its own options; --budget can"
                            " be given (default off)")
    train.set_defaults(func=cmd_train)
