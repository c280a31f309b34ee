"""A Python client of the spiral JSON Lines bridge that cannot deadlock.

The bridge answers one line per input line, in order. A client that writes
many lines before reading any blocks once both pipe buffers are full (64 KiB
each on Linux): the bridge waits for its answers to be read, the client
waits for its input to be accepted, and neither moves. This client reads the
bridge's answers on its own thread, so any number of lines may be written
before reading.

    with Bridge(["spiral", "credit"]) as b:
        answers = b.map(problems)          # a list of dicts, in input order
        one = b.call(problem)              # one line, one answer

    with Bridge(["spiral", "group", "-preset", "verl-grpo"]) as b:
        out = b.call({"ids": uids, "rewards": scores})

An answer with an "error" key is returned as is by map; call raises
BridgeError for it. JSON has no NaN: requests are encoded with
allow_nan=False, so a NaN or infinite reward raises ValueError here, before it
reaches the bridge. mark_unscorable(line) turns the NaN rewards of a credit
or group line into the bridge's "unscorable" marks. send_raw sends text as
it is (the bridge then names the NaN and its position).
"""
import json
import math
import queue
import subprocess
import threading


class BridgeError(ValueError):
    """The bridge answered a line with {"line": k, "error": "..."}."""


def mark_unscorable(line):
    """Returns a copy of a credit or group line whose NaN rewards are
    replaced by 0 and marked in "unscorable" (the shape of "rewards"): the
    bridge leaves those outputs out of every score and baseline and gives
    them advantage 0."""
    rewards = line["rewards"]
    nested = bool(rewards) and isinstance(rewards[0], list)
    rows = rewards if nested else [rewards]
    marks = [[isinstance(r, float) and math.isnan(r) for r in row] for row in rows]
    clean = [[0 if m else r for r, m in zip(row, ms)] for row, ms in zip(rows, marks)]
    out = dict(line)
    out["rewards"] = clean if nested else clean[0]
    out["unscorable"] = marks if nested else marks[0]
    return out


class Bridge:
    def __init__(self, argv):
        self._proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1 << 16
        )
        self._answers = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self._proc.stdout:
            self._answers.put(json.loads(line))
        self._answers.put(None)  # end of output

    def send_raw(self, text):
        """Writes one line of JSON text as it is (no newline in text)."""
        self._proc.stdin.write(text + "\n")

    def send(self, obj):
        try:
            text = json.dumps(obj, allow_nan=False)
        except ValueError as e:
            raise ValueError(
                "a NaN or Infinity is not a JSON number (%s): mark the output "
                "unscorable, e.g. with mark_unscorable(line)" % e
            ) from e
        self.send_raw(text)

    def flush(self):
        self._proc.stdin.flush()

    def receive(self):
        """Returns the next answer, waiting for it; None after the last one."""
        return self._answers.get()

    def map(self, objs):
        """Sends every object and returns every answer, in order."""
        n = 0
        for obj in objs:
            self.send(obj)
            n += 1
        self.flush()
        return [self.receive() for _ in range(n)]

    def call(self, obj):
        self.send(obj)
        self.flush()
        out = self.receive()
        if out is None:
            raise BridgeError("the bridge exited")
        if "error" in out:
            raise BridgeError(out["error"])
        return out

    def close(self):
        """Closes the bridge's input and returns its exit status."""
        self._proc.stdin.close()
        self._reader.join()
        return self._proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
