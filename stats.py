"""The statistics every comparison rests on, knowing nothing of what is measured: the mean and
the nearest-rank percentile, the paired cluster bootstrap (its resamples, the 95% percentile
interval, the paired summary of a difference, whether it separates two systems and the minimum
detectable difference), and the tests and intervals of a rate (Fisher's exact test, Cohen's
and Fleiss' kappa, the Wilson interval) and of a ranking (Kendall's tau-b). metrics.py defines
the metrics on top of these; every number of a comparison takes its interval from here.
"""
from __future__ import annotations

import math
import statistics
from collections import Counter
from itertools import combinations

import numpy as np

RESAMPLES, SEED = 10000, 0
# Resamples seeded together: block b of the resamples is drawn from default_rng([seed, b x
# BOOTSTRAP_BLOCK]), so a resample depends on the seed and its position only. Its draws are
# made and counted BOOTSTRAP_CHUNK at a time, so that they and their counts stay in the CPU's
# cache; the block's generator carries on from chunk to chunk, so the draws are the ones a
# single call for the whole block makes.
# The counts of whole blocks are then used in pieces of up to BOOTSTRAP_PIECE counts (16 MB):
# each matrix product wakes BLAS's threads, which on a shared machine can cost more than a small
# product itself, so the fewer products the better, within a bound on memory.
BOOTSTRAP_BLOCK = 1000
BOOTSTRAP_CHUNK = 1 << 17
BOOTSTRAP_PIECE = 1 << 22
# Two-sided 95% confidence and 80% power: the minimum detectable difference of a paired
# comparison is (z_0.975 + z_0.80) times the standard error of the paired difference. Computed,
# not typed, so every module that needs them (the Wilson interval too) holds the same digits.
Z95 = statistics.NormalDist().inv_cdf(0.975)
Z80 = statistics.NormalDist().inv_cdf(0.80)
# A total, or its value in every resample (ClusterBootstrap.totals): the kappas take either.
Totals = float | np.ndarray


# ---------------------------------------------------------------------------------------------
# Small numbers
# ---------------------------------------------------------------------------------------------

def mean(xs: list) -> float | None:
    """Arithmetic mean; None for an empty list (not measurable, never NaN)."""
    return sum(xs) / len(xs) if xs else None


def percentile(sorted_xs, q: float) -> float:
    """The q-quantile of a sorted sequence by the nearest-rank method (no interpolation)."""
    return float(sorted_xs[min(len(sorted_xs) - 1, max(0, math.ceil(q * len(sorted_xs)) - 1))])


# ---------------------------------------------------------------------------------------------
# The paired cluster bootstrap
# ---------------------------------------------------------------------------------------------

class ClusterBootstrap:
    """Resamples of whole clusters with replacement, shared by every statistic of one budget
    (common random numbers: each interval is drawn from the same resamples). Questions of one
    case, and cases cut from one conversation, are not independent (resampling questions alone
    would make every interval too narrow).

    A resample is a vector of counts, how often each cluster was drawn; a statistic's total in
    every resample is then one matrix product, so thousands of resamples cost milliseconds per
    statistic instead of a Python loop per draw."""

    def __init__(self, clusters: list, resamples: int, seed: int) -> None:
        self.clusters = sorted(clusters)
        self.index = {c: i for i, c in enumerate(self.clusters)}
        self.resamples, self.seed = resamples, seed

    def counts(self, groups: np.ndarray | None = None):
        """Pieces of whole blocks of resamples as count matrices, the same every call: how often
        each cluster was drawn (resamples x clusters); with `groups`, a group number per cluster
        (0 to G-1), how often a cluster of each group was drawn (resamples x G)."""
        n = len(self.clusters)
        width = n if groups is None else int(groups.max()) + 1 if n else 0
        step = max(1, min(BOOTSTRAP_BLOCK, BOOTSTRAP_CHUNK // max(1, n)))
        offsets = np.arange(step)[:, None] * width  # row i of a chunk counts into bins i*width and up
        per_piece = BOOTSTRAP_BLOCK * max(1, BOOTSTRAP_PIECE // (BOOTSTRAP_BLOCK * max(1, width)))
        for start in range(0, self.resamples, BOOTSTRAP_BLOCK):
            if start % per_piece == 0:
                piece = np.empty((min(per_piece, self.resamples - start), width), dtype=np.float32)
            rng = np.random.default_rng([self.seed, start])
            end = min(start + BOOTSTRAP_BLOCK, self.resamples)
            for at in range(start, end, step):
                k = min(step, end - at)
                bins = rng.integers(0, n, size=(k, n))
                if groups is not None:
                    bins = groups[bins]
                bins += offsets[:k]
                row = at % per_piece
                piece[row:row + k] = np.bincount(bins.ravel(), minlength=k * width).reshape(k, width)
            if end % per_piece == 0 or end == self.resamples:
                yield piece

    def totals(self, columns: np.ndarray) -> np.ndarray:
        """Per-cluster sums (clusters x statistics) -> their totals in each resample
        (resamples x statistics). Clusters whose rows are equal add the same whichever of them
        is drawn, so the draws are counted per distinct row: at most types x 2^systems of them
        when clusters hold a question each, however many clusters there are. Every column here
        holds whole numbers (questions, correct answers), and float32 adds whole numbers exactly
        below 2^24; a resample's total is at most clusters x the largest cluster value, and when
        that bound is not below 2^24 the sums are taken in float64 instead."""
        distinct, groups = np.unique(columns, axis=0, return_inverse=True)
        groups = groups.reshape(-1)
        if len(columns) and np.abs(columns).max() * len(self.clusters) >= 2 ** 24:
            return np.vstack([block.astype(np.float64) @ distinct for block in self.counts(groups)])
        distinct = distinct.astype(np.float32)
        return np.vstack([block @ distinct for block in self.counts(groups)]).astype(np.float64)

    def column(self, per_cluster: dict) -> np.ndarray:
        """A {cluster: value} mapping as a column over this bootstrap's clusters (0 elsewhere)."""
        col = np.zeros(len(self.clusters))
        for c, v in per_cluster.items():
            col[self.index[c]] = v
        return col


def interval(values: np.ndarray) -> tuple[float | None, float | None]:
    """The 95% percentile interval of a statistic's resampled values (NaN = undefined in that
    resample, dropped); None when more than 5% are undefined."""
    ok = np.sort(values[~np.isnan(values)])
    if len(ok) < 0.95 * len(values) or not len(ok):
        return None, None
    return percentile(ok, 0.025), percentile(ok, 0.975)


def paired_summary(difference: float, resampled: np.ndarray, clusters: int) -> dict:
    """One paired difference as every comparison reports it, accuracy and retrieval alike: the
    point, the 95% interval of its resampled values and their standard error. No interval from
    a single cluster (resampling one cluster always draws it, and a zero width would read as
    certainty); and where the interval is withheld (interval()), no standard error either, so
    that no minimum detectable difference is scaled from resamples too sparse for an interval."""
    out = {"difference": difference, "ci_low": None, "ci_high": None, "standard_error": None}
    if clusters > 1:
        out["ci_low"], out["ci_high"] = interval(resampled)
        if out["ci_low"] is not None:
            out["standard_error"] = float(np.nanstd(resampled))
    return out


def separated(d: dict) -> bool | None:
    """Whether a paired difference's interval excludes 0; None without an interval."""
    return None if d["ci_low"] is None else not d["ci_low"] <= 0 <= d["ci_high"]


def minimum_detectable(difference: dict | None) -> float | None:
    """The smallest true paired difference this comparison detects with 80% power at 95%
    confidence: (z_0.975 + z_0.80) x the bootstrap standard error of the paired difference.
    None where that error is unknown (fewer than two clusters) or 0 (the difference is the same
    in every resample, as when two systems agree on every question): there is no spread to
    scale, and 0 would claim that any difference is detected."""
    if difference is None or not difference["standard_error"]:
        return None
    return (Z95 + Z80) * difference["standard_error"]


# ---------------------------------------------------------------------------------------------
# Rates: a one-sided test, agreement between raters, rankings, the Wilson interval
# ---------------------------------------------------------------------------------------------

def fisher_greater(a: int, n1: int, b: int, n2: int) -> float:
    """One-sided Fisher exact test: the probability, with a+b events spread at random over
    n1+n2 trials, that the first group gets a or more of them (its rate is higher by chance)."""
    total, events = n1 + n2, a + b
    return sum(math.comb(events, x) * math.comb(total - events, n1 - x)
               for x in range(a, min(events, n1) + 1)) / math.comb(total, n1)


def cohen_kappa(pairs: list[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters, one (first, second) label pair per item; None when it is
    undefined: no items, or both raters gave everything the same one label."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs)
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(first[c] * second[c] for c in first)  # expected agreements times n, in integers
    if chance == n * n:
        return None
    return (observed / n - chance / (n * n)) / (1 - chance / (n * n))


def binary_cohen_kappa(n: Totals, agree: Totals, first: Totals, second: Totals) -> np.ndarray:
    """Cohen's kappa of two raters on a yes/no label from totals: n items, `agree` of them
    labelled alike, `first` and `second` the yeses of each. Takes numbers or arrays of resampled
    totals alike (numpy arithmetic), so a point and its resamples are one formula; NaN where it
    is undefined (no items, or both raters gave every item the same one label)."""
    n, agree, first, second = (np.asarray(x, dtype=np.float64) for x in (n, agree, first, second))
    with np.errstate(divide="ignore", invalid="ignore"):
        chance = (first * second + (n - first) * (n - second)) / (n * n)
        return np.where((n > 0) & (chance < 1), (agree / n - chance) / (1 - chance), np.nan)


def fleiss_kappa(n: Totals, raters: int, agreeing_pairs: Totals, yeses: Totals) -> np.ndarray:
    """Fleiss' kappa of `raters` raters on a yes/no label from totals: n items, agreeing_pairs the
    rater pairs that agree, summed over the items (agreeing_pairs()), yeses the yes labels of all
    raters together. Numbers or arrays of resampled totals alike; NaN where it is undefined (no
    items, or every label the same). With two raters it is Scott's pi, which pools the raters'
    shares of yeses where Cohen's kappa keeps each rater's own."""
    n, agreeing_pairs, yeses = (np.asarray(x, dtype=np.float64) for x in (n, agreeing_pairs, yeses))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = yeses / (n * raters)
        chance = p * p + (1 - p) * (1 - p)
        observed = agreeing_pairs / (n * math.comb(raters, 2))
        return np.where((n > 0) & (chance < 1), (observed - chance) / (1 - chance), np.nan)


def agreeing_pairs(yeses: int, raters: int) -> int:
    """How many of an item's rater pairs agree, given how many of its raters said yes: a whole
    number, so that the bootstrap's totals of it are exact."""
    return math.comb(yeses, 2) + math.comb(raters - yeses, 2)


def kendall_tau_b(a: dict, b: dict) -> float | None:
    """Kendall's tau-b between two scorings of the same systems (ties counted as neither
    concordant nor discordant, and corrected for); None when one scoring ties every system."""
    concordant = discordant = ties_a = ties_b = 0
    for x, y in combinations(sorted(a), 2):
        da, db = a[x] - a[y], b[x] - b[y]
        if da == 0 and db == 0:
            continue
        if da == 0:
            ties_a += 1
        elif db == 0:
            ties_b += 1
        elif (da > 0) == (db > 0):
            concordant += 1
        else:
            discordant += 1
    n = concordant + discordant
    denominator = ((n + ties_a) * (n + ties_b)) ** 0.5
    return (concordant - discordant) / denominator if denominator else None


def wilson_interval(k: int, n: int, z: float = Z95) -> list[float] | None:
    """The Wilson score interval of a rate of k in n (95% by default), as [low, high]; None for
    n = 0. It stays inside [0, 1] and is not empty at k = 0, where a normal interval is."""
    if n == 0:
        return None
    p, z2 = k / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # At k = 0 and k = n the bounds are 0 and 1 exactly; rounding would leave 1e-18 there.
    return [0.0 if k == 0 else max(0.0, centre - half), 1.0 if k == n else min(1.0, centre + half)]
