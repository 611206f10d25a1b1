"""The claim judge (``claims:<LLM>``): an answer split into atomic claims, each checked against
the contexts the answer was given from and against the passage it cites (RAGChecker's claim
precision, ALCE's citation support), and the reference answer's claims checked against the
answer (claim recall). Two pure halves around the calls, as every LLM judge: ``render_*`` and
the pydantic models the forced tools must fill; the claims themselves go to ``answer_claims``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from rag_eval_pipeline.judges.base import JudgeCase, JudgeOutcome, case_context
from rag_eval_pipeline.judges.engine import InvalidJudgeOutput, LLMJudge, parse_tool_output, rubric_request
from rag_eval_pipeline.language.prompts import judge_clause
from rag_eval_pipeline.llm.client import FatalLLMError, LLMCallError, LLMRequest, Tool
from rag_eval_pipeline.metrics.reference import is_abstention

CLAIMS_PROMPT_VERSION = "claims-v1"
CLAIM_METRICS = ("claim_precision", "claim_recall", "citation_support")
# without a reference answer there are no reference claims to recall
CLAIM_REFERENCE_FREE_METRICS = ("claim_precision", "citation_support")
CLAIMS_KEY = "claims"  # the rationale entry holding the claims (what answer_claims reads)


class AnswerClaim(BaseModel):
    claim: str
    supported: Literal[0, 1]
    passage: int = Field(ge=0, description="the passage that states it; 0 when none does")
    cited: int = Field(ge=0, description="the passage the answer cites for it; 0 when it cites none")
    citation_supports: Literal[0, 1] = Field(description="1 when the cited passage states it")
    reason: str


class AnswerClaims(BaseModel):
    claims: list[AnswerClaim]


class ReferenceClaim(BaseModel):
    claim: str
    stated: Literal[0, 1]


class ReferenceClaims(BaseModel):
    claims: list[ReferenceClaim] = Field(min_length=1)


def _tool(name: str, description: str, model: type[BaseModel]) -> Tool:
    return Tool(name=name, description=description, input_schema=model.model_json_schema())


CLAIMS_TOOL = _tool("record_answer_claims", "Record each claim of the answer with its checks.", AnswerClaims)
REFERENCE_TOOL = _tool(
    "record_reference_claims", "Record each claim of the reference answer.", ReferenceClaims
)

CLAIMS_SYSTEM = (
    "You check the claims of an answer given by a retrieval-augmented system. Report only "
    "through the tool you are given."
)


def cited_passages(case: JudgeCase) -> list[int]:
    """The numbers of the passages the answer cites (by the titles its citations name)."""
    cited = set(case.cited_titles or ())
    return [n for n, hit in enumerate(case.passages, start=1) if hit.title in cited]


def render_claims(model: str, case: JudgeCase) -> LLMRequest:
    cites = cited_passages(case)
    citations = ", ".join(f"[{n}]" for n in cites) if cites else "none"
    return rubric_request(
        model,
        CLAIMS_SYSTEM,
        "Split the answer into atomic, self-contained claims (no pronouns; an answer that claims "
        "nothing has none). For each claim: supported 1 if the numbered passages state it, else 0; "
        "passage, the number of the passage that states it (0 if none); cited, the number of the "
        "cited passage the answer attaches to it (0 if it cites none for it); citation_supports 1 "
        "if that cited passage states the claim, else 0; and a one-sentence reason.\n\n"
        f"{case_context(case.question, None, case.passages, case.answer, case.language)}\n"
        f"<citations>{citations}</citations>",
        1500,
        CLAIMS_TOOL,
    )


def render_reference_claims(model: str, case: JudgeCase) -> LLMRequest:
    return rubric_request(
        model,
        CLAIMS_SYSTEM,
        "Split the ground-truth answer (read together with the question) into atomic claims. For "
        "each, stated 1 if the answer states it, else 0.\n\n"
        f"<question>{case.question}</question>\n<ground_truth>{case.ground_truth}</ground_truth>\n"
        f"<answer>{case.answer}</answer>{judge_clause(case.language)}",
        800,
        REFERENCE_TOOL,
    )


def claim_scores(
    claims: Sequence[AnswerClaim], reference: Sequence[ReferenceClaim] | None
) -> dict[str, float | None]:
    """Claim precision (supported / claims), claim recall (reference claims the answer states /
    reference claims) and citation support (cited claims whose citation states them / cited
    claims); each absent where there is nothing to divide by."""
    cited = [c for c in claims if c.cited > 0]
    return {
        "claim_precision": sum(c.supported for c in claims) / len(claims) if claims else None,
        "claim_recall": sum(c.stated for c in reference) / len(reference) if reference else None,
        "citation_support": sum(c.citation_supports for c in cited) / len(cited) if cited else None,
    }


def claim_records(claims: Sequence[AnswerClaim], case: JudgeCase) -> list[dict[str, Any]]:
    """The claims as stored: each with the title of the passage that states it and of the one
    it cites ("" for none)."""

    def title(number: int) -> str:
        return case.passages[number - 1].title if 1 <= number <= len(case.passages) else ""

    return [
        {
            "claim": c.claim,
            "supported": bool(c.supported),
            "supporting_passage": title(c.passage),
            "cited_passage": title(c.cited),
            "citation_supports": bool(c.citation_supports) if c.cited > 0 else None,
            "reason": c.reason,
        }
        for c in claims
    ]


class ClaimsLLMJudge(LLMJudge):
    """Claim precision, claim recall and citation support, with every claim kept."""

    kind = "claims"
    metrics = CLAIM_METRICS
    reference_free_metrics = CLAIM_REFERENCE_FREE_METRICS
    prompt_version = CLAIMS_PROMPT_VERSION

    async def judge(self, case: JudgeCase) -> JudgeOutcome:
        caller = self._caller(case)
        try:
            claims: list[AnswerClaim] = []
            if not is_abstention(case.answer, language=case.language):  # an abstention claims nothing
                found = await caller.ask(
                    render_claims(self.model, case), lambda r: parse_tool_output(r, AnswerClaims)
                )
                claims = found.claims
            reference = None
            if case.ground_truth is not None:
                recalled = await caller.ask(
                    render_reference_claims(self.model, case), lambda r: parse_tool_output(r, ReferenceClaims)
                )
                reference = recalled.claims
        except FatalLLMError:
            raise
        except (InvalidJudgeOutput, LLMCallError) as err:
            return JudgeOutcome(
                {}, usage=caller.usage, cost_usd=caller.cost, error=f"{type(err).__name__}: {err}"
            )
        rationales = {CLAIMS_KEY: json.dumps(claim_records(claims, case))}
        return JudgeOutcome(claim_scores(claims, reference), rationales, caller.usage, caller.cost)


CLAIM_COLUMNS = [
    "qid", "repeat", "answer_config", "judge_id", "claim", "supported", "supporting_passage",
    "cited_passage", "citation_supports", "reason",
]  # fmt: skip


def claims_of(rationales: object) -> list[dict[str, Any]]:
    """The claims a claim judge stored in a score row's rationales (none for any other row)."""
    if not isinstance(rationales, str):
        return []
    return json.loads(json.loads(rationales).get(CLAIMS_KEY, "[]"))


def claims_table(judge_scores: Any) -> Any:
    """``answer_claims``: one row per claim a claim judge found, read from its rationales (the
    scores and the claims come from the same calls, so they always agree); of a judge asked
    several times per case, the claims of its first asking."""
    import pandas as pd

    rows = []
    first = judge_scores["judge_repeat"] == 0 if "judge_repeat" in judge_scores else True
    judged = judge_scores[(judge_scores["judge_kind"] == "claims") & (judge_scores["status"] == "ok") & first]
    for case in judged.to_dict(orient="records"):
        for claim in claims_of(case.get("rationales")):
            rows.append(
                {
                    "qid": case["qid"],
                    "repeat": int(case.get("repeat", 0) or 0),
                    "answer_config": case["answer_config"],
                    "judge_id": case["judge_id"],
                    **claim,
                }
            )
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


def unsupported_claims(judge_scores: Any) -> dict[tuple[str, int], list[str]]:
    """Each case's unsupported claims, by (qid, repeat), where a claim judge read the case."""
    table = claims_table(judge_scores)
    unsupported: dict[tuple[str, int], list[str]] = {}
    for row in table.itertuples():
        unsupported.setdefault((row.qid, row.repeat), [])
        if not row.supported:
            unsupported[(row.qid, row.repeat)].append(row.claim)
    return unsupported
