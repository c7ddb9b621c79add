//! GraphQL documents, parsed with `apollo-parser` (as the host parses them): the
//! operations, their variables and selection sets, and the projection of a JSON
//! value onto a selection set.

use std::collections::HashMap;

use apollo_parser::cst::{self, CstNode};
use serde_json::{Map, Value};

/// An argument or variable default value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum GValue {
    Var(String),
    Lit(Value),
    List(Vec<GValue>),
    Object(Vec<(String, GValue)>),
}

impl GValue {
    /// Resolves variables.
    pub(crate) fn resolve(&self, vars: &Map<String, Value>) -> Value {
        match self {
            GValue::Var(v) => vars.get(v).cloned().unwrap_or(Value::Null),
            GValue::Lit(v) => v.clone(),
            GValue::List(l) => Value::Array(l.iter().map(|x| x.resolve(vars)).collect()),
            GValue::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, v)| (k.clone(), v.resolve(vars)))
                    .collect(),
            ),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Selection {
    Field(Field),
    Inline(Vec<Selection>),
    Spread(String),
}

#[derive(Clone, Debug)]
pub(crate) struct Field {
    pub alias: Option<String>,
    pub name: String,
    pub args: Vec<(String, GValue)>,
    pub selections: Vec<Selection>,
}

impl Field {
    pub(crate) fn key(&self) -> &str {
        self.alias.as_deref().unwrap_or(&self.name)
    }
    pub(crate) fn arg(&self, name: &str) -> Option<&GValue> {
        self.args.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Operation {
    /// `query`, `mutation` or `subscription`.
    pub kind: String,
    pub name: Option<String>,
    pub var_defaults: Vec<(String, Option<GValue>)>,
    pub selections: Vec<Selection>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Document {
    pub operations: Vec<Operation>,
    pub fragments: HashMap<String, Vec<Selection>>,
}

/// Parses a GraphQL document.
pub(crate) fn parse(src: &str) -> Result<Document, String> {
    let tree = apollo_parser::Parser::new(src).parse();
    if let Some(error) = tree.errors().next() {
        return Err(format!("Syntax Error: {}.", error.message()));
    }
    let mut doc = Document::default();
    for definition in tree.document().definitions() {
        match definition {
            cst::Definition::OperationDefinition(op) => doc.operations.push(operation(&op)),
            cst::Definition::FragmentDefinition(fragment) => {
                let name = fragment.fragment_name().and_then(|f| f.name());
                doc.fragments.insert(
                    name.map(|n| n.text().to_string()).unwrap_or_default(),
                    selections(fragment.selection_set()),
                );
            }
            other => {
                let first = other.syntax().first_token().map(|t| t.text().to_string());
                return Err(format!(
                    "Syntax Error: Unexpected Name \"{}\".",
                    first.unwrap_or_default()
                ));
            }
        }
    }
    if doc.operations.is_empty() && doc.fragments.is_empty() {
        return Err("Syntax Error: Unexpected <EOF>.".into());
    }
    Ok(doc)
}

fn operation(op: &cst::OperationDefinition) -> Operation {
    // `{ ... }` alone is a query.
    let kind = match op.operation_type() {
        Some(t) if t.mutation_token().is_some() => "mutation",
        Some(t) if t.subscription_token().is_some() => "subscription",
        _ => "query",
    };
    let var_defaults = op
        .variable_definitions()
        .into_iter()
        .flat_map(|defs| defs.variable_definitions())
        .map(|def| {
            let name = def.variable().map(|v| v.text().to_string());
            let default = def.default_value().and_then(|d| d.value()).map(value);
            (name.unwrap_or_default(), default)
        })
        .collect();
    Operation {
        kind: kind.into(),
        name: op.name().map(|n| n.text().to_string()),
        var_defaults,
        selections: selections(op.selection_set()),
    }
}

fn selections(set: Option<cst::SelectionSet>) -> Vec<Selection> {
    let Some(set) = set else {
        return Vec::new();
    };
    set.selections()
        .map(|selection| match selection {
            cst::Selection::Field(f) => Selection::Field(field(&f)),
            cst::Selection::InlineFragment(inline) => {
                Selection::Inline(selections(inline.selection_set()))
            }
            cst::Selection::FragmentSpread(spread) => {
                let name = spread.fragment_name().and_then(|f| f.name());
                Selection::Spread(name.map(|n| n.text().to_string()).unwrap_or_default())
            }
        })
        .collect()
}

fn field(f: &cst::Field) -> Field {
    let name_of = |n: Option<cst::Name>| n.map(|n| n.text().to_string()).unwrap_or_default();
    let args = f
        .arguments()
        .into_iter()
        .flat_map(|args| args.arguments())
        .map(|arg| {
            (
                name_of(arg.name()),
                arg.value().map_or(GValue::Lit(Value::Null), value),
            )
        })
        .collect();
    Field {
        alias: f.alias().map(|a| name_of(a.name())),
        name: name_of(f.name()),
        args,
        selections: selections(f.selection_set()),
    }
}

fn value(v: cst::Value) -> GValue {
    let number = |text: String| serde_json::from_str(&text).unwrap_or(Value::String(text));
    match v {
        cst::Value::Variable(var) => GValue::Var(var.text().to_string()),
        cst::Value::StringValue(s) => GValue::Lit(Value::String(s.into())),
        cst::Value::IntValue(i) => GValue::Lit(number(i.syntax().text().to_string())),
        cst::Value::FloatValue(f) => GValue::Lit(number(f.syntax().text().to_string())),
        cst::Value::BooleanValue(b) => GValue::Lit(Value::Bool(b.true_token().is_some())),
        cst::Value::NullValue(_) => GValue::Lit(Value::Null),
        cst::Value::EnumValue(e) => GValue::Lit(Value::String(e.text().to_string())),
        cst::Value::ListValue(l) => GValue::List(l.values().map(value).collect()),
        cst::Value::ObjectValue(o) => GValue::Object(
            o.object_fields()
                .map(|f| {
                    let name = f.name().map(|n| n.text().to_string()).unwrap_or_default();
                    (name, f.value().map_or(GValue::Lit(Value::Null), value))
                })
                .collect(),
        ),
    }
}

impl Document {
    /// The fields of a selection set with fragments flattened.
    pub(crate) fn fields<'a>(&'a self, sel: &'a [Selection]) -> Vec<&'a Field> {
        let mut out = Vec::new();
        self.collect(sel, &mut out, 0);
        out
    }

    fn collect<'a>(&'a self, sel: &'a [Selection], out: &mut Vec<&'a Field>, depth: usize) {
        if depth > 20 {
            return;
        }
        for s in sel {
            match s {
                Selection::Field(f) => out.push(f),
                Selection::Inline(inner) => self.collect(inner, out, depth + 1),
                Selection::Spread(name) => {
                    if let Some(inner) = self.fragments.get(name) {
                        self.collect(inner, out, depth + 1);
                    }
                }
            }
        }
    }

    /// Projects `full` (objects carry a `__typename`) onto a selection set. Unknown
    /// fields are reported as GraphQL validation errors.
    pub(crate) fn project(&self, full: &Value, sel: &[Selection]) -> Result<Value, String> {
        match full {
            Value::Array(items) => items
                .iter()
                .map(|i| self.project(i, sel))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            Value::Object(obj) => {
                if sel.is_empty() {
                    let t = obj
                        .get("__typename")
                        .and_then(Value::as_str)
                        .unwrap_or("Object");
                    return Err(format!(
                        "Field of type \"{t}\" must have a selection of subfields."
                    ));
                }
                let mut out = Map::new();
                for f in self.fields(sel) {
                    let v = match obj.get(&f.name) {
                        Some(v) => v,
                        None => {
                            let t = obj
                                .get("__typename")
                                .and_then(Value::as_str)
                                .unwrap_or("Object");
                            return Err(format!(
                                "Cannot query field \"{}\" on type \"{t}\".",
                                f.name
                            ));
                        }
                    };
                    let pv = if f.selections.is_empty() {
                        if v.is_object()
                            || (v.is_array()
                                && v.as_array()
                                    .is_some_and(|a| a.first().is_some_and(Value::is_object)))
                        {
                            return Err(format!(
                                "Field \"{}\" of type \"{}\" must have a selection of subfields. Did you mean \"{} {{ ... }}\"?",
                                f.name,
                                v.get("__typename")
                                    .and_then(Value::as_str)
                                    .unwrap_or("Object"),
                                f.name
                            ));
                        }
                        v.clone()
                    } else if v.is_null() {
                        Value::Null
                    } else {
                        self.project(v, &f.selections)?
                    };
                    out.insert(f.key().to_string(), pv);
                }
                Ok(Value::Object(out))
            }
            other => Ok(other.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_search_query() {
        let doc = parse(
            r#"
            # search
            query Search($term: String!, $first: Int = 20, $after: String) {
              searchIssues(term: $term, first: $first, after: $after, includeComments: false) {
                nodes { ...F state { name } }
                pageInfo { hasNextPage endCursor }
              }
            }
            fragment F on IssueSearchResult { identifier t: title }
            "#,
        )
        .unwrap();
        let op = &doc.operations[0];
        assert_eq!(op.kind, "query");
        assert_eq!(op.var_defaults[1].1, Some(GValue::Lit(json!(20))));
        let fields = doc.fields(&op.selections);
        assert_eq!(fields[0].name, "searchIssues");
        assert_eq!(fields[0].arg("term"), Some(&GValue::Var("term".into())));
        let full = json!({"__typename": "X", "nodes": [{"__typename": "IssueSearchResult", "identifier": "ENG-1", "title": "T", "state": {"__typename": "S", "name": "Done", "type": "completed"}}], "pageInfo": {"__typename": "PageInfo", "hasNextPage": false, "endCursor": null}});
        let p = doc.project(&full, &fields[0].selections).unwrap();
        assert_eq!(
            p,
            json!({"nodes": [{"identifier": "ENG-1", "t": "T", "state": {"name": "Done"}}], "pageInfo": {"hasNextPage": false, "endCursor": null}})
        );
    }

    #[test]
    fn mutations_and_literals() {
        let doc = parse(r#"mutation { issueDelete(id: "x") { success } }"#).unwrap();
        assert_eq!(doc.operations[0].kind, "mutation");
        let doc =
            parse(r#"{ searchIssues(term: "checkout \"timeout\"", first: 5) { nodes { id } } }"#)
                .unwrap();
        let f = doc.fields(&doc.operations[0].selections)[0];
        assert_eq!(
            f.arg("term"),
            Some(&GValue::Lit(json!("checkout \"timeout\"")))
        );
        assert!(parse("{ a ").is_err());
    }

    #[test]
    fn literal_values_keep_their_json_types() {
        let doc =
            parse(r#"{ a(n: 5 , x: -2.5e1, b: true, e: OPEN, l: [1, null], o: {k: "v"}) { id } }"#)
                .unwrap();
        let f = doc.fields(&doc.operations[0].selections)[0];
        let resolved = |name| f.arg(name).unwrap().resolve(&Map::new());
        assert_eq!(resolved("n"), json!(5));
        assert_eq!(resolved("x"), json!(-25.0));
        assert_eq!(resolved("b"), json!(true));
        assert_eq!(resolved("e"), json!("OPEN"));
        assert_eq!(resolved("l"), json!([1, null]));
        assert_eq!(resolved("o"), json!({"k": "v"}));
        assert!(parse("type Query { a: Int }").is_err());
        assert!(parse("").is_err());
    }
}
