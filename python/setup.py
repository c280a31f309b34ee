"""The build step of the package spiral: the Go library as a shared library inside it.

pyproject.toml holds the metadata; this file adds what setuptools cannot
declare: ``go build -buildmode=c-shared`` of ./capi into the package
(``spiral/_libspiral.so``), and a wheel tagged for the platform (the library
is machine code) but for any Python 3 (it is loaded with ctypes, not linked
against Python). Before anything is built it checks that Go and numpy are
there, and says how to install what is missing.
"""

from __future__ import annotations

import os
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gobuild  # noqa: E402

# pip's isolated build environment (an index is reachable) installs numpy as
# a dependency itself; only a build without isolation runs where the package
# will run, and numpy must be there already.
if not any("pip-build-env-" in p for p in sys.path):
    gobuild.require_numpy()
gobuild.require_go()


class BuildPy(build_py):
    """Copy the Python sources, then build the shared library beside them."""

    def run(self) -> None:
        super().run()
        if not self.dry_run:
            gobuild.build(os.path.join(self.build_lib, "spiral"))


class BinaryDistribution(Distribution):
    """A distribution with machine code: its wheel is not pure Python."""

    def has_ext_modules(self) -> bool:
        return True


cmdclass: dict = {"build_py": BuildPy}
try:
    from wheel.bdist_wheel import bdist_wheel

    class BdistWheel(bdist_wheel):
        """Tag the wheel py3-none-<platform>: machine code, no Python ABI."""

        def finalize_options(self) -> None:
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self) -> tuple:
            _, _, plat = super().get_tag()
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = BdistWheel
except ImportError:  # no wheel package: pip install builds without a wheel
    pass

setup(cmdclass=cmdclass, distclass=BinaryDistribution)
