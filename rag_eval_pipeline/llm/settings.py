"""The configuration file's LLM sections: one per provider, and the response cache. Validated
once with the rest of ``rag_eval.yaml`` (``config.Settings``) and read by the provider table."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from rag_eval_pipeline.common.settings import Strict


class _Section(Strict):
    timeout_s: float = Field(default=60.0, gt=0, description="seconds one attempt may wait for bytes")
    max_retries: int = Field(default=4, ge=0, description="retries per call: 429 honours retry-after")
    call_deadline_s: float | None = Field(
        default=None,
        gt=0,
        description="at most this long for a whole call, retries included (None: timeout_s x "
        "attempts); a server that trickles bytes cannot hold a run past it",
    )

    def call_deadline(self) -> float:
        """The overall deadline of one call: the SDKs' timeouts restart with every byte."""
        return self.call_deadline_s or self.timeout_s * (self.max_retries + 1)


class AnthropicSettings(_Section):
    """Claude answer models and judges (``ANTHROPIC_API_KEY`` in the environment)."""

    base_url: str | None = Field(default=None, description="None: ANTHROPIC_BASE_URL, else Anthropic's API")
    send_temperature: bool = Field(
        default=True, description="send temperature 0 (turn off for models that reject it)"
    )
    use_batches: bool = Field(
        default=False, description="each stage's uncached calls as one Message Batch (half price, slower)"
    )
    batch_poll_interval_s: float = Field(default=30.0, gt=0)


class OpenAISettings(_Section):
    """Defaults of ``openai:<model>`` answer models and judges (a named answer model may point
    at another server)."""

    base_url: str | None = Field(default=None, description="None: OPENAI_BASE_URL, else api.openai.com")
    api_key_env: str = Field(default="OPENAI_API_KEY", description="the variable holding the key")
    structured_output: Literal["auto", "json_schema", "tools", "text"] = Field(
        default="auto",
        description="how judges get JSON: auto tries json_schema, then tools, then text",
    )


class LocalLLMSettings(_Section):
    """The llama.cpp server a run starts for ``local:<model>`` (the ``[local]`` extra). A CPU
    server answers one long prompt in tens of seconds when the machine is busy: the timeout is
    five minutes and a call is retried once."""

    timeout_s: float = Field(default=300.0, gt=0, description="a CPU server is slow under load")
    max_retries: int = Field(default=1, ge=0)
    n_ctx: int = Field(default=8192, ge=512, description="context tokens, shared by the slots")
    n_parallel: int = Field(default=2, ge=1, description="requests decoded side by side")
    threads: int | None = Field(
        default=None, ge=1, description="None: the cores not busy when the server starts, at least one"
    )
    mmproj: dict[str, str] = Field(
        default_factory=dict,
        description="a vision model's projector (llama.cpp's mmproj GGUF) by the model as named after "
        "local:; with it the server loads the projector and the model is shown images",
    )


class CacheSettings(Strict):
    """The content-addressed response cache every LLM call goes through."""

    enabled: bool = True
    refresh: bool = Field(default=False, description="ask every call again (new answers still enter it)")
    folder: str | None = Field(default=None, description="None: <DAGSTER_HOME>/storage/llm_cache")


class LLMSettings(Strict):
    """What the provider table reads: every provider's section, the cache and the limit on calls
    in flight (per provider, shared by every run of the instance)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    anthropic: AnthropicSettings = AnthropicSettings()
    openai: OpenAISettings = OpenAISettings()
    local: LocalLLMSettings = LocalLLMSettings()
    cache: CacheSettings = CacheSettings()
    concurrency: int = 8
