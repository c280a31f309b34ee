"""spiral: SPIRAL's plans, credit and constants for Python trainers, in process.

A numpy front end to the Go library spiral ("SPIRAL: Learning to Search and
Aggregate", arXiv 2606.23595), loaded with ctypes from a shared library built
with ``go build -buildmode=c-shared``. The computations are the Go library's,
bit for bit; arrays are read and written in place.

One step::

    import numpy as np, spiral

    cfg = spiral.Config.paper().replace(gates=spiral.Gates.shared(4096))
    sets = cfg.plan(seed, step, problems)          # (P, K, n) trace indices
    # ... generate N1 search traces per problem, one aggregation prompt per
    # set (its candidates sets[q, i]), N2 outputs each; score them ...
    cr = cfg.credit_batch(sets, rewards,           # rewards (P, K, N2)
                          search_lengths=sl, aggregation_lengths=al)
    cr.search        # (P, N1) advantages of the search traces
    cr.aggregation   # (P, K, N2) advantages of the aggregation outputs
    cr.skip          # (P,) problems to resample (dynamic sampling)

Bad input raises ``InputError`` (field, problem, set, output, value) or, for
bad problems in an otherwise sound batch, ``BatchError``, whose ``credit``
holds the credit of every other problem.
"""

from ._config import Config, Constants, Gate, Gates, RewardRange, RoleWeights, SoftOverlong
from ._credit import REDUCTIONS, Credit, GateReport, LossCoefficients, LossReport, OverlongReport, Plans
from ._errors import ArgError, BatchError, ConfigError, InputError, SetProblem, SpiralError, UsageError
from ._eval import coverage, pass_at_k
from ._group import PRESETS, GroupOptions, GroupReport, group_advantages
from ._native import library_path
from ._rows import AGGREGATION, SEARCH, Rows, part_coefficients, per_token, reduction_scale, response_lengths

__all__ = [
    "AGGREGATION",
    "SEARCH",
    "Rows",
    "part_coefficients",
    "per_token",
    "reduction_scale",
    "response_lengths",
    "ArgError",
    "BatchError",
    "Config",
    "ConfigError",
    "Constants",
    "Credit",
    "Gate",
    "GateReport",
    "Gates",
    "GroupOptions",
    "GroupReport",
    "InputError",
    "LossCoefficients",
    "LossReport",
    "OverlongReport",
    "PRESETS",
    "Plans",
    "REDUCTIONS",
    "RewardRange",
    "RoleWeights",
    "SetProblem",
    "SoftOverlong",
    "SpiralError",
    "UsageError",
    "coverage",
    "group_advantages",
    "library_path",
    "pass_at_k",
]
