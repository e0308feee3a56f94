// Entity page (Interaction 4 and R9 of the Metadata and Data Discovery design): USER and SYSTEM
// metadata apart, tags and properties, schema fields with their own tags, the schema's versions
// with what each changed, add and remove USER metadata, links to lineage. Run page (Interaction
// 3): what a run read and wrote, with times, its parent, root and children (links from the run
// answer), warnings, and its metadata.
"use strict";

function metadataTables(body, reload) {
  const sections = [];
  for (const scope of ["USER", "SYSTEM"]) {
    const {tags, properties} = body.metadata[scope];
    const shown = Object.entries(properties).filter(([key]) => !(scope === "SYSTEM" && key === "schema"));
    const userScope = scope === "USER";
    const remove = (kind, key) => el("button", {class: "remove", title: `remove ${key}`, "aria-label": `remove ${kind} ${key}`,
      onclick: () => send("DELETE", `${body.links[kind]}/${encodeURIComponent(key)}`).then(reload)}, "×");
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
      userScope ? editForms(body.links, reload) : null));
  }
  return sections;
}

function editForms(links, reload) {
  const tag = el("input", {id: "new-tag", placeholder: "tag", "aria-label": "new tag", required: true});
  const key = el("input", {id: "new-key", placeholder: "key", "aria-label": "property key", required: true});
  const value = el("input", {id: "new-value", placeholder: "value", "aria-label": "property value"});
  const problem = el("p", {class: "error", role: "alert", hidden: true});
  const submit = (request) => (event) => {
    event.preventDefault();
    request().then(reload).catch((error) => { problem.hidden = false; problem.textContent = error.message; });
  };
  return el("div", {class: "edit"},
    el("form", {id: "add-tag", onsubmit: submit(() => send("POST", links.tags, [tag.value]))},
       tag, el("button", {type: "submit"}, "Add tag")),
    el("form", {id: "add-property", onsubmit: submit(() => send("POST", links.properties, {[key.value]: value.value}))},
       key, value, el("button", {type: "submit"}, "Set property")),
    problem);
}

async function schemaSection(body) {
  const text = body.metadata.SYSTEM.properties.schema;
  if (!text || !body.links.fields) return null;
  const fields = JSON.parse(text).fields;
  // Each field's links (its metadata, its page, its provenance) come with the dataset's fields.
  const listed = await api(body.links.fields).catch(() => ({fields: []}));
  const linksOf = new Map(listed.fields.map((f) => [f.name, f.links]));
  const rows = await Promise.all(fields.slice(0, 200).map(async (field) => {
    const links = linksOf.get(field.name) || {};
    const tags = links.tags ? await api(links.tags).catch(() => ({USER: [], SYSTEM: []})) : {USER: [], SYSTEM: []};
    return el("tr", {},
      el("td", {}, pageLink(links, field.name)),
      el("td", {}, field.type), el("td", {}, field.nullable ? "yes" : "no"),
      el("td", {}, el("ul", {class: "chips"}, ...[...tags.USER, ...tags.SYSTEM].map((t) => el("li", {class: "tag"}, t)))),
      el("td", {}, links.provenancePage ? el("a", {href: BASE + links.provenancePage}, "provenance") : ""));
  }));
  return el("section", {id: "schema"}, el("h2", {}, `Schema (${fields.length} fields)`),
    el("table", {class: "schema"}, el("thead", {}, el("tr", {}, ...["field", "type", "nullable", "tags", ""].map((h) => el("th", {}, h)))),
       el("tbody", {}, ...rows)));
}

// What a schema version changed from the one before: "+name type", "−name type", "name: a → b".
function schemaChanges(changes) {
  if (!changes) return [el("li", {class: "muted"}, "first version")];
  const items = [
    ...changes.added.map((f) => el("li", {class: "added"}, `+ ${f.name} ${f.type}`)),
    ...changes.removed.map((f) => el("li", {class: "removed"}, `− ${f.name} ${f.type}`)),
    ...changes.retyped.map((f) => el("li", {class: "retyped"}, `${f.name}: ${f.before} → ${f.after}`)),
    ...changes.nullability.map((f) => el("li", {class: "nullability"},
      `${f.name}: ${f.after ? "optional" : "required"} (was ${f.before ? "optional" : "required"})`)),
  ];
  if (changes.reordered) items.push(el("li", {class: "reordered"}, "fields reordered"));
  return items.length ? items : [el("li", {class: "muted"}, "no field changed")];
}

// The schema versions API: each version, declared (checked for compatibility) or observed (a
// producer's report, kept whatever it changes), when it was reported, by whom, what it changed.
async function schemaVersionsSection(body) {
  if (!body.links.schemas) return null;
  const {versions} = await api(body.links.schemas).catch(() => ({versions: []}));
  if (!versions.length) return null;
  return el("section", {id: "schema-versions"}, el("h2", {}, `Schema versions (${versions.length})`),
    el("table", {class: "schema-versions"},
      el("thead", {}, el("tr", {}, ...["version", "source", "reported", "by", "changes"].map((h) => el("th", {}, h)))),
      el("tbody", {}, ...versions.slice(0, 50).map((v) => el("tr", {"data-version": String(v.version)},
        el("td", {}, String(v.version)), el("td", {}, el("span", {class: `badge ${v.source}`}, v.source)),
        el("td", {}, when(v.eventTime)), el("td", {class: "value"}, v.updater),
        el("td", {}, el("ul", {class: "changes"}, ...schemaChanges(v.changes))))))));
}

// A dataset's incidents (its writes marked bad: by a person, or a failed OpenLineage or GX check)
// and, when it has one, what they reached: the bad writes, each level's runs and the datasets they
// wrote with the fields holding what came from the bad writes, and which hold good data again.
async function incidentsSection(body) {
  if (!body.links.incidents) return null;
  const incidents = await api(body.links.incidents).catch(() => []);
  if (!incidents.length) return el("section", {id: "incidents"}, el("h2", {}, "Incidents"), el("p", {class: "muted"}, "none"));
  const blast = await api(body.links.blastRadius).catch(() => null);
  const runIds = (runs) => runs.map((run) => run.run_id).join(", ") || "—";
  const rows = blast ? [
    el("tr", {}, el("td", {}, "0"), el("td", {}, runIds(blast.badWrites)), el("td", {}, blast.dataset.name), el("td", {}, "all")),
    ...blast.levels.flatMap((level) => (level.datasets.length ? level.datasets : [null]).map((data) => el("tr", {},
      el("td", {}, String(level.level)), el("td", {}, runIds(level.runs)), el("td", {}, data ? data.name : "—"),
      el("td", {}, !data ? "" : data.fields === null ? "not recorded" : data.fields.map((f) => f.name).join(", ") || "none")))),
  ] : [];
  const names = (items) => items.map((item) => item.name).join(", ") || "none";
  return el("section", {id: "incidents"}, el("h2", {}, `Incidents (${incidents.length})`),
    el("table", {class: "incidents"},
      el("thead", {}, el("tr", {}, ...["bad from", "until", "source", "reason"].map((h) => el("th", {}, h)))),
      el("tbody", {}, ...incidents.slice(-20).reverse().map((item) => el("tr", {},
        el("td", {}, when(item.from)), el("td", {}, when(item.until)), el("td", {}, item.source),
        el("td", {class: "value"}, item.reason))))),
    blast ? el("div", {id: "blast-radius"}, el("h3", {}, "Blast radius"),
      el("table", {class: "blast"},
        el("thead", {}, el("tr", {}, ...["level", "runs", "dataset", "fields holding bad data"].map((h) => el("th", {}, h)))),
        el("tbody", {}, ...rows)),
      el("p", {id: "still-affected"}, "Still affected: ", names(blast.stillAffected)),
      el("p", {id: "recovered"}, "Rewritten since from good data: ", names(blast.recovered)),
      blast.truncated ? el("p", {class: "muted"}, "cut: more levels or runs lie beyond") : null,
      blast.hidden ? el("p", {class: "muted"}, `${blast.hidden} runs or datasets you may not read are left out`) : null)
      : null);
}

window.PAGES.entity = async function (main) {
  const version = param("version");
  const links = await linksOf(pageEntity());
  async function load() {
    const body = await api(links.metadata, {version});  // its links name its tags, properties and history
    const details = body.entity.details;
    const lineageLink = body.links.lineagePage
      ? el("a", {id: "lineage-link", href: BASE + body.links.lineagePage}, "Dataset lineage") : null;
    const changes = await api(body.links.history, {version}).catch(() => ({changes: []}));
    main.replaceChildren(
      el("h1", {}, el("span", {class: "badge"}, body.entity.type), " ", details[details.length - 1].value),
      el("p", {class: "muted", id: "entity-parts"}, details.map(({key, value}) => `${key}=${value}`).join(", ")),
      el("p", {}, lineageLink),
      el("div", {class: "scopes"}, ...metadataTables(body, load)),
      await schemaSection(body) || "",
      await schemaVersionsSection(body) || "",
      await incidentsSection(body) || "",
      el("section", {id: "history"}, el("h2", {}, "Recent changes"),
        el("ul", {}, ...changes.changes.slice(-10).reverse().map((c) => el("li", {},
          `${when(c.time)} ${c.scope} by ${c.updater}: +${JSON.stringify(c.additions)} −${JSON.stringify(c.deletions)}`)))));
  }
  await load();
};

// A linked run as the run answer gives it (parent, root, child): its page link, or "hidden".
function runLink(run) {
  if (!run) return el("span", {class: "muted"}, "none");
  if (run.type === "hidden") return el("span", {class: "muted"}, "a run you may not read");
  return pageLink(run.links, `${run.application}.${run.program} · ${run.run_id}`);
}

// Its place in a run hierarchy (OpenLineage's parent facet): parent, root, children.
function hierarchySection(run) {
  const children = run.children.map((child) => el("li", {},
    runLink(child), ` · ${child.status || "not recorded"} · started ${when(child.started_at)}`));
  return el("section", {id: "hierarchy"}, el("h2", {}, "Run hierarchy"),
    el("p", {id: "run-parent"}, "Parent: ", runLink(run.parent)),
    el("p", {id: "run-root"}, "Root: ", runLink(run.root)),
    el("h3", {}, `Children (${run.childCount})`),
    children.length ? el("ul", {id: "run-children"}, ...children) : el("p", {class: "muted"}, "no children"));
}

// Run-level lineage: the runs that wrote what this run read (upstream), and the runs that read
// what it wrote before the next write replaced it (downstream), with where the walk found nobody.
function runLineageSection(id, title, body) {
  const runs = body.runs.map((r) => el("li", {}, r.type === "hidden" ? el("span", {class: "muted"}, "a run you may not read")
      : pageLink(r.links, `${r.application}.${r.program} · ${r.run_id}`),
    ` · level ${r.level} · ${r.status || "not recorded"} · started ${when(r.started_at)}`));
  const ends = body.ends.map((e) => el("li", {class: "muted"}, `${e.dataset.name || "a dataset you may not read"}: ${e.reason}`));
  return el("section", {id}, el("h3", {}, title),
    runs.length ? el("ul", {class: "runs"}, ...runs) : el("p", {class: "muted"}, "no runs"),
    ends.length ? el("ul", {class: "ends"}, ...ends) : "",
    body.truncated ? el("p", {class: "muted"}, `cut at the ${body.truncatedBy} asked: more lies beyond`) : "");
}

window.PAGES.run = async function (main) {
  const links = await linksOf(pageEntity());
  const metadata = await api(links.metadata);
  const parts = Object.fromEntries(metadata.entity.details.map(({key, value}) => [key, value]));
  const run = await api(links.run);
  // A run known only as the parent or root of others has no accesses of its own.
  const found = run.recorded ? await api(links.accesses) : {accesses: []};
  const [upstream, downstream] = run.recorded
    ? await Promise.all(["upstream", "downstream"].map((direction) => api(links.lineage, {direction, levels: 3})))
    : [{runs: [], ends: []}, {runs: [], ends: []}];
  const reload = async () => {
    const body = await api(links.metadata);
    document.getElementById("run-metadata").replaceChildren(...metadataTables(body, reload));
  };
  main.replaceChildren(
    el("h1", {}, "Run ", el("span", {class: "value"}, parts.run)),
    el("p", {}, `${parts.type} ${parts.application}.${parts.program} · status `,
       el("strong", {id: "run-status"}, run.status || "not recorded"),
       ` · started ${when(run.started_at)} · stopped ${when(run.stopped_at)}`),
    run.warnings.length ? el("ul", {id: "run-warnings", class: "warnings"}, ...run.warnings.map((w) => el("li", {}, w)))
                        : "",
    hierarchySection(run),
    el("h2", {}, "Read and written"),
    el("table", {id: "accesses"}, el("thead", {}, el("tr", {}, ...["dataset", "type", "access", "component", "at"].map((h) => el("th", {}, h)))),
      el("tbody", {}, ...found.accesses.map((a) => el("tr", {class: a.access},
        el("td", {}, pageLink(a.links, a.name)),
        el("td", {}, a.type), el("td", {}, a.access), el("td", {}, a.component || ""), el("td", {}, when(a.accessed_at)))))),
    el("h2", {}, "Runs before and after"),
    runLineageSection("run-upstream", "Upstream: the runs that wrote what it read", upstream),
    runLineageSection("run-downstream", "Downstream: the runs that read what it wrote", downstream),
    el("div", {id: "run-metadata", class: "scopes"}));
  await reload();
};
