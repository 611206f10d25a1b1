"""Users' feedback in three shapes through the CLI and a real Dagster instance: a boolean field of
the logs, a Langfuse score export over the same logs, Phoenix span annotations over a Phoenix
span export; read and joined (counts equal the files'), the judge against users with kappa equal
to scikit-learn's, in the CLI, the assets' metadata, the report and Prometheus; the thumbs-down
gate; and thumbs-down interactions promoted into a judgement list the next run evaluates."""

import json
import re

import dagster as dg
import pandas as pd
import pytest
import yaml
from sklearn.metrics import cohen_kappa_score

from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.support.production import LOG_COLUMNS, log_row, write_day

pytestmark = pytest.mark.slow  # whole production runs and an evaluation

DAY = "2026-11-28"
SAMPLE = "rag_eval_pipeline/data/samples/hotpotqa_dev_distractor_500.jsonl"


def _questions(count):
    from rag_eval_pipeline_tests.support import REPO_ROOT

    with (REPO_ROOT / SAMPLE).open() as handle:
        return [json.loads(line) for _, line in zip(range(count), handle)]


def _phoenix_trace(question, n, grounded):
    """A trace as Phoenix's span JSON holds it: a root CHAIN span and a RETRIEVER child."""
    row = log_row(question, DAY, 30 + n, grounded)
    trace, root = f"{n:032x}", f"{n + 1:016x}"
    start = f"{DAY}T10:{n:02d}:00+00:00"
    documents = {
        f"retrieval.documents.{i}.document.{key}": value
        for i, d in enumerate(row["retrieved"])
        for key, value in (("content", d["doc"]["content"]), ("id", d["doc"]["id"]))
    }
    return [
        {
            "name": "agent",
            "context": {"trace_id": trace, "span_id": root},
            "parent_id": None,
            "span_kind": "CHAIN",
            "start_time": start,
            "end_time": start,
            "attributes": {"input.value": row["request"]["query"], "output.value": row["reply"]["text"]},
        },
        {
            "name": "retrieve",
            "context": {"trace_id": trace, "span_id": f"{n + 100:016x}"},
            "parent_id": root,
            "span_kind": "RETRIEVER",
            "start_time": start,
            "end_time": start,
            "attributes": documents,
        },
    ]


@pytest.fixture
def project(tmp_path):
    """24 interactions of one day: 16 logged (8 with a boolean field, 8 scored in Langfuse with
    stars), 8 traced to Phoenix and annotated there; feedback mostly follows grounding, with a
    few users who disagree with the judge."""
    questions = _questions(24)
    grounded = [n % 3 != 0 for n in range(24)]
    liked = [g if n not in (4, 11, 19) else not g for n, g in enumerate(grounded)]  # 3 disagree
    rows = [log_row(q, DAY, n, grounded[n], "v1" if n % 2 else "v2") for n, q in enumerate(questions[:16])]
    for n in range(8):
        rows[n]["feedback"] = liked[n]
    write_day(tmp_path / "logs", DAY, rows)
    scores = [
        {
            "id": f"score-{n}",
            "name": "user-feedback",
            "value": 5 if liked[n] else 1,
            "dataType": "NUMERIC",
            "traceId": rows[n]["trace"],
            "comment": None if liked[n] else f"wrong answer {n}",
            "timestamp": f"{DAY}T12:00:00Z",
            "source": "API",
        }
        for n in range(8, 16)
    ]
    scores.append(
        {
            "name": "hallucination",
            "value": 0.2,
            "dataType": "NUMERIC",
            "traceId": rows[8]["trace"],
            "source": "EVAL",
        }
    )
    scores.append(
        {"name": "user-feedback", "value": 5, "dataType": "NUMERIC", "traceId": "a-trace-not-logged"}
    )
    (tmp_path / "langfuse-scores.json").write_text(json.dumps({"data": scores}))
    spans = [s for n in range(16, 24) for s in _phoenix_trace(questions[n], n, grounded[n])]
    (tmp_path / "spans").mkdir()
    (tmp_path / "spans" / "phoenix.json").write_text(json.dumps({"data": spans}))
    annotations = [
        {
            "span_id": f"{n + 1:016x}",
            "name": "user_feedback",
            "annotator_kind": "HUMAN",
            "result": {
                "label": "thumbs-up" if liked[n] else "thumbs-down",
                "explanation": None if liked[n] else f"no {n}",
            },
        }
        for n in range(16, 24)
    ]
    annotations.append(
        {"span_id": f"{17:016x}", "name": "qa_correctness", "annotator_kind": "LLM", "result": {"score": 0}}
    )
    (tmp_path / "annotations.jsonl").write_text("".join(json.dumps(a) + "\n" for a in annotations))
    production = {
        "sources": [
            {"kind": "logs", "path": "logs", "columns": LOG_COLUMNS},
            {"kind": "spans", "path": "spans"},
        ],
        "start_date": "2026-11-01",
        "sample_per_day": 24,
        "thresholds": {"faithfulness_lexical": 0.3},
        "feedback": {
            "sources": [
                {"kind": "field"},
                {
                    "kind": "langfuse",
                    "path": "langfuse-scores.json",
                    "names": ["user-feedback"],
                    "scale": {"range": [1, 5]},
                },
                {"kind": "phoenix_annotations", "path": "annotations.jsonl"},
            ],
            "max_negative_rate": 0.2,
        },
    }
    config = tmp_path / "rag_eval.yaml"
    config.write_text(yaml.safe_dump({"statistics": {"min_cases": 5}, "production": production}))
    expected = {"liked": liked, "negative": sum(not x for x in liked)}
    return tmp_path, ["--dagster-home", str(tmp_path / "home"), "--config", str(config)], expected


def test_feedback_in_three_shapes_against_the_judge_and_promoted(project, capsys):
    folder, args, expected = project
    code, out, err = in_process(capsys, *args, "production", "feedback", "--day", DAY, "--format", "json")
    assert code == 1, err  # the thumbs-down rate is above 0.2 (the gate holds without any judge)
    read = json.loads(out)
    assert (read["interactions"], read["with_feedback"], read["negative"]) == (24, 24, expected["negative"])
    sources = {s["source"].split(":")[0]: s for s in read["sources"]}
    # every record of each file accounted for: joined, joined to none, left out, unreadable
    assert (sources["field"]["records"], sources["field"]["joined"]) == (8, 8)
    assert sources["langfuse"] | {"source": None} == {
        "source": None,
        "records": 10,
        "read": 9,
        "joined": 8,
        "joined_to_none": 1,
        "interactions": 8,
        "left_out": {"name 'hallucination'": 1},
        "unreadable": 0,
    }
    assert (sources["phoenix_annotations"]["records"], sources["phoenix_annotations"]["joined"]) == (9, 8)
    assert sources["phoenix_annotations"]["left_out"] == {"annotator_kind LLM": 1}
    assert read["agreement"] == [] and read["unscored_days"] == [DAY] and "self-selected" in read["warning"]
    assert DAY in read["failed"] and "thumbs_down_rate (users) mean" in read["failed"][DAY]

    code, out, err = in_process(capsys, *args, "production", "run", "--day", DAY)
    assert code == 1, err
    assert re.search(r"\| users \| feedback_rate \| all \| 1\.000 \[0\.\d{3}, 1\.000\] \| 24 \|", out)
    negative = expected["negative"]
    assert f"{DAY} FAILED: thumbs_down_rate (users) mean {negative / 24:.3f} > threshold 0.2" in out

    code, out, err = in_process(capsys, *args, "production", "feedback", "--day", DAY, "--format", "json")
    read = json.loads(out)
    (row,) = read["agreement"]
    assert (row["judge"], row["metric"], row["n"]) == ("reference", "faithfulness_lexical", 24)
    scores = pd.read_parquet(next((folder / "home").rglob(f"production_scores/{DAY}.parquet")))
    judged = dict(zip(scores["qid"], scores["faithfulness_lexical"] >= 0.5))
    frame = pd.read_parquet(next((folder / "home").rglob(f"production_interactions/{DAY}.parquet")))
    users = (frame["feedback"] >= 0.5).astype(int).tolist()
    judge = [int(judged[i]) for i in frame["interaction_id"]]
    assert row["kappa"] == pytest.approx(cohen_kappa_score(users, judge))
    assert row["agreement"] == pytest.approx(sum(u == j for u, j in zip(users, judge)) / 24)
    assert row["ci_low"] < row["kappa"] <= row["ci_high"]
    assert (
        read["disagreements"]
        and read["disagreements"][0]["judge"] >= 0.5 > read["disagreements"][0]["feedback"]
    )

    code, out, _ = in_process(capsys, *args, "production", "feedback", "--day", DAY)
    assert "judges against users" in out and "warning: feedback comes from the users who chose" in out

    # the UI: the day's assets carry the feedback and the judge against users; the report and
    # Prometheus carry them too
    instance = dg.DagsterInstance.from_config(str(folder / "home"))
    summary = instance.fetch_materializations(dg.AssetKey("production_summary"), limit=1).records[0]
    metadata = summary.asset_materialization.metadata
    assert "| reference | faithfulness_lexical | 24 |" in metadata["judges_vs_users"].value
    assert "self-selected" in metadata["feedback_warning"].value
    assert "| topic | terms | size | with_feedback |" in metadata["users_by_topic"].value
    interactions = instance.fetch_materializations(dg.AssetKey("production_interactions"), limit=1).records[0]
    assert interactions.asset_materialization.metadata["feedback_interactions"].value == 24
    report = next((folder / "home").rglob("production_report.html")).read_text()
    assert "Judges against users" in report and "self-selected" in report
    assert f"Feedback per topic, the sample of {DAY} (most thumbs-down first)" in report
    prom = next((folder / "home").rglob("rag_eval_production.prom")).read_text()
    line = (
        'rag_eval_production_score{agent_version="all",day="2026-11-28",judge="users",'
        'metric="thumbs_down_rate"}'
    )
    assert f"{line} {negative / 24}" in prom

    # thumbs-down interactions become cases of a judgement list, which the next run evaluates
    out_file = folder / "regressions.jsonl"
    promote = [
        "production",
        "promote",
        "--day",
        DAY,
        "--feedback",
        "negative",
        "--with-contexts",
        "--out",
        str(out_file),
    ]
    code, out, err = in_process(capsys, *args, *promote)
    assert code == 0, err
    promoted = rf"promoted {negative} thumbs-down interactions of {DAY} .* holds {negative} cases"
    version = re.search(rf"{promoted} \(version (\w+)\)", out)[1]
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    answers = dict(zip(frame["interaction_id"], frame["answer"]))
    assert all(r["reference_pending"] and r["answer"] == "" and r["documents"] for r in rows)
    assert all(r["rejected_answer"] == answers[r["id"]] and "feedback:negative" in r["tags"] for r in rows)
    assert {r["note"] for r in rows} >= {"no 18", "wrong answer 9"}
    code, out, err = in_process(capsys, *args, *promote)  # again: nothing new, the list unchanged
    assert code == 0 and f"no new thumbs-down interaction of 2026-11-28 ({negative} already in" in out, err
    code, out, err = in_process(
        capsys, *args, "run", "--dataset", str(out_file), "--models", "extractive-baseline"
    )
    assert code == 0, err
    assert f"judgement list: {negative} cases, version {version}" in out
    assert f"note: {negative} of {negative} cases have no reference answer yet" in out
