"""Builds the Cython extensions (every engine/**/*.pyx and persist/*.pyx).

With SLUICE_NO_EXTENSIONS=1 an install leaves them out: the Makefile installs the
checkout editable that way (dependencies and entry points only) and builds the
extensions in place once, in parallel (`setup.py build_ext --inplace -j 2`).

Every build, a wheel's included, cythonizes and compiles on all cores, without debug
information (-g0) and with the linked modules stripped (-s): a wheel carries only what
runs. The generated .c files stay out of the sdist and the wheel (MANIFEST.in,
pyproject.toml's exclude-package-data): the sdist ships the .pyx sources, so making
one cythonizes nothing."""
import os
import sys

from Cython.Build import cythonize
from setuptools import Extension, setup

CORES = os.cpu_count() or 1
FOLDERS = ("engine/core", "engine/resp", "engine/formats", "engine/commands", "engine/scripting",
           "engine/api", "engine/api/acl", "engine/server", "persist")

extensions = [Extension("*", [f"{folder}/*.pyx"], extra_compile_args=["-O2", "-g0"], extra_link_args=["-s"])
              for folder in FOLDERS]

BUILDS = os.environ.get("SLUICE_NO_EXTENSIONS") != "1" and "sdist" not in sys.argv

setup(
    ext_modules=[] if not BUILDS else cythonize(
        extensions,
        language_level=3,
        nthreads=CORES,
        compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
    ),
    options={"build_ext": {"parallel": CORES}},
)
