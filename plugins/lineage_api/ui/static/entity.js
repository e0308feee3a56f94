// Entity page (seed 001 Interaction 4, R9): USER and SYSTEM metadata apart, tags and properties,
// schema fields with their own tags, add and remove USER metadata, links to lineage. Run page
// (Interaction 3): what a run read and wrote, with times and its metadata.
"use strict";

function metadataTables(body, path, reload) {
  const sections = [];
  for (const scope of ["USER", "SYSTEM"]) {
    const {tags, properties} = body.metadata[scope];
    const shown = Object.entries(properties).filter(([key]) => !(scope === "SYSTEM" && key === "schema"));
    const userScope = scope === "USER";
    const remove = (kind, key) => el("button", {class: "remove", title: `remove ${key}`, "aria-label": `remove ${kind} ${key}`,
      onclick: () => send("DELETE", `${path}/${kind}/${encodeURIComponent(key)}`).then(reload)}, "×");
    sections.push(el("section", {class: "scope", id: `scope-${scope.toLowerCase()}`},
      el("h2", {}, scope === "USER" ? "User metadata" : "System metadata"),
      el("h3", {}, "Tags"),
      tags.length ? el("ul", {class: "chips tags"}, ...tags.map((tag) => el("li", {class: "tag"},
                      el("span", {class: "value"}, tag), userScope ? remove("tags", tag) : null)))
                  : el("p", {class: "muted"}, "no tags"),
      el("h3", {}, "Properties"),
      shown.length ? el("table", {class: "properties"}, el("tbody", {}, ...shown.map(([key, value]) =>
                       el("tr", {}, el("th", {}, key), el("td", {class: "value"}, value),
                          userScope ? el("td", {}, remove("properties", key)) : null))))
                   : el("p", {class: "muted"}, "no properties"),
      userScope ? editForms(path, reload) : null));
  }
  return sections;
}

function editForms(path, reload) {
  const tag = el("input", {id: "new-tag", placeholder: "tag", "aria-label": "new tag", required: true});
  const key = el("input", {id: "new-key", placeholder: "key", "aria-label": "property key", required: true});
  const value = el("input", {id: "new-value", placeholder: "value", "aria-label": "property value"});
  const problem = el("p", {class: "error", role: "alert", hidden: true});
  const submit = (request) => (event) => {
    event.preventDefault();
    request().then(reload).catch((error) => { problem.hidden = false; problem.textContent = error.message; });
  };
  return el("div", {class: "edit"},
    el("form", {id: "add-tag", onsubmit: submit(() => send("POST", `${path}/tags`, [tag.value]))},
       tag, el("button", {type: "submit"}, "Add tag")),
    el("form", {id: "add-property", onsubmit: submit(() => send("POST", `${path}/properties`, {[key.value]: value.value}))},
       key, value, el("button", {type: "submit"}, "Set property")),
    problem);
}

async function schemaSection(body, ref) {
  const text = body.metadata.SYSTEM.properties.schema;
  if (!text) return null;
  const fields = JSON.parse(text).fields;
  const dataset = body.entity.details[1].value;
  const rows = await Promise.all(fields.slice(0, 200).map(async (field) => {
    const fieldRef = {namespace: ref.namespace, target: `${ref.target}/field/${encodeURIComponent(field.name)}`};
    const tags = await api(`${metadataPath(fieldRef)}/tags`).catch(() => ({USER: [], SYSTEM: []}));
    return el("tr", {},
      el("td", {}, el("a", {href: pageUrl("entity", {ns: ref.namespace, target: fieldRef.target})}, field.name)),
      el("td", {}, field.type), el("td", {}, field.nullable ? "yes" : "no"),
      el("td", {}, el("ul", {class: "chips"}, ...[...tags.USER, ...tags.SYSTEM].map((t) => el("li", {class: "tag"}, t)))),
      el("td", {}, el("a", {href: pageUrl("fields", {ns: ref.namespace, dataset, field: field.name})}, "provenance")));
  }));
  return el("section", {id: "schema"}, el("h2", {}, `Schema (${fields.length} fields)`),
    el("table", {class: "schema"}, el("thead", {}, el("tr", {}, ...["field", "type", "nullable", "tags", ""].map((h) => el("th", {}, h)))),
       el("tbody", {}, ...rows)));
}

window.PAGES.entity = async function (main) {
  const ref = {namespace: param("external") ? null : param("ns", "default"), target: param("target")};
  const version = param("version");
  const path = metadataPath(ref);
  async function load() {
    const body = await api(path, {version});
    const details = body.entity.details;
    const [first, second] = [details[0], details[1]];
    const lineageLink = first.key === "namespace" && details.length === 2 && ["dataset", "stream"].includes(second.key)
      ? el("a", {id: "lineage-link", href: pageUrl("lineage", {ns: first.value, type: second.key, name: second.value})}, "Dataset lineage")
      : null;
    const changes = await api(`${path}/history`, {version}).catch(() => ({changes: []}));
    main.replaceChildren(
      el("h1", {}, el("span", {class: "badge"}, body.entity.type), " ", details[details.length - 1].value),
      el("p", {class: "muted", id: "entity-parts"}, details.map(({key, value}) => `${key}=${value}`).join(", ")),
      el("p", {}, lineageLink),
      el("div", {class: "scopes"}, ...metadataTables(body, path, load)),
      await schemaSection(body, ref) || "",
      el("section", {id: "history"}, el("h2", {}, "Recent changes"),
        el("ul", {}, ...changes.changes.slice(-10).reverse().map((c) => el("li", {},
          `${when(c.time)} ${c.scope} by ${c.updater}: +${JSON.stringify(c.additions)} −${JSON.stringify(c.deletions)}`)))));
  }
  await load();
};

window.PAGES.run = async function (main) {
  const ns = param("ns", "default"), app = param("app"), type = param("type"), program = param("program"), run = param("run");
  const base = `v3/namespaces/${encodeURIComponent(ns)}/apps/${encodeURIComponent(app)}/${encodeURIComponent(type)}/${encodeURIComponent(program)}`;
  const found = await api(`${base}/runs/${encodeURIComponent(run)}/accesses`);
  const path = `${base}/runs/${encodeURIComponent(run)}/metadata`;
  const reload = async () => {
    const metadata = await api(path);
    document.getElementById("run-metadata").replaceChildren(...metadataTables(metadata, path, reload));
  };
  main.replaceChildren(
    el("h1", {}, "Run ", el("span", {class: "value"}, run)),
    el("p", {}, `${type} ${app}.${program} · status `, el("strong", {id: "run-status"}, found.status),
       ` · started ${when(found.started_at)} · stopped ${when(found.stopped_at)}`),
    el("h2", {}, "Read and written"),
    el("table", {id: "accesses"}, el("thead", {}, el("tr", {}, ...["dataset", "type", "access", "component", "at"].map((h) => el("th", {}, h)))),
      el("tbody", {}, ...found.accesses.map((a) => el("tr", {class: a.access},
        el("td", {}, entityLink([{key: "namespace", value: a.namespace}, {key: a.type, value: a.name}])),
        el("td", {}, a.type), el("td", {}, a.access), el("td", {}, a.component || ""), el("td", {}, when(a.accessed_at)))))),
    el("div", {id: "run-metadata", class: "scopes"}));
  await reload();
};
