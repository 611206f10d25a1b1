"""What the configuration says about the dataset: which questions, how many, your documents and
how they are chunked."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from rag_eval_pipeline.common.settings import Strict
from rag_eval_pipeline.common.text import known_encoding
from rag_eval_pipeline.language.table import language


class ChunkingSettings(Strict):
    size: int = Field(default=200, ge=0, description="words per chunk of a longer document; 0 = never")
    overlap: int = Field(default=40, ge=0)


class DatasetSettings(Strict):
    kind: Literal["hotpotqa", "custom"] = "hotpotqa"
    source: str = Field(
        default="bundled",
        description="hotpotqa: 'bundled' (500 questions shipped in the package), 'hub', or a local file",
    )
    sample_size: int | None = Field(default=35, ge=0, description="questions to evaluate; 0 = all")
    selection: Literal["first", "random"] = "first"
    seed: int = 0
    questions: str | None = Field(default=None, description="custom: JSONL / CSV / parquet judgement list")
    documents: str = Field(default="data/documents", description="folder of the user's documents")
    chunking: ChunkingSettings = ChunkingSettings()
    max_file_mb: float = Field(default=5.0, gt=0, description="larger document files are skipped, named")
    language: str | None = Field(
        default=None,
        description="ISO 639-1 code of every document and question (zh, ja, es ...); a judgement-list "
        "row's or a document record's own `language` wins; unset: each detected",
    )

    encoding: str | None = Field(
        default=None,
        description="the encoding of the questions file and the documents when it is not UTF-8 "
        "(cp949, shift_jis, utf-16 ...); unset: UTF-8, a byte-order mark accepted",
    )

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, name: str | None) -> str | None:
        return known_encoding(name) if name else None

    @field_validator("language")
    @classmethod
    def _known_language(cls, code: str | None) -> str | None:
        return language(code).code if code else None

    @model_validator(mode="after")
    def _custom_needs_questions(self) -> DatasetSettings:
        if self.kind == "custom" and not self.questions:
            raise ValueError("dataset.kind custom needs dataset.questions (a judgement list file)")
        return self
