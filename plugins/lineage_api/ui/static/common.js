// Shared by every page: the API client, DOM building (text only, never HTML), entity links,
// time ranges. Pages live at <prefix>/ui/<page>; the API's paths come from its answers' links.
"use strict";

const BASE = new URL("../", document.baseURI).pathname; // "/lineage/"

class ApiError extends Error {}

async function api(path, params = {}, options = {}) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    for (const item of [].concat(value)) if (item !== undefined && item !== null && item !== "") query.append(key, item);
  }
  const url = BASE + path + (query.toString() ? "?" + query : "");
  const response = await fetch(url, {credentials: "same-origin", ...options});
  const body = response.headers.get("content-type")?.includes("json") ? await response.json() : null;
  if (!response.ok) throw new ApiError((body && body.message) || `${response.status} ${response.statusText}`);
  return body;
}

function send(method, path, body) {
  return api(path, {}, {method, headers: {"content-type": "application/json"},
                        body: body === undefined ? undefined : JSON.stringify(body)});
}

// el("a", {href: "..."}, "text", child): strings become text nodes, so values never become markup.
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function param(name, fallback = "") {
  return new URLSearchParams(location.search).get(name) ?? fallback;
}

function pageUrl(page, params) {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== ""));
  return `${BASE}ui/${page}?${query}`;
}

function showError(container, error) {
  container.replaceChildren(el("p", {class: "error", role: "alert"}, error.message || String(error)));
}

// A link to a page the API named: answers carry `links` ({page, metadata, lineagePage, ...}),
// paths relative to BASE built by the API from the entity, so no page re-derives REST paths.
function pageLink(links, text, id) {
  return links && links.page ? el("a", {href: BASE + links.page, class: "entity-link", id}, text) : text;
}

// Where a page starts: the API's one entry point, `links`, answers the links of the entity a
// page's URL (or form) names: {ns, target, version} or {external: 1, target} (entity and run
// pages), {ns, type, name} (a dataset or stream), {ns, dataset, field}, {ns} (the namespace:
// search, suggest). Every other path a page fetches is a link from an answer.
function linksOf(named) {
  return api("links", named);
}

// The entity the entity and run pages show: their URL names it as a `page` link does.
function pageEntity() {
  return param("external") ? {external: 1, target: param("target")}
                           : {ns: param("ns", "default"), target: param("target"), version: param("version")};
}

// Time ranges: presets and custom, as epoch seconds for the API.
const PRESETS = {"1h": 3600, "1d": 86400, "7d": 7 * 86400, "30d": 30 * 86400};

function rangeControls(initial) {
  const select = el("select", {id: "range", name: "range"},
    ...[["1h", "last hour"], ["1d", "last day"], ["7d", "last week"], ["30d", "last 30 days"], ["custom", "custom"]]
      .map(([value, label]) => el("option", {value, selected: value === initial.range}, label)));
  const start = el("input", {id: "start", name: "start", type: "datetime-local", value: initial.start || ""});
  const end = el("input", {id: "end", name: "end", type: "datetime-local", value: initial.end || ""});
  const custom = el("span", {class: "custom", hidden: initial.range !== "custom"}, el("label", {}, "from ", start),
                    el("label", {}, " to ", end));
  select.addEventListener("change", () => { custom.hidden = select.value !== "custom"; });
  return {node: el("span", {}, el("label", {}, "time range ", select), custom), select, start, end};
}

function windowOf(range, start, end) {
  if (range === "custom") {
    const from = Date.parse(start + "Z"), to = Date.parse(end + "Z");
    if (Number.isNaN(from) || Number.isNaN(to)) throw new Error("give a custom start and end (UTC)");
    return {start: Math.floor(from / 1000), end: Math.floor(to / 1000)};
  }
  const now = Math.floor(Date.now() / 1000);
  return {start: now - (PRESETS[range] || PRESETS["7d"]), end: now + 1};
}

function when(seconds) {
  return seconds === null || seconds === undefined ? "—" : new Date(seconds * 1000).toISOString().replace(".000Z", "Z");
}

function nav() {
  const links = [["search", "Search"], ["lineage", "Dataset lineage"], ["fields", "Field provenance"],
                 ["tags", "Where tags go"]];
  return el("nav", {}, ...links.map(([page, label]) =>
    el("a", {href: `${BASE}ui/${page}`, class: document.body.dataset.page === page ? "current" : ""}, label)));
}

// Cytoscape with the dagre layout, left to right (the graph pages share it); `layout` adjusts it.
function graph(container, elements, extraStyle = [], layout = {}) {
  if (window.cytoscapeDagre && !graph.registered) { cytoscape.use(cytoscapeDagre); graph.registered = true; }
  return cytoscape({
    container, elements, minZoom: 0.05, maxZoom: 3,
    layout: {name: "dagre", rankDir: "LR", nodeSep: 18, rankSep: 70, edgeSep: 8, animate: false, ...layout},
    style: [
      {selector: "node", style: {"label": "data(label)", "font-size": 11, "text-valign": "center", "text-halign": "center",
                                 "text-wrap": "ellipsis", "text-max-width": 150, "width": 160, "height": 34,
                                 "background-color": "#e0ecff", "border-width": 1, "border-color": "#5b7bb2", "shape": "round-rectangle"}},
      {selector: "node.program, node.application", style: {"background-color": "#fff4d6", "border-color": "#b08a2e", "shape": "rectangle"}},
      {selector: "node.stream", style: {"background-color": "#e3f6e8", "border-color": "#3f8f5a"}},
      {selector: "node.focus", style: {"border-width": 3, "border-color": "#1d4ed8"}},
      {selector: "node:selected", style: {"border-width": 3, "border-color": "#dc2626"}},
      {selector: "edge", style: {"width": 1.5, "curve-style": "bezier", "target-arrow-shape": "triangle",
                                 "line-color": "#64748b", "target-arrow-color": "#64748b", "font-size": 9,
                                 "label": "data(label)", "text-rotation": "autorotate", "color": "#475569"}},
      {selector: "edge.write", style: {"line-color": "#b45309", "target-arrow-color": "#b45309"}},
      {selector: "edge.unknown", style: {"line-style": "dashed"}},
      {selector: "edge.read_write", style: {"source-arrow-shape": "triangle", "source-arrow-color": "#64748b"}},
      ...extraStyle,
    ],
  });
}

window.addEventListener("DOMContentLoaded", () => {
  document.body.prepend(nav());
  const start = (window.PAGES || {})[document.body.dataset.page];
  if (start) start(document.getElementById("main")).catch((error) => showError(document.getElementById("main"), error));
});
window.PAGES = window.PAGES || {};
