"""The progress of a training run on the command line.

A run validates several times a second and logs a line each time
(``QTrainer.validate``, ``train_supervised``).  ``Progress`` turns those
lines into one status line: the curriculum's complexity, the percentage of
validation instances solved, characters per second, elapsed time and the
time left until the budget is spent at the current speed (ETA; a run that
solves its task stops earlier).  On a terminal the line is rewritten in
place (``\\r``); when the output goes to a file or a pipe, a status line is
written every ``every`` seconds, and the latest one before any other line
and at the end.  Every other line (the penalty switch, the paper's solve,
the tests at ``confirm_length``, the final report) is printed as it comes.
"""
from __future__ import annotations

import re
import shutil
import sys
import time

FILE_EVERY_SECONDS = 10.0
VALIDATION = re.compile(r"^\[\s*(?P<elapsed>[\d.]+)s\] complexity\s+(?P<level>\d+)\s+validation solved\s+"
                        r"(?P<solved>[\d.]+)%.*?trained\s+(?P<chars>\d+) chars")


def clock(seconds: float) -> str:
    """``1:02:03`` / ``2:03``."""
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def count(n: float) -> str:
    """``2,200`` / ``44k`` / ``12.3M``: short enough for one terminal line."""
    if n >= 1e6:
        return f"{n / 1e6:.3g}M"
    return f"{n / 1e3:.3g}k" if n >= 1e4 else f"{n:,.0f}"


def status_line(elapsed: float, level: int, solved: float, chars: int, budget: int) -> str:
    """The status: what matters most first, so a narrow terminal cuts only the counts."""
    rate = chars / elapsed if elapsed > 0 else 0.0
    if chars >= budget:
        eta = "budget spent"
    else:
        eta = f"ETA {clock((budget - chars) / rate)}" if rate > 0 else "ETA -"
    return (f"complexity {level} | validation {solved:.0f}% | {count(rate)} chars/s | {clock(elapsed)} elapsed"
            f" | {eta} ({count(chars)}/{count(budget)} chars)")


class Progress:
    """A ``log`` function for a training run with a budget of ``budget`` characters."""

    def __init__(self, budget: int, stream=None, terminal: bool | None = None, every: float | None = None,
                 now=time.monotonic):
        self.stream = sys.stdout if stream is None else stream
        if terminal is None:
            try:
                terminal = self.stream.isatty()
            except (AttributeError, ValueError):
                terminal = False
        self.budget, self.terminal, self.now = budget, terminal, now
        self.every = (0.0 if terminal else FILE_EVERY_SECONDS) if every is None else every
        self.last_shown, self.pending, self.open_line = None, None, False

    def __call__(self, line: str) -> None:
        match = VALIDATION.match(line)
        if match is None:
            if self.pending is not None and not self.terminal:      # where the run stood when this happened
                self.stream.write(self.pending + "\n")
                self.pending = None
            self._end_status()
            self.stream.write(line + "\n")
            self.stream.flush()
            return
        status = status_line(float(match["elapsed"]), int(match["level"]), float(match["solved"]),
                             int(match["chars"]), self.budget)
        t = self.now()
        if self.last_shown is not None and t - self.last_shown < self.every:
            self.pending = status
            return
        self.last_shown, self.pending = t, None
        if self.terminal:
            width = max(shutil.get_terminal_size((100, 24)).columns - 1, 20)
            self.stream.write("\r" + status[:width].ljust(width))
            self.open_line = True
        else:
            self.stream.write(status + "\n")
        self.stream.flush()

    def _end_status(self) -> None:
        if self.open_line:
            self.stream.write("\n")
            self.open_line = False

    def close(self) -> None:
        """End the status line; in a file, write the last status if it was not shown."""
        if self.pending is not None and not self.terminal:
            self.stream.write(self.pending + "\n")
        self.pending = None
        self._end_status()
        self.stream.flush()
