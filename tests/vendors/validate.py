#!/usr/bin/env python3
"""Vendor contract tests: holds what Quarry's connectors send, and what the
fake vendors answer, to the vendors' OWN published API descriptions.

    target/py/bin/python tests/vendors/validate.py EXCHANGES.json
    target/py/bin/python tests/vendors/validate.py --scopes CONNECTOR

EXCHANGES.json is what the Rust contract test recorded ({"connector": ...,
"exchanges": [{"method", "url", "headers", "body", "response": {"status",
"headers", "body"}}]}). Each problem is one line on stdout,
`<connector>: <METHOD> <path>: <what is wrong> (<where the rule comes from>)`;
the exit status is 1 when there is any, else 0 after a one-line summary.
`--scopes CONNECTOR` checks the manifest's OAuth scopes only (they exist,
they are read-only, and the operations its routes reach accept one).

Per vendor, vendors/<vendor>/contract.toml names the descriptions (OpenAPI
3.x, Swagger 2.0, Google discovery documents, a GraphQL schema, TypeScript
types) and maps the URLs the connectors call onto the descriptions'
servers; vendors/<vendor>/facts.toml holds what the descriptions lack or get
wrong, each fact with its source. tests/vendors/README.md says more.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

ROOT = Path(__file__).resolve().parents[2]
VENDORS = ROOT / "vendors"
PLUGINS = ROOT / "plugins"
# The server every operation is given when openapi-core validates it alone.
SYNTH = "https://vendor.contract.invalid"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")

warnings.simplefilter("ignore")  # openapi-core warns about deprecated parameters


def rel(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def escape(part) -> str:
    return str(part).replace("~", "~0").replace("/", "~1")


def short(value, limit=120) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ConfigError(Exception):
    """A contract or facts file that cannot be applied: the test's fault."""


# --------------------------------------------------------------------------
# Problems
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    connector: str
    where: str  # "GET /search/issues", or "[oauth] scopes"
    what: str
    source: str

    def line(self) -> str:
        return f"{self.connector}: {self.where}: {self.what} ({self.source})"


class Report:
    def __init__(self):
        self.problems: list[Problem] = []
        self.seen: set[Problem] = set()

    def add(self, connector, where, what, source):
        p = Problem(connector, where, what, source)
        if p not in self.seen:
            self.seen.add(p)
            self.problems.append(p)


# --------------------------------------------------------------------------
# Descriptions, converted to OpenAPI 3 in memory
# --------------------------------------------------------------------------


NULL = {"nullable": True, "enum": [None]}


def nullable_refs(node):
    """OpenAPI 3.0 ignores the siblings of a `$ref`, and reads `nullable`
    only beside a `type`, yet descriptions write "X or null" three ways:
    `{"$ref": X, "nullable": true}` (Intercom's `assigned_to`, "null if
    there has been no change in assignment"), `{"allOf": [...], "nullable":
    true}` (Box's `parent`, "may be null for some folders such as the root
    folder") and an `allOf` member `{"nullable": true}` (Box's
    `shared_link`, "null if no shared link has been created"): the
    author's meaning, in the form 3.0 validators read."""
    if isinstance(node, list):
        return [nullable_refs(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: nullable_refs(value) for key, value in node.items()}
    if "$ref" in node and node.get("nullable") is True:
        others = {k: v for k, v in node.items() if k not in ("$ref", "nullable")}
        return dict(others, anyOf=[{"$ref": node["$ref"]}, NULL])
    members = node.get("allOf")
    if isinstance(members, list) and "type" not in node:
        kept = [m for m in members if m != {"nullable": True}]
        if node.get("nullable") is True or len(kept) < len(members):
            others = {k: v for k, v in node.items() if k != "nullable"}
            return {"anyOf": [dict(others, allOf=kept), NULL]}
    return node


class Described:
    """One OpenAPI 3.x document (as published, or converted in memory from
    Swagger 2.0, a Google discovery document or a facts file)."""

    def __init__(self, doc: dict, file: str, kind: str, version: str | None = None):
        self.v31 = str(doc.get("openapi", "3.0")).startswith("3.1")
        self.doc = doc if self.v31 else nullable_refs(doc)
        self.file = file  # repository-relative path, or facts file
        self.kind = kind
        self.version = version
        self._validators = {}

    def pointer(self, *parts) -> str:
        return f"{self.file}#/" + "/".join(escape(p) for p in parts)

    def resolve(self, node):
        seen = 0
        while isinstance(node, dict) and "$ref" in node and isinstance(node["$ref"], str):
            ref = node["$ref"]
            if not ref.startswith("#/"):
                raise ConfigError(f"{self.file}: only local $refs are supported ({ref})")
            target = self.doc
            for part in ref[2:].split("/"):
                part = part.replace("~1", "/").replace("~0", "~")
                target = target[part]
            if len(node) > 1 and self.v31:
                # OpenAPI 3.1: siblings of $ref apply too.
                extra = {k: v for k, v in node.items() if k != "$ref"}
                target = {"allOf": [target, extra]}
            node = target
            seen += 1
            if seen > 64:
                raise ConfigError(f"{self.file}: $ref loop at {ref}")
        return node

    def validator(self, schema: dict):
        """A JSON Schema validator of the document's dialect for a schema
        inside it (its $refs resolve against the document)."""
        key = id(schema)
        if key not in self._validators:
            from openapi_schema_validator import OAS30Validator, OAS31Validator

            cls = OAS31Validator if self.v31 else OAS30Validator
            root = {"components": self.doc.get("components", {}), "allOf": [schema]}
            if self.v31:
                root["$schema"] = "https://spec.openapis.org/oas/3.1/dialect/base"
            self._validators[key] = (cls(root), schema)
        return self._validators[key][0]


def load_json(path: Path):
    if not path.exists():
        raise ConfigError(f"{rel(path)} is missing (registry-fetched descriptions: run tools/vendor-descriptions)")
    with open(path, encoding="utf-8") as f:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            return yaml.safe_load(f)
        return json.load(f)


SCHEMA_KEYS_V2 = (
    "type", "format", "items", "enum", "default", "maximum", "minimum", "exclusiveMaximum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
    "multipleOf",
)


def swagger2_schema(node):
    """Swagger 2.0 schema objects are OpenAPI 3.0's but for x-nullable."""
    if isinstance(node, dict):
        out = {k: swagger2_schema(v) for k, v in node.items() if k != "x-nullable"}
        if node.get("x-nullable") is True:
            out["nullable"] = True
        if "$ref" in out and isinstance(out["$ref"], str):
            out["$ref"] = out["$ref"].replace("#/definitions/", "#/components/schemas/", 1)
        return out
    if isinstance(node, list):
        return [swagger2_schema(v) for v in node]
    return node


def swagger2_to_openapi3(sw: dict) -> dict:
    """Converts a Swagger 2.0 document to OpenAPI 3.0.3 (what the checks
    need: servers, parameters, bodies, responses, security)."""
    scheme = (sw.get("schemes") or ["https"])[0]
    server = f"{scheme}://{sw['host']}{sw.get('basePath', '')}".rstrip("/")
    doc = {
        "openapi": "3.0.3",
        "info": sw.get("info", {"title": "", "version": ""}),
        "servers": [{"url": server}],
        "paths": {},
        "components": {"schemas": {k: swagger2_schema(v) for k, v in sw.get("definitions", {}).items()}},
    }
    if "security" in sw:
        doc["security"] = sw["security"]
    schemes = {}
    for name, s in sw.get("securityDefinitions", {}).items():
        if s["type"] == "basic":
            schemes[name] = {"type": "http", "scheme": "basic"}
        elif s["type"] == "apiKey":
            schemes[name] = {"type": "apiKey", "name": s["name"], "in": s["in"]}
        elif s["type"] == "oauth2":
            flow = {"accessCode": "authorizationCode", "application": "clientCredentials"}.get(s["flow"], s["flow"])
            f = {"scopes": s.get("scopes", {})}
            if "authorizationUrl" in s:
                f["authorizationUrl"] = s["authorizationUrl"]
            if "tokenUrl" in s:
                f["tokenUrl"] = s["tokenUrl"]
            schemes[name] = {"type": "oauth2", "flows": {flow: f}}
    doc["components"]["securitySchemes"] = schemes

    def param(p):
        if "$ref" in p:
            name = p["$ref"].rsplit("/", 1)[1]
            p = sw["parameters"][name]
        return p

    consumes_all = sw.get("consumes", [])
    produces_all = sw.get("produces", ["application/json"])
    for path, item in sw.get("paths", {}).items():
        new_item = {}
        shared = [param(p) for p in item.get("parameters", [])]
        for method, op in item.items():
            if method not in METHODS:
                continue
            new_op = {k: v for k, v in op.items() if k not in ("parameters", "responses", "consumes", "produces")}
            params, form, required_form, body = [], {}, [], None
            names = {(p["name"], p["in"]) for p in map(param, op.get("parameters", []))}
            all_params = [p for p in shared if (p["name"], p["in"]) not in names] + [
                param(p) for p in op.get("parameters", [])
            ]
            consumes = op.get("consumes", consumes_all)
            for p in all_params:
                if p["in"] == "body":
                    media = next((c for c in consumes if "json" in c), "application/json")
                    body = {"content": {media: {"schema": swagger2_schema(p.get("schema", {}))}}}
                    body["required"] = bool(p.get("required"))
                elif p["in"] == "formData":
                    form[p["name"]] = {k: p[k] for k in SCHEMA_KEYS_V2 if k in p}
                    if p.get("required"):
                        required_form.append(p["name"])
                else:
                    schema = {k: p[k] for k in SCHEMA_KEYS_V2 if k in p}
                    new = {"name": p["name"], "in": p["in"], "schema": schema}
                    for k in ("required", "description"):
                        if k in p:
                            new[k] = p[k]
                    fmt = p.get("collectionFormat")
                    if p.get("type") == "array":
                        new["style"] = "form" if p["in"] == "query" else "simple"
                        new["explode"] = fmt == "multi"
                    params.append(new)
            if form:
                media = next((c for c in consumes if "form" in c), "application/x-www-form-urlencoded")
                schema = {"type": "object", "properties": form}
                if required_form:
                    schema["required"] = required_form
                body = {"content": {media: {"schema": schema}}}
            if params:
                new_op["parameters"] = params
            if body:
                new_op["requestBody"] = body
            responses = {}
            for status, r in op.get("responses", {}).items():
                new_r = {"description": r.get("description", "")}
                if "schema" in r:
                    media = op.get("produces", produces_all)[0]
                    new_r["content"] = {media: {"schema": swagger2_schema(r["schema"])}}
                if "headers" in r:
                    new_r["headers"] = {
                        h: {"schema": {k: v for k, v in spec.items() if k in SCHEMA_KEYS_V2}}
                        for h, spec in r["headers"].items()
                    }
                responses[str(status)] = new_r
            new_op["responses"] = responses
            new_item[method] = new_op
        doc["paths"][path] = new_item
    return doc


def discovery_schema(node, numeric=False):
    """A discovery document's JSON schema, as OpenAPI 3.0 schema objects."""
    if isinstance(node, list):
        return [discovery_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    is_number = node.get("type") in ("integer", "number")
    for k, v in node.items():
        if k in ("id", "enumDescriptions", "annotations", "location", "repeated", "required", "deprecated"):
            continue
        if k == "$ref":
            out["$ref"] = f"#/components/schemas/{v}"
        elif k in ("minimum", "maximum") and is_number:
            out[k] = int(v) if re.fullmatch(r"-?\d+", str(v)) else float(v)
        elif k == "default" and is_number and isinstance(v, str):
            out[k] = int(v) if re.fullmatch(r"-?\d+", v) else float(v)
        elif k == "default" and node.get("type") == "boolean" and isinstance(v, str):
            out[k] = v == "true"
        elif k == "properties":
            out[k] = {name: discovery_schema(s) for name, s in v.items()}
        elif k in ("items", "additionalProperties"):
            out[k] = discovery_schema(v)
        else:
            out[k] = v
    if node.get("deprecated") is True:
        out["deprecated"] = True
    return out


def discovery_to_openapi3(dd: dict, file: str) -> tuple[dict, dict]:
    """Converts a Google discovery document to OpenAPI 3.0.3; also returns
    each operation's discovery pointer and scopes."""
    server = (dd["rootUrl"] + dd.get("servicePath", "")).rstrip("/")
    scopes = dd.get("auth", {}).get("oauth2", {}).get("scopes", {})
    doc = {
        "openapi": "3.0.3",
        "info": {"title": dd.get("title", dd.get("name", "")), "version": dd.get("version", "")},
        "servers": [{"url": server}],
        "paths": {},
        "components": {
            "schemas": {name: discovery_schema(s) for name, s in dd.get("schemas", {}).items()},
            "securitySchemes": {
                "Oauth2": {
                    "type": "oauth2",
                    "flows": {
                        "authorizationCode": {
                            "authorizationUrl": "https://accounts.google.com/o/oauth2/auth",
                            "tokenUrl": "https://oauth2.googleapis.com/token",
                            "scopes": {k: v.get("description", "") for k, v in scopes.items()},
                        }
                    },
                }
            },
        },
    }
    common = dd.get("parameters", {})
    meta = {}

    def param(name, p):
        schema = discovery_schema(p)
        if p.get("repeated"):
            schema = {"type": "array", "items": schema}
        new = {"name": name, "in": "path" if p.get("location") == "path" else "query", "schema": schema}
        if p.get("required") or new["in"] == "path":
            new["required"] = True
        if p.get("repeated"):
            new["style"], new["explode"] = "form", True
        if "description" in p:
            new["description"] = p["description"]
        if p.get("deprecated"):
            new["deprecated"] = True
        return new

    def walk(resources, pointer):
        for rname, resource in resources.items():
            here = pointer + ["resources", rname]
            for mname, m in resource.get("methods", {}).items():
                path = "/" + (m.get("flatPath") or m["path"]).lstrip("/")
                params = [param(n, p) for n, p in m.get("parameters", {}).items()]
                own = {p["name"] for p in params}
                params += [param(n, p) for n, p in common.items() if n not in own]
                op = {"operationId": m.get("id", mname), "parameters": params}
                if "description" in m:
                    op["description"] = m["description"]
                if "request" in m:
                    op["requestBody"] = {
                        "content": {"application/json": {"schema": discovery_schema(m["request"])}}
                    }
                if "response" in m:
                    op["responses"] = {
                        "200": {
                            "description": "Successful response",
                            "content": {"application/json": {"schema": discovery_schema(m["response"])}},
                        }
                    }
                elif m.get("supportsMediaDownload"):
                    # The body is the file's bytes, in the type asked for.
                    op["responses"] = {"200": {"description": "The media", "content": {"*/*": {}}}}
                else:
                    op["responses"] = {"200": {"description": "Successful response"}}
                if m.get("scopes"):
                    op["security"] = [{"Oauth2": m["scopes"]}]
                doc["paths"].setdefault(path, {})[m["httpMethod"].lower()] = op
                meta[(m["httpMethod"].upper(), path)] = {
                    "source": f"{file}#/" + "/".join(escape(p) for p in here + ["methods", mname]),
                }
            walk(resource.get("resources", {}), here)

    walk(dd.get("resources", {}), [])
    return doc, meta


def facts_to_openapi3(vendor: str, ops: list[dict], file: str, schemas: dict | None = None) -> tuple[dict, dict]:
    """The operations a facts file declares, as an OpenAPI 3.1 document
    (each with its server) and their sources; `schemas` (the facts file's
    [schemas.<Name>] tables, each with its source) become its
    components, for `$ref = "#/components/schemas/<Name>"`."""
    # OpenAPI 3.1: facts' schemas are JSON Schema 2020-12 (const, type lists).
    doc = {"openapi": "3.1.0", "info": {"title": f"{vendor} facts", "version": "facts"}, "paths": {}}
    if schemas:
        for name, schema in schemas.items():
            if "x-source" not in schema:
                raise ConfigError(f"{file}: [schemas.{name}] has no x-source")
        doc["components"] = {"schemas": schemas}
    meta = {}
    for i, f in enumerate(ops):
        for key in ("method", "url", "source"):
            if key not in f:
                raise ConfigError(f"{file}: [[operation]] #{i + 1} has no {key}")
        url = f["url"]
        server = f.get("server")
        if server is None:
            parts = urlsplit(url.replace("{", "%7B").replace("}", "%7D"))
            server = unquote(f"{parts.scheme}://{parts.netloc}")
        if not url.startswith(server):
            raise ConfigError(f"{file}: operation {url}: its url does not start with its server {server}")
        path = url[len(server.rstrip("/")):] or "/"
        method = f["method"].upper()
        op = {"operationId": f.get("id", f"{method} {path}"), "parameters": [], "responses": {}}
        for name, p in f.get("query", {}).items():
            new = {"name": name, "in": "query", "schema": p.get("schema", {"type": "string"}), "x-source": p.get("source", f["source"])}
            if p.get("required"):
                new["required"] = True
            if p.get("explode") is not None:
                new["style"], new["explode"] = "form", bool(p["explode"])
            op["parameters"].append(new)
        for name, p in f.get("header", {}).items():
            new = {"name": name, "in": "header", "schema": p.get("schema", {"type": "string"}), "x-source": p.get("source", f["source"])}
            if p.get("required"):
                new["required"] = True
            op["parameters"].append(new)
        for name in re.findall(r"\{([^}]+)\}", path):
            op["parameters"].append({"name": name, "in": "path", "required": True, "schema": {"type": "string"}})
        if "body" in f:
            b = f["body"]
            medias = b.get("media", "application/json")
            op["requestBody"] = {
                "required": bool(b.get("required", True)),
                "content": {m: {"schema": b.get("schema", {})} for m in ([medias] if isinstance(medias, str) else medias)},
                "x-source": b.get("source", f["source"]),
            }
        for status, r in f.get("responses", {}).items():
            new = {"description": r.get("description", ""), "x-source": r.get("source", f["source"])}
            if "schema" in r or "media" in r:
                media = r.get("media", "application/json")
                new["content"] = {media: {"schema": r["schema"]} if "schema" in r else {}}
            op["responses"][str(status)] = new
        if not op["responses"]:
            op["responses"]["default"] = {"description": "not described"}
        op["servers"] = [{"url": server}]
        doc["paths"].setdefault(path, {})[method.lower()] = op
        meta[(method, path, server)] = {
            "source": f["source"],
            "scopes": f.get("scopes"),
            "auth": f.get("auth"),
        }
    return doc, meta


# --------------------------------------------------------------------------
# Operations and vendors
# --------------------------------------------------------------------------


def template_regex(template: str, tail: str = "") -> re.Pattern:
    out, pos = "", 0
    for m in re.finditer(r"\{\+?([^}]+)\}", template):
        out += re.escape(template[pos : m.start()])
        reserved = m.group(0).startswith("{+")
        out += "(.+)" if reserved else "([^/]+)"
        pos = m.end()
    out += re.escape(template[pos:])
    return re.compile("^" + out + tail + "$")


@dataclass
class Operation:
    described: Described
    method: str
    path: str
    servers: list[str]
    op: dict
    item: dict
    source: str
    scopes: list[str] | None = None  # any of them lets a caller use it; None: none named
    scopes_source: str = ""
    auth: list[str] | None = None  # facts operations: the credentials they take
    regex: re.Pattern = None
    literal: int = 0

    def __post_init__(self):
        self.regex = template_regex(self.path)
        self.literal = len(re.sub(r"\{[^}]*\}", "", self.path))

    @property
    def name(self) -> str:
        return f"{self.method} {self.path}"

    def at(self, suffix: str) -> str:
        """Where a part of the operation is described: a JSON pointer into
        the description, or the fact's own source for facts."""
        return self.source if self.described.kind == "facts" else self.source + suffix

    def parameters(self) -> list[dict]:
        """Path-level and operation-level parameters, resolved, operation's
        winning."""
        out = {}
        for p in self.item.get("parameters", []) + self.op.get("parameters", []):
            p = self.described.resolve(p)
            out[(p["name"], p["in"])] = p
        return list(out.values())


@dataclass
class Base:
    request: str  # URL prefix the connectors call (a template)
    server: str  # the description's server it stands for
    source: str
    regex: re.Pattern = None

    def __post_init__(self):
        request = self.request.rstrip("/")
        if request.startswith("//"):
            request = "https:" + request
        self.regex = template_regex(request, "(?P<rest>/.*)?")


def norm_server(url: str) -> str:
    url = url.rstrip("/")
    return "https:" + url if url.startswith("//") else url


def find_op_key(spec: str) -> tuple[str, str]:
    method, _, path = spec.strip().partition(" ")
    if not path:
        raise ConfigError(f"operation {spec!r}: expected 'METHOD /path'")
    return method.upper(), path


class Vendor:
    def __init__(self, name: str):
        self.name = name
        self.dir = VENDORS / name
        contract = self.dir / "contract.toml"
        if not contract.exists():
            raise ConfigError(f"{rel(contract)} is missing")
        with open(contract, "rb") as f:
            self.contract = tomllib.load(f)
        facts = self.dir / "facts.toml"
        self.facts_file = rel(facts)
        self.facts = {}
        if facts.exists():
            with open(facts, "rb") as f:
                self.facts = tomllib.load(f)
        self.connectors = self.contract.get("connectors", [])
        self.described: list[Described] = []
        self.operations: list[Operation] = []
        self.scope_list: dict[str, str] = {}  # scope -> where it is listed
        self.graphql = None
        self.typescript = None
        for d in self.contract.get("description", []):
            self.load(d)
        if self.facts.get("operation"):
            self.load_facts_operations()
        self.apply_facts()
        self.bases = self.make_bases()

    def fact(self, key) -> list[dict]:
        return self.facts.get(key, [])

    def fsrc(self, f: dict, what="source") -> str:
        if what not in f:
            raise ConfigError(f"{self.facts_file}: a fact has no {what}: {f}")
        return f[what]

    # -- loading ----------------------------------------------------------

    def path_of(self, d: dict) -> Path:
        return ROOT / d["file"]

    def load(self, d: dict):
        kind = d["kind"]
        if kind == "openapi":
            described = Described(load_json(self.path_of(d)), d["file"], kind, d.get("version"))
            self.add_openapi(described)
        elif kind == "swagger2":
            doc = swagger2_to_openapi3(load_json(self.path_of(d)))
            described = Described(doc, d["file"], kind, d.get("version"))
            self.add_openapi(described, swagger=load_json(self.path_of(d)))
        elif kind == "google-discovery":
            doc, meta = discovery_to_openapi3(load_json(self.path_of(d)), d["file"])
            described = Described(doc, d["file"], kind, d.get("version"))
            self.add_openapi(described, meta=meta)
            scopes = load_json(self.path_of(d)).get("auth", {}).get("oauth2", {}).get("scopes", {})
            for s in scopes:
                self.scope_list.setdefault(s, f"{d['file']}#/auth/oauth2/scopes/{escape(s)}")
        elif kind == "graph-permissions":
            self.graph_permissions = d
        elif kind == "graphql":
            from graphql import build_schema

            text = self.path_of(d).read_text(encoding="utf-8")
            self.graphql = {"schema": build_schema(text), "file": d["file"], "endpoint": d["endpoint"], "text": text}
        elif kind == "typescript":
            self.typescript = d
        else:
            raise ConfigError(f"{self.name}: unknown description kind {kind!r}")

    def add_openapi(self, described: Described, meta=None, swagger=None):
        doc = described.doc
        self.described.append(described)
        schemes = doc.get("components", {}).get("securitySchemes", {})
        for sname, scheme in schemes.items():
            if scheme.get("type") == "oauth2":
                for flow_name, flow in scheme.get("flows", {}).items():
                    for s in flow.get("scopes", {}):
                        src = f"{described.file}#/components/securitySchemes/{escape(sname)}/flows/{flow_name}/scopes"
                        if swagger is not None:
                            src = f"{described.file}#/securityDefinitions/{escape(sname)}/scopes"
                        self.scope_list.setdefault(s, src)
        root_servers = [s["url"] for s in doc.get("servers", [])] or ["/"]
        for path, item in doc.get("paths", {}).items():
            for method, op in item.items():
                if method not in METHODS:
                    continue
                servers = [s["url"] for s in op.get("servers", item.get("servers", []))] or root_servers
                source = described.pointer("paths", path, method)
                if meta and (method.upper(), path) in meta:
                    source = meta[(method.upper(), path)]["source"]
                o = Operation(described, method.upper(), path, [norm_server(s) for s in servers], op, item, source)
                security = op.get("security", doc.get("security"))
                scopes = set()
                for req in security or []:
                    for sname, lst in req.items():
                        if schemes.get(sname, {}).get("type") in ("oauth2", "openIdConnect"):
                            scopes.update(lst)
                if scopes:
                    o.scopes = sorted(scopes)
                    o.scopes_source = source + ("/scopes" if meta else "/security")
                    for s in scopes:
                        self.scope_list.setdefault(s, o.scopes_source)
                self.operations.append(o)

    def load_facts_operations(self):
        doc, meta = facts_to_openapi3(self.name, self.fact("operation"), self.facts_file, self.facts.get("schemas"))
        described = Described(doc, self.facts_file, "facts")
        self.described.append(described)
        for path, item in doc["paths"].items():
            for method, op in item.items():
                server = op["servers"][0]["url"]
                m = meta[(method.upper(), path, server)]
                o = Operation(described, method.upper(), path, [norm_server(server)], op, item, m["source"])
                if m["scopes"]:
                    o.scopes = list(m["scopes"])
                    o.scopes_source = m["source"]
                    for sc in o.scopes:
                        self.scope_list.setdefault(sc, m["source"])
                o.auth = m["auth"]
                self.operations.append(o)

    # -- facts ------------------------------------------------------------

    def op(self, spec: str) -> list[Operation]:
        """The operations a fact names: 'METHOD /path' (as described), or '*'."""
        if spec == "*":
            return list(self.operations)
        method, path = find_op_key(spec)
        found = [o for o in self.operations if o.method == method and o.path == path]
        if not found:
            raise ConfigError(f"{self.facts_file}: no operation {spec!r} in {self.name}'s descriptions")
        return found

    def apply_facts(self):
        # Known errors in a description that are schema keywords.
        for f in self.fact("known_wrong"):
            self.fsrc(f, "evidence")
            check = f.get("check")
            if check == "schema-keyword":
                for d in self.described:
                    if f.get("file") and d.file != f["file"]:
                        continue
                    drop_keyword(d.doc, f["keyword"], f.get("value"))
            elif check == "required":
                for o in self.op(f["operation"]):
                    for p in o.parameters():
                        if p["name"] == f["param"]:
                            p["required"] = False
            elif check != "response-body":
                raise ConfigError(f"{self.facts_file}: unknown known_wrong check {check!r}")
        # Parameters the descriptions do not declare.
        for f in self.fact("param"):
            for o in self.op(f["operation"]):
                new = {"name": f["name"], "in": f.get("in", "query"), "schema": f.get("schema", {"type": "string"}), "x-source": self.fsrc(f)}
                if f.get("explode") is not None:
                    new["style"], new["explode"] = "form", bool(f["explode"])
                o.op = dict(o.op)
                o.op["parameters"] = list(o.op.get("parameters", [])) + [new]
        # Responses the vendor documents outside the description.
        for f in self.fact("status"):
            for o in self.op(f.get("operation", "*")):
                responses = dict(o.op.get("responses", {}))
                if str(f["status"]) in responses:
                    continue
                new = {"description": f.get("description", ""), "x-source": self.fsrc(f)}
                if "schema" in f:
                    new["content"] = {f.get("media", "application/json"): {"schema": f["schema"]}}
                elif "media" in f:
                    new["content"] = {f["media"]: {}}
                responses[str(f["status"])] = new
                o.op = dict(o.op)
                o.op["responses"] = responses
        # Scopes: what operations accept when the description does not say.
        for f in self.fact("operation_scopes"):
            for o in self.op(f["operation"]):
                o.scopes = list(f["scopes"])
                o.scopes_source = self.fsrc(f)
        for f in self.fact("scope"):
            if "read_only" in f:
                self.fsrc(f)
            if "exists" in f:
                self.scope_list.setdefault(f["name"], f["exists"])
        # Graph's permissions files: which permissions reach which path.
        gp = getattr(self, "graph_permissions", None)
        if gp:
            perms = load_json(ROOT / gp["file"])
            for pname, perm in perms.get("permissions", {}).items():
                for ps in perm.get("pathSets", []):
                    if not any(k.startswith("Delegated") for k in ps.get("schemeKeys", [])):
                        continue
                    for method in ps.get("methods", []):
                        for path in ps.get("paths", {}):
                            for o in self.operations:
                                if o.method == method.upper() and self.alias(path) == o.path:
                                    o.scopes = sorted(set(o.scopes or []) | {pname})
                                    o.scopes_source = f"{gp['file']}#/permissions ({path})"
            scopes_file = gp.get("scopes_file")
            if scopes_file:
                for i, s in enumerate(load_json(ROOT / scopes_file).get("delegatedScopesList", [])):
                    self.scope_list.setdefault(s["value"], f"{scopes_file}#/delegatedScopesList/{i}")

    def alias(self, path: str) -> str:
        for f in self.fact("alias"):
            if path == f["request_path"]:
                return f["path"]
        return path

    def make_bases(self) -> list[Base]:
        servers = {s for o in self.operations for s in o.servers}
        bases = []
        for b in self.contract.get("base", []):
            if norm_server(b["server"]) not in servers:
                raise ConfigError(
                    f"{rel(self.dir / 'contract.toml')}: base server {b['server']!r} is none of the descriptions' servers ({sorted(servers)})"
                )
            bases.append(Base(b["request"], norm_server(b["server"]), b.get("source", rel(self.dir / "contract.toml"))))
        for s in sorted(servers):
            if s.startswith("http"):
                bases.append(Base(s, s, "the description's server"))
        return bases

    # -- finding ----------------------------------------------------------

    def version_of(self, headers) -> str | None:
        """The description version a request asks for, when the contract
        picks descriptions by a header (Intercom-Version)."""
        name = self.contract.get("version_header")
        if not name:
            return None
        sent = (headers or {}).get(name.lower())
        return sent[0] if sent else self.contract.get("default_version")

    def find(self, method: str, url: str, headers=None):
        """(operation, path as described, how) or (None, why, None)."""
        version = self.version_of(headers)
        if version is not None and not any(d.version == version for d in self.described):
            version = self.contract.get("default_version")
        parts = urlsplit(url)
        full = f"{parts.scheme}://{parts.netloc}{parts.path}"
        hits, near = [], []
        for bi, base in enumerate(self.bases):
            m = base.regex.match(full)
            if not m:
                continue
            rest = m.group("rest") or "/"
            described_path = self.alias(rest)
            for o in self.operations:
                if base.server not in o.servers:
                    continue
                if version is not None and o.described.version not in (None, version):
                    continue
                pm = o.regex.match(described_path)
                if not pm:
                    continue
                how = None
                if o.method != method:
                    alias = self.method_alias(method, o)
                    if not alias:
                        near.append(o)
                        continue
                    how = alias
                hits.append((how is not None, -o.literal, bi, o, described_path, how))
        if hits:
            hits.sort(key=lambda h: h[:3])
            _, _, _, o, path, how = hits[0]
            return o, path, how
        if near:
            return None, f"the description has {near[0].path} but not for {method} (only {', '.join(sorted({o.method for o in near}))})", None
        return None, "no operation in the vendor's descriptions (or facts) matches this URL", None

    def method_alias(self, method: str, o: Operation):
        for f in self.fact("method_alias"):
            if f["request_method"].upper() == method and f["described_method"].upper() == o.method:
                if f.get("operation", "*") == "*" or o in self.op(f["operation"]):
                    return f
        return None


def drop_keyword(node, keyword, value):
    if isinstance(node, dict):
        if keyword in node and (value is None or node[keyword] == value):
            del node[keyword]
        for v in node.values():
            drop_keyword(v, keyword, value)
    elif isinstance(node, list):
        for v in node:
            drop_keyword(v, keyword, value)


# --------------------------------------------------------------------------
# Strict bodies: keys the schema does not declare
# --------------------------------------------------------------------------


def applicable(described: Described, schema, instance, depth=0) -> list[dict]:
    """The schemas that apply to an instance: the schema itself, its allOf
    members, and those of its oneOf/anyOf branches the instance fits (all
    branches when it fits none), recursively."""
    schema = described.resolve(schema)
    if not isinstance(schema, dict) or depth > 32:
        return []
    out = [schema]
    for member in schema.get("allOf", []):
        out += applicable(described, member, instance, depth + 1)
    for key in ("oneOf", "anyOf"):
        branches = schema.get(key, [])
        if not branches:
            continue
        fitting = [b for b in branches if described.validator(described.resolve(b)).is_valid(instance)]
        for b in fitting or branches:
            out += applicable(described, b, instance, depth + 1)
    return out


def undeclared(described: Described, schemas: list, instance, pointer="") -> list[str]:
    """Pointers of the object keys no applicable schema declares, where some
    declares properties and none allows others (as if
    additionalProperties: false were written where nothing else is said)."""
    found = []
    leaves = []
    for s in schemas:
        leaves += applicable(described, s, instance)
    if isinstance(instance, dict):
        described_props = any("properties" in s for s in leaves)
        open_ = [s.get("additionalProperties") for s in leaves if s.get("additionalProperties", False) not in (False, None)]
        patterns = [(p, sub) for s in leaves for p, sub in s.get("patternProperties", {}).items()]
        for key, value in instance.items():
            subs = [s["properties"][key] for s in leaves if key in s.get("properties", {})]
            subs += [sub for p, sub in patterns if re.search(p, key)]
            if not subs:
                subs = [a for a in open_ if isinstance(a, dict)]
                if not open_ and described_props:
                    found.append(f"{pointer}/{escape(key)}")
                    continue
            found += undeclared(described, subs, value, f"{pointer}/{escape(key)}")
    elif isinstance(instance, list):
        items = [s["items"] for s in leaves if isinstance(s.get("items"), dict)]
        if items:
            for i, value in enumerate(instance):
                found += undeclared(described, items, value, f"{pointer}/{i}")
    return found


# --------------------------------------------------------------------------
# openapi-core: parameters, bodies, responses
# --------------------------------------------------------------------------


class CoreSpecs:
    """Each operation alone in a document, for openapi-core (security is
    checked here instead: see check_credential)."""

    def __init__(self):
        self.cache = {}

    def get(self, o: Operation):
        if id(o) in self.cache:
            return self.cache[id(o)]
        from jsonschema_path import SchemaPath
        from openapi_core import (
            V30RequestValidator,
            V30ResponseValidator,
            V31RequestValidator,
            V31ResponseValidator,
        )

        doc = o.described.doc
        op = {k: v for k, v in o.op.items() if k not in ("security", "servers")}
        op["parameters"] = o.parameters()
        # A schema declared for */* (HubSpot's errors) applies to the JSON
        # the vendor sends: give openapi-core a JSON entry to parse it by.
        responses = {}
        for status, r in op.get("responses", {}).items():
            r = o.described.resolve(r)
            content = r.get("content", {})
            if "*/*" in content and "schema" in content["*/*"] and "application/json" not in content:
                r = dict(r, content=dict(content, **{"application/json": content["*/*"]}))
            responses[status] = r
        op["responses"] = responses
        item = {o.method.lower(): op}
        spec = {
            "openapi": doc.get("openapi", "3.0.3"),
            "info": {"title": "one operation", "version": "contract"},
            "servers": [{"url": SYNTH}],
            "paths": {o.path: item},
            "components": doc.get("components", {}),
        }
        if "jsonSchemaDialect" in doc:
            spec["jsonSchemaDialect"] = doc["jsonSchemaDialect"]
        sp = SchemaPath.from_dict(spec)
        if o.described.v31:
            pair = (V31RequestValidator(sp, spec_validator_cls=None), V31ResponseValidator(sp, spec_validator_cls=None))
        else:
            pair = (V30RequestValidator(sp, spec_validator_cls=None), V30ResponseValidator(sp, spec_validator_cls=None))
        self.cache[id(o)] = pair
        return pair


def schema_errors(exc) -> list:
    """The jsonschema errors behind an openapi-core error, if any."""
    seen = exc
    while seen is not None:
        errs = getattr(seen, "schema_errors", None)
        if errs:
            return list(errs)
        seen = seen.__cause__ or seen.__context__
    return []


def describe_schema_error(e, prefix="") -> str:
    from jsonschema.exceptions import best_match

    def depth(err):
        return max([len(err.absolute_path)] + [depth(c) for c in err.context])

    # Into the branch that got furthest, while one did; where branches fail
    # equally deep (a mixed array fits neither kind), say how each fails.
    while e.context and e.validator in ("oneOf", "anyOf"):
        branches = defaultdict(list)
        for err in e.context:
            branches[err.relative_schema_path[0]].append(err)
        ranked = sorted(((max(depth(x) for x in errs), i) for i, errs in branches.items()), reverse=True)
        if len(ranked) > 1 and ranked[0][0] == ranked[1][0]:
            break
        best = best_match(branches[ranked[0][1]])
        if best is None:
            break
        e = best
    where = "/" + "/".join(escape(p) for p in e.absolute_path)
    where = prefix + ("" if where == "/" else where)
    if e.context and e.validator in ("oneOf", "anyOf"):
        by_branch = {}
        for err in e.context:
            by_branch.setdefault(err.relative_schema_path[0], [])
            by_branch[err.relative_schema_path[0]].append(err)
        by_branch = {i: best_match(errs) for i, errs in by_branch.items()}
        why = "; ".join(
            f"branch {i}: " + ("/".join(escape(p) for p in err.absolute_path)[len(where.strip('/')):].lstrip("/") or "/") + " " + short(err.message, 90)
            for i, err in sorted(by_branch.items())[:4]
        )
        msg = f"fits none of the {e.validator} branches ({why})"
    elif e.validator == "required":
        msg = e.message
    elif e.validator in ("type", "enum", "maximum", "minimum", "format", "maxLength", "minLength", "pattern", "const"):
        msg = f"{short(e.instance, 60)} fails {e.validator}: {short(e.validator_value, 160)}"
    elif e.validator == "additionalProperties":
        msg = e.message.split(" were unexpected")[0].split(" was unexpected")[0]
        msg = re.sub(r"^Additional properties are not allowed \((.*)$", r"keys \1 not allowed (additionalProperties: false)", msg)
    else:
        msg = short(e.message, 200)
    return f"{where or '/'}: {msg}"


def generic_path(pointer: str) -> str:
    return re.sub(r"/\d+(?=/|$)", "/*", pointer)


def explain(exc) -> list[str]:
    """openapi-core's error, as lines of text."""
    errs = schema_errors(exc)
    name = getattr(exc, "name", None)
    head = str(exc)
    if errs:
        return [describe_schema_error(e) for e in errs]
    cause = exc.__cause__
    text = head
    if cause is not None and str(cause) and str(cause) not in head:
        text = f"{head}: {cause}"
    return [short(text, 300)]


# --------------------------------------------------------------------------
# Checking exchanges
# --------------------------------------------------------------------------


def header_map(pairs) -> dict[str, list[str]]:
    out = defaultdict(list)
    for name, value in pairs or []:
        out[name.lower()].append(value)
    return out


def body_bytes(body) -> bytes:
    if body is None:
        return b""
    return body.encode("utf-8") if isinstance(body, str) else bytes(body)


def json_pointer_values(instance, pointer: str):
    """The values at a pointer whose segments may be '*' (every item)."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.lstrip("/").split("/")] if pointer.strip("/") else []
    values = [instance]
    def every(v):
        yield v
        children = v.values() if isinstance(v, dict) else v if isinstance(v, list) else []
        for c in children:
            yield from every(c)

    for part in parts:
        nxt = []
        if part == "**":
            values = [d for v in values for d in every(v)]
            continue
        for v in values:
            if part == "*" and isinstance(v, list):
                nxt += v
            elif isinstance(v, dict) and part in v:
                nxt.append(v[part])
            elif isinstance(v, list) and part.isdigit() and int(part) < len(v):
                nxt.append(v[int(part)])
        values = nxt
    return values


class Checker:
    def __init__(self, report: Report):
        self.report = report
        self.vendors: dict[str, Vendor] = {}
        self.core = CoreSpecs()
        self.matched: set[tuple[str, str]] = set()  # (vendor, operation)
        self.called: dict[str, set[str]] = defaultdict(set)  # connector -> operations
        self.typescript_jobs: list = []

    def vendor_of(self, connector: str) -> Vendor:
        for path in sorted(VENDORS.glob("*/contract.toml")):
            name = path.parent.name
            if name not in self.vendors:
                with open(path, "rb") as f:
                    if connector not in tomllib.load(f).get("connectors", []):
                        continue
                self.vendors[name] = Vendor(name)
            if connector in self.vendors[name].connectors:
                return self.vendors[name]
        raise ConfigError(f"no vendors/*/contract.toml lists the connector {connector!r}")

    # -- one exchange -----------------------------------------------------

    def check_exchange(self, connector: str, vendor: Vendor, x: dict):
        method = x["method"].upper()
        url = x["url"]
        parts = urlsplit(url)
        if vendor.graphql and url.split("?")[0] == vendor.graphql["endpoint"]:
            return self.check_graphql(connector, vendor, x)
        headers = header_map(x.get("headers"))
        o, path_or_why, alias = vendor.find(method, url, headers)
        if o is None:
            self.report.add(connector, f"{method} {parts.path}", path_or_why, f"{vendor.name}'s descriptions: " + ", ".join(sorted({d.file for d in vendor.described})))
            return
        self.matched.add((vendor.name, o.name))
        self.called[connector].add(o.name)
        where = f"{method} {o.path}" if o.method == method else f"{method} {o.path} (as {o.method})"
        add = lambda what, source: self.report.add(connector, where, what, source)
        query = parse_qsl(parts.query, keep_blank_values=True)
        body = body_bytes(x.get("body"))
        content_type = (headers.get("content-type") or [None])[0]
        # A method the vendor takes with its arguments in a form body too.
        if alias and alias.get("body") == "form-as-query" and body:
            if content_type and not content_type.startswith("application/x-www-form-urlencoded"):
                add(f"{method} with a {content_type} body; the vendor takes form bodies for this", alias["source"])
            else:
                query += parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
            body = b""
        self.check_credential(add, vendor, o, headers, query)
        self.check_query_names(add, vendor, o, query)
        self.check_limits(add, vendor, o, query, body, content_type)
        self.check_version_headers(add, vendor, o, headers)
        described = o.described
        request = self.core_request(vendor, o, path_or_why, query, headers, body, content_type)
        req_validator, resp_validator = self.core.get(o)
        for exc in req_validator.iter_errors(request):
            src = self.param_source(o, exc) or o.source
            kind = type(exc).__name__
            if kind in ("InvalidRequestBody", "RequestBodyValidationError") or "body" in kind.lower():
                body_src = o.op.get("requestBody", {}).get("x-source") or (o.at("/requestBody"))
                for line in explain(exc):
                    add(f"request body {line}", body_src)
            else:
                name, location = getattr(exc, "name", None), getattr(exc, "location", None)
                if name is None:
                    m = re.search(r"(\w+) parameter(?: error)?: (\S+)$", str(exc), re.I)
                    if m:
                        location, name = m.group(1).lower(), m.group(2)
                for line in explain(exc):
                    if name and schema_errors(exc):
                        at, _, what = line.partition(": ")
                        line = f"{location} parameter {name!r}" + ("" if at == "/" else f" {at}") + f": {what}"
                    add(line, src)
        if body and "requestBody" not in o.op:
            add("sends a body; the operation takes none", o.source)
        # Strict: keys the request body's schema does not declare.
        if body and "requestBody" in o.op and content_type:
            media = self.media_of(o.op["requestBody"], content_type, described)
            if media is not None and "schema" in media:
                value = self.parse_body(body, content_type)
                if value is not None:
                    for pointer in undeclared(described, [media["schema"]], value):
                        src = o.op["requestBody"].get("x-source") or (o.at("/requestBody"))
                        add(f"request body key {pointer} is not declared by the schema", src)
        response = x.get("response")
        if response is not None:
            self.check_response(connector, add, vendor, o, request, response, resp_validator)

    def media_of(self, body_spec: dict, content_type: str, described: Described):
        import fnmatch

        body_spec = described.resolve(body_spec)
        ct = content_type.split(";")[0].strip().lower()
        for key, media in body_spec.get("content", {}).items():
            if key == ct or fnmatch.fnmatch(ct, key):
                return media
        return None

    def parse_body(self, body: bytes, content_type: str):
        ct = content_type.split(";")[0].strip().lower()
        try:
            if ct.endswith("json"):
                return json.loads(body)
            if ct == "application/x-www-form-urlencoded":
                return dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
        except (ValueError, UnicodeDecodeError):
            return None
        return None

    def core_request(self, vendor, o: Operation, described_path, query, headers, body, content_type):
        from openapi_core.testing import MockRequest

        flat_headers = {k: v[0] for k, v in headers.items()}
        # Query parameters the host's credential stands in for (Slack's token).
        for f in vendor.fact("credential"):
            if f.get("operation", "*") != "*" and o not in vendor.op(f["operation"]):
                continue
            for name in f.get("satisfies_params", []):
                if self.credential_kind(headers) and not any(n == name for n, _ in query):
                    query = query + [(name, "(the Authorization header)")]
        return MockRequest(
            SYNTH,
            o.method.lower(),
            described_path,
            args=query,
            headers=flat_headers,
            data=body or None,
            content_type=content_type or "application/json",
        )

    def param_source(self, o: Operation, exc) -> str | None:
        name = getattr(exc, "name", None)
        if name is None:
            m = re.search(r"parameter(?: error)?: (\S+)$", str(exc))
            name = m.group(1) if m else None
        for p in o.parameters():
            if p["name"] == name:
                return p.get("x-source") or o.at(f"/parameters[{name}]")
        return None

    # -- credentials, parameters, limits, versions -------------------------

    def credential_kind(self, headers) -> str | None:
        value = (headers.get("authorization") or [""])[0].strip()
        scheme = value.split(" ", 1)[0].lower()
        return {"bearer": "bearer", "basic": "basic", "oauth": "oauth-header"}.get(scheme)

    def check_credential(self, add, vendor: Vendor, o: Operation, headers, query):
        sent = self.credential_kind(headers)
        # The facts naming this operation win over those for every one.
        for f in sorted(vendor.fact("credential"), key=lambda f: f.get("operation", "*") == "*"):
            if f.get("operation", "*") != "*" and o not in vendor.op(f["operation"]):
                continue
            if "accepts" in f:
                accepts = f["accepts"]
                if "none" in accepts or sent in accepts:
                    return
                add(f"credential {sent or 'none'} sent; the vendor takes {' or '.join(accepts)} here", f["source"])
                return
        if o.auth is not None:
            if not o.auth or "none" in o.auth or sent in o.auth:
                return
            add(f"credential {sent or 'none'} sent; the operation takes {' or '.join(o.auth)}", o.source)
            return
        doc = o.described.doc
        security = o.op.get("security", doc.get("security"))
        if not security:
            return
        schemes = doc.get("components", {}).get("securitySchemes", {})
        names = [n for n, _ in query]

        def satisfied(name):
            s = schemes.get(name, {})
            t = s.get("type")
            if t == "http":
                return sent == s.get("scheme", "").lower()
            if t in ("oauth2", "openIdConnect"):
                return sent == "bearer"
            if t == "apiKey":
                if s.get("in") == "header":
                    return s["name"].lower() in headers
                if s.get("in") == "query":
                    return s["name"] in names
            return False

        if any(all(satisfied(n) for n in req) for req in security):
            return
        wanted = " or ".join("+".join(req) or "(none)" for req in security)
        add(f"credential {sent or 'none'} sent satisfies none of the security requirements ({wanted})", o.at("/security"))

    def check_query_names(self, add, vendor: Vendor, o: Operation, query):
        declared = {p["name"]: p for p in o.parameters() if p["in"] == "query"}
        patterned = [(template_regex(n), p) for n, p in declared.items() if "{" in n]
        for name, count in Counter(n for n, _ in query).items():
            p = declared.get(name) or next((p for r, p in patterned if r.match(name)), None)
            if p is None:
                add(f"query parameter {name!r} is not declared by the operation", o.at("/parameters"))
                continue
            if count > 1:
                schema = o.described.resolve(p.get("schema", {}))
                explode = p.get("explode", p.get("style", "form") == "form")
                if not (schema.get("type") == "array" and explode):
                    add(f"query parameter {name!r} sent {count} times; it takes one value", p.get("x-source") or o.at("/parameters"))
            if "{" in p["name"]:
                # Named by a pattern (Salesforce's {sobject}.limit): the
                # value is checked here, openapi-core cannot match the name.
                schema = o.described.resolve(p.get("schema", {}))
                for n, v in query:
                    if n == name:
                        err = check_scalar(o.described, schema, v)
                        if err:
                            add(f"query parameter {name!r}: {err}", p.get("x-source") or o.source)

    def check_limits(self, add, vendor: Vendor, o: Operation, query, body, content_type):
        for f in vendor.fact("limit"):
            if o not in vendor.op(f["operation"]):
                continue
            values = []
            if "param" in f:
                values = [v for n, v in query if n == f["param"]]
                what = f"query parameter {f['param']!r}"
            elif "body" in f and body and content_type:
                parsed = self.parse_body(body, content_type)
                values = json_pointer_values(parsed, f["body"]) if parsed is not None else []
                what = f"request body {f['body']}"
            if "max_items" in f:
                for v in values:
                    if isinstance(v, list) and len(v) > f["max_items"]:
                        add(f"{what} has {len(v)} items, above the maximum {f['max_items']}", self.fsrc(vendor, f))
                values = [v for v in values if not isinstance(v, list)]
            if "split" in f:
                values = [part for v in values if isinstance(v, str) for part in v.split(f["split"])]
            for v in values:
                if "enum" in f and v not in f["enum"]:
                    add(f"{what} holds {v!r}, not one of {short(', '.join(map(str, f['enum'])), 160)}", self.fsrc(vendor, f))
                if "maximum_length" in f and len(str(v)) > f["maximum_length"]:
                    add(f"{what} is {len(str(v))} characters long, above the maximum {f['maximum_length']}", self.fsrc(vendor, f))
                if "pattern" in f and not re.fullmatch(f["pattern"], str(v)):
                    add(f"{what} holds {v!r}, which does not match {f['pattern']}", self.fsrc(vendor, f))
                try:
                    n = float(v)
                except (TypeError, ValueError):
                    continue
                if "maximum" in f and n > f["maximum"]:
                    add(f"{what} is {v}, above the maximum {f['maximum']}", self.fsrc(vendor, f))
                if "minimum" in f and n < f["minimum"]:
                    add(f"{what} is {v}, below the minimum {f['minimum']}", self.fsrc(vendor, f))

        for f in vendor.fact("required"):
            if o not in vendor.op(f["operation"]) or not (body and content_type):
                continue
            parsed = self.parse_body(body, content_type)
            for i, v in enumerate(json_pointer_values(parsed, f["body"]) if parsed is not None else []):
                if not isinstance(v, dict):
                    continue
                for key in f["keys"]:
                    if key not in v:
                        add(f"request body {f['body']}: {key!r} is required", self.fsrc(vendor, f))

    def fsrc(self, vendor: Vendor, f: dict) -> str:
        return vendor.fsrc(f)

    def check_version_headers(self, add, vendor: Vendor, o: Operation, headers):
        for f in vendor.fact("version_header"):
            if f.get("operation", "*") != "*" and o not in vendor.op(f["operation"]):
                continue
            sent = headers.get(f["name"].lower())
            values = list(f.get("values", []))
            if "values_from" in f:
                values += pointer_get(vendor, f["values_from"])
            if not sent:
                if f.get("required"):
                    add(f"header {f['name']} is missing; the vendor requires it", vendor.fsrc(f))
                continue
            for v in sent:
                if v not in values:
                    add(f"header {f['name']}: {v!r} is not a version the vendor publishes ({', '.join(values)})", vendor.fsrc(f))

    # -- responses ----------------------------------------------------------

    def check_response(self, connector, add, vendor: Vendor, o: Operation, request, response, validator):
        from openapi_core.testing import MockResponse

        status = int(response.get("status", 0))
        headers = header_map(response.get("headers"))
        content_type = (headers.get("content-type") or [None])[0]
        body = body_bytes(response.get("body"))
        skip_body = [
            f for f in vendor.fact("known_wrong")
            if f.get("check") == "response-body" and o in vendor.op(f["operation"])
            and str(f.get("status", status)) == str(status)
        ]
        mock = MockResponse(body, status_code=status, headers={k: v[0] for k, v in headers.items()}, content_type=content_type)
        responses = o.op.get("responses", {})
        for exc in validator.iter_errors(request, mock):
            kind = type(exc).__name__
            if kind == "ResponseNotFound":
                declared = ", ".join(sorted(responses)) or "none"
                add(f"response status {status} is not declared for the operation (declared: {declared})", o.at("/responses"))
                continue
            if skip_body and kind in ("InvalidData", "MediaTypeNotFound", "DataValidationError", "MissingData"):
                continue
            resp_spec = self.response_spec(o, status)
            src = (resp_spec or {}).get("x-source") or o.at(f"/responses/{self.response_key(o, status)}")
            if kind == "MediaTypeNotFound":
                add(f"response {status}: content type {content_type!r} is not declared for it", src)
                continue
            # One line per problem and place, array items folded (/items/*).
            places = defaultdict(set)
            for line in explain(exc):
                where, _, what = line.partition(": ")
                places[(generic_path(where), what)].add(where)
            for (where, what), seen in places.items():
                add(f"response {status} body {where}: {what}" + (f" (in {len(seen)} items)" if len(seen) > 1 else ""), src)
        if vendor.typescript and 200 <= status < 300 and not skip_body:
            ts = vendor.typescript.get("responses", {}).get(o.name)
            if ts and body:
                try:
                    value = json.loads(body)
                except ValueError:
                    return
                self.typescript_jobs.append((connector, vendor, o, status, ts, value))

    def response_key(self, o, status):
        responses = o.op.get("responses", {})
        for key in (str(status), f"{str(status)[0]}XX", "default"):
            if key in responses:
                return key
        return str(status)

    def response_spec(self, o, status):
        return o.described.resolve(o.op.get("responses", {}).get(self.response_key(o, status), {}))

    # -- Notion's responses: the SDK's TypeScript types ----------------------

    def run_typescript(self):
        jobs, self.typescript_jobs = self.typescript_jobs, []
        by_vendor = defaultdict(list)
        for job in jobs:
            by_vendor[job[1].name].append(job)
        for name, jobs in by_vendor.items():
            vendor = jobs[0][1]
            ts = vendor.typescript
            types_dir = ROOT / ts["dir"]
            compiler = ROOT / ts["compiler"]
            src = f"{ts['package']} types ({ts['dir']})"
            if not compiler.exists():
                for connector, _, o, status, t, _ in jobs:
                    self.report.add(connector, o.name, f"the TypeScript compiler is missing ({rel(compiler)}): run tools/vendor-descriptions", src)
                continue
            with tempfile.TemporaryDirectory(prefix="quarry-ts-") as tmp:
                lines = ["// Generated by tests/vendors/validate.py: the fake's answers, typed."]
                imports = sorted({(t["module"], t["type"]) for _, _, _, _, t, _ in jobs})
                for module, typ in imports:
                    lines.append(f'import type {{ {typ} }} from "{(types_dir / module).as_posix()}";')
                lines.append("type DeepMutable<T> = T extends object ? { -readonly [K in keyof T]: DeepMutable<T[K]> } : T;")
                lines.append("declare function fromJson<T>(value: T): DeepMutable<T>;")
                owner = {}
                for i, (connector, _, o, status, t, value) in enumerate(jobs):
                    owner[len(lines) + 1] = i
                    # A call's result is not a fresh object literal: keys the
                    # type does not name are allowed (vendors add fields),
                    # missing and mistyped ones are not.
                    lines.append(f"const r{i}: {t['type']} = fromJson({json.dumps(value, ensure_ascii=False)} as const);")
                Path(tmp, "check.ts").write_text("\n".join(lines) + "\n", encoding="utf-8")
                config = {
                    "compilerOptions": {
                        "noEmit": True, "strict": True, "lib": ["es2015"], "types": [], "skipLibCheck": True,
                        "pretty": False, "module": "esnext", "moduleResolution": "bundler", "target": "es2020",
                    },
                    "files": ["check.ts"],
                }
                Path(tmp, "tsconfig.json").write_text(json.dumps(config), encoding="utf-8")
                node = os.environ.get("NODE", "node")
                run = subprocess.run([node, str(compiler), "-p", str(Path(tmp, "tsconfig.json"))], capture_output=True, text=True, cwd=tmp)
                output = run.stdout + run.stderr
                current = None
                messages = defaultdict(list)
                for line in output.splitlines():
                    m = re.match(r"^check\.ts\((\d+),(\d+)\): error (TS\d+): (.*)$", line)
                    if m:
                        current = owner.get(int(m.group(1)))
                        messages[current].append(m.group(4))
                    elif line.startswith(" ") and current is not None:
                        messages[current].append(line.strip())
                    elif line.strip():
                        current = None
                        messages[None].append(line.strip())
                for i, msgs in messages.items():
                    if i is None:
                        if run.returncode != 0:
                            for connector, _, o, _, _, _ in jobs[:1]:
                                self.report.add(connector, o.name, "the TypeScript check failed: " + short(" ".join(msgs), 300), src)
                        continue
                    connector, _, o, status, t, _ = jobs[i]
                    # The first line names the type; the last ones, the place.
                    detail = " / ".join(msgs[-3:]) if len(msgs) > 1 else msgs[0]
                    self.report.add(connector, o.name, f"response {status} body is not a {t['type']}: {short(detail, 400)}", f"{src}/{t['module']}.d.ts {t['type']}")

    # -- Linear: GraphQL ------------------------------------------------------

    def check_graphql(self, connector, vendor: Vendor, x: dict):
        from graphql import GraphQLError, parse, validate
        from graphql.execution.values import get_variable_values
        from graphql.utilities import get_operation_ast

        gq = vendor.graphql
        schema = gq["schema"]
        method = x["method"].upper()
        where = f"{method} {urlsplit(x['url']).path}"
        src = gq["file"]
        rules = vendor.facts.get("graphql", {})
        add = lambda what, source: self.report.add(connector, where, what, source)
        http_src = rules.get("http_source", "https://graphql.github.io/graphql-over-http/draft/")
        if method != "POST":
            add(f"{method}: the GraphQL endpoint is called with POST", http_src)
            return
        headers = header_map(x.get("headers"))
        sent = self.credential_kind(headers)
        if rules.get("auth") and sent not in rules["auth"]:
            add(f"credential {sent or 'none'} sent; the vendor takes {' or '.join(rules['auth'])}", rules.get("auth_source", http_src))
        try:
            payload = json.loads(body_bytes(x.get("body")) or b"null")
        except ValueError as e:
            add(f"request body is not JSON: {e}", http_src)
            return
        if not isinstance(payload, dict) or not isinstance(payload.get("query"), str):
            add("request body is not {query, variables?, operationName?} with a string query", http_src)
            return
        for key in payload:
            if key not in ("query", "variables", "operationName", "extensions"):
                add(f"request body key /{key} is not a GraphQL request parameter", http_src)
        try:
            document = parse(payload["query"])
        except GraphQLError as e:
            add(f"query does not parse: {e.message}", src)
            return
        errors = validate(schema, document)
        for e in errors:
            add(f"query: {e.message}", src)
        if errors:
            return
        operation = get_operation_ast(document, payload.get("operationName"))
        if operation is None:
            add("no operation to run (several and no operationName?)", http_src)
            return
        variables = payload.get("variables") or {}
        coerced = get_variable_values(schema, operation.variable_definitions or [], variables)
        if isinstance(coerced, list):
            for e in coerced:
                add(f"variables: {e.message}", src)
            return
        for name in variables:
            if name not in {v.variable.name.value for v in operation.variable_definitions or []}:
                add(f"variables: ${name} is not a variable of the operation", src)
        root_type = {"query": schema.query_type, "mutation": schema.mutation_type}.get(operation.operation.value)
        fields = [s.name.value for s in operation.selection_set.selections if hasattr(s, "name")]
        for fname in fields:
            self.matched.add((vendor.name, f"{operation.operation.value} {fname}"))
            self.called[connector].add(f"{operation.operation.value} {fname}")
        self.check_graphql_limits(add, vendor, operation, variables)
        response = x.get("response")
        if response is None:
            return
        status = int(response.get("status", 0))
        statuses = {str(f["status"]): f for f in rules.get("status", [])}
        if str(status) not in statuses:
            add(f"response status {status} is not one the vendor documents for its GraphQL endpoint ({', '.join(sorted(statuses))})", rules.get("status_source", http_src))
        try:
            result = json.loads(body_bytes(response.get("body")) or b"null")
        except ValueError:
            add(f"response {status} body is not JSON", http_src)
            return
        if not isinstance(result, dict) or not ({"data", "errors"} & set(result)):
            add(f"response {status} body has neither data nor errors", "https://spec.graphql.org/October2021/#sec-Response-Format")
            return
        for key in result:
            if key not in ("data", "errors", "extensions"):
                add(f"response {status} body key /{key} is not a GraphQL response key", "https://spec.graphql.org/October2021/#sec-Response-Format")
        for i, e in enumerate(result.get("errors") or []):
            if not isinstance(e, dict) or not isinstance(e.get("message"), str):
                add(f"response {status} body /errors/{i} has no string message", "https://spec.graphql.org/October2021/#sec-Errors")
        data = result.get("data")
        if data is not None:
            for line in graphql_result_problems(schema, document, operation, variables, data):
                add(f"response {status} body {line}", src)

    def check_graphql_limits(self, add, vendor, operation, variables):
        for f in vendor.fact("limit"):
            if "argument" not in f:
                continue
            field_name, arg = f["argument"].split(".", 1)
            for sel in operation.selection_set.selections:
                if getattr(sel, "name", None) is None or sel.name.value != field_name:
                    continue
                for a in sel.arguments:
                    if a.name.value != arg:
                        continue
                    v = a.value
                    value = variables.get(v.name.value) if v.kind == "variable" else getattr(v, "value", None)
                    try:
                        n = float(value)
                    except (TypeError, ValueError):
                        continue
                    if "maximum" in f and n > f["maximum"]:
                        add(f"argument {f['argument']} is {value}, above the maximum {f['maximum']}", vendor.fsrc(f))


def graphql_result_problems(schema, document, operation, variables, data) -> list[str]:
    """What is wrong with a response's data for the operation: graphql-core
    executes the document over the recorded data (wrong types, nulls where
    the schema has non-null), and the data must hold exactly the fields
    selected."""
    from graphql import execute
    from graphql.type import (
        GraphQLEnumType,
        GraphQLList,
        GraphQLNonNull,
        GraphQLObjectType,
        GraphQLScalarType,
        get_named_type,
        is_abstract_type,
    )

    problems = []
    missing = []

    def resolver(source, info, **args):
        key = info.path.key
        if isinstance(source, dict):
            if key not in source:
                missing.append("/" + "/".join(str(k) for k in info.path.as_list()))
                return None
            return source[key]
        return None

    result = execute(schema, document, root_value=data, variable_values=variables, field_resolver=resolver)
    for e in result.errors or []:
        where = "/data/" + "/".join(str(p) for p in (e.path or []))
        problems.append(f"{generic_path(where)}: {e.message}")
    for m in missing:
        problems.append(f"{generic_path('/data' + m)}: selected but missing")

    # Exact keys and JSON types of scalars (execution coerces 1 to "1").
    def walk(value, selections, parent_type, pointer):
        if value is None:
            return
        fields = {}
        collect(selections, fields)
        if not isinstance(value, dict):
            return
        for key in value:
            if key not in fields:
                problems.append(f"{generic_path(pointer + '/' + key)}: not selected by the query")
        for key, (fname, sub) in fields.items():
            if key not in value or fname == "__typename":
                continue
            field_def = parent_type.fields.get(fname) if isinstance(parent_type, GraphQLObjectType) else None
            if field_def is None:
                continue
            check(value[key], field_def.type, sub, pointer + "/" + key)

    def collect(selections, fields):
        for s in selections:
            if s.kind == "field":
                key = s.alias.value if s.alias else s.name.value
                fields[key] = (s.name.value, s.selection_set.selections if s.selection_set else [])
            elif s.kind == "inline_fragment":
                collect(s.selection_set.selections, fields)
            elif s.kind == "fragment_spread":
                collect(fragments[s.name.value].selection_set.selections, fields)

    def check(value, typ, sub, pointer):
        if isinstance(typ, GraphQLNonNull):
            typ = typ.of_type
        if value is None:
            return
        if isinstance(typ, GraphQLList):
            if isinstance(value, list):
                for i, v in enumerate(value):
                    check(v, typ.of_type, sub, f"{pointer}/{i}")
            return
        if isinstance(typ, GraphQLScalarType):
            ok = {
                "String": isinstance(value, str),
                "ID": isinstance(value, str),
                "Boolean": isinstance(value, bool),
                "Int": isinstance(value, int) and not isinstance(value, bool),
                "Float": isinstance(value, (int, float)) and not isinstance(value, bool),
            }.get(typ.name, True)
            if not ok:
                problems.append(f"{generic_path(pointer)}: {short(value, 40)} is not a JSON value of GraphQL type {typ.name}")
            elif typ.name in scalar_formats and not re.fullmatch(scalar_formats[typ.name][0], str(value)):
                problems.append(f"{generic_path(pointer)}: {short(value, 40)} is not {scalar_formats[typ.name][1]}")
            return
        if isinstance(typ, GraphQLEnumType) or is_abstract_type(typ):
            return
        if isinstance(typ, GraphQLObjectType):
            walk(value, sub, typ, pointer)

    fragments = {d.name.value: d for d in document.definitions if d.kind == "fragment_definition"}
    scalar_formats = getattr(schema, "_contract_scalar_formats", {})
    root = {"query": schema.query_type, "mutation": schema.mutation_type}[operation.operation.value]
    walk(data, operation.selection_set.selections, root, "/data")
    # One line per problem kind and place.
    out, seen = [], set()
    for p in problems:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def check_scalar(described: Described, schema: dict, value: str) -> str | None:
    """A query string value against a scalar schema (for parameters named by
    a pattern)."""
    t = schema.get("type")
    v = value
    try:
        if t == "integer":
            v = int(value)
        elif t == "number":
            v = float(value)
        elif t == "boolean":
            if value not in ("true", "false"):
                return f"{value!r} is not a boolean"
            v = value == "true"
    except ValueError:
        return f"{value!r} is not a {t}"
    errors = list(described.validator(schema).iter_errors(v))
    return describe_schema_error(errors[0]).split(": ", 1)[1] if errors else None


def pointer_get(vendor: Vendor, ref: str):
    """A value in one of the vendor's descriptions: 'file#/json/pointer'."""
    file, _, pointer = ref.partition("#")
    for d in vendor.described:
        if d.file == file:
            node = d.doc
            for part in pointer.lstrip("/").split("/"):
                node = node[part.replace("~1", "/").replace("~0", "~")]
            return list(node) if isinstance(node, list) else [node]
    raise ConfigError(f"{vendor.facts_file}: values_from {ref}: no such description loaded")


# --------------------------------------------------------------------------
# Scopes
# --------------------------------------------------------------------------


def manifest(connector: str) -> dict:
    path = PLUGINS / connector / "connector.toml"
    if not path.exists():
        raise ConfigError(f"{rel(path)} is missing")
    with open(path, "rb") as f:
        return tomllib.load(f)


def check_scopes(report: Report, checker: Checker, connector: str, vendor: Vendor, called: set[str] | None):
    """The manifest's scopes exist and are read-only; each operation called
    (or, without exchanges, each the manifest's routes reach) accepts one."""
    m = manifest(connector)
    path = rel(PLUGINS / connector / "connector.toml")
    scopes = [s["name"] if isinstance(s, dict) else s for s in m.get("oauth", {}).get("scopes", [])]
    read_only = {f["name"]: f["read_only"] for f in vendor.fact("scope") if "read_only" in f}
    where = "[oauth] scopes"
    for s in scopes:
        if s not in vendor.scope_list:
            report.add(connector, where, f"{s!r} is not a scope {vendor.name} lists", "its descriptions' scope lists and " + vendor.facts_file)
        if read_only.get(s) is not True:
            src = next((f.get("source", vendor.facts_file) for f in vendor.fact("scope") if f["name"] == s and "read_only" in f), f"{vendor.facts_file} [[scope]] read_only")
            report.add(connector, where, f"{s!r} is not among {vendor.name}'s read-only scopes", src)
    from_app = vendor.facts.get("scopes_from_app")
    ops = []
    if called is None:
        for route in m.get("routes", []):
            if vendor.graphql and route["url"] == vendor.graphql["endpoint"]:
                continue  # its fields' scopes: [[graphql_scopes]] below
            o, _, _ = vendor.find(route["method"].upper(), route["url"])
            if o is None:
                report.add(connector, f"{route['method']} {urlsplit(route['url']).path}", "the manifest's route reaches no operation of the vendor's descriptions", path)
            else:
                ops.append(o)
    else:
        ops = [o for o in vendor.operations if o.name in called]
    for o in ops:
        if not o.scopes or from_app:
            continue
        accepted = [s for s in o.scopes if s != vendor.facts.get("no_scope_marker")]
        if not accepted:
            continue
        if not set(accepted) & set(scopes):
            report.add(connector, o.name, f"the manifest asks for none of the scopes the operation accepts ({', '.join(accepted)})", o.scopes_source)
    if vendor.graphql is not None:
        for f in vendor.facts.get("graphql_scopes", []):
            if called is not None and f["field"] not in called:
                continue
            if not set(f["scopes"]) & set(scopes):
                report.add(connector, f["field"], f"the manifest asks for none of the scopes it accepts ({', '.join(f['scopes'])})", f["source"])


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------


def validate_file(path: Path, report: Report) -> tuple[int, int]:
    with open(path, encoding="utf-8") as f:
        return validate_data(json.load(f), report)


def validate_data(data, report: Report) -> tuple[int, int]:
    """Checks one exchanges document ({"connector", "exchanges"}, or a list
    of them); returns (exchanges checked, operations matched)."""
    files = data if isinstance(data, list) else [data]
    checker = Checker(report)
    exchanges = 0
    for entry in files:
        connector = entry["connector"]
        vendor = checker.vendor_of(connector)
        for x in entry.get("exchanges", []):
            exchanges += 1
            checker.check_exchange(connector, vendor, x)
        check_scopes(report, checker, connector, vendor, checker.called[connector])
    checker.run_typescript()
    return exchanges, len(checker.matched)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("exchanges", nargs="?", type=Path, help="the exchanges file the contract test wrote")
    parser.add_argument("--scopes", metavar="CONNECTOR", help="check only this connector's manifest scopes")
    args = parser.parse_args(argv)
    report = Report()
    try:
        if args.scopes:
            checker = Checker(report)
            vendor = checker.vendor_of(args.scopes)
            check_scopes(report, checker, args.scopes, vendor, None)
            summary = f"{args.scopes}: manifest scopes checked against {vendor.name}'s descriptions and facts"
        elif args.exchanges:
            exchanges, matched = validate_file(args.exchanges, report)
            summary = f"{exchanges} exchanges checked, {matched} operations matched"
        else:
            parser.error("give an exchanges file or --scopes CONNECTOR")
    except ConfigError as e:
        print(f"validate.py: {e}", file=sys.stderr)
        return 2
    for p in report.problems:
        print(p.line())
    if report.problems:
        print(f"{len(report.problems)} problems ({summary})", file=sys.stderr)
        return 1
    print(f"ok: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
