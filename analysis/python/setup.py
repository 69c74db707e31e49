"""Build hook of the fleetsim package (the metadata is pyproject.toml).

The package loads libfleetsim with ctypes.  Installed from a prefix
(PREFIX/share/fleetsim/python), the package copied into a virtual
environment no longer sits under PREFIX, so the build writes where the
library is (fleetsim/_where.py: PREFIX/lib*/libfleetsim.so.1, or
$FLEETSIM_LIB when set at install time).  At run time $FLEETSIM_LIB still
comes first.  Build files go to a temporary directory, not beside this file.
"""
import atexit
import glob
import os
import shutil
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def _library():
    env = os.environ.get("FLEETSIM_LIB")
    if env:
        return os.path.abspath(env)
    prefix = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
    for pat in ("lib/libfleetsim.so.1", "lib/*/libfleetsim.so.1", "lib64/libfleetsim.so.1"):
        hits = sorted(glob.glob(os.path.join(prefix, pat)))
        if hits:
            return hits[0]
    return None


class BuildPy(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "fleetsim", "_where.py")
        with open(target, "w") as f:
            f.write('"""Where libfleetsim was at install time (setup.py)."""\n')
            f.write("LIBRARY = %r\n" % _library())


_SCRATCH = tempfile.mkdtemp(prefix="fleetsim-pybuild-")
atexit.register(shutil.rmtree, _SCRATCH, True)
setup(cmdclass={"build_py": BuildPy},
      options={"build": {"build_base": _SCRATCH}, "egg_info": {"egg_base": _SCRATCH}})
