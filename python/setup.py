# SPDX-License-Identifier: LGPL-2.1-or-later
"""Build hook: from a sandlock source tree, build libsandlock (make) and ship it inside the
package as sandlock/libsandlock.so, so an installed package needs nothing else. Outside a source
tree (an sdist), the package uses the system's libsandlock.so.0 instead."""

import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHLIB = os.path.join("build", "libsandlock.so")  # a link to the versioned file


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        if not os.path.exists(os.path.join(ROOT, "src", "api-sandbox.c")):
            return  # not a source tree: the system library is used
        jobs = str(os.cpu_count() or 2)
        subprocess.run(["make", "-C", ROOT, "-s", "-j", jobs], check=True)
        dest = os.path.join(self.build_lib, "sandlock", "libsandlock.so")
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(os.path.realpath(os.path.join(ROOT, SHLIB)), dest)


class BinaryDistribution(Distribution):
    """The wheel carries a shared library: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
