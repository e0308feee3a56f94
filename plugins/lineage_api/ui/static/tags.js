// Where does a tag go (issue 33): the fields carrying it, by assignment or along field lineage, grouped
// by dataset; the edges it crossed as a graph and where it stopped (red, dashed, with why); a CSV for
// an audit. Everything comes from GET v3/tags/{tag}/map.
"use strict";

window.PAGES.tags = async function (main) {
  const state = {tag: param("tag", "PII"), range: param("range", "7d")};
  const tag = el("input", {id: "tag", name: "tag", value: state.tag, size: 16, "aria-label": "tag"});
  const range = rangeControls({range: state.range});
  const form = el("form", {id: "tag-form", class: "controls"}, el("label", {}, "tag ", tag), range.node,
                  el("button", {type: "submit"}, "Show"));
  const result = el("section", {id: "result", "aria-live": "polite"});
  main.replaceChildren(el("h1", {}, "Where does a tag go"), form, result);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.search = new URLSearchParams({tag: tag.value, range: range.select.value}).toString();
  });
  if (!state.tag) return;
  const window_ = windowOf(range.select.value, range.start.value, range.end.value);
  const path = `v3/tags/${encodeURIComponent(state.tag)}/map`;
  let answer;
  try {
    answer = await api(path, window_);
  } catch (error) {
    showError(result, error);
    return;
  }
  const csv = BASE + path + "?" + new URLSearchParams({...window_, format: "csv"});
  const fieldCount = answer.datasets.reduce((sum, d) => sum + d.fields.length, 0);
  const summary = el("p", {id: "summary"},
    `${state.tag} (policy: ${answer.policy}) is on ${fieldCount} fields in ${answer.datasets.length} datasets; `,
    `${answer.stops.length} stops`, answer.hidden ? `; ${answer.hidden} fields you may not read left out` : "",
    answer.truncated ? "; its policy's levels cut the walk" : "", " · ",
    el("a", {id: "csv", href: csv, download: `tag-${state.tag}-map.csv`}, "Download CSV"));
  const rows = [];
  for (const dataset of answer.datasets) {
    for (const field of dataset.fields) {
      const how = field.assigned ? "assigned"
        : field.reached.map((r) => `from ${r.from.dataset}.${r.from.field} (${r.levels} away` +
                                   (r.operations.length ? `, via ${r.operations.join(", ")}` : "") + ")").join("; ");
      rows.push(el("tr", {class: field.assigned ? "assigned" : "propagated"},
        el("td", {}, dataset.namespace), el("td", {}, dataset.dataset), el("td", {}, field.field), el("td", {}, how)));
    }
  }
  const stops = answer.stops.map((stop) => el("tr", {class: "stop"},
    el("td", {}, `${stop.at.from.dataset}.${stop.at.from.field} → ${stop.at.to.dataset}.${stop.at.to.field}`),
    el("td", {}, stop.reason)));
  const graphBox = el("div", {id: "graph", class: "graph"});
  result.replaceChildren(summary, graphBox,
    el("h2", {}, "Fields carrying it"),
    el("table", {id: "fields"}, el("thead", {}, el("tr", {}, ...["namespace", "dataset", "field", "how"].map((h) => el("th", {}, h)))),
       el("tbody", {}, ...rows)),
    el("h2", {}, "Where it stopped"),
    stops.length ? el("table", {id: "stops"}, el("thead", {}, el("tr", {}, el("th", {}, "edge"), el("th", {}, "why"))),
                      el("tbody", {}, ...stops))
                 : el("p", {id: "stops", class: "muted"}, "nowhere: every edge out of a field carrying it carried it on"));
  const nodes = new Map();
  const node = (ref, classes) => {
    const id = `${ref.namespace}:${ref.dataset}.${ref.field}`;
    if (!nodes.has(id)) nodes.set(id, {data: {id, label: `${ref.dataset}.${ref.field}`}, classes});
    return id;
  };
  for (const dataset of answer.datasets) {
    for (const field of dataset.fields) {
      node({namespace: dataset.namespace, dataset: dataset.dataset, field: field.field}, field.assigned ? "focus" : "");
    }
  }
  const edges = answer.edges.map((edge, index) => ({data: {id: `e${index}`, source: node(edge.from), target: node(edge.to),
                                                           label: edge.operations.join(", ")}}));
  const stopped = answer.stops.map((stop, index) => ({data: {id: `s${index}`, source: node(stop.at.from),
                                                             target: node(stop.at.to, "stopped"), label: stop.reason.split(" in ")[0]},
                                                      classes: "stop"}));
  graphBox.dataset.nodes = String(nodes.size);
  graphBox.dataset.edges = String(edges.length);
  graphBox.dataset.stops = String(stopped.length);
  graph(graphBox, [...nodes.values(), ...edges, ...stopped], [
    {selector: "edge.stop", style: {"line-color": "#dc2626", "target-arrow-color": "#dc2626", "line-style": "dashed"}},
    {selector: "node.stopped", style: {"background-color": "#f3f4f6", "border-color": "#9ca3af"}},
  ], {rankSep: 240});  // room for the stops' reasons
};
