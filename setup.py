"""Builds the Cython extensions (every engine/**/*.pyx and persist/*.pyx)."""
from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = [
    Extension("*", ["engine/core/*.pyx"], extra_compile_args=["-O2"]),
    Extension("*", ["engine/resp/*.pyx"], extra_compile_args=["-O2"]),
    Extension("*", ["engine/commands/*.pyx"], extra_compile_args=["-O2"]),
    Extension("*", ["engine/scripting/*.pyx"], extra_compile_args=["-O2"]),
    Extension("*", ["engine/api/*.pyx"], extra_compile_args=["-O2"]),
    Extension("*", ["engine/server/*.pyx"], extra_compile_args=["-O2"]),
    Extension("*", ["persist/*.pyx"], extra_compile_args=["-O2"]),
]

setup(
    ext_modules=cythonize(
        extensions,
        language_level=3,
        compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
    ),
)
