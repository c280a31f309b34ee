"""Hostile input: shapes, sizes, seeds, shared outputs, released handles, fork, the ABI's layout."""

from __future__ import annotations

import ctypes
import os
import threading
import unittest

import numpy as np

import spiral
from spiral import _abi, _native


def batch(cfg: spiral.Config, problems: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    plans = cfg.plan(seed, 0, problems)
    rewards = rng.integers(0, 2, (problems, cfg.sets, cfg.aggregations_per_set)).astype(np.float64)
    sl = rng.integers(0, 200, (problems, cfg.search_traces))
    al = rng.integers(0, 200, rewards.shape)
    return plans, rewards, sl, al


class ShapeTest(unittest.TestCase):
    def test_transposed_is_refused(self) -> None:
        cfg = spiral.Config.paper().replace(gates=spiral.Gates.shared(100))
        plans, rewards, sl, al = batch(cfg, 5)
        with self.assertRaises(spiral.InputError) as cm:
            cfg.credit_batch(plans, rewards, search_lengths=sl.T, aggregation_lengths=al)
        self.assertEqual(cm.exception.field, "search_lengths")
        self.assertIn("(8, 5)", str(cm.exception))
        self.assertIn("(5, 8)", str(cm.exception))
        with self.assertRaises(spiral.InputError) as cm:
            cfg.credit_batch(plans, rewards.transpose(2, 1, 0), search_lengths=sl, aggregation_lengths=al)
        self.assertEqual(cm.exception.field, "rewards")
        with self.assertRaises(spiral.InputError) as cm:
            cfg.credit_batch(plans, rewards, search_lengths=sl, aggregation_lengths=al.transpose(2, 1, 0))
        self.assertEqual(cm.exception.field, "aggregation_lengths")
        with self.assertRaises(spiral.InputError) as cm:
            cfg.credit_batch(np.array(plans).transpose(0, 2, 1).copy()[:, :3], rewards)
        self.assertEqual(cm.exception.field, "sets")
        # The flat layout, and the rows of a flat row layout, are the same batch.
        a = cfg.credit_batch(plans, rewards, search_lengths=sl, aggregation_lengths=al)
        b = cfg.credit_batch(
            np.array(plans).reshape(-1), rewards.reshape(-1, cfg.aggregations_per_set), search_lengths=sl.reshape(-1),
            aggregation_lengths=al.reshape(-1, cfg.aggregations_per_set),
        )
        self.assertTrue(np.array_equal(a.search, b.search))

    def test_loss_shapes(self) -> None:
        cfg = spiral.Config.paper()
        plans, rewards, sl, al = batch(cfg, 5)
        cr = cfg.credit_batch(plans, rewards)
        with self.assertRaises(spiral.InputError) as cm:
            cfg.loss_coefficients(cr, search_lengths=sl.T, aggregation_lengths=al)
        self.assertEqual(cm.exception.field, "search_lengths")

    def test_all_empty_outputs_are_refused(self) -> None:
        cfg = spiral.Config.paper()
        plans, rewards, sl, al = batch(cfg, 3)
        cr = cfg.credit_batch(plans, rewards)
        with self.assertRaises(spiral.InputError) as cm:
            cfg.loss_coefficients(cr, search_lengths=np.zeros_like(sl), aggregation_lengths=np.zeros_like(al))
        self.assertIn("0 tokens", str(cm.exception))
        self.assertIn("search_lengths", str(cm.exception))


class SizeTest(unittest.TestCase):
    def test_oversize_rewards_refused_before_any_copy(self) -> None:
        cfg = spiral.Config.paper()
        plans = cfg.plan(1, 0, 1)
        big = np.zeros(1 << 22, np.float32)  # 16 MiB for one problem of 16 rewards
        with self.assertRaises(spiral.InputError) as cm:
            cfg.credit_batch(plans, big)
        self.assertEqual(cm.exception.field, "rewards")

    def test_abi_checks_lengths_before_copying(self) -> None:
        # A length far beyond the memory behind it: the library must refuse
        # it from the length alone (reading it would fault, copying it
        # would exhaust memory).
        cfg = spiral.Config.paper()
        plans = cfg.plan(1, 0, 1)
        small = np.zeros(16, np.float32)
        lib = _native.lib
        for field in ("rewards", "unscorable", "search_lengths", "aggregation_lengths", "reward_counts"):
            inp = _native._CreditIn()
            inp.rewards = _native.array(small)
            dtype = {"rewards": _native.F32, "unscorable": _native.BOOL}.get(field, _native.I64)
            setattr(inp, field, _native._Array(_native.address(small), 1 << 40, dtype))
            out = _native._CreditOut()
            h = lib.spiral_credit_batch(cfg._handle.value, plans._handle, ctypes.byref(inp), ctypes.byref(out), None)
            with self.assertRaises(spiral.InputError) as cm:
                _native.check(h)
            self.assertEqual(cm.exception.field, field)
        inp = _native._CreditIn()
        inp.sets = _native._Array(_native.address(small), 1 << 40, _native.I64)
        with self.assertRaises(spiral.InputError) as cm:
            _native.check(lib.spiral_credit_batch(cfg._handle.value, 0, ctypes.byref(inp), ctypes.byref(_native._CreditOut()), None))
        self.assertEqual(cm.exception.field, "sets")
        huge = _native._Array(_native.address(small), 1 << 40, _native.F32)
        ids = _native.array(np.zeros(16, np.int64))
        with self.assertRaises(spiral.InputError) as cm:
            opts = b"{}"
            _native.check(lib.spiral_group(opts, len(opts), ctypes.byref(huge), ctypes.byref(ids), None, None, None, None, None, None, None))
        self.assertEqual(cm.exception.field, "rewards")

    def test_problems_beyond_the_cap(self) -> None:
        cfg = spiral.Config.paper()
        with self.assertRaises(spiral.InputError) as cm:
            cfg.plan(1, 0, 1 << 40)
        self.assertEqual(cm.exception.field, "keys")


class IntegerTest(unittest.TestCase):
    def test_seed_step_key_range(self) -> None:
        cfg = spiral.Config.paper()
        top = cfg.plan(2**64 - 1, 2**64 - 1, np.array([2**64 - 1], np.uint64))
        self.assertEqual(top.shape, (1, 4, 4))
        for arg in ("seed", "step"):
            for bad in (-1, 2**64, 2**70):
                kw = {"seed": 1, "step": 0, arg: bad}
                with self.assertRaises(spiral.InputError) as cm:
                    cfg.plan(kw["seed"], kw["step"], 2)
                self.assertEqual(cm.exception.field, arg)
            with self.assertRaises(TypeError) as tm:
                cfg.plan(**{"seed": 1, "step": 0, arg: 1.5}, keys=2)
            self.assertIn(arg, str(tm.exception))
        for bad in ([-1], [2**64], np.array([-5], np.int64)):
            with self.assertRaises(spiral.InputError) as cm:
                cfg.plan(1, 0, bad)
            self.assertEqual(cm.exception.field, "keys")

    def test_uint64_checked_as_integers(self) -> None:
        cfg = spiral.Config.paper()
        plans, rewards, sl, al = batch(cfg, 2)
        for v in (2**63, 2**63 + 1, 2**64 - 1):
            bad = sl.astype(np.uint64)
            bad[1, 3] = v
            with self.assertRaises(spiral.InputError) as cm:
                cfg.credit_batch(plans, rewards, search_lengths=bad)
            self.assertEqual(cm.exception.field, "search_lengths")


class SharedOutTest(unittest.TestCase):
    def test_out_of_another_thread_is_refused(self) -> None:
        cfg = spiral.Config.paper()
        inputs = [batch(cfg, 16, seed=t) for t in range(8)]
        shared = cfg.credit_batch(inputs[0][0], inputs[0][1])
        refused: list = []
        own: list = []

        def run(t: int) -> None:
            plans, rewards = inputs[t][0], inputs[t][1]
            try:
                cfg.credit_batch(plans, rewards, out=shared)
            except spiral.UsageError as e:
                refused.append("out" in str(e))
            mine = cfg.credit_batch(plans, rewards)
            for _ in range(20):
                got = cfg.credit_batch(plans, rewards, out=mine)
                own.append(np.array_equal(got.search, cfg.credit_batch(plans, rewards).search))

        threads = [threading.Thread(target=run, args=(t,)) for t in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(refused, [True] * 8)
        self.assertEqual(own, [True] * 160)
        self.assertIs(cfg.credit_batch(inputs[0][0], inputs[0][1], out=shared), shared)  # its own thread's

    def test_out_must_be_a_credit(self) -> None:
        cfg = spiral.Config.paper()
        plans, rewards, _, _ = batch(cfg, 2)
        with self.assertRaises(TypeError) as cm:
            cfg.credit_batch(plans, rewards, out=np.zeros(3))
        self.assertIn("out", str(cm.exception))


class HandleTest(unittest.TestCase):
    def test_released_plans_give_an_error(self) -> None:
        cfg = spiral.Config.paper()
        plans, rewards, _, _ = batch(cfg, 4)
        h = plans._handle
        _native.lib.spiral_release(h)
        _native.lib.spiral_release(h)  # twice: ignored
        with self.assertRaises(spiral.UsageError) as cm:
            cfg.credit_batch(plans, rewards)
        self.assertIn("plans handle", str(cm.exception))
        plans._handle = 0

    def test_release_while_in_use(self) -> None:
        # Credit with plans in one thread while another releases them and
        # draws new plans (which may reuse the memory): every call gives the
        # right credit or an error, never another batch's credit.
        cfg = spiral.Config.paper()
        rewards = np.random.default_rng(3).integers(0, 2, (64, 4, 4)).astype(np.float64)
        for round_ in range(20):
            plans = cfg.plan(round_, 0, 64)
            want = cfg.credit_batch(np.array(plans), rewards).search.copy()
            results: list = []

            def credit() -> None:
                for _ in range(30):
                    try:
                        results.append(np.array_equal(cfg.credit_batch(plans, rewards).search, want))
                    except spiral.UsageError:
                        results.append("released")

            th = threading.Thread(target=credit)
            th.start()
            _native.lib.spiral_release(plans._handle)
            others = [cfg.plan(round_ + 100 + i, 0, 64) for i in range(5)]
            th.join()
            plans._handle = 0
            self.assertNotIn(False, results)
            del others


class ForkTest(unittest.TestCase):
    @unittest.skipUnless(hasattr(os, "fork"), "no fork")
    def test_after_fork(self) -> None:
        # A DataLoader worker: the parent loaded the library and credited;
        # the forked child plans and credits with the parent's Config.
        cfg = spiral.Config.paper().replace(gates=spiral.Gates.shared(100))
        plans, rewards, sl, al = batch(cfg, 8)
        want = cfg.credit_batch(plans, rewards, search_lengths=sl, aggregation_lengths=al)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            code = 1
            try:
                os.close(r)
                got = cfg.credit_batch(cfg.plan(1, 0, 8), rewards, search_lengths=sl, aggregation_lengths=al)
                lc = cfg.loss_coefficients(got, search_lengths=sl, aggregation_lengths=al)
                os.write(w, got.search.tobytes() + lc.search.tobytes())
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        data = b""
        while chunk := os.read(r, 1 << 16):
            data += chunk
        os.close(r)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        lc = cfg.loss_coefficients(want, search_lengths=sl, aggregation_lengths=al)
        self.assertEqual(data, want.search.tobytes() + lc.search.tobytes())


class InPlaceTest(unittest.TestCase):
    """float64 and int64 inputs are read in place, the others converted: the same credit, inputs untouched."""

    def test_inputs_are_only_read(self) -> None:
        cfg = spiral.Config.paper().replace(
            gates=spiral.Gates.shared(150), overlong=spiral.SoftOverlong(180, 40), aggregation_baseline="leave_one_out"
        )
        plans, rewards, sl, al = batch(cfg, 7, seed=5)
        # Rewards that float32 holds exactly, so that float32 gives the same credit, rounded.
        rewards = (rewards + np.random.default_rng(5).normal(0, 0.3, rewards.shape)).astype(np.float32).astype(np.float64)
        un = np.zeros(rewards.shape, bool)
        un[1, 2, 3] = un[4, 0, 0] = True
        rewards[1, 2, 3] = np.nan  # unscorable: not read
        before = [a.copy() for a in (rewards, sl, al, un)]
        got = cfg.credit_batch(plans, rewards, unscorable=un, search_lengths=sl, aggregation_lengths=al)
        for a, b in zip((rewards, sl, al, un), before):
            self.assertEqual(a.tobytes(), b.tobytes())
        self.assertLess(got.overlong.total, 0)
        self.assertGreater(got.search_gate.gated + got.aggregation_gate.gated, 0)

        def unaligned(a: np.ndarray) -> np.ndarray:
            buf = np.zeros(a.nbytes + 1, np.uint8)
            u = buf[1:].view(a.dtype).reshape(a.shape)
            u[...] = a
            self.assertFalse(u.flags.aligned)
            return u

        def read_only(a: np.ndarray) -> np.ndarray:
            r = a.copy()
            r.flags.writeable = False
            return r

        variants = {
            "converted": (rewards.astype(np.float32), sl.astype(np.int32), al.astype(np.int32)),
            "unaligned": (unaligned(rewards), unaligned(sl), unaligned(al)),
            "read-only": (read_only(rewards), read_only(sl), read_only(al)),
            "strided": (np.repeat(rewards, 2, axis=2)[..., ::2], np.repeat(sl, 2, axis=1)[:, ::2], np.repeat(al, 2, axis=2)[..., ::2]),
        }
        for name, (r, s, a) in variants.items():
            with self.subTest(name):
                other = cfg.credit_batch(plans, r, unscorable=un, search_lengths=s, aggregation_lengths=a)
                for field in ("search", "aggregation", "set_scores", "set_advantages", "appearances", "scored_outputs"):
                    want = getattr(got, field).astype(getattr(other, field).dtype)
                    self.assertEqual(getattr(other, field).tobytes(), want.tobytes(), field)
                self.assertEqual(other.aggregation_gate, got.aggregation_gate)
                self.assertEqual(other.overlong, got.overlong)

    def test_keys_of_an_int_are_shared_read_only(self) -> None:
        cfg = spiral.Config.paper()
        a, b = cfg.plan(1, 0, 6), cfg.plan(1, 1, 6)
        self.assertFalse(a.keys.flags.writeable)
        self.assertTrue(np.array_equal(a.keys, np.arange(6)))
        self.assertTrue(np.array_equal(b.keys, np.arange(6)))
        self.assertTrue(np.array_equal(cfg.plan(1, 0, 3).keys, np.arange(3)))
        # Keys given as an array stay the caller's, writable.
        mine = np.arange(6, dtype=np.uint64)
        self.assertTrue(cfg.plan(1, 0, mine).keys.flags.writeable)
        self.assertTrue(mine.flags.writeable)
        # An int beyond a larger configuration's cap is refused there, whatever was planned before.
        big = spiral.Config(search_traces=128, set_size=64, sets=1 << 16)  # K*n = 2^22: at most 4 problems
        cfg.plan(1, 0, 6)
        with self.assertRaises(spiral.InputError) as cm:
            big.plan(1, 0, 6)
        self.assertEqual(cm.exception.field, "keys")


class LayoutTest(unittest.TestCase):
    def test_structures_follow_the_header(self) -> None:
        header = _native._void_text("spiral_abi_header")
        layout = _native._void_text("spiral_abi_layout")
        structs, consts = _abi.parse(header)
        _abi.check(structs, layout)
        self.assertEqual(ctypes.sizeof(structs["spiral_credit_in"]), 6 * ctypes.sizeof(structs["spiral_array"]))
        self.assertEqual(consts["SPIRAL_F64"], _native.F64)
        # A field added to the header moves the fields after it: the check
        # refuses the mismatch instead of shifting every output.
        moved = header.replace("spiral_array rewards;", "spiral_array extra;\n\tspiral_array rewards;")
        with self.assertRaises(ImportError):
            _abi.check(_abi.parse(moved)[0], layout)


if __name__ == "__main__":
    unittest.main()
