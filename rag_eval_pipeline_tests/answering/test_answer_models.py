import pandas as pd
import pytest

from rag_eval_pipeline.answering.answer_cases import answer_cases
from rag_eval_pipeline.answering.base import AnswerRequest
from rag_eval_pipeline.answering.offline import ExtractiveBaseline, NullAnswerer, OracleAnswerer
from rag_eval_pipeline.answering.registry import AnswerRegistry, UnknownAnswerModelError
from rag_eval_pipeline.answering.settings import ModelEntry
from rag_eval_pipeline.answering.spec import AnswerSpec, CalibrationRole, InvalidNameError
from rag_eval_pipeline.llm.services import LLMServices
from rag_eval_pipeline.llm.targets import LLMEndpoint
from rag_eval_pipeline.metrics.diagnosis import AnswerSource
from rag_eval_pipeline.retrieval.base import RetrievalMode, SearchHit

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
    registry = AnswerRegistry()
    oracle = registry.resolve("oracle")
    assert (oracle.model, oracle.retrieval_mode, oracle.top_k) == ("oracle", RetrievalMode.BM25, 4)
    assert oracle.answer_config == "oracle@bm25-k4" and oracle.provider == "offline"
    hybrid = registry.resolve("baseline@hybrid-k8")
    assert (hybrid.model_id, hybrid.retrieval_mode, hybrid.top_k) == (
        "extractive-baseline",
        RetrievalMode.HYBRID,
        8,
    )
    claude = registry.resolve("anthropic:claude-x-1.5@bm25-k4")
    assert (claude.provider, claude.model, claude.model_id) == (
        "anthropic",
        "anthropic:claude-x-1.5",
        "claude-x-1.5",
    )
    assert claude.prompt_version == "answer-v1"
    for bad in ["", "@bm25-k4", "oracle@bm25", "oracle@fuzzy-k4", "oracle@bm25-k0", "anthropic:"]:
        with pytest.raises(ValueError):
            registry.resolve(bad)


@pytest.mark.parametrize(
    "name",
    [
        "anthropic:../../../../tmp/x/PWNED",
        "claude-x/../../y",
        "../oracle",
        "a\\b",
        "a b",
        "x" * 121,
        "tab\tname",
    ],
)
def test_names_that_could_leave_storage_are_refused(name):
    with pytest.raises(InvalidNameError, match="letters, digits"):
        AnswerRegistry().resolve(name)
    with pytest.raises(ValueError, match="letters, digits"):
        ModelEntry(name=name, provider="offline", model="oracle")


def test_named_models_keep_their_calibration_role():
    """The configuration `rag-eval init` writes names the calibration models: their roles must
    follow the model, not the name."""
    registry = AnswerRegistry(
        [
            ModelEntry(name="null-model", provider="offline", model="null"),
            ModelEntry(name="truth", provider="offline", model="oracle", top_k=2),
            ModelEntry(name="haiku", provider="anthropic", model="claude-haiku-4-5", retrieval_mode="hybrid"),
        ]
    )
    assert registry.resolve("null-model").calibration is CalibrationRole.LOWER_BOUND
    assert registry.resolve("null-model").calibration.expected_correctness == 0.0
    assert registry.resolve("truth").calibration.expected_correctness == 1.0
    assert registry.resolve("truth").answer_config == "oracle@bm25-k2"
    haiku = registry.resolve("haiku")
    assert (
        haiku.calibration is CalibrationRole.MEASURED and haiku.answer_config == "claude-haiku-4-5@hybrid-k4"
    )
    with pytest.raises(ValueError, match="unknown provider 'mistral'"):
        ModelEntry(name="le-chat", provider="mistral", model="mistral-large")
    with pytest.raises(ValueError, match="base_url and api_key_env are for provider openai"):
        ModelEntry(name="h", provider="anthropic", model="claude-haiku-4-5", base_url="http://x")


def test_openai_compatible_and_local_models_resolve_to_their_endpoints():
    registry = AnswerRegistry(
        [
            ModelEntry(
                name="my-vllm",
                provider="openai",
                model="Qwen/Qwen2.5-7B-Instruct",
                base_url="http://127.0.0.1:8000/v1",
                api_key_env="VLLM_KEY",
            )
        ]
    )
    gpt = registry.resolve("openai:gpt-4o-mini@hybrid-k3")
    assert (gpt.provider, gpt.model_id, gpt.answer_config) == (
        "openai",
        "gpt-4o-mini",
        "openai:gpt-4o-mini@hybrid-k3",
    )
    assert gpt.endpoint == LLMEndpoint("openai") and gpt.source is AnswerSource.GENERATIVE
    vllm = registry.resolve("my-vllm")
    assert vllm.model_id == "Qwen/Qwen2.5-7B-Instruct"
    assert vllm.endpoint == LLMEndpoint("openai", "http://127.0.0.1:8000/v1", "VLLM_KEY")
    local = registry.resolve("local:smollm2")
    assert (local.provider, local.model_id, local.endpoint) == (
        "local",
        "smollm2",
        LLMEndpoint("local", model_file="smollm2"),
    )
    assert registry.resolve("oracle").endpoint is None
    assert registry.resolve("claude-haiku-4-5").endpoint == LLMEndpoint("anthropic")
    with pytest.raises(ValueError, match="openai:<model> and local:<model>"):
        registry.resolve("gpt-4o")


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
    registry = AnswerRegistry()
    assert registry.build(registry.resolve("baseline"), LLMServices({}, {})).name == "extractive-baseline"
    with pytest.raises(UnknownAnswerModelError, match="known: baseline, compliant, extractive-baseline"):
        registry.resolve("gpt-17")


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
        AnswerSpec("flaky", "test", "flaky", "flaky", RetrievalMode.BM25, 2, "none"),
        _FlakyModel(),
        retrieve=lambda queries, k, languages=None: [list(HITS[:k]) for _ in queries],
        on_progress=lambda done, total: seen.append((done, total)),
    )
    assert answers["status"].tolist() == ["ok", "failed", "ok"]
    failed = answers.iloc[1]
    assert pd.isna(failed["answer"]) and "TimeoutError: upstream timed out" in failed["error"]
    assert answers.iloc[0]["retrieved_ids"] == ["p1", "p2"]
    assert answers.iloc[0]["retrieved_scores"] == [3.0, 2.0]
    assert answers.iloc[0]["answer_config"] == "flaky@bm25-k2"
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_the_teams_own_documents_get_a_prompt_that_does_not_speak_of_wikipedia():
    from rag_eval_pipeline.answering.chat import (
        ANSWER_SYSTEM_PROMPT,
        NEUTRAL_SYSTEM_PROMPT,
        render_answer_prompt,
    )
    from rag_eval_pipeline.config import Settings

    hotpotqa = Settings().answer_registry().resolve("haiku")
    custom = Settings.model_validate({"dataset": {"kind": "custom", "questions": "q.jsonl"}})
    own = custom.answer_registry().resolve("haiku")
    assert hotpotqa.prompt_version == "answer-v1" and hotpotqa.system_prompt is None
    assert own.prompt_version == "answer-neutral-v1" and own.system_prompt == NEUTRAL_SYSTEM_PROMPT
    assert "Wikipedia" in ANSWER_SYSTEM_PROMPT and "Wikipedia" not in NEUTRAL_SYSTEM_PROMPT
    assert render_answer_prompt(own.model_id, "q", (), own.system_prompt).system == NEUTRAL_SYSTEM_PROMPT
    named = Settings.model_validate(
        {
            "dataset": {"kind": "custom", "questions": "q.jsonl"},
            "answer_models": [
                {"name": "h", "provider": "anthropic", "model": "claude-haiku-4-5", "prompt": "Be brief."}
            ],
        }
    ).answer_registry()
    assert named.resolve("h").system_prompt == "Be brief." and named.resolve("h").prompt_version.startswith(
        "custom-"
    )
