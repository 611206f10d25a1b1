"""`rag-eval simulate` against the tests' own conversational agent over HTTP: scripted users
whose successes per trial are known (task_success 1, 2/3, 0; pass^1..3 = 0.5556, 0.4444,
0.3333), every stop reason stored, a second run making no agent call (cached) unless --rerun;
Spanish and Chinese scenarios; bad lines, a timeout, max turns, a loop and a goal leak each said
in one line while the other sessions are scored; an LLM user through the tests' Messages API."""

import json
import urllib.request
from pathlib import Path

import pytest
import yaml

from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.trajectories import conversational_agent
from stand_ins.anthropic_api import FakeAnthropic

REFUND_CALLS = [
    {"name": "lookup_order", "arguments": {"order_id": "A100"}},
    {"name": "issue_refund", "arguments": {"order_id": "A100"}, "arg_match": "subset"},
]
GOLDEN_SCENARIOS = [
    {
        "task_id": "refund",
        "persona": "a customer in a hurry",
        "goal": "Get a refund for order A100",
        "known_info": {"order_id": "A100"},
        "user_turns": ["Hi, I need a refund for my last order.", "It is A100.", "Thanks! ###STOP###"],
        "success": {"expected_tool_calls": REFUND_CALLS, "reply_contains": ["refund issued", "A100"]},
    },
    {
        "task_id": "address",
        "goal": "Change the delivery address to 12 Rose Street",
        "user_turns": ["I moved and need to change my delivery address.", "12 Rose Street.", "Great, thank you. ###STOP###"],
        "success": {
            "expected_tool_calls": [{"name": "update_address", "arguments": {"address": "12 Rose Street"}}],
            "reply_contains": ["12 Rose Street"],
        },
    },
    {
        "task_id": "cancel",
        "goal": "Cancel order B7 before it ships",
        "user_turns": ["I need to cancel something I bought.", "The order is B7.", "Alright. ###STOP###"],
        "success": {"expected_tool_calls": [{"name": "cancel_order", "arguments": {"order_id": "B7"}}],
                    "reply_contains": ["B7 has been cancelled"]},
    },
]  # fmt: skip


def _lines(rows: list) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows)


@pytest.fixture(scope="module")
def agent():
    server, state = conversational_agent.serve()
    yield f"http://127.0.0.1:{server.server_address[1]}/chat", state
    server.shutdown()


def _requests(url: str) -> int:
    with urllib.request.urlopen(url) as response:
        return json.load(response)["requests"]


def _config(folder: Path, url: str, **simulation) -> Path:
    config = folder / "rag_eval.yaml"
    section = {"tool_calls": "$.result.steps[*]", **simulation}
    config.write_text(yaml.safe_dump({"answer_models": [conversational_agent.entry(url)], "simulation": section}))
    return config


def _simulate(capsys, folder: Path, config: Path, *args: str) -> tuple[int, dict, str]:
    code, out, err = in_process(
        capsys, "--dagster-home", str(folder / "home"), "--config", str(config), "simulate",
        "--agent", "support", "--format", "json", *args,
    )  # fmt: skip
    return code, json.loads(out) if out.strip().startswith("{") else {}, err


def _golden_runs(capsys, url: str, folder: Path) -> list[tuple[int, dict, str, int]]:
    """Three scripted scenarios, three trials each, run twice, then once more with --rerun; each
    with the requests the agent itself counted."""
    scenarios = folder / "scenarios.jsonl"
    scenarios.write_text(_lines(GOLDEN_SCENARIOS))
    config = _config(folder, url)
    runs = []
    for extra in ((), (), ("--rerun",)):
        before = _requests(url)
        code, document, err = _simulate(capsys, folder, config, "--scenarios", str(scenarios), *extra)
        runs.append((code, document, err, _requests(url) - before))
    return runs


def test_task_success_pass_hat_k_and_a_second_run_that_asks_the_agent_nothing(agent, tmp_path, capsys):
    golden = _golden_runs(capsys, agent[0], tmp_path)
    code, document, err, asked = golden[0]
    assert code == 0, err
    sessions = {s["session_id"]: s for s in document["sessions"]}
    assert len(sessions) == 9 and asked == 18  # two agent turns a session
    by_task: dict[str, list[bool]] = {}
    for session in document["sessions"]:
        by_task.setdefault(session["task_id"], []).append(session["task_success"])
        assert session["stop_reason"] == "user_stop" and session["turns"] == 2
    assert {t: sum(v) / len(v) for t, v in by_task.items()} == pytest.approx({"refund": 1, "address": 2 / 3, "cancel": 0})
    assert sessions["address-trial-2"]["task_success"] is False
    assert sessions["address-trial-2"]["reply_missing"] == "12 Rose Street"
    assert sessions["refund-trial-1"]["match_unordered"] is True and sessions["refund-trial-1"]["tool_call_f1"] == 1
    assert sessions["cancel-trial-1"]["tool_call_f1"] == 0
    assert {k: round(v, 4) for k, v in document["pass_hat_k"].items()} == {"1": 0.5556, "2": 0.4444, "3": 0.3333}
    # the user's closing words before ###STOP### are kept as the last message
    assert sessions["refund-trial-1"]["transcript"][-1] == {"role": "user", "content": "Thanks!"}
    assert document["calls"]["agent_calls"] == 18 and document["simulator_faults"] == 0

    # a second run asks the agent nothing (its own count), unless asked to re-run
    first, again, rerun = golden
    assert again[0] == 0 and again[3] == 0  # the agent's own count: no request
    assert again[1]["calls"] == {"agent_calls": 0, "agent_cached": 18, "user_calls": 0, "user_cached": 0}
    assert again[1]["pass_hat_k"] == first[1]["pass_hat_k"]
    assert [s["transcript"] for s in again[1]["sessions"]] == [s["transcript"] for s in first[1]["sessions"]]
    assert rerun[0] == 0 and rerun[3] == 18 and rerun[1]["calls"]["agent_calls"] == 18
    assert rerun[1]["pass_hat_k"] == first[1]["pass_hat_k"]  # asked again, answered alike


def test_the_table_shows_each_scenario_and_the_worst_transcript_and_a_gate_fails(agent, tmp_path, capsys):
    url, _ = agent
    scenarios = tmp_path / "scenarios.jsonl"
    scenarios.write_text(_lines(GOLDEN_SCENARIOS))
    config = _config(tmp_path, url, trials=3)
    code, out, err = in_process(
        capsys, "--dagster-home", str(tmp_path / "home"), "--config", str(config), "simulate",
        "--scenarios", str(scenarios), "--agent", "support", "--min", "task_success=0.8",
    )  # fmt: skip
    assert code == 1 and "error: simulation threshold failed: task_success" in err
    assert "| address | 3 | 2 | 0.667 | user_stop 3 |" in out
    assert "| pass^2 | 0.444 |" in out
    # the worst session's transcript: the reply that lost the address, and the closing words
    assert "the worst session\n\n**address-trial-2** — user_stop" in out
    assert "- **agent**: Which address did you mean? I could not update it.\n- **user** (last): Great, thank you." in out
