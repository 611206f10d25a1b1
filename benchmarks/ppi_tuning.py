"""A power-tuned corrected mean (PPI++, issue 62) against the plain one and the labels alone, by
simulation: the candidates tried, and what ``metrics.agreement.corrected_mean`` reports.

    .venv/bin/python benchmarks/ppi_tuning.py [--draws 4000]

Each draw: 400 cases with human scores on 0 / 0.5 / 1 (true mean 0.575), a judge of one kind,
n of the cases labelled at random. Every interval uses Student's t with n - 1 degrees of
freedom. Candidates: ``plain`` (the product today), ``tuned`` (PPI++: lambda = Cov(h, f) /
((1 + n/N) Var f) on the labelled cases, clipped to [0, 1], plug-in variance), ``jackknife``
(the same estimate, its variance by the jackknife over the labelled cases, lambda re-tuned on
each), ``product`` (what ``corrected_mean`` reports now: the regression slope as lambda, the
variance of a difference estimator over the N cases plus theirs, t on n - 2, and the labels
alone below 60 labels or where they are narrower), ``labels`` (the labelled cases' mean alone).
Prints coverage / mean width per judge and number of labels.
"""

import argparse

import numpy as np
from scipy.special import stdtrit

from rag_eval_pipeline.metrics.agreement import corrected_mean

HUMAN = {0.0: 0.35, 0.5: 0.15, 1.0: 0.50}
TRUTH = sum(v * p for v, p in HUMAN.items())
CANDIDATES = ("plain", "tuned", "jackknife", "product", "labels")


def judge_of(kind: str, human: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    judged, flip = human.copy(), rng.random(len(human))
    if kind == "lenient":
        judged[(human == 0.0) & (flip < 0.3)] = 1.0
        judged[(human == 0.5) & (flip < 0.5)] = 1.0
    elif kind == "harsh":
        judged[(human == 1.0) & (flip < 0.3)] = 0.0
        judged[(human == 0.5) & (flip < 0.5)] = 0.0
    elif kind == "noisy":
        noisy = flip < 0.25
        judged[noisy] = rng.choice(list(HUMAN), size=int(noisy.sum()))
    else:  # weak: its score never tells the label
        judged = rng.choice(list(HUMAN), size=len(human))
    return judged


def _lambda(h_sum, f_sum, hf_sum, n, big_n, var_f):
    covariance = (hf_sum - h_sum * f_sum / n) / (n - 1)
    if var_f == 0:
        return np.ones_like(covariance)
    return np.clip(covariance / ((1 + n / big_n) * var_f), 0.0, 1.0)


def interval(f_all: np.ndarray, f: np.ndarray, h: np.ndarray, how: str) -> tuple[float, float]:
    n, big_n = len(h), len(f_all)
    t, var_f, mean_f = float(stdtrit(n - 1, 0.975)), f_all.var(ddof=1), f_all.mean()
    if how == "labels":
        half = t * h.std(ddof=1) / np.sqrt(n)
        return h.mean() - half, h.mean() + half
    if how == "product":  # what metrics.agreement.corrected_mean reports
        result = corrected_mean(f_all, f, h).interval
        return result.low, result.high
    weight = 1.0 if how == "plain" else float(_lambda(h.sum(), f.sum(), (h * f).sum(), n, big_n, var_f))
    estimate = weight * mean_f + (h - weight * f).mean()
    if how == "jackknife":
        left = _lambda(h.sum() - h, f.sum() - f, (h * f).sum() - h * f, n - 1, big_n, var_f)
        others = left * mean_f + (h.sum() - h) / (n - 1) - left * (f.sum() - f) / (n - 1)
        variance = (n - 1) / n * np.sum((others - others.mean()) ** 2) + weight**2 * var_f / big_n
    else:
        variance = weight**2 * var_f / big_n + (h - weight * f).var(ddof=1) / n
    half = t * np.sqrt(variance)
    return estimate - half, estimate + half


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--draws", type=int, default=4000)
    draws = parser.parse_args().draws
    print("| judge | labels | " + " | ".join(CANDIDATES) + " |")
    print("|---|---|" + "---|" * len(CANDIDATES))
    for kind in ("lenient", "harsh", "noisy", "weak"):
        for n in (30, 60, 100, 200):
            rng = np.random.default_rng(n)
            covered, width = dict.fromkeys(CANDIDATES, 0), dict.fromkeys(CANDIDATES, 0.0)
            for _ in range(draws):
                human = rng.choice(list(HUMAN), size=400, p=list(HUMAN.values()))
                judged = judge_of(kind, human, rng)
                labelled = rng.choice(400, size=n, replace=False)
                for how in CANDIDATES:
                    low, high = interval(judged, judged[labelled], human[labelled], how)
                    covered[how] += low <= TRUTH <= high
                    width[how] += high - low
            cells = " | ".join(f"{covered[c] / draws:.3f} / {width[c] / draws:.3f}" for c in CANDIDATES)
            print(f"| {kind} | {n} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
