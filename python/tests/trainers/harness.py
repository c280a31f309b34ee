"""The trainers' extracted loss code run on a stand-in policy whose parameters are the per-token log-probabilities.

``theta[o, t]`` is the log-probability of token t of row o; each trainer
runs its own loss code (extracted.py) on micro-batches of rows and calls
``backward``; ``theta.grad[o, t]`` is then the weight its gradient gives
grad log pi of that token, which the tests compare with kappa times the
chosen update.
"""

from __future__ import annotations

import functools
import types
from typing import Any

import torch

from trainers import extracted, standins
from trainers.standins import Config


def _verl_actor_config(loss_agg_mode: str, mini: int, micro: int, dynamic: bool) -> Config:
    return Config(
        ppo_mini_batch_size=mini,
        ppo_micro_batch_size_per_gpu=micro,
        ppo_epochs=1,
        use_dynamic_bsz=dynamic,
        ppo_max_token_len_per_gpu=1 << 20,
        entropy_coeff=0.0,
        calculate_entropy=False,
        use_kl_loss=False,
        loss_agg_mode=loss_agg_mode,
        policy_loss=Config(loss_mode="vanilla"),
        clip_ratio=0.2,
        clip_ratio_low=0.2,
        clip_ratio_high=0.2,
        clip_ratio_c=3.0,
        global_batch_info={},
        loss_scale_factor=None,
    )


class VerlLegacyActor(extracted.VerlDPActorCode):
    """verl's DataParallelPPOActor.update_policy (use_legacy_worker_impl auto/enable) on theta."""

    use_prefix_grouper = False
    scaler = None
    ulysses_sequence_parallel_size = 1

    def __init__(self, theta: torch.Tensor, config: Config) -> None:
        self.theta, self.config, self.grads = theta, config, []
        self.actor_module = types.SimpleNamespace(train=lambda: None)
        self.actor_optimizer = types.SimpleNamespace(zero_grad=self._zero_grad)

    def _zero_grad(self) -> None:
        self.theta.grad = None

    def _forward_micro_batch(self, micro_batch: dict, temperature: float, calculate_entropy: bool = False) -> dict:
        return {"log_probs": self.theta[micro_batch["input_ids"][:, 0]], "entropys": None}

    def _optimizer_step(self) -> torch.Tensor:
        self.grads.append(self.theta.grad.clone())
        return torch.tensor(0.0)


def _advantages(coef: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """verl's (bs, T) advantages: coefficients per row broadcast over the response, or already (bs, T)."""
    return coef if coef.dim() == 2 else coef.unsqueeze(1) * mask


def verl_legacy_grad(theta: torch.Tensor, coef: torch.Tensor, mask: torch.Tensor, mode: str, micro: int, cuts: list[int] | None, rows: torch.Tensor | None = None) -> torch.Tensor:
    """The gradient of verl's legacy dp_actor on one rank: one mini-batch of its rows (indices into theta, all by default), micro-batches of ``micro`` rows or, with ``cuts``, use_dynamic_bsz's."""
    n, t = mask.shape
    cfg = _verl_actor_config(mode, n, micro, cuts is not None)
    actor = VerlLegacyActor(theta, cfg)
    rows = (torch.arange(n) if rows is None else rows).unsqueeze(1)
    batch = {
        "responses": torch.zeros(n, t, dtype=torch.int64),
        "response_mask": mask,
        "input_ids": rows,
        "attention_mask": mask,
        "position_ids": rows,
        "old_log_probs": theta.detach()[rows[:, 0]].clone(),
        "advantages": _advantages(coef, mask),
    }
    actor.update_policy(standins.DataProto(batch, {"temperature": 1.0}, cuts or []))
    (grad,) = actor.grads
    return grad


class VerlEngine(extracted.VerlEngineCode):
    """verl's new engine (use_legacy_worker_impl=disable): FSDPEngine.forward_backward_batch with ppo_loss, on theta."""

    ulysses_sequence_parallel_size = 1
    ulysses_device_mesh = None

    def __init__(self, theta: torch.Tensor) -> None:
        self.theta = theta

    def get_data_parallel_group(self) -> Any:
        return torch.distributed.group.WORLD

    def get_data_parallel_size(self) -> int:
        return torch.distributed.get_world_size()

    def forward_step(self, micro_batch: dict, loss_function: Any, forward_only: bool) -> tuple:
        model_output = {"log_probs": self.theta[micro_batch["rows"]]}
        loss, metrics = loss_function(model_output=model_output, data=micro_batch, dp_group=None)
        return loss, {"metrics": metrics}


def verl_engine_grad(theta: torch.Tensor, rows: torch.Tensor, coef: torch.Tensor, mask: torch.Tensor, mode: str, global_batch_size: int, cuts: list[int]) -> None:
    """Run verl's new engine on this rank's rows (indices into theta); theta.grad accumulates."""
    cfg = _verl_actor_config(mode, global_batch_size, 1, False)
    data = standins.TensorDict(
        rows=rows,
        loss_mask=mask,
        response_mask=mask,
        old_log_probs=theta.detach()[rows].clone(),
        advantages=_advantages(coef, mask),
        global_batch_size=global_batch_size,
        cuts=cuts,
    )
    VerlEngine(theta).forward_backward_batch(data, functools.partial(extracted.ppo_loss, cfg))


class _Accelerator:
    """accelerate's gather and reduce, over torch.distributed when it runs."""

    sync_gradients = True

    @property
    def num_processes(self) -> int:
        return torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1

    def gather(self, t: torch.Tensor) -> torch.Tensor:
        if not torch.distributed.is_initialized():
            return t.reshape(-1)
        out = [torch.zeros_like(t.reshape(-1)) for _ in range(self.num_processes)]
        torch.distributed.all_gather(out, t.reshape(-1).contiguous())
        return torch.cat(out)

    gather_for_metrics = gather

    def reduce(self, t: torch.Tensor, reduction: str = "sum") -> torch.Tensor:
        if torch.distributed.is_initialized():
            t = t.clone()
            torch.distributed.all_reduce(t)
        return t


class TRLTrainer(extracted.TRLGRPOTrainerCode):
    """TRL's GRPOTrainer._compute_loss with its defaults (epsilon 0.2, beta 0, token-level ratios), on theta."""

    epsilon_low = epsilon_high = 0.2
    beta = 0.0
    importance_sampling_level = "token"
    top_entropy_quantile = 1.0
    off_policy_mask_threshold = None
    use_vllm = False
    vllm_importance_sampling_correction = False
    aux_loss_enabled = False
    _entropy_bonus_enabled = False

    def __init__(self, theta: torch.Tensor, loss_type: str, accumulation: int, max_completion_length: int) -> None:
        self.theta, self.loss_type = theta, loss_type
        self.current_gradient_accumulation_steps = accumulation
        self.max_completion_length = max_completion_length
        self.args = Config(delta=None, use_bias_correction_kl=False)
        self.model = types.SimpleNamespace(training=True)
        self.accelerator = _Accelerator()
        self._metrics = standins.metrics()

    def _get_per_token_logps_and_entropies(self, model: Any, input_ids: torch.Tensor, attention_mask: Any, logits_to_keep: int, **kw: Any) -> tuple:
        logps = self.theta[input_ids[:, -logits_to_keep]]
        return logps, torch.zeros_like(logps), None


def trl_grad(theta: torch.Tensor, rows: torch.Tensor, coef: torch.Tensor, mask: torch.Tensor, loss_type: str, cuts: list[int]) -> None:
    """Run TRL's _compute_loss on this rank's micro-batches (one per accumulation step, split at cuts); theta.grad accumulates.

    num_items_in_batch is the generation batch's tokens gathered from every
    process, as _generate_and_score_completions computes it.
    """
    n, t = mask.shape
    bounds = [0, *cuts, n]
    trainer = TRLTrainer(theta, loss_type, len(bounds) - 1, t)
    num_items_in_batch = trainer.accelerator.gather(mask.sum()).sum()
    for lo, hi in zip(bounds, bounds[1:]):
        r = rows[lo:hi]
        inputs = {
            "prompt_ids": torch.zeros(hi - lo, 0, dtype=torch.int64),
            "prompt_mask": torch.zeros(hi - lo, 0, dtype=torch.int64),
            "completion_ids": r.unsqueeze(1).expand(hi - lo, t),
            "completion_mask": mask[lo:hi],
            "advantages": coef[lo:hi],
            "num_items_in_batch": num_items_in_batch,
        }
        trainer._compute_loss(None, inputs).backward()
