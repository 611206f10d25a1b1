"""Whether a simulated session reached its goal: every criterion its scenario gives. The final
reply must hold each ``reply_contains`` phrase as written (NFKC, case- and width-folded, whole
words in order, never by stems or as a bag of words) in a clause no negator of the scenario's
language negates; ``reply_contains_any_form`` the same with each word's stem;
an LLM judge answers the ``rubric`` yes or no on the whole transcript (two pure halves around
one call); the tool calls are the trajectories' matches. A session that did not end by the
user's stop (max turns, an agent error or timeout) is a failure whatever its replies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from rag_eval_pipeline.judges.engine import InvalidJudgeOutput, parse_tool_output, rubric_request
from rag_eval_pipeline.language.analysis import Analyzer, analyzer
from rag_eval_pipeline.llm.client import LLMRequest, LLMResponse, Tool
from rag_eval_pipeline.trajectories.simulation.scenarios import Scenario
from rag_eval_pipeline.trajectories.simulation.users import Message

RUBRIC_PROMPT_VERSION = "simulation-rubric-v1"
RUBRIC_TOOL = "record_rubric_verdict"
RUBRIC_SYSTEM = """You read a conversation between a user and a support agent and decide whether it
meets a rubric. Answer passed true only when the whole conversation meets every point of the
rubric; give a one-sentence reason."""


NEGATED = "only in a negated clause"


@dataclass(frozen=True)
class MarkerMatch:
    """Whether a marker holds in a reply, and, when it does not, why (said in ``reply_missing``)."""

    held: bool
    why: str = ""


def _negators(analysis: Analyzer) -> frozenset[str]:
    """The language's negators as ``sentences`` gives words (one word each; in a language
    without spaces, the characters searched for)."""
    lexicon = analysis.lexicon
    if lexicon is None:
        return frozenset()
    found = set()
    for entry in lexicon.negators:
        words = [w for sentence in analysis.sentences(entry) for clause in sentence for w in clause]
        if analysis.inside_words:
            found.add("".join(words))
        elif len(words) == 1:
            found.add(words[0])
    return frozenset(found)


def _occurrences(sentence: list[list[str]], wanted: list[str], joined: bool) -> list[set[tuple[int, int]]]:
    """Each way the marker's words stand in the sentence, whole and in order (other words may
    stand between), as the places they take: (clause, word) in a spaced language; (clause,
    character) where words are not spaced, the marker's words found among the clause's
    characters (a dictionary may cut the same characters otherwise in another sentence)."""
    if joined:
        return _character_occurrences(sentence, wanted)
    places = [(c, i, w) for c, clause in enumerate(sentence) for i, w in enumerate(clause)]
    found = []
    for start, (_, _, first) in enumerate(places):
        if first != wanted[0]:
            continue
        taken, at = [], start
        for word in wanted:
            while at < len(places) and places[at][2] != word:
                at += 1
            if at == len(places):
                break
            taken.append(places[at][:2])
            at += 1
        if len(taken) == len(wanted):
            found.append(set(taken))
    return found


def _character_occurrences(sentence: list[list[str]], wanted: list[str]) -> list[set[tuple[int, int]]]:
    texts = ["".join(clause) for clause in sentence]
    places = [(c, i) for c, text in enumerate(texts) for i in range(len(text))]
    whole = "".join(texts)
    found = []
    start = whole.find(wanted[0])
    while start >= 0:
        taken: list[int] = []
        at = start
        for word in wanted:
            at = whole.find(word, at)
            if at < 0:
                break
            taken += range(at, at + len(word))
            at += len(word)
        if at >= 0:
            found.append({places[i] for i in taken})
        start = whole.find(wanted[0], start + 1)
    return found


def _negated(
    sentence: list[list[str]], taken: set[tuple[int, int]], negators: frozenset[str], joined: bool
) -> bool:
    """Whether a negator of the language stands in a clause that holds a word of the marker,
    on either side ("not updated", "wurde nicht veranlasst", "返金できません"), the marker's own
    words aside."""
    for clause in {c for c, _ in taken}:
        if joined:
            text = "".join(
                ch if (clause, i) not in taken else " " for i, ch in enumerate("".join(sentence[clause]))
            )
            if any(n in text for n in negators):
                return True
        elif any(w in negators for i, w in enumerate(sentence[clause]) if (clause, i) not in taken):
            return True
    return False


def match_marker(reply: str, needle: str, language: str, any_form: bool = False) -> MarkerMatch:
    """Whether ``reply`` holds the phrase ``needle`` as written: its words, whole and in order,
    in one sentence (NFKC, case- and width-folded; with ``any_form``, each word's stem instead),
    and no negator of the language in a clause that holds them ("could not be updated", "no
    refund was issued"), whichever side it stands on. A language without a lexicon of negators
    is matched without that reading (``language/lexicons.toml``)."""
    analysis = analyzer(language)
    joined = analysis.inside_words
    wanted = [w for sentence in analysis.sentences(needle) for clause in sentence for w in clause]
    if not wanted:
        return MarkerMatch(False, "no word in it")
    if any_form:
        wanted = analysis.forms(wanted)
    negators = _negators(analysis)
    negated = False
    for sentence in analysis.sentences(reply):
        compared = [analysis.forms(clause) for clause in sentence] if any_form else sentence
        for taken in _occurrences(compared, wanted, joined):
            if not _negated(sentence, taken, negators, joined):
                return MarkerMatch(True)
            negated = True
    return MarkerMatch(False, NEGATED if negated else "")


def unread_negations(scenarios: Sequence[Scenario]) -> list[str]:
    """One line per language whose negations a marker cannot be checked against (no negator
    lexicon): its scenarios' markers count even in a negated sentence, said before the run."""
    unread: dict[str, list[str]] = {}
    for scenario in scenarios:
        markers = scenario.success.reply_contains or scenario.success.reply_contains_any_form
        if markers and analyzer(scenario.language).lexicon is None:
            unread.setdefault(scenario.language, []).append(scenario.task_id)
    lines = []
    for code, tasks in unread.items():
        named = ", ".join(tasks[:3]) + (f" and {len(tasks) - 3} more" if len(tasks) > 3 else "")
        name = analyzer(code).language.name
        lines.append(
            f"{name} ({code}) has no negator lexicon: reply_contains of {named} is matched without "
            "reading negation (a marker in a negated sentence still counts); a rubric reads the meaning"
        )
    return lines


def holds(reply: str, needle: str, language: str, any_form: bool = False) -> bool:
    return match_marker(reply, needle, language, any_form).held


def missing_strings(
    reply: str | None, strings: Sequence[str], language: str, any_form: bool = False
) -> list[str]:
    """The markers the final reply does not hold, each with why when it is not plain absence
    (all of them when there is no reply)."""
    missing = []
    for needle in strings:
        found = MarkerMatch(False) if reply is None else match_marker(reply, needle, language, any_form)
        if not found.held:
            missing.append(f"{needle} ({found.why})" if found.why else needle)
    return missing


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


__all__ = [
    "InvalidJudgeOutput",
    "holds",
    "match_marker",
    "missing_strings",
    "parse_rubric_verdict",
    "render_rubric_request",
]
