"""The tape tasks, copy and reverse (paper section 3, Figure 2), as the
verifier's specifications (tinyalgo/automata/product.py; paper section 6.4).

Copy (tinyalgo/tasks/tape.py): digits at x = 1..n, ``q`` at n + 1, random
digits everywhere else; the head starts at x = 1; the targets are the digits
of x = 1..n in order; complexity n.  Pointers: O (x = 1), E (the ``q``;
unplaced until the head may meet it), F (E lies right of F), T (the next
target's cell).

Reverse: ``q`` at x = 0, digits at 1..n, ``p`` at n + 1 and n + 2, random
digits elsewhere; the head starts at x = 1; the targets are the digits of
x = n, n - 1, ..., 1; complexity 2n + 1.  Pointers: Q (the ``q``), P (the
first ``p``; unplaced until met), F (P lies right of F), T (the next target's
cell, unknown until P is placed: a write before that is blind).
"""
from __future__ import annotations

from tinyalgo.automata.offsets import compare, difference_possible, is_far
from tinyalgo.automata.product import Config, Spec, clip


def _order_ok(search, pairs):
    """Each (p, q, lo, hi): the true x-offset difference q - p can lie in [lo, hi]."""
    return all(p is None or q is None or difference_possible(p[0], q[0], lo, hi, search.R) for p, q, lo, hi in pairs)


def _moved(v, d, R):
    return v if is_far(v) else clip(v + d, R)


class CopySpec(Spec):
    pointers, axes = ("O", "E", "F", "T"), ("x", "x", "x", "x")
    growth = 1

    def initial(self, search):
        if self.symbolic:
            ptr = ((0, 0), None, (0, 0), (0, 0))
        else:
            ptr = ((0, 0), (clip(self.length, search.R), 0), None, (0, 0))
        return [(Config(search.machine.start, ptr, (), (0, 0), 0, False, ()), [])]

    def read(self, search, cfg):
        v = self.task.vocab
        E, F = self.ptr(cfg, "E"), self.ptr(cfg, "F")
        if E is not None:
            return [(frozenset([v.Q]) if E[0] == 0 else self.digits, cfg, [])]
        if compare(F[0], 0, search.R) == -1:             # beyond every cell known not to be the q
            out = []
            placed = self.with_ptr(cfg, E=(0, 0))
            if self.consistent(search, placed):
                out.append((frozenset([v.Q]), placed, [("place", "E", (0, 0))]))
            out.append((self.digits, self.with_ptr(cfg, F=(0, 0)), []))
            return out
        return [(self.digits, cfg, [])]

    def _target_cell(self, search, cfg, T, written, allowed=None):
        """Branches of a write whose target is the digit in the cell at offset T."""
        known = search.cell(cfg, T) if not is_far(T[0]) else None
        allowed = self.digits if allowed is None else allowed
        allowed = allowed if known is None else allowed & known
        out = []
        if written in allowed:
            c = search.with_cell(cfg, T, {written})
            out.append((True, c, [("target", frozenset([written]))]))
        wrong = allowed - {written}
        if wrong:
            out.append((False, cfg, [("target", frozenset(wrong))]))
        return out

    def target(self, search, cfg, written):
        return self._target_cell(search, cfg, self.ptr(cfg, "T"), written)

    def advance(self, search, cfg):
        R = search.R
        T = (_moved(self.ptr(cfg, "T")[0], 1, R), 0)
        cfg = self.with_ptr(cfg, T=T)
        E, F = self.ptr(cfg, "E"), self.ptr(cfg, "F")
        if E is not None:
            c = compare(T[0], E[0], R)
            return [(True, cfg, [])] if c == 0 else [(False, cfg, [])] if c is not None else \
                [(True, cfg, []), (False, cfg, [])]
        if compare(T[0], F[0], R) in (1, None):          # the next target may be the end
            out = []
            placed = self.with_ptr(cfg, E=T)
            if self.consistent(search, placed):
                out.append((True, placed, [("place", "E", T)]))
            out.append((False, self.with_ptr(cfg, F=T) if compare(T[0], F[0], R) == 1 else cfg, []))
            return out
        return [(False, cfg, [])]

    def relevant(self, search, cfg, off):
        T, E = self.ptr(cfg, "T"), self.ptr(cfg, "E")
        return compare(off[0], T[0], search.R) != -1 and (E is None or compare(off[0], E[0], search.R) != 1)

    def consistent(self, search, cfg):
        O, E, F, T = cfg.ptr                             # E - O = n, the number of digits
        n = self.length
        lo, hi = (n, n) if n is not None else (self.min_length, None)
        return _order_ok(search, [(O, T, 0, None), (T, E, 0, None), (O, E, lo, hi), (O, F, 0, None),
                                  (F, E, 1, None)])

    def patience(self, cfg, length):
        return length + 2


class ReverseSpec(Spec):
    pointers, axes = ("Q", "P", "F", "T"), ("x", "x", "x", "x")
    growth = 2
    BLIND = 2                       # blind writes followed (each one already has a failing branch)

    def initial(self, search):
        if self.symbolic:
            ptr = ((-1, 0), None, (0, 0), None)
        else:
            ptr = ((-1, 0), (clip(self.length, search.R), 0), None, (clip(self.length - 1, search.R), 0))
        return [(Config(search.machine.start, ptr, (), (0, 0), 0, False, (0,)), [])]

    def read(self, search, cfg):
        v = self.task.vocab
        Q, P, F = self.ptr(cfg, "Q"), self.ptr(cfg, "P"), self.ptr(cfg, "F")
        if Q[0] == 0:
            return [(frozenset([v.Q]), cfg, [])]
        if P is not None:
            return [(frozenset([v.P]) if P[0] in (0, -1) else self.digits, cfg, [])]
        if compare(F[0], 0, search.R) == -1:
            out = []
            k = cfg.spec[0]
            placed = self.with_ptr(cfg, P=(0, 0), T=(clip(-1 - k, search.R), 0))
            if self.consistent(search, placed):
                out.append((frozenset([v.P]), placed, [("place", "P", (0, 0))]))
            out.append((self.digits, self.with_ptr(cfg, F=(0, 0)), []))
            return out
        return [(self.digits, cfg, [])]

    def target(self, search, cfg, written):
        T = self.ptr(cfg, "T")
        if T is None:                                    # P not met yet: the target's cell is unknown
            out = [(False, cfg, [("target", self.digits - {written})])]
            if cfg.spec[0] < self.BLIND:
                out.append((True, cfg, [("target", frozenset([written]))]))
            return out
        return CopySpec._target_cell(self, search, cfg, T, written)

    def advance(self, search, cfg):
        R = search.R
        T = self.ptr(cfg, "T")
        if T is None:
            return [(False, cfg._replace(spec=(cfg.spec[0] + 1,)), [])]
        T = (_moved(T[0], -1, R), 0)
        cfg = self.with_ptr(cfg, T=T)
        c = compare(T[0], self.ptr(cfg, "Q")[0], R)      # written the digit at x = 1: done
        return [(True, cfg, [])] if c == 0 else [(False, cfg, [])] if c is not None else \
            [(True, cfg, []), (False, cfg, [])]

    def relevant(self, search, cfg, off):
        Q, T = self.ptr(cfg, "Q"), self.ptr(cfg, "T")
        return compare(off[0], Q[0], search.R) != -1 and (T is None or compare(off[0], T[0], search.R) != 1)

    def consistent(self, search, cfg):
        Q, P, F, T = cfg.ptr
        n = self.length
        lo, hi = (n + 1, n + 1) if n is not None else (self.min_length + 1, None)
        return _order_ok(search, [(Q, P, lo, hi), (Q, T, 0, None), (T, P, 1, None), (Q, F, 1, None),
                                  (F, P, 1, None)])

    def patience(self, cfg, length):
        return 2 * length + 3

    def first_sweep(self, search, cfg):
        """Before the first write the head may sweep from x = 1 to the p's:
        |head - 1| <= n - (P's offset) when P is in range, <= n between."""
        Q, P = self.ptr(cfg, "Q"), self.ptr(cfg, "P")
        if not is_far(Q[0]):
            return 0, abs(Q[0] + 1)
        if P is not None and not is_far(P[0]):
            return 1, -P[0]
        if Q[0] < 0 and (P is None or P[0] > 0):
            return 1, 0
        return None
