"""The lineage of one score, and the worst cases of a model: plain text and tables for the CLI."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pandas as pd

from rag_eval_pipeline.answering.spec import AGENT_RETRIEVAL
from rag_eval_pipeline.judges.claims import CLAIMS_KEY, claims_of
from rag_eval_pipeline.metrics.schema import answer_keys, case_key, metric_columns, per_answer, unstable_cases
from rag_eval_pipeline.metrics.stability import has_rescores
from rag_eval_pipeline.reporting.images import image_lines
from rag_eval_pipeline.retrieval.base import IndexManifest


class CaseNotFoundError(KeyError):
    pass


def _text(value: object) -> str:
    """A stored label, a dash where there is none (None, or NaN after a parquet round trip)."""
    return "–" if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return "–" if pd.isna(value) else f"{value:.3f}"
    return str(value)


def explain_case(
    qid: str,
    answer_model: str,
    candidate_answers: pd.DataFrame,
    judge_scores: pd.DataFrame,
    judgement_list: pd.DataFrame,
    index_manifest: IndexManifest,
    run_ids: Mapping[str, str],
    images: pd.DataFrame | None = None,
) -> str:
    """Everything that produced this case's scores, from the question to the Dagster runs
    (``images``: the image catalog, for each image's sha256)."""
    matches = candidate_answers[candidate_answers["qid"] == qid]
    if matches.empty:
        raise CaseNotFoundError(f"question {qid} has no candidate answer for {answer_model}")
    case = matches.iloc[0]
    truth = _truth_of(qid, case, judgement_list)
    gold = set(truth["gold_titles"])
    lines = [
        f"question {qid} ({truth['type']}, {truth['level']}{_language(truth)})",
        f"  {truth['question']}",
        f"ground truth: {truth['answer']}",
        f"gold supporting titles: {', '.join(truth['gold_titles'])}",
        "",
        _contexts_heading(case, index_manifest),
    ]
    lines += _retrieved_lines(case, gold)
    lines += _citation_lines(case, gold)
    lines += image_lines(case, truth, images)  # gold and predicted boxes with their IoU (reporting/images.py)
    lines += [
        "",
        f"answer by {answer_model} (model {_text(case['model_id'])}, "
        f"prompt {_text(case['prompt_version'])}): "
        f"{case['answer'] if case['status'] == 'ok' else 'FAILED: ' + str(case['error'])}",
        "",
        "scores:",
    ]
    lines += _score_lines(qid, case, judge_scores)
    lines += ["", "lineage (the Dagster run of each step):"]
    lines += [f"  {asset}: run {run_id}" for asset, run_id in run_ids.items()]
    return "\n".join(lines)


def _truth_of(qid: str, case: pd.Series, judgement_list: pd.DataFrame) -> pd.Series:
    """The case's row of the judgement list, or a placeholder for an older run's case that the
    current sample no longer holds."""
    known = judgement_list[judgement_list["qid"] == qid]
    if not known.empty:
        return known.iloc[0]
    return pd.Series(
        {
            "type": "?",
            "level": "?",
            "question": case["question"],
            "answer": "(not in the current judgement list)",
            "gold_titles": [],
        }
    )


def _retrieved_lines(case: pd.Series, gold: set[str]) -> list[str]:
    """Each retrieved context by rank, marked when gold, then the gold titles not retrieved."""
    lines: list[str] = []
    matched = case["context_match"] if "context_match" in case else [None] * len(case["retrieved_titles"])
    for rank, (title, score, text, how) in enumerate(
        zip(case["retrieved_titles"], case["retrieved_scores"], case["retrieved_passages"], matched), start=1
    ):
        mark = "GOLD" if title in gold else "    "
        snippet = text if len(text) <= 160 else text[:157] + "..."
        scored = f"score {score:.3f}" if not pd.isna(score) else f"matched by {how}"
        lines.append(f"  {rank}. [{mark}] {title or '(no knowledge-base passage)'}  ({scored})")
        lines.append(f"       {snippet}")
    missing = gold - set(case["retrieved_titles"])
    if missing:
        lines.append(f"  not retrieved: {', '.join(sorted(missing))}")
    return lines


def _score_lines(qid: str, case: pd.Series, judge_scores: pd.DataFrame) -> list[str]:
    """Each judge's scores for the case, with its diagnosis, rationales, error and notes."""
    lines: list[str] = []
    metrics = metric_columns(judge_scores)
    blind = not bool(case.get("contexts_known", True))
    for row in judge_scores[judge_scores["qid"] == qid].to_dict(orient="records"):
        values = ", ".join(f"{m} {_fmt(row[m])}" for m in metrics if not pd.isna(row[m]))
        diagnosis = row.get("diagnosis")
        if isinstance(diagnosis, str):
            said = f"; diagnosis {diagnosis}"
        elif blind and row["status"] == "ok" and "correctness" in row and not pd.isna(row["correctness"]):
            said = "; no diagnosis: the agent returns no contexts, so retrieval cannot be told from reasoning"
        else:
            said = ""
        lines.append(f"  {row['judge_id']} (prompt {_text(row['prompt_version'])}): {row['status']}{said}")
        if values:
            lines.append(f"    {values}")
        if isinstance(row.get("rationales"), str):
            for axis, reason in json.loads(row["rationales"]).items():
                lines += claim_lines(row["rationales"]) if axis == CLAIMS_KEY else [f"    {axis}: {reason}"]
        if isinstance(row.get("error"), str) and row["status"] != "ok":
            lines.append(f"    error: {row['error']}")
        if isinstance(row.get("notes"), str):  # what a judge could not read ("correctness absent: ...")
            lines.append(f"    note: {row['notes']}")
    return lines


def _language(case: pd.Series) -> str:
    """ ", Chinese (zh, detected)": the language the case was analysed and judged in."""
    code = case.get("language")
    if not isinstance(code, str):
        return ""
    from rag_eval_pipeline.language.table import UnknownLanguageError, language

    try:
        name = language(code).name
    except UnknownLanguageError:
        name = code
    how = case.get("language_source")
    return f", {name} ({code}{', ' + how if isinstance(how, str) else ''})"


def claim_lines(rationales: str) -> list[str]:
    """Each claim of the answer on a line of its own, an unsupported one marked first."""
    lines = []
    for claim in claims_of(rationales):
        mark = f"supported by {claim['supporting_passage']}" if claim["supported"] else "UNSUPPORTED"
        cited = claim.get("cited_passage")
        holds = (
            ""
            if not cited
            else f"; cites {cited}: {'holds' if claim.get('citation_supports') else 'DOES NOT HOLD'}"
        )
        lines.append(f"    claim [{mark}{holds}]: {claim['claim']}")
    return lines or ["    claims: none (the answer claims nothing)"]


def _citation_lines(case: pd.Series, gold: set[str]) -> list[str]:
    """What the answer cites, each source with the passage it names and whether it is gold."""
    cited, titles = case.get("citations"), case.get("cited_titles")
    if cited is None or titles is None or (isinstance(titles, float) and pd.isna(titles)):
        return []
    if len(titles) == 0:
        return ["cites: nothing (citation metrics absent)"]
    shown = [
        f"{c} -> {t or '(no known passage)'}{' [GOLD]' if t in gold else ''}" for c, t in zip(cited, titles)
    ]
    return [f"cites: {'; '.join(shown)}"]


def _contexts_heading(case: pd.Series, index_manifest: IndexManifest) -> str:
    if case["retrieval_mode"] == AGENT_RETRIEVAL:
        if not bool(case.get("contexts_known", True)):
            return "contexts: the agent returns none (what needs them is absent)"
        return (
            f"contexts the agent returned, matched to index {index_manifest.backend} "
            f"version {index_manifest.version}:"
        )
    return (
        f"retrieved ({case['retrieval_mode']}, k={case['top_k']}) from index {index_manifest.backend} "
        f"version {index_manifest.version}:"
    )


def worst_cases(
    judge_scores: pd.DataFrame,
    candidate_answers: pd.DataFrame,
    judgement_list: pd.DataFrame,
    metric: str,
    judge_id: str | None = None,
    n: int = 10,
) -> pd.DataFrame:
    """The ``n`` lowest-scoring cases on ``metric`` (of ``judge_id``, or the first judge that has
    the metric), with their diagnosis, question, answer and ground truth; ``unstable`` names what
    flipped between a judge's re-scores of the case (where any judge was asked several times)."""
    unstable, rescored = unstable_cases(judge_scores), has_rescores(judge_scores)
    judge_scores = per_answer(judge_scores)  # a judge asked K times: its median
    if metric not in judge_scores:
        raise KeyError(f"no metric '{metric}'; known: {', '.join(metric_columns(judge_scores))}")
    scored = judge_scores[judge_scores[metric].notna()]
    if judge_id is None:
        if scored.empty:
            raise KeyError(f"no judge measured '{metric}'")
        judge_id = str(scored["judge_id"].iloc[0])
    if judge_id not in set(judge_scores["judge_id"]):
        known = ", ".join(sorted(set(judge_scores["judge_id"])))
        raise KeyError(f"judge '{judge_id}' did not score this model; judges that did: {known}")
    scored = scored[scored["judge_id"] == judge_id]
    keys = answer_keys(candidate_answers) if "repeat" in scored else ["qid"]
    joined = scored.merge(candidate_answers[[*keys, "question", "answer"]], on=keys).merge(
        judgement_list[["qid", "answer"]].rename(columns={"answer": "ground_truth"}), on="qid"
    )
    joined = joined.sort_values([metric, "qid"], kind="stable").head(n)
    joined["unstable"] = [
        ", ".join(unstable.get(case_key(row), [])) for row in joined.to_dict(orient="records")
    ]
    flips = ["unstable"] if rescored else []  # a column only where a judge was asked several times
    columns = ["qid", "judge_id", metric, "diagnosis", *flips, "question", "answer", "ground_truth"]
    return joined[columns].reset_index(drop=True)
