"""Training options, each declared once.

A run's configuration (``QConfig``, ``SupervisedConfig``) is a dataclass whose
fields are declared with ``option(default, help=..., ...)``.  Everything else
is made from those declarations:

- the check of every value: ``Options.__post_init__`` (``check_options``);
- the flags of ``tinyalgo train``: ``add_arguments`` and ``from_args``;
- the flags of ``tinyalgo experiment table1`` and a sweep's ``Job.options``:
  the options declared with ``sweep=True`` (``overrides_from_args``);
- a saved config read back: ``Options.from_saved`` (``saved_before`` values);
- Table 1's CSV columns and its notes on options that differ from their
  defaults: ``sweep_options`` (``tinyalgo.experiments.table1_report``).

Adding an option to a run is one ``option(...)`` line in its config class.
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field, fields

from tinyalgo.tasks import TASKS, make_task

# Options that runs saved once and that change nothing any more: read back and ignored.
RETIRED = ("reference", "threads")
UNSET = "<unset>"              # Option.saved_before of an option that runs have always saved


@dataclass(frozen=True)
class Option:
    """What the command line, the checks and the tables know of an option."""

    help: str
    unit: str = ""                 # e.g. "characters": printed after the default
    choices: tuple = None
    minimum: object = None         # a number, or a function of the config (e.g. of its batch)
    maximum: object = None
    open_below: bool = False       # minimum excluded: (minimum, ...
    reason: str = ""               # why the range is what it is, added to its error message
    cli: bool = True               # a `tinyalgo train` flag
    sweep: bool = False            # also an `experiment table1` flag, a Job option and a Table 1 column
    sweep_help: str = ""           # added to the help of a sweep's flag (e.g. which of its columns it applies to)
    metavar: str = None
    default_text: str = None       # the default as the help shows it (default: the default itself)
    cli_default: object = None     # a flag default other than the declared one (e.g. the machine's cores)
    saved_before: object = UNSET  # what a config saved before the option existed implies


def option(default, help: str, **declared):
    """A dataclass field carrying its ``Option`` (see ``Option`` for the keywords)."""
    return field(default=default, metadata={"option": Option(help, **declared)})


def declared(cls) -> dict:
    """{name: (default, Option)} of the options of ``cls`` (or of an instance), in field order."""
    return {f.name: (f.default, f.metadata["option"]) for f in fields(cls) if "option" in f.metadata}


def sweep_options(cls) -> dict:
    """The options a sweep sets for all of its runs: {name: (default, Option)}."""
    return {name: d for name, d in declared(cls).items() if d[1].sweep}


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _bound(value, config):
    return value(config) if callable(value) else value


def allowed(opt: Option, config) -> str:
    """The allowed values in words: "one of a, b", "at least 1", "0..19", "in (0, 1]"."""
    if opt.choices is not None:
        return "one of " + ", ".join(str(c) for c in opt.choices)
    lo, hi = _bound(opt.minimum, config), _bound(opt.maximum, config)
    if hi is None:
        return f"above {lo:g}" if opt.open_below else f"at least {lo:g}"
    if lo is None:
        return f"at most {hi:g}"
    if isinstance(lo, int) and isinstance(hi, int) and not opt.open_below:
        return f"{lo}..{hi}"
    return f"in {'(' if opt.open_below else '['}{lo:g}, {hi:g}]"


def problem(value, opt: Option, config) -> str:
    """What is wrong with ``value`` ("must be at least 0; got -1"), or "" if nothing."""
    lo, hi = _bound(opt.minimum, config), _bound(opt.maximum, config)
    if opt.choices is not None:
        bad = value not in opt.choices
    elif isinstance(value, float) and not math.isfinite(value):
        bad = True
    else:
        bad = ((lo is not None and (value <= lo if opt.open_below else value < lo))
               or (hi is not None and value > hi))
    if not bad:
        return ""
    reason = f" ({opt.reason})" if opt.reason else ""
    return f"must be {allowed(opt, config)}{reason}; got {value!r}"


def check_value(name: str, value, opt: Option, config) -> None:
    """A ValueError naming the option, what it allows and what it got."""
    wrong = problem(value, opt, config)
    if wrong:
        raise ValueError(f"{name} {wrong}")


def check_options(config) -> None:
    """Check every declared option of ``config``."""
    for name, (default, opt) in declared(config).items():
        value = getattr(config, name)
        if isinstance(default, bool) and not isinstance(value, bool):
            raise ValueError(f"{name} must be True or False; got {value!r}")
        check_value(name, value, opt, config)


@dataclass
class Options:
    """A dataclass of declared options: checked on construction, read back
    from a saved config with ``from_saved``."""

    def __post_init__(self):
        check_options(self)

    @classmethod
    def from_saved(cls, saved: dict):
        """The config saved as ``saved`` (``asdict`` of one, as checkpoints and
        run logs hold it).  Options in ``RETIRED`` are ignored.  An option missing from it gets the value runs had
        before the option existed (its ``saved_before``), else its default."""
        saved = {name: value for name, value in saved.items() if name not in RETIRED}
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(saved) - known)
        if unknown:
            raise ValueError(f"saved config has options this {cls.__name__} does not know: {', '.join(unknown)}")
        before = {name: opt.saved_before for name, (_, opt) in declared(cls).items()
                  if opt.saved_before != UNSET and name not in saved}
        return cls(**{**before, **saved})


def _argument_type(default, opt: Option):
    if opt.choices is not None:
        return type(opt.choices[0])
    return type(default)


def _flag_type(default, opt: Option):
    """The flag's argparse type: the value, checked against the option's range
    when the range does not depend on other options (those are checked by the
    config, ``check_options``)."""
    kind = _argument_type(default, opt)
    static = not callable(opt.minimum) and not callable(opt.maximum)

    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'an integer' if kind is int else 'a number'}, got {text!r}") from None
        wrong = problem(value, opt, None) if static and opt.choices is None else ""
        if wrong:
            raise argparse.ArgumentTypeError(wrong)
        return value
    parse.__name__ = kind.__name__
    return parse


def _default_text(default, opt: Option) -> str:
    if opt.cli_default is not None or opt.default_text is not None:
        return opt.default_text or str(opt.cli_default)
    text = f"{default:,}" if isinstance(default, int) and not isinstance(default, bool) else str(default)
    if isinstance(default, bool):
        text = "on" if default else "off"
    return f"{text} {opt.unit}".rstrip() if opt.unit else text


def add_arguments(parser, configs: dict, sweep: bool = False, skip=()) -> None:
    """One flag per command-line option of the config classes in ``configs``
    ({label: class}, e.g. {"Q-learning": QConfig, "supervised": SupervisedConfig});
    ``sweep``: only the sweep options; ``skip``: options left out (e.g. the one
    a sweep's columns set).  A flag's value is None unless given, so each
    config keeps its own default (``from_args``)."""
    seen = {}
    for label, cls in configs.items():
        for name, (default, opt) in declared(cls).items():
            if opt.cli and (opt.sweep or not sweep) and name not in skip:
                seen.setdefault(name, []).append((label, default, opt))
    for name, defaults in seen.items():
        opt = defaults[0][2]
        texts = [(label, _default_text(d, o)) for label, d, o in defaults]
        if len({text for _, text in texts}) == 1:
            shown = texts[0][1]
        else:
            shown = "; ".join(f"{label}: {text}" for label, text in texts)
        help_text = f"{opt.help}{opt.sweep_help if sweep else ''} (default {shown})".replace("%", "%%")
        default = defaults[0][1]
        if isinstance(default, bool):
            action = argparse.BooleanOptionalAction if default else "store_const"
            extra = {} if default else {"const": True}
            parser.add_argument(flag(name), action=action, default=None, help=help_text, **extra)
            continue
        kind = _argument_type(default, opt) if opt.choices is not None else _flag_type(default, opt)
        parser.add_argument(flag(name), type=kind, choices=opt.choices, metavar=opt.metavar,
                            default=opt.cli_default, help=help_text)


def from_args(cls, args, **fixed):
    """``cls`` built from the options given on the command line (``args``),
    then ``fixed``; the others keep their declared defaults."""
    given = {f.name: getattr(args, f.name) for f in fields(cls) if getattr(args, f.name, None) is not None}
    try:
        return cls(**{**given, **fixed})
    except ValueError as err:                 # "greedy_lanes must be ..." -> "--greedy-lanes must be ..."
        name, _, rest = str(err).partition(" ")
        if name in given:
            raise ValueError(f"{flag(name)} {rest}") from None
        raise


def overrides_from_args(cls, args) -> dict:
    """The sweep options given on the command line: {name: value}."""
    return {name: getattr(args, name) for name in sweep_options(cls) if getattr(args, name, None) is not None}


CORES = ("ff", "gru", "lstm")


def task_option(default: str):
    return option(default, "the task (paper section 3)", choices=tuple(TASKS), cli=False)


def controller_option(default: str, **declared):
    return option(default, "the controller's core (paper section 2)", choices=CORES, **declared)


def budget_option(default: int):
    return option(default, "training length", unit="characters (lane-steps)", minimum=1)


@dataclass
class TrainingOptions(Options):
    """The options of every training run, supervised (paper section 5) or
    Q-learning (section 6).  The defaults of ``task``, ``controller`` and
    ``budget`` are the supervised run's; ``QConfig`` declares its own."""

    task: str = task_option("reverse")
    controller: str = controller_option("gru")
    units: int = option(200, "hidden units of each layer", minimum=1)
    layers: int = option(1, "recurrent layers of the controller", minimum=1)
    base: int = option(10, "the base of the digits (paper Appendix B)", minimum=2, maximum=10, cli=False, sweep=True)
    seed: int = option(0, "seed of the run's random generator (weights, instances, exploration)", minimum=0)
    batch: int = option(20, "lanes trained side by side", minimum=1, cli=False)
    lr: float = option(0.1, "the SGD learning rate", minimum=0.0, open_below=True, cli=False)
    max_norm: float = option(5.0, "gradients are clipped to this global norm", minimum=0.0, open_below=True,
                             cli=False)
    start: int = option(6, "the curriculum's first complexity (paper section 5)", minimum=1, cli=False)
    increment: int = option(4, "complexity added by a curriculum advance (paper section 5)", minimum=1, cli=False)
    budget: int = budget_option(3_000_000)
    validate_every: int = option(10, "SGD updates between validations", minimum=1, cli=False)
    val_instances: int = option(50, "instances of each validation and test", minimum=1, cli=False)
    max_rollout: int = option(49, "the longest unroll: T = min(max_rollout, complexity + 5)", minimum=1, cli=False)
    dtype: str = option("float32", "floating-point type of parameters and activations", choices=("float32", "float64"))

    def __post_init__(self):
        super().__post_init__()
        make_task(self.task, self.base)          # a task and base that do not go together are refused here
