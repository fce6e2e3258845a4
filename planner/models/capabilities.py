"""What each Claude model family accepts, costs and caches: one table, one place for each fact.

The Claude backend (`planner.models.claude`) builds every request from this table, `bench.tokens`
sizes prompts with it, and the tests' fake Messages API (`tests/fake_anthropic.py`) refuses what it
says a family refuses, so the product, the benchmark and the fake cannot disagree about a model.

A model id belongs to the family with the longest matching prefix (`claude-sonnet-5-5` before
`claude-sonnet-5`), so dated and suffixed ids resolve too. An id that matches no family runs as
`CONSERVATIVE`: it is assumed to refuse every setting a current model may refuse (forced tool choice,
sampling parameters, prefill, every thinking setting, effort), so the request carries none of them,
and its cost is recorded as unknown (0.0), never guessed.

Where each fact comes from is said next to it. "Issue 11" is the migration notes for Claude Sonnet 5.5
as quoted in the project's issue 11 (model released 2026-09-28). Other pages were looked up on
2026-11-30 through the documentation search; "unverified" marks a value no page confirmed, chosen on
the safe side. Prices are list prices in USD per million tokens: an estimate, the invoice decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

__all__ = [
    "CONSERVATIVE",
    "DEFAULT_MODEL",
    "EFFORTS",
    "FAMILIES",
    "Effort",
    "Family",
    "Prices",
    "family_of",
    "is_known",
]

DEFAULT_MODEL = "claude-sonnet-5-5"
"""The current Sonnet (issue 11: released 2026-09-28; Sonnet 4.6 is legacy): `--model claude` runs it."""

Effort = Literal["low", "medium", "high", "xhigh", "max"]
EFFORTS: tuple[Effort, ...] = get_args(Effort)
"""Every effort level the API defines (`output_config.effort`, anthropic SDK 2.14.0 `OutputConfigParam`)."""

ThinkingMode = Literal["enabled", "disabled", "adaptive", "between_tools"]
"""The `thinking.type` values the API defines (SDK 2.14.0 `ThinkingConfigParam`); "enabled" carries a token budget."""

_PRICING = "https://platform.claude.com/docs/en/about-claude/pricing (looked up 2026-11-30)"
_CACHE_MINIMUMS = (
    "https://docs.orq.ai/docs/proxy/prompt-caching and anthropics/anthropic-sdk-python#1194 "
    "(looked up 2026-11-30; the SDK issue reports 2,048 observed on Sonnet 4.6 where the docs said 1,024)"
)


@dataclass(frozen=True, slots=True)
class Prices:
    """USD per million tokens: input, output, cache writes (5-minute and 1-hour) and cache reads."""

    input: float
    output: float
    write_5m: float
    write_1h: float
    read: float

    def cost(self, input_tokens: int, output_tokens: int, cache_write: int, cache_read: int) -> float:
        """Estimated USD for one call. Cache writes are priced at the 5-minute rate, the TTL this
        backend asks for (`cache_control: ephemeral` without a ttl)."""
        total = (
            input_tokens * self.input
            + output_tokens * self.output
            + cache_write * self.write_5m
            + cache_read * self.read
        )
        return round(total / 1_000_000, 8)


@dataclass(frozen=True, slots=True)
class Family:
    """One model family: what a request to it may carry, what it costs, and its limits.

    `forced_tool_choice`: accepts `tool_choice` of type "tool" or "any". `sampling_params`: accepts
    non-default temperature, top_p and top_k. `prefill`: accepts a conversation that ends with an
    assistant turn. `thinking_modes`: the `thinking.type` values it accepts. `thinks_by_default`:
    a request without `thinking` runs with adaptive thinking (its answers start with thinking
    blocks). `effort_levels`: the `output_config.effort` values it accepts (empty: none).
    `tokens_per_char`: its tokenizer against four characters a token (the fake counts with it and
    the backend sizes its prefix with it). `cache_minimum`: the shortest prefix, in tokens, it caches.
    """

    name: str
    prefixes: tuple[str, ...]
    forced_tool_choice: bool
    sampling_params: bool
    prefill: bool
    thinking_modes: frozenset[ThinkingMode]
    thinks_by_default: bool
    effort_levels: tuple[Effort, ...]
    prices: Prices | None
    context_tokens: int
    output_tokens: int
    cache_minimum: int
    tokens_per_char: float = 0.25
    source: str = ""

    @property
    def refused(self) -> tuple[str, ...]:
        """The settings this family answers with HTTP 400, by name (what the backend must never send)."""
        names = []
        if not self.forced_tool_choice:
            names.append("forced tool choice")
        if not self.sampling_params:
            names.append("sampling parameters")
        if not self.prefill:
            names.append("assistant prefill")
        if "enabled" not in self.thinking_modes:
            names.append("thinking budget")
        if "disabled" not in self.thinking_modes:
            names.append("thinking disabled")
        return tuple(names)


FAMILIES: tuple[Family, ...] = (
    Family(
        name="Claude Sonnet 5.5",
        prefixes=("claude-sonnet-5-5",),
        # Issue 11 (migration notes, 2026-09-28): thinking budgets, sampling parameters, prefill, forced
        # tool choice and thinking "disabled" return 400; "between_tools" is the lowest setting; adaptive
        # thinking is on by default. Same in https://platform.claude.com/docs/en/models/sonnet-5-5/migration-guide.
        forced_tool_choice=False,
        sampling_params=False,
        prefill=False,
        thinking_modes=frozenset({"adaptive", "between_tools"}),
        thinks_by_default=True,
        # Levels: "same levels as Sonnet 5, recalibrated; API default high" (apidog.com/jp/blog/
        # claude-sonnet-5-5-vs-sonnet-5); xhigh and max need adaptive thinking (whats-new-sonnet-5-5).
        effort_levels=EFFORTS,
        # Issue 11 and https://platform.claude.com/docs/zh-CN/models/sonnet-5-5/overview: $2 / $10,
        # writes $2.50 (5 min) / $4 (1 h), reads $0.20. The migration guide (same day) says reads cost
        # $0.10; we keep $0.20, the higher figure, so a cost cap is never reached late.
        prices=Prices(2.0, 10.0, 2.50, 4.0, 0.20),
        context_tokens=1_000_000,  # model page: 1M context, 128K output
        output_tokens=128_000,
        cache_minimum=512,  # apidog.com comparison table; unverified on Anthropic's own pages
        tokens_per_char=0.325,  # same tokenizer as Sonnet 5 (whats-new-sonnet-5-5), ~30% more tokens (below)
        source="issue 11; platform.claude.com models/sonnet-5-5 overview and migration guide (looked up 2026-11-30)",
    ),
    Family(
        name="Claude Sonnet 5",
        prefixes=("claude-sonnet-5",),
        # https://platform.claude.com/docs/zh-CN/models/sonnet-5/overview: legacy since Sonnet 5.5;
        # manual extended thinking and non-default sampling parameters return 400; adaptive thinking on
        # by default. Forced tool choice accepted (apidog comparison). Prefill: unverified, so refused.
        forced_tool_choice=True,
        sampling_params=False,
        prefill=False,
        thinking_modes=frozenset({"adaptive", "disabled"}),
        thinks_by_default=True,
        effort_levels=EFFORTS,  # https://platform.claude.com/docs/en/build-with-claude/effort: xhigh, max
        prices=Prices(2.0, 10.0, 2.50, 4.0, 0.20),
        context_tokens=1_000_000,
        output_tokens=128_000,
        cache_minimum=1024,  # apidog.com comparison table; unverified on Anthropic's own pages
        # "a new tokenizer that produces roughly 30% more tokens for the same text" (docs.oxen.ai model page)
        tokens_per_char=0.325,
        source="platform.claude.com models/sonnet-5 overview; docs.oxen.ai (looked up 2026-11-30)",
    ),
    Family(
        name="Claude Sonnet 4.6",
        prefixes=("claude-sonnet-4-6",),
        forced_tool_choice=True,
        sampling_params=True,
        prefill=False,  # unverified for Sonnet 4.6; we never send a prefill
        thinking_modes=frozenset({"enabled", "disabled", "adaptive"}),
        thinks_by_default=False,  # Sonnet 5.5 migration guide: 4.6 does not think without a thinking field
        effort_levels=("low", "medium", "high", "max"),  # effort page: max on Sonnet 4.6
        prices=Prices(3.0, 15.0, 3.75, 6.0, 0.30),  # Venice lists $3 / $15; writes 1.25x / 2x input, reads 0.1x
        context_tokens=200_000,  # unverified (1M may be available); the smaller figure is the safe one
        output_tokens=64_000,
        cache_minimum=2048,
        source=f"{_PRICING}; {_CACHE_MINIMUMS}",
    ),
    Family(
        name="Claude Sonnet 4 and 4.5",
        prefixes=("claude-sonnet-4",),
        forced_tool_choice=True,
        sampling_params=True,
        prefill=True,
        thinking_modes=frozenset({"enabled", "disabled"}),
        thinks_by_default=False,
        effort_levels=(),
        prices=Prices(3.0, 15.0, 3.75, 6.0, 0.30),
        context_tokens=200_000,
        output_tokens=64_000,
        cache_minimum=1024,
        source=f"{_PRICING}; {_CACHE_MINIMUMS}",
    ),
    Family(
        name="Claude Opus 4.7 and 4.8",
        prefixes=("claude-opus-4-7", "claude-opus-4-8"),
        # Prices from the pricing page. What requests they accept is unverified, so they get the
        # conservative request (no forced tool choice, no sampling, no thinking or effort sent).
        forced_tool_choice=False,
        sampling_params=False,
        prefill=False,
        thinking_modes=frozenset({"adaptive"}),  # AWS Bedrock adaptive-thinking page lists Opus 4.7
        thinks_by_default=False,  # unverified
        effort_levels=EFFORTS,  # effort page: xhigh and max on Opus 4.8 and 4.7
        prices=Prices(5.0, 25.0, 6.25, 10.0, 0.50),
        context_tokens=200_000,  # unverified
        output_tokens=64_000,  # unverified
        cache_minimum=4096,  # unverified; assumed as Opus 4.6
        source=f"{_PRICING}; platform.claude.com build-with-claude/effort (looked up 2026-11-30)",
    ),
    Family(
        name="Claude Opus 4.5 and 4.6",
        prefixes=("claude-opus-4-5", "claude-opus-4-6"),
        forced_tool_choice=True,
        sampling_params=True,
        prefill=False,  # unverified for Opus 4.6; we never send a prefill
        thinking_modes=frozenset({"enabled", "disabled"}),  # adaptive on 4.6 only, so not for the family
        thinks_by_default=False,
        effort_levels=("low", "medium", "high"),  # effort page (ja/zh): Opus 4.5 and 4.6; max on 4.6 only
        prices=Prices(5.0, 25.0, 6.25, 10.0, 0.50),
        context_tokens=200_000,
        output_tokens=64_000,
        cache_minimum=4096,
        source=f"{_PRICING}; {_CACHE_MINIMUMS}",
    ),
    Family(
        name="Claude Opus 4 and 4.1",
        prefixes=("claude-opus-4-1", "claude-opus-4-2025"),
        forced_tool_choice=True,
        sampling_params=True,
        prefill=True,
        thinking_modes=frozenset({"enabled", "disabled"}),
        thinks_by_default=False,
        effort_levels=(),
        prices=Prices(15.0, 75.0, 18.75, 30.0, 1.50),  # retired except on Bedrock and Google Cloud
        context_tokens=200_000,
        output_tokens=32_000,
        cache_minimum=1024,
        source=f"{_PRICING}; {_CACHE_MINIMUMS}",
    ),
    Family(
        name="Claude Haiku 4.5",
        prefixes=("claude-haiku-4-5",),
        forced_tool_choice=True,
        sampling_params=True,
        prefill=True,
        # "claude-haiku-4-5 accepts enabled but rejects adaptive" (docs.perplexity.ai reasoning-and-caching)
        thinking_modes=frozenset({"enabled", "disabled"}),
        thinks_by_default=False,
        effort_levels=(),
        prices=Prices(1.0, 5.0, 1.25, 2.0, 0.10),
        context_tokens=200_000,  # Sonnet 5.5 overview's comparison table: 200K / 64K
        output_tokens=64_000,
        cache_minimum=4096,
        source=f"{_PRICING}; {_CACHE_MINIMUMS}",
    ),
    Family(
        name="Claude Haiku 3.5",
        prefixes=("claude-3-5-haiku",),
        forced_tool_choice=True,
        sampling_params=True,
        prefill=True,
        thinking_modes=frozenset(),
        thinks_by_default=False,
        effort_levels=(),
        prices=Prices(0.80, 4.0, 1.0, 1.6, 0.08),
        context_tokens=200_000,
        output_tokens=8_192,
        cache_minimum=2048,
        source=f"{_PRICING}; {_CACHE_MINIMUMS}",
    ),
)
"""Every family this backend knows, newest first."""

CONSERVATIVE = Family(
    name="an unknown Claude model",
    prefixes=(),
    forced_tool_choice=False,
    sampling_params=False,
    prefill=False,
    thinking_modes=frozenset(),
    thinks_by_default=False,
    effort_levels=(),
    prices=None,
    context_tokens=200_000,
    output_tokens=8_192,
    cache_minimum=1024,
    source="assumptions: refuses every setting a current model may refuse; price unknown",
)
"""The family of an id the table does not know: the request carries only what every model accepts."""

_BY_PREFIX: dict[str, Family] = {prefix: family for family in FAMILIES for prefix in family.prefixes}


def family_of(model: str) -> Family:
    """The family of a model id: the longest matching prefix in `FAMILIES`, else `CONSERVATIVE`."""
    key = max((prefix for prefix in _BY_PREFIX if model.startswith(prefix)), key=len, default=None)
    return _BY_PREFIX[key] if key is not None else CONSERVATIVE


def is_known(model: str) -> bool:
    """Whether `model` belongs to a family in the table (otherwise it runs as `CONSERVATIVE`)."""
    return family_of(model) is not CONSERVATIVE
