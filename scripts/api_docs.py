"""Render the plugin's OpenAPI document as Markdown: docs/api.md.

    PYTHONPATH=.:plugins .venv/bin/python scripts/api_docs.py > docs/api.md

Builds the app (``lineage_api.app.create_app()``; nothing connects to the warehouse), takes
``app.openapi()``, the document the API serves at ``/lineage/openapi.json`` (400 for bad
input, never 422), and writes one section per route module with, per path and method: summary and
description, parameters, request body, answers with their status codes and schema names;
then every schema with its fields. Hand-written guidance lives in docs/api-intro.md, which is
printed first.
"""

from __future__ import annotations

import contextlib
import copy
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

INTRO = Path(__file__).resolve().parents[1] / "docs" / "api-intro.md"
METHODS = ("get", "put", "post", "patch", "delete")

def one_line(text: str | None) -> str:
    """Text fit for a table cell: one line, pipes escaped, double backticks single."""
    return " ".join((text or "").split()).replace("|", "\\|").replace("``", "`")


def paragraphs(text: str | None) -> str:
    """A docstring as Markdown paragraphs (indentation removed, double backticks single)."""
    lines = [line.strip() for line in (text or "").strip().splitlines()]
    return "\n".join(lines).replace("``", "`")


def anchor(name: str) -> str:
    """The anchor GitHub gives the heading ``### name`` (schema names: letters and digits)."""
    return "schema-" + re.sub(r"[^a-z0-9_-]", "", name.lower())


def schema_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def type_of(schema: dict[str, Any] | None) -> str:
    """A short Markdown rendering of a JSON Schema: `string`, [Name](#schema-name), `array` of ..."""
    if not schema:
        return "any"
    if "$ref" in schema:
        name = schema_name(schema["$ref"])
        return f"[{name}](#{anchor(name)})"
    for combinator, joiner in (("anyOf", " or "), ("oneOf", " or "), ("allOf", " and ")):
        if combinator in schema:
            return joiner.join(dict.fromkeys(type_of(part) for part in schema[combinator]))
    if "const" in schema:
        return f"`{schema['const']!r}`"
    if "enum" in schema:
        return "one of " + ", ".join(f"`{value}`" for value in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(f"`{k}`" for k in kind)
    if kind == "array":
        return f"`array` of {type_of(schema.get('items'))}"
    if kind == "object":
        values = schema.get("additionalProperties")
        if isinstance(values, dict) and values:
            return f"`object` of {type_of(values)}"
        return "`object`"
    if kind is None:
        return "any"
    return f"`{kind}`" + (f" ({schema['format']})" if "format" in schema else "")


def limits(schema: dict[str, Any]) -> str:
    """Default and bounds of a parameter or field, for its table row."""
    parts = []
    if "default" in schema and schema["default"] not in (None, [], {}):
        parts.append(f"default `{schema['default']}`")
    for key, word in (("minimum", "≥"), ("maximum", "≤"), ("minLength", "length ≥"), ("maxLength", "length ≤"),
                      ("minItems", "items ≥"), ("maxItems", "items ≤")):
        if key in schema:
            parts.append(f"{word} {schema[key]}")
    if "pattern" in schema:
        parts.append(f"pattern `{schema['pattern']}`")
    return ", ".join(parts)


def content_schema(body: dict[str, Any]) -> tuple[str, str]:
    """(media type, rendered schema) of a request body or an answer; ('', '') without content."""
    for media, content in (body.get("content") or {}).items():
        return media, type_of(content.get("schema"))
    return "", ""


def route_modules(app: Any) -> dict[tuple[str, str], tuple[str, str]]:
    """(path, method) -> (module name, module docstring) of the function serving it."""
    found: dict[tuple[str, str], tuple[str, str]] = {}
    for route in app.routes:
        endpoint = getattr(route, "endpoint", None)
        if endpoint is None:
            continue
        module = sys.modules.get(endpoint.__module__)
        name = endpoint.__module__.rsplit(".", 1)[-1]
        doc = (module.__doc__ or "") if module else ""
        path = re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path)  # {target:path} is {target} in OpenAPI
        for method in getattr(route, "methods", None) or ():
            found[(path, method.lower())] = (name, doc)
    return found


def render_operation(prefix: str, path: str, method: str, operation: dict[str, Any], out: list[str]) -> None:
    out.append(f"### `{method.upper()} {prefix}{path}`")
    out.append("")
    summary = operation.get("summary")
    if summary:
        out.append(f"**{one_line(summary)}**." if not summary.endswith(".") else f"**{one_line(summary)}**")
        out.append("")
    if operation.get("description"):
        out.append(paragraphs(operation["description"]))
        out.append("")
    parameters = operation.get("parameters") or []
    if parameters:
        out.append("| parameter | in | required | type | default, limits | description |")
        out.append("| --- | --- | --- | --- | --- | --- |")
        for parameter in parameters:
            schema = parameter.get("schema") or {}
            description = parameter.get("description") or schema.get("description")
            out.append(f"| `{parameter['name']}` | {parameter.get('in', '')} | "
                       f"{'yes' if parameter.get('required') else 'no'} | {type_of(schema)} | {limits(schema)} | "
                       f"{one_line(description)} |")
        out.append("")
    body = operation.get("requestBody")
    if body:
        media, rendered = content_schema(body)
        required = "required" if body.get("required") else "optional"
        out.append(f"Request body ({required}, `{media}`): {rendered}."
                   + (f" {one_line(body['description'])}" if body.get("description") else ""))
        out.append("")
    responses = operation.get("responses") or {}
    if responses:
        out.append("| status | meaning | body |")
        out.append("| --- | --- | --- |")
        for status in sorted(responses, key=str):
            answer = responses[status]
            _, rendered = content_schema(answer)
            out.append(f"| {status} | {one_line(answer.get('description'))} | {rendered} |")
        out.append("")


def render_schema(name: str, schema: dict[str, Any], out: list[str]) -> None:
    out.append(f'<a id="{anchor(name)}"></a>')
    out.append("")
    out.append(f"### {name}")
    out.append("")
    if schema.get("description"):
        out.append(paragraphs(schema["description"]))
        out.append("")
    properties = schema.get("properties") or {}
    if not properties:
        out.append(f"Type: {type_of({k: v for k, v in schema.items() if k not in ('title', 'description')})}.")
        out.append("")
        return
    required = set(schema.get("required") or ())
    out.append("| field | type | required | description |")
    out.append("| --- | --- | --- | --- |")
    for field_name, field_schema in properties.items():
        detail = ", ".join(part for part in (one_line(field_schema.get("description")), limits(field_schema)) if part)
        out.append(f"| `{field_name}` | {type_of(field_schema)} | {'yes' if field_name in required else 'no'} | "
                   f"{detail} |")
    out.append("")


def render(app: Any) -> str:
    from lineage_api.app import URL_PREFIX

    document: dict[str, Any] = copy.deepcopy(app.openapi())  # what /lineage/openapi.json serves
    modules = route_modules(app)
    groups: dict[str, list[tuple[str, str, dict[str, Any]]]] = defaultdict(list)
    intros: dict[str, str] = {}
    for path, operations in (document.get("paths") or {}).items():
        for method in METHODS:
            operation = operations.get(method)
            if operation is None:
                continue
            tags = operation.get("tags")
            if tags:
                group, intro = tags[0], ""
            else:
                group, intro = modules.get((path, method), ("other", ""))
            groups[group].append((path, method, operation))
            intros.setdefault(group, intro)

    info = document.get("info") or {}
    out = [
        f"# {info.get('title', 'API')} API reference",
        "",
        "<!-- Generated by scripts/api_docs.py from the OpenAPI document; do not edit by hand. -->",
        "",
    ]
    if INTRO.exists():
        out += [INTRO.read_text().strip(), ""]
    out += [
        f"Generated from the OpenAPI document the plugin serves at `{URL_PREFIX}/openapi.json` "
        f"(version {info.get('version', '?')}, OpenAPI {document.get('openapi', '?')}). "
        "To regenerate it after changing a route or a model:",
        "",
        "```bash",
        "PYTHONPATH=.:plugins .venv/bin/python scripts/api_docs.py > docs/api.md",
        "```",
        "",
        "## Operations",
        "",
    ]
    for group in groups:
        count = len(groups[group])
        out.append(f"- [{group.replace('_', ' ').capitalize()}](#{group.replace('_', '-').lower()}) ({count})")
    out.append(f"- [Schemas](#schemas) ({len((document.get('components') or {}).get('schemas') or {})})")
    out.append("")
    for group, operations in groups.items():
        out.append(f"## {group.replace('_', ' ').capitalize()}")
        out.append("")
        if intros.get(group):
            out.append(paragraphs(intros[group]))
            out.append("")
        for path, method, operation in operations:
            render_operation(URL_PREFIX, path, method, operation, out)
    schemas = (document.get("components") or {}).get("schemas") or {}
    out += ["## Schemas", ""]
    for name in sorted(schemas):
        render_schema(name, schemas[name], out)
    return "\n".join(out).rstrip() + "\n"


def main() -> None:
    # Airflow's logging writes to stdout while the app is imported and built: keep it out of the document.
    with contextlib.redirect_stdout(sys.stderr):
        from lineage_api.app import create_app

        document = render(create_app())
    sys.stdout.write(document)


if __name__ == "__main__":
    main()
