"""The compaction's listing: settled hour partitions are not listed again (real Spark, real PostgreSQL)."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path

from spark_jobs.compaction import listing
from spark_jobs.compaction.job import run_compaction
from tests.factories import access, write_log
from warehouse.db.connection import connect

END = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


def backdate(folder: Path, seconds: float = 7200) -> None:
    """Make ``folder`` look last changed ``seconds`` ago (old enough to settle)."""
    moment = time.time() - seconds
    os.utime(folder, (moment, moment))


def test_a_settled_partition_is_not_listed_again_until_a_file_lands_in_it(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    settings = settings_for(warehouse_db, LINEAGE_LOOKBACK_HOURS="3")
    write_log(log_root, [access("a")], hour="dt=2026-11-21/hour=04")
    write_log(log_root, [access("b")], hour="dt=2026-11-21/hour=04")
    write_log(log_root, [access("c")], hour="dt=2026-11-21/hour=05")
    old, recent = log_root / "dt=2026-11-21/hour=04", log_root / "dt=2026-11-21/hour=05"
    backdate(old)
    assert run_compaction(None, interval_end=END, settings=settings).files == 3
    with connect(warehouse_db) as conn:
        settled = conn.execute("select partition_path, modified_ms, files from lineage.settled_partitions").fetchall()
    # hour=05 changed less than a minute ago: it is listed again next time, not settled
    assert settled == [(f"file:{old}", os.stat(old).st_mtime_ns // 1_000_000, 2)]

    # a file slipped in behind the folder's back (its time put back): proof the folder is not listed
    sneaked = write_log(log_root, [access("sneaked")], hour="dt=2026-11-21/hour=04")
    os.utime(old, ns=(settled[0][1] * 1_000_000, settled[0][1] * 1_000_000))
    assert run_compaction(None, interval_end=END, settings=settings).files == 0

    write_log(log_root, [access("late")], hour="dt=2026-11-21/hour=04")  # a real write moves the folder's time
    again = run_compaction(None, interval_end=END, settings=settings)
    assert again.files == 2
    with connect(warehouse_db) as conn:
        compacted = {row[0] for row in conn.execute("select file_path from lineage.compacted_files")}
        datasets = sorted(row[0] for row in conn.execute("select dataset from lineage.access_details"))
    assert f"file:{sneaked}" in compacted
    assert datasets == ["a", "b", "c", "late", "sneaked"]
    assert recent.exists()


def test_the_all_listing_finds_a_file_written_into_a_settled_hour_long_gone(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    settings = settings_for(warehouse_db, LINEAGE_LOOKBACK_HOURS="3")
    write_log(log_root, [access("first")], hour="dt=2026-10-01/hour=00")
    backdate(log_root / "dt=2026-10-01/hour=00")
    assert run_compaction(None, interval_end=END, settings=settings, everything=True).files == 1
    assert run_compaction(None, interval_end=END, settings=settings, everything=True).files == 0
    write_log(log_root, [access("second")], hour="dt=2026-10-01/hour=00")
    everything = run_compaction(None, interval_end=END, settings=settings, everything=True)
    assert (everything.files, everything.late_files) == (1, 1)


def test_the_local_listing_names_partitions_and_files_as_hadoop_does(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "a log root"
    write_log(root, [access("x")], hour="dt=2026-11-21/hour=04")
    write_log(root, [access("y"), access("z")], hour="dt=2026-11-21/hour=05", name="two lines.jsonl")
    write_log(root, [access("hidden")], hour="dt=2026-11-21/hour=05", name=".in-progress.jsonl")
    write_log(root, [access("other")], hour="dt=2026-11-21/hour=05", name="notes.txt")
    (root / "dt=2026-11-21/hour=05/x.jsonl.gz").write_bytes(b"")
    days = {"2026-11-21"}

    local = listing._local_partitions(str(root), days)
    hadoop = listing._hadoop_partitions(spark, f"file://{root}", days)
    assert sorted(local, key=lambda item: item.path) == sorted(hadoop, key=lambda item: item.path)
    assert [item.path.rsplit("/", 2)[-2:] for item in sorted(local, key=lambda item: item.path)] == [
        ["dt=2026-11-21", "hour=04"], ["dt=2026-11-21", "hour=05"]]
    files = listing.list_files(spark, local)
    assert files == sorted(listing._hadoop_files(spark, local), key=lambda item: item.path)
    names = [item.path.rsplit("/", 2)[-2:] for item in files]
    assert names[1:] == [["hour=05", "two lines.jsonl"], ["hour=05", "x.jsonl.gz"]]
    assert names[0][0] == "hour=04" and names[0][1].endswith(".jsonl")
    assert [item.size_bytes > 0 for item in files] == [True, True, False]
    assert all(item.path.startswith(f"file:{root}/") for item in files)


def test_the_python_workers_read_local_files_as_sparks_text_source_does(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Local files are read by the Python workers; other URIs by Spark's text source (the same
    contents and names, gzip decompressed, bad UTF-8 bytes kept for the parser to refuse)."""
    import gzip

    import pyarrow as pa

    from spark_jobs.compaction.job import _log_files
    from spark_jobs.compaction.load import read_local_files

    root = tmp_path / "raw events+100%"
    plain = write_log(root, [access("x"), access("y")])
    zipped = plain.with_name("shipped.jsonl.gz")
    zipped.write_bytes(gzip.compress(b'{"z": 1}\n'))
    binary = plain.with_name("binary.jsonl")
    binary.write_bytes(b"\xff\xfe not UTF-8\n{}\n")
    files = listing.list_files(spark, listing._local_partitions(str(root), None))
    assert len(files) == 3

    # Spark names a file by its URI (a space as %20, % as %25), which is decoded: the listing, the
    # manifest and the Python workers name it by its Hadoop path, as a line's source_file does
    by_spark = {row["file_path"]: row["value"].encode("utf-8", errors="surrogateescape")
                for row in _log_files(spark, files, read_local=False).collect()}
    read = read_local_files([pa.RecordBatch.from_pydict({"file_path": [f.path for f in files]})])
    by_python = {path: value for batch in read
                 for path, value in zip(batch.column("file_path").to_pylist(), batch.column("value").to_pylist(),
                                        strict=True)}
    assert set(by_python) == set(by_spark) == {f.path for f in files}
    assert by_python[f"file:{zipped}"] == by_spark[f"file:{zipped}"] == b'{"z": 1}\n'
    assert by_python[f"file:{plain}"] == by_spark[f"file:{plain}"] == plain.read_bytes()
    assert by_python[f"file:{binary}"] == binary.read_bytes()
    assert spark.createDataFrame([(f.path,) for f in files], "file_path string").count() == 3
