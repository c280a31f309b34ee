"""Runs the README's Python client against a built bridge (CI runs this).

    SPIRAL_BIN=/path/to/spiral /usr/bin/python3 cmd/spiral/python/client_test.py

It writes 10,000 credit lines before reading any answer (a client without a
reader thread would deadlock on the pipe buffers), checks every answer
against the set scores computed here, and checks that a NaN reward, written
as Python's json.dumps writes it by default, gets an error naming NaN.
"""
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spiral_client import Bridge, BridgeError  # noqa: E402

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

        bad = dict(worked, rewards=[[float("nan"), 1, 1, 0]] + worked["rewards"][1:])
        b.send_raw(json.dumps(bad))  # json.dumps writes NaN by default
        b.flush()
        answer = b.receive()
        assert "error" in answer and "NaN" in answer["error"], answer
        try:
            b.call(bad)
        except ValueError as e:  # json.dumps(allow_nan=False) refuses it here
            assert "NaN" in str(e) or "nan" in str(e).lower(), e
        else:
            raise AssertionError("a NaN reward was sent")
    print("client_test.py: 10,002 lines answered; 1 passed, 0 failed")


if __name__ == "__main__":
    main()
