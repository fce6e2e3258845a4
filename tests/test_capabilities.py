"""The capability table of Claude model families: ids resolve to the right family, unknown ids to the
conservative one, and each fact lives there only."""

from __future__ import annotations

import pytest

from planner.models import claude
from planner.models.capabilities import (
    CONSERVATIVE,
    DEFAULT_MODEL,
    EFFORTS,
    FAMILIES,
    SOURCES,
    THINKING_ROOM,
    Prices,
    family_of,
    is_known,
)
from planner.models.claude import estimate_cost


@pytest.mark.parametrize(
    ("model_id", "name"),
    [
        ("claude-sonnet-5-5", "Claude Sonnet 5.5"),
        ("claude-opus-5-5", "Claude Opus 5.5"),
        ("claude-haiku-5-5", "Claude Haiku 5.5"),
        ("claude-fable-5-2", "Claude Fable 5.2"),
        ("claude-mythos-5-2", "Claude Fable 5.2"),
        ("claude-fable-5-1", "Claude Fable 5.1"),
        ("claude-fable-5", "Claude Fable 5"),
        ("claude-opus-5", "Claude Opus 5"),
        ("claude-sonnet-5-5-20260928", "Claude Sonnet 5.5"),
        ("claude-sonnet-5", "Claude Sonnet 5"),
        ("claude-sonnet-5-20260630", "Claude Sonnet 5"),
        ("claude-sonnet-4-6", "Claude Sonnet 4.6"),
        ("claude-sonnet-4-5-20250929", "Claude Sonnet 4 and 4.5"),
        ("claude-sonnet-4-20250514", "Claude Sonnet 4 and 4.5"),
        ("claude-opus-4-8", "Claude Opus 4.7 and 4.8"),
        ("claude-opus-4-6", "Claude Opus 4.5 and 4.6"),
        ("claude-opus-4-20250514", "Claude Opus 4 and 4.1"),
        ("claude-haiku-4-5-20251001", "Claude Haiku 4.5"),
        ("claude-3-5-haiku-20241022", "Claude Haiku 3.5"),
    ],
)
def test_an_id_belongs_to_the_family_with_the_longest_matching_prefix(model_id: str, name: str) -> None:
    assert family_of(model_id).name == name and is_known(model_id)


@pytest.mark.parametrize("model_id", ["claude-future-9", "claude-sonnet-6", "gpt-nothing", ""])
def test_an_unknown_id_runs_as_the_most_careful_current_family(model_id: str) -> None:
    family = family_of(model_id)
    assert family is CONSERVATIVE and not is_known(model_id)
    assert set(family.refused) == {
        "forced tool choice",
        "sampling parameters",
        "assistant prefill",
        "thinking budget",
        "thinking disabled",
    }
    assert family.thinking_modes == {"adaptive"} and family.thinks_by_default and not family.effort_levels
    assert family.max_tokens(None, True, 2048) == 2048 + THINKING_ROOM["high"], "room for thinking at high"
    assert family.cache_minimum == max(f.cache_minimum for f in FAMILIES) and family.tokens_per_char == max(
        f.tokens_per_char for f in FAMILIES
    )
    assert estimate_cost(model_id, 1_000_000, 1_000_000, 0, 0) == 0.0, "unknown, never guessed"


def test_every_prefix_names_one_family_and_the_default_is_known() -> None:
    prefixes = [prefix for family in FAMILIES for prefix in family.prefixes]
    assert len(prefixes) == len(set(prefixes))
    assert family_of(DEFAULT_MODEL) is FAMILIES[0] and FAMILIES[0].name == "Claude Sonnet 5.5"


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
def test_each_family_is_consistent(family: object) -> None:
    from planner.models.capabilities import Family

    assert isinstance(family, Family)
    assert family.sources and set(family.sources) <= set(SOURCES) and family.prices is not None
    assert set(family.effort_levels) <= set(EFFORTS)
    assert 0 < family.cache_minimum and 0 < family.output_tokens <= family.context_tokens
    assert not family.thinks_by_default or "adaptive" in family.thinking_modes
    assert not family.effort_levels or family.default_effort in family.effort_levels
    for band in (family.prices, family.prices.long):
        if band is None:
            continue
        # Cache writes cost 1.25x (5 minutes) and 2x (1 hour) input everywhere; reads are 0.1x at most
        # (0.05x on Sonnet and Opus 5.5, 0.025x on Fable 5.1), so no single multiple is pinned.
        assert band.write_5m == pytest.approx(1.25 * band.input) and band.write_1h == pytest.approx(2 * band.input)
        assert 0 < band.read <= 0.1 * band.input + 1e-12


def test_costs_come_from_the_table() -> None:
    assert estimate_cost("claude-sonnet-5-5", 1_000_000, 0, 0, 0) == 2.0
    assert estimate_cost("claude-sonnet-5-5", 0, 1_000_000, 1_000_000, 1_000_000) == 10.0 + 2.50 + 0.10
    assert estimate_cost("claude-opus-5-5", 1_000_000, 1_000_000, 0, 1_000_000) == 4.0 + 20.0 + 0.20
    assert estimate_cost("claude-fable-5-1", 0, 0, 0, 1_000_000) == 0.25
    assert estimate_cost("claude-haiku-4-5-20251001", 1_000_000, 1_000_000, 0, 0) == 6.0


def test_haiku_5_5_bills_a_prompt_over_100k_tokens_at_five_times_on_every_token() -> None:
    short = estimate_cost("claude-haiku-5-5", 90_000, 1_000, 5_000, 5_000)
    assert short == pytest.approx((90_000 * 0.10 + 1_000 * 0.50 + 5_000 * 0.125 + 5_000 * 0.01) / 1e6)
    long = estimate_cost("claude-haiku-5-5", 90_000, 1_000, 5_000, 5_001)  # 100,001 prompt tokens
    assert long == pytest.approx((90_000 * 0.50 + 1_000 * 2.50 + 5_000 * 0.625 + 5_001 * 0.05) / 1e6)
    assert long > 4.9 * short


def test_an_operators_rates_price_the_cache_as_the_table_does() -> None:
    prices = Prices.from_rates(3.0, 15.0)
    assert (prices.write_5m, prices.write_1h, prices.read) == (3.75, 6.0, pytest.approx(0.3))


def test_the_current_lineup_thinks_by_default_and_has_room_to_think_at_every_effort() -> None:
    current = [family_of(m) for m in ("claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-fable-5-2")]
    for family in current:
        assert family.thinks_by_default and family.display == "omitted" and family.prices is not None
        assert not family.forced_tool_choice and "enabled" not in family.thinking_modes
        for effort in family.effort_levels:
            assert family.max_tokens(effort, True, 2048) - 2048 >= THINKING_ROOM[effort]
    assert family_of("claude-opus-4-8").tokens_per_char == family_of("claude-haiku-5-5").tokens_per_char == 0.325


def test_every_source_is_cited_with_the_day_it_was_read() -> None:
    cited = {key for family in FAMILIES for key in family.sources}
    assert set(SOURCES) - {"thinking", "effort-per-message", "caching"} <= cited, "no source without a fact"
    for addresses, read in SOURCES.values():
        assert addresses and all(a.startswith("https://") for a in addresses) and read.startswith("2026-")


def test_prices_and_cache_minimums_live_only_in_the_table() -> None:
    assert not {"PRICES", "CACHE_MINIMUM", "cache_minimum"} & set(vars(claude))
    assert claude.DEFAULT_MODEL is DEFAULT_MODEL
