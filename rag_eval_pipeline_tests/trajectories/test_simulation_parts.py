"""The pure parts of simulated conversations: pass^k over task successes worked out by hand,
``reply_contains`` as a phrase as written outside negated clauses, in any language (and where
that still falls short), ``reply_contains_any_form`` by stems, the stop
marker, the goal-leak rule, scenario lines refused one by one, and the request template's
conversation fields."""

import json
import math
import unicodedata

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_eval_pipeline.answering.agents.calls import ConversationTurn
from rag_eval_pipeline.answering.agents.http import render_template
from rag_eval_pipeline.trajectories.simulation.scenarios import Scenario, read_scenarios
from rag_eval_pipeline.trajectories.simulation.success import holds
from rag_eval_pipeline.trajectories.simulation.tables import summarize_simulation
from rag_eval_pipeline.trajectories.simulation.users import leaks_goal, split_stop, trial_seed


def _scores(outcomes: dict[str, list[bool | None]], faults: dict[str, str] | None = None) -> pd.DataFrame:
    rows = []
    for task, trials in outcomes.items():
        for trial, success in enumerate(trials, start=1):
            session = f"{task}-trial-{trial}"
            rows.append(
                {"session_id": session, "task_id": task, "judge_id": "trajectory", "tool_call_f1": None,
                 "task_success": None if success is None else float(success), "succeeded": success,
                 "simulator_fault": (faults or {}).get(session)}
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_pass_hat_k_is_the_mean_over_tasks_of_c_choose_k_over_n_choose_k():
    summary = _scores({"a": [True] * 3, "b": [True, False, True], "c": [False] * 3})
    table = summarize_simulation(summary).set_index("metric")
    # per task C(c,k)/C(n,k): a 1,1,1; b 2/3, 1/3, 0; c 0,0,0
    assert [round(table.loc[f"pass^{k}", "mean"], 4) for k in (1, 2, 3)] == [0.5556, 0.4444, 0.3333]
    assert table.loc["task_success", "mean"] == pytest.approx(5 / 9) and table.loc["task_success", "n"] == 9
    assert table.loc["tool_call_f1", "n"] == 0 and table.loc["tool_call_f1", "note"] == "not measured"
    assert table.loc["simulator_faults", "n"] == 0


def test_sessions_the_simulator_spoiled_are_counted_and_left_out():
    scores = _scores(
        {"a": [True, False, True], "b": [False, False]}, {"a-trial-2": "loop", "b-trial-1": "goal_leak"}
    )
    table = summarize_simulation(scores).set_index("metric")
    assert table.loc["simulator_faults", "n"] == 2 and table.loc["simulator_faults", "mean"] == pytest.approx(
        2 / 5
    )
    assert table.loc["task_success", "n"] == 3 and table.loc["task_success", "mean"] == pytest.approx(2 / 3)
    # a: 2 of 2 valid trials; b: 0 of 1; pass^2 only over a (the tasks with two trials)
    assert table.loc["pass^1", "mean"] == pytest.approx(0.5) and table.loc["pass^2", "mean"] == pytest.approx(
        1.0
    )
    assert math.isclose(table.loc["pass^2", "n"], 1)


@pytest.mark.parametrize(
    ("language", "reply", "needle", "expected"),
    [
        ("en", "Your refund for order A100 has been issued.", "refund issued", True),  # in order
        ("en", "ＹＯＵＲ ＲＥＦＵＮＤ IS ISSUED", "refund issued", True),  # width and case folded
        ("en", "Your refunds were issued today", "Refund issued", False),  # another form: not as written
        ("en", "I issued no refund.", "refund issued", False),  # out of order (and negated)
        ("en", "Please call us to cancel.", "CANCELLED", False),  # a stem is not the word
        ("en", "Your address could not be updated.", "ADDRESS-UPDATED", False),  # negated
        ("en", "Your address has been updated (ADDRESS-UPDATED).", "ADDRESS-UPDATED", True),
        ("en", "No, no refund was issued.", "refund issued", False),  # "no" in the marker's clause
        ("en", "Refund issued, no further action is needed.", "refund issued", True),  # another clause
        ("en", "We couldn't update it. Your address is noted.", "address", True),  # another sentence
        ("en", "I cannot issue refunds.", "order A100", False),
        ("en", "Order 5 is on its way", "5", True),
        ("en", "Total 12.5 EUR, paid", "12.5 EUR", True),  # a decimal point ends no sentence
        ("es", "El reembolso de su pedido A100 ha sido emitido.", "reembolso", True),
        ("es", "No se ha emitido el reembolso.", "reembolso", False),
        ("de", "Die Rückerstattung wurde nicht veranlasst.", "Rückerstattung", False),
        ("ru", "Ваш заказ не отменён.", "отменён", False),
        ("ru", "Ваш заказ отменён.", "отменён", True),
        ("zh", "您的订单A100已退款。", "退款", True),
        ("zh", "很抱歉，我们无法取消订单。", "取消", False),  # 无法: a negator in the clause
        ("zh", "退款已完成，没有其他问题。", "退款已完成", True),  # the negator is in another clause
        ("ja", "ご注文A100の返金が完了しました。", "返金", True),
        ("ja", "返金できません。", "返金", False),  # the negation follows
        ("ko", "주문 A100의 환불이 완료되었습니다.", "환불", True),  # a particle is not part of a word
        ("ko", "환불이 완료되지 않았습니다.", "환불", False),
    ],
)
def test_reply_contains_holds_a_phrase_as_written_outside_negated_clauses(language, reply, needle, expected):
    assert holds(reply, needle, language) is expected


@pytest.mark.parametrize(
    ("language", "reply", "needle", "expected"),
    [
        ("en", "Your refunds were ISSUED today", "Refund issued", True),
        ("en", "Please call us to cancel.", "CANCELLED", True),  # asked for: a stem is enough
        ("en", "Your refund was not issued.", "refund issued", False),  # still never when negated
        ("es", "El reembolso de su pedido A100 ha sido emitido.", "reembolsos emitidos", True),
        ("fr", "Votre remboursement a été effectué.", "remboursements effectués", True),
        ("de", "Die Rückerstattungen für Bestellung A100 wurden veranlasst.", "Rückerstattung", True),
    ],
)
def test_reply_contains_any_form_compares_stems_only_where_a_scenario_asks(language, reply, needle, expected):
    assert holds(reply, needle, language, any_form=True) is expected


def test_where_reply_contains_still_falls_short():
    """Known limits, asserted so a change shows: a paraphrase is another phrase, a refusal
    without a negator is not read as one, and a negator elsewhere in the clause still counts."""
    assert not holds("We gave your money back.", "refunded", "en")  # a paraphrase is not found
    assert holds("We are unable to cancel; please call us.", "cancel", "en")  # "unable" is no negator
    assert not holds("Refund issued and nothing else is not needed.", "refund issued", "en")


WORD = st.sampled_from(["refund", "issued", "order", "a100", "your", "has", "been", "today", "address"])
NEGATOR = st.sampled_from(["not", "no", "never", "cannot", "couldn't"])


@settings(max_examples=80, deadline=None)
@given(
    before=st.lists(WORD, max_size=4), between=st.lists(WORD, max_size=3), after=st.lists(WORD, max_size=4)
)
def test_a_marker_holds_in_order_in_any_case_and_width_and_never_out_of_order(before, between, after):
    reply = " ".join([*before, "Refund", *between, "ISSUED", *after]) + "."
    assert holds(reply, "refund issued", "en")
    assert holds(unicodedata.normalize("NFKC", reply).upper(), "Refund Issued", "en")
    wide = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in reply)  # full-width forms
    assert holds(wide, "refund issued", "en")
    if not {"refund", "issued"} & {*before, *between, *after}:
        backwards = " ".join([*before, "issued", *between, "refund", *after]) + "."
        assert not holds(backwards, "refund issued", "en")


@settings(max_examples=80, deadline=None)
@given(
    before=st.lists(WORD, max_size=4),
    after=st.lists(WORD, max_size=4),
    negator=NEGATOR,
    where=st.integers(0, 2),
)
def test_a_negator_in_the_markers_clause_always_unholds_it_and_one_in_another_sentence_never(
    before, after, negator, where
):
    words = [*before, "refund", "issued", *after]
    at = [0, len(before) + 1, len(words)][where]  # before, between, after the marker's words
    negated = " ".join([*words[:at], negator, *words[at:]])
    assert not holds(negated + ".", "refund issued", "en")
    assert holds(f"{' '.join(words)}. {negator} {' '.join(after)}.", "refund issued", "en")


def test_the_stop_marker_keeps_the_words_before_it():
    assert split_stop("Thanks, that is all. ###STOP###") == split_stop("Thanks, that is all.###STOP###")
    said = split_stop("Thanks, that is all. ###STOP###")
    assert (said.text, said.stopped) == ("Thanks, that is all.", True)
    assert (split_stop("###STOP###").text, split_stop("###STOP###").stopped) == ("", True)
    assert split_stop("Where is it?").stopped is False


def _scenario(goal: str, language: str = "en") -> Scenario:
    return Scenario(task_id="t", goal=goal, language=language, success={"reply_contains": ["x"]})


@pytest.mark.parametrize(
    ("goal", "first", "language", "leaks"),
    [
        ("Get a refund for order A100", "I want a refund for order A100 please", "en", True),
        ("Get a refund for order A100", "Hi, I need a refund for my last order.", "en", False),
        ("Obtener el reembolso del pedido A100", "Quiero obtener el reembolso del pedido A100", "es", True),
        ("Obtener el reembolso del pedido A100", "Hola, quiero un reembolso.", "es", False),
        ("为订单A100办理退款", "请为订单A100办理退款", "zh", True),
        ("为订单A100办理退款", "你好，我想退款。", "zh", False),
        ("Refund", "Refund please", "en", False),  # a goal of fewer than three words cannot leak
    ],
)
def test_a_first_message_restating_most_of_the_goal_is_a_leak(goal, first, language, leaks):
    assert leaks_goal(_scenario(goal, language), first) is leaks


def test_trials_have_their_own_seeds_fixed_across_runs():
    seeds = {trial_seed("refund", t) for t in (1, 2, 3)}
    assert len(seeds) == 3 and trial_seed("refund", 2) == trial_seed("refund", 2)


def test_every_bad_line_is_one_error_and_the_good_lines_are_kept(tmp_path):
    path = tmp_path / "scenarios.jsonl"
    good = {"task_id": "a", "goal": "Get help", "user_turns": ["hi"], "success": {"reply_contains": ["help"]}}
    rows = [
        good,
        {**good, "task_id": "b", "goal": "  "},
        {**good, "task_id": "c", "success": {}},
        {**good, "task_id": "d", "language": "xx"},
        {**good, "task_id": "e", "user_turns": []},
        {**good},
        [1, 2],
        {**good, "task_id": "f", "max_turns": 0},
        {
            **good,
            "task_id": "g",
            "success": {"reply_contains": ["help"], "expected_tool_calls": [{"name": ""}]},
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    read = read_scenarios(path)
    assert [s.task_id for s in read.scenarios] == ["a"]
    assert [e.split(": ", 1)[0] for e in read.errors] == [f"{path}, line {n}" for n in range(2, 10)]
    said = [e.split(": ", 1)[1] for e in read.errors]
    assert said[0] == "goal: goal is blank"
    assert said[1] == (
        "success: success needs expected_tool_calls, reply_contains, reply_contains_any_form or rubric"
    )
    assert said[2].startswith("language: ") and said[3].startswith("user_turns: ")
    assert said[4] == "task a is already on line 1" and said[5] == "not a scenario (a JSON object per line)"
    assert said[6].startswith("max_turns: ") and said[7].startswith("success.expected_tool_calls.0.name: ")


def test_the_request_template_carries_the_conversation():
    turn = ConversationTurn(
        "refund-trial-2",
        'It is "A100".',
        ({"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Order?"},
         {"role": "user", "content": 'It is "A100".'}),
    )  # fmt: skip
    body = {"q": "{message}", "s": "session {session}", "history": "{messages}", "as_text": "h={messages}"}
    rendered = render_template(body, turn.session, turn.message, turn)
    assert rendered["q"] == 'It is "A100".' and rendered["s"] == "session refund-trial-2"
    assert rendered["history"] == [dict(m) for m in turn.messages]  # the list itself
    assert json.loads(rendered["as_text"][2:]) == rendered["history"]
    assert render_template(body, "q1", "question") == {**body}  # no conversation: left as written


def test_tau_bench_tasks_as_a_json_array_are_read_as_scenarios(tmp_path):
    """tau-bench writes its tasks as one pretty-printed JSON array (id, instruction, a plain
    string of known_info, actions with kwargs, outputs): read item by item, each a scenario."""
    tasks = [
        {"id": "refund", "user_id": "mia_3668", "instruction": "You want a refund for order A100.",
         "known_info": "order A100, paid 25 EUR", "unknown_info": "the card's digits",
         "actions": [{"name": "issue_refund", "kwargs": {"order_id": "A100", "amount": 25}}],
         "outputs": ["refund issued"]},
        {"id": "refund", "instruction": "Again.", "actions": []},  # a task id used twice
        {"id": "nothing"},  # no instruction: not a tau-bench task, nor a scenario
    ]  # fmt: skip
    path = tmp_path / "tau_tasks.json"
    path.write_text(json.dumps(tasks, indent=1), encoding="utf-8")
    read = read_scenarios(path)
    (scenario,) = read.scenarios
    assert (scenario.task_id, scenario.goal, scenario.known_info) == (
        "refund", "You want a refund for order A100.", "order A100, paid 25 EUR",
    )  # fmt: skip
    assert scenario.success.reply_contains == ("refund issued",)
    assert scenario.success.expected_tool_calls[0].arguments == {"order_id": "A100", "amount": 25}
    assert read.errors == [
        f"{path}, item 2: task refund is already on item 1",
        f"{path}, item 3: task_id is missing",
    ]


def test_a_language_whose_negations_are_not_read_is_said_before_the_run():
    """Polish has its negators now (issue 78's lexicons): its refusal no longer holds the marker.
    A language with none (Yoruba) is said before the run, since its refusal still would."""
    from rag_eval_pipeline.trajectories.simulation.success import unread_negations

    polish = Scenario(task_id="p", goal="z", language="pl", success={"reply_contains": ["zwrot wykonany"]})
    yoruba = Scenario(task_id="y", goal="z", language="yo", success={"reply_contains": ["san owó padà"]})
    german = Scenario(task_id="d", goal="x", language="de", success={"reply_contains": ["storniert"]})
    assert not holds("Zwrot nie został wykonany.", "zwrot wykonany", "pl")
    assert holds("A kò san owó padà.", "san owó padà", "yo")  # what the note warns of
    assert unread_negations([german, polish]) == []
    (line,) = unread_negations([yoruba, polish, german])
    assert line.startswith("Yoruba (yo) has no negator lexicon: reply_contains of y is matched without")
