"""The BBQ paper: S. Ma, J. Jiang, W. Wang, B. Li, "Fairness of
Congestion-Based Congestion Control: Experimental Evaluation and Analysis"
(../shared/papers/bbq-ma-rtt-fairness.txt). Every figure and table on the
simulator, plus experiments beyond the paper; :mod:`.paper` holds the
testbed and the algorithm variants they share.
"""

from __future__ import annotations

from ..framework import Experiment
from . import (
    fairness_map,
    fig1,
    fig3_14,
    fig4_table1,
    fig5_15,
    fig6_16,
    fig7,
    fig8_11,
    fig12,
    fig13,
    fig17,
)
from .paper import PAPER

#: In the paper's order, then the experiments beyond it.
EXPERIMENTS: tuple[Experiment, ...] = (
    fig1.EXPERIMENT,
    fig3_14.EXPERIMENT,
    fig4_table1.EXPERIMENT,
    fig5_15.EXPERIMENT,
    fig6_16.EXPERIMENT,
    fig7.EXPERIMENT,
    fig8_11.EXPERIMENT,
    fig12.EXPERIMENT,
    fig13.EXPERIMENT,
    fig17.EXPERIMENT,
    fig7.EXPERIMENT_BBQ,
    fairness_map.EXPERIMENT,
)

__all__ = ["EXPERIMENTS", "PAPER"]
