"""Questions grouped into topics in any language: tf-idf vectors over each question's terms from
its language's analysis, k-means (scikit-learn) with a fixed seed; each topic with a stable id
(a digest of its members), its size, representative questions, the share of each label and a
one-line finding, ranked by frequency x severity."""

from __future__ import annotations

import hashlib
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


def _topic_id(members: Sequence[str]) -> str:
    return "t-" + hashlib.sha256("\n".join(sorted(members)).encode()).hexdigest()[:8]


def cluster_questions(
    texts: Sequence[str], languages: Sequence[str], keys: Sequence[str], max_topics: int = 8, seed: int = 0
) -> TopicModel:
    """Topics of the questions (``keys`` name them, for the stable ids): k chosen by silhouette
    between 2 and ``max_topics``; fewer than 3 questions, or questions sharing no term, make one
    topic each. The same questions and parameters give the same ids."""
    from sklearn.cluster import KMeans
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics import silhouette_score

    term_lists = [terms_of(t, code) for t, code in zip(texts, languages)]
    n = len(texts)
    if n == 0:
        return TopicModel([], {}, [])
    if n < 3 or not any(term_lists):
        labels = np.zeros(n, dtype=int)
        vectors = None
    else:
        vectorizer = TfidfVectorizer(analyzer=lambda terms: terms, min_df=1)
        vectors = vectorizer.fit_transform(term_lists)
        best: tuple[float, np.ndarray] | None = None
        for k in range(2, min(max_topics, n - 1) + 1):
            found = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(vectors)
            if len(set(found)) < 2:
                continue
            score = float(silhouette_score(vectors, found, metric="cosine"))
            if best is None or score > best[0] + 1e-9:
                best = (score, found)
        labels = best[1] if best is not None else np.zeros(n, dtype=int)
    groups: dict[int, list[int]] = {}
    for i, label in enumerate(labels):
        groups.setdefault(int(label), []).append(i)
    assignments = [""] * n
    terms: dict[str, list[str]] = {}
    centrality = [1.0] * n
    for members in groups.values():
        topic = _topic_id([keys[i] for i in members])
        counts = Counter(t for i in members for t in set(term_lists[i]))
        terms[topic] = [t for t, _ in sorted(counts.items(), key=lambda x: (-x[1], x[0]))[:4]]
        if vectors is not None:
            centre = np.asarray(vectors[members].mean(axis=0)).ravel()
            norm = np.linalg.norm(centre) or 1.0
            for i in members:
                centrality[i] = float(vectors[i].toarray().ravel() @ centre / norm)
        for i in members:
            assignments[i] = topic
    return TopicModel(assignments, terms, centrality)


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
