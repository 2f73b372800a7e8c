#!/usr/bin/env python3
"""Writes docs/API.md, the control API reference, from docs/openapi.json: every path and method with
its summary, parameters, request body fields and responses, then the shared responses and every
schema's fields. Python's standard library only.

    tools/gen-api-docs.py                              # docs/openapi.json -> docs/API.md
    tools/gen-api-docs.py --spec FILE --out FILE

A test (DocsTests) runs this into a scratch directory and fails when docs/API.md differs.
"""

import argparse
import json
import os
import re

ROOT = os.path.dirname(os.path.abspath(__file__)).rsplit(os.sep, 1)[0]
METHODS = ["get", "put", "post", "delete", "patch", "head", "options"]


def one_line(text):
    return " ".join(str(text).split())


def cell(text):
    """Text that is safe inside a Markdown table cell."""
    return one_line(text).replace("|", "\\|")


def ref_name(ref):
    return ref.rsplit("/", 1)[-1]


def schema_anchor(name):
    return "schema-" + name.lower()


def response_anchor(name):
    return "response-" + name.lower()


def op_anchor(method, path):
    return (method + "-" + re.sub(r"[^a-z0-9]+", "-", path.lower())).strip("-")


def literal(value):
    return f"`{json.dumps(value)}`"


def type_of(schema):
    """A short, readable type: `string`, `integer 0...4`, `"a" \\| "b"`, `array of [Item](#...)`."""
    if not isinstance(schema, dict) or not schema:
        return "any"
    if "$ref" in schema:
        name = ref_name(schema["$ref"])
        return f"[{name}](#{schema_anchor(name)})"
    for key, word in (("oneOf", " or "), ("anyOf", " or ")):
        if key in schema and "type" not in schema and "properties" not in schema:
            return word.join(type_of(s) for s in schema[key])
    if "allOf" in schema and "type" not in schema and "properties" not in schema:
        return " and ".join(type_of(s) for s in schema["allOf"])
    if "const" in schema:
        return literal(schema["const"])
    if "enum" in schema:
        return " | ".join(literal(v) for v in schema["enum"])
    kind = schema.get("type", "any")
    kinds = kind if isinstance(kind, list) else [kind]
    words = []
    for k in kinds:
        if k == "array":
            words.append("array of " + type_of(schema.get("items", {})))
        elif k == "object" and "properties" not in schema and isinstance(schema.get("additionalProperties"), dict):
            words.append("object of " + type_of(schema["additionalProperties"]))
        else:
            words.append(k)
    text = " or ".join(words)
    if schema.get("format"):
        text += f" ({schema['format']})"
    return text


def constraints(schema):
    if not isinstance(schema, dict):
        return []
    facts = []
    lo = schema.get("minimum", schema.get("exclusiveMinimum"))
    hi = schema.get("maximum", schema.get("exclusiveMaximum"))
    if lo is not None or hi is not None:
        left = "" if lo is None else (f"> {lo}" if "exclusiveMinimum" in schema else f"≥ {lo}")
        right = "" if hi is None else (f"< {hi}" if "exclusiveMaximum" in schema else f"≤ {hi}")
        facts.append(", ".join(x for x in (left, right) if x))
    if schema.get("minLength") == 1:
        facts.append("not empty")
    elif "minLength" in schema:
        facts.append(f"at least {schema['minLength']} characters")
    if "maxLength" in schema:
        facts.append(f"at most {schema['maxLength']} characters")
    if "minItems" in schema:
        facts.append(f"at least {schema['minItems']} item" + ("" if schema["minItems"] == 1 else "s"))
    if "maxItems" in schema:
        facts.append(f"at most {schema['maxItems']} items")
    if "pattern" in schema:
        facts.append(f"pattern `{schema['pattern']}`")
    if "default" in schema:
        facts.append(f"default {literal(schema['default'])}")
    return facts


def fields(schema, prefix=""):
    """Rows (name, type, required, description) of an object schema, nested inline objects flattened
    with dotted names."""
    rows = []
    if not isinstance(schema, dict):
        return rows
    required = set(schema.get("required", []))
    for name, prop in schema.get("properties", {}).items():
        full = prefix + name
        description = one_line(prop.get("description", "")) if isinstance(prop, dict) else ""
        extra = constraints(prop)
        if extra:
            description = (description + " (" + "; ".join(extra) + ")").strip()
        rows.append((full, type_of(prop), name in required, description))
        if isinstance(prop, dict) and "properties" in prop:
            rows.extend(fields(prop, full + "."))
    return rows


def field_table(rows):
    out = ["| field | type | required | description |", "| --- | --- | --- | --- |"]
    for name, kind, required, description in rows:
        out.append(f"| `{name}` | {cell(kind)} | {'yes' if required else ''} | {cell(description)} |")
    return out


def schema_notes(schema):
    """What an object schema says beside its fields: its description, alternatives, extra keys."""
    notes = []
    if schema.get("description"):
        notes.append(one_line(schema["description"]))
    for key, word in (("anyOf", "at least one of"), ("oneOf", "exactly one of")):
        alts = schema.get(key)
        if alts and all(isinstance(a, dict) and set(a) == {"required"} for a in alts):
            notes.append(f"Requires {word}: " + ", ".join("`" + "` and `".join(a["required"]) + "`" for a in alts) + ".")
    if schema.get("additionalProperties") is False and "properties" in schema:
        notes.append("No other fields are accepted.")
    return notes


def describe_schema(schema, out, components=None):
    """A schema in place: its notes and field table, or just its type. With `components`, a
    reference to an object schema is written out too (a request body's fields)."""
    if isinstance(schema, dict) and "$ref" in schema:
        out.append(f"Schema: {type_of(schema)}.")
        target = (components or {}).get(ref_name(schema["$ref"]))
        if isinstance(target, dict) and "properties" in target:
            out.append("")
            describe_schema(target, out)
        return
    if isinstance(schema, dict) and "properties" in schema:
        notes = schema_notes(schema)
        if notes:
            out.extend(notes)
            out.append("")
        out.extend(field_table(fields(schema)))
        return
    out.append(f"Schema: {type_of(schema)}" + "".join(f"; {c}" for c in constraints(schema)) + ".")


def parameters(op_params, out):
    out.append("**Parameters**")
    out.append("")
    out.append("| name | in | type | required | description |")
    out.append("| --- | --- | --- | --- | --- |")
    for p in op_params:
        description = one_line(p.get("description", ""))
        extra = constraints(p.get("schema", {}))
        if extra:
            description = (description + " (" + "; ".join(extra) + ")").strip()
        out.append(f"| `{p['name']}` | {p.get('in', '')} | {cell(type_of(p.get('schema', {})))} | "
                   f"{'yes' if p.get('required') else ''} | {cell(description)} |")
    out.append("")


def request_body(body, out, components):
    out.append("**Request body**" + (" (required)" if body.get("required") else " (optional)"))
    out.append("")
    if body.get("description"):
        out.append(one_line(body["description"]))
        out.append("")
    for media, content in body.get("content", {}).items():
        if len(body.get("content", {})) > 1:
            out += [f"As `{media}`:", ""]
        describe_schema(content.get("schema", {}), out, components)
        out.append("")
        if "example" in content:
            out.append("Example:")
            out.append("")
            out.append("```json")
            out.append(json.dumps(content["example"], ensure_ascii=False))
            out.append("```")
            out.append("")


def response_target(response):
    """(description, schema text) of a response or a reference to a shared one."""
    if "$ref" in response:
        name = ref_name(response["$ref"])
        return f"[{name}](#{response_anchor(name)})", ""
    description = one_line(response.get("description", ""))
    schemas = []
    for media, content in response.get("content", {}).items():
        schemas.append(f"`{media}`: {type_of(content.get('schema', {}))}")
    return description, "; ".join(schemas)


def responses(op_responses, out):
    out.append("**Responses**")
    out.append("")
    out.append("| status | description | body |")
    out.append("| --- | --- | --- |")
    for status in sorted(op_responses, key=lambda s: (s == "default", s)):
        description, body = response_target(op_responses[status])
        out.append(f"| {status} | {cell(description)} | {cell(body)} |")
    out.append("")


def render(spec, spec_name):
    info = spec.get("info", {})
    out = [
        f"# {info.get('title', 'API')} {info.get('version', '')}".rstrip(),
        "",
        f"<!-- Generated by tools/gen-api-docs.py from {spec_name}; do not edit by hand. -->",
        "",
    ]
    if info.get("description"):
        out += [one_line(info["description"]), ""]
    servers = [s["url"] for s in spec.get("servers", [])]
    if servers:
        out += ["Server: " + ", ".join(f"`{u}`" for u in servers) + ".", ""]
    for name, scheme in spec.get("components", {}).get("securitySchemes", {}).items():
        kind = " ".join(x for x in (scheme.get("type"), scheme.get("scheme")) if x)
        out += [f"Security `{name}` ({kind}): {one_line(scheme.get('description', ''))}", ""]
    out += [f"How to use it, with examples: [SERVICE.md](SERVICE.md). This file is generated from `{spec_name}`:",
            "change that and run `tools/gen-api-docs.py`.", ""]

    operations = [(path, m, ops[m]) for path, ops in spec.get("paths", {}).items() for m in METHODS if m in ops]
    out += ["## Operations", "", "| method | path | summary |", "| --- | --- | --- |"]
    for path, method, op in operations:
        first = re.split(r"(?<=\.)\s", one_line(op.get("summary", "")), maxsplit=1)[0]
        out.append(f"| {method.upper()} | [`{path}`](#{op_anchor(method, path)}) | {cell(first)} |")
    out.append("")

    for path, method, op in operations:
        out += [f"### {method.upper()} {path}", f'<a id="{op_anchor(method, path)}"></a>', ""]
        if op.get("summary"):
            out += [one_line(op["summary"]), ""]
        if op.get("description"):
            out += [one_line(op["description"]), ""]
        params = spec.get("paths", {})[path].get("parameters", []) + op.get("parameters", [])
        if params:
            parameters(params, out)
        if op.get("requestBody"):
            request_body(op["requestBody"], out, spec.get("components", {}).get("schemas", {}))
        if op.get("responses"):
            responses(op["responses"], out)

    shared = spec.get("components", {}).get("responses", {})
    if shared:
        out += ["## Shared responses", ""]
        for name, response in shared.items():
            description, body = response_target(response)
            out += [f"### {name}", f'<a id="{response_anchor(name)}"></a>', "", description + (f" Body: {body}." if body else ""), ""]

    schemas = spec.get("components", {}).get("schemas", {})
    if schemas:
        out += ["## Schemas", ""]
        for name, schema in schemas.items():
            out += [f"### {name}", f'<a id="{schema_anchor(name)}"></a>', ""]
            describe_schema(schema, out)
            out.append("")
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--spec", default=os.path.join(ROOT, "docs", "openapi.json"))
    p.add_argument("--out", default=os.path.join(ROOT, "docs", "API.md"))
    a = p.parse_args()
    with open(a.spec, encoding="utf-8") as f:
        spec = json.load(f)
    text = render(spec, "docs/openapi.json")
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(a.out)


if __name__ == "__main__":
    main()
