"""A content-addressed response cache on disk: unchanged prompts never cost a second call."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

from rag_eval_pipeline.llm.client import LLMClient, LLMRequest, LLMResponse


class ResponseCache:
    """``<folder>/<key[:2]>/<key>.json``; only successful responses are stored."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> LLMResponse | None:
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            return LLMResponse.from_dict(json.loads(path.read_text()), from_cache=True)
        except (ValueError, KeyError, TypeError):  # a torn or foreign file: treat as a miss
            return None

    def put(self, key: str, response: LLMResponse) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}")
        tmp.write_text(json.dumps(response.to_dict(), ensure_ascii=False))
        os.replace(tmp, path)


class CachedClient:
    """Serves repeated requests from the cache and counts the calls it really makes."""

    def __init__(self, inner: LLMClient, cache: ResponseCache | None) -> None:
        self._inner = inner
        self._cache = cache
        self.api_calls = 0
        self.cache_hits = 0

    async def complete(self, request: LLMRequest) -> LLMResponse:
        key = request.cache_key()
        if self._cache is not None:
            cached = self._cache.get(key)
            if cached is not None:
                self.cache_hits += 1
                return cached
        self.api_calls += 1
        response = await self._inner.complete(request)
        if self._cache is not None:
            self._cache.put(key, response)
        return response
