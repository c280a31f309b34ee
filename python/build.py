#!/usr/bin/env python3
"""Developer shortcut: build, link and test the package spiral in this clone.

The install is ``pip install --no-build-isolation ./python`` (see README.md);
this script builds the library in place for working on the package.

    python3 python/build.py            build the shared library (go build -buildmode=c-shared)
    python3 python/build.py install    build, then make `import spiral` work for this python3
    python3 python/build.py test       build, then run the tests and the two-stage example

It needs the Go toolchain (go on PATH) and python3 with numpy (Debian:
python3-numpy); nothing from a Python package index. The library is built
into python/spiral/_libspiral.so, next to the package. `install` adds a .pth
file naming this directory to the running python3's site-packages: the
virtual environment's when run inside one, else the user's
(~/.local/lib/python3.X/site-packages); the package is then used from this
clone, so a `git pull` and a new build update it.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import sysconfig
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gobuild  # noqa: E402


def build() -> str:
    """Check for numpy and Go, build the shared library with go build and return its path."""
    gobuild.require_numpy()
    return gobuild.build(os.path.join(HERE, "spiral"))


def install() -> str:
    """Build, then write spiral.pth into site-packages; return the .pth's path."""
    build()
    if sys.prefix != sys.base_prefix:  # a virtual environment
        target = sysconfig.get_paths()["purelib"]
    else:
        target = site.getusersitepackages()
    os.makedirs(target, exist_ok=True)
    pth = os.path.join(target, "spiral.pth")
    with open(pth, "w") as f:
        f.write(HERE + "\n")
    return pth


def test(verbosity: int = 1) -> bool:
    """Build, then run every test under python/tests; return whether all passed."""
    build()
    sys.path.insert(0, HERE)
    suite = unittest.defaultTestLoader.discover(os.path.join(HERE, "tests"))
    return unittest.TextTestRunner(verbosity=verbosity).run(suite).wasSuccessful()


def main(argv: list[str]) -> int:
    cmd = argv[1] if len(argv) > 1 else "build"
    if cmd == "build":
        print(build())
    elif cmd == "install":
        pth = install()
        print(f"installed: {pth} -> {HERE}")
        r = subprocess.run([sys.executable, "-c", "import spiral; print(spiral.library_path())"], cwd="/")
        return r.returncode
    elif cmd == "test":
        return 0 if test(2 if "-v" in argv else 1) else 1
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
