"""The wheel's package list (pyproject.toml) against the checkout: a package folder added under
lineage/, warehouse/, spark_jobs/ or the plugin and not listed would be missing from an install
(tests/install builds and runs the wheel; this catches it in seconds)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from lineage.settings import DAGS_FOLDER, DBT_PROJECT, IN_CHECKOUT

ROOT = Path(__file__).resolve().parents[2]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def package_folder(package: str) -> Path:
    """Where setuptools takes ``package`` from: its own or its parent's package-dir entry."""
    parts = package.split(".")
    for depth in range(len(parts), 0, -1):
        mapped = SETUPTOOLS["package-dir"].get(".".join(parts[:depth]))
        if mapped is not None:
            return ROOT / mapped / Path(*parts[depth:])
    return ROOT / Path(*parts)


def test_packaging_lists_every_package_folder_of_the_checkout() -> None:
    listed = {package_folder(package) for package in SETUPTOOLS["packages"]}
    code = [ROOT / "lineage", ROOT / "warehouse", ROOT / "spark_jobs", ROOT / "plugins" / "lineage_api"]
    found = {init.parent for top in code for init in top.rglob("__init__.py") if "node_modules" not in init.parts}
    assert found - listed == set()
    assert all(folder.is_dir() for folder in listed), sorted(str(f) for f in listed if not f.is_dir())


def test_packaging_ships_the_dags_and_dbt_project_settings_find_in_the_checkout() -> None:
    assert IN_CHECKOUT
    assert (package_folder("lineage_dags"), package_folder("lineage_dbt")) == (DAGS_FOLDER, DBT_PROJECT)
    assert (DAGS_FOLDER / "lineage_compaction.py").is_file() and (DBT_PROJECT / "dbt_project.yml").is_file()


def test_packaging_registers_the_plugin_through_the_airflow_entry_point() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    target = project["entry-points"]["airflow.plugins"]["lineage_warehouse"]
    module, _, name = target.partition(":")
    assert (package_folder(module.rpartition(".")[0]) / f"{module.rpartition('.')[2]}.py").is_file()
    assert f"class {name}(" in (ROOT / "plugins" / "lineage_api" / "plugin.py").read_text()


CLIENT = tomllib.loads((ROOT / "client" / "pyproject.toml").read_text())
# Names whose first Python is later than 3.9: what a declared floor must cover.
VERSIONED = {("datetime", "UTC"): (3, 11), ("tomllib", None): (3, 11), ("typing", "Self"): (3, 11),
             ("asyncio", "timeout"): (3, 11), ("enum", "StrEnum"): (3, 11), ("typing", "TypeGuard"): (3, 10),
             ("typing", "ParamSpec"): (3, 10), ("typing", "TypeAlias"): (3, 10), ("itertools", "pairwise"): (3, 10)}


def client_modules() -> list[Path]:
    return sorted((ROOT / "lineage").rglob("*.py"))


def test_the_client_wheel_packages_the_client_distribution_whole_and_nothing_else() -> None:
    """Every package under lineage/ (and nothing of the server side) is in lineage-client."""
    setuptools = CLIENT["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    found = {".".join(init.parent.relative_to(ROOT).parts) for init in (ROOT / "lineage").rglob("__init__.py")}
    assert listed == found
    assert all(package == "lineage" or package.startswith("lineage.") for package in listed)
    assert "py.typed" in setuptools["package-data"]["lineage"] and (ROOT / "lineage" / "py.typed").is_file()


def test_the_client_declares_the_python_its_code_needs() -> None:
    """``requires-python`` once said >=3.9 while eight modules imported ``datetime.UTC`` (3.11):
    every version-gated name the client imports must be covered by the declared floor."""
    import ast

    declared = CLIENT["project"]["requires-python"]
    floor = tuple(int(part) for part in declared.removeprefix(">=").split(".")[:2])
    needed: dict[tuple[int, int], list[str]] = {}
    for path in client_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [(node.module, alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [(alias.name, None) for alias in node.names]
            elif isinstance(node, ast.Match):
                names = [("match", "statement")]
                needed.setdefault((3, 10), []).append(f"{path.name}: match")
                continue
            else:
                continue
            for name in names:
                version = VERSIONED.get(name)
                if version is not None:
                    needed.setdefault(version, []).append(f"{path.relative_to(ROOT)}: {name}")
    too_new = {version: where for version, where in needed.items() if version > floor}
    assert not too_new, f"requires-python {declared} but the code needs {too_new}"
    assert floor >= (3, 11) and needed.get((3, 11))  # the check sees what the code uses


def test_importing_one_module_of_the_client_loads_no_other() -> None:
    """``lineage/__init__`` exports its public names lazily: ``import lineage.errors`` loaded 18
    modules when it imported the client eagerly."""
    import subprocess
    import sys

    loaded = subprocess.run([sys.executable, "-c", "import sys, lineage.errors; "
                             "print(' '.join(sorted(m for m in sys.modules if m.startswith('lineage'))))"],
                            capture_output=True, text=True, check=True, cwd=ROOT).stdout.split()
    assert loaded == ["lineage", "lineage.errors"]
    public = subprocess.run([sys.executable, "-c", "import lineage; print(lineage.RunContext.__module__, "
                             "sorted(lineage.__all__))"], capture_output=True, text=True, check=True, cwd=ROOT)
    assert public.stdout.startswith("lineage.client.run_context ['FieldInput', 'FieldOperation', 'RunContext'")
