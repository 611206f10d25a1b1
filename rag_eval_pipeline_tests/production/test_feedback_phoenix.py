"""Users' feedback kept in a real Phoenix as span annotations on the agent's root spans: read
through its REST API beside the traces themselves, joined by span, counted against what was
written (a model's annotation is not a user's: left out, said)."""

import datetime as dt
import json

import httpx
import pytest
import yaml

from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.support.phoenix import phoenix_root_spans

pytestmark = pytest.mark.slow  # a real Phoenix

CASES = 6


def test_phoenix_annotations_are_users_feedback(phoenix, tmp_path, capsys):
    project = "feedback-bot"
    tracing = {"enabled": True, "preset": "phoenix", "endpoint": f"{phoenix}/v1/traces", "project": project}
    config = tmp_path / "rag_eval.yaml"
    config.write_text(yaml.safe_dump({"tracing": tracing}))
    args = ["--dagster-home", str(tmp_path / "agent-home"), "--config", str(config)]
    code, _, err = in_process(
        capsys, *args, "run", "--sample", str(CASES), "--models", "extractive-baseline"
    )  # the "agent": traced to Phoenix
    assert code == 0, err
    roots = phoenix_root_spans(phoenix, project, CASES)
    assert len(roots) == CASES
    day = min(dt.datetime.fromisoformat(r["start_time"]) for r in roots).astimezone(dt.timezone.utc)
    day = day.date().isoformat()
    thumbs = ["thumbs-up", "thumbs-down", "thumbs-up", "thumbs-down", "thumbs-up"]  # the 6th: none
    annotations = [
        {
            "span_id": root["context"]["span_id"],
            "name": "user_feedback",
            "annotator_kind": "HUMAN",
            "result": {"label": label, "explanation": f"said {label}"},
        }
        for root, label in zip(roots, thumbs)
    ]
    annotations.append(
        {
            "span_id": roots[5]["context"]["span_id"],
            "name": "user_feedback",
            "annotator_kind": "LLM",
            "result": {"label": "thumbs-down"},
        }
    )
    response = httpx.post(
        f"{phoenix}/v1/span_annotations", params={"sync": "true"}, json={"data": annotations}
    )
    assert response.status_code == 200, response.text

    production = {
        "sources": [{"kind": "phoenix", "url": phoenix, "project": project}],
        "start_date": "2026-11-01",
        "feedback": {
            "sources": [{"kind": "phoenix_annotations", "url": phoenix, "project": project}],
        },
    }
    config.write_text(yaml.safe_dump({"production": production}))
    args = ["--dagster-home", str(tmp_path / "eval-home"), "--config", str(config)]
    code, out, err = in_process(capsys, *args, "production", "feedback", "--day", day, "--format", "json")
    assert code == 0, err
    read = json.loads(out)
    assert (read["interactions"], read["with_feedback"], read["negative"]) == (CASES, 5, 2)
    (source,) = read["sources"]
    assert source["source"] == f"phoenix_annotations:{phoenix}/{project}"
    assert (source["records"], source["joined"], source["left_out"]) == (6, 5, {"annotator_kind LLM": 1})

    out_file = tmp_path / "regressions.jsonl"
    code, out, err = in_process(
        capsys, *args, "production", "promote", "--day", day, "--feedback", "negative", "--out", str(out_file)
    )
    assert code == 0, err
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert [r["note"] for r in rows] == ["said thumbs-down", "said thumbs-down"]
