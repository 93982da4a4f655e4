"""Argument types, checks and options shared by the subcommands.

Every bad argument is refused before any work starts with one line on
stderr naming the option and what it allows, and exit status 2
(``Parser.error`` for what argparse checks, ``UsageError`` for the rest)."""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile

from tinyalgo.environment import Environment
from tinyalgo.host.memory import human
from tinyalgo.runs.checkpoint import load_checkpoint
from tinyalgo.runs.fileio import not_a_file, temporary_prefix
from tinyalgo.tasks import ALIASES, TASKS


class UsageError(ValueError):
    """A bad command-line request (one line, exit status 2)."""


class Parser(argparse.ArgumentParser):
    """argparse's parser whose errors are one line: ``tinyalgo train: error: ...`` and
    a pointer to ``--help``, instead of the usage block."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class Remember(argparse.Action):
    """Store the value and remember that it was given (``was_given``), for
    options whose default is a value, not None."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        namespace.__dict__.setdefault("_given", set()).add(self.dest)


def was_given(args, name: str) -> bool:
    return name in getattr(args, "_given", ())


def int_at_least(minimum):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}; got {value}")
        return value
    parse.__name__ = f"integer >= {minimum}"
    return parse


def int_in_range(minimum, maximum, why: str = ""):
    """An integer from ``minimum`` to ``maximum`` (argparse type); ``why`` says why there is a maximum."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(f"must be from {minimum:,} to {maximum:,}{why}; got {value:,}")
        return value
    parse.__name__ = f"integer in {minimum}..{maximum}"
    return parse


def seconds_within(low: float, high: float):
    """A number of seconds from ``low`` to ``high`` (argparse type)."""
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be {low:g} to {high:g} seconds; got {text}")
        return value
    parse.__name__ = f"seconds in [{low:g}, {high:g}]"
    return parse


def task_name(text: str) -> str:
    """A task name or alias, as the task's name."""
    name = ALIASES.get(text, text)
    if name not in TASKS:
        raise argparse.ArgumentTypeError(f"unknown task {text!r}; allowed: {', '.join(TASKS)}"
                                         f" (aliases: {aliases_text()})")
    return name


def aliases_text() -> str:
    return ", ".join(f"{alias} = {name}" for alias, name in ALIASES.items())


def base_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 2 <= value <= 10:
        raise argparse.ArgumentTypeError(f"base must be an integer from 2 to 10 (paper Appendix B); got {value}")
    return value


def add_task_arguments(parser, default_task="addition", fill_in=True, purpose="the task (paper section 3)",
                       default_text=None):
    """--task and --base.  ``fill_in``: their defaults (else None: the caller
    fills them in, e.g. from a checkpoint, and can tell whether they were given)."""
    parser.add_argument("--task", type=task_name, default=default_task if fill_in else None, metavar="TASK",
                        action=Remember,
                        help=f"{purpose}: one of {', '.join(TASKS)}; aliases: {aliases_text()}"
                             f" (default {default_text or default_task})")
    parser.add_argument("--base", type=base_number, default=10 if fill_in else None, metavar="B", action=Remember,
                        help=f"the base of the digits, 2..10 (paper Appendix B; default {default_text or 10})")


def output_path(text: str) -> str:
    """A path to write to (argparse type): not empty."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty: give a path")
    return text


def nearest_existing(path: str) -> str:
    """``path`` or its nearest ancestor that exists."""
    path = os.path.abspath(path)
    while not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def check_writable_folder(folder: str, option: str, shown: str | None = None) -> None:
    """A UsageError unless ``folder`` is, or can be made as, a folder to write
    in (``shown``: the path the user gave, for the message).  Writes nothing
    that stays: a probe file in the nearest existing folder, removed at once."""
    shown = folder if shown is None else shown
    existing = nearest_existing(folder)
    if not os.path.isdir(existing):
        if existing == os.path.abspath(folder) and shown == folder:
            raise UsageError(f"{option} {shown} is a file; give a folder")
        near = os.path.relpath(existing)
        raise UsageError(f"{option} {shown} is inside the file {existing if near.startswith('..') else near};"
                         " give a path in a folder")
    try:
        fd, probe = tempfile.mkstemp(prefix=temporary_prefix("probe"), dir=existing)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise UsageError(f"{option} {shown}: cannot write in {existing} ({err.strerror});"
                         " give a path you can write to") from None


def check_free_space(folder: str, need: int, option: str, what: str) -> None:
    """A UsageError unless the file system of ``folder`` (or its nearest
    existing ancestor) has ``need`` bytes free for ``what``."""
    existing = nearest_existing(folder)
    try:
        free = shutil.disk_usage(existing).free
    except OSError:
        return
    if free < need:
        raise UsageError(f"{option} {folder}: {human(free)} free on its file system, {what} needs about"
                         f" {human(need)}")


def check_writable_file(path: str, option: str, suffixes: tuple | None = None) -> None:
    """A UsageError unless ``path`` can be written as a file: not a folder,
    device, FIFO or socket (a symbolic link: the file it points to), a
    name the file system takes, its folder writable, and ending in one of
    ``suffixes`` (e.g. (".png",)) when given."""
    kind = not_a_file(path)
    if kind == "a folder":
        raise UsageError(f"{option} {path} is a folder; give a file name")
    if kind is not None:
        raise UsageError(f"{option} {path} is not a regular file ({kind}); give the name of a regular file"
                         " or of a new one")
    if suffixes and not path.lower().endswith(suffixes):
        raise UsageError(f"{option} {path}: the file name must end in {' or '.join(suffixes)}")
    folder = nearest_existing(os.path.dirname(os.path.abspath(path)))
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        limit = 255
    if len(os.fsencode(os.path.basename(path))) > limit:
        raise UsageError(f"{option}: the file name is {len(os.fsencode(os.path.basename(path)))} bytes long, more"
                         f" than the {limit} this file system takes")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise UsageError(f"{option} {path}: the file cannot be overwritten (permission denied)")
    check_writable_folder(os.path.dirname(os.path.abspath(path)), option, shown=path)


def check_empty_folder(folder: str, option: str, writes: str) -> None:
    """A UsageError if ``folder`` exists and holds anything (``writes``: what
    the command writes there, for the message), so that nothing a user kept
    there is overwritten."""
    if os.path.isdir(folder) and os.listdir(folder):
        raise UsageError(f"{option} {folder} is not empty ({len(os.listdir(folder))} entries); give a new or empty"
                         f" folder ({writes} there)")


def same_file(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name the same file (the same file
    when both exist, else the same path once links are resolved)."""
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


def check_distinct_outputs(outputs: dict, inputs: dict) -> None:
    """A UsageError if an output file (``outputs``: option -> path, None for
    one not asked) is one of the ``inputs`` (what is read -> path) or the
    file of another output option."""
    given = [(option, path) for option, path in outputs.items() if path is not None]
    for option, path in given:
        for what, read in inputs.items():
            if same_file(path, read):
                raise UsageError(f"{option} {path} is {what} the command reads; give another file name"
                                 " (outputs never overwrite their inputs)")
    for i, (option, path) in enumerate(given):
        for other, other_path in given[:i]:
            if same_file(path, other_path):
                raise UsageError(f"{other} {other_path} and {option} {path} name the same file; give each output"
                                 " its own file")


def checkpoint_task(path: str, task) -> tuple:
    """(controller, task name, base) of a checkpoint; ``task`` (or None)
    must be the task it was trained on."""
    controller, _, task, base = checkpoint_run(path, task)
    return controller, task, base


def checkpoint_run(path: str, task) -> tuple:
    """(controller, extra, task name, base) of a checkpoint, as ``checkpoint_task``
    checks them, and the controller fits that task in that base (its
    observation fields, actions and symbols: ``Controller.check_environment``);
    ``extra`` is what the run saved beside the parameters."""
    controller, extra = load_checkpoint(path)
    config = extra.get("config", {})
    trained, base = config.get("task"), config.get("base", 10)
    task = ALIASES.get(task, task)
    if trained is None and task is None:
        raise ValueError(f"{path} does not say which task it was trained on; give it with --task")
    if trained is not None and task is not None and task != trained:
        raise ValueError(f"{path} was trained on task {trained!r}, not {task!r}:"
                         f" leave out --task or give --task {trained}")
    task = task or trained
    try:
        controller.check_environment(Environment(task, batch_size=1, base=base))
    except ValueError as err:
        raise ValueError(f"checkpoint {path}: {err}") from None
    return controller, extra, task, base
