"""Discretising the controller's recurrent states (the paper's section 6.4
proposes "discretization of state"): k-means with the k-means++
initialisation, seeded, written here with NumPy."""
from __future__ import annotations

import numpy as np


def squared_distances(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """||x - c||^2 for every row of X (N, D) and C (k, D): (N, k), clipped at 0."""
    d = (X * X).sum(axis=1)[:, None] - 2.0 * (X @ C.T) + (C * C).sum(axis=1)[None, :]
    return np.maximum(d, 0.0)


def assign(X: np.ndarray, centroids: np.ndarray, chunk: int = 16384) -> np.ndarray:
    """Index (N,) of the nearest centroid of each row of X (in chunks: small temporaries)."""
    X = np.asarray(X, dtype=np.float64)
    if centroids.shape[1] == 0:
        return np.zeros(len(X), dtype=np.int64)
    out = np.empty(len(X), dtype=np.int64)
    for i in range(0, len(X), chunk):
        out[i:i + chunk] = squared_distances(X[i:i + chunk], centroids).argmin(axis=1)
    return out


def kmeans_plus_plus(X: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k initial centroids: the first uniformly, each next one with
    probability proportional to its squared distance to the nearest chosen
    (Arthur and Vassilvitskii's k-means++)."""
    n = len(X)
    centroids = [X[rng.integers(n)]]
    nearest = squared_distances(X, centroids[0][None, :])[:, 0]
    for _ in range(1, k):
        total = nearest.sum()
        if total <= 0.0:                      # fewer distinct points than k: repeat the last one
            centroids.append(centroids[-1])
            continue
        j = int(np.searchsorted(np.cumsum(nearest), rng.random() * total, side="right"))
        centroids.append(X[min(j, n - 1)])
        nearest = np.minimum(nearest, squared_distances(X, centroids[-1][None, :])[:, 0])
    return np.array(centroids)


def kmeans(X: np.ndarray, k: int, seed: int = 0, iterations: int = 50, fit_rows: int = 20000):
    """Lloyd's k-means of the rows of X (N, D) into at most k clusters.

    Fits on at most ``fit_rows`` distinct rows (a seeded sample), then
    assigns every row.  Empty clusters are dropped.  Returns (centroids
    (k', D) float64, labels (N,)).  The same seed gives the same result."""
    if k < 1:
        raise ValueError(f"k must be at least 1; got {k}")
    X = np.asarray(X, dtype=np.float64)
    if X.shape[1] == 0 or len(X) == 0:
        return np.zeros((1, X.shape[1])), np.zeros(len(X), dtype=np.int64)
    rng = np.random.default_rng(seed)
    distinct = np.unique(X, axis=0)
    if len(distinct) > fit_rows:
        distinct = distinct[rng.choice(len(distinct), fit_rows, replace=False)]
    k = min(k, len(distinct))
    C = kmeans_plus_plus(distinct, k, rng)
    labels = None
    for _ in range(iterations):
        new = squared_distances(distinct, C).argmin(axis=1)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        counts = np.bincount(labels, minlength=len(C))
        sums = np.zeros_like(C)
        np.add.at(sums, labels, distinct)
        keep = counts > 0
        C = sums[keep] / counts[keep][:, None]
        labels = np.cumsum(keep)[labels] - 1
    return nearest_clusters(X, C)


def nearest_clusters(X: np.ndarray, centroids: np.ndarray):
    """Every row of X (N, D) in the cluster of its nearest centroid
    (``assign``), the clusters no row falls in dropped: (centroids (k', D),
    labels (N,) numbering the kept ones)."""
    labels = assign(X, centroids)
    used = np.unique(labels)
    remap = np.full(len(centroids), -1)
    remap[used] = np.arange(len(used))
    return np.asarray(centroids, dtype=np.float64)[used], remap[labels]
