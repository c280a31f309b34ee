"""A Python client of the spiral JSON Lines bridge that cannot deadlock.

The bridge answers one line per input line, in order. A client that writes
many lines before reading any would block once both pipe buffers are full
(about 64 KiB each on Linux): the bridge waits for its output to be read, the
client waits for its input to be accepted. This client reads the bridge's
output on its own thread, so any number of lines may be written before
reading.

    with Bridge(["spiral", "credit"]) as b:
        answers = b.map(problems)          # a list of dicts, in input order
        one = b.call(problem)              # one line, one answer

An answer with an "error" key is returned as is by map; call raises
BridgeError for it. Requests are encoded with allow_nan=False, so a NaN or
infinite reward is refused here, before it reaches the bridge; send it as
raw text (send_raw) to see the bridge's own message.
"""
import json
import queue
import subprocess
import threading


class BridgeError(ValueError):
    """The bridge answered a line with {"line": k, "error": "..."}."""


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
        self.send_raw(json.dumps(obj, allow_nan=False))

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
