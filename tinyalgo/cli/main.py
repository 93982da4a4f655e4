"""The ``tinyalgo`` command.

    tinyalgo train                  # Q-learning on addition (the paper's showcase)
    tinyalgo show --task addition --complexity 12 --seed 0 [--step]
    tinyalgo evaluate CHECKPOINT --complexities 100 1000 20000

Every user error (an unknown task, a base outside 2..10, a complexity below
the task's minimum, a bad checkpoint, ...) prints one line and exits with
status 2, without a traceback.
"""
from __future__ import annotations

import argparse
import sys

from tinyalgo.cli import evaluate, experiment, train
from tinyalgo.cli.args import add_task_arguments, int_at_least
from tinyalgo.environment import Environment
from tinyalgo.render import ground_truth_frames
from tinyalgo.tasks import ALIASES


class UsageError(ValueError):
    """A bad command-line request."""


def cmd_show(args) -> int:
    env = Environment(args.task, batch_size=1, base=args.base, complexity=args.complexity, seed=args.seed,
                      extra_curriculum=False)
    frames = ground_truth_frames(env, 0, half_width=args.width)
    for i, frame in enumerate(frames):
        print(f"--- frame {i + 1}/{len(frames)} ---")
        print(frame)
        if args.step and i + 1 < len(frames):
            try:
                key = input("[Enter] next, q quit > ")
            except EOFError:
                key = "q"
            if key.strip().lower() == "q":
                break
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tinyalgo", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    show = sub.add_parser("show", help="print an instance and step through its ground-truth solution")
    add_task_arguments(show)
    show.add_argument("--complexity", type=int, default=12, help="complexity of the instance (default 12)")
    show.add_argument("--seed", type=int, default=0)
    show.add_argument("--width", type=int_at_least(1), default=8, help="board columns each side of the head")
    show.add_argument("--step", action="store_true", help="one frame per key press")
    show.set_defaults(func=cmd_show)
    for command in (train, evaluate, experiment):
        command.register(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    if hasattr(args, "task"):
        args.task = ALIASES.get(args.task, args.task)
    try:
        return args.func(args)
    except (ValueError, OSError) as err:
        print(f"tinyalgo: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tinyalgo: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
