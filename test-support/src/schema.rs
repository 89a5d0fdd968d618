//! The tools' `--json` documents against their JSON Schemas (`examples/schemas/TOOL.schema.json`,
//! draft 2020-12).

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

/// `examples/schemas/` of the workspace this crate is part of.
pub fn schema_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root above test-support/")
        .join("examples")
        .join("schemas");
    assert!(
        dir.join("mpit-list.schema.json").is_file(),
        "{}: no mpit-list.schema.json",
        dir.display()
    );
    dir
}

/// The schema `NAME.schema.json`, parsed.
pub fn schema(name: &str) -> Json {
    let path = schema_dir().join(format!("{name}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Asserts that `doc` is valid against schema `name`, listing every error (at most 20).
pub fn assert_valid(name: &str, doc: &Json) {
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
pub fn assert_valid_text(name: &str, text: &str) -> Json {
    let doc: Json = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}):\n{text}"));
    assert_valid(name, &doc);
    doc
}
