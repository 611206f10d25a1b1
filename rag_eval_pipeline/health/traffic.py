"""Is the judgement list like real traffic? Both lists' questions clustered together into topics;
the Jensen-Shannon divergence of their topic distributions (base 2: 0 alike, 1 disjoint), the
production topics with no judgement-list case (blind spots) and, for each, the production
questions closest to its centre, to promote into the judgement list."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from rag_eval_pipeline.health.topics import MAX_CLUSTERED, cluster_questions

PROPOSAL_COLUMNS = ["topic", "terms", "question", "production_id", "centrality"]
TRAFFIC_TOPIC_COLUMNS = ["topic", "terms", "judgement_share", "production_share", "blind_spot"]


# the columns of a day's production sample the comparison reads (the rest is never loaded)
SAMPLE_COLUMNS = ["interaction_id", "question"]


@dataclass(frozen=True)
class Traffic:
    divergence: float | None  # None: no production question, or no case (absent, not 0)
    topics: pd.DataFrame  # TRAFFIC_TOPIC_COLUMNS
    proposals: pd.DataFrame  # PROPOSAL_COLUMNS
    source: str = ""  # where the production questions came from: a file, the daily samples


def compare_traffic(
    cases: pd.DataFrame, production: pd.DataFrame, max_topics: int = 8, per_blind_spot: int = 3, seed: int = 0
) -> Traffic:
    """The judgement list's ``cases`` (qid, question, language) against ``production``
    questions (id, question, language)."""
    from scipy.spatial.distance import jensenshannon

    if cases.empty or production.empty:
        return Traffic(
            None, pd.DataFrame(columns=TRAFFIC_TOPIC_COLUMNS), pd.DataFrame(columns=PROPOSAL_COLUMNS)
        )
    keys = [f"case:{q}" for q in cases["qid"]] + [f"production:{p}" for p in production["id"]]
    texts = cases["question"].tolist() + production["question"].tolist()
    languages = cases["language"].tolist() + production["language"].tolist()
    model = cluster_questions(texts, languages, keys, max_topics, seed)
    n = len(cases)
    ours, theirs = Counter(model.assignments[:n]), Counter(model.assignments[n:])
    topics = sorted(set(model.assignments))
    p = [ours[t] / n for t in topics]
    q = [theirs[t] / len(production) for t in topics]
    divergence = float(jensenshannon(p, q, base=2) ** 2)
    rows = [
        {
            "topic": t,
            "terms": model.terms[t],
            "judgement_share": round(ours[t] / n, 3),
            "production_share": round(theirs[t] / len(production), 3),
            "blind_spot": ours[t] == 0 and theirs[t] > 0,
        }
        for t in topics
    ]
    table = pd.DataFrame(rows, columns=TRAFFIC_TOPIC_COLUMNS).sort_values(
        ["blind_spot", "production_share", "topic"], ascending=[False, False, True]
    )
    proposals = []
    blind = set(table.loc[table["blind_spot"], "topic"])
    for i, topic in enumerate(model.assignments[n:]):
        if topic in blind:
            row = production.iloc[i]
            proposals.append(
                {
                    "topic": topic,
                    "terms": model.terms[topic],
                    "question": row["question"],
                    "production_id": str(row["id"]),
                    "centrality": round(model.centrality[n + i], 3),
                }
            )
    chosen = pd.DataFrame(proposals, columns=PROPOSAL_COLUMNS)
    if len(chosen):
        chosen = (
            chosen.sort_values(["topic", "centrality", "production_id"], ascending=[True, False, True])
            .groupby("topic", sort=True)
            .head(per_blind_spot)
            .reset_index(drop=True)
        )
    return Traffic(round(divergence, 4), table.reset_index(drop=True), chosen)


def production_questions(rows: Sequence[dict]) -> pd.DataFrame:
    """Production questions as the comparison reads them (id, question, language), from
    records with a ``question`` (``id`` its position when unsaid, ``language`` detected when unsaid)."""
    from rag_eval_pipeline.language.detect import resolve_languages

    kept = [
        {"id": str(r.get("id", n)), "question": str(r["question"]), "language": r.get("language") or None}
        for n, r in enumerate(rows)
        if isinstance(r, dict) and str(r.get("question") or "").strip()
    ]
    found = resolve_languages([r["question"] for r in kept], None, [r["language"] for r in kept])
    for row, detected in zip(kept, found):
        row["language"] = detected.code
    return pd.DataFrame(kept, columns=["id", "question", "language"])


def sampled_production(
    samples: Mapping[str, pd.DataFrame], limit: int = MAX_CLUSTERED
) -> tuple[pd.DataFrame, str]:
    """The production questions of the daily samples the pipeline holds (day -> its
    ``production_sample``), the newest days first until ``limit`` questions (the topics are
    fitted on at most that many), each keyed by its interaction id, and a line saying which
    days (none held: no question, and the line says why, so the comparison is absent)."""
    days = sorted((d for d, frame in samples.items() if frame is not None and len(frame)), reverse=True)
    if not days:
        empty = pd.DataFrame(columns=["id", "question", "language"])
        return empty, "none: no production day sampled yet (`rag-eval production run` samples them)"
    rows: list[dict] = []
    used = []
    for day in days:
        if len(rows) >= limit:
            break
        frame = samples[day]
        rows += [{"id": str(i), "question": q} for i, q in zip(frame["interaction_id"], frame["question"])][
            : limit - len(rows)
        ]
        used.append(day)
    questions = production_questions(rows)
    span = used[0] if len(used) == 1 else f"{used[-1]} to {used[0]}"
    held = f" of the {len(days)} held" if len(used) < len(days) else ""
    return (
        questions,
        f"the daily production samples of {span} ({len(used)} day(s){held}, {len(questions)} questions)",
    )
