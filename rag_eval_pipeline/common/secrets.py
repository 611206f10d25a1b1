"""Secrets never leave the process in the clear: every value read from an environment variable
the configuration names (an agent's secret header, an API key, a collector's token, a database
URL) is replaced by ``***`` in what is stored, logged, traced or printed. The values are
gathered once per run (``Settings.redactor``) and applied where a failure is recorded: the
reason of a failed answer or judgement, a transport's own error, a cached reply, a printed
line."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MASK = "***"
MIN_SECRET_CHARS = 6  # shorter values would mask ordinary words; no real key is this short


def _forms(value: str) -> list[str]:
    """A value and the token inside it ("Bearer <token>", "Basic <token>"): an echo may show
    either."""
    forms = [value]
    scheme, _, token = value.partition(" ")
    if token and scheme.isalpha():
        forms.append(token)
    if "://" in value and "@" in value:  # a URL with a password: the password alone
        credentials = value.split("://", 1)[1].split("@", 1)[0]
        if ":" in credentials:  # (a user name alone is no secret: "postgres" must stay readable)
            forms.append(credentials.split(":", 1)[1])
    return [f for f in forms if len(f) >= MIN_SECRET_CHARS]


@dataclass(frozen=True)
class Redactor:
    """Replaces every known secret (longest first, so a value inside another is not left half
    shown) by ``MASK``; an empty redactor changes nothing."""

    secrets: tuple[str, ...] = ()

    @classmethod
    def of(cls, values: Iterable[str | None]) -> Redactor:
        forms = {form for value in values if value for form in _forms(value)}
        return cls(tuple(sorted(forms, key=len, reverse=True)))

    @classmethod
    def of_variables(cls, names: Iterable[str], environ: Mapping[str, str]) -> Redactor:
        return cls.of(environ.get(name) for name in names)

    def __call__(self, text: str | None) -> str | None:
        if text is None or not self.secrets:
            return text
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def document(self, value: Any) -> Any:
        """A JSON-like value with every string masked (a reply that echoes a header)."""
        if not self.secrets:
            return value
        if isinstance(value, str):
            return self(value)
        if isinstance(value, Mapping):
            return {k: self.document(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.document(v) for v in value]
        return value

    def merged(self, other: Redactor) -> Redactor:
        return Redactor.of([*self.secrets, *other.secrets])


NO_SECRETS = Redactor()  # immutable: masks nothing (a run that reads no secret)
