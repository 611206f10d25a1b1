"""The claim judge through `rag-eval run`, against the tests' Messages-API server: a Python agent
of the tests' own whose answers sometimes add a claim no context states. Every case's
claim_precision is the share of its supported rows in `answer_claims`, citation support the
share of its cited claims whose citation holds, a case with an unsupported claim is diagnosed
hallucination (and only such a case), and `rag-eval explain` names the claim."""

import dagster as dg
import pandas as pd
import pytest
import yaml

from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline_tests.support import REPO_ROOT, SHARED_HOTPOTQA
from rag_eval_pipeline_tests.support.cli import rag_eval
from stand_ins.anthropic_api import FakeAnthropic

SAMPLE = 16
JUDGE = "claims:claude-sonnet-4-6"


@pytest.mark.slow  # two whole runs with an LLM judge (the tests' own server)
def test_claims_are_stored_scored_and_name_the_hallucination(tmp_path):
    agent = {
        "name": "mixer",
        "provider": "python",
        "target": "rag_eval_pipeline_tests.agents.claims_agent:answer",
    }
    config = tmp_path / "rag_eval.yaml"
    config.write_text(
        yaml.safe_dump(
            {"dataset": {"source": str(SHARED_HOTPOTQA), "sample_size": SAMPLE}, "answer_models": [agent]},
            sort_keys=False,
        )
    )
    home = ["--config", str(config), "--dagster-home", str(tmp_path / "home")]
    with FakeAnthropic() as claude:
        env = {
            "PYTHONPATH": str(REPO_ROOT),
            "EXAMPLE_AGENT_DATA": str(SHARED_HOTPOTQA),
            "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": claude.url,
        }
        run = rag_eval(*home, "run", "--judges", f"reference,{JUDGE}", cwd=tmp_path, env=env)
        assert run.returncode == 0, run.stderr
        calls = len(claude.requests)
        again = rag_eval(*home, "run", "--judges", f"reference,{JUDGE}", cwd=tmp_path, env=env)
        assert again.returncode == 0, again.stderr
        assert len(claude.requests) == calls  # every judge call answered from the cache
    instance = open_instance(str(tmp_path / "home"))
    claims: pd.DataFrame = load_asset(instance, "answer_claims", "mixer")
    scores: pd.DataFrame = load_asset(instance, "judge_scores", "mixer")
    judged = scores[scores["judge_id"] == JUDGE].set_index("qid")
    reference = scores[scores["judge_id"] == "reference"].set_index("qid")
    assert set(claims["qid"]) <= set(judged.index) and len(claims) >= SAMPLE
    hallucinated = set()
    for qid, rows in claims.groupby("qid"):
        assert judged.loc[qid, "claim_precision"] == pytest.approx(rows["supported"].mean())
        cited = rows[rows["cited_passage"] != ""]
        if len(cited):
            assert judged.loc[qid, "citation_support"] == pytest.approx(
                cited["citation_supports"].astype(bool).mean()
            )
        if not rows["supported"].all():
            hallucinated.add(qid)
    assert hallucinated and set(claims["qid"]) - hallucinated  # both kinds occur
    assert {q for q in reference.index if reference.loc[q, "diagnosis"] == "hallucination"} == hallucinated
    assert judged["claim_recall"].notna().all()  # every case has a reference answer
    qid = sorted(hallucinated)[0]
    claim = claims[(claims["qid"] == qid) & ~claims["supported"].astype(bool)]["claim"].iloc[0]
    shown = rag_eval(*home, "explain", qid, "--model", "mixer", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "claim [UNSUPPORTED" in shown.stdout and claim in shown.stdout
    record = instance.fetch_materializations(dg.AssetKey("judge_scores"), limit=1).records[0]
    worst = {
        value.value.split("- case: ", 1)[1].split("\n", 1)[0]: value.value  # the entry's whole id
        for key, value in record.asset_materialization.metadata.items()
        if key.startswith("mixer worst case ")
    }
    drilled = hallucinated & set(worst)
    assert drilled  # a hallucinated case among the worst: its drill-down names the claim
    assert all("unsupported claim:" in worst[q] for q in drilled)
    assert not any("unsupported claim:" in worst[q] for q in set(worst) - hallucinated)
    # the claims judge's own figures in each case's entry, beside the other judges' scores
    assert all("claim_precision" in worst[q] and "claim_recall" in worst[q] for q in worst)
    assert all("- language: en" in worst[q] for q in worst)
    listed = instance.fetch_materializations(dg.AssetKey("answer_claims"), limit=1).records[0]
    said = listed.asset_materialization.metadata
    assert said["claims"].value == len(claims)
    assert said["unsupported_cases"].value == len(hallucinated)
    # the claims themselves, readable on the asset's page: an unsupported one first, named
    readable = said["claims of mixer"].value
    first_unsupported = claims[~claims["supported"].astype(bool)].iloc[0]
    assert "| NO |" in readable.splitlines()[2] and first_unsupported["claim"][:40] in readable
    report = (tmp_path / "home" / "storage" / "artifacts" / "eval_report.html").read_text()
    assert '<li class="claim unsupported"><mark>unsupported</mark>' in report
    summary = load_asset(instance, "metric_summary", "mixer")
    assert {"claim_precision", "claim_recall", "citation_support"} <= set(summary["metric"])


def test_claim_scores_and_the_diagnosis_they_decide_by_hand():
    from rag_eval_pipeline.judges.claims import AnswerClaim, ReferenceClaim, claim_scores
    from rag_eval_pipeline.metrics.diagnosis import diagnose

    def claim(supported: int, cited: int = 0, holds: int = 0) -> AnswerClaim:
        return AnswerClaim(
            claim="c",
            supported=supported,
            passage=supported,
            cited=cited,
            citation_supports=holds,
            reason="r",
        )

    scores = claim_scores([claim(1, 1, 1), claim(0, 2, 0), claim(1)], [ReferenceClaim(claim="t", stated=1)])
    assert scores == {"claim_precision": pytest.approx(2 / 3), "claim_recall": 1.0, "citation_support": 0.5}
    assert claim_scores([], None) == {"claim_precision": None, "claim_recall": None, "citation_support": None}
    # claims decide hallucination where they exist: an unsupported one, whatever faithfulness says
    assert diagnose(1.0, 1.0, 1.0, unsupported_claims=1) == "hallucination"
    assert diagnose(1.0, 0.0, 1.0, unsupported_claims=0) == "ok"
    assert diagnose(1.0, 0.0, 1.0) == "hallucination"  # without claims, the judge's faithfulness
