"""One alignment of a STRICT judge to people's labels (``judges.alignment``): the examples chosen
on the training half, both prompts asked on the held-out half, each measured against the labels
there. Its calls go through the response cache: asking again costs nothing."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from rag_eval_pipeline.judges.alignment import Example, PromptVersion, agrees_better, version_id
from rag_eval_pipeline.judges.registry import JudgeRegistry, JudgeSpec
from rag_eval_pipeline.judges.score_cases import join_cases, score_cases
from rag_eval_pipeline.judges.strict import STRICT_PROMPT_VERSION
from rag_eval_pipeline.llm.services import LLMServices
from rag_eval_pipeline.metrics.agreement import AgreementBars, agreement_row, labelled_pairs
from rag_eval_pipeline.metrics.weighted_jury import held_out

CANDIDATE = "#candidate"  # the candidate's judge id while both prompts are scored side by side


@dataclass(frozen=True)
class AlignmentInputs:
    """What an alignment reads from the instance: the labels of one metric, and each labelled
    model's scores and answers, with the judgement list their questions come from."""

    labels: pd.DataFrame
    scores_by_model: Mapping[str, pd.DataFrame]
    answers_by_model: Mapping[str, pd.DataFrame]
    judgement_list: pd.DataFrame


@dataclass
class AlignmentResult:
    basis: str
    current: str
    table: list[dict[str, object]] = field(default_factory=list)
    adopted: PromptVersion | None = None


def _examples(train: pd.DataFrame, inputs: AlignmentInputs, metric: str, most: int) -> list[Example]:
    """The training half's disagreements, the widest first, one per case (its first reviewer)."""
    truth = dict(zip(inputs.judgement_list["qid"], inputs.judgement_list["answer"]))
    disagreed = train[train["label"].astype(float) != train["judge"].astype(float)].copy()
    disagreed["gap"] = (disagreed["label"].astype(float) - disagreed["judge"].astype(float)).abs()
    disagreed = disagreed.sort_values(["gap", "answer_model", "qid"], ascending=[False, True, True])
    examples = []
    for row in disagreed.drop_duplicates(["answer_model", "qid"]).itertuples():
        answers = inputs.answers_by_model[row.answer_model]
        answer = answers[answers["qid"] == row.qid].iloc[0]
        if row.qid not in truth:
            continue
        examples.append(
            Example(
                str(answer["question"]), str(truth[row.qid]), str(answer["answer"]), metric, float(row.label)
            )
        )
        if len(examples) == most:
            break
    return examples


def _held_out_cases(inputs: AlignmentInputs, held: pd.DataFrame) -> dict[str, pd.DataFrame]:
    listed = set(inputs.judgement_list["qid"])
    cases = {}
    for model, rows in held.groupby("answer_model"):
        answers = inputs.answers_by_model[model]
        first = answers[answers["repeat"] == 0] if "repeat" in answers else answers
        chosen = first[first["qid"].isin(set(rows["qid"]) & listed)]
        if len(chosen):
            cases[str(model)] = join_cases(chosen, inputs.judgement_list)
    return cases


def _figures(prompt: str, version: str, labels: pd.DataFrame, scores: pd.Series) -> dict[str, object]:
    judged = labels.assign(
        score=[scores.get((m, q), np.nan) for m, q in zip(labels["answer_model"], labels["qid"])]
    )
    judged = judged.dropna(subset=["score"])
    row = agreement_row(judged["label"].astype(float).tolist(), judged["score"].tolist(), AgreementBars())
    return {"prompt": prompt, "version": version, **{k: row[k] for k in (
        "n", "accuracy", "kappa", "kappa_low", "kappa_high", "true_positive_rate", "tpr_low", "tpr_high",
        "true_negative_rate", "tnr_low", "tnr_high",
    )}}  # fmt: skip


def align_judge(
    inputs: AlignmentInputs,
    spec: JudgeSpec,
    registry: JudgeRegistry,
    services: LLMServices,
    metric: str,
    most_examples: int,
    current: PromptVersion | None,
) -> AlignmentResult:
    """Examples from the training half's disagreements; both prompts on the held-out half; the
    candidate in ``adopted`` only when its held-out weighted kappa is higher than the current
    prompt's (``agrees_better``)."""
    current_version = current.version if current is not None else STRICT_PROMPT_VERSION
    pairs = labelled_pairs(inputs.labels, inputs.scores_by_model)
    pairs = pairs[(pairs["judge_id"] == spec.judge_id) & (pairs["metric"] == metric)]
    if pairs.empty:
        raise ValueError(
            f"{spec.judge_id} scored none of the labelled cases: evaluate the labelled models with it"
        )
    half = np.array([held_out(m, q) for m, q in zip(pairs["answer_model"], pairs["qid"])])
    train, held = pairs[~half], pairs[half]
    examples = _examples(train, inputs, metric, most_examples)
    basis = (
        f"{spec.judge_id} on {metric}: {train[['answer_model', 'qid']].drop_duplicates().shape[0]} labelled "
        f"cases to draw examples from, {len(examples)} of their disagreements shown; "
        f"{held[['answer_model', 'qid']].drop_duplicates().shape[0]} held-out cases measured"
    )
    if not examples or held.empty:
        reason = "no disagreement to learn from" if not examples else "no held-out case"
        return AlignmentResult(f"{basis} ({reason}: nothing to align)", current_version)
    candidate = PromptVersion(spec.judge_id, version_id(current_version, examples), tuple(examples), {})
    judges = [
        registry.build(replace(spec, prompt=current), services),
        registry.build(replace(spec, judge_id=spec.judge_id + CANDIDATE, prompt=candidate), services),
    ]
    scored = {}
    for model, cases in _held_out_cases(inputs, held).items():
        rows = score_cases(cases, judges, concurrency=None)
        for row in rows[rows["status"] == "ok"].itertuples():
            scored[(row.judge_id, model, row.qid)] = getattr(row, metric)
    labels = held[["answer_model", "qid", "label"]]
    table = [
        _figures(name, version, labels, pd.Series({(m, q): v for (j, m, q), v in scored.items() if j == who}))
        for name, version, who in (
            ("current", current_version, spec.judge_id),
            ("candidate", candidate.version, spec.judge_id + CANDIDATE),
        )
    ]
    now, then = float(table[0]["kappa"]), float(table[1]["kappa"])
    better = agrees_better(now, then)
    figures = {k: float(v) for k, v in table[1].items() if isinstance(v, float)}
    adopted = replace(candidate, held_out=figures | {"current_kappa": now}) if better else None
    return AlignmentResult(basis, current_version, table, adopted)
