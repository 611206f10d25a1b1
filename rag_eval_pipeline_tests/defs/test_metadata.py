"""What the asset pages show of a partition's worst cases."""

import numpy as np
import pandas as pd

from rag_eval_pipeline.defs.metadata import worst_case_markdown, worst_cases_table


def test_worst_cases_are_compact_rows_with_the_case_in_full_one_click_away():
    """A case whose worst score came from the STRICT judge (faithfulness read by a model) beside
    one from the reference judge (the lexical proxy only): one table of compact rows, the same
    fields in every record (Dagster refuses a table whose records differ), narrow enough to read
    in Dagster's pane; each case's full detail (answer, truth, scores, missed gold, index, run)
    is its own entry, named by its model."""
    scores = pd.DataFrame(
        {
            "qid": ["a", "b"],
            "repeat": [0, 0],
            "judge_id": ["claude-sonnet-4-6", "reference"],
            "judge_kind": ["strict", "reference"],
            "rationales": [None, None],
            "status": ["ok", "ok"],
            "correctness": [0.0, 0.0],
            "faithfulness": [1.0, np.nan],
            "faithfulness_lexical": [np.nan, 0.5],
            "context_relevance": [1.0, 0.5],
            "diagnosis": ["reasoning_error", "retrieval_miss"],
        }
    )
    answers = pd.DataFrame(
        {
            "qid": ["a", "b"],
            "repeat": [0, 0],
            "question": ["qa", "qb"],
            "answer": ["x", "y"],
            "retrieved_titles": [["t1"], ["t2"]],
            "retrieved_passages": [["p1"], ["p2"]],
        }
    )
    cases = pd.DataFrame(
        {"qid": ["a", "b"], "question": ["qa", "qb"], "answer": ["xa", "xb"], "gold_titles": [["t1"], ["t9"]]}
    )
    table = worst_cases_table("m", scores, answers, cases, "run-id")
    fields = [list(record.data) for record in table.records]
    assert fields[0] == fields[1] == [c.name for c in table.schema.columns]
    assert fields[0] == ["case", "correct", "diagnosis", "gold", "question"]
    by_case = {record.data["case"]: record.data for record in table.records}
    assert by_case["a"]["gold"] == "1/1" and by_case["b"]["gold"] == "0/1"
    detail = worst_case_markdown("m", scores, answers.assign(kb_version="v1"), cases, "run-id")
    assert list(detail) == ["m worst case 1: a", "m worst case 2: b"]
    block = detail["m worst case 2: b"].value
    assert (
        "- missed gold: t9" in block
        and "- index: v1; run: run-id" in block
        and "faithfulness_lexical" in block
        and "- case: b" in block
    )


def test_a_long_case_id_is_cut_in_the_row_and_the_key_and_whole_in_its_entry():
    """A HotpotQA id (24 characters) widened the pane's key column and the table past 1,440 px:
    the row and the entry's name show it cut the same way, the entry the whole id."""
    qid = "5a8b57f25542995d1e6f1371"
    scores = pd.DataFrame(
        {
            "qid": [qid],
            "repeat": [0],
            "judge_id": ["reference"],
            "judge_kind": ["reference"],
            "status": ["ok"],
        }
        | {"correctness": [0.0], "diagnosis": ["retrieval_miss"], "rationales": [None]}
    )
    answers = pd.DataFrame(
        {"qid": [qid], "repeat": [0], "question": ["q"], "answer": ["x"]}
        | {"retrieved_titles": [["t"]], "retrieved_passages": [["p"]]}
    )
    cases = pd.DataFrame({"qid": [qid], "question": ["q"], "answer": ["y"], "gold_titles": [["t"]]})
    (record,) = worst_cases_table("m", scores, answers, cases).records
    assert record.data["case"] == "5a8b57f…"
    ((key, entry),) = worst_case_markdown("m", scores, answers, cases, "run-id").items()
    assert key == "m worst case 1: 5a8b57f…"
    assert f"- case: {qid}" in entry.value and f"rag-eval explain {qid} --model m" in entry.value
