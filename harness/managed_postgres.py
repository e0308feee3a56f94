"""PostgreSQL as a managed service offers it, on loopback: a cluster that takes only TLS
connections with a scram-sha-256 password (a self-signed certificate made with openssl when it
starts), and a PgBouncer in transaction pooling mode in front of it (Debian's ``pgbouncer``,
installed by ``scripts/pgbouncer.sh`` when missing). Each on a free port, under a home of its own.

As root (CI) both run as the ``postgres`` system user, as ``scripts/pg.sh`` does: initdb and
PgBouncer refuse to run as root.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg
from psycopg import sql

from harness.ports import free_port

ROOT = Path(__file__).resolve().parents[1]
AS_ROOT = os.geteuid() == 0


def _as_owner(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if AS_ROOT else command


def _owned(path: Path, text: str | None = None) -> Path:
    """``path`` (a folder, or a file holding ``text``, readable by its owner only), owned by the
    user the servers run as."""
    if text is None:
        path.mkdir(parents=True, exist_ok=True)
    else:
        path.write_text(text)
        path.chmod(0o600)
    if AS_ROOT:
        shutil.chown(path, "postgres")
    return path


def _run(command: list[str]) -> None:
    done = subprocess.run(_as_owner(command), cwd="/", capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")


def _server_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name))
    if not found:
        raise RuntimeError("no PostgreSQL server binaries in /usr/lib/postgresql; run scripts/pg.sh start once")
    return found[-1]


def _wait_for_port(port: int, process: subprocess.Popen[bytes] | None, log: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"exited ({process.returncode}):\n{log.read_text(errors='replace')[-2000:]}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout:.0f} s:\n{log.read_text()[-2000:]}")


class TlsCluster:
    """A cluster that refuses plain connections: ``hostssl`` with scram-sha-256 only. Its
    warehouse role ``user`` owns each database of ``databases`` and is no superuser (as on a
    managed service); the superuser ``postgres`` connects only through the local socket."""

    def __init__(self, databases: tuple[str, ...] = ("lineage",), user: str = "lineage") -> None:
        self.home = Path(tempfile.mkdtemp(prefix="lineage-managed-pg-"))
        self.port = free_port()
        self.databases = databases
        self.user = user
        self.password = secrets.token_urlsafe(16)
        self.certificate = self.home / "server.crt"
        self.key = self.home / "server.key"
        self._data = self.home / "data"
        self._socket = self.home / "run"
        self._log = self.home / "postgres.log"

    def start(self) -> TlsCluster:
        """initdb, a self-signed certificate, pg_hba for TLS + scram, start, the role and
        databases; about 3 s."""
        _owned(self.home)
        bin_dir = _server_bin()
        _owned(self._socket)
        _run([str(bin_dir / "initdb"), "-D", str(self._data), "-U", "postgres", "--auth-local=trust",
              "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8"])
        _run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
              "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(self.key), "-out", str(self.certificate)])
        self.key.chmod(0o600)
        _owned(self._data / "pg_hba.conf", "local all all trust\n"
                                           "hostssl all all 127.0.0.1/32 scram-sha-256\n"
                                           "hostnossl all all 0.0.0.0/0 reject\n")
        options = (f"-p {self.port} -k {self._socket} -c listen_addresses=127.0.0.1 -c ssl=on "
                   f"-c ssl_cert_file={self.certificate} -c ssl_key_file={self.key} "
                   "-c password_encryption=scram-sha-256 -c max_connections=60 -c shared_buffers=128MB")
        _run([str(bin_dir / "pg_ctl"), "-D", str(self._data), "-l", str(self._log), "-w", "-t", "60", "-o", options,
              "start"])
        with psycopg.connect(host=str(self._socket), port=self.port, user="postgres", dbname="postgres",
                             autocommit=True) as admin:
            admin.execute(sql.SQL("create role {} login password {}").format(
                sql.Identifier(self.user), sql.Literal(self.password)))
            for database in self.databases:
                admin.execute(sql.SQL("create database {} owner {}").format(
                    sql.Identifier(database), sql.Identifier(self.user)))
        return self

    def url(self, database: str = "lineage", **params: str) -> str:
        """The warehouse role's URL over TLS (``sslmode=require``), plus ``params``."""
        query = "&".join(f"{key}={value}" for key, value in {"sslmode": "require", **params}.items())
        return f"postgresql://{self.user}:{self.password}@127.0.0.1:{self.port}/{database}?{query}"

    def stop(self) -> None:
        """Stop the cluster and delete its home."""
        if self._data.exists():
            subprocess.run(_as_owner([str(_server_bin() / "pg_ctl"), "-D", str(self._data), "-m", "immediate", "-w",
                                      "stop"]), cwd="/", capture_output=True, check=False)
        shutil.rmtree(self.home, ignore_errors=True)


class PgBouncer:
    """PgBouncer in transaction pooling mode in front of ``server``'s databases: clients log in
    with the warehouse role's password over TLS (``sslmode=require``), and PgBouncer reaches
    the server over TLS with scram-sha-256."""

    def __init__(self, server: TlsCluster, pool_size: int = 8) -> None:
        self.server = server
        self.port = free_port()
        self.pool_size = pool_size
        self.home = server.home / f"pgbouncer-{self.port}"
        self._log = self.home / "pgbouncer.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> PgBouncer:
        """Install PgBouncer if need be, write its config, start it, wait until it listens."""
        subprocess.run([str(ROOT / "scripts" / "pgbouncer.sh")], check=True, capture_output=True)
        server = self.server
        _owned(self.home)
        databases = "\n".join(f"{name} = host=127.0.0.1 port={server.port} dbname={name}" for name in server.databases)
        config = f"""[databases]
{databases}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {self.port}
unix_socket_dir =
pool_mode = transaction
default_pool_size = {self.pool_size}
max_client_conn = 200
auth_type = scram-sha-256
auth_file = {self.home / 'userlist.txt'}
client_tls_sslmode = require
client_tls_cert_file = {server.certificate}
client_tls_key_file = {server.key}
server_tls_sslmode = require
logfile = {self._log}
pidfile = {self.home / 'pgbouncer.pid'}
"""
        _owned(self.home / "pgbouncer.ini", config)
        _owned(self.home / "userlist.txt", f'"{server.user}" "{server.password}"\n')
        self.process = subprocess.Popen(_as_owner(["/usr/sbin/pgbouncer", str(self.home / "pgbouncer.ini")]),
                                        cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        _wait_for_port(self.port, self.process, self._log)
        return self

    def url(self, database: str = "lineage", **params: str) -> str:
        """The warehouse role's URL through PgBouncer: TLS, and ``pool_mode=transaction``."""
        query = "&".join(f"{key}={value}" for key, value in
                         {"sslmode": "require", "pool_mode": "transaction", **params}.items())
        return f"postgresql://{self.server.user}:{self.server.password}@127.0.0.1:{self.port}/{database}?{query}"

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
