"""Runs the Python client against a built bridge (CI runs this).

    SPIRAL_BIN=/path/to/spiral /usr/bin/python3 cmd/spiral/python/client_test.py

It writes 10,000 credit lines before reading any answer (a client without a
reader thread would deadlock on the pipe buffers), checks every answer
against the set scores computed here, checks that a NaN reward, written as
Python's json.dumps writes it by default, gets an error naming NaN and its
position, that the same output marked unscorable is credited, and runs the
group command on verl's layout.
"""
import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spiral_client import Bridge, BridgeError, mark_unscorable  # noqa: E402

BIN = os.environ.get("SPIRAL_BIN", "spiral")
SETS = [[0, 1, 2, 3], [4, 5, 6, 7], [0, 2, 4, 6], [1, 3, 5, 7]]


def problem(rng):
    return {"traces": 8, "sets": SETS, "rewards": [[rng.randint(0, 1) for _ in range(4)] for _ in SETS]}


def main():
    rng = random.Random(1)
    problems = [problem(rng) for _ in range(10_000)]
    with Bridge([BIN, "credit"]) as b:
        answers = b.map(problems)
        assert len(answers) == len(problems), len(answers)
        for p, a in zip(problems, answers):
            assert "error" not in a, a
            want = [sum(rs) / len(rs) for rs in p["rewards"]]
            assert all(abs(x - y) < 1e-12 for x, y in zip(a["set_scores"], want)), (p, a)
            assert len(a["search"]) == 8 and len(a["aggregation"]) == 4, a

        worked = {"traces": 8, "sets": SETS, "rewards": [[1, 1, 1, 0], [0.5] * 4, [0, 0.5, 0.5, 0], [1, 0, 1, 0]]}
        out = b.call(worked)
        assert out["aggregation"][0] == [0.25, 0.25, 0.25, -0.75], out

        bad = dict(worked, rewards=[[1, 1, 1, float("nan")]] + worked["rewards"][1:])
        b.send_raw(json.dumps(bad))  # json.dumps writes NaN by default
        b.flush()
        answer = b.receive()
        assert "error" in answer and "rewards[0][3] is NaN" in answer["error"], answer
        try:
            b.call(bad)
        except ValueError as e:  # json.dumps(allow_nan=False) refuses it here
            assert "NaN" in str(e) and not isinstance(e, BridgeError), e
        else:
            raise AssertionError("a NaN reward was sent")

        # Marked unscorable, G1's last output is left out: f_1 = 1.
        out = b.call(mark_unscorable(bad))
        assert out["set_scores"][0] == 1 and out["aggregation"][0] == [0, 0, 0, 0], out
        assert out["scored_outputs"] == [3, 4, 4, 4], out

    # verl's layout: one uid per row, groups in any order.
    with Bridge([BIN, "group", "-preset", "verl-grpo"]) as b:
        out = b.call({"ids": ["a", "b", "a", "a", "b"], "rewards": [1, 1, 0, 0, 1]})
        std = math.sqrt((4 / 9 + 1 / 9 + 1 / 9) / 2)  # group a, Bessel
        want = [(2 / 3) / (std + 1e-6), 0, (-1 / 3) / (std + 1e-6), (-1 / 3) / (std + 1e-6), 0]
        assert all(abs(x - y) < 1e-12 for x, y in zip(out["advantages"], want)), out
        assert out["zero_variance"] == ["b"], out
        out = b.call(mark_unscorable({"ids": [1, 1, 1], "rewards": [1, float("nan"), 0]}))
        assert out["unscorable"] == 1 and out["advantages"][1] == 0, out
    print("client_test.py: 10,003 credit lines and 2 group lines answered; 1 passed, 0 failed")


if __name__ == "__main__":
    main()
