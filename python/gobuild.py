"""Build the shared library of the package spiral with the Go toolchain.

One owner for the build, used by setup.py (``pip install``, ``pip wheel``)
and by build.py (the developer's shortcut): checks that Go and numpy are
there, then ``go build -buildmode=c-shared`` of the C ABI (./capi, the Go
module spiral/python, which builds the library of the repository around it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIB_NAME = "_libspiral.so"

INSTALL_GO = (
    "install Go {want} or later (https://go.dev/dl/): "
    "curl -LO https://go.dev/dl/go{want}.linux-amd64.tar.gz && "
    "sudo tar -C /usr/local -xzf go{want}.linux-amd64.tar.gz && "
    "export PATH=$PATH:/usr/local/go/bin"
)
INSTALL_NUMPY = "sudo apt-get install python3-numpy (Debian, Ubuntu), or pip install numpy"


class MissingTool(SystemExit):
    """A tool the build needs is missing; the message says how to install it."""


def _wanted_go() -> str:
    """The Go version go.mod asks for ("1.26.0")."""
    with open(os.path.join(HERE, "go.mod")) as f:
        m = re.search(r"^go (\S+)", f.read(), re.M)
    return m.group(1) if m else "1.26.0"


def _version(v: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def go_command() -> str:
    """Return the go command ($GO, else go on PATH), or exit saying how to install Go."""
    want = _wanted_go()
    go = os.environ.get("GO") or shutil.which("go")
    if go is None:
        raise MissingTool("spiral: building the package needs the Go toolchain, and go is not on PATH: " + INSTALL_GO.format(want=want))
    r = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True)
    have = r.stdout.strip()
    if r.returncode != 0 or _version(have) < _version(want):
        raise MissingTool(f"spiral: {go} is {have or 'not a working Go toolchain'}, the package needs Go {want}: " + INSTALL_GO.format(want=want))
    return go


def require_go() -> None:
    """Exit, saying how to install it, when no Go toolchain recent enough is found."""
    go_command()


def require_numpy() -> None:
    """Exit, saying how to install it, when this Python cannot import numpy."""
    try:
        import numpy  # noqa: F401
    except ImportError as e:
        raise MissingTool(f"spiral: the package needs numpy, which {sys.executable} cannot import ({e}): {INSTALL_NUMPY}")


def build(dest: str) -> str:
    """Build the shared library into directory dest and return its path."""
    go = go_command()
    os.makedirs(dest, exist_ok=True)
    lib = os.path.join(os.path.abspath(dest), LIB_NAME)
    cmd = [go, "build", "-buildmode=c-shared", "-trimpath", "-o", lib, "./capi"]
    env = dict(os.environ, CGO_ENABLED="1")
    print("spiral: " + " ".join(cmd), file=sys.stderr)
    r = subprocess.run(cmd, cwd=HERE, env=env)
    if r.returncode != 0:
        raise SystemExit(f"spiral: {' '.join(cmd)} failed (exit {r.returncode}); cgo needs a C compiler: sudo apt-get install gcc")
    header = os.path.splitext(lib)[0] + ".h"  # go build's header of the exported functions
    if os.path.exists(header):
        os.remove(header)
    return lib
