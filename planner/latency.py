"""Simulated latency: how long a scripted model's call or a dry action takes, as a real one would.

A real session spends its time waiting (a model call takes seconds, a browser action about one), so a
capacity figure measured with instant answers is about CPU, not about agents. `Latency` gives each
call a delay drawn from a log-normal distribution (a median and a long tail), chosen by a hash of the
seed and what is asked, never by a counter: a resumed session waits as long as it would have, and
a benchmark can recompute from the log how long a session must take at the least.
"""

from __future__ import annotations

import hashlib
import math
from statistics import NormalDist

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Latency"]

_UNIT = NormalDist()


class Latency(BaseModel):
    """Delays for a scripted model's calls and a dry environment's actions (seconds)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model_median_s: float = Field(default=3.0, ge=0, le=600)
    """The median model call; half take longer."""
    model_spread: float = Field(default=0.7, ge=0, le=3)
    """The standard deviation of the log of a call's delay: 0.7 puts the 99th percentile at about
    five times the median (a long tail, as hosted models have)."""
    action_median_s: float = Field(default=0.0, ge=0, le=600)
    """The median dry action (a browser action takes about a second; the real browser needs none)."""
    action_spread: float = Field(default=0.5, ge=0, le=3)
    max_s: float = Field(default=60.0, gt=0, le=3600)
    """No delay is longer: a hosted call this slow would have timed out and been retried."""
    seed: int = 0
    """Sessions with different seeds wait differently for the same question."""

    def model_delay(self, question: str, node_id: str) -> float:
        """How long the model takes to answer `question` about node `node_id`."""
        return self._draw(self.model_median_s, self.model_spread, f"model\0{question}\0{node_id}")

    def action_delay(self, action: str) -> float:
        """How long the dry environment takes to run `action` (as the model wrote it)."""
        return self._draw(self.action_median_s, self.action_spread, f"action\0{action}")

    def _draw(self, median: float, spread: float, key: str) -> float:
        if median == 0:
            return 0.0
        digest = hashlib.sha256(f"{self.seed}\0{key}".encode()).digest()
        uniform = (int.from_bytes(digest[:8], "big") + 0.5) / 2**64  # strictly inside (0, 1)
        return min(self.max_s, median * math.exp(spread * _UNIT.inv_cdf(uniform)))
