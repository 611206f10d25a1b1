"""A scripted support desk, the offline example of simulated users (docs/trajectories.md,
"Simulated users"): it reads the whole conversation on every turn (no state of its own), asks
for the order number when it needs one, and calls its tools (``lookup_order``,
``issue_refund``, ``track_order``) as a real agent would; it cannot cancel orders, which its
scenarios find out. ``target: example_agent.support:chat`` in the configuration file."""

from __future__ import annotations

import re

ORDER = re.compile(r"(?<![A-Za-z0-9])([A-Z]\d{1,4})(?![0-9])")
ORDERS = {"A100": ("shipped", 25), "B7": ("packed", 40), "C3": ("delivered", 10)}


def _intent(texts: list[str]) -> str | None:
    joined = " ".join(texts).lower()
    for intent, words in (
        ("refund", ("refund", "money back")),
        ("track", ("where", "track")),
        ("cancel", ("cancel",)),
    ):
        if any(w in joined for w in words):
            return intent
    return None


def chat(message: str, messages: list[dict] | None = None, session: str | None = None) -> dict:
    """The desk's reply to the latest message, given the history (OpenAI chat format)."""
    said = [m["content"] for m in (messages or [{"role": "user", "content": message}]) if m["role"] == "user"]
    intent = _intent(said)
    orders = [found.group(1) for text in said if (found := ORDER.search(text))]
    if intent is None:
        return {"reply": "Hello! How can I help you today?", "tool_calls": []}
    if intent == "cancel":
        return {"reply": "I am sorry, orders cannot be cancelled from this desk.", "tool_calls": []}
    if not orders:
        return {"reply": "Sure. What is your order number?", "tool_calls": []}
    order = orders[-1]
    status, amount = ORDERS.get(order, ("unknown", 0))
    lookup = {"name": "lookup_order", "arguments": {"order_id": order}, "result": status}
    if intent == "track":
        return {"reply": f"Order {order} is {status}.", "tool_calls": [lookup]}
    refund = {"name": "issue_refund", "arguments": {"order_id": order, "amount": amount}, "result": "ok"}
    return {
        "reply": f"Your refund of {amount} EUR for order {order} has been issued.",
        "tool_calls": [lookup, refund],
    }
