"""Stage 1: answer models. A partition key resolves once into an ``AnswerSpec`` through
``answering.registry.AnswerRegistry``; providers implement ``AnswerProvider``."""
