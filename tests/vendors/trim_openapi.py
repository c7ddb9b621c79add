#!/usr/bin/env python3
"""Trims an OpenAPI description (JSON) to some of its operations: each kept
path with only the kept methods (and the path's own parameters), every
component those reach through `$ref`, transitively, the whole
`components.securitySchemes`, and every top-level key but `paths` and
`components` as published. Nothing kept is edited.

    python3 tests/vendors/trim_openapi.py openapi.json "GET /search" "POST /oauth2/revoke" > trimmed.json

vendors/box/openapi.trimmed.json was made so (vendors/box/SOURCE.md).
"""

import json
import sys

METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def refs_in(value):
    """Every `$ref` under a value."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "$ref" and isinstance(item, str):
                yield item
            else:
                yield from refs_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from refs_in(item)


def trim(description, operations):
    paths = {}
    for operation in operations:
        method, path = operation.split(" ", 1)
        item = description["paths"][path]
        kept = paths.setdefault(path, {k: v for k, v in item.items() if k not in METHODS})
        kept[method.lower()] = item[method.lower()]

    components = {"securitySchemes": description.get("components", {}).get("securitySchemes", {})}
    pending = list(refs_in(paths)) + list(refs_in(components))
    while pending:
        ref = pending.pop()
        if not ref.startswith("#/components/"):
            raise SystemExit(f"a $ref outside components: {ref}")
        kind, name = ref[len("#/components/"):].split("/", 1)
        name = name.replace("~1", "/").replace("~0", "~")
        if name in components.get(kind, {}):
            continue
        value = description["components"][kind][name]
        components.setdefault(kind, {})[name] = value
        pending.extend(refs_in(value))

    trimmed = {}
    for key, value in description.items():
        if key == "paths":
            trimmed[key] = paths
        elif key == "components":
            trimmed[key] = {kind: dict(sorted(items.items())) for kind, items in sorted(components.items())}
        else:
            trimmed[key] = value
    return trimmed


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as file:
        source = json.load(file)
    json.dump(trim(source, sys.argv[2:]), sys.stdout, indent=2, ensure_ascii=False)
    print()
