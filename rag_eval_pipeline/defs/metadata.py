"""What each asset reports in the UI, shaped from its output by pure functions, so asset bodies
stay a few lines of loading, calling and returning."""

from pathlib import Path
from typing import Any

import dagster as dg
import pandas as pd

from rag_eval_pipeline.answering.spec import AGENT_RETRIEVAL, AnswerSpec
from rag_eval_pipeline.common.text import clip_at_word
from rag_eval_pipeline.judges.claims import CLAIM_METRICS, unsupported_claims
from rag_eval_pipeline.llm.services import LLMServices
from rag_eval_pipeline.metrics.budgets import BUDGET
from rag_eval_pipeline.metrics.grounding import IMAGE_METRICS
from rag_eval_pipeline.metrics.scales import item_verdict_counts
from rag_eval_pipeline.metrics.schema import USAGE, case_key, per_answer, unstable_cases
from rag_eval_pipeline.metrics.settings import ASR_PREFIX, OVERALL, PROBE_JUDGE
from rag_eval_pipeline.metrics.stability import JUDGE_REPEAT, has_rescores
from rag_eval_pipeline.metrics.summary import CORRECTNESS_ABSENT, absent_part, scored_of
from rag_eval_pipeline.reporting.charts import bar_chart_svg, svg_markdown
from rag_eval_pipeline.reporting.images import (
    OVERLAY_CASES,
    case_image_label,
    gold_images_read,
    grounding_rows,
    has_image_labels,
    overlay_markdown,
)
from rag_eval_pipeline.reporting.knowledge_health import shown_label
from rag_eval_pipeline.reporting.markdown import markdown_list, markdown_text, to_markdown, with_intervals
from rag_eval_pipeline.reporting.report import HEADLINE_METRICS
from rag_eval_pipeline.retrieval.base import IndexManifest


def index_metadata(manifest: IndexManifest) -> dict[str, Any]:
    details = manifest.details
    return {
        "backend": manifest.backend,
        "retrieval_modes": ", ".join(manifest.modes),
        "embedding_model": str(details.get("embedding_model")),
        "index_version": manifest.version,
        "documents": manifest.documents,
        "index_size_bytes": int(details.get("size_bytes", 0)),
        "semantic_field": str(details.get("semantic", details.get("embedding_model"))),
        # embedded: exact or hnsw; Elasticsearch's kNN is HNSW whenever it holds vectors
        "vector_search": str(details.get("vector_search") or _cluster_vector_search(details)),
        "build_seconds": manifest.build_seconds,
        "location": dg.MetadataValue.path(manifest.location),
        **({"languages": dg.MetadataValue.json(details["languages"])} if details.get("languages") else {}),
        **(
            {"analysis_by_language": dg.MetadataValue.json(details["analyzers"])}
            if details.get("analyzers")
            else {}
        ),
        **({"no_vectors": str(details["no_vectors"])} if details.get("no_vectors") else {}),
    }


def _cluster_vector_search(details: dict[str, Any]) -> str:
    return "none" if details.get("semantic", "none") == "none" else "elasticsearch knn (hnsw)"


def answers_metadata(
    spec: AnswerSpec, answers: pd.DataFrame, services: LLMServices, manifest: IndexManifest, seconds: float
) -> dict[str, Any]:
    ok = answers["status"].eq("ok")
    return {
        "answer_config": spec.answer_config,
        "provider": spec.provider,
        "model_id": spec.model_id,
        "prompt_version": spec.prompt_version,
        "calibration": spec.calibration.name.lower(),
        "cases": len(answers),
        "failed_cases": int((~ok).sum()),
        "api_calls": services.api_calls,
        "cache_hits": services.cache_hits,
        "llm_limit": services.shared_limits,
        "cost_usd": float(answers["cost_usd"].sum()),
        "index_version": manifest.version,
        "seconds": round(seconds, 3),
        **(_agent_metadata(answers) if spec.is_agent else {}),
    }


def _agent_metadata(answers: pd.DataFrame) -> dict[str, Any]:
    """How the agent's contexts were matched to the knowledge base, and its repeats."""
    matched = pd.Series([how for hows in answers["context_match"] for how in hows], dtype=object)
    counts = matched.value_counts()
    return {
        "contexts_returned": int(len(matched)),
        "context_matches": ", ".join(f"{how} {int(n)}" for how, n in counts.items()) or "none returned",
        "cases_without_contexts": int((~answers["contexts_known"].astype(bool)).sum()),
        "repeats": int(answers["repeat"].max()) + 1 if len(answers) else 0,
    }


def scores_metadata(judge_ids: list[str], scores: pd.DataFrame, services: LLMServices) -> dict[str, Any]:
    return {
        "judges": ", ".join(judge_ids),
        "rows": len(scores),
        "answer_failed": int((scores["status"] == "answer_failed").sum()),
        "judge_errors": int((scores["status"] == "judge_error").sum()),
        "api_calls": services.api_calls,
        "cache_hits": services.cache_hits,
        "llm_limit": services.shared_limits,
        "cost_usd": float(scores["cost_usd"].sum()),
        **_item_verdicts(scores),
    }


def _item_verdicts(scores: pd.DataFrame) -> dict[str, Any]:
    """The per-item verdicts of metrics that aggregate them (a vision judge's per image), counted
    by verdict: what a case's mean of 0.75 was made of."""
    counts = item_verdict_counts(scores)
    return {"item_verdicts": dg.MetadataValue.md(to_markdown(counts))} if len(counts) else {}


WORST_CASES = 10
# what one worst case's page shows of each text (the whole case is one `rag-eval explain` away): a
# page of ten cases with 10 passages each must render in a moment, whatever an answer's length
CASE_CHARS = 600
NOT_LISTED = "(not in the current judgement list)"
PASSAGE_CHARS = 400


# the usage table's short headers: the table fits Dagster's pane at 1,440 px beside long keys
USAGE_HEADERS = {
    "judge_id": "by",
    "input_tokens": "input",
    "output_tokens": "output",
    "cache_read_tokens": "cache read",
    "cache_write_tokens": "cache write",
    "cost_usd": "USD",
}


def _usage_table(usage: pd.DataFrame) -> pd.DataFrame:
    """Tokens as whole numbers, dollars as dollars (the markdown renders floats to 3 places),
    under short headers (tokens, then the cost)."""
    table = usage.pivot(index="judge_id", columns="metric", values="total").reset_index()
    for column in [c for c in table.columns if c.endswith("_tokens")]:
        table[column] = table[column].map(lambda v: "–" if pd.isna(v) else f"{int(v):,}")
    unused = [c for c in table.columns if c.startswith("cache_") and table[c].isin(["0", "–"]).all()]
    table = table.drop(columns=unused)  # no cache column where no call read or wrote one
    order = [c for c in USAGE_HEADERS if c in table.columns]
    table = table[order + [c for c in table.columns if c not in order]]
    return table.rename(columns=USAGE_HEADERS)


def _interval(low: object, high: object) -> str:
    """An interval as one cell to two places, "0.42–0.61" ("–" when there is none)."""
    low, high = _number(low), _number(high)
    return "–" if low is None or high is None else f"{low:.2f}–{high:.2f}"


def _summary_table(overall: pd.DataFrame) -> pd.DataFrame:
    """The overall means, narrow enough for Dagster's pane at 1,440 px: a metric, its mean, its
    95% interval as one cell, its cases; the judge only where several judged, the failures and
    notes only where any (every column of every group is the asset's stored file and the report)."""
    judges = overall["judge_id"].nunique() > 1
    table = pd.DataFrame(
        {
            **({"judge": overall["judge_id"]} if judges else {}),
            "metric": overall["metric"],
            "mean": overall["mean"],
            "95% CI": [_interval(lo, hi) for lo, hi in zip(overall["ci_low"], overall["ci_high"])],
        }
    )
    if overall.loc[overall["mean"].notna(), "n"].nunique() > 1:  # else one count, the `cases` entry
        table["n"] = overall["n"]
    failed = overall["n_failed"].fillna(0) + overall["n_judge_errors"].fillna(0)
    if failed.gt(0).any():
        table["failed"] = failed.astype(int)
    if overall["note"].fillna("").astype(str).str.strip().ne("").any():
        table["note"] = overall["note"].fillna("")
    return table


# the compact row's text columns: a case is one or two lines in Dagster's pane, no sideways scroll
QUESTION_CHARS = 48
CASE_ID_CHARS = 8  # '5a71663…': the full id is the case's own entry (its `rag-eval explain`)


def worst_cases_key(partition: str) -> str:
    """The worst cases' table, named by its model: an asset's overview shows whichever
    partition ran last, and says which."""
    return f"worst cases of {partition}"


def worst_case_key(partition: str, rank: int, qid: str) -> str:
    """The case's entry, named by the id as its table row shows it (cut short: a full HotpotQA
    id widens the pane's key column past 1,440 px); the entry holds the full id."""
    return f"{partition} worst case {rank}: {_clip(qid, CASE_ID_CHARS)}"


def worst_cases_table(
    partition: str,
    scores: pd.DataFrame,
    answers: pd.DataFrame,
    cases: pd.DataFrame,
    run_id: str | None = None,
) -> dg.TableMetadataValue | None:
    """The lowest-correctness cases of this partition, worst first, one compact row each (the
    case id cut short, correctness, diagnosis, gold passages read of those there are, the
    question cut short): narrow enough for the asset page's panes at 1,440 px (the rank is the
    case's entry's name). Each case in full (answer, truth, every judge's scores, the
    passages read, the index and the run) is its detail block, one click away
    (``worst_case_markdown``); where a judge was asked several times, ``unstable`` names what
    flipped between its re-scores."""
    unstable = unstable_cases(scores) if has_rescores(scores) else None
    worst = _worst(per_answer(scores))
    if worst.empty:
        return None
    answer_of, truth = _answers_by_case(answers), cases.set_index("qid")
    labelled = has_image_labels(cases)  # an image case's gold: its images retrieved (reporting/images.py)
    records = []
    for row in worst.itertuples():
        gold = set(truth.loc[row.qid, "gold_titles"]) if row.qid in truth.index else set()
        answer = answer_of(row)
        retrieved = list(answer["retrieved_titles"])
        # an image case's gold is its images (it has no gold titles): how many were retrieved
        known = labelled and row.qid in truth.index
        images_read = gold_images_read(answer, truth.loc[row.qid]) if known else None
        records.append(
            dg.TableRecord(
                {
                    "case": _clip(str(row.qid), CASE_ID_CHARS),
                    "correct": float(row.correctness),
                    "diagnosis": str(row.diagnosis),
                    "gold": f"{len(gold & set(retrieved))}/{len(gold)}" if gold else images_read or "–",
                    **(
                        {"unstable": ", ".join(unstable.get(case_key(row._asdict()), [])) or "–"}
                        if unstable is not None
                        else {}
                    ),
                    "question": _clip(_question(row.qid, answer, truth), QUESTION_CHARS),
                }
            )
        )
    columns = [dg.TableColumn(name, "float" if name == "correct" else "string") for name in records[0].data]
    return dg.MetadataValue.table(records, dg.TableSchema(columns))


def worst_case_markdown(
    partition: str,
    scores: pd.DataFrame,
    answers: pd.DataFrame,
    cases: pd.DataFrame,
    run_id: str | None = None,
    image_folder: str | Path | None = None,
) -> dict[str, dg.MarkdownMetadataValue]:
    """Each worst case in full, as its own metadata entry (one click in the UI): the question,
    answer, truth, every judge's scores and rationales, the passages the model read (gold
    marked) and the gold titles it missed, the index and run it came from, and the command that
    explains it. The first ``OVERLAY_CASES`` image cases also show their image with the gold and
    best predicted boxes drawn (from ``image_folder``), so the metadata stays small."""
    unstable = unstable_cases(scores)
    worst = _worst(per_answer(scores))
    answer_of, truth = _answers_by_case(answers), cases.set_index("qid")
    unsupported = unsupported_claims(scores)
    given = _metrics_given(scores, set(worst["qid"]))
    entries, overlays = {}, 0
    for rank, row in enumerate(worst.itertuples(), start=1):
        known = row.qid in truth.index
        gold = set(truth.loc[row.qid, "gold_titles"]) if known else set()
        answer = answer_of(row)
        judged = scores[scores["qid"] == row.qid]
        metrics = given.get(row.qid, [])
        repeats = ["repeat"] if "repeat" in judged and judged["repeat"].gt(0).any() else []
        repeats += [JUDGE_REPEAT] if has_rescores(judged) else []  # each re-score, as it came
        missed = ", ".join(sorted(gold - set(answer["retrieved_titles"]))) or "none"
        lines = [
            f"**{markdown_text(_question(row.qid, answer, truth), CASE_CHARS)}**",
            "",
            f"- case: {markdown_text(str(row.qid))}",
            f"- answer: {markdown_text(answer['answer'], CASE_CHARS)}",
            f"- truth: {markdown_text(truth.loc[row.qid, 'answer'] if known else NOT_LISTED, CASE_CHARS)}",
            f"- diagnosis: {row.diagnosis}",
            *([f"- language: {truth.loc[row.qid, 'language']}"] if known and "language" in truth else []),
            *[
                f"- unstable: {markdown_text(', '.join(flipped))} (the re-scores disagree)"
                for flipped in [unstable.get(case_key(row._asdict()))]
                if flipped
            ],
            f"- missed gold: {markdown_text(missed, CASE_CHARS)}",
            *(
                [f"- gold image: {markdown_text(case_image_label(answer, truth.loc[row.qid]))}"]
                if known and has_image_labels(cases)
                else []
            ),
            f"- index: {str(answer.get('kb_version', '–'))[:12]}; run: {(run_id or '–')[:8]}",
            "",
            to_markdown(_judges_by_metric(judged, repeats, metrics)),
            *[
                f"- unsupported claim: {markdown_text(claim, CASE_CHARS)}"
                for claim in unsupported.get((row.qid, int(getattr(row, "repeat", 0) or 0)), [])
            ],
            "",
            "**Passages the model read**"
            if answer.get("retrieval_mode") != AGENT_RETRIEVAL
            else "**Contexts the agent returned**",
        ]
        for n, (title, text) in enumerate(
            zip(answer["retrieved_titles"], answer["retrieved_passages"]), start=1
        ):
            gold_mark = " (gold)" if title in gold else ""
            lines += ["", f"{n}. **{markdown_text(title)}**{gold_mark}: {markdown_text(text, PASSAGE_CHARS)}"]
        grounding = grounding_rows(answer, truth.loc[row.qid] if known else None)
        if len(grounding):  # an image case: each gold box, the predicted box nearest it, their IoU
            lines += ["", "**Grounding** (found: IoU >= 0.5)", "", to_markdown(grounding)]
            if overlays < OVERLAY_CASES:  # the worst few drawn: each a few kilobytes of metadata
                drawn = overlay_markdown(answer, truth.loc[row.qid], image_folder)
                lines += drawn
                overlays += bool(drawn)
        explain = f"rag-eval explain {row.qid} --model {partition}" + (f" --run {run_id}" if run_id else "")
        lines += ["", f"`{explain}`"]
        entries[worst_case_key(partition, rank, row.qid)] = dg.MetadataValue.md("\n".join(lines))
    return entries


def _judges_by_metric(judged: pd.DataFrame, repeats: list[str], metrics: list[str]) -> pd.DataFrame:
    """A case's judges side by side, a row per metric (status first): a few narrow columns
    whatever the number of metrics (an image case has ten), so the case's entry fits the asset
    page's pane at 1,440 px, where a column per metric made it 1,057 px in an 851 px pane."""
    names = [
        " ".join([str(row["judge_id"]), *(f"{column} {row[column]}" for column in repeats)])
        for _, row in judged.iterrows()
    ]
    rows = judged[["status", *metrics]].T
    rows.columns = names
    return rows.rename_axis("metric").reset_index()


def _metrics_given(scores: pd.DataFrame, qids: set[str]) -> dict[str, list[str]]:
    """The metrics some judge gave each of these cases (a claims judge's precision and recall
    too), in the table's column order: read once for the cases shown, not column by column."""
    columns = [c for c in scores.columns if c in _CASE_METRICS]
    shown = scores[scores["qid"].isin(qids)]
    flags = shown[columns].notna().groupby(shown["qid"].to_numpy()).any()
    return {
        str(qid): [c for c, some in zip(columns, row) if some]
        for qid, row in zip(flags.index, flags.to_numpy())
    }


def _worst(scores: pd.DataFrame) -> pd.DataFrame:
    if "correctness" not in scores:
        return scores[:0]
    scored = scores[scores["status"] == "ok"].dropna(subset=["correctness"])
    return scored.sort_values(["correctness", "qid"], kind="stable").drop_duplicates("qid").head(WORST_CASES)


def _question(qid: str, answer: pd.Series, truth: pd.DataFrame) -> str:
    return str(truth.loc[qid, "question"] if qid in truth.index else answer["question"])


def _answers_by_case(answers: pd.DataFrame):
    """The answer a score row judged: by question and repeat (an agent asked several times)."""
    repeats = answers["repeat"] if "repeat" in answers else [0] * len(answers)
    # positions, each row made when asked: a table shows a few cases of hundreds
    position = {(qid, int(repeat)): n for n, (qid, repeat) in enumerate(zip(answers["qid"], repeats))}
    return lambda score: answers.iloc[position[(score.qid, int(getattr(score, "repeat", 0) or 0))]]


_CASE_METRICS = (
    "correctness",
    "faithfulness",
    "faithfulness_lexical",
    "context_relevance",
    "context_precision",
    "context_recall",
    "exact_match",
    "f1",
    "answer_relevancy",
    *CLAIM_METRICS,
    *IMAGE_METRICS,  # the grounding judge's: the case's images and boxes
)


def _clip(text: str, limit: int) -> str:
    return clip_at_word(text, limit)


def _number(value: object) -> float | None:
    return None if value is None or pd.isna(value) else float(value)  # type: ignore[arg-type]


def _rounded(value: object, digits: int = 3) -> float | None:
    number = _number(value)
    return None if number is None else round(number, digits)


def signed(value: object, digits: int = 2) -> str:
    """A difference as a signed decimal, ``+1.00``, ``-0.25``, ``0.00`` (the UI shows a float
    column's 1.0 as "1", which reads as a count); absent as ``–``."""
    number = _number(value)
    if number is None:
        return "–"
    text = f"{number:+.{digits}f}"
    return text[1:] if float(text) == 0 else text


def verdicts_table(comparisons: pd.DataFrame) -> dg.TableMetadataValue:
    """Every pair's verdict as a table the asset page shows as it opens, narrow enough for its
    pane at 1,440 px: the metric in words, the difference as a signed decimal and the
    Holm-adjusted p (`p adj`) rounded, the judge only where several judged, the cases (`n`)
    only where pairs differ in them (the full comparison, intervals and tests included, is the Markdown entry
    one click away): decided pairs first."""
    rows = (
        comparisons.assign(_undecided=comparisons["verdict"] == "no difference shown").sort_values(
            ["_undecided", "p_adjusted"], kind="stable"
        )
        if len(comparisons)
        else comparisons
    )
    judges = len(comparisons) and comparisons["judge_id"].nunique() > 1
    counts = len(comparisons) and comparisons["n"].nunique() > 1  # else the entry `cases` says it
    names = ("pair", *["judge"][: bool(judges)], "metric", *["n"][: bool(counts)], "diff", "p adj", "verdict")
    records = [
        dg.TableRecord(
            {
                "pair": f"{row['model_a']} vs {row['model_b']}",
                **({"judge": str(row["judge_id"])} if judges else {}),
                # read as words ("over abstention rate"), which wrap: an underscored name cannot
                "metric": str(row["metric"]).replace("_", " "),
                **({"n": int(row["n"])} if counts else {}),
                "diff": signed(row["difference"]),
                "p adj": _rounded(row["p_adjusted"]),
                "verdict": str(row["verdict"]),
            }
        )
        for _, row in rows.iterrows()
    ]
    columns = [
        dg.TableColumn(name, "float" if name == "p adj" else "int" if name == "n" else "string")
        for name in names
    ]
    return dg.MetadataValue.table(records, dg.TableSchema(columns))


def summary_metadata(summary: pd.DataFrame) -> dict[str, Any]:
    """The overall table, token and dollar totals, a chart, every headline mean, and beside a
    mean over fewer cases than were scored (``<judge>/correctness_absent``) how many and why."""
    overall = summary[summary["group"] == OVERALL]
    chart_rows = overall[overall["metric"].isin(HEADLINE_METRICS)].assign(series=overall["judge_id"])
    usage = summary[summary["group"] == USAGE]
    cost = usage[usage["metric"] == "cost_usd"]
    judges = ", ".join(sorted(overall["judge_id"].astype(str).unique()))
    return {
        "judged_by": judges,
        "cases": int(overall["n"].max()) if len(overall) else 0,
        "summary": dg.MetadataValue.md(to_markdown(_summary_table(overall))),
        "usage": dg.MetadataValue.md(to_markdown(_usage_table(usage))),
        "chart": dg.MetadataValue.md(svg_markdown(bar_chart_svg(chart_rows), "mean score per metric")),
        "cost_usd": dg.MetadataValue.float(float(cost["total"].sum(min_count=1))),
        "judge_errors": int(overall.groupby("judge_id")["n_judge_errors"].max().sum()),
        **{
            f"{row.judge_id}/{row.metric}": dg.MetadataValue.float(round(float(row.mean), 4))
            for row in overall.itertuples()
            if not pd.isna(row.mean)
        },
        # where correctness is absent on some cases: over how many its mean is, and why (an
        # absent mean has no number above, never a 0)
        **{
            f"{row.judge_id}/{row.metric}_absent": absent_part(row.note)
            for row in overall.itertuples()
            if absent_part(row.note)
        },
        # latency and cost per case (metrics.budgets): plotted over materializations like the means
        **{
            f"{row.judge_id}/{row.metric}": dg.MetadataValue.float(round(float(row.mean), 6))
            for row in summary[summary["group"] == BUDGET].itertuples()
            if not pd.isna(row.mean)
        },
    }


def cases_link(dagster_url: str, model: str) -> str:
    """The model's name as a Markdown link to its cases in the UI: judge_scores' page on its
    partition, where its worst cases and each case's entry are (no column of its own: the
    side panel is narrow)."""
    from urllib.parse import quote

    url = f"{dagster_url}/assets/judge_scores?view=partitions&partition={quote(model, safe='')}"
    return f"[{model}]({url})"  # a partition name: letters, digits, ._:@+- (check_name)


def comparison_headline(
    comparison: pd.DataFrame, verdicts: dict[tuple[str, str], str], dagster_url: str | None = None
) -> pd.DataFrame:
    """The few columns that decide, narrow enough for Dagster's side panel: model, where it
    stands (the paired verdicts, or why it is stale or missing), correctness with its interval
    and its cases, the model's name linking to its cases with ``dagster_url``; the judge only
    where there are several."""
    if comparison.empty:
        return comparison
    shown = with_intervals(comparison, digits=2)
    judges = shown["judge_id"].dropna().nunique() if "judge_id" in shown else 0
    partial = CORRECTNESS_ABSENT in shown and shown[CORRECTNESS_ABSENT].map(scored_of).astype(bool).any()
    rows = []
    for row in shown.to_dict(orient="records"):
        model, judge = str(row["answer_model"]), row.get("judge_id")
        missing = bool(row.get("missing")) if not pd.isna(row.get("missing", False)) else False
        stale = bool(row.get("stale")) if not pd.isna(row.get("stale", False)) else False
        if missing or stale:
            verdict = str(row.get("note") or ("missing" if missing else "stale"))
        else:
            verdict = verdicts.get((model, str(judge)), "–")
        flagged = row.get("flagged_by_people")
        if isinstance(flagged, str) and flagged:
            verdict = f"{verdict}; judge flagged by people"
        cases = row.get("n_cases")
        rows.append(
            {
                "model": cases_link(dagster_url, model) if dagster_url else model,
                **({"judge": judge if isinstance(judge, str) else "–"} if judges > 1 else {}),
                # what decides first: the side panel at 1,440 px shows the first ~460 px
                "verdict": verdict,
                "correctness": row.get("correctness") if isinstance(row.get("correctness"), str) else "–",
                # correctness over fewer cases than were judged: how many (the entry says why)
                **({"scored": scored_of(row.get(CORRECTNESS_ABSENT)) or "all"} if partial else {}),
                "n": "–" if cases is None or pd.isna(cases) else int(cases),
            }
        )
    return pd.DataFrame(rows)


def attack_success(probed: pd.DataFrame) -> dg.MetadataValue:
    """Each probed model's attack success with its interval (lower is better), a row per model
    and attack: three columns, which the side panel shows whole at 1,440 px (a column per
    attack put the only non-zero rate off-screen)."""
    shown = with_intervals(probed.dropna(axis=1, how="all"))
    attacks = [c for c in shown.columns if str(c).startswith(ASR_PREFIX)]
    rows = [
        {"model": row["answer_model"], "attack": str(column)[len(ASR_PREFIX) :], "success": row[column]}
        for row in shown.to_dict(orient="records")
        for column in attacks
    ]
    return dg.MetadataValue.md(to_markdown(pd.DataFrame(rows, columns=["model", "attack", "success"])))


def comparison_metadata(
    comparison: pd.DataFrame,
    by_language: pd.DataFrame | None = None,
    verdicts: dict[tuple[str, str], str] | None = None,
    dagster_url: str | None = None,
    languages: dict[str, int] | None = None,
    unpaired: list[str] | None = None,
) -> dict[str, Any]:
    """The comparison as a narrow table that decides (model, cases, correctness with its
    interval, verdict) for the asset's side panel, and every metric behind a link (wide: the
    stored table, or the CLI); and, where the cases are in several languages, each model's
    means per language. Where correctness is absent on some of a model's cases, which and why
    (``correctness_absent``), and the pairs compared on fewer cases for it (``unpaired``: the
    paired comparison's notes)."""
    stale = (
        comparison[comparison["stale"].fillna(False).astype(bool)]
        if "stale" in comparison
        else comparison[:0]
    )
    reasons = {
        model: (
            rows["note"].iloc[0] if "note" in rows and rows["note"].iloc[0] else "other questions or index"
        )
        for model, rows in stale.groupby("answer_model")
    }
    missing = comparison[comparison["missing"].astype(bool)] if "missing" in comparison else comparison[:0]
    probed = comparison["judge_id"] == PROBE_JUDGE if "judge_id" in comparison else comparison.index < 0
    judged = comparison[~probed]
    return {
        "stale_models": "; ".join(f"{m}: {r}" for m, r in reasons.items()) or "none",
        "missing_models": "; ".join(f"{r.answer_model}: {r.note}" for r in missing.itertuples()) or "none",
        "models": int(comparison["answer_model"].nunique()) if len(comparison) else 0,
        # the cases' language(s), said even when there is one (by_language needs two)
        **(
            {"languages": "; ".join(f"{code} ({n:,} cases)" for code, n in languages.items())}
            if languages
            else {}
        ),
        "comparison": dg.MetadataValue.md(
            to_markdown(comparison_headline(judged, verdicts or {}, dagster_url))
        ),
        "all_metrics": dg.MetadataValue.md(to_markdown(comparison)),
        **(
            {
                CORRECTNESS_ABSENT: dg.MetadataValue.md(
                    markdown_list(
                        f"{r.answer_model} ({r.judge_id}): {r.correctness_absent}"
                        for r in judged.itertuples()
                        if isinstance(r.correctness_absent, str) and r.correctness_absent
                    )
                )
            }
            if CORRECTNESS_ABSENT in judged and judged[CORRECTNESS_ABSENT].notna().any()
            else {}
        ),
        **({"unpaired": dg.MetadataValue.md(markdown_list(unpaired))} if unpaired else {}),
        **({"attack_success": attack_success(comparison[probed])} if probed.any() else {}),
        **(
            {"by_language": dg.MetadataValue.md(to_markdown(with_intervals(by_language)))}
            if by_language is not None and not by_language.empty
            else {}
        ),
    }


def baseline_diffs_metadata(results: list, dagster_url: str) -> dict[str, Any]:
    """Per baseline: the verdict, the overall metrics, and the regressed cases linked to their
    drill-down; a refused baseline says why."""
    from urllib.parse import quote

    from rag_eval_pipeline.metrics.diff import SHOWN_COLUMNS
    from rag_eval_pipeline.reporting.diff import drill_down_table, verdict

    metadata: dict[str, Any] = {
        "baselines": len(results),
        "regressions": ", ".join(
            r.baseline.name
            for r in results
            if r.diff is not None and not r.diff.significant_regressions().empty
        )
        or "none",
    }
    if not results:
        metadata["how"] = "no baseline yet: pin one with `rag-eval baseline set main RUN`"
    for result in results:
        name = result.baseline.name
        if result.diff is None:
            metadata[f"{name}: refused"] = result.refused or "unreadable"
            continue
        diff = result.diff
        case_url = (
            f"{dagster_url}/assets/judge_scores?view=partitions&partition={quote(diff.after.model, safe='')}"
        )
        metadata[f"{name}: verdict"] = (
            f"{diff.after.label} (run {diff.after.run_id[:8]}) against run {diff.before.run_id[:8]}: "
            + verdict(diff)
        )
        metadata[f"{name}: metrics"] = dg.MetadataValue.md(to_markdown(diff.overall()[SHOWN_COLUMNS]))
        metadata[f"{name}: regressed cases"] = dg.MetadataValue.md(drill_down_table(diff, case_url))
    return metadata


CLAIMS_SHOWN = 20  # claims on the asset page: those of the cases with an unsupported claim first
CLAIM_CHARS = 140


def claims_preview(claims: pd.DataFrame) -> pd.DataFrame:
    """The claims a person reads on ``answer_claims``' page: the cases with an unsupported claim
    first (that claim first), each claim as written (cut at ``CLAIM_CHARS``), whether the
    contexts support it, the passage that does (or "none") and whether the passage it cites
    holds it; at most ``CLAIMS_SHOWN`` rows, the whole table one `rag-eval explain` away."""
    if claims.empty:
        return pd.DataFrame(columns=["case", "claim", "supported", "passage", "citation"])
    supported = claims["supported"].astype(bool)
    later = ~claims["qid"].isin(set(claims.loc[~supported, "qid"]))
    ordered = claims.assign(later=later, held=supported).sort_values(["later", "qid", "held"], kind="stable")
    rows = []
    for row in ordered.head(CLAIMS_SHOWN).itertuples():
        cited = row.cited_passage if isinstance(row.cited_passage, str) and row.cited_passage else None
        rows.append(
            {
                "case": str(row.qid),
                "claim": _clip(str(row.claim), CLAIM_CHARS),
                "supported": "yes" if row.held else "NO",
                "passage": row.supporting_passage
                if isinstance(row.supporting_passage, str) and row.supporting_passage
                else "none",
                "citation": "–"
                if cited is None
                else f"{cited}: {'holds' if row.citation_supports else 'does not hold'}",
            }
        )
    return pd.DataFrame(rows)


IMAGES_LISTED = 50  # rows of the image catalog's list on its page (the stored table holds all)
CAPTION_CHARS = 48


def image_list_table(catalog: pd.DataFrame) -> dg.TableMetadataValue:
    """The image catalog as its page lists it, an image a row: its id, size, type, caption cut at
    a word's end, and `ok` or its first problem; the first ``IMAGES_LISTED``."""
    records = [
        dg.TableRecord(
            {
                "image": str(row["image_id"]),
                # an image whose header gives no size (0 x 0, or none) has none: absent, not 0x0
                "size": f"{int(row['width'])}x{int(row['height'])}"
                if (_number(row["width"]) or 0) > 0 and (_number(row["height"]) or 0) > 0
                else "–",
                "type": row["type"] if isinstance(row["type"], str) and row["type"] else "–",
                "caption": clip_at_word(row["caption"], CAPTION_CHARS)
                if isinstance(row["caption"], str) and row["caption"].strip()
                else "–",
                "state": clip_at_word(str(list(row["problems"])[0]), CAPTION_CHARS)
                if len(row["problems"])
                else "ok",
            }
        )
        for row in catalog.head(IMAGES_LISTED).to_dict(orient="records")
    ]
    columns = [dg.TableColumn(name, "string") for name in ("image", "size", "type", "caption", "state")]
    return dg.MetadataValue.table(records, dg.TableSchema(columns))


# kb_health's tables in the asset's pane: a few short columns each, text cut at a word's end, so
# the pane fits 1,440 px beside its key column; the full record is `rag-eval kb health`
TERMS_CHARS = 24
DOCUMENT_CHARS = 20
KB_QUESTION_CHARS = 32  # beside the case id and its label (the worst cases' rows hold no label)
KB_HEALTH_ROWS = 10
KB_HEALTH_COUNTS = {  # the record's counts under keys no wider than its rates' names
    "cases": "cases",
    "documents": "documents",
    "non_current_documents": "not current",
    "never_retrieved": "never retrieved",
    "ghosts": "ghosts",
    "conflicts": "conflicts",
}
IN_FULL = "_in full: `rag-eval kb health`_"


def _kb_topics(record: dict) -> str:
    topics = record["topics"][:KB_HEALTH_ROWS]
    if not topics:
        return "no flagged question"
    rows = []
    for topic in topics:
        shares = topic["shares"] or {}
        outcome, share = max(shares.items(), key=lambda x: x[1]) if shares else ("–", 0.0)
        rows.append(
            {
                "terms": clip_at_word(", ".join(topic["terms"]), TERMS_CHARS),
                "n": topic["size"],
                "rank": f"{float(topic['rank_score']):.0f}",
                "mostly": f"{share:.0%} {outcome}",
            }
        )
    fitted = record.get("topics_fitted_on")
    flagged = sum(int(t["size"]) for t in record["topics"])
    sampled = f"\n\n_found on {fitted:,} of {flagged:,} questions_" if fitted and fitted < flagged else ""
    return to_markdown(pd.DataFrame(rows)) + sampled + "\n\n" + IN_FULL


def _kb_documents(record: dict) -> str:
    rows = [
        {
            "document": clip_at_word(str(d["document"]), DOCUMENT_CHARS),
            "status": d["status"],
            "used": d["retrieved"],
            "ghost": "yes" if d["ghost"] else "",
        }
        for d in record["documents"]
        if d["status"] != "current" or d["ghost"]
    ]
    if not rows:
        return "every document current"
    more = f"\n\n_… and {len(rows) - KB_HEALTH_ROWS:,} more_" if len(rows) > KB_HEALTH_ROWS else ""
    return to_markdown(pd.DataFrame(rows[:KB_HEALTH_ROWS])) + more + "\n\n" + IN_FULL


def _kb_cases(record: dict) -> str:
    order = {"knowledge_gap": 0, "outdated": 1, "conflict": 2, "retrieval_miss": 3}
    flagged = sorted(
        (c for c in record["cases"] if c["label"] in order), key=lambda c: (order[c["label"]], str(c["qid"]))
    )
    if not flagged:
        return "no flagged case"
    rows = [
        {
            "case": clip_at_word(str(c["qid"]), CASE_ID_CHARS),
            "label": shown_label(c),
            "question": clip_at_word(str(c["question"]), KB_QUESTION_CHARS),
        }
        for c in flagged[:KB_HEALTH_ROWS]
    ]
    more = f"\n\n_… and {len(flagged) - KB_HEALTH_ROWS:,} more_" if len(flagged) > KB_HEALTH_ROWS else ""
    return to_markdown(pd.DataFrame(rows)) + more + "\n\n" + IN_FULL


def kb_health_metadata(record: dict, rates: tuple[str, ...]) -> dict[str, Any]:
    """kb_health's pane: the headline rates (absent ones left out, never 0), the counts and three
    narrow tables (topics, documents not current, flagged cases)."""
    shown = {k: v for k, v in record["rates"].items() if k in rates and v is not None}
    counts = record["counts"]
    traffic = record.get("traffic") or {}
    return {
        "as_of": record["as_of"],
        **({"gap_signal": record["gap_signal"]} if record.get("gap_signal") else {}),
        **{k: dg.MetadataValue.float(float(v)) for k, v in shown.items()},
        **{short: counts[key] for key, short in KB_HEALTH_COUNTS.items() if key in counts},
        # against production (a production section): the divergence, absent with its reason
        **({"production": traffic["source"]} if traffic.get("source") else {}),
        **(
            {
                "traffic_divergence": dg.MetadataValue.float(float(traffic["divergence"])),
                "blind_spots": sum(1 for t in traffic["topics"] if t["blind_spot"]),
            }
            if traffic.get("divergence") is not None
            else {}
        ),
        "topics": dg.MetadataValue.md(_kb_topics(record)),
        "stale documents": dg.MetadataValue.md(_kb_documents(record)),
        "flagged cases": dg.MetadataValue.md(_kb_cases(record)),
    }
