#!/usr/bin/python3
"""Test vectors from NeMo-RL's own advantage estimators and policy loss.

Usage (Debian's python3 with python3-numpy and python3-torch):

    /usr/bin/python3 advantage/testdata/trainers/nemo-rl/vectors.py extract GITDIR
    /usr/bin/python3 advantage/testdata/trainers/nemo-rl/vectors.py generate

``extract`` reads NeMo-RL's sources at the pinned COMMIT from GITDIR (a
clone of github.com/NVIDIA-NeMo/RL, bare or not) and writes the functions
and classes named in EXTRACT, verbatim, to extracted.py beside this file
(NeMo-RL is Apache-2.0: the file keeps its copyright notice and names the
commit). ``generate`` executes extracted.py with stand-ins for what the
extracted code imports and does not use here (pydantic's BaseModel: the
configuration's class defaults; the nemo_rl imports of the loss module),
runs the cases below through it, and writes

    advantage/testdata/trainers/nemo-rl/<preset>.json.gz   (advantages)
    advantage/testdata/trainers/nemo-rl/gdpo/nemo-rl-gdpo.json.gz
    loss/testdata/nemo-rl-loss.json.gz                     (loss gradients)

The same seed gives the same files.
"""

from __future__ import annotations

import ast
import enum
import gzip
import json
import math
import os
import subprocess
import sys
from types import SimpleNamespace
from typing import Any, NotRequired, Optional, TypedDict, TypeVar

import numpy as np
import torch

REPOSITORY = "github.com/NVIDIA-NeMo/RL"
COMMIT = "7ea279abfbeb698b092856d0dab61e7cf39bc909"
EXTRACT = {
    "nemo_rl/algorithms/utils.py": ["get_gdpo_reward_component_keys", "calculate_kl", "calculate_baseline_and_std_per_prompt", "masked_mean"],
    "nemo_rl/algorithms/loss/interfaces.py": ["LossType", "MetricNormalizer", "LossInputType"],
    "nemo_rl/algorithms/advantage_estimator.py": [
        "AdvEstimatorConfig",
        "GRPOAdvantageEstimator",
        "GDPOAdvantageEstimator",
        "ReinforcePlusPlusAdvantageEstimator",
    ],
    "nemo_rl/algorithms/loss/loss_functions.py": ["ClippedPGLossConfig", "ClippedPGLossFn"],
}
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
EXTRACTED = os.path.join(HERE, "extracted.py")


def extract(gitdir: str) -> None:
    """Write extracted.py: the named definitions of each file at COMMIT."""
    out = [
        "# Extracted verbatim from NeMo-RL (" + REPOSITORY + ") at commit " + COMMIT,
        "# by vectors.py extract; the functions and classes named there, nothing else.",
        "#",
        "# Copyright (c) 2025, NVIDIA CORPORATION.  All rights reserved.",
        "# Licensed under the Apache License, Version 2.0 (the \"License\");",
        "# you may not use this file except in compliance with the License.",
        "# You may obtain a copy of the License at",
        "#     http://www.apache.org/licenses/LICENSE-2.0",
        "# Unless required by applicable law or agreed to in writing, software",
        "# distributed under the License is distributed on an \"AS IS\" BASIS,",
        "# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.",
        "# See the License for the specific language governing permissions and",
        "# limitations under the License.",
        "",
    ]
    for path, names in EXTRACT.items():
        src = subprocess.run(["git", "--git-dir", gitdir_of(gitdir), "show", f"{COMMIT}:{path}"], check=True, capture_output=True, text=True).stdout
        lines = src.splitlines()
        tree = ast.parse(src)
        found = {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                found[node.name] = "\n".join(lines[start - 1 : node.end_lineno])
        missing = set(names) - set(found)
        if missing:
            sys.exit(f"{path} at {COMMIT}: {sorted(missing)} not found")
        for name in names:
            out += [f"# {path}: {name}", found[name], "", ""]
    with open(EXTRACTED, "w") as f:
        f.write("\n".join(out))


def gitdir_of(path: str) -> str:
    return os.path.join(path, ".git") if os.path.isdir(os.path.join(path, ".git")) else path


class _BaseModel:
    """pydantic.BaseModel's part that the extracted configurations use: class defaults, keyword overrides."""

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__()

    def __init__(self, **kw: Any) -> None:
        for k, v in kw.items():
            setattr(self, k, v)


def load() -> dict:
    """Execute extracted.py and return its namespace."""
    ns: dict = dict(
        torch=torch, BaseModel=_BaseModel, Optional=Optional, Any=Any, TypedDict=TypedDict, NotRequired=NotRequired,
        TypeVar=TypeVar, Tensor=torch.Tensor, BatchedDataDict=dict, Protocol=object, enum=enum, LossFunction=object,
    )
    with open(EXTRACTED) as f:
        code = f.read()
    exec(compile(code, EXTRACTED, "exec"), ns)
    return ns


# ---------------------------------------------------------------- advantages


def reward_sets(rng: np.random.Generator):
    """Yield (kind, rewards) for one group: 0/1, one-hot, all-equal, continuous of several magnitudes."""
    g = int(rng.choice([1, 2, 2, 3, 4, 5, 8, 16, 32]))
    kind = rng.integers(0, 7)
    if kind == 0:
        return rng.integers(0, 2, g).astype(float)
    if kind == 1:
        r = np.zeros(g)
        r[rng.integers(0, g)] = 1
        return r
    if kind == 2:
        return np.full(g, float(rng.choice([0.0, 1.0, 0.1, -3.7, 1e3])))
    if kind == 3:
        # one outlier among equal rewards: the others' spread is 0
        r = np.full(g, float(rng.choice([0.0, 0.3, 1.0])))
        r[rng.integers(0, g)] += float(rng.choice([1.0, -2.5, 0.7]))
        return r
    scale = float(rng.choice([1e-3, 1.0, 10.0, 1e3]))
    return rng.normal(0, scale, g) + float(rng.choice([0.0, 0.0, 5.0])) * scale


def make_case(rng: np.random.Generator, nan_rows: bool):
    groups = int(rng.integers(1, 6))
    ids, rewards = [], []
    for k in range(groups):
        r = reward_sets(rng)
        rewards += list(r)
        ids += [k] * len(r)
    perm = rng.permutation(len(ids))
    ids = [ids[i] for i in perm]
    rewards = [rewards[i] for i in perm]
    valid = [True] * len(ids)
    if nan_rows:
        for i in range(len(ids)):
            if rng.random() < 0.25:
                valid[i] = False
    lengths = [int(x) for x in rng.integers(0, 9, len(ids))]
    if rng.random() < 0.5:
        lengths = [max(1, x) for x in lengths]
    return ids, rewards, valid, lengths


def run_grpo(ns, ids, rewards, valid, lengths, dtype, leave_one_out):
    """GRPOAdvantageEstimator.compute_advantage as the trainer calls it (valid_mask all ones); with
    rows masked, its body with the mask passed to calculate_baseline_and_std_per_prompt."""
    cfg = ns["AdvEstimatorConfig"](use_leave_one_out_baseline=leave_one_out)
    est = ns["GRPOAdvantageEstimator"](cfg, None)
    prompts = torch.tensor(ids).unsqueeze(-1)
    r = torch.tensor(rewards, dtype=dtype)
    mask = torch.ones((len(ids), max(lengths + [1])))
    if all(valid):
        adv = est.compute_advantage(prompts, r, mask)
    else:
        v = torch.tensor([1.0 if x else 0.0 for x in valid], dtype=dtype)
        r = torch.where(v > 0, r, torch.zeros_like(r))  # a masked row's reward is not read
        baseline, std = ns["calculate_baseline_and_std_per_prompt"](prompts, r, v, leave_one_out_baseline=leave_one_out)
        adv = (r - baseline).unsqueeze(-1)
        if est.normalize_rewards:
            epsilon = 1e-6
            non_zero_std_mask = std > 0
            adv[non_zero_std_mask] = adv[non_zero_std_mask] / (std.unsqueeze(-1)[non_zero_std_mask] + epsilon)
        adv = adv.expand(mask.shape)
    return [float(a) for a in adv[:, 0]]


def run_reinforce(ns, ids, rewards, valid, lengths, dtype, leave_one_out):
    loss_cfg = ns["ClippedPGLossConfig"]()
    est = ns["ReinforcePlusPlusAdvantageEstimator"](ns["AdvEstimatorConfig"](), loss_cfg)
    prompts = torch.tensor(ids).unsqueeze(-1)
    r = torch.tensor(rewards, dtype=dtype)
    width = max(lengths + [1])
    mask = torch.tensor([[1.0 if t < L else 0.0 for t in range(width)] for L in lengths], dtype=dtype)
    adv = est.compute_advantage(prompts, r, mask)
    out = []
    for i, L in enumerate(lengths):
        row = adv[i, :L]
        if L > 0 and not bool(torch.all(row == row[0])):
            sys.exit("reinforce++: an advantage varies within a row")
        out.append(float(row[0]) if L > 0 else float(adv[i, 0]))
    return out


PRESETS = {
    "nemo-rl-grpo": (run_grpo, True, True),
    "nemo-rl-grpo-no-leave-one-out": (run_grpo, False, True),
    "nemo-rl-reinforce-pp": (run_reinforce, False, False),
}


def nullable(x: float):
    return None if math.isnan(x) else x


def advantages(ns, seed: int = 37, cases: int = 1200) -> None:
    for name, (fn, loo, nan_ok) in PRESETS.items():
        rng = np.random.default_rng([seed, len(name)])
        out = []
        for n in range(cases):
            dtype = torch.float32 if n % 2 == 0 else torch.float64
            ids, rewards, valid, lengths = make_case(rng, nan_ok and n % 3 == 0)
            if dtype == torch.float32:
                rewards = [float(np.float32(x)) for x in rewards]
            torch.set_default_dtype(dtype)  # torch.eye, ones: the rewards' dtype
            try:
                want = fn(ns, ids, rewards, valid, lengths, dtype, loo)
            finally:
                torch.set_default_dtype(torch.float32)
            out.append({
                "dtype": "float32" if dtype == torch.float32 else "float64",
                "ids": ids,
                "rewards": [x if v else None for x, v in zip(rewards, valid)],
                "lengths": lengths,
                "want": [nullable(w) for w in want],
            })
        write(os.path.join(HERE, name + ".json.gz"), {
            "preset": name,
            "repository": REPOSITORY,
            "commit": COMMIT,
            "source": "nemo_rl/algorithms/advantage_estimator.py, nemo_rl/algorithms/utils.py",
            "cases": out,
        })


def gdpo(ns, seed: int = 37, cases: int = 400) -> None:
    """GDPOAdvantageEstimator on two or three reward components per row (0/1 and continuous), with and without weights."""
    rng = np.random.default_rng([seed, 3])
    out = []
    for n in range(cases):
        dtype = torch.float32 if n % 2 == 0 else torch.float64
        groups = int(rng.integers(1, 6))
        ids = []
        for k in range(groups):
            ids += [k] * int(rng.choice([1, 2, 3, 4, 8, 16]))
        ids = [ids[i] for i in rng.permutation(len(ids))]
        k = int(rng.integers(2, 4))
        comps = []
        for j in range(k):
            if j == 0 or rng.random() < 0.5:
                c = rng.integers(0, 2, len(ids)).astype(float)
            else:
                c = rng.normal(0, float(rng.choice([0.1, 1.0, 10.0])), len(ids))
            if dtype == torch.float32:
                c = c.astype(np.float32).astype(float)
            comps.append([float(x) for x in c])
        weights = None if rng.random() < 0.5 else [float(np.round(rng.uniform(0.1, 2.0), 2)) for _ in range(k)]
        torch.set_default_dtype(dtype)
        try:
            est = ns["GDPOAdvantageEstimator"](ns["AdvEstimatorConfig"](reward_weights=weights), None)
            batch = {f"reward/c{j}": torch.tensor(c, dtype=dtype) for j, c in enumerate(comps)}
            adv = est.compute_advantage(torch.tensor(ids).unsqueeze(-1), None, torch.ones(len(ids), 3), batch)
        finally:
            torch.set_default_dtype(torch.float32)
        out.append({
            "dtype": "float32" if dtype == torch.float32 else "float64",
            "ids": ids,
            "components": comps,
            "weights": weights,
            "want": [float(a) for a in adv[:, 0]],
        })
    write(os.path.join(HERE, "gdpo", "nemo-rl-gdpo.json.gz"), {
        "repository": REPOSITORY,
        "commit": COMMIT,
        "source": "nemo_rl/algorithms/advantage_estimator.py GDPOAdvantageEstimator",
        "cases": out,
    })


# ---------------------------------------------------------------- the loss


def loss_case(ns, rng: np.random.Generator, token_level: bool):
    """One optimizer step of NeMo-RL's training loop on per-token log-probs.

    The global batch is split over dp ranks, each rank's rows into
    micro-batches of unequal counts. As in nemo_rl/models/automodel/data.py
    and train.py: each rank sums sample_mask and token_mask[:, 1:] *
    sample_mask over its rows, the sums are all-reduced over the ranks
    (global_valid_seqs, global_valid_toks), every micro-batch's loss times
    dp_size is backpropagated, and the ranks' gradients are averaged (FSDP).
    The log-probs are on policy (prev, generation and reference log-probs
    equal to the current ones), the loss configuration NeMo-RL's defaults
    but token_level_loss.
    """
    dp = int(rng.integers(1, 4))
    width = int(rng.integers(2, 10))
    ranks = []
    for _ in range(dp):
        counts = [int(c) for c in rng.integers(1, 5, int(rng.integers(1, 4)))]
        ranks.append(counts)
    rows = sum(sum(c) for c in ranks)
    token_mask = np.zeros((rows, width), np.int64)
    for i in range(rows):
        start = int(rng.integers(1, width))  # the prompt's last token
        end = int(rng.integers(start, width + 1))
        token_mask[i, start:end] = 1
        if rng.random() < 0.1:
            token_mask[i, :] = 0
    sample_mask = (rng.random(rows) > 0.2).astype(np.float32)
    coef = rng.normal(0, 1, rows)
    lp = torch.tensor(-rng.random((rows, width - 1)) * 3, dtype=torch.float64, requires_grad=True)
    cfg = ns["ClippedPGLossConfig"](token_level_loss=token_level)
    fn = ns["ClippedPGLossFn"](cfg)
    grad = torch.zeros(rows, width - 1, dtype=torch.float64)
    # data.py: each rank sums its valid sequences and tokens; all_reduce adds the ranks' sums.
    to_reduce, first = torch.zeros(2), 0
    for counts in ranks:
        sl = slice(first, first + sum(counts))
        first += sum(counts)
        sm, tm = torch.tensor(sample_mask[sl]), torch.tensor(token_mask[sl])
        local_valid_seqs = torch.sum(sm)
        local_valid_toks = torch.sum(tm[:, 1:] * sm.unsqueeze(-1))
        to_reduce = to_reduce + torch.tensor([local_valid_seqs, local_valid_toks])
    gseqs, gtoks = to_reduce[0], to_reduce[1]
    first = 0
    for counts in ranks:
        rank_grad = torch.zeros_like(grad)
        for c in counts:
            mb = slice(first, first + c)
            first += c
            x = lp.detach().clone().requires_grad_(True)
            cur = x[mb]
            adv = torch.tensor(np.repeat(coef[mb, None], width, axis=1), dtype=torch.float64)
            full = torch.cat([torch.zeros(c, 1, dtype=torch.float64), cur.detach()], dim=1)
            data = {
                "token_mask": torch.tensor(token_mask[mb]),
                "sample_mask": torch.tensor(sample_mask[mb]),
                "advantages": adv,
                "prev_logprobs": full,
                "generation_logprobs": full,
                "reference_policy_logprobs": full,
            }
            loss, _ = fn(cur, data, gseqs, gtoks)
            (loss * dp).backward()
            rank_grad += x.grad
        grad += rank_grad / dp  # FSDP averages over the ranks
    per_row, lengths = [], []
    for i in range(rows):
        m = token_mask[i, 1:] * sample_mask[i]
        g = grad[i].numpy()
        if np.any(g[m == 0] != 0):
            sys.exit("loss: a gradient on a masked token")
        vals = g[m == 1]
        if len(vals) and np.max(np.abs(vals - vals[0])) > 1e-15 * max(1, abs(vals[0])):
            sys.exit("loss: the gradient varies within a row")
        per_row.append(float(vals[0]) if len(vals) else 0.0)
        lengths.append(int(token_mask[i, 1:].sum()))
    return {
        "ranks": ranks,
        "lengths": lengths,
        "sample_mask": [int(s) for s in sample_mask],
        "advantages": [float(c) for c in coef],
        "gradient": per_row,
    }


def loss(ns, seed: int = 37, cases: int = 300) -> None:
    rng = np.random.default_rng([seed, 2])
    out = {}
    for name, token_level in (("nemo-rl-token", True), ("nemo-rl-sequence", False)):
        out[name] = [loss_case(ns, rng, token_level) for _ in range(cases)]
    write(os.path.join(ROOT, "loss", "testdata", "nemo-rl-loss.json.gz"), {
        "repository": REPOSITORY,
        "commit": COMMIT,
        "source": "nemo_rl/algorithms/loss/loss_functions.py ClippedPGLossFn; nemo_rl/models/automodel/data.py, train.py",
        "reductions": out,
    })


def write(path: str, doc: dict) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = json.dumps(doc, separators=(",", ":")).encode()
    with open(path, "wb") as f:
        with gzip.GzipFile(fileobj=f, mode="wb", mtime=0) as z:
            z.write(data)


def main(argv: list[str]) -> None:
    if len(argv) == 2 and argv[0] == "extract":
        extract(argv[1])
    elif argv == ["generate"]:
        torch.use_deterministic_algorithms(True)
        ns = load()
        advantages(ns)
        gdpo(ns)
        loss(ns)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
