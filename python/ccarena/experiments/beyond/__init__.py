"""Beyond the papers: questions the five papers do not ask, on topologies
and traffic they do not run (a parking lot of three links; traffic both
ways; short flows next to a long one). No
paper states a number for them, so every result is shown, not judged
(docs/experiments.md, "Beyond the papers"); where the literature has a
result, the report's setup cites it.
"""

from __future__ import annotations

from ..framework import Experiment
from . import parking_lot, reverse_traffic, short_flows
from .common import PAPER

EXPERIMENTS: tuple[Experiment, ...] = (
    parking_lot.EXPERIMENT,
    reverse_traffic.EXPERIMENT,
    short_flows.EXPERIMENT,
)

__all__ = ["EXPERIMENTS", "PAPER"]
