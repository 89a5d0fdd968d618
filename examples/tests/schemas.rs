//! The JSON Schemas of the tools' `--json` documents (`examples/schemas/`): each is a valid
//! draft 2020-12 schema that describes every property it declares and admits no undeclared
//! one; the recorded documents of the golden tests are valid against theirs (`mpit-list --json`
//! and `--diff --json` renderings, `mqd-dump`'s and `mpir-attach`'s documents); and the
//! documents the tools print on the installed MPI are too (`mpit-counts --json`, `mpit-list
//! --json` as a singleton, with and without `MPI_Init`, filtered). `tests/mpit_list.rs`,
//! `tests/mqd_dump.rs`, `tests/mpir_attach.rs` and `conformance/tests/conformance.rs` validate
//! the documents of their live runs.

use std::path::Path;
use std::process::Command;

use clap::Parser;
use mpit_tools::list;
use serde_json::Value as Json;

use mpit_test_support::schema;

/// The schemas, by the tool and output they document.
const SCHEMAS: [&str; 6] = [
    "mpit-list",
    "mpit-list-diff",
    "mpit-counts",
    "mqd-dump",
    "mpir-attach",
    "mpit-conform",
];

/// Every place in schema `s` (at `path`) where a property lacks a description or an object
/// admits undeclared properties.
fn undocumented(s: &Json, path: &str, out: &mut Vec<String>) {
    match s {
        Json::Object(m) => {
            for (k, v) in m {
                match (k.as_str(), v) {
                    // A map of property names to schemas (a property may be called `properties`).
                    ("properties", Json::Object(props)) => {
                        if m.get("additionalProperties") != Some(&Json::Bool(false)) {
                            out.push(format!("{path}: additionalProperties is not false"));
                        }
                        for (name, p) in props {
                            let at = format!("{path}/properties/{name}");
                            if !p.get("description").is_some_and(Json::is_string) {
                                out.push(format!("{at}: no description"));
                            }
                            undocumented(p, &at, out);
                        }
                    }
                    _ => undocumented(v, &format!("{path}/{k}"), out),
                }
            }
        }
        Json::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                undocumented(v, &format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_schema_is_valid_and_documents_every_property() {
    let mut files: Vec<String> = std::fs::read_dir(schema::schema_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut expected: Vec<String> = SCHEMAS.iter().map(|s| format!("{s}.schema.json")).collect();
    expected.sort();
    assert_eq!(
        files, expected,
        "a schema for each --json output, and no other file"
    );
    for name in SCHEMAS {
        let s = schema::schema(name);
        assert_eq!(
            s["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        if let Err(e) = jsonschema::draft202012::meta::validate(&s) {
            panic!("{name}.schema.json is not a valid draft 2020-12 schema: {e}");
        }
        assert!(s["description"].is_string(), "{name}: no description");
        let mut missing = Vec::new();
        undocumented(&s, "", &mut missing);
        assert!(missing.is_empty(), "{name}:\n{}", missing.join("\n"));
    }
}

fn golden(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The recorded documents (`tests/golden/`), and `mpit-list`'s renderings of its recorded
/// listings with every option that changes the document.
#[test]
fn the_recorded_documents_are_valid() {
    for name in ["openmpi", "openmpi-no-donor", "synthetic"] {
        schema::assert_valid_text("mqd-dump", &golden(&format!("mqd/{name}.dump.json")));
    }
    for name in ["attach", "launch", "trace"] {
        schema::assert_valid_text("mpir-attach", &golden(&format!("mpir/{name}.job.json")));
    }
    let options: &[&[&str]] = &[
        &["--json"],
        &["--json", "--class", "counter"],
        &["--json", "--name", "btl", "--holes"],
        &["--json", "--no-holes"],
        &["--json", "--verbosity", "USER_BASIC", "--bind", "NO_OBJECT"],
    ];
    for implementation in ["mpich", "openmpi", "mpich-ev"] {
        let listing: list::model::Listing =
            serde_json::from_str(&golden(&format!("list/{implementation}.model.json"))).unwrap();
        for opts in options {
            let args = list::Args::try_parse_from(
                std::iter::once("mpit-list").chain(opts.iter().copied()),
            )
            .unwrap();
            schema::assert_valid_text("mpit-list", &args.render(&listing));
        }
    }
    for (a, b) in [
        ("mpich", "mpich-ev"),
        ("mpich", "openmpi"),
        ("openmpi", "openmpi.counter"),
    ] {
        let doc =
            |n: &str| -> Json { serde_json::from_str(&golden(&format!("list/{n}.json"))).unwrap() };
        let d = list::diff::diff(&doc(a), a, &doc(b), b);
        schema::assert_valid_text("mpit-list-diff", &d.json());
    }
}

#[test]
fn the_documents_printed_on_this_mpi_are_valid() {
    let counts = Command::new(env!("CARGO_BIN_EXE_mpit-counts"))
        .arg("--json")
        .output()
        .unwrap();
    assert!(counts.status.success(), "{counts:?}");
    let c = schema::assert_valid_text("mpit-counts", &String::from_utf8_lossy(&counts.stdout));
    assert_eq!(c["event_api"], mpit_safe::sys::HAS_EVENTS);

    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpit-list-schemas");
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for (file, opts) in [
        ("init.json", &["--json"][..]),
        ("no-init.json", &["--json", "--no-init"][..]),
        (
            "filtered.json",
            &["--json", "--verbosity", "USER_ALL", "--holes"][..],
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_mpit-list"))
            .args(opts)
            .output()
            .unwrap();
        assert!(out.status.success(), "mpit-list {opts:?}: {out:?}");
        schema::assert_valid_text("mpit-list", &String::from_utf8_lossy(&out.stdout));
        let path = dir.join(file);
        std::fs::write(&path, &out.stdout).unwrap();
        files.push(path);
    }
    // The listing with MPI_Init against the one without: a diff, in both forms.
    let diff = |json: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mpit-list"));
        cmd.arg("--diff").arg(&files[1]).arg(&files[0]);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "mpit-list --diff: {out:?}");
        assert!(out.stderr.is_empty(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let d = schema::assert_valid_text("mpit-list-diff", &diff(true));
    assert_eq!(d["filters_differ"], false);
    let text = diff(false);
    assert!(text.starts_with("A: "), "{text}");
    assert!(text.contains("\ncvars: "), "{text}");
    // A listing compared with itself: nothing differs.
    let same = Command::new(env!("CARGO_BIN_EXE_mpit-list"))
        .arg("--diff")
        .arg(&files[0])
        .arg(&files[0])
        .arg("--json")
        .output()
        .unwrap();
    let same = schema::assert_valid_text("mpit-list-diff", &String::from_utf8_lossy(&same.stdout));
    for (kind, d) in same["kinds"].as_object().unwrap() {
        for key in ["added", "removed", "changed"] {
            assert_eq!(d[key], Json::Array(vec![]), "{kind} {key}");
        }
    }
}
