"""Imports only look down: the layer check of ARCHITECTURE.md, run by `make test`.

Every `import`, `from ... import` and `cimport` of engine/, persist/, tools/, sluice/ and examples/
(.py through `ast`, lazy imports inside functions included; .pyx/.pxd through a regex) is
given the layer of the module it names, and an import that goes up fails the test with the
file, the line and both layers. Two narrower rules sit on top: persist/ uses nothing of the
engine above engine.formats (the rest the engine hands it at run time), and tools/ and
sluice/ use only the public API of `engine` and `persist` (their `__all__`), and the engine
uses persistence only through `persist`'s.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Iterator, Optional

import pytest


def _project_root() -> Path:
    for folder in Path(__file__).resolve().parents:
        if (folder / "engine" / "__init__.py").is_file() and (folder / "persist" / "__init__.py").is_file():
            return folder
    raise RuntimeError("no project root (engine/ and persist/) above " + __file__)


ROOT = _project_root()
CHECKED = ("engine", "persist", "tools", "sluice", "examples")

# Lowest first; a module takes the layer of its longest matching prefix.
LAYERS = ("engine.core", "engine.resp", "engine.formats", "engine.commands", "persist",
          "engine.api", "engine.server", "tools/sluice", "examples")
PREFIX_LAYER = {
    "engine.core": 0, "engine.resp": 1, "engine.formats": 2, "engine.commands": 3, "persist": 4,
    "engine.api": 5, "engine": 5, "engine.server": 6, "tools": 7, "sluice": 7,
    "examples": 8,      # the repository's example pipeline, not installed: nothing may use it
}
CLIENTS = ("tools", "sluice")        # use the public API only
PERSIST_CEILING = PREFIX_LAYER["engine.formats"]



@dataclass(frozen=True)
class Import:
    file: str           # relative to the project root, with /
    line: int
    module: str         # dotted, absolute
    names: tuple        # the names of `from module import names` (empty for `import module`)


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(dotted: str) -> bool:
    base = ROOT.joinpath(*dotted.split("."))
    return base.is_dir() or any(base.with_suffix(ext).is_file() for ext in (".py", ".pyx", ".pxd"))


def _python_imports(path: Path, rel: str) -> Iterator[Import]:
    package = _module_of(path) if path.name == "__init__.py" else _module_of(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), filename=rel)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(rel, node.lineno, alias.name, ())
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([module] if module else []))
            yield Import(rel, node.lineno, module, tuple(alias.name for alias in node.names))


_CYTHON_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+c?import\b|c?import\s+([\w.]+(?:\s*,\s*[\w.]+)*))")
_TRIPLE_QUOTED = re.compile(r'""".*?"""|\'\'\'.*?\'\'\'', re.S)


def _cython_imports(path: Path, rel: str) -> Iterator[Import]:
    # Docstrings blanked (line count kept) so that an example in one is not read as code.
    text = _TRIPLE_QUOTED.sub(lambda m: "\n" * m.group(0).count("\n"), path.read_text())
    for lineno, line in enumerate(text.splitlines(), 1):
        match = _CYTHON_IMPORT.match(line.split("#", 1)[0])
        if match and match.group(1):
            yield Import(rel, lineno, match.group(1), ())
        elif match:
            for module in match.group(2).split(","):
                yield Import(rel, lineno, module.strip(), ())


def project_imports() -> Iterator[Import]:
    """Every import of a project module in the checked folders."""
    for top in CHECKED:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in (".py", ".pyx", ".pxd") or "build" in path.relative_to(ROOT).parts:
                continue
            rel = path.relative_to(ROOT).as_posix()
            reader = _python_imports if path.suffix == ".py" else _cython_imports
            for imp in reader(path, rel):
                if imp.module.split(".")[0] in CHECKED:
                    yield imp


def layer_of(module: str) -> int:
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        layer = PREFIX_LAYER.get(".".join(parts[:end]))
        if layer is not None:
            return layer
    raise KeyError(module)


def _targets(imp: Import) -> list[str]:
    """The modules an import reaches: `from engine import core` reaches engine.core."""
    submodules = [f"{imp.module}.{name}" for name in imp.names if _is_module(f"{imp.module}.{name}")]
    return submodules if submodules and len(submodules) == len(imp.names) else [imp.module]


def public_api(package: str) -> frozenset:
    """A package's public names: the `__all__` of its __init__.py."""
    names = getattr(import_module(package), "__all__", None)
    assert names is not None, f"{package}/__init__.py has no __all__: its public API is undeclared"
    return frozenset(names)


def _home(file: str) -> str:
    return _module_of(ROOT / file)


def violation(imp: Import, apis: dict) -> Optional[str]:
    """Why this import breaks the layering, or None."""
    home = _home(imp.file)
    top = home.split(".")[0]
    where = f"{imp.file}:{imp.line}"
    if top in CLIENTS:
        if imp.module.split(".")[0] == top:
            return None
        if imp.module in apis:
            private = sorted(set(imp.names) - apis[imp.module])
            return None if not private else (
                f"{where}: {home} ({LAYERS[layer_of(home)]}) uses {imp.module}.{', '.join(private)} "
                f"({LAYERS[layer_of(imp.module)]}), not in {imp.module}.__all__")
        return (f"{where}: {home} ({LAYERS[layer_of(home)]}) imports {imp.module} "
                f"({LAYERS[layer_of(imp.module)]}); {top} may use only the public API of "
                f"{' and '.join(apis)} (`from engine import ...`, `from persist import ...`)")
    if top == "engine" and imp.module.split(".")[0] == "persist":
        if imp.module != "persist":
            return (f"{where}: {home} imports {imp.module}; the engine uses persistence "
                    f"through its public API only (`from persist import ...`)")
        private = sorted(set(imp.names) - apis["persist"])
        if private:
            return f"{where}: {home} uses persist.{', '.join(private)}, not in persist.__all__"
    source = layer_of(home)
    for target in _targets(imp):
        reached = layer_of(target)
        if top == "persist" and target.startswith("engine") and reached > PERSIST_CEILING:
            return (f"{where}: {home} (persist) imports {target} ({LAYERS[reached]}); persist "
                    f"may use only engine.core, engine.resp and engine.formats")
        if reached > source:
            return (f"{where}: {home} ({LAYERS[source]}) imports {target} ({LAYERS[reached]}), "
                    f"a higher layer")
    return None


def _violations() -> list[str]:
    apis = {package: public_api(package) for package in ("engine", "persist")}
    return [why for imp in project_imports() if (why := violation(imp, apis)) is not None]


def test_imports_only_look_down() -> None:
    found = _violations()
    assert not found, "imports that go up (see ARCHITECTURE.md):\n" + "\n".join(found)


@pytest.mark.parametrize("package", ["engine", "persist", "sluice"])
def test_public_api_names_exist(package: str) -> None:
    module = import_module(package)
    missing = [name for name in public_api(package) if not hasattr(module, name)]
    assert not missing, f"{package}.__all__ names what {package} does not define: {missing}"
    # A public name that is also a submodule's is shadowed by the module once imported.
    shadowed = [name for name in public_api(package) if _is_module(f"{package}.{name}")]
    assert not shadowed, f"{package}.__all__ names that are also modules of {package}: {shadowed}"


_ENGINE_USE = re.compile(r"\bctx\.engine\b")


def test_commands_see_no_engine() -> None:
    """A command runs on its context's keyspace (ctx.db, ctx.keyspace): it reads no
    Engine (ARCHITECTURE.md, the commands layer knows nothing of persistence or
    clients; FLUSHALL's snapshot is a fact it reports on its context)."""
    found = [str(path.relative_to(ROOT))
             for path in sorted((ROOT / "engine" / "commands").rglob("*"))
             if path.suffix in (".py", ".pyx", ".pxd") and _ENGINE_USE.search(path.read_text())]
    assert not found, f"commands that read ctx.engine: {found}"
