import pandas as pd
import pytest

from rag_eval_pipeline.answering.answer_cases import answer_cases
from rag_eval_pipeline.answering.base import AnswerConfig, AnswerRequest
from rag_eval_pipeline.answering.offline import ExtractiveBaseline, NullAnswerer, OracleAnswerer
from rag_eval_pipeline.answering.registry import UnknownAnswerModelError, offline_answer_model
from rag_eval_pipeline.retrieval.base import SearchHit

HITS = (
    SearchHit("p1", "Kiss and Tell", "Kiss and Tell is a 1945 film. It starred Shirley Temple.", 3.0),
    SearchHit(
        "p2",
        "Shirley Temple",
        "Shirley Temple was an actress. She served as Chief of Protocol.",
        2.0,
    ),
)
REQUEST = AnswerRequest("q1", "Who served as Chief of Protocol?", HITS, "Chief of Protocol")


def test_partition_key_grammar():
    assert AnswerConfig.parse("oracle") == AnswerConfig("oracle", "bm25", 4)
    assert AnswerConfig.parse("baseline@hybrid-k8") == AnswerConfig("baseline", "hybrid", 8)
    assert AnswerConfig.parse("anthropic:claude-x-1.5@bm25-k4").model == "anthropic:claude-x-1.5"
    assert AnswerConfig.parse("oracle").key == "oracle@bm25-k4"
    for bad in ["", "@bm25-k4", "oracle@bm25", "oracle@fuzzy-k4", "oracle@bm25-k0"]:
        with pytest.raises(ValueError):
            AnswerConfig.parse(bad)


def test_extractive_baseline_picks_the_best_matching_sentence():
    result = ExtractiveBaseline().answer(REQUEST)
    assert result.answer == "She served as Chief of Protocol."  # 3 shared words; others 0
    tie = AnswerRequest("q", "Which film starred Shirley Temple the actress?", HITS, "x")
    # "It starred Shirley Temple." (starred, shirley, temple) beats the 2-word overlaps
    assert ExtractiveBaseline().answer(tie).answer == "It starred Shirley Temple."
    assert result.model_id == "extractive-baseline" and result.prompt_version == "extractive-v1"


def test_extractive_baseline_without_overlap_abstains():
    request = AnswerRequest("q", "Zebra?", HITS, "x")
    assert ExtractiveBaseline().answer(request).answer == "unknown"
    assert ExtractiveBaseline().answer(AnswerRequest("q", "Chief?", (), "x")).answer == "unknown"


def test_calibration_models():
    assert OracleAnswerer().answer(REQUEST).answer == "Chief of Protocol"
    assert NullAnswerer().answer(REQUEST).answer == "unknown"


def test_registry():
    assert offline_answer_model("baseline").name == "extractive-baseline"
    with pytest.raises(UnknownAnswerModelError, match="known: baseline, extractive-baseline"):
        offline_answer_model("gpt-17")


class _FlakyModel:
    name = "flaky"

    def answer(self, request):
        if request.qid == "q2":
            raise TimeoutError("upstream timed out")
        return OracleAnswerer().answer(request)


def test_answer_cases_records_failures_per_case_and_reports_progress():
    cases = pd.DataFrame(
        {"qid": ["q1", "q2", "q3"], "question": ["a?", "b?", "c?"], "answer": ["A", "B", "C"]}
    )
    seen = []
    answers = answer_cases(
        cases,
        AnswerConfig("flaky", "bm25", 2),
        _FlakyModel(),
        retrieve=lambda queries, k: [list(HITS[:k]) for _ in queries],
        on_progress=lambda done, total: seen.append((done, total)),
    )
    assert answers["status"].tolist() == ["ok", "failed", "ok"]
    failed = answers.iloc[1]
    assert pd.isna(failed["answer"]) and "TimeoutError: upstream timed out" in failed["error"]
    assert answers.iloc[0]["retrieved_ids"] == ["p1", "p2"]
    assert answers.iloc[0]["retrieved_scores"] == [3.0, 2.0]
    assert answers.iloc[0]["answer_config"] == "flaky@bm25-k2"
    assert seen == [(1, 3), (2, 3), (3, 3)]
