"""What the LLM stages are told of a case's language, through the real Anthropic SDK against the
tests' Messages-API server: the case's text goes in unchanged, and its language in the
instructions; an English case's prompts are as they were."""

import pandas as pd

from rag_eval_pipeline.answering.answer_cases import answer_cases
from rag_eval_pipeline.answering.chat import ChatAnswerer
from rag_eval_pipeline.answering.registry import AnswerRegistry
from rag_eval_pipeline.judges.claims import ClaimsLLMJudge
from rag_eval_pipeline.judges.engine import JudgeEndpoint
from rag_eval_pipeline.judges.ragas import RagasLLMJudge
from rag_eval_pipeline.judges.score_cases import join_cases, score_cases
from rag_eval_pipeline.judges.strict import StrictLLMJudge
from rag_eval_pipeline.llm.anthropic_client import AnthropicClient
from rag_eval_pipeline.llm.pricing import DEFAULT_PRICES
from rag_eval_pipeline.retrieval.base import SearchHit
from stand_ins.anthropic_api import FakeAnthropic

QUESTION, TRUTH = "故宫是哪一年建成的？", "1420年"
PASSAGE = "故宫于明朝永乐十八年（1420年）建成。"
HITS = [SearchHit("p1", "故宫", PASSAGE, 2.0)]


def _cases(language: str | None) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "qid": ["q1"],
            "question": [QUESTION],
            "answer": [TRUTH],
            "type": ["custom"],
            "level": ["custom"],
            "gold_titles": [["故宫"]],
            "gold_facts": [[{"title": "故宫", "sent_id": -1}]],
            **({"language": [language]} if language else {}),
        }
    )


def _texts(request: dict) -> str:
    content = request["messages"][0]["content"]
    return content if isinstance(content, str) else " ".join(part.get("text", "") for part in content)


def test_the_answer_and_every_judge_see_the_case_as_written_and_its_language():
    with FakeAnthropic() as server:
        client = AnthropicClient("test-key", server.url, timeout_s=10, max_retries=0)
        cases = _cases("zh")
        answers = answer_cases(
            cases,
            AnswerRegistry().resolve("claude-haiku-4-5@bm25-k1"),
            ChatAnswerer("claude-haiku-4-5", "claude-haiku-4-5", client, DEFAULT_PRICES),
            retrieve=lambda queries, k, languages=None: [HITS for _ in queries],
        )
        asked = server.requests[0]
        endpoint = JudgeEndpoint("claude-sonnet-4-6", client, DEFAULT_PRICES)
        judges = [
            StrictLLMJudge("claude-sonnet-4-6", endpoint),
            RagasLLMJudge("ragas:claude-sonnet-4-6", endpoint),
            ClaimsLLMJudge("claims:claude-sonnet-4-6", endpoint),
        ]
        scores = score_cases(join_cases(answers, cases), judges)
        judged = server.requests[1:]
    assert f"Question: {QUESTION}" in _texts(asked) and PASSAGE in _texts(asked)
    assert "Chinese (zh)" in _texts(asked) and "write the answer in Chinese" in _texts(asked)
    assert len(judged) >= 5 and all("Chinese (zh)" in _texts(r) for r in judged)
    assert all(PASSAGE in _texts(r) for r in judged if "<passages>" in _texts(r))
    assert all(f"<question>{QUESTION}</question>" in _texts(r) for r in judged if "<question>" in _texts(r))
    assert (scores["language"] == "zh").all()
    # RAGAS answer relevancy needs an embedding model that reads Chinese: absent, and said
    ragas = scores[scores["judge_id"] == "ragas:claude-sonnet-4-6"].iloc[0]
    assert pd.isna(ragas.get("answer_relevancy"))


def test_an_english_case_is_asked_as_before():
    with FakeAnthropic() as server:
        client = AnthropicClient("test-key", server.url, timeout_s=10, max_retries=0)
        cases = _cases(None).assign(question="Which year was it built?", answer="1420")
        answer_cases(
            cases,
            AnswerRegistry().resolve("claude-haiku-4-5@bm25-k1"),
            ChatAnswerer("claude-haiku-4-5", "claude-haiku-4-5", client, DEFAULT_PRICES),
            retrieve=lambda queries, k, languages=None: [HITS for _ in queries],
        )
    text = _texts(server.requests[0])
    assert text.endswith("Question: Which year was it built?") and "language" not in text.lower()


def test_generation_asks_for_questions_in_the_documents_language():
    from rag_eval_pipeline.generation.generate import answer_words
    from rag_eval_pipeline.generation.plan import Source
    from rag_eval_pipeline.generation.prompts import render_generation
    from rag_eval_pipeline.generation.spec import CaseType

    chinese = render_generation("claude-sonnet-4-6", CaseType.SINGLE, [Source("p1", "故宫", PASSAGE, "zh")])
    english = render_generation(
        "claude-sonnet-4-6", CaseType.SINGLE, [Source("p1", "Tower", "Built in 1889.")]
    )
    assert PASSAGE in chinese.messages[0]["content"]
    assert "write the question and its answer in Chinese" in chinese.messages[0]["content"]
    assert "Chinese" not in english.messages[0]["content"]
    assert answer_words("明朝永乐十八年", "zh") == 3  # words (明朝 永乐 十八年), not one run of characters


def test_a_chinese_title_is_a_bridge_for_two_hop():
    from rag_eval_pipeline.retrieval.modes import TitleCatalog

    catalog = TitleCatalog([SearchHit("1", "故宫", "x", 0), SearchHit("2", "长城", "y", 0)])
    assert catalog.mentioned_titles("秦始皇把各国的长城连接起来", exclude="故宫") == ["长城"]
