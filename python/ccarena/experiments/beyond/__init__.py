"""Beyond the papers: questions the five papers do not ask, on topologies
they do not run (a parking lot of three links; traffic both ways). No
paper states a number for them, so every result is shown, not judged
(docs/experiments.md, "Beyond the papers"); where the literature has a
result, the report's setup cites it.
"""

from __future__ import annotations

from ..framework import Experiment
from . import parking_lot, reverse_traffic
from .common import PAPER

EXPERIMENTS: tuple[Experiment, ...] = (
    parking_lot.EXPERIMENT,
    reverse_traffic.EXPERIMENT,
)

__all__ = ["EXPERIMENTS", "PAPER"]
