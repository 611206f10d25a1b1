"""Questions grouped into topics in any language: tf-idf vectors over each question's terms from
its language's analysis, k-means++ (scipy, already a dependency: scikit-learn's import alone took
6 to 18 s here, in every process that evaluates) with a fixed seed; each topic with a stable id
(a digest of its members), its size, representative questions, the share of each label and a
one-line finding, ranked by frequency x severity."""

from __future__ import annotations

import hashlib
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rag_eval_pipeline.health.knowledge import terms_of
from rag_eval_pipeline.health.labels import CONFLICT, COVERED, KNOWLEDGE_GAP, OUTDATED, RETRIEVAL_MISS

FAILED = "failed"  # covered, yet the answer was wrong: a reasoning failure, not the documents'
SEVERITY = {KNOWLEDGE_GAP: 1.0, OUTDATED: 0.9, CONFLICT: 0.9, RETRIEVAL_MISS: 0.6, FAILED: 0.4, COVERED: 0.0}
TOPIC_COLUMNS = [
    "topic",
    "terms",
    "size",
    "severity",
    "rank_score",
    "shares",
    "representatives",
    "finding",
    "qids",
]
FINDINGS = {
    KNOWLEDGE_GAP: "no document answers these: write one about {terms}",
    OUTDATED: "answers rest on superseded or expired documents about {terms}: update or retire them",
    CONFLICT: "documents about {terms} disagree: reconcile them",
    RETRIEVAL_MISS: "the documents answer these but are not retrieved: tune retrieval for {terms}",
    FAILED: "the passages hold the answer about {terms}, the agent still answers wrong: check its prompt",
}


@dataclass(frozen=True)
class TopicModel:
    """Questions' topic assignments: ``assignments[i]`` is the topic id of question ``i``."""

    assignments: list[str]
    terms: dict[str, list[str]]
    centrality: list[float]  # each question's similarity to its topic's centre
    fitted_on: int = 0  # questions the topics were found on (all of them, or a seeded sample)


def _topic_terms(text: str, language: str, surface: dict[str, str]) -> list[str]:
    """The question's terms less its language's question and function words ("what", "wie"),
    which every question shares and no topic is about; ``surface`` learns a word for each stem
    (a topic is named "warranty", not "warranti")."""
    from rag_eval_pipeline.language.analysis import analyzer

    try:
        analysis = analyzer(language)
        stop, words = analysis.stop_words, analysis.content_words(text)
    except Exception:  # noqa: BLE001 - a code the table lacks: its terms as they are
        stop, words = frozenset(), []
    for word in words:
        stems = terms_of(word, language)
        if len(stems) == 1:
            surface.setdefault(stems[0], word)
    return [t for t in terms_of(text, language) if t not in stop]


def _topic_id(members: Sequence[str]) -> str:
    return "t-" + hashlib.sha256("\n".join(sorted(members)).encode()).hexdigest()[:8]


MAX_CLUSTERED = 2_000  # topics are found on at most this many questions (a seeded sample); the rest
# join their nearest topic a chunk at a time, so memory does not grow with the questions
CHUNK = 500  # questions vectorized at once when they join their topics (8 MB at MAX_TERMS)
MAX_TERMS = 2_000  # the vocabulary of the vectors: the most common terms, so memory stays bounded
SILHOUETTE_SAMPLE = 1_000  # questions a k's silhouette is measured on, at most
RESTARTS = 4  # k-means runs per k (seeded), the best kept


@dataclass(frozen=True)
class _Vocabulary:
    """The ``MAX_TERMS`` most common terms of the questions topics are found on, with their idf."""

    columns: dict[str, int]
    idf: dict[str, float]

    @classmethod
    def of(cls, term_lists: list[list[str]]) -> _Vocabulary:
        frequency = Counter(t for terms in term_lists for t in set(terms))
        common = sorted(frequency.items(), key=lambda x: (-x[1], x[0]))[:MAX_TERMS]
        n = len(term_lists)
        return cls(
            {t: i for i, (t, _) in enumerate(common)},
            {t: float(np.log((1 + n) / (1 + frequency[t])) + 1) for t, _ in common},
        )

    def vectors(self, term_lists: list[list[str]]) -> np.ndarray:
        """Unit-length tf-idf rows."""
        vectors = np.zeros((len(term_lists), max(1, len(self.columns))))
        for row, terms in enumerate(term_lists):
            for term, count in Counter(terms).items():
                if term in self.columns:
                    vectors[row, self.columns[term]] = count * self.idf[term]
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors /= np.where(norms == 0, 1, norms)  # in place: a second matrix of 32 MB at 2,000 x 2,000
        return vectors


def _vectors(term_lists: list[list[str]]) -> np.ndarray:
    """Unit-length tf-idf rows over the ``MAX_TERMS`` most common terms."""
    return _Vocabulary.of(term_lists).vectors(term_lists)


def _silhouette(vectors: np.ndarray, labels: np.ndarray) -> float:
    """The mean silhouette on cosine distance (scikit-learn's definition), over a fixed sample."""
    chosen = np.arange(len(labels))[:: max(1, len(labels) // SILHOUETTE_SAMPLE)]
    distances = 1 - vectors[chosen] @ vectors[chosen].T
    own = labels[chosen]
    scores = []
    for i, label in enumerate(own):
        same = own == label
        if same.sum() < 2:
            scores.append(0.0)
            continue
        a = distances[i, same].sum() / (same.sum() - 1)
        b = min(distances[i, own == other].mean() for other in set(own) - {label})
        scores.append((b - a) / max(a, b) if max(a, b) > 0 else 0.0)
    return float(np.mean(scores))


def _kmeans(vectors: np.ndarray, k: int, seed: int) -> np.ndarray:
    """The best of ``RESTARTS`` seeded k-means++ runs (scipy) by within-topic distance."""
    from scipy.cluster.vq import kmeans2

    best: tuple[float, np.ndarray] | None = None
    for restart in range(RESTARTS):
        with warnings.catch_warnings():  # a topic left empty by a restart: another restart wins
            warnings.simplefilter("ignore")
            centres, labels = kmeans2(vectors, k, minit="++", seed=seed + restart)
        inertia = _inertia(vectors, centres, labels)
        if best is None or inertia < best[0] - 1e-12:
            best = (inertia, labels)
    assert best is not None
    return best[1]


def _inertia(vectors: np.ndarray, centres: np.ndarray, labels: np.ndarray) -> float:
    """The summed squared distance of each vector to its centre, ``CHUNK`` rows at a time (the
    difference of the whole sample to its centres is two more copies of it)."""
    return float(
        sum(
            ((vectors[at : at + CHUNK] - centres[labels[at : at + CHUNK]]) ** 2).sum()
            for at in range(0, len(vectors), CHUNK)
        )
    )


def _chosen_k(vectors: np.ndarray, distinct: int, max_topics: int, seed: int) -> np.ndarray:
    """Seeded k-means with k chosen by silhouette between 2 and ``max_topics``."""
    n = len(vectors)
    labels = np.zeros(n, dtype=int)
    best: tuple[float, np.ndarray] | None = None
    for k in range(2, min(max_topics, n - 1, distinct) + 1):  # no more topics than questions differ
        found = _kmeans(vectors, k, seed)
        if len(set(found.tolist())) < 2:
            continue
        score = _silhouette(vectors, found)
        if best is None or score > best[0] + 1e-9:
            best = (score, found)
    return best[1] if best is not None else labels


def _joined(
    term_lists: list[list[str]], fitted: list[int], vocabulary: _Vocabulary, fitted_labels: np.ndarray
) -> tuple[np.ndarray, list[float]]:
    """Every question's topic (the nearest centre of the sample's topics) and its centrality,
    a ``CHUNK`` of questions vectorized at a time."""
    sample = vocabulary.vectors([term_lists[i] for i in fitted])
    topics = sorted(set(fitted_labels.tolist()))
    centres = np.stack([sample[fitted_labels == t].mean(axis=0) for t in topics])
    del sample
    n = len(term_lists)
    labels = np.zeros(n, dtype=int)
    sums = np.zeros_like(centres)
    for start in range(0, n, CHUNK):
        chunk = vocabulary.vectors(term_lists[start : start + CHUNK])
        nearest = np.argmax(chunk @ centres.T, axis=1)
        labels[start : start + CHUNK] = nearest
        np.add.at(sums, nearest, chunk)
    norms = np.linalg.norm(sums, axis=1)
    sums = sums / np.where(norms == 0, 1, norms)[:, None]
    centrality = []
    for start in range(0, n, CHUNK):
        chunk = vocabulary.vectors(term_lists[start : start + CHUNK])
        own = labels[start : start + CHUNK]
        centrality.extend(float(v) for v in np.einsum("ij,ij->i", chunk, sums[own]))
    return labels, centrality


def cluster_questions(
    texts: Sequence[str], languages: Sequence[str], keys: Sequence[str], max_topics: int = 8, seed: int = 0
) -> TopicModel:
    """Topics of the questions (``keys`` name them, for the stable ids): seeded k-means with k
    chosen by silhouette between 2 and ``max_topics``; fewer than 3 questions, or questions
    sharing no term, make one topic. Over ``MAX_CLUSTERED`` questions the topics are found on a
    seeded sample of that many and every question joins the nearest one, so memory stays bounded.
    The same questions and parameters give the same ids."""
    surface: dict[str, str] = {}
    term_lists = [_topic_terms(t, code, surface) for t, code in zip(texts, languages)]
    n = len(texts)
    if n == 0:
        return TopicModel([], {}, [])
    if n > MAX_CLUSTERED:
        fitted = sorted(np.random.default_rng(seed).choice(n, MAX_CLUSTERED, replace=False).tolist())
    else:
        fitted = list(range(n))
    fitted_terms = [term_lists[i] for i in fitted]
    distinct = len({tuple(sorted(set(terms))) for terms in fitted_terms})
    vocabulary = _Vocabulary.of(fitted_terms)
    vectors = vocabulary.vectors(fitted_terms)
    fitted_labels = np.zeros(len(fitted), dtype=int)
    if len(fitted) >= 3 and distinct >= 2 and any(fitted_terms):
        fitted_labels = _chosen_k(vectors, distinct, max_topics, seed)
    if n > MAX_CLUSTERED:
        del vectors
        labels, centrality = _joined(term_lists, fitted, vocabulary, fitted_labels)
    else:
        labels, centrality = fitted_labels, [1.0] * n
    groups: dict[int, list[int]] = {}
    for i, label in enumerate(labels):
        groups.setdefault(int(label), []).append(i)
    assignments = [""] * n
    terms: dict[str, list[str]] = {}
    for members in groups.values():
        topic = _topic_id([keys[i] for i in members])
        counts = Counter(t for i in members for t in set(term_lists[i]))
        terms[topic] = [surface.get(t, t) for t, _ in sorted(counts.items(), key=lambda x: (-x[1], x[0]))[:4]]
        if n <= MAX_CLUSTERED:
            centre = vectors[members].mean(axis=0)
            norm = np.linalg.norm(centre) or 1.0
            for i in members:
                centrality[i] = float(vectors[i] @ centre / norm)
        for i in members:
            assignments[i] = topic
    return TopicModel(assignments, terms, centrality, len(fitted))


def case_outcome(label: str, correct: float | None) -> str:
    """What a case says about the knowledge base: its label, or ``failed`` for a covered case
    answered wrong."""
    if label == COVERED and correct is not None and not pd.isna(correct) and correct < 0.5:
        return FAILED
    return label


def topic_table(cases: pd.DataFrame, max_topics: int = 8, seed: int = 0) -> pd.DataFrame:
    """Topics of the flagged cases (every outcome but ``covered``), ranked by frequency x
    severity (``TOPIC_COLUMNS``); empty when nothing is flagged."""
    outcomes = [case_outcome(label, correct) for label, correct in zip(cases["label"], cases["correct"])]
    flagged = cases.assign(outcome=outcomes)
    flagged = flagged[flagged["outcome"] != COVERED].sort_values("qid").reset_index(drop=True)
    if flagged.empty:
        return pd.DataFrame(columns=TOPIC_COLUMNS)
    model = cluster_questions(
        flagged["question"].tolist(), flagged["language"].tolist(), flagged["qid"].tolist(), max_topics, seed
    )
    flagged = flagged.assign(topic=model.assignments, centrality=model.centrality)
    rows = []
    for topic, group in flagged.groupby("topic", sort=True):
        shares = group["outcome"].value_counts(normalize=True).round(3).to_dict()
        severity = float(group["outcome"].map(SEVERITY).mean())
        dominant = max(shares.items(), key=lambda x: (x[1], SEVERITY[x[0]]))[0]
        words = ", ".join(model.terms[str(topic)])
        representatives = group.sort_values(["centrality", "qid"], ascending=[False, True])["question"].head(
            3
        )
        rows.append(
            {
                "topic": topic,
                "terms": model.terms[str(topic)],
                "size": len(group),
                "severity": round(severity, 3),
                "rank_score": round(len(group) * severity, 3),
                "shares": shares,
                "representatives": representatives.tolist(),
                "finding": f"{len(group)} question(s), {shares[dominant]:.0%} {dominant}: "
                + FINDINGS[dominant].format(terms=words),
                "qids": sorted(group["qid"]),
            }
        )
    table = pd.DataFrame(rows, columns=TOPIC_COLUMNS)
    return table.sort_values(["rank_score", "topic"], ascending=[False, True]).reset_index(drop=True)
