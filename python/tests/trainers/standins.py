"""Stand-ins for what the trainers' extracted loss code calls, beyond torch.

Each is the identity or a minimal version of the trainer's own, where the
loss's arithmetic does not depend on it: devices (CPU), metrics containers,
the policy-loss registry (the vanilla loss only), the un-padding of the new
engine's outputs (the log-probabilities arrive padded, (bs, T)), and the
split of a mini-batch into micro-batches (at the cuts the test chooses, so
that their counts differ).
"""

from __future__ import annotations

import types
from collections import defaultdict
from contextlib import nullcontext  # noqa: F401 (forward_backward_batch)
from typing import Any, Callable, Optional  # noqa: F401

import torch  # noqa: F401


class AlgoConfig:  # compute_policy_loss_vanilla asserts its config is not one
    pass


class Config(dict):
    """An omegaconf-like configuration: attributes and .get."""

    __getattr__ = dict.get

    def __setattr__(self, k: str, v: Any) -> None:
        self[k] = v


def _masked_sum(values: Any, mask: Any, axis: Any = None) -> Any:
    from trainers import extracted

    return extracted.masked_sum(values, mask, axis)


def _masked_mean(values: Any, mask: Any, axis: Any = None) -> Any:
    from trainers import extracted

    return extracted.masked_mean(values, mask, axis)


verl_F = types.SimpleNamespace(masked_sum=_masked_sum, masked_mean=_masked_mean)


def get_policy_loss_fn(loss_mode: str) -> Callable:
    assert loss_mode == "vanilla", loss_mode
    from trainers import extracted

    return extracted.compute_policy_loss_vanilla


def kl_penalty(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the tests run without a KL loss")


def get_device_id() -> str:
    return "cpu"


def get_device_name() -> str:
    return "cpu"


def append_to_dict(data: dict, new_data: dict) -> None:
    for k, v in new_data.items():
        data.setdefault(k, []).append(v)


class AggregationType:
    SUM, MEAN = "sum", "mean"


class Metric:
    def __init__(self, value: Any, aggregation: Any) -> None:
        self.value, self.aggregation = value, aggregation

    @staticmethod
    def from_dict(d: dict, aggregation: Any) -> dict:
        return {k: Metric(v, aggregation) for k, v in d.items()}


def _slice_response_from_unpad_output(tensor: Any, data: Any) -> Any:
    return tensor  # the stand-in model returns log-probabilities padded (bs, T)


class TensorDict(dict):
    """The new engine's TensorDict: tensors and non-tensor values by key."""

    def to(self, device: Any) -> "TensorDict":
        return self


tu = types.SimpleNamespace(assign_non_tensor=lambda data, **kw: data.update(kw))


def prepare_micro_batches(data: TensorDict, dp_group: Any = None, same_micro_num_in_dp: bool = True) -> tuple:
    """Split the rows at data["cuts"] (micro-batches of unequal counts); non-tensor values go to every one."""
    n = data["response_mask"].shape[0]
    bounds = [0, *data["cuts"], n]
    out = []
    for lo, hi in zip(bounds, bounds[1:]):
        mb = TensorDict({k: (v[lo:hi] if isinstance(v, torch.Tensor) and v.dim() > 0 and v.shape[0] == n else v) for k, v in data.items()})
        out.append(mb)
    return out, None


def postprocess_batch_func(output_lst: list, indices: Any, data: Any) -> list:
    return output_lst


class DataProto:
    """verl's DataProto: a batch of tensors split by rows."""

    def __init__(self, batch: dict, meta_info: dict, cuts: list[int]) -> None:
        self.batch, self.non_tensor_batch, self.meta_info, self.cuts = batch, {}, meta_info, cuts

    def select(self, batch_keys: list, non_tensor_batch_keys: list) -> "DataProto":
        return DataProto({k: self.batch[k] for k in batch_keys}, self.meta_info, self.cuts)

    def split(self, size: int) -> list:
        n = len(self.batch["response_mask"])
        if size >= n:  # one mini-batch keeps the cuts of its micro-batches
            return [DataProto(dict(self.batch), self.meta_info, self.cuts)]
        return [DataProto({k: v[i : i + size] for k, v in self.batch.items()}, self.meta_info, []) for i in range(0, n, size)]

    def to(self, device: Any) -> "DataProto":
        return self


def prepare_dynamic_batch(data: DataProto, max_token_len: int) -> tuple:
    """Micro-batches of unequal rows, at data.cuts (verl balances them by tokens)."""
    n = len(data.batch["response_mask"])
    bounds = [0, *data.cuts, n]
    return [DataProto({k: v[lo:hi] for k, v in data.batch.items()}, data.meta_info, []) for lo, hi in zip(bounds, bounds[1:])], None


def nanmin(t: Any) -> Any:
    return torch.min(t[~torch.isnan(t)]) if (~torch.isnan(t)).any() else torch.tensor(float("nan"))


def nanmax(t: Any) -> Any:
    return torch.max(t[~torch.isnan(t)]) if (~torch.isnan(t)).any() else torch.tensor(float("nan"))


def metrics() -> Any:
    return defaultdict(lambda: defaultdict(list))


# Every name, the underscored stand-ins included, for the star import of extracted.py.
__all__ = [n for n in dir() if not n.startswith("__")]
