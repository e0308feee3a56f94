// Field provenance (the Field Level Lineage design): the simple and detailed views of a field's
// paths as graphs, the distinct paths with their operations and runs, and the switch to impact
// (outgoing). Each edge shows how its input reaches the output when the producer recorded it
// (OpenLineage's transformation: "DIRECT · AGGREGATION", "masked"); "direct only" asks the API
// for the chains whose every edge is direct (the API holds that rule).
"use strict";

// "DIRECT · AGGREGATION", "INDIRECT · FILTER · masked": a transformation as the API gives it.
function transformationLabel(transformation) {
  return [transformation.type, transformation.subtype, transformation.masking ? "masked" : ""].filter(Boolean).join(" \u00b7 ");
}

// A badge per transformation; the description, when there is one, as its tooltip.
function transformationBadges(transformations) {
  return (transformations || []).map((t) => el("span", {
    class: `badge transformation ${t.type === "DIRECT" ? "direct" : t.type === "INDIRECT" ? "indirect" : "other"}`,
    title: t.description || undefined}, transformationLabel(t)));
}

// A view's edge: its transformations (one on a detailed edge, the distinct ones on a simple edge).
function edgeTransformations(edge) {
  return edge.transformation ? [edge.transformation] : edge.transformations || [];
}

function edgeData(id, source, target, name, transformations) {
  const kinds = transformations.map(transformationLabel).join(", ");
  const onlyIndirect = transformations.length > 0 && transformations.every((t) => t.type === "INDIRECT");
  return {data: {id, source, target, label: kinds ? `${name}\n${kinds}` : name, transformations: kinds},
          classes: onlyIndirect ? "indirect" : ""};
}

function fieldElements(paths, dataset) {
  const nodes = new Map(), edges = new Map();
  for (const path of paths) {
    for (const node of path.graph.nodes) {
      const label = node.kind === "field" ? `${node.dataset}.${node.field}`
        : node.kind === "source" ? `${(node.sources || []).map((s) => s.name).join(", ")}.${node.field}` : node.field;
      nodes.set(node.id, {data: {id: node.id, label}, classes: node.kind});
    }
    for (const edge of path.graph.edges) {
      const kinds = edgeTransformations(edge);
      const id = `${edge.from}|${edge.to}|${edge.operation || (edge.operations || []).join(",")}|${kinds.map(transformationLabel)}`;
      edges.set(id, edgeData(id, edge.from, edge.to, edge.name || (edge.names || []).join(" → "), kinds));
    }
  }
  return [...nodes.values(), ...edges.values()];
}

const FIELD_STYLE = [
  {selector: "node.source", style: {"background-color": "#e3f6e8", "border-color": "#3f8f5a"}},
  {selector: "node.intermediate", style: {"background-color": "#f1f5f9", "border-color": "#94a3b8", "shape": "ellipse"}},
  {selector: "node.field", style: {"background-color": "#e0ecff", "border-color": "#1d4ed8", "border-width": 2}},
  {selector: "edge", style: {"text-wrap": "wrap", "text-rotation": "none", "text-background-color": "#fff",
                             "text-background-opacity": 0.85, "text-background-padding": 2}},
  {selector: "edge.indirect", style: {"line-style": "dashed"}},
];
const FIELD_LAYOUT = {rankSep: 170, nodeSep: 30}; // room for an edge's transformations under its name

// An operation of a path: its name, description, and the inputs whose transformation was recorded.
function operationItem(op) {
  const inputs = (op.inputs || []).filter((item) => item.transformation);
  return el("li", {}, el("code", {}, op.name), " ", op.description || "",
    inputs.length ? el("span", {class: "inputs"}, ...inputs.map((item) => el("span", {class: "input"},
      " ", item.field, " ", ...transformationBadges([item.transformation])))) : "");
}

// What changed against the window before (the field diff): the source (or reached) fields added
// and removed, each path new, gone or unchanged, and what differs from a gone path to the new one.
function changeList(diff) {
  const listing = diff.direction === "incoming" ? "sources" : "reached";
  const counts = diff.summary[listing], paths = diff.summary.paths;
  const name = (f) => `${f.name || f.dataset}.${f.field}`;
  return [
    el("h2", {}, `What changed since ${when(diff.baseStart)} to ${when(diff.baseEnd)}`),
    el("p", {id: "change-summary"}, `${listing}: ${counts.added} added, ${counts.removed} removed; paths: ${paths.new} new, ` +
       `${paths.gone} gone, ${paths.unchanged} unchanged; ${diff.summary.masked} newly masked`),
    el("ul", {id: "changed-fields"}, ...diff[listing].filter((f) => f.change !== "unchanged").map((f) =>
      el("li", {class: f.change}, `${f.change}: ${name(f)}`))),
    el("ul", {id: "changed-paths"}, ...diff.paths.filter((p) => p.change !== "unchanged").map((p) => {
      const differences = p.differences ? [...p.differences.operationsAdded.map((o) => `+${o}`),
        ...p.differences.operationsRemoved.map((o) => `-${o}`),
        ...p.differences.transformationsChanged.map((t) => t.summary)] : [];
      return el("li", {class: p.change}, `${p.change}: ${p.operations.join(" > ")}`,
                differences.length ? el("span", {class: "muted"}, ` (${differences.join("; ")})`) : "");
    })),
  ];
}

window.PAGES.fields = async function (main) {
  const initial = {ns: param("ns", "default"), dataset: param("dataset"), field: param("field"), range: param("range", "7d"),
                   start: param("start"), end: param("end"), view: param("view", "simple"), direction: param("direction", "incoming"),
                   transformations: param("transformations", "all")};
  const ns = el("input", {id: "namespace", value: initial.ns, size: 10, "aria-label": "namespace"});
  const dataset = el("input", {id: "dataset", value: initial.dataset, placeholder: "dataset", required: true, "aria-label": "dataset"});
  const field = el("input", {id: "field", list: "field-options", value: initial.field, placeholder: "field",
                             required: true, "aria-label": "field"});
  const options = el("datalist", {id: "field-options"});
  const range = rangeControls(initial);
  const radios = (name, values, chosen) => values.map(([value, label]) => el("label", {},
    el("input", {type: "radio", name, value, id: `${name}-${value}`, checked: value === chosen}), ` ${label} `));
  const form = el("form", {class: "controls", id: "fields-form"}, ns, dataset, el("label", {}, "field ", field, options), range.node,
    el("span", {class: "switch"}, ...radios("direction", [["incoming", "provenance"], ["outgoing", "impact"]], initial.direction)),
    el("span", {class: "switch"}, ...radios("view", [["simple", "simple view"], ["detailed", "detailed view"]], initial.view)),
    el("label", {class: "switch", title: "only the chains whose every edge is DIRECT or has no transformation recorded"},
       el("input", {type: "checkbox", id: "direct-only", checked: initial.transformations === "direct"}), " direct only"),
    el("label", {class: "switch"}, el("input", {type: "checkbox", id: "compare", checked: param("compare") === "1"}),
       " compare with the window before"),
    el("button", {type: "submit"}, "Show"));
  const summary = el("p", {id: "summary", class: "muted"});
  const canvas = el("div", {id: "graph", class: "graph"});
  const list = el("section", {id: "paths"});
  const changes = el("section", {id: "field-changes"});
  main.replaceChildren(el("h1", {}, "Field provenance"), form, summary, changes, canvas, list);
  const chosen = (name) => form.querySelector(`input[name=${name}]:checked`).value;

  async function loadFields() {
    if (!dataset.value) return;
    // The fields written with lineage; any other field (a source's, for impact) can be typed.
    const window_ = windowOf(range.select.value, range.start.value, range.end.value);
    const found = await linksOf({ns: ns.value, type: "dataset", name: dataset.value})
      .then((links) => api(links.fields, window_)).catch(() => ({fields: []}));
    options.replaceChildren(...found.fields.map((f) => el("option", {value: f.name})));
    if (!field.value && found.fields.length) field.value = found.fields[0].name;
  }
  async function load() {
    const window_ = windowOf(range.select.value, range.start.value, range.end.value);
    const direction = chosen("direction"), view = chosen("view");
    const transformations = form.querySelector("#direct-only").checked ? "direct" : "all";
    const comparing = form.querySelector("#compare").checked;
    history.replaceState(null, "", pageUrl("fields", {ns: ns.value, dataset: dataset.value, field: field.value,
      range: range.select.value, start: range.start.value, end: range.end.value, view, direction,
      transformations: transformations === "direct" ? transformations : undefined, compare: comparing ? "1" : ""}));
    const links = await linksOf({ns: ns.value, dataset: dataset.value, field: field.value});
    changes.replaceChildren(...(comparing ? changeList(await api(links.lineageDiff, {...window_, direction})) : []));
    // Impact draws source fields -> impacted fields: the simple view's edges, with their transformations.
    const body = await api(links.lineage, {...window_, view: direction === "outgoing" ? "simple" : view, direction,
                                           levels: direction === "outgoing" ? 5 : 1, transformations});
    const only = transformations === "direct" ? ", direct only" : "";
    if (window.cy) { window.cy.destroy(); window.cy = null; }
    if (direction === "incoming") {
      summary.textContent = `${body.paths.length} distinct paths into ${dataset.value}.${field.value} (${view} view${only})`;
      if (body.paths.length) window.cy = graph(canvas, fieldElements(body.paths, dataset.value), FIELD_STYLE, FIELD_LAYOUT);
      list.replaceChildren(el("h2", {}, "Paths"), el("ol", {id: "path-list"}, ...body.paths.map((p) => el("li", {class: "path"},
        el("p", {}, el("strong", {}, `${p.runCount} runs`), `, first ${when(p.firstSeenInSeconds)}, last ${when(p.lastSeenInSeconds)}`),
        el("ol", {class: "operations"}, ...p.operations.map(operationItem)),
        el("p", {class: "muted runs"}, "runs: ", p.runs.slice(0, 10).join(", "), p.runs.length > 10 ? ` … and ${p.runs.length - 10} more` : "")))));
    } else {
      const impacted = body.impacts || [];
      summary.textContent = `${impacted.length} downstream fields of ${dataset.value}.${field.value}${only}`;
      // Node ids are keys (never shown): a dataset "a.b" with field "c" and a dataset "a" with field "b.c" stay two nodes.
      const key = (ns, name, fieldName) => JSON.stringify([ns, name, fieldName]);
      const origin = key(ns.value, dataset.value, field.value);
      const nodes = new Map([[origin, {data: {id: origin, label: `${dataset.value}.${field.value}`}, classes: "field"}]]);
      const edges = new Map(); // "source|impacted" -> {source, target, level, transformations}
      // Impacted field -> the transformations of its edges from the origin or another impacted field.
      const reached = new Map([origin, ...impacted.map((f) => key(f.namespace || "", f.dataset, f.field))].map((id) => [id, []]));
      for (const found of impacted) {
        const id = key(found.namespace || "", found.dataset, found.field);
        if (!nodes.has(id)) nodes.set(id, {data: {id, label: `${found.dataset}.${found.field}`}, classes: "intermediate"});
        for (const path of found.paths) {
          const drawn = new Map(path.graph.nodes.map((node) => [node.id, node]));
          for (const edge of path.graph.edges) {
            const node = drawn.get(edge.from);
            for (const source of node.sources || []) {
              const from = key(source.namespace || "", source.name, node.field);
              if (!nodes.has(from)) nodes.set(from, {data: {id: from, label: `${source.name}.${node.field}`}, classes: "source"});
              const edgeKey = `${from}|${id}`;
              if (!edges.has(edgeKey)) edges.set(edgeKey, {from, to: id, level: found.level, transformations: []});
              edges.get(edgeKey).transformations.push(...edgeTransformations(edge));
              if (reached.has(from)) reached.get(id).push(...edgeTransformations(edge));
            }
          }
        }
      }
      const distinct = (transformations) => [...new Map(transformations.map((t) => [transformationLabel(t), t])).values()];
      const elements = [...nodes.values(), ...[...edges].map(([key, e]) =>
        edgeData(key, e.from, e.to, `level ${e.level}`, distinct(e.transformations)))];
      if (impacted.length) window.cy = graph(canvas, elements, FIELD_STYLE, FIELD_LAYOUT);
      list.replaceChildren(el("h2", {}, "Impacted fields"), el("ul", {id: "impact-list"}, ...impacted.map((f) => {
        const label = `${f.dataset}.${f.field}`;
        return el("li", {}, `level ${f.level}: `, f.links && f.links.provenancePage ? el("a", {href: BASE + f.links.provenancePage}, label)
          : label, ...transformationBadges(distinct(reached.get(key(f.namespace || "", f.dataset, f.field)) || [])));
      })));
    }
    if (window.cy) window.cy.fit(undefined, 20);
  }
  dataset.addEventListener("change", () => loadFields().catch((error) => showError(summary, error)));
  form.addEventListener("change", (event) => {
    if ((event.target.type === "radio" || event.target.id === "direct-only" || event.target.id === "compare") &&
        field.value) load().catch((error) => showError(summary, error));
  });
  form.addEventListener("submit", (event) => { event.preventDefault(); load().catch((error) => showError(summary, error)); });
  await loadFields();
  if (field.value) await load();
};
