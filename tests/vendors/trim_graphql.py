#!/usr/bin/env python3
"""Trims a GraphQL schema (SDL) to what one query document uses: the root
fields it selects and, for every type it selects from, only the fields it
selects (with their arguments); every input, enum and scalar type those
arguments reach, whole; the interfaces a kept type still fully implements.
Descriptions and directives are kept as published.

    target/py/bin/python tests/vendors/trim_graphql.py SCHEMA.graphql DOCUMENT.graphql > trimmed.graphql

vendors/linear/schema.trimmed.graphql was made so (vendors/linear/SOURCE.md).
"""

import sys

from graphql import (
    TypeInfo,
    build_ast_schema,
    get_named_type,
    is_enum_type,
    is_input_object_type,
    is_scalar_type,
    parse,
    print_ast,
    visit,
)
from graphql.language import FieldNode, Visitor

BUILT_IN = {"String", "Int", "Float", "Boolean", "ID"}


def trim(schema_text: str, document_text: str) -> str:
    schema_ast = parse(schema_text)
    schema = build_ast_schema(schema_ast)
    document = parse(document_text)
    info = TypeInfo(schema)
    selected: dict[str, set[str]] = {}

    class Collect(Visitor):
        def enter_field(self, node: FieldNode, *_):
            parent = info.get_parent_type()
            if parent is not None and not node.name.value.startswith("__"):
                selected.setdefault(parent.name, set()).add(node.name.value)

    from graphql.utilities import TypeInfoVisitor

    visit(document, TypeInfoVisitor(info, Collect()))

    # Types reached by the selected fields' arguments and results.
    keep_whole: set[str] = set()
    todo = []
    for tname, fields in selected.items():
        t = schema.get_type(tname)
        for fname in fields:
            f = t.fields[fname]
            todo.append(get_named_type(f.type))
            for arg in f.args.values():
                todo.append(get_named_type(arg.type))
    while todo:
        t = todo.pop()
        if t.name in keep_whole or t.name in BUILT_IN:
            continue
        if is_input_object_type(t):
            keep_whole.add(t.name)
            todo += [get_named_type(f.type) for f in t.fields.values()]
        elif is_enum_type(t) or is_scalar_type(t):
            keep_whole.add(t.name)

    interfaces_kept: set[str] = set()
    out = []
    for d in schema_ast.definitions:
        name = getattr(getattr(d, "name", None), "value", None)
        kind = d.kind
        if kind == "object_type_definition" and name in selected:
            fields = [f for f in d.fields if f.name.value in selected[name]]
            kept_ifaces = []
            for iface in d.interfaces or ():
                idef = schema.get_type(iface.name.value)
                if set(idef.fields) <= selected[name]:
                    kept_ifaces.append(iface)
                    interfaces_kept.add(iface.name.value)
            out.append((d, {"fields": tuple(fields), "interfaces": tuple(kept_ifaces)}))
        elif kind in ("input_object_type_definition", "enum_type_definition", "scalar_type_definition") and name in keep_whole:
            out.append((d, {}))
        elif kind == "directive_definition":
            out.append((d, {}))
        elif kind == "schema_definition":
            ops = tuple(o for o in d.operation_types if o.type.name.value in selected)
            out.append((d, {"operation_types": ops}))
    for d in schema_ast.definitions:
        if d.kind == "interface_type_definition" and d.name.value in interfaces_kept:
            out.append((d, {}))
    texts = []
    for d, changes in out:
        node = d
        if changes:
            node = type(d)(**{k: getattr(d, k) for k in d.keys if k != "loc"} | changes)
        texts.append(print_ast(node))
    trimmed = "\n\n".join(texts) + "\n"
    build_ast_schema(parse(trimmed))  # it must stand on its own
    return trimmed


def main():
    schema_text = open(sys.argv[1], encoding="utf-8").read()
    document_text = open(sys.argv[2], encoding="utf-8").read()
    sys.stdout.write(trim(schema_text, document_text))


if __name__ == "__main__":
    main()
