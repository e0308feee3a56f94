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
