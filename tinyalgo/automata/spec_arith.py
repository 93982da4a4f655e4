"""The arithmetic tasks as the verifier's specifications
(tinyalgo/automata/product.py; paper section 3, Figure 2, and section 6.4).

Addition and 3-number addition (tinyalgo/tasks/arithmetic.py): r numbers of
L digits right-aligned at x = 1 on rows 1..r, ``e`` everywhere else, a wall
of ``q`` at x = 3 on every row; the head starts at (1, 1); target j is digit
j (least significant first) of the sum, read from column x = 1 - j and the
carry; target L is the final carry; complexity rL.  Multiplication: the
multiplier m (2..base-1) at (1, 1), an L-digit number on row 2, ``0``
everywhere else, the same wall; target j is (digit j x m + carry) mod base;
complexity L + 2.

Pointers: O (the start (1, 1), both axes), E (the column x = 1 - L, the first
without digits: unplaced until the head or the targets may reach it), F (E
lies left of F), T (the next target's column).  The task's state: the carry
into column T, the multiplier, and whether the write just checked was the
final carry.
"""
from __future__ import annotations

from itertools import product as cartesian

from tinyalgo.automata.offsets import FAR, compare, difference_possible, is_far
from tinyalgo.automata.product import Config, Spec, clip


class AdditionSpec(Spec):
    pointers, axes = ("O", "E", "F", "T"), ("xy", "x", "x", "x")

    def __init__(self, task, length=None, min_length=1):
        super().__init__(task, length, min_length)
        self.rows = tuple(range(1, task.rows + 1))
        self.fill = task.vocab.E
        self.growth = task.rows

    def parameters(self):
        return [0]

    def initial(self, search):
        out = []
        for m in self.parameters():
            if self.symbolic:
                ptr = ((0, 0), None, (0, 0), (0, 0))
            else:
                ptr = ((0, 0), (clip(-self.length, search.R), 0), None, (0, 0))
            out.append((Config(search.machine.start, ptr, (), (0, 0), 0, False, (0, m, False)),
                        [("param", "m", m)] if m else []))
        return out

    # ------------------------------------------------------------ the board
    def _row(self, cfg):
        """The head's row (y), or None when it is far from the numbers."""
        oy = self.ptr(cfg, "O")[1]
        return None if is_far(oy) else 1 - oy

    def digit_row(self, row) -> bool:
        return row in self.rows

    def read(self, search, cfg):
        v, (ox, _), row = self.task.vocab, self.ptr(cfg, "O"), self._row(cfg)
        if ox == -2:
            return [(frozenset([v.Q]), cfg, [])]
        fill = frozenset([self.fill])
        if row is None or compare(ox, 0, search.R) == -1:           # off the rows, or right of x = 1
            return [(fill, cfg, [])]
        if not self.digit_row(row):
            return [(frozenset([cfg.spec[1]]) if ox == 0 and row == 1 else fill, cfg, [])]
        E, F = self.ptr(cfg, "E"), self.ptr(cfg, "F")
        if E is not None:
            c = compare(E[0], 0, search.R)
            return [(fill if c in (0, 1) else self.digits, cfg, [])]
        if compare(F[0], 0, search.R) in (-1, 0):                   # at or right of a known digit column
            return [(self.digits, cfg, [])]
        out = [(self.digits, self.with_ptr(cfg, F=(0, 0)), [])]
        for e in self._between(0, F[0], search.R):                   # the first column without digits
            placed = self.with_ptr(cfg, E=(e, 0))
            if self.consistent(search, placed):
                out.append((fill, placed, [("place", "E", (e, 0))]))
        return out

    @staticmethod
    def _between(lo, f, R):
        """Offsets in [lo, f - 1] as the search keeps them (exact within R, else FAR)."""
        top = R if is_far(f) else min(f - 1, R)
        return list(range(lo, top + 1)) + ([FAR] if is_far(f) or f - 1 > R else [])

    # ------------------------------------------------------------ the targets
    def _column(self, cfg, m, carry, assignment):
        total = sum(assignment) * (m if m else 1) + carry
        return total % self.task.base, total // self.task.base

    def target_rows(self):
        return self.rows

    def target(self, search, cfg, written):
        T, E, F = self.ptr(cfg, "T"), self.ptr(cfg, "E"), self.ptr(cfg, "F")
        carry, m, _ = cfg.spec
        R, final, digit = search.R, [], []
        if E is not None:
            c = compare(T[0], E[0], R)
            if c in (0, None):
                final.append(self.with_ptr(cfg, E=T))
            if c in (1, None):
                digit.append(cfg)
        elif compare(T[0], F[0], R) in (1, 0):
            digit.append(cfg)
        else:
            placed = self.with_ptr(cfg, E=T)
            if self.consistent(search, placed):
                final.append(placed)
            digit.append(self.with_ptr(cfg, F=T))
        out = []
        for c in final:                                             # the final carry
            out.append((written == carry, c._replace(spec=(carry, m, True)), [("target", ())]))
        for c in digit:
            out += self._digit_target(search, c, written)
        return out

    def _digit_target(self, search, cfg, written):
        T, row = self.ptr(cfg, "T"), self._row(cfg)
        carry, m, _ = cfg.spec
        rows = self.target_rows()
        offs = [None if is_far(T[0]) or row is None else (T[0], r - row) for r in rows]
        sets = [sorted(self.digits if o is None or search.cell(cfg, o) is None else search.cell(cfg, o) & self.digits)
                for o in offs]
        groups, wrong = {}, None
        for assignment in cartesian(*sets):
            t, c_out = self._column(cfg, m, carry, assignment)
            if t == written:
                groups.setdefault(c_out, []).append(assignment)
            elif wrong is None:
                wrong = assignment
        out = []
        if wrong is not None:
            out.append((False, cfg, [("target", tuple((r, frozenset([d])) for r, d in zip(rows, wrong)))]))
        for c_out, assignments in groups.items():
            c = cfg._replace(spec=(c_out, m, False))
            for o, values in zip(offs, zip(*assignments)):
                if o is not None:
                    c = search.with_cell(c, o, set(values))
            out.append((True, c, [("target", tuple((r, frozenset([d])) for r, d in zip(rows, assignments[0])))]))
        return out

    def advance(self, search, cfg):
        if cfg.spec[2]:
            return [(True, cfg, [])]
        T = self.ptr(cfg, "T")
        return [(False, self.with_ptr(cfg, T=(T[0] if is_far(T[0]) else clip(T[0] - 1, search.R), 0)), [])]

    # ------------------------------------------------------------ bookkeeping
    def relevant(self, search, cfg, off):
        """A digit cell matters while its column is still to be summed (at or
        left of T, right of E), and, in the column just summed, while the head
        is in it: a machine that writes and then reads the column's digits
        again (going back up it) holds the sum it wrote, which says which
        digits they can be; forgetting them would let the exploration read
        digits that no board holds there."""
        row = self._row(cfg)
        if row is None or off[1] + row not in self.target_rows():
            return False
        T, E = self.ptr(cfg, "T"), self.ptr(cfg, "E")
        if off[0] == 0 and T[0] == -1:                              # the head is in the column just summed
            return True
        return compare(off[0], T[0], search.R) != 1 and (E is None or compare(off[0], E[0], search.R) == 1)

    def consistent(self, search, cfg):
        O, E, F, T = cfg.ptr
        n, R = self.length, search.R
        lo, hi = (-n, -n) if n is not None else (None, -self.min_length)
        pairs = [(O, T, None, 0), (E, T, 0, None), (O, E, lo, hi), (O, F, None, 0), (E, F, 1, None)]
        return all(p is None or q is None or difference_possible(p[0], q[0], a, b, R) for p, q, a, b in pairs)

    def patience(self, cfg, length):
        return self.task.rows * length + 2


class MultiplicationSpec(AdditionSpec):
    """Multiplication: the digits on row 2 only; row 1 holds m at x = 1."""

    def __init__(self, task, length=None, min_length=1):
        super().__init__(task, length, min_length)
        self.rows, self.fill, self.growth = (2,), 0, 1

    def parameters(self):
        return list(range(2, self.task.base))

    def patience(self, cfg, length):
        return length + 4
