"""A throwaway PostgreSQL cluster on loopback (``scripts/pg.sh`` under its own home and port),
and scratch databases in it."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Cluster:
    """A cluster whose data lives under ``home`` (as ``scripts/pg.sh`` lays it out), listening
    on ``127.0.0.1:port``, with ``databases`` created when it starts."""

    home: Path
    port: int
    databases: tuple[str, ...] = ("lineage",)
    #: Server options added to pg.sh's (``-c name=value ...``), e.g. a test cluster's no-sync settings.
    options: str = ""

    def _env(self) -> dict[str, str]:
        # A user-supplied warehouse URL would make pg.sh do nothing: this cluster is ours.
        env = {k: v for k, v in os.environ.items() if k != "LINEAGE_DATABASE_URL"}
        env.update(LINEAGE_HOME=str(self.home), LINEAGE_PG_PORT=str(self.port),
                   LINEAGE_PG_DATABASES=" ".join(self.databases), LINEAGE_PG_OPTIONS=self.options)
        return env

    def _pg(self, command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(ROOT / "scripts" / "pg.sh"), command], env=self._env(), capture_output=True,
                              text=True, check=False)

    def start(self) -> None:
        """Initialise (first time), start and create the databases; about 2 s."""
        started = self._pg("start")
        if started.returncode != 0:
            raise RuntimeError(f"could not start PostgreSQL on port {self.port}:\n{started.stdout}{started.stderr}")

    def destroy(self) -> None:
        """Stop the cluster and delete its data."""
        self._pg("destroy")

    def url(self, database: str = "postgres") -> str:
        """The libpq URL of ``database`` as the superuser."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str, template: str | None = None) -> None:
        """Create ``name``, empty or as a clone of ``template``."""
        statement = sql.SQL("create database {}").format(sql.Identifier(name))
        if template:
            statement = sql.SQL("{} template {}").format(statement, sql.Identifier(template))
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(statement)

    def drop_database(self, name: str) -> None:
        """Drop ``name`` if it exists, closing its connections."""
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
