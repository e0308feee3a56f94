// Field provenance (the Field Level Lineage design): the simple and detailed views of a field's
// paths as graphs, the distinct paths with their operations and runs, and the switch to impact
// (outgoing).
"use strict";

function fieldElements(paths, dataset) {
  const nodes = new Map(), edges = new Map();
  for (const path of paths) {
    for (const node of path.graph.nodes) {
      const label = node.kind === "field" ? `${node.dataset}.${node.field}`
        : node.kind === "source" ? `${(node.sources || []).map((s) => s.name).join(", ")}.${node.field}` : node.field;
      nodes.set(node.id, {data: {id: node.id, label}, classes: node.kind});
    }
    for (const edge of path.graph.edges) {
      const id = `${edge.from}|${edge.to}|${edge.operation || (edge.operations || []).join(",")}`;
      edges.set(id, {data: {id, source: edge.from, target: edge.to, label: edge.name || (edge.names || []).join(" → ")}});
    }
  }
  return [...nodes.values(), ...edges.values()];
}

const FIELD_STYLE = [
  {selector: "node.source", style: {"background-color": "#e3f6e8", "border-color": "#3f8f5a"}},
  {selector: "node.intermediate", style: {"background-color": "#f1f5f9", "border-color": "#94a3b8", "shape": "ellipse"}},
  {selector: "node.field", style: {"background-color": "#e0ecff", "border-color": "#1d4ed8", "border-width": 2}},
];

window.PAGES.fields = async function (main) {
  const initial = {ns: param("ns", "default"), dataset: param("dataset"), field: param("field"), range: param("range", "7d"),
                   start: param("start"), end: param("end"), view: param("view", "simple"), direction: param("direction", "incoming")};
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
    el("button", {type: "submit"}, "Show"));
  const summary = el("p", {id: "summary", class: "muted"});
  const canvas = el("div", {id: "graph", class: "graph"});
  const list = el("section", {id: "paths"});
  main.replaceChildren(el("h1", {}, "Field provenance"), form, summary, canvas, list);
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
    history.replaceState(null, "", pageUrl("fields", {ns: ns.value, dataset: dataset.value, field: field.value,
      range: range.select.value, start: range.start.value, end: range.end.value, view, direction}));
    const links = await linksOf({ns: ns.value, dataset: dataset.value, field: field.value});
    const body = await api(links.lineage, {...window_, view, direction, levels: direction === "outgoing" ? 5 : 1});
    if (window.cy) { window.cy.destroy(); window.cy = null; }
    if (direction === "incoming") {
      summary.textContent = `${body.paths.length} distinct paths into ${dataset.value}.${field.value} (${view} view)`;
      if (body.paths.length) window.cy = graph(canvas, fieldElements(body.paths, dataset.value), FIELD_STYLE);
      list.replaceChildren(el("h2", {}, "Paths"), el("ol", {id: "path-list"}, ...body.paths.map((p) => el("li", {class: "path"},
        el("p", {}, el("strong", {}, `${p.runCount} runs`), `, first ${when(p.firstSeenInSeconds)}, last ${when(p.lastSeenInSeconds)}`),
        el("ol", {class: "operations"}, ...p.operations.map((op) => el("li", {}, el("code", {}, op.name), " ", op.description || ""))),
        el("p", {class: "muted runs"}, "runs: ", p.runs.slice(0, 10).join(", "), p.runs.length > 10 ? ` … and ${p.runs.length - 10} more` : "")))));
    } else {
      const impacted = body.impacts || [];
      summary.textContent = `${impacted.length} downstream fields of ${dataset.value}.${field.value}`;
      const origin = `${dataset.value}.${field.value}`;
      const elements = [{data: {id: origin, label: origin}, classes: "field"}];
      const seen = new Set([origin]);
      for (const found of impacted) {
        const id = `${found.dataset}.${found.field}`;
        if (!seen.has(id)) { seen.add(id); elements.push({data: {id, label: id}, classes: "intermediate"}); }
        for (const path of found.paths) for (const source of path.sources || []) {
          const from = `${source.name}.${source.field}`;
          if (!seen.has(from)) { seen.add(from); elements.push({data: {id: from, label: from}, classes: "source"}); }
          elements.push({data: {id: `${from}|${id}`, source: from, target: id, label: `level ${found.level}`}});
        }
      }
      if (impacted.length) window.cy = graph(canvas, elements, FIELD_STYLE);
      list.replaceChildren(el("h2", {}, "Impacted fields"), el("ul", {id: "impact-list"}, ...impacted.map((f) =>
        el("li", {}, `level ${f.level}: `, f.links && f.links.provenancePage
          ? el("a", {href: BASE + f.links.provenancePage}, `${f.dataset}.${f.field}`) : `${f.dataset}.${f.field}`))));
    }
    if (window.cy) window.cy.fit(undefined, 20);
  }
  dataset.addEventListener("change", () => loadFields().catch((error) => showError(summary, error)));
  form.addEventListener("change", (event) => {
    if (event.target.type === "radio" && field.value) load().catch((error) => showError(summary, error));
  });
  form.addEventListener("submit", (event) => { event.preventDefault(); load().catch((error) => showError(summary, error)); });
  await loadFields();
  if (field.value) await load();
};
