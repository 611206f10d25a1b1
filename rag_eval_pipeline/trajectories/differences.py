"""Where a session's tool calls differ from the reference's: the calls made and expected side by
side (aligned by tool name, in order), each pair's differing arguments named, so a wrong SKU is
seen at once rather than cut off in a long line of calls."""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from rag_eval_pipeline.reporting.markdown import markdown_text

MISSING = object()  # an argument one side has and the other does not


@dataclass(frozen=True)
class CallPair:
    """One line of the comparison: a call made and the call expected in its place (either may
    be absent), and the arguments whose values differ (empty when the call matches)."""

    made: tuple[str, str] | None  # (tool name, arguments as canonical JSON)
    expected: tuple[str, str] | None
    differing: tuple[str, ...] = ()

    @property
    def differs(self) -> bool:
        return (
            self.made is None
            or self.expected is None
            or self.made[0] != self.expected[0]
            or bool(self.differing)
        )


def _arguments(text: str) -> object:
    try:
        return json.loads(text) if text else {}
    except ValueError:  # not JSON: compared as written
        return text


def differing_arguments(made: str, expected: str) -> tuple[str, ...]:
    """The argument names whose values differ (a top-level key present on one side only too);
    ``*`` when the arguments are not both objects and differ."""
    a, b = _arguments(made), _arguments(expected)
    if isinstance(a, dict) and isinstance(b, dict):
        return tuple(sorted(k for k in a.keys() | b.keys() if a.get(k, MISSING) != b.get(k, MISSING)))
    return () if a == b else ("*",)


def aligned_calls(made: Sequence[tuple[str, str]], expected: Sequence[tuple[str, str]]) -> list[CallPair]:
    """The calls made against those expected, in order, aligned on the tools' names (the longest
    common run of names, as difflib aligns lines): an extra, a missing or a wrong call is a pair
    with one side absent or with its differing arguments."""
    names = difflib.SequenceMatcher(a=[c[0] for c in made], b=[c[0] for c in expected], autojunk=False)
    pairs: list[CallPair] = []
    for tag, a0, a1, b0, b1 in names.get_opcodes():
        if tag == "equal":
            pairs += [
                CallPair(m, e, differing_arguments(m[1], e[1]))
                for m, e in zip(made[a0:a1], expected[b0:b1], strict=True)
            ]
            continue
        ours, theirs = list(made[a0:a1]), list(expected[b0:b1])
        for n in range(max(len(ours), len(theirs))):
            m = ours[n] if n < len(ours) else None
            e = theirs[n] if n < len(theirs) else None
            pairs.append(CallPair(m, e, differing_arguments(m[1], e[1]) if m and e else ()))
    return pairs


def first_difference(pairs: Sequence[CallPair]) -> str:
    """The first place the calls part, in a few words for a narrow column: `call 2 sku: "SKU-1"
    (expected "SKU-7")`, another tool, an extra or a missing call; "none" when every call
    matches (the tool's name and every call in full are in ``calls_markdown``)."""
    for n, pair in enumerate(pairs, start=1):
        if not pair.differs:
            continue
        if pair.expected is None:
            return f"call {n}: extra {pair.made[0]}"  # type: ignore[index]
        if pair.made is None:
            return f"call {n}: missing {pair.expected[0]}"
        if pair.made[0] != pair.expected[0]:
            return f"call {n}: {pair.made[0]} (expected {pair.expected[0]})"
        a, b = _arguments(pair.made[1]), _arguments(pair.expected[1])
        key = pair.differing[0]
        if isinstance(a, dict) and isinstance(b, dict):
            shown = [
                json.dumps(side.get(key), ensure_ascii=False) if key in side else "absent" for side in (a, b)
            ]
            return f"call {n} {key}: {shown[0]} (expected {shown[1]})"
        return f"call {n} {pair.made[0]}: arguments {pair.made[1]} (expected {pair.expected[1]})"
    return "none"


def _call_markdown(call: tuple[str, str] | None, differing: tuple[str, ...]) -> str:
    """A call as Markdown, in full, each differing argument's name and value in bold."""
    if call is None:
        return "–"
    name, text = call
    arguments = _arguments(text)
    if not differing or not isinstance(arguments, dict):
        shown = markdown_text(text)
        return f"{markdown_text(name)}(**{shown}**)" if differing else f"{markdown_text(name)}({shown})"
    parts = []
    for key, value in arguments.items():
        said = markdown_text(
            f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}"
        )
        parts.append(f"**{said}**" if key in differing else said)
    return f"{markdown_text(name)}({{{', '.join(parts)}}})"


def calls_markdown(pairs: Sequence[CallPair]) -> str:
    """The calls made and expected, one numbered line each (a list wraps in a narrow pane where
    a table would not), every call in full, a differing pair saying how and its differing
    arguments in bold: one session's page."""
    lines = []
    for n, pair in enumerate(pairs, start=1):
        made, expected = (
            _call_markdown(pair.made, pair.differing),
            _call_markdown(pair.expected, pair.differing),
        )
        if pair.made is None:
            lines.append(f"{n}. **missing**: expected {expected}")
        elif pair.expected is None:
            lines.append(f"{n}. {made}: **extra**, not expected")
        elif pair.made[0] != pair.expected[0]:
            lines.append(f"{n}. {made}: **another tool**, expected {expected}")
        elif pair.differing:
            said = markdown_text(", ".join(pair.differing))
            lines.append(f"{n}. {made}: **{said} differs**, expected {expected}")
        else:
            lines.append(f"{n}. {made}: as expected")
    return "\n".join(lines)
