"""Builds the Cython extensions (every engine/**/*.pyx and persist/*.pyx).

With SLUICE_NO_EXTENSIONS=1 an install leaves them out: the Makefile installs the
checkout editable that way (dependencies and entry points only) and builds the
extensions in place once, in parallel (`setup.py build_ext --inplace -j 2`)."""
import os

from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = [
    Extension("*", ["engine/core/*.pyx"], extra_compile_args=["-O2"]),
    Extension("*", ["engine/resp/*.pyx"], extra_compile_args=["-O2"]),
    Extension("*", ["engine/formats/*.pyx"], extra_compile_args=["-O2"]),
    Extension("*", ["engine/commands/*.pyx"], extra_compile_args=["-O2"]),
    Extension("*", ["engine/scripting/*.pyx"], extra_compile_args=["-O2"]),
    Extension("*", ["engine/api/*.pyx"], extra_compile_args=["-O2"]),
    Extension("*", ["engine/server/*.pyx"], extra_compile_args=["-O2"]),
    Extension("*", ["persist/*.pyx"], extra_compile_args=["-O2"]),
]

setup(
    ext_modules=[] if os.environ.get("SLUICE_NO_EXTENSIONS") == "1" else cythonize(
        extensions,
        language_level=3,
        compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
    ),
)
