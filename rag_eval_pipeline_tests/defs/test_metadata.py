"""What the asset pages show of a partition's worst cases."""

import numpy as np
import pandas as pd

from rag_eval_pipeline.defs.metadata import worst_cases_table


def test_worst_cases_of_several_judges_share_one_set_of_columns():
    """A case whose worst score came from the STRICT judge (faithfulness read by a model) beside
    one from the reference judge (the lexical proxy only): one table, the same fields in every
    record (Dagster refuses a table whose records differ), each faithfulness named for what it is."""
    scores = pd.DataFrame(
        {
            "qid": ["a", "b"],
            "repeat": [0, 0],
            "judge_id": ["claude-sonnet-4-6", "reference"],
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
    by_qid = {record.data["qid"]: record.data for record in table.records}
    assert by_qid["a"]["faithfulness"] == 1.0 and by_qid["a"]["faithfulness_lexical"] is None
    assert by_qid["b"]["faithfulness"] is None and by_qid["b"]["faithfulness_lexical"] == 0.5
    assert by_qid["b"]["missed gold"] == "t9" and by_qid["a"]["gold read"] == "1 of 1"
