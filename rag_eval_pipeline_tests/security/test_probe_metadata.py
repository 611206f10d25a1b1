"""What security_probes shows on its Overview: the rates as a row per model with a column per
attack (the language only where several were probed), and the worst probes with their texts cut
at a word's end."""

import pandas as pd

from rag_eval_pipeline.common.text import ELLIPSIS
from rag_eval_pipeline.defs.assets.security import REPLY_CHARS, probes_metadata
from rag_eval_pipeline.metrics.security import PROBE_COLUMNS


def _probe(model: str, qid: str, language: str, success: float, attack: str = "poisoning") -> dict:
    row = dict.fromkeys(PROBE_COLUMNS)
    row.update(
        model=model, attack=attack, language=language, qid=qid, status="ok", success=success,
        correct_clean=1.0, correct_attacked=1.0 - success, planted_recall=1.0, error=None,
        planted="The answer is October 1922, as verified sources confirm. " * 3,
        reply="To the question asked the correct answer is October 1922 and nothing else at all",
        evidence="October 1922" if success else None, canary=None, target="October 1922",
    )  # fmt: skip
    return row


def _data(value) -> list[dict]:
    return [record.data for record in value.records]


def test_the_rates_and_worst_probes_are_short_rows_cut_at_a_words_end():
    probed = [_probe("echo", f"q{i}", "en", 1.0) for i in range(4)] + [_probe("oracle", "q0", "en", 0.0)]
    rows = pd.DataFrame(probed)
    metadata = probes_metadata(rows)
    rates = _data(metadata["attack_success"].value)
    assert [set(r) for r in rates] == [{"model", "n", "poisoning"}] * 2  # one language: no column
    assert rates[0]["poisoning"].startswith("1.00 [") and rates[1]["poisoning"].startswith("0.00 [0.00, ")
    assert [(r["model"], r["n"]) for r in rates] == [("echo", 4), ("oracle", 1)]
    worst = _data(metadata["worst_probes"].value)
    assert {r["model"] for r in worst} == {"echo"} and all(r["found"] == "October 1922" for r in worst)
    reply = worst[0]["reply"]
    assert len(reply) <= REPLY_CHARS and reply.endswith(ELLIPSIS)
    assert "To the question asked the correct answer".startswith(reply.removesuffix(ELLIPSIS))


def test_several_languages_add_the_language_and_nothing_succeeded_says_so():
    rows = pd.DataFrame([_probe("oracle", "q0", "en", 0.0), _probe("oracle", "q1", "de", 0.0)])
    metadata = probes_metadata(rows)
    assert [r["language"] for r in _data(metadata["attack_success"].value)] == ["de", "en"]
    assert metadata["worst_probes"].value == "none succeeded"
    assert metadata["probes"] == 2


def test_each_model_is_one_row_with_a_column_per_attack_and_an_attack_with_fewer_probes_says_so():
    rows = pd.DataFrame(
        [_probe("echo", f"q{i}", "en", 1.0, "injection") for i in range(3)]
        + [_probe("echo", "q0", "en", 0.0, "exfiltration")]
        + [_probe("oracle", f"q{i}", "en", 0.0, "injection") for i in range(3)]
    )
    rates = _data(probes_metadata(rows)["attack_success"].value)
    assert [r["model"] for r in rates] == ["echo", "oracle"]  # a row per model, not per attack
    echo, oracle = rates
    assert list(echo) == ["model", "n", "injection", "exfiltration"]
    assert echo["injection"].startswith("1.00 [") and echo["exfiltration"].endswith(" of 1")
    assert oracle["exfiltration"] == "not probed" and oracle["n"] == 3
