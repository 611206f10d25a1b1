"""A diff between two evaluations as people read it: a terminal table, a pull-request comment in
Markdown (regressions first, under GitHub's comment limit, long lists cut with a count) and JSON
for tools. Every format says the same numbers: they are read from one ``RunDiff``."""

from __future__ import annotations

import json

import pandas as pd

from rag_eval_pipeline.common.plain import plain
from rag_eval_pipeline.metrics.diff import SHOWN_COLUMNS, RunDiff
from rag_eval_pipeline.metrics.settings import OVERALL
from rag_eval_pipeline.reporting.markdown import markdown_cell, markdown_text, to_markdown

MARKDOWN_LIMIT = 60_000  # characters: a GitHub comment holds 65,536
TERMINAL_CASES = 10  # regressed cases the terminal shows (the JSON has them all)
ANSWER_CHARS = 80  # of each answer in a regressed case's row


def verdict(diff: RunDiff) -> str:
    """One line: which metrics got significantly worse over every case (what the gate fails
    on), or that none did; then the tags worse within themselves (shown, not gated)."""
    worse, tags = diff.significant_regressions(), diff.worse_tags()
    within = ", ".join(f"{r.group} {r.judge_id}/{r.metric} ({r.mean_change:+.3f})" for r in tags.itertuples())
    in_tags = f"; worse within a tag (not gated): {within}" if within else ""
    if worse.empty:
        effect = f", by at least {diff.spec.min_effect:g}" if diff.spec.min_effect else ""
        level = f"Holm-adjusted p < {diff.spec.significance:g}{effect}"
        return f"no metric is significantly worse ({level}){in_tags}"
    named = [
        f"{r.judge_id}/{r.metric} ({r.mean_change:+.3f}, p_adj {r.p_adjusted:.3g})"
        for r in worse.itertuples()
    ]
    return f"REGRESSION: significantly worse: {', '.join(named)}{in_tags}"


def _headline(diff: RunDiff) -> list[str]:
    before, after = diff.before, diff.after
    paired = diff.cases["qid"].nunique() if not diff.cases.empty else 0
    counts = diff.case_changes["change"].value_counts().to_dict() if not diff.case_changes.empty else {}
    changed = (
        ", ".join(f"{n} {what}" for what, n in sorted(counts.items())) or "none added, removed or changed"
    )
    return [
        f"before: {before.label} (model {before.model}, run {before.run_id[:8]})",
        f"after:  {after.label} (model {after.model}, run {after.run_id[:8]})",
        f"cases: {paired} compared; {changed}",
        *[f"note: {n}" for n in diff.notes],
        verdict(diff),
    ]


P_COLUMNS = ("p_value", "p_adjusted")


def _rounded(frame: pd.DataFrame) -> pd.DataFrame:
    """Scores to three decimals, p-values to two significant digits (7.6e-05 is not 0.000)."""
    shown = frame.copy()
    for column in shown.columns:
        if shown[column].dtype.kind == "f":
            style = "{:.2g}" if column in P_COLUMNS else "{:.3f}"
            shown[column] = [markdown_cell(v, style) for v in shown[column]]
    return shown


def as_text(diff: RunDiff) -> str:
    """The terminal's view: the headline, the overall metrics, the tags that changed
    significantly, and the worst regressed cases."""
    lines = _headline(diff)
    overall = diff.overall()
    lines += [
        "",
        _rounded(overall[SHOWN_COLUMNS]).to_string(index=False) if not overall.empty else "no metric paired",
    ]
    tags = diff.metrics[
        (diff.metrics["group"] != OVERALL) & (diff.metrics["p_adjusted"] < diff.spec.significance)
    ]
    if not tags.empty:
        lines += [
            "",
            "tags with a significant change:",
            _rounded(tags[["group", *SHOWN_COLUMNS]]).to_string(index=False),
        ]
    regressions = diff.regressions
    if not regressions.empty:
        shown = regressions.head(TERMINAL_CASES)[
            ["qid", "judge_id", "dropped", "diagnosis_before", "diagnosis_after", "lineage_change"]
        ]
        lines += [
            "",
            f"regressed cases, worst first ({len(shown)} of {len(regressions)}):",
            shown.to_string(index=False),
        ]
    return "\n".join(lines)


def _case_rows(diff: RunDiff) -> list[str]:
    rows = []
    for r in diff.regressions.itertuples():
        was, now = (markdown_text(a or "–", ANSWER_CHARS) for a in (r.answer_before, r.answer_after))
        answers = f"{was} (unchanged)" if r.answer_before == r.answer_after else f"{was} → {now}"
        rows.append(
            "| "
            + " | ".join(
                [
                    markdown_cell(r.qid),
                    markdown_text(r.question or "–", 100),
                    markdown_cell(r.judge_id),
                    markdown_cell(r.dropped),
                    answers,
                    f"{r.diagnosis_before or '–'} → {r.diagnosis_after or '–'}",
                    markdown_text(r.lineage_change or "–", 120),
                ]
            )
            + " |"
        )
    return rows


CASE_HEADER = [
    "| qid | question | judge | dropped | answer (before → after) | diagnosis | lineage change |",
    "|---|---|---|---|---|---|---|",
]


def as_markdown(diff: RunDiff, limit: int = MARKDOWN_LIMIT) -> str:
    """A pull-request comment: the verdict and the significantly worse metrics first, then the
    regressed cases worst first, the overall table, the tags and the changed cases. Lists that
    would pass ``limit`` characters are cut with a count of what was left off."""
    before, after = diff.before, diff.after
    head = [
        f"## rag-eval diff: {markdown_text(after.label)} against {markdown_text(before.label)}",
        "",
        f"**{markdown_text(verdict(diff))}**",
        "",
        *[f"- {markdown_text(line)}" for line in _headline(diff)[:-1]],
    ]
    worse = pd.concat([diff.significant_regressions(), diff.worse_tags()])
    sections = []
    if not worse.empty:
        sections.append(
            ["", "### Significantly worse", "", to_markdown(_rounded(worse[["group", *SHOWN_COLUMNS]]))]
        )
    tail = [
        ["", "### Every metric", "", to_markdown(_rounded(diff.overall()[SHOWN_COLUMNS]))],
    ]
    tags = diff.metrics[diff.metrics["group"] != OVERALL]
    if not tags.empty:
        tail.append(
            [
                "",
                f"### By tag (at least {diff.spec.min_cases} cases)",
                "",
                to_markdown(_rounded(tags[["group", *SHOWN_COLUMNS]])),
            ]
        )
    changes = [
        f"| {markdown_cell(r.qid)} | {r.change} | {markdown_text(r.before or '–', 80)} | "
        f"{markdown_text(r.after or '–', 80)} |"
        for r in diff.case_changes.itertuples()
    ]
    fixed = "\n".join(head + [line for s in sections + tail for line in s])
    budget = limit - len(fixed) - 400  # the headers and the cut notes
    cases = _within(CASE_HEADER, _case_rows(diff), budget * 2 // 3, "regressed cases")
    changed = _within(
        ["| qid | change | before | after |", "|---|---|---|---|"], changes, budget // 3, "changed cases"
    )
    parts = head + [line for s in sections for line in s]
    if cases:
        parts += ["", f"### Regressed cases, worst first ({len(diff.regressions)})", "", *cases]
    parts += [line for s in tail for line in s]
    if changed:
        parts += [
            "",
            f"### Cases added, removed or asked anew ({len(diff.case_changes)}: not counted as regressions)",
            "",
            *changed,
        ]
    return "\n".join(parts)


def _within(header: list[str], rows: list[str], budget: int, what: str) -> list[str]:
    """``header`` and as many ``rows`` as fit in ``budget`` characters, then how many were cut."""
    if not rows:
        return []
    kept, used = [], sum(len(h) + 1 for h in header)
    for row in rows:
        if used + len(row) + 1 > budget:
            break
        kept.append(row)
        used += len(row) + 1
    cut = len(rows) - len(kept)
    return [
        *header,
        *kept,
        *(["", f"_… and {cut} more {what} (`--format json` lists them all)_"] if cut else []),
    ]


def _records(frame: pd.DataFrame) -> list[dict]:
    return [{k: plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def as_json(diff: RunDiff) -> str:
    """Every number of the diff: ``metrics`` (overall), ``groups`` (per tag), ``cases`` (every
    paired score), ``regressions``, ``case_changes``, and whether any metric is worse."""
    overall = diff.overall()
    document = {
        "before": diff.before.describe(),
        "after": diff.after.describe(),
        "significance": diff.spec.significance,
        "min_effect": diff.spec.min_effect,
        "regression": bool(not diff.significant_regressions().empty),
        "verdict": verdict(diff),
        "notes": diff.notes,
        "metrics": _records(overall.drop(columns=["group"])),
        "groups": _records(diff.metrics[diff.metrics["group"] != OVERALL]),
        "cases": _records(diff.cases),
        "regressions": _records(diff.regressions),
        "case_changes": _records(diff.case_changes),
    }
    return json.dumps(document, indent=2, ensure_ascii=False)


def drill_down_table(diff: RunDiff, case_url: str, limit: int = TERMINAL_CASES * 2) -> str:
    """The regressed cases worst first, each linked to its model's scores page in the UI (where
    the worst cases open in full) with the command that explains it as the after-run scored it."""
    rows = []
    for r in diff.regressions.head(limit).itertuples():
        explain = f"rag-eval explain {r.qid} --model {diff.after.model} --run {diff.after.run_id}"
        rows.append(
            f"| [{markdown_cell(r.qid)}]({case_url}) | {markdown_text(r.question or '–', 100)} | "
            f"{markdown_cell(r.judge_id)} | {markdown_cell(r.dropped)} | "
            f"{r.diagnosis_before or '–'} → {r.diagnosis_after or '–'} | "
            f"{markdown_text(r.lineage_change or '–', 120)} | `{explain}` |"
        )
    if not rows:
        return "_no case regressed_"
    cut = len(diff.regressions) - len(rows)
    header = [
        "| qid | question | judge | dropped | diagnosis | lineage change | drill down |",
        "|---|---|---|---|---|---|---|",
    ]
    return "\n".join([*header, *rows, *(["", f"_… and {cut} more (`rag-eval diff`)_"] if cut else [])])


FORMATS = {"table": as_text, "markdown": as_markdown, "json": as_json}
