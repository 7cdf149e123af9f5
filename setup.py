"""Builds the tensorgraph Python package with CMake (PEP 517 through
setuptools' build_meta; pyproject.toml declares it).

setuptools is the backend because Debian packages it (python3-setuptools)
and the rest of the build is CMake: scikit-build-core is not in Debian 12
and meson-python would need a second build description. The build_ext
below configures the same CMakeLists.txt as a source build, in its own
folder, with TG_WHEEL=ON: the extension tensorgraph._C and the `tg` tool
link the shared library libtg.so, and all three go inside the package
directory, where the extension and the tool find the library by a
relative run path ($ORIGIN). The wheel thus works without the source
tree or a build folder.

It compiles for a baseline CPU (x86-64-v2, TG_NATIVE=OFF): the kernels
that use AVX2 or AVX-512 are chosen at run time. Extra CMake options come
from the environment: TG_CMAKE_ARGS="-DTG_NATIVE=ON" builds for this
machine only; -DTG_USE_BLAS=OFF drops the OpenBLAS dependency."""
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def library_version():
    """TG_VERSION from include/tg/core.h: the one place the version is set."""
    with open(os.path.join(ROOT, "include", "tg", "core.h"), encoding="utf-8") as f:
        m = re.search(r'^#define TG_VERSION "([^"]+)"', f.read(), re.M)
    if not m:
        raise RuntimeError("setup.py: no TG_VERSION in include/tg/core.h")
    return m.group(1)


class CMakeBuild(build_ext):
    """Builds tensorgraph._C, libtg.so and tg with CMake and copies them
    next to the pure-Python modules."""

    def build_extension(self, ext):
        build_dir = os.path.join(os.path.abspath(self.build_temp), "cmake")
        config = ["-DCMAKE_BUILD_TYPE=Release", "-DTG_WHEEL=ON", "-DTG_NATIVE=OFF",
                  "-DPython3_EXECUTABLE=" + sys.executable]
        config += shlex.split(os.environ.get("TG_CMAKE_ARGS", ""))
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build_dir] + config)
        subprocess.check_call(["cmake", "--build", build_dir, "-j", jobs,
                               "--target", "tg_python", "tg"])
        built = os.path.join(build_dir, "python", "tensorgraph")
        dest = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
        os.makedirs(dest, exist_ok=True)
        # the extension under the name setuptools expects, the library under
        # its soname (what the run path looks for), the tool
        shutil.copy2(self.find_one(built, r"^_C\..*\.so$"), self.get_ext_fullpath(ext.name))
        shutil.copy2(self.find_one(built, r"^libtg\.so\.\d+$"), dest)
        shutil.copy2(os.path.join(built, "tg"), dest)

    @staticmethod
    def find_one(folder, pattern):
        names = [n for n in os.listdir(folder) if re.match(pattern, n)]
        if len(names) != 1:
            raise RuntimeError(f"setup.py: expected one file matching {pattern} in "
                               f"{folder}, found {names}")
        return os.path.join(folder, names[0])


setup(
    version=library_version(),
    packages=find_packages("python"),
    package_dir={"": "python"},
    # sources=[]: CMake compiles it; the entry makes the wheel platform-specific
    ext_modules=[Extension("tensorgraph._C", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own build folder apart from CMake's build/
    options={"build": {"build_base": "build-python"}},
    zip_safe=False,
)
