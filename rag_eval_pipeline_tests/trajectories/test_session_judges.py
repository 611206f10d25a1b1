"""Session judges through the real `anthropic` SDK against the tests' Messages API: one call per
session with the whole conversation and its tool calls, goal completion, turn relevancy and
knowledge retention (and the trajectory's quality when asked) per session and in the summary;
a second run pays for nothing."""

import json

import yaml

from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.trajectories.support_agent import write_files
from stand_ins.anthropic_api import FakeAnthropic

JUDGE = "claude-haiku-4-5"


def test_each_session_is_judged_once_and_the_summary_holds_the_judges_means(tmp_path, capsys, monkeypatch):
    traces, reference = write_files(tmp_path)
    config = tmp_path / "rag_eval.yaml"
    section = {
        "traces": [traces.name],
        "reference": reference.name,
        "judges": [JUDGE],
        "trajectory_judge": True,
    }
    config.write_text(yaml.safe_dump({"trajectories": section}))
    args = [
        "--dagster-home",
        str(tmp_path / "home"),
        "--config",
        str(config),
        "trajectories",
        "--format",
        "json",
    ]
    with FakeAnthropic() as claude:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        code, out, err = in_process(capsys, *args)
        asked = list(claude.requests)
        assert code == 0, err
        again, out_again, err_again = in_process(capsys, *args)
        assert again == 0, err_again
        assert len(claude.requests) == len(asked)  # the second run asked nothing: every answer stored
    assert len(asked) == 18 and {r["tool_choice"]["name"] for r in asked} == {"record_session_verdicts"}
    refund = next(r["messages"][0]["content"] for r in asked if "A100" in r["messages"][0]["content"])
    assert '<tool_call name="issue_refund">{"amount":25,"order_id":"A100"}' in refund
    assert refund.count("<turn number=") == 2 and "<expected_outcome>" in refund
    document = json.loads(out)
    sessions = {s["session_id"]: s["judges"][JUDGE] for s in document["sessions"]}
    # the sessions whose agent gave up in the last turn: not done, and that reply is off its turn
    gave_up = {"stock-3", "policy-3"}
    for session_id, verdicts in sessions.items():
        if session_id in gave_up:
            assert verdicts["goal_completion"] < 1 and verdicts["turn_relevancy"] == 0.5, session_id
        else:
            assert verdicts["goal_completion"] == 1 and verdicts["turn_relevancy"] == 1, session_id
    assert sessions["account-2"]["trajectory_quality"] == 0.5  # a failed call, retried
    assert sessions["refund-1"]["trajectory_quality"] == 1
    summary = {
        (r["judge_id"], r["metric"]): r for r in document["agent_versions"]["support-agent-2.1"]["summary"]
    }
    assert summary[(JUDGE, "goal_completion")]["n"] == 18
    assert summary[(JUDGE, "turn_relevancy")]["mean"] == (16 + 2 * 0.5) / 18
    again_sessions = json.loads(out_again)["sessions"]
    for first, second in zip(document["sessions"], again_sessions):
        assert {k: v for k, v in first.items() if k != "judges"} == {
            k: v for k, v in second.items() if k != "judges"
        }
        verdicts = (
            "goal_completion",
            "turn_relevancy",
            "knowledge_retention",
            "trajectory_quality",
            "reasons",
        )
        assert [first["judges"][JUDGE][k] for k in verdicts] == [second["judges"][JUDGE][k] for k in verdicts]


def test_people_label_sessions_through_the_review_queue_and_the_session_judge_is_measured(
    tmp_path, capsys, monkeypatch
):
    """`rag-eval review export --model trajectories:<version>` queues the judged sessions (the
    conversation, the replies, each tool call); the labels people give come back through `review
    import`, and the session judge's agreement with them is measured beside the answer judges'."""
    traces, reference = write_files(tmp_path)
    config = tmp_path / "rag_eval.yaml"
    section = {"traces": [traces.name], "reference": reference.name, "judges": [JUDGE]}
    config.write_text(yaml.safe_dump({"trajectories": section, "review": {"folder": "review"}}))
    base = ["--dagster-home", str(tmp_path / "home"), "--config", str(config)]
    with FakeAnthropic() as claude:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        code, out, err = in_process(capsys, *base, "trajectories", "--format", "json")
    assert code == 0, err
    verdicts = {s["session_id"]: s["judges"][JUDGE] for s in json.loads(out)["sessions"]}
    model = "trajectories:support-agent-2.1"
    code, out, err = in_process(
        capsys,
        *base,
        "review",
        "export",
        "--model",
        model,
        "--n",
        "18",
        "--strategy",
        "random",
        "--name",
        "q",
    )
    assert code == 0, err
    assert "18 cases of trajectories:support-agent-2.1" in out and "goal_completion" in out
    page = (tmp_path / "review" / "q.html").read_text()
    assert "[turn 2] Please refund it." in page and "turn 2: issue_refund" in page
    rows = [json.loads(line) for line in (tmp_path / "review" / "q.jsonl").read_text().splitlines()]
    assert {r["metric"] for r in rows} == {"goal_completion", "turn_relevancy", "knowledge_retention"}
    # a reviewer who agrees with the judge on every session but two, where the goal was not met
    for row in rows:
        label = verdicts[row["qid"]][row["metric"]]
        if row["metric"] == "goal_completion" and row["qid"] in ("refund-1", "stock-1"):
            label = 0.0
        row.update(label=label, reviewer="ana")
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = in_process(capsys, *base, "review", "import", str(labels))
    assert code == 0, err
    table = out.split("judges against people")[1]
    goal = next(line for line in table.splitlines() if f"| {JUDGE} | goal_completion |" in line)
    cells = [c.strip() for c in goal.strip("|").split("|")]
    assert cells[2] == "18" and float(cells[3]) == round(16 / 18, 3)  # n, accuracy
    retention = next(line for line in table.splitlines() if f"| {JUDGE} | knowledge_retention |" in line)
    assert float([c.strip() for c in retention.strip("|").split("|")][3]) == 1
    # a label on a session no trace holds is refused, by file and line
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**rows[0], "qid": "ghost-1"}) + "\n")
    code, out, err = in_process(capsys, *base, "review", "import", str(bad))
    assert code == 2 and "case 'ghost-1' is not among trajectories:support-agent-2.1's evaluated cases" in err
