"""What a reader sees of knowledge-base health: headline rates and short tables (the asset's
page, ``rag-eval kb health``), from the stored record."""

from __future__ import annotations

import pandas as pd

from rag_eval_pipeline.metrics.settings import OVERALL
from rag_eval_pipeline.reporting.markdown import to_markdown

RATES = (
    "knowledge_gap_rate",
    "retrieval_miss_rate",
    "outdated_rate",
    "conflict_rate",
    "stale_retrieval_rate",
)
HEALTH_RATES = frozenset({*RATES, "covered_rate"})  # what `rag-eval gate` reads from kb_health


def rate_line(record: dict) -> str:
    rates = record["rates"]
    said = ", ".join(f"{k} {'absent' if rates.get(k) is None else f'{rates[k]:.3f}'}" for k in RATES)
    return f"{record['answer_model']}, as of {record['as_of']}: {said}"


def cases_table(record: dict, limit: int | None = None) -> pd.DataFrame:
    frame = pd.DataFrame(record["cases"])
    if frame.empty:
        return frame
    order = {"knowledge_gap": 0, "outdated": 1, "conflict": 2, "retrieval_miss": 3, "covered": 4}
    frame = frame.sort_values(["label", "qid"], key=lambda c: c.map(order) if c.name == "label" else c)
    shown = frame[["qid", "label", "question", "evidence_passage", "score", "reason"]]
    return shown.head(limit) if limit else shown


def documents_table(record: dict, only_flagged: bool = True) -> pd.DataFrame:
    frame = pd.DataFrame(record["documents"])
    if frame.empty:
        return frame
    if only_flagged:
        frame = frame[(frame["status"] != "current") | frame["ghost"]]
    return frame[["document", "title", "status", "reason", "updated_at", "valid_until", "retrieved", "ghost"]]


def topics_table(record: dict) -> pd.DataFrame:
    frame = pd.DataFrame(record["topics"])
    if frame.empty:
        return frame
    return frame.assign(terms=frame["terms"].map(", ".join))[
        ["topic", "terms", "size", "rank_score", "finding"]
    ]


def _sampled(record: dict) -> str:
    """Says when the topics were found on a sample of the flagged questions (every one then
    joined its nearest topic)."""
    flagged = sum(int(t["size"]) for t in record["topics"])
    fitted = record.get("topics_fitted_on") or flagged
    if fitted >= flagged:
        return ""
    return (
        f"Found on a seeded sample of {fitted:,} of the {flagged:,} flagged questions; "
        "every question then joined its nearest topic.\n\n"
    )


def _absent_or(value) -> str:
    return "absent" if value is None else str(value)


def health_markdown(record: dict) -> str:
    """The health as Markdown: rates, topics, out-of-date documents, the flagged cases."""
    counts = record["counts"]
    parts = [
        rate_line(record),
        f"{counts['non_current_documents']} document(s) not current, {counts['never_retrieved']} never "
        f"retrieved, {counts['ghosts']} ghost(s) (indexed, gone from the source), "
        f"{counts['conflicts']} conflict(s)",
        "## Topics\n\n" + _sampled(record) + to_markdown(topics_table(record)),
        "## Documents not current or gone\n\n" + to_markdown(documents_table(record)),
        "## Cases\n\n" + to_markdown(cases_table(record)),
    ]
    traffic = record.get("traffic")
    if traffic:
        parts.append(
            "## Like real traffic?\n\n"
            + (f"Production questions: {traffic['source']}.\n\n" if traffic.get("source") else "")
            + f"Jensen-Shannon divergence {_absent_or(traffic['divergence'])}; blind spots: "
            + str(sum(1 for t in traffic["topics"] if t["blind_spot"]))
            + "\n\n"
            + to_markdown(pd.DataFrame(traffic["proposals"]))
        )
    if record["problems"]:
        parts.append("## Problems\n\n" + "\n".join(f"- {p}" for p in record["problems"]))
    return "\n\n".join(parts)


HEALTH_JUDGE = "kb_health"  # the "judge" of the health rates in a summary, for `rag-eval gate`


def gate_rows(record: dict, columns: list[str]) -> pd.DataFrame:
    """The health rates as overall rows of a metric summary (judge ``kb_health``, a Wilson 95%
    interval over the cases), so ``rag-eval gate --max knowledge_gap_rate=0.1`` reads them as it
    reads any metric; a rate with no case is left out (not measured, never 0)."""
    from rag_eval_pipeline.metrics.statistics import wilson_interval

    n = int(record["counts"]["cases"])
    rows = []
    for metric, mean in record["rates"].items():
        if mean is None or not n:
            continue
        low, high = wilson_interval(float(mean), n)
        rows.append(
            {
                "judge_id": HEALTH_JUDGE,
                "metric": metric,
                "group": OVERALL,
                "mean": float(mean),
                "ci_low": low,
                "ci_high": high,
                "n": n,
                "n_cases": n,
                "n_failed": 0,
                "n_judge_errors": 0,
                "ci_method": "wilson",
                "note": f"as of {record['as_of']}",
            }
        )
    return pd.DataFrame(rows).reindex(columns=columns)
