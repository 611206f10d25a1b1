"""A team's agent as a Python module (the example agent underneath, its own retrieval): on every
other question its answer adds a sentence from a paragraph it did not return (a claim no context
states: what the claim judge must catch), and it cites its top-ranked context."""

import zlib

from example_agent.agent import default_agent


def answer(question: str) -> dict:
    agent = default_agent()
    reply = dict(agent.reply(question))
    invented = agent.reply(question, buggy=True)["answer"]
    if zlib.crc32(question.encode()) % 2 and invented not in ("unknown", reply["answer"]):
        reply["answer"] = f"{reply['answer']} {invented}"
    reply["citations"] = [1] if reply["contexts"] else []
    return reply
