#!/usr/bin/env python3
"""Writes extracted.py: the trainers' loss code, copied verbatim from their sources.

    python3 extract.py VERL_REPO TRL_REPO > extracted.py

VERL_REPO and TRL_REPO are git clones (their .git directories); the
functions are read at the commits pinned below with ``git show`` and copied
unchanged (methods stay methods of a stand-in class; see trainers.py for
the stand-ins of what they call).
"""

import ast
import subprocess
import sys
import textwrap

VERL = "b178a3cd56f58b2d502255daba591e92833930a7"
TRL = "f2cd57710ae345ea6428ae95363267fcf38a3dc8"

FUNCTIONS = [
    # (repository, commit, path, name, class to hold it or None)
    ("verl", VERL, "verl/utils/torch_functional.py", "masked_sum", None),
    ("verl", VERL, "verl/utils/torch_functional.py", "masked_mean", None),
    ("verl", VERL, "verl/trainer/ppo/core_algos.py", "agg_loss", None),
    ("verl", VERL, "verl/trainer/ppo/core_algos.py", "compute_policy_loss_vanilla", None),
    ("verl", VERL, "verl/workers/utils/losses.py", "ppo_loss", None),
    ("verl", VERL, "verl/workers/actor/dp_actor.py", "update_policy", "VerlDPActorCode"),
    ("verl", VERL, "verl/workers/engine/fsdp/transformer_impl.py", "forward_backward_batch", "VerlEngineCode"),
    ("trl", TRL, "trl/trainer/utils.py", "split_tensor_dict", None),
    ("trl", TRL, "trl/trainer/utils.py", "shuffle_sequence_dict", None),
    ("trl", TRL, "trl/trainer/grpo_trainer.py", "_compute_loss", "TRLGRPOTrainerCode"),
]


def source(repo: str, commit: str, path: str, name: str) -> str:
    text = subprocess.run(["git", "--git-dir", repo, "show", f"{commit}:{path}"], check=True, capture_output=True, text=True).stdout
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            lines = text.splitlines()[node.lineno - 1 : node.end_lineno]  # from `def`, without decorators
            return textwrap.dedent("\n".join(lines))
    raise KeyError(f"{name} not in {path}")


def main() -> None:
    repos = {"verl": sys.argv[1], "trl": sys.argv[2]}
    print('"""The trainers\' loss code, verbatim; written by extract.py (do not edit).')
    print()
    for repo, commit, path, name, cls in FUNCTIONS:
        print(f"{repo} {commit} {path} {name}")
    print('"""')
    print("from __future__ import annotations  # the annotations name trainer types not defined here")
    print()
    print("# ruff: noqa")
    print("# fmt: off")
    print("from trainers.standins import *  # noqa: F401,F403 (the names the code below calls)")
    classes: dict[str, list[str]] = {}
    for repo, commit, path, name, cls in FUNCTIONS:
        code = source(repos[repo], commit, path, name)
        header = f"# {repo}@{commit[:12]} {path}"
        if cls is None:
            print(f"\n\n{header}\n{code}")
        else:
            classes.setdefault(cls, []).append(f"    {header}\n" + textwrap.indent(code, "    "))
    for cls, bodies in classes.items():
        print(f"\n\nclass {cls}:")
        print("\n\n".join(bodies))


if __name__ == "__main__":
    main()
