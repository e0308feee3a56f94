"""dbt already imported: the suite's dbt runs through a fork server (``harness/fork_server.py``),
so each ``dbt`` call costs what dbt does, not the 2 s of importing it.

The server runs under dbt's own interpreter (``.venv-dbt``), isolated (``-I``: the caller's
``PYTHONPATH`` does not reach dbt, which needs none), imports dbt's CLI and the PostgreSQL adapter
once, and each call runs dbt's own entry point (``dbt.cli.main.cli``, what the ``dbt`` script
runs) in a child of its own. ``DbtServer.write_client`` writes the ``dbt`` executable that the
warehouse's ``LINEAGE_DBT_BIN`` points at; ``dbt-ol`` beside it is the real one, which calls
``dbt`` from the PATH, so here.
"""

from __future__ import annotations

from pathlib import Path

from harness.fork_server import ForkServer

ROOT = Path(__file__).resolve().parents[1]
DBT_VENV = ROOT / ".venv-dbt"


class DbtServer(ForkServer):
    def __init__(self, home: Path) -> None:
        super().__init__(home, "dbt", DBT_VENV / "bin" / "python", DBT_VENV / "bin" / "dbt", isolated=True)

    def write_client(self) -> Path:
        """Write the ``dbt`` executable (and ``dbt-ol`` beside it); cheap, starts nothing."""
        client = super().write_client()
        dbt_ol = self.bin_dir / "dbt-ol"
        if not dbt_ol.is_symlink():
            dbt_ol.symlink_to(DBT_VENV / "bin" / "dbt-ol")
        return client
