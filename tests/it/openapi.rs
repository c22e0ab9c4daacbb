//! The server's OpenAPI document (`GET /api/openapi.json`) as a contract:
//! every JSON answer the server tests receive is checked against the
//! schema it documents for its path, method and status
//! ([`check_answer`]), so that a field added, renamed or dropped, or a
//! status no route documents, fails the tests until the document says
//! so; and the document lists exactly the routes the server has.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, OnceLock};

use serde_json::{Value, json};

/// The document, as the server serves it.
pub const DOCUMENT: &str = include_str!("../../src/server/api/openapi.json");

fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| serde_json::from_str(DOCUMENT).expect("openapi.json is JSON"))
}

/// The documented path (`/api/stats/{rules}/{seeds}`) that the request
/// path `path` (without its query) falls under, if any.
fn template_of(path: &str) -> Option<&'static str> {
    let segments: Vec<&str> = path.split('/').collect();
    document()["paths"]
        .as_object()
        .unwrap()
        .keys()
        .find(|t| {
            let ts: Vec<&str> = t.split('/').collect();
            ts.len() == segments.len()
                && ts.iter().zip(&segments).all(|(t, s)| {
                    t == s || (t.starts_with('{') && t.ends_with('}') && !s.is_empty())
                })
        })
        .map(String::as_str)
}

/// Follows a `$ref` within the document.
fn resolve(v: &'static Value) -> &'static Value {
    match v["$ref"].as_str() {
        Some(r) => {
            let pointer = r
                .strip_prefix('#')
                .expect("a reference within the document");
            resolve(
                document()
                    .pointer(pointer)
                    .unwrap_or_else(|| panic!("{r}: not in the document")),
            )
        }
        None => v,
    }
}

/// The schema of the answer to `method path` with `status`: the one its
/// operation documents, or `Error` for a path or method that the document
/// has not (the server answers 404 or 405 there). Panics, naming the
/// request, when the operation exists and does not document `status`.
fn schema_of(method: &str, path: &str, status: u16) -> &'static Value {
    let error = &document()["components"]["schemas"]["Error"];
    let operation = template_of(path).and_then(|t| document()["paths"][t].get(method));
    let Some(operation) = operation else {
        assert!(
            matches!(status, 404 | 405),
            "{method} {path}: {status} on a path or method the document has not"
        );
        return error;
    };
    let response = operation["responses"]
        .get(status.to_string())
        .unwrap_or_else(|| {
            panic!("{method} {path}: status {status} is not documented for this operation")
        });
    &resolve(response)["content"]["application/json"]["schema"]
}

/// Checks `body`, the JSON answer to `method target` (a path with its
/// query), against the document; panics with every disagreement.
pub fn check_answer(method: &str, target: &str, status: u16, body: &Value) {
    let method = method.to_ascii_lowercase();
    let path = target.split('?').next().unwrap();
    let schema = schema_of(&method, path, status);
    static VALIDATORS: OnceLock<Mutex<HashMap<usize, jsonschema::Validator>>> = OnceLock::new();
    let errors: Vec<String> = {
        let mut validators = VALIDATORS.get_or_init(Default::default).lock().unwrap();
        // The schemas live as long as the document: one validator each.
        let validator = validators
            .entry(schema as *const Value as usize)
            .or_insert_with(|| {
                let root = json!({
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "components": document()["components"],
                    "allOf": [schema],
                });
                jsonschema::validator_for(&root).expect("a valid schema")
            });
        validator
            .iter_errors(body)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect()
    };
    assert!(
        errors.is_empty(),
        "{method} {target} ({status}) does not match the OpenAPI document:\n{}\n{body}",
        errors.join("\n")
    );
}

/// The document lists exactly the server's API routes (those of
/// `src/server/mod.rs`, the web page's three files aside) with their
/// methods, its version is the package's, and every reference in it
/// leads somewhere.
#[test]
fn the_document_lists_every_route_and_only_those() {
    let source = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/server/mod.rs"),
    )
    .unwrap();
    let routes: BTreeSet<(String, String)> = source
        .split(".route(\"")
        .skip(1)
        .map(|r| {
            let (path, rest) = r.split_once('"').unwrap();
            let method = rest
                .trim_start_matches([',', ' '])
                .split('(')
                .next()
                .unwrap();
            (path.to_string(), method.to_string())
        })
        .filter(|(path, _)| !["/", "/app.js", "/style.css"].contains(&path.as_str()))
        .collect();
    assert!(
        routes.len() >= 8,
        "routes found in src/server/mod.rs: {routes:?}"
    );
    let documented: BTreeSet<(String, String)> = document()["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, ops)| {
            ops.as_object()
                .unwrap()
                .keys()
                .map(move |m| (path.clone(), m.clone()))
        })
        .collect();
    assert_eq!(routes, documented);
    assert_eq!(
        document()["info"]["version"],
        env!("CARGO_PKG_VERSION"),
        "the document's version is the package's"
    );
    // Every reference resolves (a dangling one would only fail once an
    // answer met it).
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    out.push(r.clone());
                }
                m.values().for_each(|v| refs(v, out));
            }
            Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    refs(document(), &mut all);
    assert!(all.len() > 20);
    for r in all {
        assert!(
            document().pointer(r.trim_start_matches('#')).is_some(),
            "{r} leads nowhere"
        );
    }
}

/// The checker itself refuses what the document does not allow: a field
/// the schema does not have, one missing, a status the operation does
/// not document, an answer on a path the document does not have.
#[test]
fn answers_off_the_document_are_refused() {
    let fails = |method: &str, target: &str, status: u16, body: Value| {
        std::panic::catch_unwind(|| check_answer(method, target, status, &body)).is_err()
    };
    let health = json!({"status": "ok", "version": "0.1.0"});
    assert!(!fails("GET", "/health", 200, health.clone()));
    let mut extra = health.clone();
    extra["uptime"] = json!(3);
    assert!(fails("GET", "/health", 200, extra));
    assert!(fails("GET", "/health", 200, json!({"status": "ok"})));
    assert!(fails("GET", "/health", 404, json!({"error": "x"})));
    let error = json!({"error": "no such page"});
    assert!(!fails("GET", "/nowhere", 404, error.clone()));
    assert!(fails("GET", "/nowhere", 200, error.clone()));
    assert!(!fails("POST", "/api/levels", 405, error.clone()));
    // A path parameter matches one segment, not none.
    assert!(!fails("GET", "/api/stats/awari/12", 404, error.clone()));
    assert!(fails("GET", "/api/stats/awari/", 200, error));
    let board = json!([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]);
    let position = json!({"board": board, "seeds": 16, "rules": "awari", "value": 0,
        "category": "draw", "source": "table", "moves": [], "best": []});
    assert!(!fails("GET", "/api/awari?board=x", 200, position.clone()));
    let mut short = position.clone();
    short["board"] = json!([1, 1]);
    assert!(fails("GET", "/api/awari?board=x", 200, short));
    let mut category = position;
    category["category"] = json!("won");
    assert!(fails("GET", "/api/awari?board=x", 200, category));
}
