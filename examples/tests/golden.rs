//! Golden tests: each tool's output, rendered from a data model recorded from a real run, must
//! be exactly the recorded output in `tests/golden/` (a changed column, header or JSON key
//! fails here). The fixtures (`*.model.json`, and for `mqd-dump`/`mpir-attach` their `--json`
//! documents, which are their models) were recorded as `tests/golden/README.md` says.
//!
//! `UPDATE_GOLDEN=1 cargo test -p mpit-tools --test integration golden::` rewrites the golden files from
//! the current rendering (review the diff before committing it). No MPI is needed: the
//! renderings are pure functions of the models, so these tests give the same result on every
//! implementation.

use std::path::{Path, PathBuf};

use mpit_test_support::golden::{self, Golden, read};

use clap::Parser;
use mpit_tools::{list, mpir, mqd};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// A recorded model (JSON, `rel` under `tests/golden/`) must come back as itself, written by
/// `write` (with a final newline): the model loses nothing, and where the file is the tool's
/// JSON output, that output is unchanged.
fn round_trip<T: serde::de::DeserializeOwned>(rel: &str, write: impl Fn(&T) -> String) -> T {
    golden::round_trip(&golden_dir().join(rel), |t| serde_json::from_str(t), write)
}

/// `mpit-list`: each recorded listing rendered with the options of each case.
#[test]
fn mpit_list_renders_the_recorded_listings() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("mpich", "txt", &[]),
        ("mpich", "json", &["--json"]),
        ("mpich", "descriptions.txt", &["--descriptions"]),
        ("mpich", "user_basic.txt", &["--verbosity", "USER_BASIC"]),
        ("openmpi", "txt", &[]),
        ("openmpi", "json", &["--json"]),
        ("openmpi", "counter.txt", &["--class", "counter"]),
        ("openmpi", "counter.json", &["--class", "counter", "--json"]),
        (
            "openmpi",
            "btl.txt",
            &["--name", "btl", "--bind", "NO_OBJECT"],
        ),
        ("mpich-ev", "txt", &[]),
        ("mpich-ev", "json", &["--json"]),
        (
            "mpich-ev",
            "timer.txt",
            &["--class", "TIMER", "--descriptions"],
        ),
    ];
    let mut golden = Golden::new(golden_dir());
    for &(implementation, suffix, options) in cases {
        let listing: list::model::Listing = round_trip(
            &format!("list/{implementation}.model.json"),
            |l: &list::model::Listing| serde_json::to_string_pretty(l).unwrap(),
        );
        let args =
            list::Args::try_parse_from(std::iter::once("mpit-list").chain(options.iter().copied()))
                .unwrap_or_else(|e| panic!("{options:?}: {e}"));
        golden.check(
            &format!("list/{implementation}.{suffix}"),
            &args.render(&listing),
        );
    }
    golden.finish();
}

/// `mpit-list --diff`: two recorded listings' `--json` renderings compared (MPICH 4.0.2 as
/// Debian builds it against the same version built with events and every pvar), as text and
/// JSON.
#[test]
fn mpit_list_diffs_the_recorded_listings() {
    let mut golden = Golden::new(golden_dir());
    let (a, b) = ("list/mpich.json", "list/mpich-ev.json");
    let doc = |rel: &str| -> serde_json::Value {
        serde_json::from_str(&read(&golden_dir().join(rel))).unwrap()
    };
    let d = list::diff::diff(&doc(a), a, &doc(b), b);
    golden.check("list/mpich.mpich-ev.diff.txt", &d.text());
    golden.check("list/mpich.mpich-ev.diff.json", &d.json());
    golden.finish();
}

/// `mpit-list`'s filters apply to the holes (Open MPI 4.1.4's listing has 318): none without
/// `--holes` when a filter is set, all of them with it (under `--class` the pvar holes only),
/// none with `--no-holes`; their count stays in the summary.
#[test]
fn mpit_list_filters_apply_to_holes() {
    let listing: list::model::Listing =
        serde_json::from_str(&read(&golden_dir().join("list/openmpi.model.json"))).unwrap();
    let total = listing.holes.len();
    let pvar_holes = listing.holes.iter().filter(|h| h.kind == "pvar").count();
    assert!(
        total > pvar_holes && pvar_holes > 0,
        "{total} holes, {pvar_holes} pvar holes"
    );
    let holes = |options: &[&str]| -> (usize, u64) {
        let args =
            list::Args::try_parse_from(["mpit-list", "--json"].iter().chain(options).copied())
                .unwrap();
        let doc: serde_json::Value = serde_json::from_str(&args.render(&listing)).unwrap();
        (
            doc["holes"].as_array().unwrap().len(),
            doc["counts"]["holes"].as_u64().unwrap(),
        )
    };
    let t = total as u64;
    assert_eq!(holes(&[]), (total, t));
    assert_eq!(holes(&["--name", "btl"]), (0, t));
    assert_eq!(holes(&["--verbosity", "USER_BASIC"]), (0, t));
    assert_eq!(holes(&["--bind", "NO_OBJECT"]), (0, t));
    assert_eq!(holes(&["--class", "counter"]), (0, t));
    assert_eq!(holes(&["--name", "btl", "--holes"]), (total, t));
    assert_eq!(holes(&["--class", "counter", "--holes"]), (pvar_holes, t));
    assert_eq!(holes(&["--no-holes"]), (0, t));
    let text = list::Args::try_parse_from(["mpit-list", "--name", "btl"])
        .unwrap()
        .render(&listing);
    assert!(
        text.contains(&format!("\nholes: {total} (0 listed: a filter is set")),
        "{text}"
    );
    assert!(!text.contains("<not listed: a hole"), "{text}");
}

/// `mpit-list` shows the values of variables read for an object, saying which: Open MPI
/// 4.1.4's two pvars bound to a communicator (recorded unread, before the tool read them for
/// `MPI_COMM_WORLD`), given values read for it.
#[test]
fn mpit_list_shows_values_read_for_a_communicator() {
    let mut listing: list::model::Listing =
        serde_json::from_str(&read(&golden_dir().join("list/openmpi.model.json"))).unwrap();
    let mut read_for_world = 0;
    for p in &mut listing.pvars {
        if p.var.bind == mpit_safe::Bind::Comm {
            p.var.reading = list::model::Reading::Values(vec![mpit_safe::Value::Unsigned(3)]);
            p.var.object = Some("MPI_COMM_WORLD".into());
            read_for_world += 1;
        }
    }
    assert_eq!(read_for_world, 2);
    let render = |opts: &[&str]| {
        list::Args::try_parse_from(
            ["mpit-list", "--bind", "MPI_COMM"]
                .iter()
                .chain(opts)
                .copied(),
        )
        .unwrap()
        .render(&listing)
    };
    let text = render(&[]);
    assert!(
        text.contains("pvar pml_ob1_unexpected_msgq_length = 3 (for MPI_COMM_WORLD)   [class SIZE"),
        "{text}"
    );
    let doc: serde_json::Value = serde_json::from_str(&render(&["--json"])).unwrap();
    for p in doc["pvars"].as_array().unwrap() {
        assert_eq!(p["object"], "MPI_COMM_WORLD", "{p}");
        assert_eq!(p["value"], 3, "{p}");
        assert!(p.get("bound_to").is_none(), "{p}");
    }
}

/// `mqd-dump`: recorded `--json` documents (which are its model) come back byte for byte, and
/// their text (standard output, then the error lines of standard error) is the golden text. `openmpi` is the two ranks of `examples/mqd/mqd_target.c`
/// (a pending receive, a pending send, four unexpected messages read from ob1),
/// `openmpi-no-donor` rank 0 of it with `--no-donor` (an error), `synthetic` a hand-written
/// document with the branches no live run showed (a wildcard and a matched operation, no
/// information, failed queues, an unknown rank and length; an Open MPI DLL's zero-extended
/// `MPI_ANY_SOURCE`, `MPI_PROC_NULL` and negative tag, shown by name and sign; the PML seen
/// through monitoring; a process refused under cm).
#[test]
fn mqd_dump_renders_the_recorded_queues() {
    replay_documents(
        "mqd",
        "dump",
        &["openmpi", "openmpi-no-donor", "synthetic"],
        mqd::model::Dump::json,
        |d: &mqd::model::Dump| with_errors(d.text(), &d.errors()),
    );
}

/// A tool's standard output followed by its standard error, if it wrote any, after a line
/// `-- standard error --`.
fn with_errors(stdout: String, stderr: &str) -> String {
    if stderr.is_empty() {
        stdout
    } else {
        format!("{stdout}-- standard error --\n{stderr}")
    }
}

/// For a tool whose `--json` document is its model: each `DIR/NAME.KIND.json` must come back
/// byte for byte from `json`, and `text` of it must be `DIR/NAME.txt`.
fn replay_documents<T: serde::de::DeserializeOwned>(
    dir: &str,
    kind: &str,
    names: &[&str],
    json: impl Fn(&T) -> String,
    text: impl Fn(&T) -> String,
) {
    let mut golden = Golden::new(golden_dir());
    for name in names {
        let model: T = round_trip(&format!("{dir}/{name}.{kind}.json"), &json);
        golden.check(&format!("{dir}/{name}.txt"), &text(&model));
    }
    golden.finish();
}

/// `mpir-attach`: recorded `--json` documents (its model) come back byte for byte, and their text
/// (the summary and rank lines; for the launch model each event's lines too) is the golden text.
/// `attach` is `--pid` on a running 3-rank Open MPI job, `launch` the launch model of one,
/// `trace` the launch model with `--trace` of `mpir-starter --abort-after` (an aborting event
/// with its abort string).
#[test]
fn mpir_attach_renders_the_recorded_jobs() {
    replay_documents(
        "mpir",
        "job",
        &["attach", "launch", "trace"],
        mpir::model::Job::json,
        mpir::text::render,
    );
}

/// The recorded `--trace` of an aborting job carries the abort event's string at the top level
/// too (the acquisition was read at the spawned event, before the abort).
#[test]
fn mpir_trace_abort_string_is_the_abort_events() {
    let text = read(&golden_dir().join("mpir/trace.job.json"));
    let job: mpir::model::Job = serde_json::from_str(&text).unwrap();
    let events = job.events.as_deref().unwrap();
    let last = mpir::model::Job::last_abort_string(events);
    assert!(last.is_some());
    assert_eq!(job.abort_string, Some(last));
}
