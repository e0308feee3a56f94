// Dataset lineage (Interaction 3 of the Metadata and Data Discovery design): a time range and
// levels; datasets and programs with read/write edges, left to right; a program lists its runs in
// the interval; a run opens its page. "Compare with the window before" draws the diff instead:
// added in green, removed in red (dashed), unchanged grey, with the counts.
"use strict";

const CHANGE_STYLE = [
  {selector: ".added", style: {"line-color": "#15803d", "target-arrow-color": "#15803d", "border-color": "#15803d",
                               "border-width": 2}},
  {selector: ".removed", style: {"line-color": "#dc2626", "target-arrow-color": "#dc2626", "border-color": "#dc2626",
                                 "border-width": 2, "line-style": "dashed", "opacity": 0.8}},
  {selector: ".unchanged", style: {"line-color": "#94a3b8", "target-arrow-color": "#94a3b8", "opacity": 0.6}},
  // declared lineage without a run in the window (an OpenLineage JobEvent): dashed
  {selector: "edge.declared", style: {"line-style": "dashed", "line-dash-pattern": [10, 5], "line-color": "#7c3aed",
                                      "target-arrow-color": "#7c3aed", "color": "#7c3aed"}},
];

// The diff's relations as lineageElements draws them, each element classed by its change.
function diffElements(body, groupByApplication) {
  const shaped = {programs: body.programs, data: body.data, links: body.links,
                  relations: body.relations.map((r) => ({...r, runs: []}))};
  const elements = lineageElements(shaped, groupByApplication);
  const change = new Map();
  for (const r of body.relations) {
    const [source, target] = r.access === "write" ? [r.program, r.data] : [r.data, r.program];
    change.set(JSON.stringify([source, target, r.access]), r.change);
  }
  for (const element of elements) {
    const id = element.data.id;
    const node = body.programs[id] || body.data[id];
    const found = element.data.source ? change.get(id) : node && node.change;
    if (found) element.classes = `${element.classes} ${found}`;
  }
  return elements;
}

function lineageElements(body, groupByApplication) {
  const nodes = new Map(), edges = new Map();
  const programNode = (id) => {
    const p = body.programs[id].id;
    const kind = body.programs[id].jobType || p.type;  // an OpenLineage job's type (airflow_task, dbt_model, ...)
    return groupByApplication
      ? {id: `application.${p.namespace}.${p.application}`, label: p.application, classes: "application",
         ns: p.namespace, app: p.application}
      : {id, label: `${p.id} (${kind})`, classes: "program", ns: p.namespace, app: p.application, type: p.type, program: p.id,
         kind, links: body.links[id]};
  };
  for (const relation of body.relations) {
    const d = body.data[relation.data].id;
    nodes.set(relation.data, {data: {id: relation.data, label: d.id, ns: d.namespace, type: d.type, name: d.id,
                                     links: body.links[relation.data]},
                              classes: d.type === "stream" ? "stream" : "dataset"});
    const p = programNode(relation.program);
    nodes.set(p.id, {data: {...p}, classes: p.classes});
    const [source, target] = relation.access === "write" ? [p.id, relation.data] : [relation.data, p.id];
    const id = JSON.stringify([source, target, relation.access]);  // ids may hold "|": never joined
    const known = edges.get(id);
    const runs = (known ? known.data.runs : 0) + (relation.runCount ?? relation.runs.length);
    const declared = (!known || known.data.declared) && relation.declared === true && runs === 0;
    edges.set(id, {data: {id, source, target, access: relation.access, runs, declared,
                          label: declared ? "declared" : relation.access === "unknown" ? "?" : ""},
                   classes: declared ? `${relation.access} declared` : relation.access});
  }
  return [...nodes.values(), ...edges.values()];
}

window.PAGES.lineage = async function (main) {
  const initial = {ns: param("ns", "default"), type: param("type", "dataset"), name: param("name"),
                   range: param("range", "7d"), start: param("start"), end: param("end"), levels: param("levels", "10")};
  const name = el("input", {id: "dataset", value: initial.name, placeholder: "dataset or stream", required: true, "aria-label": "dataset"});
  const type = el("select", {id: "data-type", "aria-label": "type"},
    ...["dataset", "stream"].map((t) => el("option", {value: t, selected: t === initial.type}, t)));
  const ns = el("input", {id: "namespace", value: initial.ns, size: 10, "aria-label": "namespace"});
  const levels = el("input", {id: "levels", type: "number", min: 1, max: 100, value: initial.levels, "aria-label": "levels"});
  const range = rangeControls(initial);
  const group = el("input", {id: "group", type: "checkbox"});
  const compare = el("input", {id: "compare", type: "checkbox", checked: param("compare") === "1"});
  const form = el("form", {class: "controls", id: "lineage-form"}, ns, type, name, range.node,
    el("label", {}, "levels ", levels), el("label", {}, group, " group programs by application"),
    el("label", {}, compare, " compare with the window before"),
    el("button", {type: "submit"}, "Show"));
  const summary = el("p", {id: "summary", class: "muted"});
  const canvas = el("div", {id: "graph", class: "graph"});
  const panel = el("aside", {id: "panel"}, el("p", {class: "muted"}, "Click a program to list its runs, a dataset to open it."));
  main.replaceChildren(el("h1", {}, "Dataset lineage"), form, summary, el("div", {class: "graph-layout"}, canvas, panel));
  let body = null, window_ = null;

  function draw() {
    const elements = body.summary ? diffElements(body, group.checked) : lineageElements(body, group.checked);
    if (window.cy) window.cy.destroy();
    const cy = window.cy = graph(canvas, elements, CHANGE_STYLE);
    // the asked dataset by its parts: ids are the API's to render (lineage.ids), never rebuilt here
    cy.nodes().filter((node) => node.data("ns") === ns.value && node.data("type") === type.value &&
                                node.data("name") === name.value).addClass("focus");
    cy.fit(undefined, 20);
    const count = (selector) => cy.elements(selector).length;
    summary.textContent = `${count("node.dataset") + count("node.stream")} datasets, ${count("node.program") + count("node.application")} ` +
      `programs, ${count("edge")} edges` + (count("edge.declared") ? ` (${count("edge.declared")} declared, no run: dashed)` : "") +
      `, ${when(window_.start)} to ${when(window_.end)}`;
    if (body.summary) {
      const r = body.summary.relations;
      summary.textContent += ` against ${when(body.baseStart)} to ${when(body.baseEnd)}: ${r.added} added, ` +
        `${r.removed} removed, ${r.unchanged} unchanged` +
        (body.summary.schemas ? `; ${body.summary.schemas} schema${body.summary.schemas === 1 ? "" : "s"} changed` : "");
    }
    if (body.truncated === true || (body.truncated && (body.truncated.current || body.truncated.base))) {
      summary.textContent += " (cut at the levels asked: more lies beyond)";
    }
    cy.on("tap", "node", (event) => select(event.target.data()));
  }
  async function select(data) {
    if (!data.program) {
      if (data.app && !data.type) {
        panel.replaceChildren(el("h2", {}, data.label), el("p", {class: "muted"}, "Ungroup to list the runs of each program."));
        return;
      }
      if (!data.links) {
        panel.replaceChildren(el("h2", {}, data.label), el("p", {class: "muted"}, "You may not read this dataset."));
        return;
      }
      const centred = new URL(BASE + data.links.lineagePage, location.href);
      centred.searchParams.set("range", range.select.value);
      centred.searchParams.set("levels", levels.value);
      panel.replaceChildren(el("h2", {}, data.name),
        el("p", {}, pageLink(data.links, "Open the entity page")),
        el("p", {}, el("a", {href: centred.pathname + centred.search}, "Center the lineage here")));
      return;
    }
    if (!data.links) {
      panel.replaceChildren(el("h2", {}, data.label), el("p", {class: "muted"}, "You may not read this program."));
      return;
    }
    const found = await api(data.links.runs, window_);
    panel.replaceChildren(el("h2", {}, `${data.program}`), el("p", {class: "muted"}, `${data.kind || data.type} in ${data.app}: ${found.runs.length} runs`),
      el("ul", {id: "runs"}, ...found.runs.map((r) => el("li", {}, pageLink(r.links, r.run_id), ` ${r.status}, ${when(r.started_at)}`))));
  }
  async function load() {
    window_ = windowOf(range.select.value, range.start.value, range.end.value);
    history.replaceState(null, "", pageUrl("lineage", {ns: ns.value, type: type.value, name: name.value, range: range.select.value,
      start: range.start.value, end: range.end.value, levels: levels.value, compare: compare.checked ? "1" : ""}));
    const links = await linksOf({ns: ns.value, type: type.value, name: name.value});
    body = compare.checked ? await api(links.lineageDiff, {...window_, levels: levels.value})
                           : await api(links.lineage, {...window_, levels: levels.value, runs: "count"});
    if (!body.relations.length) {
      if (window.cy) { window.cy.destroy(); window.cy = null; }
      summary.textContent = "No lineage in this time range.";
      return;
    }
    draw();
  }
  group.addEventListener("change", () => body && body.relations.length && draw());
  form.addEventListener("submit", (event) => { event.preventDefault(); load().catch((error) => showError(summary, error)); });
  if (initial.name) await load();
};
