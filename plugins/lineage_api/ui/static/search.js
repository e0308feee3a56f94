// Search (Interactions 1 and 2 of the Metadata and Data Discovery design): autocomplete over keys,
// values and tags; filters; results with what matched; pages. With an empty query, the metadata
// keys in use.
"use strict";

const TARGETS = ["", "dataset", "stream", "app", "program", "field", "partition", "file", "external"];
const PAGE_SIZE = 20;

window.PAGES.search = async function (main) {
  const state = {query: param("query"), target: param("target"), scope: param("scope"),
                 namespace: param("ns", "default"), offset: Number(param("offset", "0")) || 0};
  const input = el("input", {id: "query", name: "query", type: "search", autocomplete: "off", value: state.query,
                             placeholder: "pur*, owner:sales, tags:PII, field:emp*", "aria-label": "search query"});
  const suggestions = el("ul", {id: "suggestions", class: "suggestions", role: "listbox", hidden: true});
  const target = el("select", {id: "target", "aria-label": "entity type"},
    ...TARGETS.map((t) => el("option", {value: t, selected: t === state.target}, t || "any type")));
  const scope = el("select", {id: "scope", "aria-label": "scope"},
    ...["", "USER", "SYSTEM"].map((s) => el("option", {value: s, selected: s === state.scope}, s || "both scopes")));
  const namespace = el("input", {id: "namespace", value: state.namespace, size: 10, "aria-label": "namespace"});
  const form = el("form", {id: "search-form", class: "controls"},
    el("span", {class: "autocomplete"}, input, suggestions), target, scope,
    el("label", {}, "namespace ", namespace), el("button", {type: "submit"}, "Search"));
  const results = el("section", {id: "results", "aria-live": "polite"});
  main.replaceChildren(el("h1", {}, "Search metadata"), form, results);

  // The namespace's search and suggest links, asked once per namespace.
  const namespaceLinks = new Map();
  const linksOfNamespace = (ns) => {
    if (!namespaceLinks.has(ns)) {
      namespaceLinks.set(ns, linksOf({ns}).catch((error) => { namespaceLinks.delete(ns); throw error; }));
    }
    return namespaceLinks.get(ns);
  };

  let pending = 0;
  const lastToken = () => input.value.split(/\s+/).pop() || "";
  async function suggest() {
    const ticket = ++pending;
    const prefix = lastToken().replace(/^\+/, "");
    const links = await linksOfNamespace(namespace.value);
    const found = await api(links.suggest, {prefix, limit: 10});
    if (ticket !== pending) return;
    suggestions.replaceChildren(...found.suggestions.map((s) => el("li", {role: "option", class: s.type,
      onmousedown: (event) => { event.preventDefault(); choose(s.text); }}, s.text)));
    suggestions.hidden = found.suggestions.length === 0 || document.activeElement !== input;
  }
  function choose(text) {
    const tokens = input.value.split(/(\s+)/);
    const required = tokens[tokens.length - 1].startsWith("+") ? "+" : "";
    tokens[tokens.length - 1] = required + text;
    input.value = tokens.join("");
    input.focus();
    if (text.endsWith(":")) suggest(); else suggestions.hidden = true;
  }
  let timer;
  input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => suggest().catch(() => {}), 120); });
  input.addEventListener("focus", () => suggest().catch(() => {}));
  input.addEventListener("blur", () => { suggestions.hidden = true; });
  input.addEventListener("keydown", (event) => { if (event.key === "Escape") suggestions.hidden = true; });

  async function run(offset) {
    Object.assign(state, {query: input.value.trim(), target: target.value, scope: scope.value,
                          namespace: namespace.value.trim() || "default", offset});
    history.replaceState(null, "", pageUrl("search", {query: state.query, target: state.target, scope: state.scope,
                                                      ns: state.namespace, offset: offset || ""}));
    suggestions.hidden = true;
    if (!state.query) return showKeys();
    const links = await linksOfNamespace(state.namespace);
    const found = await api(links.search, {query: state.query, target: state.target, scope: state.scope, limit: PAGE_SIZE, offset});
    const last = Math.min(found.offset + found.results.length, found.total);
    results.replaceChildren(
      el("p", {id: "total"}, found.total === 0 ? "No entity matches." :
         `${found.offset + 1}–${last} of ${found.total} entities`),
      el("ol", {id: "result-list", start: found.offset + 1}, ...found.results.map(resultItem)),
      el("div", {class: "pager"},
        el("button", {id: "previous", disabled: offset === 0, onclick: () => run(Math.max(0, offset - PAGE_SIZE))}, "Previous"),
        el("button", {id: "next", disabled: last >= found.total, onclick: () => run(offset + PAGE_SIZE)}, "Next")));
  }
  function resultItem(result) {
    const details = result.entity.details;
    return el("li", {class: "result"},
      el("span", {class: "badge"}, result.entity.type), " ", pageLink(result.links, details[details.length - 1].value), " ",
      el("span", {class: "muted"}, details.map(({key, value}) => `${key}=${value}`).join(", ")),
      el("ul", {class: "matches"}, ...result.matches.map((m) => el("li", {},
        el("span", {class: "badge " + m.scope.toLowerCase()}, m.scope), " ", m.kind, m.key ? ` ${m.key}` : "",
        ": ", el("span", {class: "value"}, m.value)))));
  }
  async function showKeys() {
    const found = await api((await linksOfNamespace(state.namespace)).suggest, {prefix: "", limit: 100});
    const keys = found.suggestions.filter((s) => s.type === "key");
    results.replaceChildren(el("h2", {}, "Metadata keys in use"),
      el("p", {class: "muted"}, "Pick a key to see its values, or type a value prefix."),
      el("ul", {id: "keys", class: "chips"}, ...keys.map((s) => el("li", {},
        el("button", {type: "button", onclick: () => { input.value = s.text; input.focus(); suggest(); }}, s.text)))));
  }
  form.addEventListener("submit", (event) => { event.preventDefault(); run(0).catch((error) => showError(results, error)); });
  await run(state.offset);
};
