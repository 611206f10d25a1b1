"""Which knowledge-base passage an agent's context is, so reference retrieval metrics can be
computed on the contexts the agent returned: by its id (a passage id or the user's own document
id), else by its title, else by its text (the same passage, normalised; a context that contains
a passage; or one that is a stretch of a passage, at least ``MIN_WORDS`` long). A context that
matches none is unmatched: it counts as non-gold."""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from rag_eval_pipeline.answering.base import ReturnedContext

MIN_WORDS = 8  # a shorter stretch of text could stand in many passages
_WORD = re.compile(r"\w+")


class Match:
    """How a context was matched (stored per context in ``context_match``)."""

    ID = "id"
    TITLE = "title"
    TEXT = "text"
    CONTAINS = "contains_passage"
    WITHIN = "within_passage"
    UNMATCHED = "unmatched"
    RETRIEVED = "retrieved"  # this project's retriever found it: nothing to match


@dataclass(frozen=True)
class MatchedContext:
    passage_id: str
    title: str
    text: str
    how: str


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class ContextMatcher:
    """The knowledge base's passages (``passage_id``, ``title``, ``passage``), indexed on first
    use: by id, by title, by normalised text and by runs of ``MIN_WORDS`` words."""

    def __init__(self, passages: pd.DataFrame) -> None:
        self._ids = list(passages["passage_id"].astype(str))
        self._titles = list(passages["title"].astype(str))
        self._texts = list(passages["passage"].astype(str))
        self._by_id: dict[str, int] = {}
        for row, pid in enumerate(self._ids):
            self._by_id.setdefault(pid, row)
            if pid.startswith("doc_"):  # the user's own document id, for each of its chunks
                self._by_id.setdefault(pid[4:].split("#")[0], row)
        self._by_title = {title: row for row, title in reversed(list(enumerate(self._titles)))}
        self._words: list[list[str]] | None = None
        self._indexing = threading.Lock()  # the first match may come while ``warm`` indexes
        self._exact: dict[str, int] = {}
        self._starts: dict[tuple[str, ...], list[int]] = {}  # a passage's first words -> passages
        self._joined = ""  # every normalised passage, " words " each, one per line: searched in C
        self._offsets: list[int] = []

    def warm(self) -> None:
        """Index the texts now (on a worker thread while the first calls wait), not when the
        first reply needs them."""
        self._index_text()

    def _index_text(self) -> None:
        """Normalised texts only (no index of every run of words, which costs a tuple per word):
        a dictionary for the same text, each passage's first words for a context that holds a
        passage, and one string of all passages to search for a context that is a stretch of one."""
        with self._indexing:
            if self._words is not None:
                return
            words_of = [_words(t) for t in self._texts]
            lines, offset = [], 0
            for row, words in enumerate(words_of):
                joined = " ".join(words)
                self._exact.setdefault(joined, row)
                if words:
                    self._starts.setdefault(tuple(words[:MIN_WORDS]), []).append(row)
                self._offsets.append(offset)
                lines.append(f" {joined} ")
                offset += len(joined) + 3  # the two spaces and the line break
            self._joined = "\n".join(lines)
            self._words = words_of  # last: another thread sees it only when the index is whole

    def _within(self, joined: str) -> int | None:
        """The passage holding the normalised text as a whole run of words, if one does."""
        found = self._joined.find(f" {joined} ")
        return None if found < 0 else bisect.bisect_right(self._offsets, found) - 1

    def _by_text(self, text: str) -> tuple[int, str] | None:
        self._index_text()
        assert self._words is not None
        words = _words(text)
        if not words:
            return None
        joined = " ".join(words)
        if joined in self._exact:
            return self._exact[joined], Match.TEXT
        if len(words) < MIN_WORDS:
            return None
        row = self._within(joined)
        if row is not None:  # the context is a stretch of a passage
            return row, Match.WITHIN
        # the context holds a whole passage: a passage's first words start somewhere in it
        best: int | None = None
        for start in range(len(words) - MIN_WORDS + 1):
            for row in self._starts.get(tuple(words[start : start + MIN_WORDS]), []):
                passage = self._words[row]
                if words[start : start + len(passage)] == passage and (
                    best is None or len(passage) > len(self._words[best])
                ):
                    best = row
        return (best, Match.CONTAINS) if best is not None else None

    def match(self, context: ReturnedContext) -> MatchedContext:
        if context.id is not None and context.id in self._by_id:
            row = self._by_id[context.id]
            return MatchedContext(self._ids[row], self._titles[row], context.text, Match.ID)
        if context.title is not None and context.title in self._by_title:
            row = self._by_title[context.title]
            return MatchedContext(self._ids[row], self._titles[row], context.text, Match.TITLE)
        found = self._by_text(context.text)
        if found is not None:
            row, how = found
            return MatchedContext(self._ids[row], self._titles[row], context.text, how)
        return MatchedContext(context.id or "", context.title or "", context.text, Match.UNMATCHED)

    def match_all(self, contexts: Sequence[ReturnedContext]) -> list[MatchedContext]:
        return [self.match(c) for c in contexts]


def cited_titles(
    citations: Sequence[int | str] | None,
    contexts: Sequence[ReturnedContext],
    matched: Sequence[MatchedContext],
    matcher: ContextMatcher | None,
) -> list[str] | None:
    """The title of the knowledge-base passage each citation names ("" where it names none we
    know), so citations are checked against the gold supporting passages. A number is a 1-based
    index into the returned contexts; a text is a returned context's id or title, else a passage
    id or title of the knowledge base, else (all digits) an index. None: the agent cites nothing
    the mapping can read."""
    if citations is None:
        return None
    by_reference: dict[str, str] = {}
    for given, found in zip(contexts, matched):
        for reference in (given.id, given.title, found.passage_id, found.title):
            if reference:
                by_reference.setdefault(str(reference), found.title)
    titles = []
    for citation in citations:
        if isinstance(citation, str) and citation in by_reference:
            titles.append(by_reference[citation])
            continue
        known = (
            matcher.match(ReturnedContext("", citation, citation))
            if isinstance(citation, str) and matcher
            else None
        )
        if known is not None and known.how != Match.UNMATCHED:
            titles.append(known.title)
            continue
        index = citation if isinstance(citation, int) else int(citation) if citation.isdigit() else None
        titles.append(matched[index - 1].title if index is not None and 1 <= index <= len(matched) else "")
    return titles
