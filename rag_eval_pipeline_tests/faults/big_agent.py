"""A Python agent that answers with megabytes (what the caps are for)."""


def answer(question: str) -> dict:
    return {"answer": "x" * 1_500_000, "contexts": ["a short context"]}
