"""Automatic lineage from PySpark: ``track`` records a job's run, its dataset accesses and its
column-level field operations from the plans Spark builds; no jar, no hand-written calls.

    from lineage.spark.capture import track

    with track(spark, namespace="sales", application="nightly", program="orders"):
        orders = spark.read.parquet("s3a://lake/orders")
        orders.groupBy("customer").agg(F.sum("amount").alias("total")).write.parquet("s3a://lake/totals")

A Python ``QueryExecutionListener`` (py4j callbacks) sees each successful write: its analyzed
plan's JSON (written by the JVM into a temporary file) gives the column lineage
(``lineage.spark.plan_analysis``, pure Python); a few py4j calls name the datasets read and written
(``lineage.naming.identity``: paths and tables by the OpenLineage naming spec). Each write becomes,
in the run: a read of each relation, the write of the target, and one field-operations record
for the target, step by step as the code computed it (``lineage.spark.operations``).

Capture never breaks the job: anything it cannot do is logged as a warning; a plan node it does
not know still gives lineage (kept as a note on the record). Spark Connect sessions have no
plan access: ``track`` says so at once.
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import shutil
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from types import TracebackType
from typing import Any

import orjson

from lineage.client.run_context import RunContext
from lineage.errors import InvalidEntityError
from lineage.gc_paused import paused_collection
from lineage.naming.identity import (
    DatasetIdentity,
    NamespaceMap,
    jdbc_identity,
    job_program,
    path_dataset_identity,
    table_identity,
)
from lineage.settings import Settings
from lineage.spark.operations import captured_operations
from lineage.spark.plan_analysis import WRITE_COMMANDS, plan_lineage
from lineage.spark.plan_tree import child_arrays

log = logging.getLogger(__name__)
DRAIN_MS = 60_000  # how long stop waits for Spark to report the last actions
MAX_NOTES = 100  # warnings kept with one run; more are only logged
NESTED_WRITE = "file source write"  # the file write inside a CTAS / saveAsTable, captured at its command


class TrackError(RuntimeError):
    """``track`` cannot capture this session (Spark Connect)."""


class Tracker:
    """One tracked run of a Spark session; a context manager, or ended when the session stops."""

    def __init__(self, spark: Any, run: RunContext, namespaces: NamespaceMap) -> None:
        self.spark = spark
        self.run = run
        self.namespaces = namespaces
        self.writes = 0
        self.warnings: list[str] = []
        self.capture_seconds: list[float] = []  # the driver time each captured write cost
        self._listener: _Listener | None = None

    def start(self) -> Tracker:
        import pyspark.java_gateway

        self.run.start()
        facets, parent = launch_context(os.environ, self.namespaces, _application_details(self.spark))
        self.run.record_captured("run_facets", {"run": facets})
        if parent:
            self.run.record_captured("run_parent", parent)
        start_callbacks: Any = pyspark.java_gateway.ensure_callback_server_started  # untyped in PySpark
        start_callbacks(self.spark.sparkContext._gateway)
        self._queue: queue.Queue[tuple[str, Any] | None] = queue.Queue()
        self._worker = threading.Thread(target=self._work, name="lineage-capture", daemon=True)
        self._worker.start()
        self._json = PlanJson(self.spark.sparkContext._jvm)
        self._listener = _Listener(self)
        self.spark._jsparkSession.listenerManager().register(self._listener)
        return self

    def enqueue(self, func_name: str, execution: Any) -> None:
        """What the listener does: hand the action to the capture thread and return at once.
        (py4j calls made inside a callback cost a round trip of milliseconds each; from a thread
        of our own they cost a fraction of one, and Spark's listener bus is never held up.)"""
        self._queue.put((func_name, execution))

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            try:
                self.captured(*item)
            finally:
                self._queue.task_done()
        self._queue.task_done()

    def stop(self, status: str = "completed") -> None:
        """Stop capturing and end the run (once). Spark tells listeners on its listener bus, after
        the action returned: the bus is drained first, so the last write is in the run."""
        if self._listener is not None:
            try:
                self.spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(DRAIN_MS)
            except Exception as error:
                log.warning("lineage: the last writes may be missing from the run: %s", error)
            self._listener.active = False
            self._queue.put(None)
            self._worker.join(timeout=DRAIN_MS / 1000)
            if not self._worker.is_alive():
                self._json.close()
            try:
                self.spark._jsparkSession.listenerManager().unregister(self._listener)
            except Exception as error:  # the session may be gone already
                log.debug("lineage: unregistering the listener: %s", error)
            self._listener = None
        if self.run.started_at is not None and self.run.ended_at is None:
            self.run.end(status)

    def __enter__(self) -> Tracker:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            self.stop("completed" if exc_type is None else "failed")
        except Exception:
            if exc_type is None:
                raise
            log.exception("lineage: could not end run %s", self.run.run_id)  # the job's error wins

    # what the listener calls

    def captured(self, func_name: str, execution: Any) -> None:
        """Record one successful action (never raises: a failure is a warning): a write with its
        column lineage, any other action with the datasets it read."""
        began = time.perf_counter()
        try:
            if func_name == NESTED_WRITE:
                return
            with paused_collection():  # a capture's objects die with it (lineage.gc_paused)
                self._capture(func_name, execution, began)
        except Exception as error:
            self.note(f"lineage: capture of a {func_name!r} action failed: {type(error).__name__}: {error}")

    def _capture(self, func_name: str, execution: Any, began: float) -> None:
        # the analyzed plan: the steps as the code wrote them (the optimizer merges selects into
        # one, and a cached frame's plan shows what it read only there)
        plan = execution.analyzed()
        nodes: list[dict[str, Any]] | None = None
        if func_name in _WRITE_ACTIONS or str(plan.nodeName()) == "Union":  # most likely a write (or a
            # multi-insert's union of writes): its JSON names the command
            try:
                nodes = orjson.loads(self._json.of(plan))
            except Exception as error:  # a command that is no write may not serialize: ask its name
                log.debug("lineage: the JSON of a %r action: %s", func_name, error)
        command = str(nodes[0].get("class", "")).rsplit(".", 1)[-1] if nodes else str(plan.nodeName())
        if command in WRITE_COMMANDS and func_name not in _WRITE_ACTIONS:
            return  # ``spark.sql("INSERT ...").collect()``: the command's result, its write already captured
        if command == "Union" and nodes is not None and _all_writes(nodes):
            # Hive-style multi-insert (FROM src INSERT INTO a SELECT ... INSERT INTO b SELECT ...):
            # one action whose plan is a union of insert commands, each a write of its own
            children = plan.children()
            for index, child_nodes in enumerate(child_arrays(nodes)):
                self._record_write(children.apply(index), child_nodes)
            self.capture_seconds.append(time.perf_counter() - began)
            return
        if command not in WRITE_COMMANDS:
            self._record_reads(plan)
            return
        self._record_write(plan, orjson.loads(self._json.of(plan)) if nodes is None else nodes)
        self.capture_seconds.append(time.perf_counter() - began)

    def note(self, message: str) -> None:
        """A warning about the capture: logged, listed in ``warnings``, and kept with the run in the
        warehouse (the run page and the run API show it)."""
        self.warnings.append(message)
        log.warning("%s", message)
        if len(self.warnings) > MAX_NOTES:
            return
        try:
            self.run.record_captured("run_facets", {"warnings": [message[:1024]]}, once=True)
        except Exception as error:  # the note is not worth failing anything for
            log.debug("lineage: keeping the note with the run: %s", error)

    def _record_reads(self, plan: Any) -> None:
        """An action that writes nothing (``collect``, ``count``, ``show``...) still reads: each
        table, path or JDBC table it reads is a read of the run (recorded once). In-memory data
        and cached frames are left out."""
        for leaf in _leaves(plan):
            kind = str(leaf.getClass().getSimpleName())
            if kind in _NAMED_BY_THE_JVM:
                for identity in leaf_identities(leaf, kind, 0, self.run.run["program"]):
                    if identity.namespace != "memory":
                        self._access(identity, "read")

    def _record_write(self, plan: Any, nodes: list[dict[str, Any]]) -> None:
        lineage = plan_lineage(nodes)
        program = self.run.run["program"]
        named_by_the_jvm = [position for position, leaf in lineage.leaves.items()
                            if leaf.kind in _NAMED_BY_THE_JVM and not leaf.table]
        jvm_leaves = _leaves_at(_query_of(plan), named_by_the_jvm) if named_by_the_jvm else {}
        named = {position: leaf_identities(jvm_leaves.get(position), leaf.kind, position, program, leaf.table,
                                           leaf.tableless)
                 for position, leaf in lineage.leaves.items()}
        leaves = {position: tuple(found) for position, found in named.items()}
        target = target_identity(plan, lineage.command, lineage.target_table, lineage.target_tableless)
        if target is None:
            raise ValueError(f"no dataset identity for the target of {lineage.command}")
        read = {identity for found in named.values() for identity in found}
        for identity in sorted(read, key=lambda item: item.render()):
            self._access(identity, "read")
        self._access(target, "write")
        record = captured_operations(lineage, leaves, target, self.namespaces)
        if lineage.unsupported:
            self.note(f"lineage: plan nodes read generically (each new column depends on every column they "
                      f"reference) for {target.render()}: {', '.join(lineage.unsupported)}")
        if record is not None:
            self.run.record_captured("field_operations", record)
        self.writes += 1

    def _access(self, identity: DatasetIdentity, access: str) -> None:
        self.run.record_captured("dataset_access", {"dataset": {
            **self.namespaces.dataset_ref(identity), "type": "dataset"}, "access": access}, once=True)


class PlanJson:
    """A plan's JSON (what Spark's ``toJSON`` gives), passed through a file.

    A py4j answer longer than about 8 KiB costs 44 ms whatever its length beyond (measured: 0.2 ms
    for 8,000 characters, 44 ms for 8,200 or 200,000): the JVM writes it in 8 KiB buffers and
    TCP's delayed acknowledgement holds the rest, and an analyzed plan's JSON is often 100 KB. So
    the JVM writes the JSON (Spark's own ``jsonValue`` through json4s' Jackson mapper: the same
    text) into a file of a private temporary folder that Python reads: the driver's JVM and Python
    share a machine. The folder and the JVM's handle on its file are made once (each py4j call is
    a round trip, slower still while the job keeps the driver busy); the file is removed once
    read, the folder by ``close``. A plan without ``jsonValue`` (another Spark's internals) gives
    ``toJSON`` in one answer, that plan only; when the file cannot be written or read, every
    later plan does.
    """

    def __init__(self, jvm: Any) -> None:
        self.jvm = jvm
        self._mapper: Any | None = None
        self._folder: str | None = None
        self._target: Any | None = None  # the JVM's java.io.File of the folder's one file
        self._file = True

    def of(self, plan: Any) -> str:
        if self._file:
            try:
                self._prepare()
            except Exception as error:  # keep capturing, the slower way
                log.debug("lineage: plan JSON through a file unavailable (%s); using toJSON", error)
                self._file = False
        if not self._file:
            return str(plan.toJSON())
        try:
            value = plan.jsonValue()
        except Exception:  # this plan only (another Spark's internals, a command that does not serialize)
            return str(plan.toJSON())
        path = os.path.join(self._folder or "", "plan.json")
        try:
            assert self._mapper is not None
            self._mapper.writeValue(self._target, value)
            with open(path, encoding="utf-8") as written:
                return written.read()
        except Exception as error:
            log.debug("lineage: plan JSON through a file failed (%s); using toJSON", error)
            self._file = False
            return str(plan.toJSON())
        finally:  # no plan stays on disk between writes
            if os.path.exists(path):
                os.unlink(path)

    def close(self) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = self._target = None

    def _prepare(self) -> None:
        """The mapper, the private folder and the JVM's handle on its file, made once."""
        if self._target is None or self._folder is None or not os.path.isdir(self._folder):
            self.close()
            self._mapper = getattr(getattr(self.jvm.org.json4s.jackson, "JsonMethods$"), "MODULE$").mapper()
            self._folder = tempfile.mkdtemp(prefix="lineage-plan-")
            self._target = self.jvm.java.io.File(os.path.join(self._folder, "plan.json"))


class _Listener:
    """A ``QueryExecutionListener`` implemented in Python (py4j calls it back)."""

    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker
        self.active = True  # off once the run ends, whether or not Spark let go of the listener

    def onSuccess(self, funcName: str, qe: Any, durationNs: int) -> None:
        if self.active:
            self.tracker.enqueue(funcName, qe)

    def onFailure(self, funcName: str, qe: Any, exception: Any) -> None:
        return None

    class Java:
        implements = ["org.apache.spark.sql.util.QueryExecutionListener"]


def track(spark: Any, *, namespace: str = "default", application: str | None = None, program: str | None = None,
          program_type: str = "spark", run_id: str | None = None, log_root: str | None = None) -> Tracker:
    """Capture the lineage of ``spark``'s writes as one run. Use it as a context manager (the run
    ends ``completed``, or ``failed`` when the block raises), or call it once: the run then ends
    when the session stops (``spark.stop()``) or the program exits."""
    if not hasattr(spark, "_jsparkSession") or getattr(spark, "is_remote", lambda: False)():
        raise TrackError("lineage.spark.track needs a classic Spark session: a Spark Connect session has no "
                         "access to the plans it runs; record lineage with lineage.RunContext instead")
    settings = Settings.from_env()
    app = spark.sparkContext.appName
    run = RunContext(namespace, application or app, program_type, program or app, run_id, log_root=log_root)
    tracker = Tracker(spark, run, replace(settings.namespace_map, fallback=namespace)).start()
    _end_with_session(spark, tracker)
    return tracker


def _end_with_session(spark: Any, tracker: Tracker) -> None:
    """End the run when the session stops or the interpreter exits, if still open."""
    original = spark.stop

    def stop_and_end(*args: Any, **kwargs: Any) -> Any:
        tracker.stop()
        return original(*args, **kwargs)

    spark.stop = stop_and_end
    atexit.register(tracker.stop)


# -- where the job runs ---------------------------------------------------------------------

AIRFLOW_CONTEXT = {"dag_id": "AIRFLOW_CTX_DAG_ID", "task_id": "AIRFLOW_CTX_TASK_ID",
                   "dag_run_id": "AIRFLOW_CTX_DAG_RUN_ID", "try_number": "AIRFLOW_CTX_TRY_NUMBER",
                   "logical_date": "AIRFLOW_CTX_LOGICAL_DATE"}


def launch_context(environ: Mapping[str, str], namespaces: NamespaceMap, application: Mapping[str, str]
                   ) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The run's facets (the Spark application; the Airflow task instance that launched the job,
    from the ``AIRFLOW_CTX_*`` variables Airflow sets for a task's processes) and its parent run
    (OpenLineage's ``OPENLINEAGE_PARENT_ID`` / ``OPENLINEAGE_ROOT_PARENT_ID``,
    ``{namespace}/{job}/{run id}``, which the OpenLineage provider's ``lineage_parent_id`` macro
    gives a task), or None."""
    facets: dict[str, Any] = {"spark_applicationDetails": dict(application)}
    task = {key: environ[name] for key, name in AIRFLOW_CONTEXT.items() if environ.get(name)}
    if task:
        facets["airflow_task"] = task
    parent = _run_ref(environ.get("OPENLINEAGE_PARENT_ID"), namespaces)
    if parent is None:
        return facets, None
    links = {"parent": parent}
    root = _run_ref(environ.get("OPENLINEAGE_ROOT_PARENT_ID"), namespaces)
    if root is not None:
        links["root"] = root
    return facets, links


def _run_ref(value: str | None, namespaces: NamespaceMap) -> dict[str, str] | None:
    """``{namespace}/{job}/{run id}`` as a run of the job's program; None when absent or malformed."""
    if not value or value.count("/") < 2:
        return None
    namespace, rest = value.split("/", 1)
    job, run_id = rest.rsplit("/", 1)
    try:
        program = job_program(namespace, job, namespaces)
    except InvalidEntityError:
        log.warning("lineage: OPENLINEAGE_PARENT_ID %r names no job; no parent recorded", value[:200])
        return None
    if not run_id:
        return None
    return {"namespace": program.namespace, "application": program.application, "program_type": program.program_type,
            "program": program.program, "run_id": run_id}


def _application_details(spark: Any) -> dict[str, str]:
    context = spark.sparkContext
    return {"applicationId": str(context.applicationId), "appName": str(context.appName),
            "master": str(context.master), "sparkVersion": str(spark.version)}


# -- naming datasets through py4j ----------------------------------------------------------


def _seq(seq: Any) -> list[Any]:
    return [seq.apply(index) for index in range(seq.size())]


def _option(option: Any) -> Any | None:
    return option.get() if option is not None and option.isDefined() else None


def _leaves(plan: Any) -> list[Any]:
    """The relations ``plan`` reads: its leaves, then its subqueries' (``plan_tree.subquery_plans``'s order)."""
    found = _seq(plan.collectLeaves())
    for subquery in _seq(plan.subqueriesAll()):
        found.extend(_seq(subquery.collectLeaves()))
    return found


def _leaves_at(plan: Any, positions: list[int]) -> dict[int, Any]:
    """The leaves at ``positions`` in ``_leaves``' order, asking the JVM for no more than needed
    (each py4j call is a round trip, slow while the job keeps the driver busy)."""
    found = plan.collectLeaves()
    size = found.size()
    leaves = {position: found.apply(position) for position in positions if position < size}
    if any(position >= size for position in positions):
        deeper = _leaves(plan)
        leaves.update({position: deeper[position] for position in positions if size <= position < len(deeper)})
    return leaves


def _all_writes(nodes: list[dict[str, Any]]) -> bool:
    """Whether every child of the plan's root is a write command (a multi-insert's union)."""
    arrays = child_arrays(nodes)
    return bool(arrays) and all(str(array[0].get("class", "")).rsplit(".", 1)[-1] in WRITE_COMMANDS
                                for array in arrays)


def _query_of(plan: Any) -> Any:
    """The query a write command writes (its ``query``, else its child)."""
    try:
        return plan.query()
    except Exception:
        return plan.children().head()


def _table(identifier: Any) -> DatasetIdentity:
    return table_identity(_option(identifier.catalog()), _option(identifier.database()), identifier.table())


# the actions a write reports (DataFrameWriter, DataFrameWriterV2, SQL commands): their plan's JSON
# is read first and names the command; other actions are asked for their command's name
_WRITE_ACTIONS = {"save", "insertInto", "saveAsTable", "command", "append", "overwrite", "overwritePartitions",
                  "create", "replace", "createOrReplace"}
_NAMED_BY_THE_JVM = {"LogicalRelation", "HiveTableRelation", "DataSourceV2Relation", "DataSourceV2ScanRelation"}


def leaf_identity(leaf: Any, kind: str, position: int, program: str,
                  json_table: tuple[str, ...] | None = None, tableless: bool = False) -> DatasetIdentity:
    """The dataset a plan leaf of class ``kind`` reads (the first, when it reads several)."""
    return leaf_identities(leaf, kind, position, program, json_table, tableless)[0]


def leaf_identities(leaf: Any, kind: str, position: int, program: str,
                    json_table: tuple[str, ...] | None = None, tableless: bool = False) -> list[DatasetIdentity]:
    """The datasets a plan leaf of class ``kind`` reads: a catalog table (from the plan's JSON
    when it names one), a JDBC table, in-memory data, or the datasets of the paths it reads (a
    partition folder, a glob over them or a list of them read one dataset:
    ``lineage.naming.identity.path_dataset_identity``; folders of different datasets read each). Every
    py4j call is a round trip to the driver's JVM: this makes as few as it can (four for a path
    the JSON shows has no table: ``tableless``)."""
    if json_table:
        return [_json_table(json_table)]
    try:
        if kind == "LogicalRelation":
            table = None if tableless else _option(leaf.catalogTable())
            if table is not None:
                return [_table(table.identifier())]
            relation = leaf.relation()
            try:
                paths = str(relation.location().rootPaths().mkString("\n"))
            except Exception:  # not a HadoopFsRelation
                options = relation.jdbcOptions()
                return [jdbc_identity(options.url(), options.tableOrQuery())]
            if paths:
                return list(dict.fromkeys(path_dataset_identity(path) for path in paths.split("\n")))
        if kind == "HiveTableRelation":
            return [_table(leaf.tableMeta().identifier())]
        if kind in ("DataSourceV2Relation", "DataSourceV2ScanRelation"):
            relation = leaf if kind == "DataSourceV2Relation" else leaf.relation()
            catalog = _option(relation.catalog())
            return [DatasetIdentity(str(catalog.name()) if catalog is not None else "v2", str(relation.table().name()))]
    except Exception as error:
        log.debug("lineage: naming a %s leaf: %s", kind, error)
    return [DatasetIdentity("memory", f"{program}/{kind[:1].lower()}{kind[1:]}_{position}")]


def _json_table(parts: tuple[str, ...]) -> DatasetIdentity:
    *qualifiers, table = parts
    catalog, database = ([None, None, *qualifiers])[-2:]
    return table_identity(catalog, database, table)


def target_identity(plan: Any, kind: str, json_table: tuple[str, ...] | None,
                    tableless: bool = False) -> DatasetIdentity | None:
    """The dataset a write command of class ``kind`` writes (``tableless``: the JSON shows it
    writes no catalog table)."""
    if kind == "InsertIntoHadoopFsRelationCommand":
        if json_table:
            return _json_table(json_table)
        table = None if tableless else _option(plan.catalogTable())
        return _table(table.identifier()) if table is not None else path_dataset_identity(
            str(plan.outputPath().toString()))
    if kind in ("AppendData", "OverwriteByExpression", "OverwritePartitionsDynamic"):
        relation = plan.table()
        return leaf_identity(relation, str(relation.nodeName()), 0, "")
    if kind == "SaveIntoDataSourceCommand":
        options = plan.options()
        url, table, path = (_option(options.get(key)) for key in ("url", "dbtable", "path"))
        if url and table:
            return jdbc_identity(str(url), str(table))
        if path:
            return path_dataset_identity(str(path))
    return _json_table(json_table) if json_table else None
