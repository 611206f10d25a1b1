"""The sufficiency judge's two pure halves: the prompt shows the question and passages, never the
answer or the reference; a verdict without a reason, or not a verdict, is refused."""

import pytest

from rag_eval_pipeline.judges.base import JudgeCase
from rag_eval_pipeline.judges.engine import InvalidJudgeOutput
from rag_eval_pipeline.judges.registry import JudgeRegistry
from rag_eval_pipeline.judges.sufficiency import parse_sufficiency_verdict, render_sufficiency_prompt
from rag_eval_pipeline.llm.client import LLMResponse, Usage
from rag_eval_pipeline.retrieval.base import SearchHit

CASE = JudgeCase(
    "Who founded Acme?",
    "Ada Smith",
    "Bob Jones",
    (SearchHit("doc_1", "History", "Acme was founded in 1987.", 1.0),),
)


def test_the_prompt_never_shows_the_answer_or_the_reference():
    request = render_sufficiency_prompt("claude-sonnet-4-6", CASE)
    shown = request.messages[0]["content"]
    assert "Who founded Acme?" in shown and "founded in 1987" in shown
    assert "Ada Smith" not in shown and "Bob Jones" not in shown
    assert request.tool.name == "record_sufficiency"


@pytest.mark.parametrize(
    ("tool_input", "valid"),
    [
        ({"sufficient": False, "reason": "no passage names a founder"}, True),
        ({"sufficient": True, "reason": ""}, False),
        ({"sufficient": "maybe", "reason": "x"}, False),
        (None, False),
    ],
)
def test_the_verdict_is_a_boolean_with_a_reason(tool_input, valid):
    response = LLMResponse("", tool_input, Usage(), "claude-sonnet-4-6")
    if valid:
        assert parse_sufficiency_verdict(response).sufficient is False
    else:
        with pytest.raises(InvalidJudgeOutput):
            parse_sufficiency_verdict(response)


def test_the_registry_knows_it():
    spec = JudgeRegistry().resolve("sufficiency:claude-sonnet-4-6")
    assert spec.kind == "sufficiency" and spec.metrics == ("sufficiency",)
    assert spec.reference_free_metrics == ("sufficiency",)
