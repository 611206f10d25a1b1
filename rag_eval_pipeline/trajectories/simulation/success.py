"""Whether a simulated session reached its goal: every criterion its scenario gives. The final
reply must hold each ``reply_contains`` string, compared as the scenario's language analyses
text (its words, stemmed where Snowball has the language, segmented where words run together);
an LLM judge answers the ``rubric`` yes or no on the whole transcript (two pure halves around
one call); the tool calls are the trajectories' matches. A session that did not end by the
user's stop (max turns, an agent error or timeout) is a failure whatever its replies."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from rag_eval_pipeline.judges.engine import InvalidJudgeOutput, parse_tool_output, rubric_request
from rag_eval_pipeline.language.analysis import analyzer
from rag_eval_pipeline.llm.client import LLMRequest, LLMResponse, Tool
from rag_eval_pipeline.trajectories.simulation.users import Message

RUBRIC_PROMPT_VERSION = "simulation-rubric-v1"
RUBRIC_TOOL = "record_rubric_verdict"
RUBRIC_SYSTEM = """You read a conversation between a user and a support agent and decide whether it
meets a rubric. Answer passed true only when the whole conversation meets every point of the
rubric; give a one-sentence reason."""


def holds(reply: str, needle: str, language: str) -> bool:
    """Whether ``reply`` holds ``needle`` in ``language``: every term of the needle among the
    reply's terms (case, accents of inflection and word forms aside), or, for a needle of no
    term (a number, a stop word), its plain form inside the reply's."""
    analysis = analyzer(language)
    wanted = set(analysis.terms(needle))
    if wanted:
        return wanted <= set(analysis.terms(reply))
    plain = analysis.plain(needle)
    return bool(plain) and plain in analysis.plain(reply)


def missing_strings(reply: str | None, strings: Sequence[str], language: str) -> list[str]:
    """The strings the final reply does not hold (all of them when there is no reply)."""
    return [s for s in strings if reply is None or not holds(reply, s, language)]


class RubricVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore")
    passed: bool
    reason: str = ""


def transcript_text(messages: Sequence[Message]) -> str:
    return "\n".join(f"<{m.role}>{m.content}</{m.role}>" for m in messages)


def render_rubric_request(model: str, rubric: str, messages: Sequence[Message]) -> LLMRequest:
    tool = Tool(
        RUBRIC_TOOL,
        "Record whether the conversation meets the rubric.",
        {
            "type": "object",
            "properties": {"passed": {"type": "boolean"}, "reason": {"type": "string"}},
            "required": ["passed", "reason"],
        },
    )
    user = f"<rubric>{rubric}</rubric>\n<conversation>\n{transcript_text(messages)}\n</conversation>"
    return rubric_request(model, RUBRIC_SYSTEM, user, 256, tool)


def parse_rubric_verdict(response: LLMResponse) -> RubricVerdict:
    return parse_tool_output(response, RubricVerdict)


__all__ = ["InvalidJudgeOutput", "holds", "missing_strings", "parse_rubric_verdict", "render_rubric_request"]
