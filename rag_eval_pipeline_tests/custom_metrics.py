"""A custom Python metric, importable by path as a user's would be (``module:function``)."""


def answer_is_short(case: dict) -> float | None:
    """1.0 for an answer of at most five words, 0.0 above; absent for an abstention."""
    answer = (case.get("answer") or "").strip()
    if not answer or answer.lower() == "unknown":
        return None
    return 1.0 if len(answer.split()) <= 5 else 0.0
