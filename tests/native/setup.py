"""Builds the test probes (tests/native/*.pyx) in place, after the engine's own build:

    python tests/native/setup.py build_ext --inplace

The probes cimport the engine's .pxd declarations to drive its C structures from tests.
They have their own setup script, not the project's setup.py, so that a wheel or an
editable install never builds or ships them; `make test` runs this one.
"""
import os
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent

os.chdir(TESTS)     # the probes are the package `native`, importable from tests/
setup(
    name="sluice-test-probes",
    ext_modules=cythonize(
        [Extension("native.*", ["native/*.pyx"], extra_compile_args=["-O2"])],
        include_path=[str(ROOT)],
        language_level=3,
        compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
    ),
    options={"build": {"build_base": str(ROOT / "build" / "probes")}},
)
