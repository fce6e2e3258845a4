"""What each Claude model family accepts, costs and caches: one table, one place for each fact.

The Claude backend (`planner.models.claude`) builds every request from this table, `bench.tokens`
sizes prompts with it, and the tests' fake Messages API (`tests/fake_anthropic.py`) refuses what it
says a family refuses, so the product, the benchmark and the fake cannot disagree about a model.

A model id belongs to the family with the longest matching prefix (`claude-sonnet-5-5` before
`claude-sonnet-5`), so dated and suffixed ids resolve too. An id that matches no family runs as
`CONSERVATIVE`, the most careful current family: thinking assumed on (adaptive, summarized), a
thinking-sized output budget, none of the settings a current model may refuse, and no price.

Each fact carries a short source key in a comment (`[pricing]`); `SOURCES` maps each key to the page
and the day it was read, and docs/claude.md shows the whole table. `Family.unconfirmed` names the
facts no page confirms; for those the table holds the safe value (a setting assumed refused, the
higher price, the larger cache minimum). Prices are list prices in USD per million tokens: an
estimate, the invoice decides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

__all__ = [
    "CONSERVATIVE",
    "DEFAULT_MODEL",
    "EFFORTS",
    "FAMILIES",
    "SOURCES",
    "THINKING_ROOM",
    "Effort",
    "Family",
    "Prices",
    "family_of",
    "is_known",
]

DEFAULT_MODEL = "claude-sonnet-5-5"
"""The current Sonnet (released 2026-09-28; Sonnet 5 is legacy): `--model claude` runs it."""

Effort = Literal["low", "medium", "high", "xhigh", "max"]
EFFORTS: tuple[Effort, ...] = get_args(Effort)
"""Every effort level the API defines (`output_config.effort`, anthropic SDK 2.14.0 `OutputConfigParam`)."""

ThinkingMode = Literal["enabled", "disabled", "adaptive", "between_tools"]
"""The `thinking.type` values the API defines (SDK 2.14.0 `ThinkingConfigParam`); "enabled" carries a token budget."""

Display = Literal["summarized", "omitted"]
"""What a thinking block carries: a summary of the thinking, or an empty text (faster first token)."""

_READ = "2026-12-03"
_P = "https://platform.claude.com/docs"
SOURCES: dict[str, tuple[tuple[str, ...], str]] = {
    # The pricing page itself was not in the search index; these quote it (claudit checked it on 2026-10-24).
    "pricing": (
        (
            f"{_P}/en/about-claude/pricing (as quoted by the next two)",
            "https://docs.rs/synaps/0.10.2/synaps_cli/pricing/index.html",
            "https://github.com/kurofune/claudit/releases/tag/v1.9.2",
        ),
        _READ,
    ),
    "models": ((f"{_P}/en/models/haiku-5-5/overview",), _READ),  # its comparison table of the current lineup
    "haiku-5-5": ((f"{_P}/en/models/haiku-5-5/overview", f"{_P}/zh-CN/models/haiku-5-5/migration-guide"), _READ),
    "sonnet-5-5": ((f"{_P}/zh-CN/models/sonnet-5-5/overview", f"{_P}/en/models/sonnet-5-5/migration-guide"), _READ),
    "sonnet-5": ((f"{_P}/zh-CN/models/sonnet-5/overview",), _READ),
    "opus-5-5": ((f"{_P}/es/models/opus-5-5/whats-new-opus-5-5",), _READ),
    "fable-5-2": (
        (f"{_P}/en/models/fable-5-2/whats-new-fable-5-2", f"{_P}/en/models/fable-5-2/migration-guide"),
        _READ,
    ),
    "fable-5-1": ((f"{_P}/models/fable-5-1/whats-new-fable-5-1",), _READ),
    "fable-5": ((f"{_P}/en/models/fable-5/overview",), _READ),
    "thinking": ((f"{_P}/build-with-claude/thinking",), _READ),  # thinking tokens count toward max_tokens
    "effort-per-message": ((f"{_P}/build-with-claude/effort-per-message",), _READ),
    "caching": ((f"{_P}/en/agents-and-tools/tool-use/tool-use-with-prompt-caching",), _READ),  # tools->system->messages
    # third parties quoting Anthropic's pages, where no Anthropic page in the index says it:
    "or-5-5": (("https://openrouter.ai/docs/cookbook/evaluate-and-optimize/model-migrations/claude-5-5",), _READ),
    "cache-min": (
        (
            "https://dev.to/creeta/claudes-prompt-cache-fails-silently-below-1024-tokens-1ch1",
            "https://www.fableguide.com/cookbook/prompt-caching.html",
        ),
        _READ,
    ),
    "fable-5-2-prices": (("https://www.developersdigest.tech/blog/claude-fable-5-2-whats-new-migration-2026",), _READ),
    "opus-5": (
        (
            "https://qiita.com/kai_kou/items/89ac7d29c7cc3f02ebd1",
            "https://github.com/krayong/ccsidekick/releases/tag/ccsidekick%401.6.4",
        ),
        _READ,
    ),
    "display": (
        ("https://github.com/anthropics/claude-code/issues/49268", "https://github.com/docker/docker-agent/pull/3415"),
        _READ,
    ),
    "haiku-4-5": (("https://docs.perplexity.ai/docs/orchestrator/reasoning-and-caching",), "2026-11-30"),
    "effort": ((f"{_P}/en/build-with-claude/effort",), "2026-11-30"),
    "cache-min-4": (
        (
            "https://docs.orq.ai/docs/proxy/prompt-caching",
            "https://github.com/anthropics/anthropic-sdk-python/issues/1194",
        ),
        "2026-11-30",
    ),
}
"""Every page a fact in `FAMILIES` comes from: short key -> (addresses, the day they were read)."""

THINKING_ROOM: dict[Effort, int] = {"low": 8_000, "medium": 16_000, "high": 32_000, "xhigh": 48_000, "max": 64_000}
"""Output tokens left for thinking at each effort, on top of the answer: thinking counts toward
`max_tokens` [thinking], so a budget without this room ends in a cut-off answer with no tool call.
No page gives thinking lengths per effort; these are our choice, generous and capped by each
family's `output_tokens`."""


@dataclass(frozen=True, slots=True)
class Prices:
    """USD per million tokens: input, output, cache writes (5-minute and 1-hour) and cache reads.

    `long` is a second band for prompts over `long_above` tokens (input, cache writes and cache reads
    together): such a request is billed at the `long` rates on every token, output included
    (Claude Haiku 5.5 [haiku-5-5])."""

    input: float
    output: float
    write_5m: float
    write_1h: float
    read: float
    long: Prices | None = None
    long_above: int = 0

    @classmethod
    def from_rates(cls, input: float, output: float) -> Prices:
        """Prices from an input and an output rate alone (a model the table does not know): cache
        writes at the usual 1.25x and 2x input, reads at 0.1x, the highest read multiple any current
        model has [pricing]."""
        return cls(input, output, 1.25 * input, 2 * input, 0.1 * input)

    def cost(self, input_tokens: int, output_tokens: int, cache_write: int, cache_read: int) -> float:
        """Estimated USD for one call. Cache writes are priced at the 5-minute rate, the TTL this
        backend asks for (`cache_control: ephemeral` without a ttl)."""
        band = self
        if self.long is not None and input_tokens + cache_write + cache_read > self.long_above:
            band = self.long
        total = (
            input_tokens * band.input
            + output_tokens * band.output
            + cache_write * band.write_5m
            + cache_read * band.read
        )
        return round(total / 1_000_000, 8)


@dataclass(frozen=True, slots=True)
class Family:
    """One model family: what a request to it may carry, what it costs, and its limits.

    `forced_tool_choice`: accepts `tool_choice` of type "tool" or "any". `sampling_params`: accepts
    non-default temperature, top_p and top_k. `prefill`: accepts a conversation that ends with an
    assistant turn. `thinking_modes`: the `thinking.type` values it accepts. `thinks_by_default`:
    a request without `thinking` runs with adaptive thinking. `display`: what its thinking blocks
    carry unless the request says otherwise. `effort_levels`: the `output_config.effort` values it
    accepts (empty: none); `default_effort`: the one it uses when none is sent. `tokens_per_char`: its
    tokenizer against four characters a token (the fake counts with it and the backend sizes its
    prefix with it). `cache_minimum`: the shortest prefix, in tokens, it caches. `unconfirmed`: the
    facts no page confirms (the table holds the safe value for each). `sources`: keys of `SOURCES`.
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
    display: Display = "summarized"
    default_effort: Effort | None = None
    unconfirmed: tuple[str, ...] = ()
    sources: tuple[str, ...] = field(default_factory=tuple)

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

    @property
    def source(self) -> str:
        """Where this family's facts come from, in one line: each page and the day it was read."""
        return "; ".join(f"{' and '.join(SOURCES[key][0])} (read {SOURCES[key][1]})" for key in self.sources)

    def max_tokens(self, effort: Effort | None, thinking: bool, answer: int) -> int:
        """`max_tokens` for one call: the answer, plus `THINKING_ROOM` at the effort the call runs at
        (the family's default when none is sent, "high" when that is unknown) when it thinks."""
        if not thinking:
            return min(self.output_tokens, answer)
        runs_at = effort or self.default_effort or "high"
        return min(self.output_tokens, answer + THINKING_ROOM[runs_at])


_STANDARD_5_5: frozenset[ThinkingMode] = frozenset({"adaptive"})
"""Thinking on the always-on families (Opus 5.5, Fable): adaptive only; "disabled" and budgets are 400s."""

FAMILIES: tuple[Family, ...] = (
    Family(
        name="Claude Sonnet 5.5",
        prefixes=("claude-sonnet-5-5",),
        # [sonnet-5-5]: thinking budgets, sampling parameters, prefill, forced tool choice and thinking
        # "disabled" return 400; "between_tools" is the lowest setting; adaptive thinking on by default.
        forced_tool_choice=False,
        sampling_params=False,
        prefill=False,
        thinking_modes=frozenset({"adaptive", "between_tools"}),
        thinks_by_default=True,
        display="omitted",  # [display]: the 5.x families omit thinking text unless asked
        effort_levels=EFFORTS,  # [or-5-5]: low, medium, high, xhigh, max on all three 5.5 models
        default_effort="high",  # [models]
        # [pricing]: $2 / $10, writes $2.50 / $4, reads $0.10 since 2026-10-07 (0.05x input; the zh-CN
        # model page read the same day still shows $0.20, from before the cut).
        prices=Prices(2.0, 10.0, 2.50, 4.0, 0.10),
        context_tokens=1_000_000,  # [models]
        output_tokens=128_000,
        cache_minimum=512,  # [or-5-5]
        tokens_per_char=0.325,  # [haiku-5-5]: the Claude 4.7 tokenizer, ~30% more tokens than four chars a token
        unconfirmed=("cache minimum (a third party's quote)", "display default"),
        sources=("sonnet-5-5", "models", "pricing", "or-5-5", "haiku-5-5", "display"),
    ),
    Family(
        name="Claude Opus 5.5",
        prefixes=("claude-opus-5-5",),
        # [opus-5-5]: thinking can't be disabled, forced tool use returns an error; [or-5-5]: budgets,
        # sampling parameters and prefill are 400s (already so on Opus 5).
        forced_tool_choice=False,
        sampling_params=False,
        prefill=False,
        thinking_modes=_STANDARD_5_5,
        thinks_by_default=True,
        display="omitted",  # [display]
        effort_levels=EFFORTS,  # [or-5-5]
        default_effort="medium",  # [models]
        prices=Prices(4.0, 20.0, 5.0, 8.0, 0.20),  # [pricing]: $4 / $20, writes $5 / $8, reads $0.20 (0.05x)
        context_tokens=1_000_000,  # [models]
        output_tokens=128_000,
        cache_minimum=512,  # [or-5-5]
        tokens_per_char=0.325,  # [haiku-5-5]
        unconfirmed=("cache minimum (a third party's quote)", "display default"),
        sources=("opus-5-5", "models", "pricing", "or-5-5", "haiku-5-5", "display"),
    ),
    Family(
        name="Claude Haiku 5.5",
        prefixes=("claude-haiku-5-5",),
        # [haiku-5-5] migration guide: budgets -> adaptive, remove temperature/top_p/top_k, end with a
        # user turn; adaptive thinking by default, and it can be turned off ([or-5-5]). Forced tool use
        # is not in its list of 400s, but it thinks by default and forced tool use with thinking has
        # been refused before: unconfirmed, so assumed refused.
        forced_tool_choice=False,
        sampling_params=False,
        prefill=False,
        thinking_modes=frozenset({"adaptive", "disabled"}),
        thinks_by_default=True,
        display="omitted",  # [display]
        effort_levels=EFFORTS,  # [or-5-5]
        default_effort="medium",  # [models]
        # [haiku-5-5]: prompts up to 100,000 tokens $0.10 / $0.50, writes $0.125 / $0.20; over 100,000
        # (input, cache writes and reads together) $0.50 / $2.50, writes $0.625 / $1.00, on every token.
        # Reads $0.01 / $0.05 [pricing] (claudit v1.9.2).
        prices=Prices(0.10, 0.50, 0.125, 0.20, 0.01, long=Prices(0.50, 2.50, 0.625, 1.00, 0.05), long_above=100_000),
        context_tokens=1_000_000,  # [haiku-5-5]
        output_tokens=128_000,
        cache_minimum=512,  # [or-5-5]
        tokens_per_char=0.325,  # [haiku-5-5]
        unconfirmed=(
            "forced tool choice (assumed refused)",
            "cache minimum (a third party's quote)",
            "display default",
        ),
        sources=("haiku-5-5", "models", "pricing", "or-5-5", "display"),
    ),
    Family(
        name="Claude Fable 5.2",
        prefixes=("claude-fable-5-2", "claude-mythos-5-2"),
        # [fable-5-2]: adaptive thinking always on, effort controls depth, 1M / 128k, the Opus 4.7
        # tokenizer; forced tool use stays an error (as on Fable 5.1). Sampling and prefill: unconfirmed,
        # refused as on every 5.x model.
        forced_tool_choice=False,
        sampling_params=False,
        prefill=False,
        thinking_modes=_STANDARD_5_5,
        thinks_by_default=True,
        display="omitted",  # [display]
        effort_levels=EFFORTS,
        default_effort="high",  # [fable-5-2-prices]
        # [fable-5-2-prices]: $8 / $40, reads $0.20, writes $10 / $16; no Anthropic page we read shows
        # them, so we keep Fable 5.1's higher $10 / $50 (a cost cap is then never reached late).
        prices=Prices(10.0, 50.0, 12.50, 20.0, 0.25),
        context_tokens=1_000_000,
        output_tokens=128_000,
        cache_minimum=2048,  # unconfirmed: the larger of the figures quoted for Fable [cache-min]
        tokens_per_char=0.325,  # [fable-5-2]
        unconfirmed=(
            "prices (Fable 5.1's kept)",
            "sampling parameters and prefill (assumed refused)",
            "effort levels",
            "cache minimum",
            "display default",
        ),
        sources=("fable-5-2", "fable-5-2-prices", "cache-min", "display"),
    ),
    Family(
        name="Claude Fable 5.1",
        prefixes=("claude-fable-5-1", "claude-mythos-5-1"),
        # [fable-5-1]: forced tool use returns an error; adaptive thinking always on ([models]).
        forced_tool_choice=False,
        sampling_params=False,
        prefill=False,
        thinking_modes=_STANDARD_5_5,
        thinks_by_default=True,
        display="omitted",  # [display]
        effort_levels=EFFORTS,
        default_effort="high",  # [models]
        prices=Prices(10.0, 50.0, 12.50, 20.0, 0.25),  # [models] $10 / $50; [pricing] reads 0.025x input
        context_tokens=1_000_000,  # [models]
        output_tokens=128_000,
        cache_minimum=2048,  # unconfirmed [cache-min]
        tokens_per_char=0.325,
        unconfirmed=("sampling parameters and prefill (assumed refused)", "effort levels", "cache minimum"),
        sources=("fable-5-1", "models", "pricing", "cache-min", "display"),
    ),
    Family(
        name="Claude Fable 5",
        prefixes=("claude-fable-5", "claude-mythos-5"),
        # [fable-5]: legacy; always-on adaptive thinking ("disabled" is an error), $10 / $50, reads $1.00.
        # Forced tool use: accepted until Fable 5.1 made it an error, but never with thinking, which is
        # always on here; so never sent.
        forced_tool_choice=False,
        sampling_params=False,
        prefill=False,
        thinking_modes=_STANDARD_5_5,
        thinks_by_default=True,
        display="omitted",  # [display]
        effort_levels=EFFORTS,
        default_effort="high",
        prices=Prices(10.0, 50.0, 12.50, 20.0, 1.00),  # [fable-5], [pricing]
        context_tokens=1_000_000,
        output_tokens=128_000,
        cache_minimum=2048,  # [cache-min]: 512 or 2,048 by source; the larger
        tokens_per_char=0.325,
        unconfirmed=("sampling parameters and prefill (assumed refused)", "cache minimum"),
        sources=("fable-5", "pricing", "cache-min", "display"),
    ),
    Family(
        name="Claude Opus 5",
        prefixes=("claude-opus-5",),
        # [opus-5]: legacy; adaptive thinking by default, "disabled" only at effort high or lower, default
        # effort high; prefill and sampling parameters are 400s ([or-5-5]). $5 / $25, reads $0.50.
        forced_tool_choice=False,
        sampling_params=False,
        prefill=False,
        thinking_modes=frozenset({"adaptive", "disabled"}),
        thinks_by_default=True,
        display="omitted",
        effort_levels=EFFORTS,
        default_effort="high",
        prices=Prices(5.0, 25.0, 6.25, 10.0, 0.50),
        context_tokens=1_000_000,
        output_tokens=128_000,
        cache_minimum=512,  # [cache-min]
        tokens_per_char=0.325,
        unconfirmed=("every fact: read from third parties only", "forced tool choice (assumed refused)"),
        sources=("opus-5", "or-5-5", "cache-min"),
    ),
    Family(
        name="Claude Sonnet 5",
        prefixes=("claude-sonnet-5",),
        # [sonnet-5]: legacy since Sonnet 5.5; manual extended thinking and non-default sampling parameters
        # return 400; adaptive thinking on by default. Prefill: unconfirmed, so refused.
        forced_tool_choice=True,
        sampling_params=False,
        prefill=False,
        thinking_modes=frozenset({"adaptive", "disabled"}),
        thinks_by_default=True,
        display="omitted",
        effort_levels=EFFORTS,  # [effort]: xhigh, max
        default_effort="high",  # [sonnet-5]
        prices=Prices(2.0, 10.0, 2.50, 4.0, 0.20),  # [sonnet-5] $2 / $10; [pricing] reads 0.1x
        context_tokens=1_000_000,
        output_tokens=128_000,
        cache_minimum=1024,  # [cache-min]
        tokens_per_char=0.325,
        unconfirmed=("prefill (assumed refused)", "display default"),
        sources=("sonnet-5", "pricing", "effort", "cache-min"),
    ),
    Family(
        name="Claude Sonnet 4.6",
        prefixes=("claude-sonnet-4-6",),
        forced_tool_choice=True,
        sampling_params=True,
        prefill=False,  # unconfirmed for Sonnet 4.6; we never send a prefill
        thinking_modes=frozenset({"enabled", "disabled", "adaptive"}),
        thinks_by_default=False,  # [sonnet-5-5]: 4.6 does not think without a thinking field
        effort_levels=("low", "medium", "high", "max"),  # [effort]: max on Sonnet 4.6
        default_effort="high",
        prices=Prices(3.0, 15.0, 3.75, 6.0, 0.30),  # [pricing]
        context_tokens=200_000,  # unconfirmed (1M may be available); the smaller figure is the safe one
        output_tokens=64_000,
        cache_minimum=2048,  # [cache-min-4]
        unconfirmed=("prefill (assumed refused)", "context window"),
        sources=("pricing", "effort", "cache-min-4"),
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
        sources=("pricing", "cache-min-4"),
    ),
    Family(
        name="Claude Opus 4.7 and 4.8",
        prefixes=("claude-opus-4-7", "claude-opus-4-8"),
        # What requests they accept is unconfirmed, so they get the conservative request (no forced tool
        # choice, no sampling); thinking only when an effort is set, which xhigh and max need.
        forced_tool_choice=False,
        sampling_params=False,
        prefill=False,
        thinking_modes=frozenset({"adaptive"}),  # AWS Bedrock adaptive-thinking page lists Opus 4.7
        thinks_by_default=False,
        display="omitted",  # [display]: Opus 4.7 changed the default to "omitted"
        effort_levels=EFFORTS,  # [effort]: xhigh and max on Opus 4.8 and 4.7
        default_effort="high",
        prices=Prices(5.0, 25.0, 6.25, 10.0, 0.50),  # [pricing]
        context_tokens=200_000,  # unconfirmed
        output_tokens=64_000,  # unconfirmed
        cache_minimum=4096,  # [cache-min]: 2,048 (4.7) or 1,024 (4.8) by one source, 4,096 by another; the largest
        tokens_per_char=0.325,  # [haiku-5-5]: "the same newer tokenizer as Claude 4.7 and later models"
        unconfirmed=(
            "accepted settings (conservative request)",
            "thinks by default",
            "context window and output limit",
            "cache minimum",
        ),
        sources=("pricing", "effort", "haiku-5-5", "cache-min", "display"),
    ),
    Family(
        name="Claude Opus 4.5 and 4.6",
        prefixes=("claude-opus-4-5", "claude-opus-4-6"),
        forced_tool_choice=True,
        sampling_params=True,
        prefill=False,  # unconfirmed for Opus 4.6; we never send a prefill
        thinking_modes=frozenset({"enabled", "disabled"}),  # adaptive on 4.6 only, so not for the family
        thinks_by_default=False,
        effort_levels=("low", "medium", "high"),  # [effort] (ja/zh): Opus 4.5 and 4.6; max on 4.6 only
        default_effort="high",
        prices=Prices(5.0, 25.0, 6.25, 10.0, 0.50),
        context_tokens=200_000,
        output_tokens=64_000,
        cache_minimum=4096,
        unconfirmed=("prefill (assumed refused)",),
        sources=("pricing", "effort", "cache-min-4"),
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
        sources=("pricing", "cache-min-4"),
    ),
    Family(
        name="Claude Haiku 4.5",
        prefixes=("claude-haiku-4-5",),
        forced_tool_choice=True,
        sampling_params=True,
        prefill=True,
        thinking_modes=frozenset({"enabled", "disabled"}),  # [haiku-4-5]: accepts enabled, rejects adaptive
        thinks_by_default=False,
        effort_levels=(),
        prices=Prices(1.0, 5.0, 1.25, 2.0, 0.10),
        context_tokens=200_000,  # [models]: 200K / 64K
        output_tokens=64_000,
        cache_minimum=4096,
        sources=("pricing", "models", "haiku-4-5", "cache-min-4"),
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
        sources=("pricing", "cache-min-4"),
    ),
)
"""Every family this backend knows, current ones first."""

CONSERVATIVE = Family(
    name="an unknown Claude model",
    prefixes=(),
    forced_tool_choice=False,
    sampling_params=False,
    prefill=False,
    thinking_modes=frozenset({"adaptive"}),
    thinks_by_default=True,
    display="omitted",
    effort_levels=(),
    default_effort="high",
    prices=None,
    context_tokens=200_000,
    output_tokens=64_000,
    cache_minimum=4096,
    tokens_per_char=0.325,
    unconfirmed=("everything: an id the table does not know",),
)
"""The family of an id the table does not know: the most careful current family. It thinks (adaptive,
the one thinking setting every current model takes), so its budget leaves room for thinking at the
highest default effort; it gets none of the settings a current model may refuse and no effort; it
caches only a prefix of the largest minimum; and its price is unknown (`Prices.from_rates` with the
operator's rates, else a cost cap cannot be kept)."""

_BY_PREFIX: dict[str, Family] = {prefix: family for family in FAMILIES for prefix in family.prefixes}


def family_of(model: str) -> Family:
    """The family of a model id: the longest matching prefix in `FAMILIES`, else `CONSERVATIVE`."""
    key = max((prefix for prefix in _BY_PREFIX if model.startswith(prefix)), key=len, default=None)
    return _BY_PREFIX[key] if key is not None else CONSERVATIVE


def is_known(model: str) -> bool:
    """Whether `model` belongs to a family in the table (otherwise it runs as `CONSERVATIVE`)."""
    return family_of(model) is not CONSERVATIVE
