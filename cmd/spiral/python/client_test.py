"""Tests of the Python client against a built bridge (CI runs them).

    SPIRAL_BIN=/path/to/spiral /usr/bin/python3 cmd/spiral/python/client_test.py

They write 10,000 credit lines before reading any answer (a client without a
reader thread would deadlock on the pipe buffers) and check every answer;
fail a batch in its middle (a NaN reward in problem 100 of 256, encoded or
sent as text, an interrupted wait) and check that every line of the next two
batches gets exactly the answer it gets alone; kill the bridge in the middle
of a batch and check that the client raises (a watchdog fails the run
instead of letting it hang); and send numpy arrays and scalars of every
dtype. The numpy tests are skipped only when numpy cannot be imported.
"""
from __future__ import annotations

import faulthandler
import json
import math
import os
import random
import signal
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spiral_client import (  # noqa: E402
    BatchError,
    Bridge,
    BridgeDied,
    BridgeTimeout,
    EncodeError,
    LineError,
    ProtocolError,
    mark_unscorable,
)

try:
    import numpy as np
except ImportError:  # the numpy tests are skipped
    np = None

BIN = os.environ.get("SPIRAL_BIN", "spiral")
SETS = [[0, 1, 2, 3], [4, 5, 6, 7], [0, 2, 4, 6], [1, 3, 5, 7]]
WORKED = {"traces": 8, "sets": SETS, "rewards": [[1, 1, 1, 0], [0.5] * 4, [0, 0.5, 0.5, 0], [1, 0, 1, 0]]}
# The longest a test may take before the watchdog fails the run: a hang is
# a failure, never a stuck CI job.
WATCHDOG = 120


def problem(rng: random.Random) -> dict:
    # Rewards in quarters, so scores and advantages differ between problems.
    return {"traces": 8, "sets": SETS, "rewards": [[rng.randint(0, 4) / 4 for _ in range(4)] for _ in SETS]}


def alone(lines: list[dict]) -> list[dict]:
    """Every line's answer from a fresh bridge, one line per call."""
    out = []
    with Bridge([BIN, "credit"]) as b:
        for line in lines:
            out.append(b.call(line))
    return out


class WatchedTest(unittest.TestCase):
    """A test that the watchdog ends, failing the run, if it hangs."""

    def setUp(self) -> None:
        faulthandler.dump_traceback_later(WATCHDOG, exit=True)

    def tearDown(self) -> None:
        faulthandler.cancel_dump_traceback_later()


class ClientTest(WatchedTest):

    def test_many_lines_before_reading(self) -> None:
        rng = random.Random(1)
        problems = [problem(rng) for _ in range(10_000)]
        with Bridge([BIN, "credit"]) as b:
            answers = b.map(problems)
        self.assertEqual(len(answers), len(problems))
        for p, a in zip(problems, answers):
            want = [sum(rs) / len(rs) for rs in p["rewards"]]
            self.assertEqual(a["set_scores"], want)
            self.assertEqual((len(a["search"]), len(a["aggregation"])), (8, 4))

    def test_worked_example_and_nan(self) -> None:
        with Bridge([BIN, "credit"]) as b:
            self.assertEqual(b.call(WORKED)["aggregation"][0], [0.25, 0.25, 0.25, -0.75])
            bad = dict(WORKED, rewards=[[1, 1, 1, float("nan")]] + WORKED["rewards"][1:])
            # As json.dumps writes it by default: the bridge names the NaN.
            with self.assertRaises(LineError) as e:
                b.call_text(json.dumps(bad))
            self.assertEqual(e.exception.line, 2)
            self.assertIn("rewards[0][3] is NaN", e.exception.message)
            # Encoded by the client: refused here, nothing sent.
            with self.assertRaises(EncodeError) as e:
                b.call(bad)
            self.assertEqual(e.exception.index, 0)
            self.assertNotIsInstance(e.exception, LineError)
            # Marked unscorable, G1's last output is left out: f_1 = 1.
            out = b.call(mark_unscorable(bad))
            self.assertEqual(out["set_scores"][0], 1)
            self.assertEqual(out["aggregation"][0], [0, 0, 0, 0])
            self.assertEqual(out["scored_outputs"], [3, 4, 4, 4])
            # The bridge's own line count went on past the failures.
            with self.assertRaises(LineError) as e:
                b.call({"traces": 8, "sets": [[0, 0, 1, 2]], "rewards": [[1, 1, 1, 1]]})
            self.assertEqual(e.exception.line, 4)

    def test_group_verl_layout(self) -> None:
        with Bridge([BIN, "group", "-preset", "verl-grpo"]) as b:
            out = b.call({"ids": ["a", "b", "a", "a", "b"], "rewards": [1, 1, 0, 0, 1]})
            std = math.sqrt((4 / 9 + 1 / 9 + 1 / 9) / 2)  # group a, Bessel
            want = [(2 / 3) / (std + 1e-6), 0, (-1 / 3) / (std + 1e-6), (-1 / 3) / (std + 1e-6), 0]
            for x, y in zip(out["advantages"], want):
                self.assertAlmostEqual(x, y, delta=1e-12)
            self.assertEqual(out["zero_variance"], ["b"])
            out = b.call(mark_unscorable({"ids": [1, 1, 1], "rewards": [1, float("nan"), 0]}))
            self.assertEqual((out["unscorable"], out["advantages"][1]), (1, 0))

    def later_batches_are_their_own(self, b: Bridge, rng: random.Random) -> None:
        """Two more batches on b: every answer is the one its line gets alone."""
        for _ in range(2):
            batch = [problem(rng) for _ in range(256)]
            self.assertEqual(b.map(batch), alone(batch))

    def test_nan_in_problem_100_of_256(self) -> None:
        rng = random.Random(2)
        with Bridge([BIN, "credit"]) as b:
            b.call(WORKED)
            batch = [problem(rng) for _ in range(256)]
            batch[100]["rewards"][2][1] = float("nan")
            with self.assertRaises(EncodeError) as e:
                b.map(batch)
            self.assertEqual(e.exception.index, 100)
            self.later_batches_are_their_own(b, rng)

    def test_nan_text_in_problem_100_of_256(self) -> None:
        rng = random.Random(3)
        with Bridge([BIN, "credit"]) as b:
            batch = [problem(rng) for _ in range(256)]
            batch[100]["rewards"][2][1] = float("nan")
            texts = [json.dumps(p) for p in batch]
            with self.assertRaises(BatchError) as e:
                b.map_text(texts)
            self.assertEqual([(x.index, x.line) for x in e.exception.errors], [(100, 101)])
            self.assertIn("rewards[2][1] is NaN", e.exception.errors[0].message)
            good = batch[:100] + batch[101:]
            got = e.exception.answers[:100] + e.exception.answers[101:]
            self.assertEqual(got, alone(good))
            # errors="return" keeps the error answer in place.
            answers = b.map_text(texts, errors="return")
            self.assertEqual(answers[100]["line"], 256 + 101)
            self.later_batches_are_their_own(b, rng)

    def test_interrupted_wait_is_drained(self) -> None:
        rng = random.Random(4)
        with Bridge([BIN, "credit"]) as b:
            real = b._next
            taken = 0

            def interrupted() -> tuple[int, str]:
                nonlocal taken
                taken += 1
                if taken == 101:
                    raise KeyboardInterrupt
                return real()

            b._next = interrupted
            with self.assertRaises(KeyboardInterrupt):
                b.map([problem(rng) for _ in range(256)])
            b._next = real
            self.later_batches_are_their_own(b, rng)

    def test_killed_mid_batch_raises(self) -> None:
        rng = random.Random(5)
        batch = [problem(rng) for _ in range(50_000)]
        b = Bridge([BIN, "credit"], timeout=None)  # only the bridge's death ends the wait
        self.assertEqual(b.call(WORKED)["aggregation"][0], [0.25, 0.25, 0.25, -0.75])

        def kill_after_first_answers() -> None:
            while b.received < 2:
                threading.Event().wait(0.001)
            os.kill(b.pid, signal.SIGKILL)

        killer = threading.Thread(target=kill_after_first_answers, daemon=True)
        killer.start()
        with self.assertRaises(BridgeDied) as e:
            b.map(batch)
        killer.join()
        self.assertEqual(e.exception.returncode, -signal.SIGKILL)
        self.assertGreater(e.exception.owed, 0)
        # Every later wait sees the end too.
        with self.assertRaises(BridgeDied):
            b.call(WORKED)
        with self.assertRaises(BridgeDied):
            b.map([WORKED, WORKED])
        self.assertEqual(b.close(), -signal.SIGKILL)

    def test_dead_bridge_raises_with_its_stderr(self) -> None:
        with Bridge([BIN, "credit", "-no-such-flag"]) as b:
            with self.assertRaises(BridgeDied) as e:
                b.call(WORKED)
        self.assertEqual(e.exception.returncode, 2)
        self.assertIn("no-such-flag", e.exception.stderr)
        self.assertIn("no-such-flag", str(e.exception))

    def test_silent_bridge_times_out(self) -> None:
        silent = [sys.executable, "-c", "import sys, time; sys.stdin.readline(); time.sleep(600)"]
        with Bridge(silent, timeout=0.5) as b:
            with self.assertRaises(BridgeTimeout) as e:
                b.call(WORKED)
            self.assertEqual(e.exception.owed, 1)
            with self.assertRaises(BridgeTimeout):
                b.call(WORKED)

    def test_answer_for_another_line_is_refused(self) -> None:
        liar = [sys.executable, "-c", 'import sys\nfor _ in sys.stdin: print(\'{"line": 7, "error": "x"}\', flush=True)']
        with Bridge(liar) as b:
            with self.assertRaises(ProtocolError) as e:
                b.call(WORKED)
            self.assertEqual(e.exception.expected, 1)

    def test_unencodable_value(self) -> None:
        with Bridge([BIN, "credit"]) as b:
            with self.assertRaises(EncodeError) as e:
                b.map([WORKED, dict(WORKED, traces=object())])
            self.assertEqual(e.exception.index, 1)
            with self.assertRaises(EncodeError):
                b.map_text(['{"traces": 8}\n{"traces": 8}'])
            self.assertEqual(b.call(WORKED)["aggregation"][0], [0.25, 0.25, 0.25, -0.75])


@unittest.skipIf(np is None, "numpy cannot be imported")
class NumpyTest(WatchedTest):
    def test_arrays_and_scalars_of_every_dtype(self) -> None:
        want = alone([WORKED])[0]
        rewards = np.array(WORKED["rewards"])
        lines = []
        for dt in (np.float16, np.float32, np.float64, np.longdouble):
            lines.append(dict(WORKED, rewards=rewards.astype(dt)))
            lines.append(dict(WORKED, rewards=[[dt(r) for r in row] for row in WORKED["rewards"]]))
            lines.append(dict(WORKED, rewards=[row for row in rewards.astype(dt)]))
        for dt in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.intp):
            lines.append(dict(WORKED, traces=dt(8), sets=np.array(SETS, dtype=dt), rewards=rewards))
            lines.append(dict(WORKED, traces=np.array(8, dtype=dt), sets=[[dt(i) for i in s] for s in SETS]))
        with Bridge([BIN, "credit"]) as b:
            for i, got in enumerate(b.map(lines)):
                self.assertEqual(got, want, i)

    def test_answers_as_arrays(self) -> None:
        want = alone([WORKED])[0]
        ragged = dict(WORKED, rewards=[[1, 0], [0.5] * 4, [0, 0.5, 0.5], [1]])
        with Bridge([BIN, "credit"], arrays=True) as b:
            got, rag = b.map([WORKED, ragged])
        for key in ("search", "set_scores", "set_advantages", "appearances", "scored_outputs"):
            self.assertIsInstance(got[key], np.ndarray, key)
            self.assertEqual(got[key].dtype, np.float64, key)
            self.assertEqual(got[key].tolist(), want[key], key)
        self.assertEqual([row.tolist() for row in got["aggregation"]], want["aggregation"])
        self.assertEqual([len(row) for row in rag["aggregation"]], [2, 4, 3, 1])
        self.assertEqual(got["search_gate"], want["search_gate"])  # objects stay dicts
        self.assertIs(got["no_signal"], False)
        with Bridge([BIN, "group"], arrays=True) as b:
            out = b.call({"ids": np.array([3, 3, 4]), "rewards": np.array([1.0, 0.0, 1.0], dtype=np.float32)})
        self.assertEqual(out["advantages"].tolist(), [0.5, -0.5, 0])
        self.assertEqual((type(out["singletons"]), out["singletons"]), (list, [4]))

    def test_nan_of_every_float_dtype(self) -> None:
        for dt in (np.float16, np.float32, np.float64, np.longdouble):
            rewards = np.array(WORKED["rewards"], dtype=dt)
            rewards[0, 3] = np.nan
            for form in (rewards, list(rewards), [[dt(r) for r in row] for row in rewards]):
                with Bridge([BIN, "credit"]) as b:
                    with self.assertRaises(EncodeError):
                        b.call(dict(WORKED, rewards=form))
                    out = b.call(mark_unscorable(dict(WORKED, rewards=form)))
                self.assertEqual(out["scored_outputs"], [3, 4, 4, 4], (dt, type(form)))
                self.assertEqual(out["set_scores"][0], 1)
            marked = mark_unscorable({"ids": np.arange(3), "rewards": np.array([1, np.nan, 0], dtype=dt)})
            self.assertEqual(marked["unscorable"], [False, True, False], dt)
            with Bridge([BIN, "group"]) as b:
                self.assertEqual(b.call(marked)["unscorable"], 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
