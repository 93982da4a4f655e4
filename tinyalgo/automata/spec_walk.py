"""The walk task as the verifier's specification
(tinyalgo/automata/product.py; paper section 3, Figure 2, and section 6.4).

Walk (tinyalgo/tasks/walk.py): an arrow (``l``, ``u`` or ``d``) at (1 + d, 1),
random digits everywhere else; the head starts at (1, 1); complexity c = 2d
or 2d + 1 (parity p); the n = d + 1 + p targets are the digits met walking
from the arrow in its direction; from step c + 2 on every cell reads ``q``
(the walk's clock, tinyalgo/environment.py), and the patience is c + 2.

Pointers: S (the start), A (the arrow: unplaced until the head may meet it on
row 1), E (the last target's cell), F (A lies right of F on row 1), T (the
next target's cell).  The task's state: the arrow, the parity, and
``psi_t`` = time - the length of the walk's path to the head (|head - S|_1
before the arrow, d + |head - A|_1 after), from which the clock is decided.
"""
from __future__ import annotations

from tinyalgo.automata.offsets import FAR, compare, difference_possible, is_far
from tinyalgo.automata.product import Config, Spec, clip

ARROWS = ("l", "u", "d")
STEP = {"l": (-1, 0), "u": (0, -1), "d": (0, 1)}


def _add(p, q, R):
    return tuple(a if is_far(a) else clip(a + b, R) for a, b in zip(p, q))


def _change(v, d):
    """How |offset| changed in a move by d, from the offset after the move."""
    if d == 0:
        return 0
    if is_far(v):
        return -1 if (v > 0) == (d > 0) else 1
    return abs(v) - abs(v + d)


class WalkSpec(Spec):
    pointers, axes = ("S", "A", "E", "F", "T"), ("xy", "xy", "xy", "x", "xy")
    growth = 2

    @staticmethod
    def pointer_rows(task) -> int:
        """One: the walk's pointers are kept within R of the start on both axes."""
        return 1

    @staticmethod
    def symbolic_margin(R: int, psi_cap: int) -> int:
        """psi_cap + 2R: a walk is symbolic only once its path can outgrow the psi counter and the range."""
        return psi_cap + 2 * R

    def _placed(self, search, cfg, arrow, parity, d=None):
        """``cfg`` with the arrow (at the head, or ``d`` to the right of the start) and its path."""
        R = search.R
        A = (0, 0) if d is None else (clip(d, R), 0)
        n = None if d is None else d + 1 + parity
        dx, dy = STEP[arrow]
        if arrow == "l":
            E = _add(self.ptr(cfg, "S"), (-1 - parity, 0), R)
        else:
            E = (A[0], FAR * dy) if n is None else (A[0], clip(n * dy, R))
        T = _add(A, (dx, dy), R)
        spec = (arrow, parity, cfg.spec[2], False, d is None)
        return self.with_ptr(cfg._replace(spec=spec), A=A, E=E, T=T)

    def initial(self, search):
        start = Config(search.machine.start, ((0, 0), None, None, (0, 0), None), (), (0, 0), 0, False,
                       (None, None, 0, False, False))
        if self.symbolic:
            return [(start, [])]
        return [(self._placed(search, start, a, p, self.length), [("param", "arrow", a), ("param", "parity", p)])
                for a in ARROWS for p in (0, 1)]

    def read(self, search, cfg):
        v = self.task.vocab
        if cfg.spec[3]:
            return [(frozenset([v.Q]), cfg, [])]
        S, A, F = self.ptr(cfg, "S"), self.ptr(cfg, "A"), self.ptr(cfg, "F")
        if A is not None:
            sym = {"l": v.L, "u": v.U, "d": v.D}[cfg.spec[0]]
            if A == (0, 0):                              # the arrow: the path's length counts from here
                return [(frozenset([sym]), cfg._replace(spec=cfg.spec[:4] + (True,)), [])]
            return [(self.digits, cfg, [])]
        if S[1] == 0 and compare(F[0], 0, search.R) == -1:           # row 1, right of the known digits
            out = []
            for a in ARROWS:
                for p in (0, 1):
                    placed = self._placed(search, cfg, a, p)
                    if self.consistent(search, placed):
                        sym = {"l": v.L, "u": v.U, "d": v.D}[a]
                        out.append((frozenset([sym]), placed, [("place", "A", (0, 0)), ("param", "arrow", a),
                                                               ("param", "parity", p)]))
            out.append((self.digits, self.with_ptr(cfg, F=(0, 0)) if F[0] == -1 else cfg, []))
            return out
        return [(self.digits, cfg, [])]

    def target(self, search, cfg, written):
        T = self.ptr(cfg, "T")
        if T is None:                                   # before the arrow: the target's cell is unknown
            return [(False, cfg, [("target", self.digits - {written})])]
        known = None if is_far(T[0]) or is_far(T[1]) else search.cell(cfg, T)
        allowed = self.digits if known is None else self.digits & known
        out = []
        if written in allowed:
            out.append((True, search.with_cell(cfg, T, {written}), [("target", frozenset([written]))]))
        if allowed - {written}:
            out.append((False, cfg, [("target", frozenset(allowed - {written}))]))
        return out

    def advance(self, search, cfg):
        T, E = self.ptr(cfg, "T"), self.ptr(cfg, "E")
        cx, cy = compare(T[0], E[0], search.R), compare(T[1], E[1], search.R)
        nxt = self.with_ptr(cfg, T=_add(T, STEP[cfg.spec[0]], search.R))
        if cx == 0 and cy == 0:
            return [(True, cfg, [])]
        if cx is None or cy is None:
            return [(True, cfg, []), (False, nxt, [])]
        return [(False, nxt, [])]

    # ------------------------------------------------------------ the clock
    def after_move(self, search, cfg, dx, dy):
        arrow, parity, psi_t, _, visited = cfg.spec
        base = self.ptr(cfg, "A") if visited else self.ptr(cfg, "S")
        psi_t += 1 - _change(base[0], dx) - _change(base[1], dy)
        if psi_t > search.psi_cap and self.symbolic:
            return [(cfg, [], "possible clock (the head wanders)")]
        cfg = cfg._replace(spec=(arrow, parity, psi_t, False, visited))
        fired = self._fired(search, cfg)
        if fired is False:
            return [(cfg, [], None)]
        return [(cfg, [], "clock" if fired else "possible clock")]

    def _fired(self, search, cfg):
        """Whether every cell reads q from now on: True, False or None (may be)."""
        arrow, parity, psi_t, _, visited = cfg.spec
        S, A, E = self.ptr(cfg, "S"), self.ptr(cfg, "A"), self.ptr(cfg, "E")
        R = search.R
        if not self.symbolic:
            d = self.length
            path = d + abs(A[0]) + abs(A[1]) if visited else abs(S[0]) + abs(S[1])
            return psi_t + path >= 2 * d + 2 + parity
        if not visited:
            F = self.ptr(cfg, "F")
            near = not is_far(S[0]) or (S[0] < 0 and not is_far(S[1]) and F is not None and F[0] > -R)
            return False if near and not is_far(S[1]) else None
        if not (is_far(A[0]) or is_far(A[1])):
            return False
        ux, uy = STEP[arrow]
        if not (is_far(E[0]) or is_far(E[1])):
            along = E[0] * ux + E[1] * uy
            perp = abs(E[1]) if ux else abs(E[0])
            return psi_t - along + perp >= 1
        a = 0 if ux else 1
        u = ux + uy
        perp = A[1 - a]
        if E[a] * u > R and A[a] * u < -R and not is_far(perp) and psi_t + abs(perp) <= R:
            return False                                # between the arrow and the last target, on its line
        return None

    # ------------------------------------------------------------ bookkeeping
    def relevant(self, search, cfg, off):
        S, T, E = self.ptr(cfg, "S"), self.ptr(cfg, "T"), self.ptr(cfg, "E")
        if T is None:
            return not is_far(S[1]) and off[1] == S[1]
        if is_far(T[0]) or is_far(T[1]):
            return True
        ux, uy = STEP[cfg.spec[0]]
        rel = (off[0] - T[0], off[1] - T[1])
        k = rel[0] * ux + rel[1] * uy
        return k >= 0 and (rel[0] * uy - rel[1] * ux) == 0 and (
            is_far(E[0]) or is_far(E[1]) or (E[0] - off[0]) * ux + (E[1] - off[1]) * uy >= 0)

    def consistent(self, search, cfg):
        S, A, E, F, T = cfg.ptr
        R, n = search.R, self.length
        lo, hi = (n, n) if n is not None else (self.min_length, None)
        ok = [(S[0], F[0], 0, None)] if F is not None else []
        if A is not None:
            arrow, parity = cfg.spec[:2]
            a = 0 if arrow == "l" else 1                      # the axis the path runs along
            u = STEP[arrow][a]
            nlo, nhi = lo + 1 + parity, None if hi is None else hi + 1 + parity     # the number of targets

            def along(k_lo, k_hi):                          # k_lo..k_hi steps along the path, as an offset range
                return (k_lo, k_hi) if u > 0 else (None if k_hi is None else -k_hi, -k_lo)
            ok += [(S[0], A[0], lo, hi), (S[1], A[1], 0, 0)]
            if F is not None:
                ok.append((F[0], A[0], 1, None))
            if arrow == "l":
                ok += [(S[0], E[0], -1 - parity, -1 - parity), (S[1], E[1], 0, 0)]
            else:
                ok += [(A[0], E[0], 0, 0), (A[1], E[1], *along(nlo, nhi))]
            ok += [(A[a], T[a], *along(1, nhi)), (A[1 - a], T[1 - a], 0, 0)]
        return all(difference_possible(p, q, a, b, R) for p, q, a, b in ok)

    def patience(self, cfg, length):
        return 2 * length + 2 + (cfg.spec[1] or 0)

    def first_sweep(self, search, cfg):
        S, A, F = self.ptr(cfg, "S"), self.ptr(cfg, "A"), self.ptr(cfg, "F")
        if is_far(S[1]):
            return None
        if not is_far(S[0]):
            return 0, abs(S[0]) + abs(S[1])
        if A is not None and not (is_far(A[0]) or is_far(A[1])):
            return 1, -A[0] + abs(S[1])
        if S[0] < 0 and (A is None or A[0] > 0) and F is not None and F[0] > -search.R:
            return 1, search.R + abs(S[1])
        return None
