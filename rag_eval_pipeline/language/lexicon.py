"""The words each language frames, hedges, negates and declines with: what the offline
correctness rule (``metrics/equivalence.py``) and the abstention patterns read. The words are data,
``lexicons.toml`` beside this module (a table per language: one entry per language of
``language/table.py``, and languages a lemmatizer or stemmer reads without a row of their own
there, for which ``reading(code).lexicon`` is true); this module gives them their type and reads
a verb form a prefix or suffix negates (``Lexicon.negates``).

A language without an entry here is analysed (segmented, indexed, scored on EM and F1), and its
sentence answers are read with its negations, hedges, options and contrasts unread: a sentence
holding a word the rule cannot read has correctness absent (``language/inflection.py``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, fields
from importlib import resources
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the standard library's parser from 3.11
    import tomli as tomllib

NEGATED_STEM = 3  # letters a verb keeps after a negating prefix ("ne" + "byl")


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True)
class Lexicon:
    """Closed word classes of one language, lower case, as its analyzer segments them.

    ``negation_follows``: the negation comes after what it negates (Japanese, Korean: "X ではない"),
    so a negator just after a mention rejects it; ``negation_either_side``: before it or after
    (Hungarian "nem Budapesten" and "Budapesten nem"); ``negation_reach``: the words before a
    mention a negator may stand ("nie urodziła się w Suwałkach"); ``negation_after_mention``: a
    negator just after a mention, with no mark between, negates it as its subject ("Segre no
    passa per Lleida"). ``option_prefixes`` / ``option_suffixes``: "and" or "or" joined to the
    word beside a mention (Hebrew "ובלבוב", Tamil "புதுச்சேரியிலோ"). ``abstention``: regular expressions over the
    plain answer (lower case, no punctuation, single spaces), matched at its start."""

    frame: frozenset[str] = frozenset()
    hedges: frozenset[str] = frozenset()
    alternatives: frozenset[str] = frozenset()
    contrasts: frozenset[str] = frozenset()
    negators: frozenset[str] = frozenset()
    wrong: frozenset[str] = frozenset()
    copulas: frozenset[str] = frozenset()
    joiners: frozenset[str] = frozenset()
    yes: frozenset[str] = frozenset()
    no: frozenset[str] = frozenset()
    # the words that make a sentence a question rather than say what it is about ("how many",
    # "how often", "can I"): stop words of a question's terms where it is read for its content
    interrogatives: frozenset[str] = frozenset()
    rejecting_phrases: tuple[tuple[str, ...], ...] = ()
    unsure: tuple[tuple[str, ...], ...] = ()
    negation_follows: bool = False
    negation_either_side: bool = False
    negating_prefixes: tuple[str, ...] = ()
    negating_suffixes: tuple[str, ...] = ()
    not_negating: tuple[str, ...] = ()
    negation_reach: int = 3
    negation_after_mention: bool = False
    option_prefixes: tuple[str, ...] = ()
    option_suffixes: tuple[str, ...] = ()
    abstention: tuple[str, ...] = field(default=())

    def negates(self, word: str) -> bool:
        """Whether a word negates: one of the ``negators``, or a verb form its ``negating_prefixes``
        begin (Czech "nenarodil", Armenian "չծնվեց", Persian "نمی") or its ``negating_suffixes``
        end (Tamil "பிறக்கவில்லை"), at least ``NEGATED_STEM`` letters beyond it, and none that the
        ``not_negating`` beginnings make another word (Czech "nejstarší", Lithuanian "netoli")."""
        if word in self.negators:
            return True
        if self.not_negating and word.startswith(self.not_negating):
            return False
        return any(
            word.startswith(p) and len(word) - len(p) >= NEGATED_STEM for p in self.negating_prefixes
        ) or any(word.endswith(x) and len(word) - len(x) >= 2 for x in self.negating_suffixes)


_PHRASES = ("rejecting_phrases", "unsure")


def _lexicon(table: dict[str, Any]) -> Lexicon:
    """One language's table as its ``Lexicon``: space-separated words as sets, phrases as tuples."""
    unknown = set(table) - {f.name for f in fields(Lexicon)}
    if unknown:
        raise ValueError(f"lexicons.toml: unknown fields {sorted(unknown)}")
    values: dict[str, Any] = {}
    for name, value in table.items():
        if name in _PHRASES:
            values[name] = tuple(tuple(phrase.split()) for phrase in value)
        elif isinstance(value, str):
            values[name] = words(value)
        elif isinstance(value, list):
            values[name] = tuple(value)
        else:
            values[name] = value
    return Lexicon(**values)


def _read_lexicons() -> tuple[dict[str, Lexicon], frozenset[str]]:
    data = tomllib.loads(resources.files(__package__).joinpath("lexicons.toml").read_text("utf-8"))
    aliases: dict[str, str] = data.pop("aliases")
    titles = words(data.pop("shared")["titles"])
    lexicons = {code: _lexicon(table) for code, table in data.items()}
    lexicons |= {code: lexicons[same] for code, same in aliases.items()}
    return lexicons, titles


# every language's lexicon by its code; TITLES: titles and honorifics that stand before a name in
# many languages ("Emperor Shah Jahan", "सम्राट शाहजहाँ"): a title before a reference names who it is,
# it does not make a longer name of it
LEXICONS, TITLES = _read_lexicons()
ENGLISH_ABSTENTION = LEXICONS["en"].abstention
