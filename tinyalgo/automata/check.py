"""The certificate checker: is a proof written by ``tinyalgo verify
--certificate`` valid for its machine?  It searches nothing: it checks an
inductive invariant (paper section 6.4: a discretised controller can be
checked at every length).

A certificate lists, for each length from the task's shortest up to N0 - 1
and for every length >= N0 at once, a set of abstract configurations of the
machine on the task (the verifier's head-relative view: the machine's state,
landmarks as offsets from the head, the cells known near it, the idle
steps, the task's own state; tinyalgo/automata/product.py describes it).
The checker accepts it when, for every set,

1. every initial configuration of the task is in the set;
2. every step of the machine from a configuration of the set goes to a
   configuration of the set or ends the episode with all targets written:
   no step writes a wrong symbol or can time out;

and the sets cover every length: N0 is the task's (``rules.ranges``) for the
window of the set of lengths >= N0, and the machine is the one the
certificate names (its SHA-256).  1 and 2 say that no episode of any covered
length can fail, so every instance is solved.

This module shares with the verifier only the machine loader, the task rules
(tinyalgo/automata/rules.py, the specifications spec_*.py with their offsets
and ``Config`` record) and the moves of the environment's interfaces; the
step of the machine, the window, the timeout and the check are its own.
"""
from __future__ import annotations

import gzip
import hashlib
import json

from tinyalgo.automata.machine import MachineError
from tinyalgo.automata.offsets import FAR, distance_change, is_far, shift, sticky_shift
from tinyalgo.automata.product import Config
from tinyalgo.automata.rules import SMALLEST, SPECS, check_machine, make, ranges
from tinyalgo.interfaces import InputGrid, InputTape

FORMAT, VERSION = "tinyalgo-certificate", 1
MAX_WINDOW, MAX_PSI = 16, 1000
MAX_BYTES = 2 ** 30         # of a certificate's JSON text (decompressed); the committed ones hold at most a few MB


class CertificateError(ValueError):
    """A certificate that does not prove what it claims, or cannot be read."""


def digest(machine) -> str:
    """SHA-256 of what the machine does: task, base, moves, start and its tables."""
    body = json.dumps([machine.task, machine.base, machine.n_moves, machine.start, machine.action.tolist(),
                       machine.symbol.tolist(), machine.next.tolist()], separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()


def read_certificate(path) -> dict:
    """The certificate JSON at ``path`` (gzip-compressed if it ends in .gz)."""
    try:
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rb") as f:
            text = f.read(MAX_BYTES + 1)
        if len(text) > MAX_BYTES:
            raise CertificateError(f"certificate {path}: more than {MAX_BYTES:,} bytes of JSON"
                                   f"{' decompressed' if opener is gzip.open else ''}; allowed: at most that")
        data = json.loads(text.decode("utf-8"))
    except CertificateError:
        raise
    except FileNotFoundError:
        raise CertificateError(f"certificate {path}: no such file") from None
    except (OSError, ValueError, RecursionError, EOFError) as err:       # ValueError: also a number too long
        raise CertificateError(f"certificate {path}: not readable JSON ({str(err)[:80] or type(err).__name__})") \
            from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise CertificateError(f"certificate {path}: not a {FORMAT} version {VERSION}")
    return data


def _int(value) -> int:
    """``value`` if it is a JSON integer (not a boolean), else a ValueError."""
    if not _is_int(value):
        raise ValueError(f"not an integer: {value!r}")
    return value


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _config(item) -> Config:
    state, ptr, cells, w, psi, wrote, spec = item
    if not isinstance(wrote, bool):
        raise ValueError(f"not true or false: {wrote!r}")
    return Config(_int(state), tuple(None if p is None else (_int(p[0]), _int(p[1])) for p in ptr),
                  tuple(((_int(o[0]), _int(o[1])), frozenset(_int(s) for s in symbols)) for o, symbols in cells),
                  (_int(w[0]), _int(w[1])), _int(psi), wrote, tuple(spec))


class Steps:
    """The machine's steps on a task, from configurations (what the
    specifications call ``search``: R, K, psi_cap, machine, cell, with_cell)."""

    def __init__(self, machine, spec, K, R, keep_all, psi_cap):
        self.machine, self.spec, self.K, self.R, self.keep_all, self.psi_cap = machine, spec, K, R, keep_all, psi_cap
        self.moves = (InputTape if machine.n_moves == 2 else InputGrid).MOVES

    def cell(self, cfg, off):
        return dict(cfg.cells).get(off)

    def with_cell(self, cfg, off, symbols):
        symbols = frozenset(symbols)
        known = self.cell(cfg, off)
        if known is not None:
            symbols &= known
            if not symbols:
                return None
        if is_far(off[0]) or is_far(off[1]) or max(abs(off[0]), abs(off[1])) > self.K:
            return cfg
        cells = dict(cfg.cells)
        cells[off] = symbols
        return cfg._replace(cells=tuple(sorted(cells.items())))

    def forget(self, cfg):
        """Drop the cells outside the window, those that may hold any digit, and those that cannot matter."""
        digits = self.spec.digits
        cells = tuple((o, s) for o, s in cfg.cells if max(abs(o[0]), abs(o[1])) <= self.K and s != digits
                      and (self.keep_all or self.spec.relevant(self, cfg, o)))
        return cfg._replace(cells=cells)

    def answer(self, state, x):
        """(move, symbol written or None, next state) as MachineAgent acts without a controller."""
        m = self.machine
        a, q = int(m.action[state, x]), int(m.next[state, x])
        if a < 0:
            return 0, None, state
        written = max(int(m.symbol[state, x]), 0) if a >= m.n_moves else None     # an unknown symbol: 0
        return a % m.n_moves, written, (state if q < 0 else q)

    def after(self, cfg, read=None):
        """Every outcome of one step from ``cfg`` (reading the symbol ``read``, if given, else any the cell may
        hold): a Config, "done", or ("fail", why)."""
        known = self.cell(cfg, (0, 0))
        reads = [(known, cfg)] if known is not None else [(s, c) for s, c, _ in self.spec.read(self, cfg)]
        for symbols, c1 in reads:
            answers = {}
            for x in sorted(symbols):
                if read is None or x == read:
                    answers.setdefault(self.answer(cfg.state, x), []).append(x)
            for (move, written, q), xs in answers.items():
                c2 = self.with_cell(c1, (0, 0), xs)
                if c2 is None:
                    continue
                dx, dy = self.moves[move]
                if written is None:
                    yield from self.moved(c2._replace(state=q), dx, dy, False)
                    continue
                for right, c3, _ in self.spec.target(self, c2, written):
                    if not right:
                        yield ("fail", "wrong write")
                        continue
                    for finished, c4, _ in self.spec.advance(self, c3):
                        if finished:
                            yield "done"
                        else:
                            yield from self.moved(c4._replace(state=q), dx, dy, True)

    def moved(self, cfg, dx, dy, wrote):
        options = [[None] if p is None else
                   [(x, y) for x in shift(p[0], dx, self.R) for y in (shift(p[1], dy, self.R) if axes == "xy" else [0])]
                   for p, axes in zip(cfg.ptr, self.spec.axes)]
        cells = tuple(((o[0] - dx, o[1] - dy), s) for o, s in cfg.cells)
        if wrote:
            w, psi = (0, 0), 0
        else:
            w = (sticky_shift(cfg.w[0], dx, self.R), sticky_shift(cfg.w[1], dy, self.R))
            psi = cfg.psi + 1 - distance_change(cfg.w[0], dx) - distance_change(cfg.w[1], dy)
        for ptr in _product(options):
            c = cfg._replace(ptr=ptr, cells=cells, w=w, psi=psi, wrote=cfg.wrote or wrote)
            if not self.spec.consistent(self, c):
                continue
            for c2, _, failure in self.spec.after_move(self, c, dx, dy):
                why = failure or self.may_time_out(c2)
                yield ("fail", why) if why else self.forget(c2)

    def may_time_out(self, cfg):
        """Why the episode may end by the timeout (complexity + 2 steps without a write) after this step, or None."""
        spec = self.spec
        length = spec.min_length if spec.length is None else spec.length
        if not (is_far(cfg.w[0]) or is_far(cfg.w[1])):
            return "timeout" if cfg.psi + abs(cfg.w[0]) + abs(cfg.w[1]) >= spec.patience(cfg, length) else None
        if cfg.psi > self.psi_cap:
            return "possible timeout"
        sweep = None if cfg.wrote else spec.first_sweep(self, cfg)
        if sweep is None or (spec.length is None and sweep[0] > spec.growth) or \
                cfg.psi + sweep[0] * length + sweep[1] >= spec.patience(cfg, length):
            return "possible timeout"
        return None


def _product(options):
    out = [()]
    for choices in options:
        out = [o + (c,) for o in out for c in choices]
    return out


def check_certificate(machine, cert: dict) -> dict:
    """Check ``cert`` (a certificate's JSON) against ``machine``; a summary
    of what it proves, or CertificateError naming the first fact that fails."""
    try:
        check_machine(machine)
    except MachineError as err:
        raise CertificateError(str(err)) from None
    if cert.get("machine_sha256") != digest(machine):
        raise CertificateError("the certificate is of another machine (its SHA-256 differs)")
    if cert.get("task") != machine.task or cert.get("base") != machine.base:
        raise CertificateError(f"the certificate names task {cert.get('task')!r} base {cert.get('base')!r};"
                               f" the machine is {machine.task} base {machine.base}")
    psi_cap, smallest, sections = cert.get("psi_cap"), SMALLEST[machine.task], cert.get("sections")
    if not _is_int(psi_cap) or not 0 <= psi_cap <= MAX_PSI or not isinstance(sections, list):
        raise CertificateError("malformed certificate (psi_cap, sections)")
    by_length = {}
    for i, s in enumerate(sections):
        if not isinstance(s, dict) or not _is_int(s.get("window")) or not 1 <= s["window"] <= MAX_WINDOW \
                or not isinstance(s.get("every_cell_kept"), bool) or not isinstance(s.get("configurations"), list) \
                or not (s.get("length") is None or _is_int(s.get("length"))) or s.get("length") in by_length:
            raise CertificateError(f"malformed certificate: section {i}")
        by_length[s["length"]] = s
    if None not in by_length:
        raise CertificateError("the certificate has no section for the lengths explored at once")
    _, N0 = ranges(machine.task, by_length[None]["window"], psi_cap)
    if cert.get("smallest") != smallest or cert.get("exact_below") != N0:
        raise CertificateError(f"the certificate claims lengths from {cert.get('smallest')!r}, one by one below"
                               f" {cert.get('exact_below')!r}; the task's are from {smallest}, below {N0}")
    if sorted(n for n in by_length if n is not None) != list(range(smallest, N0)):
        raise CertificateError(f"the sections must be the lengths {smallest}..{N0 - 1} one by one and every length"
                               f" >= {N0} at once; got {sorted(n for n in by_length if n is not None)} and >= {N0}")
    task, total = make(machine.task, machine.base), 0
    for n, s in sorted(by_length.items(), key=lambda item: N0 if item[0] is None else item[0]):
        where = f"lengths >= {N0}" if n is None else f"length {n}"
        spec = SPECS[machine.task](task, n, min_length=N0 if n is None else n)
        K = s["window"]
        R = ranges(machine.task, K, psi_cap)[0] if n is None else FAR // 2
        steps = Steps(machine, spec, K, R, s["every_cell_kept"], psi_cap)
        try:
            configs = {_config(item) for item in s["configurations"]}
        except (TypeError, ValueError, IndexError, KeyError):
            raise CertificateError(f"{where}: a configuration is malformed") from None
        for cfg, _ in spec.initial(steps):
            if steps.forget(cfg) not in configs:
                raise CertificateError(f"{where}: an initial configuration is missing (state {cfg.state})")
        for cfg in configs:
            try:
                outcomes = list(steps.after(cfg))
            except (TypeError, ValueError, IndexError, KeyError, AttributeError):
                raise CertificateError(f"{where}: the configuration {cfg} is not one of the task's") from None
            for out in outcomes:
                if isinstance(out, tuple) and out and out[0] == "fail":
                    raise CertificateError(f"{where}: a step from a listed configuration (state {cfg.state}) can"
                                           f" fail: {out[1]}")
                if isinstance(out, Config) and out not in configs:
                    raise CertificateError(f"{where}: a step from a listed configuration (state {cfg.state}) leads"
                                           " to one the certificate does not list")
        total += len(configs)
    return dict(task=machine.task, base=machine.base, states=machine.n_states, smallest=smallest, exact_below=N0,
                sections=len(by_length), configurations=total,
                established=f"every instance of every length >= {smallest} is solved (lengths {smallest}..{N0 - 1}"
                            f" one by one, every length >= {N0} at once)")
