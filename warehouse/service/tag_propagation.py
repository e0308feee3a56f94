"""Tags that follow the data (pure): how far a tag on a field travels along field lineage.

A tag assigned to a field (``users.ssn`` tagged ``PII``) reaches the fields its values flow
into, as far as its **policy** lets it: each edge of field lineage (a source field to a written
field, with its transformation kind: ``lineage.field_edges``) carries the tag or stops it.

- DIRECT IDENTITY and TRANSFORMATION carry it by default; AGGREGATION stops it unless the policy
  lists it; a masking transformation (a hash, a mask) stops it unless ``masked=carry``;
- INDIRECT never carries it: a field used as a join key, a filter or a condition decides which
  rows or values another field gets, not what that field holds;
- ``levels`` bounds how many edges away (default: no bound within the window).

Where the tag does not go is kept too (``Stop``): an explanation names the edge that stopped it
and why ("masked by sha2 in spark Crm.Contacts").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from lineage.errors import InvalidMetadataError
from warehouse.service.authorization import HIDDEN

DIRECT_SUBTYPES = ("IDENTITY", "TRANSFORMATION", "AGGREGATION")
DEFAULT_CARRIES = frozenset({"IDENTITY", "TRANSFORMATION"})
MAX_LEVELS = 100


@dataclass(frozen=True, slots=True, order=True)
class FieldNode:
    """A field of a dataset."""

    namespace: str
    dataset_type: str
    dataset: str
    field: str

    def label(self) -> str:
        return f"{self.namespace}:{self.dataset}.{self.field}"


@dataclass(frozen=True, slots=True, order=True)
class ProgramName:
    namespace: str
    application: str
    program_type: str
    program: str

    def label(self) -> str:
        return f"{self.program_type} {self.application}.{self.program}"


@dataclass(frozen=True, slots=True)
class Edge:
    """One way values of ``source`` reach ``target``: in the runs ``runs`` of ``program``, through
    the transform operations ``operations``, with the composed kind."""

    source: FieldNode
    target: FieldNode
    kind: str  # DIRECT or INDIRECT
    subtype: str
    masking: bool
    operations: tuple[str, ...]
    program: ProgramName
    runs: tuple[str, ...]  # its latest runs (at most 20)
    first_seen: int  # epoch seconds
    last_seen: int
    run_count: int = 0  # all its runs in the window


@dataclass(frozen=True, slots=True)
class Policy:
    """Which DIRECT subtypes carry a tag, whether masked values do, and how many edges away."""

    carries: frozenset[str] = DEFAULT_CARRIES
    masked_carries: bool = False
    levels: int | None = None

    def stop_reason(self, edge: Edge) -> str | None:
        """Why ``edge`` does not carry the tag (None when it does)."""
        how = f" by {', '.join(edge.operations)}" if edge.operations else ""
        where = f" in {edge.program.label()}"
        if edge.kind != "DIRECT":
            return f"used as {edge.subtype or 'INDIRECT'} (INDIRECT){how}{where}: no value flows"
        if edge.masking and not self.masked_carries:
            return f"masked{how}{where}"
        if edge.subtype not in self.carries:
            verb = "aggregated" if edge.subtype == "AGGREGATION" else f"{edge.subtype.lower()} (not carried)"
            return f"{verb}{how}{where}"
        return None

    def render(self) -> str:
        levels = "" if self.levels is None else f"; levels={self.levels}"
        return (f"carries={','.join(sorted(self.carries))}; masked={'carry' if self.masked_carries else 'stop'}"
                f"{levels}")


def parse_policy(text: str) -> Policy:
    """A policy from its text: ``default``, or ``carries=IDENTITY,TRANSFORMATION[,AGGREGATION];
    masked=stop|carry; levels=N`` (each part optional, in any order). InvalidMetadataError names
    what is wrong."""
    value = text.strip()
    if value in ("", "default"):
        return Policy()
    carries, masked, levels = DEFAULT_CARRIES, False, None
    for part in (piece.strip() for piece in value.split(";")):
        if not part:
            continue
        key, sep, setting = (item.strip() for item in part.partition("="))
        if not sep:
            raise InvalidMetadataError(f"tag policy part {part[:40]!r} is not key=value (carries, masked, levels)")
        if key == "carries":
            named = frozenset(item.strip().upper() for item in setting.split(",") if item.strip())
            wrong = sorted(named - set(DIRECT_SUBTYPES))
            if wrong:
                raise InvalidMetadataError(f"tag policy carries {', '.join(wrong)}: only DIRECT subtypes "
                                           f"({', '.join(DIRECT_SUBTYPES)}) carry a tag; INDIRECT never does")
            carries = named
        elif key == "masked":
            if setting not in ("stop", "carry"):
                raise InvalidMetadataError(f"tag policy masked={setting[:20]!r}: stop or carry")
            masked = setting == "carry"
        elif key == "levels":
            if not setting.isdigit() or not 1 <= int(setting) <= MAX_LEVELS:
                raise InvalidMetadataError(f"tag policy levels={setting[:20]!r}: a whole number from 1 to {MAX_LEVELS}")
            levels = int(setting)
        else:
            raise InvalidMetadataError(f"tag policy key {key[:40]!r} is not one of carries, masked, levels")
    return Policy(carries, masked, levels)


@dataclass(frozen=True, slots=True)
class Reached:
    """A field the tag reached from ``origin`` (a field it is assigned to), along ``path``."""

    tag: str
    field: FieldNode
    origin: FieldNode
    path: tuple[Edge, ...]


@dataclass(frozen=True, slots=True)
class Stop:
    """An edge the tag, having reached its source, did not cross, and why."""

    tag: str
    edge: Edge
    origin: FieldNode
    reason: str


@dataclass
class Propagation:
    reached: list[Reached] = field(default_factory=list)
    stops: list[Stop] = field(default_factory=list)
    truncated: bool = False  # its policy's levels stopped it where it would have gone on


def propagate(tag: str, origins: Iterable[FieldNode], policy: Policy,
              edges_from: Callable[[Sequence[FieldNode]], Iterable[Edge]]) -> Propagation:
    """Walk forward from the fields ``tag`` is assigned to, level by level (``edges_from`` gives
    the edges out of a level's fields): each field reached once per origin, by its shortest path
    (first found, in a stable order), each stop once per edge and origin."""
    found = Propagation()
    paths: dict[tuple[FieldNode, FieldNode], tuple[Edge, ...]] = {(origin, origin): () for origin in origins}
    frontier = sorted({origin for origin, _ in paths})
    by_field: dict[FieldNode, list[FieldNode]] = {origin: [origin] for origin in frontier}  # field -> its origins
    level = 0
    stopped: set[tuple[FieldNode, Edge]] = set()
    while frontier:
        beyond = policy.levels is not None and level >= policy.levels
        level += 1
        next_level: dict[FieldNode, list[FieldNode]] = {}
        for edge in sorted(edges_from(frontier), key=_edge_order):
            for origin in by_field.get(edge.source, ()):
                reason = policy.stop_reason(edge)
                if reason is None and beyond and (origin, edge.target) not in paths:
                    reason = f"beyond levels={policy.levels} of its policy"  # it would have carried the tag on
                    found.truncated = True
                if reason is not None:
                    if (origin, edge) not in stopped:
                        stopped.add((origin, edge))
                        found.stops.append(Stop(tag, edge, origin, reason))
                    continue
                if (origin, edge.target) in paths:
                    continue
                path = (*paths[(origin, edge.source)], edge)
                paths[(origin, edge.target)] = path
                found.reached.append(Reached(tag, edge.target, origin, path))
                next_level.setdefault(edge.target, []).append(origin)
        frontier = [] if beyond else sorted(next_level)
        by_field = next_level
    return found


def _edge_order(edge: Edge) -> tuple[object, ...]:
    return edge.source, edge.target, edge.kind, edge.subtype, edge.masking, edge.program, edge.operations


def policies_from(setting: Mapping[str, str], errors: list[str] | None = None) -> dict[str, Policy]:
    """The tag -> policy map of ``LINEAGE_TAG_POLICIES`` (tag -> policy text). A policy that does
    not parse leaves its tag out (it propagates nowhere) and its reason goes to ``errors``: one
    mistyped policy must not stop every other tag, nor the DAG."""
    policies = {}
    for tag, text in setting.items():
        try:
            policies[tag] = parse_policy(text)
        except InvalidMetadataError as error:
            if errors is not None:
                errors.append(f"LINEAGE_TAG_POLICIES, tag {tag!r}: {error}")
    return policies


def edge_view(edge: Edge) -> dict[str, Any]:
    """An edge as answers show it."""
    return {"from": {"namespace": edge.source.namespace, "dataset": edge.source.dataset, "field": edge.source.field},
            "to": {"namespace": edge.target.namespace, "dataset": edge.target.dataset, "field": edge.target.field},
            "transformation": {"type": edge.kind, "subtype": edge.subtype, "masking": edge.masking},
            "operations": list(edge.operations),
            "program": {"namespace": edge.program.namespace, "application": edge.program.application,
                        "type": edge.program.program_type, "program": edge.program.program},
            "runs": list(edge.runs), "runCount": edge.run_count}


MAX_CLOSURE_FIELDS = 10_000  # the upstream of one field an explanation walks, at most


class EdgeSource(Protocol):
    def out_of(self, fields: Sequence[FieldNode]) -> list[Edge]: ...
    def into(self, fields: Sequence[FieldNode]) -> list[Edge]: ...


def upstream(field_node: FieldNode, edges: EdgeSource, levels: int = MAX_LEVELS) -> tuple[list[Edge], bool]:
    """Every edge on a way into ``field_node`` (any kind), up to ``levels`` edges back; and whether
    the walk was cut (by ``levels`` or ``MAX_CLOSURE_FIELDS``)."""
    seen = {field_node}
    frontier = [field_node]
    found: list[Edge] = []
    for _ in range(levels):
        if not frontier:
            return found, False
        arriving = edges.into(frontier)
        found.extend(arriving)
        frontier = sorted({edge.source for edge in arriving} - seen)
        seen.update(frontier)
        if len(seen) > MAX_CLOSURE_FIELDS:
            return found, True
    return found, bool(frontier)


@dataclass(frozen=True)
class Visibility:
    """What the caller may read: a field's dataset, a program (None: everything)."""

    dataset: Callable[[FieldNode], bool] | None = None
    program: Callable[[ProgramName], bool] | None = None

    def node(self, node: FieldNode) -> dict[str, str]:
        if self.dataset is None or self.dataset(node):
            return _node_view(node)
        return {"namespace": "", "dataset": HIDDEN, "field": ""}

    def edge(self, edge: Edge) -> dict[str, Any]:
        view = edge_view(edge)
        view["from"], view["to"] = self.node(edge.source), self.node(edge.target)
        if self.program is not None and not self.program(edge.program):
            view["program"] = {"namespace": "", "application": "", "type": HIDDEN, "program": ""}
            view["runs"], view["runCount"], view["operations"] = [], 0, []  # steps can be code
        return view


def explain_field(field_node: FieldNode, edges: EdgeSource,
                  assigned: Callable[[Iterable[FieldNode]], Mapping[FieldNode, Sequence[tuple[str, str]]]],
                  policies: Mapping[str, Policy], explain: str | None = None,
                  visibility: Visibility = Visibility()) -> dict[str, Any]:
    """A field's tags: those assigned to it, and those that reached it from the fields upstream
    they are assigned to, each with where it came from and its path; with ``explain``, also
    where that tag stopped on the way to this field and why. What the caller may not read is
    shown hidden (``visibility``), in its place."""
    closure, truncated = upstream(field_node, edges)
    nodes = {field_node, *(edge.source for edge in closure), *(edge.target for edge in closure)}
    tags_of = assigned(nodes)
    chosen = dict(policies)
    hypothetical = explain is not None and explain not in policies  # explained as the default would carry it
    if explain is not None:
        chosen.setdefault(explain, Policy())
    by_source: dict[FieldNode, list[Edge]] = {}
    for edge in closure:
        by_source.setdefault(edge.source, []).append(edge)

    def out_of(frontier: Sequence[FieldNode]) -> list[Edge]:
        return [edge for node in frontier for edge in by_source.get(node, ())]

    propagated: list[dict[str, Any]] = []
    stopped: list[dict[str, Any]] = []
    for tag, policy in sorted(chosen.items()):
        origins = sorted(node for node, tags in tags_of.items()
                         if node != field_node and any(assigned_tag == tag for assigned_tag, _ in tags))
        if not origins:
            continue
        walk = propagate(tag, origins, policy, out_of)
        if not (hypothetical and tag == explain):
            propagated += [_reached_view(item, visibility) for item in walk.reached if item.field == field_node]
        if tag == explain:
            stopped += [{"tag": tag, "from": visibility.node(stop.origin), "at": visibility.edge(stop.edge),
                         "reason": stop.reason if _shown(stop.edge, visibility) else "hidden"}
                        for stop in walk.stops]
    answer: dict[str, Any] = {
        "field": _node_view(field_node),
        "assigned": [{"tag": tag, "scope": scope} for tag, scope in tags_of.get(field_node, ())],
        "propagated": propagated,
        "policies": {tag: policy.render() for tag, policy in sorted(policies.items())},
        "truncated": truncated,
    }
    if explain is not None:
        answer["explained"] = explain
        answer["stopped"] = stopped
        if hypothetical:  # the tag has no policy: it propagates nowhere; where the default would stop it
            answer["explainedWith"] = f"no policy: as the default ({Policy().render()}) would carry it"
    return answer


def _node_view(node: FieldNode) -> dict[str, str]:
    return {"namespace": node.namespace, "dataset": node.dataset, "field": node.field}


def _shown(edge: Edge, visibility: Visibility) -> bool:
    """Whether a stop's reason (which names its program and operations) may be shown."""
    return visibility.program is None or visibility.program(edge.program)


def _reached_view(item: Reached, visibility: Visibility) -> dict[str, Any]:
    path = [visibility.edge(edge) for edge in item.path]
    return {"tag": item.tag, "from": visibility.node(item.origin), "levels": len(item.path), "path": path,
            "runs": sorted({run for edge in path for run in edge["runs"]}),
            "firstSeen": min(edge.first_seen for edge in item.path),
            "lastSeen": max(edge.last_seen for edge in item.path)}


def tag_map(tag: str, policy: Policy, origins: Sequence[FieldNode], walk: Propagation,
            visibility: Visibility = Visibility()) -> dict[str, Any]:
    """Where ``tag`` goes: the fields it is assigned to and those it reached, grouped by dataset,
    the edges it crossed (the graph) and those that stopped it, with why. Fields of datasets the
    caller may not read are left out and counted (``hidden``); so are edges touching them."""
    readable = visibility.dataset or (lambda node: True)
    fields: dict[FieldNode, dict[str, Any]] = {}
    for origin in origins:
        fields.setdefault(origin, {"field": origin.field, "assigned": True, "reached": []})
    for item in walk.reached:
        entry = fields.setdefault(item.field, {"field": item.field.field, "assigned": False, "reached": []})
        if readable(item.origin):
            entry["reached"].append({"from": _node_view(item.origin), "levels": len(item.path),
                                     "operations": sorted({step for edge in item.path for step in edge.operations})})
    shown = {node: entry for node, entry in fields.items() if readable(node)}
    datasets: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for node in sorted(shown):
        datasets.setdefault((node.namespace, node.dataset_type, node.dataset), []).append(shown[node])
    crossed = {edge for item in walk.reached for edge in item.path}
    return {
        "tag": tag, "policy": policy.render(), "truncated": walk.truncated,
        "datasets": [{"namespace": namespace, "type": dataset_type, "dataset": dataset, "fields": entries}
                     for (namespace, dataset_type, dataset), entries in datasets.items()],
        "edges": [visibility.edge(edge) for edge in sorted(crossed, key=_edge_order)
                  if readable(edge.source) and readable(edge.target)],
        "stops": [{"from": _node_view(stop.origin), "at": visibility.edge(stop.edge), "reason": stop.reason}
                  for stop in walk.stops if readable(stop.edge.source) and readable(stop.edge.target)
                  and readable(stop.origin)],
        "hidden": len(fields) - len(shown),
    }


CSV_COLUMNS = ("tag", "status", "namespace", "dataset", "field", "origin_namespace", "origin_dataset", "origin_field",
               "levels", "operations", "reason")


def tag_map_rows(answer: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """The map as rows for an audit (``CSV_COLUMNS``): each field assigned, each reach, each stop."""
    rows: list[tuple[str, ...]] = []
    tag = answer["tag"]
    for dataset in answer["datasets"]:
        for entry in dataset["fields"]:
            where = (dataset["namespace"], dataset["dataset"], entry["field"])
            if entry["assigned"]:
                rows.append((tag, "assigned", *where, "", "", "", "0", "", ""))
            for reach in entry["reached"]:
                origin = reach["from"]
                rows.append((tag, "propagated", *where, origin["namespace"], origin["dataset"], origin["field"],
                             str(reach["levels"]), " ".join(reach["operations"]), ""))
    for stop in answer["stops"]:
        at, origin = stop["at"]["to"], stop["from"]
        rows.append((tag, "stopped", at["namespace"], at["dataset"], at["field"], origin["namespace"],
                     origin["dataset"], origin["field"], "", " ".join(stop["at"]["operations"]), stop["reason"]))
    return rows
