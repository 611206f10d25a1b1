"""A team's RAG agent, as a stand-in for yours: its own retrieval (TF-IDF over the paragraphs of a
HotpotQA file), an extractive answer, and a reply in its own nested shape. It is what the tests
and the README's "Evaluate your own agent" example evaluate, over HTTP (``python -m
example_agent``), as a Python callable (``example_agent:answer``) and as a file of its answers.

It imports nothing from rag_eval_pipeline: it is the system under test, not part of the tool."""

from example_agent.agent import Agent, answer, answer_async, default_agent

__all__ = ["Agent", "answer", "answer_async", "default_agent"]
