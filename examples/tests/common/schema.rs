//! The tools' `--json` documents against their JSON Schemas (`examples/schemas/TOOL.schema.json`,
//! draft 2020-12). Included by the tests that read a `--json` document (`#[path]`), in this
//! package and in `examples/conformance`.
// Each including test uses a part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

/// `examples/schemas/`.
pub(crate) fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|p| p.join("schemas"))
        .find(|p| p.join("mpit-list.schema.json").is_file())
        .expect("examples/schemas/ above the package")
}

/// The schema `NAME.schema.json`, parsed.
pub(crate) fn schema(name: &str) -> Json {
    let path = schema_dir().join(format!("{name}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Asserts that `doc` is valid against schema `name`, listing every error (at most 20).
pub(crate) fn assert_valid(name: &str, doc: &Json) {
    let schema = schema(name);
    let validator = jsonschema::draft202012::new(&schema)
        .unwrap_or_else(|e| panic!("{name}.schema.json does not compile: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .take(20)
        .map(|e| format!("  at {}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the document is not valid against {name}.schema.json:\n{}",
        errors.join("\n")
    );
}

/// Parses `text` as one JSON document and asserts it is valid against schema `name`.
pub(crate) fn assert_valid_text(name: &str, text: &str) -> Json {
    let doc: Json = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}):\n{text}"));
    assert_valid(name, &doc);
    doc
}
