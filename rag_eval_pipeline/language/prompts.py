"""What an LLM prompt says of a case's language: nothing for English (English prompts, and
their cached answers, stay as they were); otherwise the language by name, so that an answer is
written in it, a judgement reads the text as written, and generated questions are asked in it."""

from __future__ import annotations

from rag_eval_pipeline.language.table import language


def _named(code: str) -> str | None:
    row = language(code)
    return None if row.is_english else f"{row.name} ({row.code})"


def answer_clause(code: str) -> str:
    """Appended to an answer prompt: answer in the question's language (the abstention stays
    the one word every language's analysis knows)."""
    named = _named(code)
    if named is None:
        return ""
    return (
        f"\n\nThe question is in {named}: write the answer in {language(code).name}, "
        "as the passages word it (or reply exactly: unknown)."
    )


def judge_clause(code: str) -> str:
    """Appended to a judge's case: the language its text is in, read as written."""
    named = _named(code)
    if named is None:
        return ""
    return (
        f"\n<language>The question, passages and answer are in {named}. Judge what they mean in "
        f"{language(code).name}, as written (do not translate them); write your reasons in English."
        "</language>"
    )


def generation_clause(code: str) -> str:
    """Appended to a question writer's prompt: questions and answers in the documents' language."""
    named = _named(code)
    if named is None:
        return ""
    return (
        f"\n\nThe passages are in {named}: write the question and its answer in {language(code).name}, "
        "the answer worded as the passages word it."
    )
