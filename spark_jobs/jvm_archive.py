"""A class data sharing archive of the Spark driver's JVM: its start and first jobs in about
half the time (``python -m spark_jobs.jvm_archive``).

A Spark driver's JVM loads, verifies and links some 15,000 classes before and during its first
jobs; on the 2-core machine a local session took 6.2-6.5 s to start and its first SQL job
3.2-3.7 s more. The JVM can map the classes of an earlier run from an archive instead (HotSpot's
application class data sharing, JDK 13+): 3.4-3.5 s and 1.7-1.8 s. ``ensure`` makes the
archive once, by running a session's typical first jobs (SQL, Arrow batches through Python
workers, a text file read) in a JVM that writes the classes it loaded at its exit;
``spark_jobs.session`` then starts every local driver with it. The archive is named by what
it holds: the Java runtime and PySpark's jars (a new JDK or Spark makes a new one, and until it
exists sessions start without). A file the JVM cannot use (another build, damaged) only
leaves the JVM starting as it would without (``-Xshare:auto``), silently.

The archives are kept in ``LINEAGE_SPARK_ARCHIVE_DIR`` (default: ``.local/spark-archive`` in a
checkout, ``~/.lineage/spark-archive`` for an installed wheel; about 160 MB each). ``make
venv`` (and so ``make demo`` and ``make test``) makes it; an existing deployment runs
``python -m spark_jobs.jvm_archive`` once per worker image.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from lineage.settings import CHECKOUT, IN_CHECKOUT

ENV_DIR = "LINEAGE_SPARK_ARCHIVE_DIR"
_OPTIONS = "-Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"  # an unusable archive: silently none


def archive_dir(environ: Mapping[str, str] = os.environ) -> Path:
    if environ.get(ENV_DIR):
        return Path(environ[ENV_DIR])
    return (CHECKOUT / ".local" if IN_CHECKOUT else Path.home() / ".lineage") / "spark-archive"


def java_binary(environ: Mapping[str, str] = os.environ) -> Path | None:
    """The ``java`` spark-submit runs: ``$JAVA_HOME/bin/java``, else the one on the PATH."""
    home = environ.get("JAVA_HOME")
    found = Path(home) / "bin" / "java" if home else None
    if found is None or not found.exists():
        which = shutil.which("java", path=environ.get("PATH"))
        found = Path(which) if which else None
    return found.resolve() if found is not None else None


def archive_path(environ: Mapping[str, str] = os.environ) -> Path | None:
    """Where the archive of this Java runtime and these PySpark jars is (whether made or not);
    None without a ``java``, or where a path with whitespace would be split apart in the
    driver's options. Named by what the JVM checks before it maps an archive: the runtime, and
    each jar's path, size and modification time (a reinstalled PySpark makes another)."""
    java = java_binary(environ)
    folder = archive_dir(environ)
    if java is None or any(character.isspace() for character in str(folder)):
        return None
    import pyspark

    jars = Path(pyspark.__file__).resolve().parent / "jars"
    identity = hashlib.sha256()
    stat = java.stat()
    identity.update(f"{java}|{stat.st_size}|{stat.st_mtime_ns}|{pyspark.__version__}".encode())
    for jar in sorted(jars.glob("*.jar")) if jars.is_dir() else ():
        jar_stat = jar.stat()
        identity.update(f"|{jar}|{jar_stat.st_size}|{jar_stat.st_mtime_ns}".encode())
    place = hashlib.sha256(str(jars).encode()).hexdigest()[:8]  # one archive per installation at a time
    return folder / f"spark-{pyspark.__version__}-{place}-{identity.hexdigest()[:16]}.jsa"


def driver_options(environ: Mapping[str, str] = os.environ) -> str | None:
    """The driver JVM's options that map the archive, when it has been made; else None."""
    path = archive_path(environ)
    if path is None or not path.is_file():
        return None
    return f"-XX:SharedArchiveFile={path} {_OPTIONS}"


def with_archive(conf: Mapping[str, str], environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """``conf`` with the archive's options added to ``spark.driver.extraJavaOptions`` (kept
    first: the user's own options come after and win, whether from ``conf`` or from
    ``spark-defaults.conf``, which a value passed here would replace); unchanged without an
    archive, or when the user chose an archive, or class sharing, of their own."""
    options = driver_options(environ)
    key = "spark.driver.extraJavaOptions"
    own = conf[key] if key in conf else _spark_defaults(environ).get(key, "")
    if options is None or any(choice in own for choice in ("SharedArchiveFile", "ArchiveClassesAtExit", "-Xshare")):
        return dict(conf)
    return {**conf, key: f"{options} {own}".strip()}


def _spark_defaults(environ: Mapping[str, str]) -> dict[str, str]:
    """The properties of the ``spark-defaults.conf`` the driver's launcher reads
    (``SPARK_CONF_DIR``, else ``$SPARK_HOME/conf``, else PySpark's own ``conf``)."""
    import pyspark

    folder = environ.get("SPARK_CONF_DIR") or os.path.join(
        environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__), "conf")
    path = Path(folder) / "spark-defaults.conf"
    properties: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return properties
    for line in lines:
        found = re.match(r"([^\s=:]+)\s*[=:\s]\s*(.*)$", line.strip())
        if found and not line.lstrip().startswith(("#", "!")):
            properties[found.group(1)] = found.group(2).strip()
    return properties


# What the archive's run does: the classes of a session's start and of its first jobs of each kind
_TRAINING = """
import sys, tempfile
from dataclasses import replace
from lineage.settings import LOCAL_SPARK_MASTER, Settings
from spark_jobs.session import build_session
settings = Settings.from_env()  # the session a job builds, on this machine, writing the archive at its exit
conf = {**settings.spark_conf, "spark.driver.extraJavaOptions": sys.argv[1]}
spark = build_session("lineage-jvm-archive", replace(settings, spark_master=LOCAL_SPARK_MASTER, spark_conf=conf))
spark.sparkContext.setLogLevel("ERROR")
spark.range(1000).selectExpr("id % 7 as k", "id").groupBy("k").count().collect()
def batches(it):
    yield from it
spark.range(1000).mapInArrow(batches, "id long").count()
with tempfile.TemporaryDirectory() as folder:
    with open(folder + "/lines.jsonl", "w") as lines:
        lines.write('{"a": 1}\\n')
    spark.read.text(folder).count()
    spark.read.json(folder).collect()
spark.stop()
"""


def ensure(environ: Mapping[str, str] = os.environ, *, timeout: float = 600) -> Path | None:
    """Make the archive unless it exists; its path, or None when no ``java`` is found. Written
    under another name and renamed once complete, so a concurrent session never maps half a file."""
    path = archive_path(environ)
    if path is None or path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    installation = _installation(path)
    for stale in path.parent.glob("spark-*.jsa"):  # this installation's archives of earlier jars or Java
        if _installation(stale) == installation:
            stale.unlink(missing_ok=True)  # a JVM mapping it keeps its mapping
    with tempfile.TemporaryDirectory(dir=path.parent) as scratch:
        written = Path(scratch) / path.name
        options = f"-XX:ArchiveClassesAtExit={written} -Xlog:cds=off -Xlog:cds+dynamic=off"
        # through a pipe, which the JVM (the Python process's child) holds until it has written
        # the archive and exited: the run ends then, not when the Python process does
        done = subprocess.run([sys.executable, "-c", _TRAINING, options], env=dict(environ), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout, check=False)
        if done.returncode != 0 or not written.is_file():
            log = path.parent / "make-archive.log"
            log.write_bytes(done.stdout)
            raise RuntimeError(f"making the JVM archive failed (exit {done.returncode}); its output: {log}")
        os.replace(written, path)
    return path


def _installation(archive: Path) -> str:
    """The PySpark installation an archive was made for (``spark-<version>-<installation>-<identity>.jsa``)."""
    parts = archive.stem.rsplit("-", 2)
    return parts[1] if len(parts) == 3 else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Make the Spark driver JVM's class data sharing archive (once).")
    parser.parse_args(argv)
    path = archive_path()
    if path is None:
        print(f"jvm archive: no java found (JAVA_HOME, PATH), or whitespace in {archive_dir()}; "
              "sessions start without an archive")
        return 0
    if path.is_file():
        print(f"jvm archive: {path} (made before)")
        return 0
    began = time.perf_counter()
    try:
        ensure()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
        print(f"jvm archive: not made, sessions start without it: {error}", file=sys.stderr)
        return 1
    print(f"jvm archive: made {path} ({path.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
