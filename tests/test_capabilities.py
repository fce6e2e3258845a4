"""The capability table of Claude model families: ids resolve to the right family, unknown ids to the
conservative one, and each fact lives there only."""

from __future__ import annotations

import pytest

from planner.models import claude
from planner.models.capabilities import CONSERVATIVE, DEFAULT_MODEL, EFFORTS, FAMILIES, family_of, is_known
from planner.models.claude import estimate_cost


@pytest.mark.parametrize(
    ("model_id", "name"),
    [
        ("claude-sonnet-5-5", "Claude Sonnet 5.5"),
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
def test_an_unknown_id_is_assumed_to_refuse_everything_refusable(model_id: str) -> None:
    family = family_of(model_id)
    assert family is CONSERVATIVE and not is_known(model_id)
    assert set(family.refused) == {
        "forced tool choice",
        "sampling parameters",
        "assistant prefill",
        "thinking budget",
        "thinking disabled",
    }
    assert not family.thinking_modes and not family.effort_levels and not family.thinks_by_default
    assert estimate_cost(model_id, 1_000_000, 1_000_000, 0, 0) == 0.0, "unknown, never guessed"


def test_every_prefix_names_one_family_and_the_default_is_known() -> None:
    prefixes = [prefix for family in FAMILIES for prefix in family.prefixes]
    assert len(prefixes) == len(set(prefixes))
    assert family_of(DEFAULT_MODEL) is FAMILIES[0] and FAMILIES[0].name == "Claude Sonnet 5.5"


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
def test_each_family_is_consistent(family: object) -> None:
    from planner.models.capabilities import Family

    assert isinstance(family, Family)
    assert family.source and family.prices is not None
    assert set(family.effort_levels) <= set(EFFORTS)
    assert 0 < family.cache_minimum and 0 < family.output_tokens <= family.context_tokens
    assert not family.thinks_by_default or "adaptive" in family.thinking_modes
    prices = family.prices
    # Anthropic prices every cache tier off the input rate: 5-minute writes 1.25x, 1-hour writes 2x, reads 0.1x.
    assert prices.write_5m == pytest.approx(1.25 * prices.input) and prices.write_1h == pytest.approx(2 * prices.input)
    assert prices.read == pytest.approx(0.1 * prices.input)


def test_costs_come_from_the_table() -> None:
    assert estimate_cost("claude-sonnet-5-5", 1_000_000, 0, 0, 0) == 2.0
    assert estimate_cost("claude-sonnet-5-5", 0, 1_000_000, 1_000_000, 1_000_000) == 10.0 + 2.50 + 0.20
    assert estimate_cost("claude-haiku-4-5-20251001", 1_000_000, 1_000_000, 0, 0) == 6.0


def test_prices_and_cache_minimums_live_only_in_the_table() -> None:
    assert not {"PRICES", "CACHE_MINIMUM", "cache_minimum"} & set(vars(claude))
    assert claude.DEFAULT_MODEL is DEFAULT_MODEL
