"""A Python agent of the tests' own that takes its passages from the caller and repeats them."""


def answer(question: str, passages: list[dict] | None = None) -> dict:
    texts = [p["text"] for p in passages or []]
    return {"answer": "\n\n".join(texts), "contexts": texts}
