"""`rag-eval simulate` against the tests' own conversational agent over HTTP: scripted users
whose successes per trial are known (task_success 1, 2/3, 0; pass^1..3 = 0.5556, 0.4444,
0.3333), every stop reason stored, a second run making no agent call (cached) unless --rerun;
Spanish and Chinese scenarios; bad lines, a timeout, max turns, a loop and a goal leak each said
in one line while the other sessions are scored; an LLM user through the tests' Messages API."""

import json
import urllib.request
from pathlib import Path

import dagster as dg
import pytest
import yaml

from rag_eval_pipeline.instance.home import open_instance
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
        "user_turns": [
            "I moved and need to change my delivery address.",
            "12 Rose Street.",
            "Great, thank you. ###STOP###",
        ],
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


def _config(folder: Path, url: str, version: str = "1.0", **simulation) -> Path:
    config = folder / "rag_eval.yaml"
    section = {"tool_calls": "$.result.steps[*]", **simulation}
    entry = conversational_agent.entry(url, version)
    config.write_text(yaml.safe_dump({"answer_models": [entry], "simulation": section}))
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


@pytest.mark.slow  # four runs of the command (about 10 s)
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
    assert {t: sum(v) / len(v) for t, v in by_task.items()} == pytest.approx(
        {"refund": 1, "address": 2 / 3, "cancel": 0}
    )
    assert sessions["address-trial-2"]["task_success"] is False
    assert sessions["address-trial-2"]["reply_missing"] == "12 Rose Street"
    assert (
        sessions["refund-trial-1"]["match_unordered"] is True
        and sessions["refund-trial-1"]["tool_call_f1"] == 1
    )
    assert sessions["cancel-trial-1"]["tool_call_f1"] == 0
    assert {k: round(v, 4) for k, v in document["pass_hat_k"].items()} == {
        "1": 0.5556,
        "2": 0.4444,
        "3": 0.3333,
    }
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

    # the agent version is a partition; its transcripts and the report's section are metadata
    instance = open_instance(str(tmp_path / "home"))
    assert instance.get_dynamic_partitions("agent_version") == ["1.0"]

    def metadata(asset: str) -> dict:
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=["1.0"]), limit=1
        ).records
        return records[0].asset_materialization.metadata

    transcripts = metadata("simulated_sessions")["transcripts"].value
    assert "**refund-trial-1** — user_stop" in transcripts and "- **user** (last): Thanks" in transcripts
    assert metadata("simulated_sessions")["stop_reasons"].value == "user_stop: 9"
    report = metadata("simulation_summary")["report"].value
    assert report.startswith("## support@1.0: 9 sessions") and "| pass^3 | 0.333 |" in report

    # build 2.0 fixed the address bug: its run beside 1.0's, paired trial by trial
    config = _config(tmp_path, agent[0], version="2.0")
    code, document, err = _simulate(
        capsys, tmp_path, config, "--scenarios", str(tmp_path / "scenarios.jsonl"), "--diff", "1.0"
    )
    assert code == 0, err
    assert {k: round(v, 4) for k, v in document["pass_hat_k"].items()} == {
        "1": 0.6667,
        "2": 0.6667,
        "3": 0.6667,
    }
    assert instance.get_dynamic_partitions("agent_version") == ["1.0", "2.0"]
    success = next(m for m in document["diff"]["metrics"] if m["metric"] == "task_success")
    assert (success["improved"], success["regressed"], success["n"]) == (1, 0, 9), success


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
    assert (
        "- **agent**: Which address did you mean? I could not update it.\n"
        "- **user** (last): Great, thank you." in out
    )


# the agent (its terse build): it refunds, updates the address in two sessions of three
# ("Your address could not be updated." in the third) and never cancels ("Please call us to
# cancel."); success is only what its replies say, in markers that share words with its refusals
TERSE_SCENARIOS = [
    {**GOLDEN_SCENARIOS[0], "success": {"reply_contains": ["refund issued", "A100"]}},
    {**GOLDEN_SCENARIOS[1], "success": {"reply_contains": ["ADDRESS-UPDATED"]}},
    {**GOLDEN_SCENARIOS[2], "success": {"reply_contains": "CANCELLED"}},  # one phrase, not a list
]


@pytest.mark.slow  # three runs of the command (about 10 s)
def test_markers_hold_as_written_so_refusals_that_share_their_words_fail(
    agent, tmp_path, capsys, monkeypatch
):
    url, _ = agent
    scenarios = tmp_path / "scenarios.jsonl"
    scenarios.write_text(_lines(TERSE_SCENARIOS))
    config = _config(tmp_path, url, version="terse")
    with FakeAnthropic() as claude:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        # a model given as the user of scripted scenarios: said in one line, and not asked
        args = ("--scenarios", str(scenarios), "--user", "claude-haiku-4-5")
        code, document, err = _simulate(capsys, tmp_path, config, *args)
        assert code == 0, err
        assert len(claude.requests) == 0
    notes = [line for line in err.splitlines() if "--user" in line]
    assert notes == [
        "note: --user claude-haiku-4-5 is not asked: every scenario has user_turns (refund, address, "
        "cancel) and plays its script (leave user_turns out of a scenario for the model to play its user)"
    ]
    by_task: dict[str, list[bool]] = {}
    for session in document["sessions"]:
        by_task.setdefault(session["task_id"], []).append(session["task_success"])
    assert {t: f"{sum(v)}/{len(v)}" for t, v in by_task.items()} == {
        "refund": "3/3", "address": "2/3", "cancel": "0/3",
    }  # fmt: skip
    pass_hat = {k: round(v, 4) for k, v in document["pass_hat_k"].items()}
    assert pass_hat == {"1": 0.5556, "2": 0.4444, "3": 0.3333}
    sessions = {s["session_id"]: s for s in document["sessions"]}
    assert sessions["address-trial-2"]["reply_missing"] == "ADDRESS-UPDATED (only in a negated clause)"
    assert sessions["cancel-trial-1"]["reply_missing"] == "CANCELLED"
    assert sessions["cancel-trial-1"]["transcript"][-2]["content"] == "Please call us to cancel."


MORE_SCENARIOS = [
    {"task_id": "reembolso", "language": "es", "goal": "Obtener el reembolso del pedido A100",
     "user_turns": ["Hola, quiero un reembolso.", "Es el pedido A100.", "Gracias ###STOP###"],
     # "reembolsos emitidos": other forms of the reply's "reembolso ... emitido", asked for by stems
     "success": {"reply_contains": ["A100"], "reply_contains_any_form": ["reembolsos emitidos"],
                 "expected_tool_calls": REFUND_CALLS}},
    {"task_id": "tuikuan", "language": "zh", "goal": "为订单A100办理退款",
     "user_turns": ["你好，我想退款。", "订单号是A100。", "谢谢 ###STOP###"],
     "success": {"reply_contains": ["退款", "A100"]}},
    {"task_id": "nogoal", "user_turns": ["hi"], "success": {"reply_contains": ["x"]}},
    {"task_id": "nosuccess", "goal": "Get help", "user_turns": ["hi"]},
    "not json at all",
    {"task_id": "slow", "goal": "Get a refund for order A100",
     "user_turns": ["I need a refund.", "It is A100.", "Thanks ###STOP###"],
     "success": {"reply_contains": ["refund issued"]}},
    {"task_id": "chatty", "goal": "Get a refund for order A100", "max_turns": 2,
     "user_turns": ["I need a refund.", "Hm.", "Hm?", "Ok ###STOP###"],
     "success": {"reply_contains": ["refund"]}},
    {"task_id": "leaky", "goal": "Get a refund for order A100",
     "user_turns": ["I want a refund for order A100 please", "Thanks ###STOP###"],
     "success": {"reply_contains": ["refund issued"]}},
    {"task_id": "loopy", "goal": "Get a refund for order A100",
     "user_turns": ["Hello?", "Hello?"], "success": {"reply_contains": ["refund"]}},
]  # fmt: skip


def test_other_languages_bad_lines_timeouts_max_turns_loops_and_leaks_each_in_one_line(
    agent, tmp_path, capsys
):
    url, _ = agent
    scenarios = tmp_path / "scenarios.jsonl"
    scenarios.write_text(_lines(MORE_SCENARIOS))
    config = _config(tmp_path, url)
    code, document, err = _simulate(capsys, tmp_path, config, "--scenarios", str(scenarios), "--trials", "1")
    assert code == 1  # a line was refused: said, and the others still ran
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: {scenarios}, line 3: goal is missing",
        f"error: {scenarios}, line 4: success is missing",
        f"error: {scenarios}, line 5: not JSON (Expecting value)",
    ]
    sessions = {s["task_id"]: s for s in document["sessions"]}
    assert set(sessions) == {"reembolso", "tuikuan", "slow", "chatty", "leaky", "loopy"}
    assert sessions["reembolso"]["task_success"] is True and sessions["reembolso"]["match_unordered"] is True
    assert sessions["tuikuan"]["task_success"] is True and sessions["tuikuan"]["tool_call_f1"] is None
    slow = sessions["slow"]
    assert (slow["stop_reason"], slow["turns"], slow["task_success"]) == ("agent_timeout", 1, False)
    assert f"turn 2: no response within {conversational_agent.TIMEOUT_S:g} s" in slow["stop_detail"]
    chatty = sessions["chatty"]
    assert (chatty["stop_reason"], chatty["turns"], chatty["task_success"]) == ("max_turns", 2, False)
    assert sessions["loopy"]["stop_reason"] == "loop" and sessions["loopy"]["simulator_fault"] == "loop"
    assert (
        sessions["leaky"]["simulator_fault"] == "goal_leak"
        and sessions["leaky"]["stop_reason"] == "user_stop"
    )
    assert document["simulator_faults"] == 2
    notes = [line for line in err.splitlines() if line.startswith("note:")]
    assert len(notes) == 4 and any("slow-trial-1 ended by agent_timeout" in n for n in notes)
    # the simulator's faults are left out of the agent's figures: 4 sessions, 2 of them successes
    summary = {r["metric"]: r for r in document["agent_versions"]["1.0"]["summary"]}
    assert summary["task_success"]["n"] == 4 and summary["task_success"]["mean"] == 0.5


@pytest.mark.slow  # two runs of the command with an LLM user (about 10 s)
def test_an_llm_user_through_the_messages_api_differs_by_trial_stops_and_reruns_free(
    agent, tmp_path, capsys, monkeypatch
):
    url, _ = agent
    scenarios = tmp_path / "scenarios.jsonl"
    scenarios.write_text(_lines([{
        "task_id": "llm-refund", "persona": "a polite retiree", "goal": "Get a refund for order A100",
        "known_info": {"order_id": "A100"},
        "success": {"expected_tool_calls": REFUND_CALLS, "reply_contains": ["A100"],
                    "rubric": "Refund issued for order A100."},
    }]))  # fmt: skip
    config = _config(tmp_path, url)
    haiku = "claude-haiku-4-5"
    args = ("--scenarios", str(scenarios), "--user", haiku, "--judge", haiku, "--session-judge", haiku)
    with FakeAnthropic() as claude:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        code, document, err = _simulate(capsys, tmp_path, config, *args)
        assert code == 0, err
        asked = list(claude.requests)
        before = _requests(url)
        again, document_again, err_again = _simulate(capsys, tmp_path, config, *args)
        assert again == 0, err_again
        assert len(claude.requests) == len(asked) and _requests(url) == before  # the re-run: 0 calls
    rubric = [r for r in asked if (r.get("tool_choice") or {}).get("name") == "record_rubric_verdict"]
    assert len(rubric) == 3 and "<rubric>Refund issued for order A100.</rubric>" in str(rubric[0])
    judged = [r for r in asked if (r.get("tool_choice") or {}).get("name") == "record_session_verdicts"]
    assert len(judged) == 3 and "<expected_outcome>Get a refund for order A100</expected_outcome>" in str(
        judged[0]
    )
    asked = [r for r in asked if r not in rubric and r not in judged]  # the simulated user's calls
    first_turns = [r for r in asked if len(r["messages"]) == 1]
    systems = [r["system"][0]["text"] for r in first_turns]
    assert len(first_turns) == 3 and len(set(systems)) == 3  # three trials, three conversations
    assert all(
        "<persona>a polite retiree</persona>" in s and "<goal>Get a refund for order A100</goal>" in s
        for s in systems
    )
    assert all(r["model"] == "claude-haiku-4-5" and r["temperature"] == 0.0 for r in asked)
    assert (
        len(asked) == 9
        and document["calls"]["user_calls"] == 9
        and document_again["calls"]["user_cached"] == 9
    )
    for session in document["sessions"]:
        assert session["stop_reason"] == "user_stop" and session["task_success"] is True
        assert session["rubric_passed"] is True
        # the stand-in judges by words: "get" of the goal is in no reply (3 of 4 words: 0.5), and
        # the first reply shares no word with its turn (1 of 2 turns relevant)
        verdicts = session["judges"][haiku]
        assert (verdicts["goal_completion"], verdicts["turn_relevancy"], verdicts["knowledge_retention"]) == (
            0.5, 0.5, 1.0,
        )  # fmt: skip
        # ###STOP### ended it, and the words before it are its last message
        assert session["transcript"][-1] == {"role": "user", "content": "Thank you, that is all."}
        assert session["transcript"][2]["content"] == "My order id is A100."
    assert document["pass_hat_k"] == {"1": 1.0, "2": 1.0, "3": 1.0}
    verdict_keys = ("goal_completion", "turn_relevancy", "knowledge_retention", "reasons")
    for again_session, session in zip(document_again["sessions"], document["sessions"]):
        # the same sessions and verdicts (what the stand-in bills a cached call may differ: which
        # call first wrote the prompt cache depends on the order the calls ran in)
        assert {k: v for k, v in again_session.items() if k != "judges"} == {
            k: v for k, v in session.items() if k != "judges"
        }
        assert [again_session["judges"][haiku][k] for k in verdict_keys] == [
            session["judges"][haiku][k] for k in verdict_keys
        ]


@pytest.mark.slow  # two runs of the command with an LLM user
def test_known_info_as_a_plain_string_is_what_the_llm_user_may_reveal(agent, tmp_path, capsys, monkeypatch):
    url, _ = agent
    scenarios = tmp_path / "scenarios.jsonl"
    scenarios.write_text(_lines([{  # tau-bench's form: the user's facts as one string
        "task_id": "plain", "goal": "Get a refund for order A100", "known_info": "order A100, paid 25 EUR",
        "success": {"reply_contains": ["refund", "issued", "A100"]},
    }]))  # fmt: skip
    config = _config(tmp_path, url)
    args = ("--scenarios", str(scenarios), "--user", "claude-haiku-4-5", "--trials", "2")
    with FakeAnthropic() as claude:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        code, document, err = _simulate(capsys, tmp_path, config, *args)
        assert code == 0, err
        asked = len(claude.requests)
        again, document_again, err_again = _simulate(capsys, tmp_path, config, *args)
        assert again == 0 and len(claude.requests) == asked, err_again  # the re-run: 0 calls
    assert "--user" not in err  # the model plays every scenario: nothing to say
    system = claude.requests[0]["system"][0]["text"]
    assert "<known_info>order A100, paid 25 EUR</known_info>" in system
    for session in document["sessions"]:
        user_turns = [m for m in session["transcript"] if m["role"] == "user"]
        assert user_turns[1]["content"] == "order A100, paid 25 EUR."
        assert session["task_success"] is True and session["stop_reason"] == "user_stop"
    # one call per user turn (the closing ###STOP### is a turn too), none on the re-run
    turns = sum(len([m for m in s["transcript"] if m["role"] == "user"]) + 1 for s in document["sessions"])
    assert asked == document["calls"]["user_calls"] == turns
    assert document_again["calls"]["user_calls"] == 0 and document_again["calls"]["user_cached"] == asked


def test_the_offline_example_runs_as_the_docs_say_with_a_python_agent(tmp_path, capsys, monkeypatch):
    """docs/trajectories.md's example: the scripted support desk as a Python callable, handed the
    message, the history and the session; refund and tracking succeed, cancelling never does."""
    from rag_eval_pipeline_tests.support import REPO_ROOT

    monkeypatch.chdir(REPO_ROOT)
    config = REPO_ROOT / "examples" / "simulation" / "rag_eval.yaml"
    code, out, err = in_process(
        capsys,
        "--dagster-home",
        str(tmp_path / "home"),
        "--config",
        str(config),
        "simulate",
        "--format",
        "json",
    )
    assert code == 0, err
    document = json.loads(out)
    success = {s["session_id"]: s["task_success"] for s in document["sessions"]}
    assert success == {
        f"{t}-trial-{n}": t != "cancel" for t in ("refund", "track", "cancel") for n in (1, 2, 3)
    }
    assert {k: round(v, 4) for k, v in document["pass_hat_k"].items()} == {
        "1": 0.6667,
        "2": 0.6667,
        "3": 0.6667,
    }
    refund = next(s for s in document["sessions"] if s["session_id"] == "refund-trial-1")
    assert (
        refund["made_calls"]
        == 'lookup_order({"order_id":"A100"}); issue_refund({"amount":25,"order_id":"A100"})'
    )


@pytest.mark.parametrize(
    ("scenario", "args", "said"),
    [
        ({"known_info": {}}, (), "scenario s has no user_turns: give --user MODEL"),
        (
            {"user_turns": ["hi"], "success": {"rubric": "polite"}},
            (),
            "scenario s has a rubric: give --judge MODEL",
        ),
        (
            {"user_turns": ["hi"]},
            ("--agent", "no-such-agent"),
            "--agent no-such-agent: no such entry in answer_models",
        ),
        (
            {"known_info": {}},
            ("--user", "claude-haiku-4-5"),
            "--user claude-haiku-4-5 needs ANTHROPIC_API_KEY",
        ),
        ({"user_turns": ["hi"]}, ("--tool-calls", "$[["), "simulate: "),
    ],
)
def test_what_makes_every_session_futile_is_one_line_before_any_run(
    scenario, args, said, tmp_path, capsys, monkeypatch
):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    scenarios = tmp_path / "scenarios.jsonl"
    scenarios.write_text(
        _lines([{"task_id": "s", "goal": "Get help", "success": {"reply_contains": ["x"]}, **scenario}])
    )
    config = _config(tmp_path, "http://127.0.0.1:9/chat")
    code, out, err = in_process(
        capsys, "--dagster-home", str(tmp_path / "home"), "--config", str(config), "simulate",
        "--scenarios", str(scenarios), "--agent", "support", *args,
    )  # fmt: skip
    assert code == 2 and err.startswith(f"error: {said}") and len(err.splitlines()) == 1, err
    assert not (tmp_path / "home").exists()  # nothing ran


def test_tool_calls_are_read_from_the_spans_the_agent_exports(agent, tmp_path, capsys):
    """No JSONPath to its calls: the agent's OTLP export (the session id on its root spans) says
    which tools each session called, matched by session."""
    url, state = agent
    state.traces = tmp_path / "agent-traces.jsonl"
    try:
        scenarios = tmp_path / "scenarios.jsonl"
        scenarios.write_text(_lines(GOLDEN_SCENARIOS[:1]))
        config = _config(tmp_path, url, tool_calls=None, traces=[state.traces.name])
        code, document, err = _simulate(
            capsys, tmp_path, config, "--scenarios", str(scenarios), "--trials", "2"
        )
    finally:
        state.traces = None
    assert code == 0, err
    for session in document["sessions"]:
        assert session["tool_calls_from"] == "spans" and session["task_success"] is True
        assert (
            session["made_calls"]
            == 'lookup_order({"order_id":"A100"}); issue_refund({"amount":25,"order_id":"A100"})'
        )


def test_an_agent_that_cannot_be_reached_fails_the_run_in_one_line(tmp_path, capsys):
    """Every conversation would fail alike: the run stops at the first, said once."""
    scenarios = tmp_path / "scenarios.jsonl"
    scenarios.write_text(_lines(GOLDEN_SCENARIOS))
    config = _config(tmp_path, "http://127.0.0.1:9/chat")
    code, document, err = _simulate(capsys, tmp_path, config, "--scenarios", str(scenarios))
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 1 and errors == [
        "error: 1.0: agent support cannot be reached at http://127.0.0.1:9/chat: ConnectError: "
        "All connection attempts failed"
    ]
    assert (
        document["sessions"] == []
        and document["agent_versions"]["1.0"]["error"] == errors[0][len("error: 1.0: ") :]
    )


@pytest.mark.slow  # a simulation with session judges, two gates, a queue and its labels (about 12 s)
def test_simulated_sessions_are_gated_and_reviewed_as_simulation_version(
    agent, tmp_path, capsys, monkeypatch
):
    """`gate --model simulation:VERSION` holds the stored simulation summary as `trajectories:`
    holds a traced one, and `review export --model simulation:VERSION` queues the judged
    simulated sessions; their labels come back through `review import` and measure the
    session judge beside the answer judges."""
    url, _ = agent
    scenarios = tmp_path / "scenarios.jsonl"
    scenarios.write_text(_lines(GOLDEN_SCENARIOS))
    haiku = "claude-haiku-4-5"
    config = tmp_path / "rag_eval.yaml"
    section = {
        "tool_calls": "$.result.steps[*]",
        "scenarios": str(scenarios),
        "agent": "support",
        "session_judges": [haiku],
        "thresholds": {"task_success": 0.8},
    }
    config.write_text(yaml.safe_dump({"answer_models": [conversational_agent.entry(url, "1.0")],
                                      "simulation": section, "review": {"folder": "review"}}))  # fmt: skip
    base = ("--dagster-home", str(tmp_path / "home"), "--config", str(config))
    with FakeAnthropic() as claude:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        code, out, err = in_process(capsys, *base, "simulate", "--format", "json")
    assert code == 1 and "simulation threshold failed: task_success" in err  # 5/9 < 0.8
    verdicts = {s["session_id"]: s["judges"][haiku] for s in json.loads(out)["sessions"]}
    assert len(verdicts) == 9

    # CI holds the stored summary later: the file's threshold, or one given
    code, out, err = in_process(capsys, *base, "gate", "--model", "simulation:1.0", "--min-n", "3")
    failed = next(line for line in out.splitlines() if line.startswith("| task_success |"))
    assert code == 1 and "| 0.556 |" in failed and "| 0.800 | FAIL" in failed, out
    assert "simulation:1.0: FAILED 1 gate(s)" in out
    code, out, err = in_process(
        capsys, *base, "gate", "--model", "simulation:1.0", "--min", "pass^1=0.5", "--min-n", "3"
    )
    assert code == 0 and "simulation:1.0: all gates passed" in out, out + err
    code, out, err = in_process(capsys, *base, "gate", "--model", "simulation:9.9", "--min", "pass^1=0.5")
    assert code == 2 and "9.9 is not an agent version here" in err and "rag-eval simulate" in err, err
    # no traced sessions of that version: said as such, not as the simulated ones
    code, out, err = in_process(capsys, *base, "gate", "--model", "trajectories:1.0", "--min", "x=1")
    assert code == 2 and "no trajectory_summary of 1.0 stored yet" in err, err

    code, out, err = in_process(
        capsys, *base, "review", "export", "--model", "simulation:1.0", "--n", "9",
        "--strategy", "random", "--name", "q",
    )  # fmt: skip
    assert code == 0, err
    assert "9 cases of simulation:1.0" in out and "goal_completion" in out
    page = (tmp_path / "review" / "q.html").read_text()
    assert "[turn 2] It is A100." in page and "turn 2: issue_refund" in page
    rows = [json.loads(line) for line in (tmp_path / "review" / "q.jsonl").read_text().splitlines()]
    assert {r["answer_model"] for r in rows} == {"simulation:1.0"}
    assert {r["metric"] for r in rows} == {"goal_completion", "turn_relevancy", "knowledge_retention"}
    for row in rows:  # a reviewer who agrees with the judge everywhere
        row.update(label=verdicts[row["qid"]][row["metric"]], reviewer="ana")
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = in_process(capsys, *base, "review", "import", str(labels))
    assert code == 0, err
    table = out.split("judges against people")[1]
    goal = next(line for line in table.splitlines() if f"| {haiku} | goal_completion |" in line)
    cells = [c.strip() for c in goal.strip("|").split("|")]
    assert cells[2] == "9" and float(cells[3]) == 1  # n, accuracy

    # a file without the simulation section cannot read those labels with their sessions: said
    bare = tmp_path / "bare.yaml"
    bare.write_text(yaml.safe_dump({"review": {"folder": "review"}}))
    code, out, err = in_process(
        capsys,
        "--dagster-home",
        str(tmp_path / "home"),
        "--config",
        str(bare),
        "review",
        "import",
        str(labels),
    )
    assert code == 2 and err.startswith("error: labels of simulation:1.0:") and "simulation section" in err


@pytest.mark.slow  # the real llama.cpp server plays the user (a few calls of about 2 s)
def test_the_real_local_model_plays_the_user_to_a_stored_end_and_a_rerun_asks_nothing(
    agent, tmp_path, capsys
):
    """SmolLM2-135M (`local:smollm2`, llama.cpp) as the simulated user: what it says is its own,
    so the test asserts what holds for any model: the session runs, ends by one of the stop
    reasons within max_turns, that reason is stored, and a re-run makes no call at all (a
    message cut off at the token limit, as this model's often are, is kept in the cache too)."""
    from rag_eval_pipeline.trajectories.simulation.conversation import StopReason

    url, _ = agent
    scenarios = tmp_path / "scenarios.jsonl"
    scenarios.write_text(_lines([{
        "task_id": "local-refund", "persona": "a customer", "goal": "Get a refund for order A100",
        "known_info": {"order_id": "A100"}, "max_turns": 2, "success": {"reply_contains": ["refund"]},
    }]))  # fmt: skip
    config = _config(tmp_path, url)
    args = ("--scenarios", str(scenarios), "--user", "local:smollm2", "--trials", "1")
    code, document, err = _simulate(capsys, tmp_path, config, *args)
    assert code == 0, err
    [session] = document["sessions"]
    assert session["stop_reason"] in {r.value for r in StopReason} and session["turns"] <= 2, session
    assert document["calls"]["user_calls"] >= 1 and document["calls"]["agent_calls"] == session["turns"]
    # a session the simulated user spoiled (it rambles past its token limit: cut off) is its fault
    assert document["simulator_faults"] == (session["simulator_fault"] is not None)
    instance = open_instance(str(tmp_path / "home"))
    stored = instance.get_latest_materialization_event(dg.AssetKey("simulated_sessions"))
    assert stored.asset_materialization.metadata["stop_reasons"].value == f"{session['stop_reason']}: 1"

    before = _requests(url)
    again, document_again, err_again = _simulate(capsys, tmp_path, config, *args)
    assert again == 0, err_again
    assert document_again["calls"] == {
        "agent_calls": 0,
        "agent_cached": document["calls"]["agent_calls"],
        "user_calls": 0,
        "user_cached": document["calls"]["user_calls"],
    }
    assert _requests(url) == before and document_again["sessions"][0]["transcript"] == session["transcript"]
