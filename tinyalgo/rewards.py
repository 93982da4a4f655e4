"""Rewards for a write (paper section 6 and Appendix C).

* ``binary`` (the paper's "0/1 reward", the default): 1 for a correct write;
* ``discretized``: 1, 1/2 or 1/3 when the target is the first, second or
  third most probable digit of the symbol head, else 0;
* ``continuous``: the probability p_y the symbol head gave the target.

A step without a write gets 0.  Whatever the reward, a write whose symbol
(the argmax) is wrong ends the episode (paper section 6; docs/original-release.md#rewards).
"""
from __future__ import annotations

import numpy as np

REWARDS = ("binary", "discretized", "continuous")


def check_probs(probs, batch: int, base: int) -> None:
    """A ValueError unless ``probs`` are symbol probabilities (batch, V >= base): finite, in [0, 1]."""
    if probs is None:
        raise ValueError("the discretized and continuous rewards (paper Appendix C) need the symbol"
                         " probabilities; got None")
    probs = np.asarray(probs)
    if probs.ndim != 2 or probs.shape[0] != batch or probs.shape[1] < base:
        raise ValueError(f"probs must have shape ({batch}, V) with V >= {base} symbols; got {probs.shape}")
    finite = np.isfinite(probs)
    if not finite.all():
        raise ValueError(f"probs must be probabilities (finite, in [0, 1]); got {int((~finite).sum())} NaN or"
                         " infinite value(s)")
    if probs.min() < 0 or probs.max() > 1 + 1e-5:       # float32 softmax may round a little above 1
        raise ValueError(f"probs must be probabilities (finite, in [0, 1]); got values from {probs.min():g}"
                         f" to {probs.max():g}")


def write_rewards(kind: str, write, correct, target, probs, base: int) -> np.ndarray:
    """Rewards (B,) of one step.

    write, correct : bool (B,); target : int (B,) the symbol due;
    probs : float (B, V) symbol probabilities (unused for "binary").
    """
    if kind not in REWARDS:
        raise ValueError(f"reward must be one of {', '.join(REWARDS)}; got {kind!r}")
    if kind != "binary":
        check_probs(probs, len(target), base)
    if kind == "binary" or not write.any():
        return correct.astype(np.float64)
    lanes = np.arange(len(target))
    safe = np.minimum(target, probs.shape[1] - 1)
    p_target = probs[lanes, safe]
    if kind == "continuous":
        return np.where(write, p_target, 0.0)
    # discretized: rank of the target among the digits (ties favour the target)
    rank = (probs[:, :base] > p_target[:, None]).sum(axis=1)
    value = np.where(rank < 3, 1.0 / (rank + 1), 0.0)
    value = np.where(correct, 1.0, value)
    return np.where(write & (target < base), value, 0.0)
