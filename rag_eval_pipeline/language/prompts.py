"""What an LLM prompt says of a case's language: nothing for English (English prompts, and
their cached answers, stay as they were); otherwise the language by name, so that an answer is
written in it, a judgement reads the text as written, and generated questions are asked in it."""

from __future__ import annotations

from rag_eval_pipeline.language.table import language


def _clause(code: str, template: str) -> str:
    """``template`` filled with the language as ``{named}`` ("Chinese (zh)") and ``{name}``;
    nothing for English."""
    row = language(code)
    return "" if row.is_english else template.format(named=f"{row.name} ({row.code})", name=row.name)


def answer_clause(code: str) -> str:
    """Appended to an answer prompt: answer in the question's language (the abstention stays
    the one word every language's analysis knows)."""
    return _clause(
        code,
        "\n\nThe question is in {named}: write the answer in {name}, "
        "as the passages word it (or reply exactly: unknown).",
    )


def judge_clause(code: str) -> str:
    """Appended to a judge's case: the language its text is in, read as written."""
    return _clause(
        code,
        "\n<language>The question, passages and answer are in {named}. Judge what they mean in "
        "{name}, as written (do not translate them); write your reasons in English."
        "</language>",
    )


def generation_clause(code: str) -> str:
    """Appended to a question writer's prompt: questions and answers in the documents' language."""
    return _clause(
        code,
        "\n\nThe passages are in {named}: write the question and its answer in {name}, "
        "the answer worded as the passages word it.",
    )
