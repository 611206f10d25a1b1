"""The agent's own spans as the record of its tool calls: when it exports traces (OTLP/JSON
files, the conversation id on its spans), a simulated session's calls are the ones its spans
hold, matched by session id (the ``{session}`` it was sent), instead of what its reply lists."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from rag_eval_pipeline.trajectories.sessions import Session
from rag_eval_pipeline.trajectories.simulation.conversation import SimulatedSession

SPANS = "spans"
REPLY = "reply"


def with_traced_calls(
    simulated: Sequence[SimulatedSession], traced: Sequence[Session]
) -> list[SimulatedSession]:
    """Each session with the tool calls of the traced session of the same id, turn by turn
    where the turns line up, else all on its first turn in the order they started; a session
    the traces do not hold keeps what its replies listed (``calls_from`` says which)."""
    by_id = {s.session_id: s for s in traced}
    kept = []
    for one in simulated:
        found = by_id.get(one.session.session_id)
        if found is None or not one.session.turns:
            kept.append(replace(one, calls_from=REPLY))
            continue
        turns = list(one.session.turns)
        if len(found.turns) == len(turns):
            turns = [
                replace(t, tool_calls=f.tool_calls, span_ids=f.span_ids) for t, f in zip(turns, found.turns)
            ]
        else:
            turns = [replace(turns[0], tool_calls=found.tool_calls, span_ids=found.span_ids)] + [
                replace(t, tool_calls=()) for t in turns[1:]
            ]
        kept.append(replace(one, session=replace(one.session, turns=tuple(turns)), calls_from=SPANS))
    return kept
