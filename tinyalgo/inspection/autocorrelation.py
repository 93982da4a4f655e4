"""The autocorrelation of a controller's state over time (paper section 5,
the footnote to Table 2).

With h_i the controller state at time step i (i = 1..T),

    E = (1/T) sum_k h_k,    sigma^2 = (1/T) sum_k <h_k - E, h_k - E>,
    A_ij = <h_i - E, h_j - E> / sigma^2.

A correct reverse controller is a two-state automaton (paper Figure 4a):
move right until the marker, then left to the start; its states should fall
into two groups, which shows in A as two blocks of high correlation.
``phase_means`` measures that: the mean of A within the phases and across
them.
"""
from __future__ import annotations

import numpy as np


def autocorrelation(states) -> np.ndarray:
    """A (T, T) of ``states`` (T, H), the paper's footnote formula.

    The mean of A's diagonal is 1 (sum_i A_ii = T by the choice of sigma^2).
    Raises ValueError for states that are not a (T, H) array with T >= 2, or
    that never change (sigma^2 = 0: A is undefined)."""
    h = np.asarray(states, dtype=np.float64)
    if h.ndim != 2 or h.shape[0] < 2 or h.shape[1] < 1:
        raise ValueError(f"states must be an array of shape (T, H) with T >= 2 and H >= 1; got shape {h.shape}")
    if not np.isfinite(h).all():
        raise ValueError("states must be finite")
    T = h.shape[0]
    d = h - h.mean(axis=0)                     # h_k - E
    sigma2 = float(np.einsum("th,th->", d, d)) / T
    if sigma2 <= 0.0:
        raise ValueError("the states are the same at every step (sigma^2 = 0): the autocorrelation is undefined")
    return (d @ d.T) / sigma2


def phase_means(A, phases) -> dict:
    """Mean autocorrelation within and across the phases of execution.

    A (T, T); phases (T,) a label per step (e.g. 0 while moving right, 1
    while moving left).  Returns ``within`` (the mean of A_ij over i != j in
    the same phase), ``across`` (over i, j in different phases), and
    ``within_<label>`` per phase (NaN for a phase of a single step)."""
    A = np.asarray(A, dtype=np.float64)
    phases = np.asarray(phases)
    T = A.shape[0]
    if A.shape != (T, T) or phases.shape != (T,):
        raise ValueError(f"A must be (T, T) and phases (T,); got {A.shape} and {phases.shape}")
    same = phases[:, None] == phases[None, :]
    off_diagonal = ~np.eye(T, dtype=bool)

    def mean(mask):
        return float(A[mask].mean()) if mask.any() else float("nan")

    out = dict(within=mean(same & off_diagonal), across=mean(~same))
    for label in np.unique(phases):
        block = (phases == label)
        out[f"within_{label}"] = mean(block[:, None] & block[None, :] & off_diagonal)
    return out


def within_phase_by_lag(A, phases, lags=((1, 2), (3, 7), (8, None))) -> list:
    """Mean of A_ij over pairs in the same phase whose time lag ``|i - j|`` lies
    in each ``(lo, hi)`` range of ``lags`` (hi None: no upper bound); NaN for
    an empty range.  A state that only knows its phase (a two-state
    automaton) gives the same mean at every lag; a state that also counts
    time gives a mean falling with the lag."""
    A = np.asarray(A, dtype=np.float64)
    phases = np.asarray(phases)
    T = A.shape[0]
    if A.shape != (T, T) or phases.shape != (T,):
        raise ValueError(f"A must be (T, T) and phases (T,); got {A.shape} and {phases.shape}")
    i, j = np.indices((T, T))
    lag, same = np.abs(i - j), phases[:, None] == phases[None, :]
    out = []
    for lo, hi in lags:
        mask = same & (lag >= lo) & (lag <= (T if hi is None else hi))
        out.append(float(A[mask].mean()) if mask.any() else float("nan"))
    return out
