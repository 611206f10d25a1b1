"""What a generation run hands over: the kept cases as a judgement list of this project's format
(each with its reference answer, source passages as ``relevant_ids``, type and provenance), the
rejected ones with their reasons, what was asked against what survived, and a manifest with the
list's version (the content hash a CI gate pins)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from rag_eval_pipeline.common.files import write_atomically
from rag_eval_pipeline.data.judgement_file import rows_version
from rag_eval_pipeline.generation.plan import Plan

UNKNOWN = "unknown"


def judgement_rows(generated: pd.DataFrame) -> list[dict]:
    """The kept cases as judgement-list rows: an unanswerable question is ``answerable: false``."""
    rows = []
    for case in generated[generated["kept"]].to_dict(orient="records"):
        answerable = case["type"] != "unanswerable"
        rows.append(
            {
                "id": case["case_id"],
                "question": case["question"],
                "answer": case["answer"] if answerable else UNKNOWN,
                "answerable": answerable,
                # the passages it was written from; an unanswerable one has no relevant passage
                "relevant_ids": list(case["source_ids"]) if answerable else [],
                **({"language": case["language"]} if case.get("language") else {}),
                "tags": [case["type"], "generated"],
                "generated": {
                    "type": case["type"],
                    "sources": list(case["source_titles"]),
                    "bridge": case["bridge"] or None,
                    "generator": case["generator"],
                    "judge": case["judge"],
                    "prompt_version": case["prompt_version"],
                },
            }
        )
    return rows


def rejected_rows(generated: pd.DataFrame) -> list[dict]:
    """Every rejected case with its reason and what the checks saw."""
    return [
        {
            "id": case["case_id"],
            "type": case["type"],
            "question": case["question"],
            "answer": case["answer"],
            "reason": case["reason"],
            "sources": list(case["source_titles"]),
            "checks": json.loads(case["checks"] or "{}"),
        }
        for case in generated[~generated["kept"]].to_dict(orient="records")
    ]


def reason_kind(reason: str) -> str:
    """A reason without its particulars, for counting: 'single-hop: answerable from X alone' ->
    'single-hop'."""
    for cut in (" (", ": ", " of "):
        reason = reason.split(cut, 1)[0]
    return reason


def _by_reason(cases: pd.DataFrame) -> str:
    counts = cases.loc[~cases["kept"], "reason"].map(reason_kind).value_counts()
    return "; ".join(f"{kind} {count}" for kind, count in counts.items()) or "–"


def _row(label: str, asked: int, cases: pd.DataFrame) -> dict:
    kept = int(cases["kept"].sum())
    return {
        "type": label,
        "asked": asked,
        "planned": len(cases),
        "kept": kept,
        "rejected": len(cases) - kept,
        "by_reason": _by_reason(cases),
    }


def survival(generated: pd.DataFrame, asked: Mapping[str, int]) -> pd.DataFrame:
    """Per type and in all: asked, planned (source passages found), kept, rejected by reason."""
    rows = [_row(t, count, generated[generated["type"] == t]) for t, count in asked.items()]
    rows.append(_row("all", sum(asked.values()), generated))
    return pd.DataFrame(rows)


def asked_by_type(plan: Plan) -> dict[str, int]:
    return {t.value: count for t, count in plan.asked.items()}


def document_spread(generated: pd.DataFrame) -> tuple[int, float]:
    """How many documents the kept cases come from, and the largest share one document holds."""
    titles = pd.Series(
        [t for ts in generated.loc[generated["kept"], "source_titles"] for t in ts], dtype=object
    )
    if titles.empty:
        return 0, 0.0
    return int(titles.nunique()), float(titles.value_counts().max() / int(generated["kept"].sum()))


def write_outputs(
    generated: pd.DataFrame,
    asked: Mapping[str, int],
    notes: Sequence[str],
    out: Path,
    documents: str,
    calls: int,
    cache_hits: int,
    cost: float | None,
) -> dict:
    """The list, its rejected cases beside it (``<name>.rejected.jsonl``) and its manifest
    (``<name>.manifest.json``), each whole or not at all; the manifest's content."""
    rows = judgement_rows(generated)
    rejected = rejected_rows(generated)
    version = rows_version(rows)
    documents_used, largest_share = document_spread(generated)
    manifest = {
        "version": version,
        "cases": len(rows),
        "asked": int(sum(asked.values())),
        "rejected": len(rejected),
        "survival": survival(generated, asked).to_dict(orient="records"),
        "documents": documents,
        "documents_used": documents_used,
        "largest_document_share": round(largest_share, 3),
        "generator": str(generated["generator"].iloc[0]) if len(generated) else None,
        "judge": str(generated["judge"].iloc[0]) if len(generated) else None,
        "prompt_version": str(generated["prompt_version"].iloc[0]) if len(generated) else None,
        "api_calls": calls,
        "cache_hits": cache_hits,
        "cost_usd": cost,
        "notes": list(notes),
    }

    def jsonl(items: Sequence[dict]) -> str:
        return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)

    write_atomically(out, lambda tmp: tmp.write_text(jsonl(rows), encoding="utf-8"))
    write_atomically(
        out.with_name(f"{out.stem}.rejected.jsonl"),
        lambda tmp: tmp.write_text(jsonl(rejected), encoding="utf-8"),
    )
    write_atomically(
        out.with_name(f"{out.stem}.manifest.json"),
        lambda tmp: tmp.write_text(json.dumps(manifest, indent=2, default=str), encoding="utf-8"),
    )
    return manifest
