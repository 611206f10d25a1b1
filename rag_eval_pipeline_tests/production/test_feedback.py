"""Users' feedback read on a declared scale from the three places teams keep it (a field of the
logs, Langfuse score records, Phoenix span annotations), joined to interactions by span, trace
or session, and the judges set against it: agreement and kappa equal to scikit-learn's on the
same pairs, over any shape of input."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, cohen_kappa_score

from rag_eval_pipeline.production.feedback import (
    RECORD_COLUMNS,
    JudgePairs,
    agreement_of,
    chance_lines,
    feedback_agreement,
    feedback_score,
    join_records,
    langfuse_feedback,
    per_interaction,
    phoenix_feedback,
)
from rag_eval_pipeline.production.feedback_sources import read_feedback
from rag_eval_pipeline.production.settings import (
    FeedbackScale,
    FeedbackSettings,
    LangfuseFeedback,
    PhoenixFeedback,
)

STARS = FeedbackScale(range=(1, 5))


def _interactions(count: int, sessions: int = 0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "interaction_id": [f"i{n}" for n in range(count)],
            "day": "2026-11-28",
            "timestamp": pd.Timestamp("2026-11-28T10:00:00Z"),
            "question": [f"question {n}?" for n in range(count)],
            "answer": [f"answer {n}" for n in range(count)],
            "trace_id": [f"Trace-{n:04d}" for n in range(count)],
            "span_id": [f"{n:016x}" for n in range(count)],
            "agent_version": "v1",
            "user_feedback": None,
            "metadata": [
                json.dumps({"session_id": f"s{n % sessions}"} if sessions else {}) for n in range(count)
            ],
            "location": [f"logs.jsonl, line {n + 1}" for n in range(count)],
            "file": "logs.jsonl",
        }
    )


def test_values_read_on_the_declared_scale_and_the_rest_is_named():
    assert feedback_score(True, FeedbackScale()) == 1.0 and feedback_score("False", FeedbackScale()) == 0.0
    assert feedback_score("Thumbs-Down", FeedbackScale()) == 0.0  # case, spaces and dashes do not matter
    assert feedback_score("\N{THUMBS UP SIGN}", FeedbackScale()) == 1.0
    assert feedback_score(4, STARS) == 0.75 and feedback_score("1", STARS) == 0.0
    assert feedback_score(1, STARS, "BOOLEAN") == 1.0  # a boolean score is 1 / 0 whatever the range
    with pytest.raises(ValueError, match=r"6 is outside the declared range \[1, 5\]"):
        feedback_score(6, STARS)
    with pytest.raises(ValueError, match="label 'meh' is not on the scale"):
        feedback_score("meh", FeedbackScale(), "CATEGORICAL")
    assert feedback_score("meh", FeedbackScale(labels={"meh": 0.4})) == 0.4


@given(st.floats(min_value=-10, max_value=10), st.floats(min_value=0.5, max_value=20), st.floats(0, 1))
def test_a_number_in_its_range_reads_on_0_1_in_order(low, width, share):
    scale = FeedbackScale(range=(low, low + width))
    value = low + share * width
    assert feedback_score(value, scale) == pytest.approx(share, abs=1e-9)
    assert 0.0 <= feedback_score(value, scale) <= 1.0


def test_langfuse_scores_of_each_data_type_and_what_is_left_out_is_counted():
    items = [
        {"name": "user-feedback", "value": 1, "dataType": "BOOLEAN", "traceId": "t1", "comment": "great"},
        {
            "name": "user-feedback",
            "value": 0,
            "stringValue": "thumbs_down",
            "dataType": "CATEGORICAL",
            "traceId": "t2",
        },
        {
            "name": "stars",
            "value": 2,
            "dataType": "NUMERIC",
            "observationId": "ab12",
            "timestamp": "2026-11-28T10:00:00Z",
        },
        {"name": "hallucination", "value": 0.9, "dataType": "NUMERIC", "traceId": "t3", "source": "EVAL"},
        {"name": "user-feedback", "value": 1, "dataType": "BOOLEAN"},  # joined to nothing: named
        "not a record",
    ]
    read = langfuse_feedback(
        [(f"scores.json, record {n}", item) for n, item in enumerate(items, 1)],
        LangfuseFeedback(path="scores.json"),
        STARS,
        "langfuse",
    )
    assert [r["score"] for r in read.records] == [1.0, 0.0, 0.25]
    assert read.records[0]["comment"] == "great" and read.records[2]["span_id"] == "ab12"
    assert read.left_out == {"source EVAL": 1}
    assert len(read.problems) == 2 and "no traceId, observationId or sessionId" in str(read.problems[0])
    assert read.items == len(items) == len(read.records) + sum(read.left_out.values()) + len(read.problems)


def test_phoenix_annotations_by_human_only_score_else_label():
    items = [
        {
            "span_id": "00aa",
            "name": "user_feedback",
            "annotator_kind": "HUMAN",
            "result": {"label": "thumbs-up"},
        },
        {
            "span_id": "00bb",
            "name": "user_feedback",
            "annotator_kind": "HUMAN",
            "result": {"score": 0, "label": "x", "explanation": "wrong"},
        },
        {"span_id": "00cc", "name": "correctness", "annotator_kind": "LLM", "result": {"score": 1}},
    ]
    read = phoenix_feedback(
        list(enumerate(items)), PhoenixFeedback(path="a.json"), FeedbackScale(), "phoenix"
    )
    assert [(r["span_id"], r["score"], r["comment"]) for r in read.records] == [
        ("00aa", 1.0, None),
        ("00bb", 0.0, "wrong"),
    ]
    assert read.left_out == {"annotator_kind LLM": 1}


def test_joined_by_span_then_trace_then_session_latest_wins_or_all_kept(tmp_path):
    interactions = _interactions(4, sessions=2)
    records = [
        # by observation (the root span), with trace ids written as Langfuse would (case, dashes)
        {
            "name": "f",
            "value": 0,
            "dataType": "BOOLEAN",
            "observationId": f"{0:016x}",
            "timestamp": "2026-11-28T10:00:00Z",
        },
        {
            "name": "f",
            "value": 1,
            "dataType": "BOOLEAN",
            "traceId": "TRACE-0000",
            "timestamp": "2026-11-28T11:00:00Z",
        },
        {
            "name": "f",
            "value": 0,
            "dataType": "BOOLEAN",
            "traceId": "trace0001",
            "comment": "late",
            "timestamp": "2026-11-28T09:00:00Z",
        },
        {"name": "f", "value": 1, "dataType": "BOOLEAN", "sessionId": "s1"},  # i1 and i3
        {"name": "f", "value": 1, "dataType": "BOOLEAN", "traceId": "elsewhere"},
    ]
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    latest = read_feedback(FeedbackSettings(sources=[LangfuseFeedback(path=str(path))]), interactions)
    assert latest.sources[0] | {"left_out": {}} == {
        "source": f"langfuse:{path}",
        "records": 5,
        "read": 5,
        "joined": 4,
        "joined_to_none": 1,
        "interactions": 3,
        "left_out": {},
        "unreadable": 0,
    }
    by_id = latest.interactions.set_index("interaction_id")
    assert by_id.loc["i0", "feedback"] == 1.0 and by_id.loc["i0", "feedback_count"] == 2  # the later one
    # the session's record has no time: it counts as earliest, so i1's dated thumbs-down wins
    assert by_id.loc["i1", "feedback"] == 0.0 and by_id.loc["i1", "feedback_comment"] == "late"
    assert by_id.loc["i3", "feedback"] == 1.0 and np.isnan(by_id.loc["i2", "feedback"])
    mean = read_feedback(
        FeedbackSettings(sources=[LangfuseFeedback(path=str(path))], keep="all"), interactions
    )
    assert mean.interactions.set_index("interaction_id").loc["i1", "feedback"] == 0.5


def test_the_logs_own_field_as_a_value_or_an_object_with_a_comment():
    interactions = _interactions(4).assign(
        user_feedback=["True", json.dumps({"rating": 2, "comment": "too long"}), None, "5"]
    )
    read = read_feedback(FeedbackSettings(scale=STARS), interactions)
    by_id = read.interactions.set_index("interaction_id")
    assert by_id["feedback"].tolist()[:2] == [1.0, 0.25] and by_id.loc["i3", "feedback"] == 1.0
    assert by_id.loc["i1", "feedback_comment"] == "too long" and read.sources[0]["records"] == 3


@st.composite
def _records(draw):
    count = draw(st.integers(1, 6))
    rows = []
    for _ in range(draw(st.integers(0, 15))):
        target = draw(st.integers(0, count))  # == count: an interaction that is not there
        how = draw(st.sampled_from(["trace_id", "span_id", "interaction_id"]))
        rows.append(
            {
                "source": "s",
                "name": "f",
                "value": "x",
                "score": draw(st.sampled_from([0.0, 0.25, 1.0])),
                "comment": None,
                "at": pd.Timestamp("2026-11-28T00:00:00Z") + pd.Timedelta(minutes=draw(st.integers(0, 3))),
                "interaction_id": f"i{target}" if how == "interaction_id" else None,
                "trace_id": f"trace{target:04d}" if how == "trace_id" else None,
                "span_id": f"{target:016x}" if how == "span_id" else None,
                "session_id": None,
            }
        )
    return count, pd.DataFrame(
        rows,
        columns=[*rows[0]] if rows else [c for c in RECORD_COLUMNS if c != "location"],
    )


@given(_records())
@settings(max_examples=60, deadline=None)
def test_every_record_is_joined_once_or_said_to_be_joined_to_none(drawn):
    count, records = drawn
    records["location"] = "x"
    joined = join_records(records, _interactions(count), "session_id")
    assert len(joined) == len(records)  # no session: one row per record
    targets = records["interaction_id"].fillna(records["trace_id"]).fillna(records["span_id"]).astype(str)
    missing = targets.str.contains(f"{count:04d}|{count:016x}|i{count}$", regex=True)
    assert joined["interaction_id"].isna().sum() == int(missing.sum())
    kept = per_interaction(joined, "latest")
    assert set(kept["interaction_id"]) <= {f"i{n}" for n in range(count)}
    assert kept["feedback_count"].sum() == joined["interaction_id"].notna().sum()
    assert kept["feedback"].between(0, 1).all()


@given(
    st.lists(
        st.tuples(st.floats(0, 1), st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])), min_size=2, max_size=80
    )
)
@settings(max_examples=60, deadline=None)
def test_agreement_and_kappa_equal_sklearns_on_the_same_pairs(pairs):
    frame = pd.DataFrame(pairs, columns=["judge", "feedback"]).assign(interaction_id="i", question="q")
    row = agreement_of(JudgePairs("j", "faithfulness", frame), 0.5)
    judge = (frame["judge"] >= 0.5).astype(int)
    users = (frame["feedback"] >= 0.5).astype(int)
    assert row["n"] == len(frame)
    assert row["agreement"] == pytest.approx(accuracy_score(users, judge))
    if judge.nunique() > 1 and users.nunique() > 1:
        assert row["kappa"] == pytest.approx(cohen_kappa_score(users, judge))
        assert row["ci_low"] <= row["kappa"] + 1e-9 and row["kappa"] - 1e-9 <= row["ci_high"]
    else:  # one side gives one label: kappa says nothing, and says why
        assert np.isnan(row["kappa"]) and "kappa undefined" in row["note"]


def test_a_judge_worse_than_chance_is_said_in_one_line():
    frame = pd.DataFrame(
        {"judge": [1.0] * 20 + [0.0] * 20, "feedback": [0.0] * 18 + [1.0] * 2 + [1.0] * 18 + [0.0] * 2}
    ).assign(interaction_id="i", question="q")
    agreement = feedback_agreement([JudgePairs("contrarian", "faithfulness", frame)], 0.5)
    (line,) = chance_lines(agreement)
    assert line.startswith(
        "judge contrarian agrees with users on faithfulness worse than chance: kappa -0.80"
    )
    assert "it may be chance" not in line


_SCORE = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["user-feedback", "other"]),
        "dataType": st.sampled_from(["BOOLEAN", "NUMERIC", "CATEGORICAL"]),
        "traceId": st.sampled_from(["trace0000", "trace0001", "nowhere"]),
        "source": st.sampled_from(["API", "EVAL", "ANNOTATION"]),
        "value": st.sampled_from([0, 1, 3, 7, "up", "meh"]),
    }
)


@given(st.lists(_SCORE, max_size=12), st.sampled_from(["list", "data", "lines"]), st.booleans())
@settings(max_examples=40, deadline=None)
def test_every_record_of_an_export_is_accounted_for_whatever_its_layout(
    tmp_path_factory, scores, layout, broken
):
    path = tmp_path_factory.mktemp("export") / "scores.json"
    if layout == "lines":
        text = "".join(json.dumps(s) + "\n" for s in scores) + ("{broken\n" if broken else "")
    else:
        text = json.dumps(scores if layout == "list" else {"data": scores})
    path.write_text(text)
    source = LangfuseFeedback(path=str(path), names=["user-feedback"], scale=FeedbackScale(range=(0, 5)))
    read = read_feedback(FeedbackSettings(sources=[source]), _interactions(2))
    (counts,) = read.sources
    extra = 1 if layout == "lines" and broken else 0
    assert counts["records"] == len(scores) + extra
    assert counts["records"] == counts["read"] + sum(counts["left_out"].values()) + counts["unreadable"]
    assert counts["read"] == counts["joined"] + counts["joined_to_none"]
    assert all(str(path) in str(p) for p in read.problems)  # each named by its file (and line)
    assert read.interactions["feedback"].dropna().between(0, 1).all()


def test_a_missing_export_is_one_error_line_and_a_bad_value_is_named(tmp_path, capsys):
    from rag_eval_pipeline_tests.support.cli import in_process

    (tmp_path / "logs").mkdir()
    rows = [
        {"question": "q1?", "answer": "a", "timestamp": "2026-11-28T10:00:00Z", "user_feedback": "up"},
        {"question": "q2?", "answer": "b", "timestamp": "2026-11-28T10:01:00Z", "user_feedback": "meh"},
    ]
    (tmp_path / "logs" / "day.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    feedback = {"sources": [{"kind": "field"}, {"kind": "langfuse", "path": "nowhere.json"}]}
    production = {
        "sources": [{"kind": "logs", "path": "logs"}],
        "start_date": "2026-11-01",
        "feedback": feedback,
    }
    config = tmp_path / "rag_eval.yaml"
    config.write_text(json.dumps({"production": production}))
    args = ["--dagster-home", str(tmp_path / "home"), "--config", str(config), "production", "feedback"]
    code, _, err = in_process(capsys, *args)
    assert code == 2 and err.strip().startswith("error: production feedback source langfuse: ")
    assert "nowhere.json does not exist" in err and len(err.strip().splitlines()) == 1
    feedback["sources"].pop()
    config.write_text(json.dumps({"production": production}))
    code, out, err = in_process(capsys, *args, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["with_feedback"] == 1  # the unknown label is named, not read as 0
    assert "day.jsonl, line 2: user_feedback: label 'meh' is not on the scale" in err


def test_a_langfuse_export_in_csv_reads_as_its_json_and_a_bad_row_is_named_by_its_line(tmp_path):
    """Langfuse's UI exports scores as CSV: the same records read the same, every cell a string or
    empty; a row with a cell too many (an unquoted comma in a comment) is a problem naming the file
    and the line it starts on, and is counted."""
    import csv

    interactions = _interactions(4, sessions=2)
    columns = ["name", "value", "dataType", "traceId", "observationId", "sessionId", "comment", "timestamp"]
    records = [
        {"name": "f", "value": 0, "dataType": "BOOLEAN", "observationId": f"{0:016x}"},
        {"name": "f", "value": 1, "dataType": "BOOLEAN", "traceId": "TRACE-0000", "comment": "fine,\nthanks"},
        {"name": "f", "value": 1, "dataType": "BOOLEAN", "sessionId": "s1"},
        {"name": "stars", "value": 2, "dataType": "NUMERIC", "traceId": "trace0002"},
    ]
    as_json = tmp_path / "scores.jsonl"
    as_json.write_text("".join(json.dumps(r) + "\n" for r in records))
    as_csv = tmp_path / "scores.csv"
    with as_csv.open("w", newline="") as out:
        writer = csv.DictWriter(out, columns)
        writer.writeheader()
        writer.writerows(records)
        out.write("f,1,BOOLEAN,trace0003,,,too, many cells,\n")

    def read(path):
        return read_feedback(
            FeedbackSettings(sources=[LangfuseFeedback(path=str(path))], scale=STARS), interactions
        )

    from_json, from_csv = read(as_json), read(as_csv)
    columns_read = ["interaction_id", "feedback", "feedback_count", "feedback_comment"]
    pd.testing.assert_frame_equal(from_csv.interactions[columns_read], from_json.interactions[columns_read])
    assert from_csv.sources[0] | {"source": ""} == from_json.sources[0] | {
        "source": "",
        "records": 5,
        "unreadable": 1,
    }
    assert [str(p) for p in from_csv.problems] == [
        f"{as_csv}, line 7: 9 cells where the header names 8 (a comma outside quotes?)"
    ]
