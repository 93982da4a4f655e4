"""Argument types and options shared by the subcommands."""
from __future__ import annotations

import argparse

from tinyalgo.tasks import TASKS


def int_at_least(minimum):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value
    return parse


def add_task_arguments(parser, default_task="addition"):
    parser.add_argument("--task", default=default_task, metavar="TASK",
                        help=f"one of {', '.join(TASKS)} (default {default_task})")
    parser.add_argument("--base", type=int, default=10, help="digits of base 2..10 (default 10)")

