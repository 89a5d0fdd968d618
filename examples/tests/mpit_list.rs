//! `mpit-list` on the installed MPI, as a person runs it: under `$MPIEXEC -n 2` (only rank 0
//! prints), in text and `--json`. It exits 0; the JSON's counts are those `mpit-counts`
//! reports after `MPI_Init`; every listed index is an entry or a hole; every unbound pvar is
//! read (non-continuous ones started by the listing) or refused with a reason, never left
//! stopped; and where the implementation raises events (MPICH configured with
//! `--enable-mpit-events`) the event types and sources are listed with their names.

use std::process::{Command, Output};

use serde_json::Value as Json;

const LIST: &str = env!("CARGO_BIN_EXE_mpit-list");
const COUNTS: &str = env!("CARGO_BIN_EXE_mpit-counts");

/// `$MPIEXEC -n 2 PROGRAM ARGS` (`MPIEXEC` may carry arguments; set by scripts/with-mpi).
fn under_mpiexec(program: &str, args: &[&str]) -> Output {
    let launcher = std::env::var("MPIEXEC").unwrap_or_else(|_| "mpiexec".into());
    let mut words = launcher.split_whitespace();
    let mut cmd = Command::new(words.next().expect("MPIEXEC is empty"));
    cmd.args(words).args(["-n", "2", program]).args(args);
    let out = cmd.output().expect("run the launcher");
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    }
    out
}

/// `mpit-counts --kv`: the counts after `MPI_Init`, by key.
fn counts() -> std::collections::BTreeMap<String, String> {
    let out = Command::new(COUNTS).arg("--kv").output().unwrap();
    assert!(out.status.success(), "mpit-counts: {out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().last().unwrap_or("").to_owned();
    let mut kv = std::collections::BTreeMap::new();
    let mut rest = line.as_str();
    while let Some((k, v)) = rest.split_once('=') {
        let k = k.trim().to_owned();
        let (value, tail) = if let Some(q) = v.strip_prefix('"') {
            let end = q.find('"').unwrap();
            (q[..end].to_owned(), &q[end + 1..])
        } else {
            let end = v.find(' ').unwrap_or(v.len());
            (v[..end].to_owned(), &v[end..])
        };
        kv.insert(k, value);
        rest = tail;
    }
    kv
}

/// MPICH raises events only when configured `--enable-mpit-events` (its library version
/// string lists the configure options); no other implementation here raises any.
fn events_required() -> bool {
    mpit_safe::implementation().vendor == mpit_safe::Vendor::Mpich
        && mpit_safe::quirks::configure_option("--enable-mpit-events").is_some_and(|v| v != "no")
}

#[test]
fn mpit_list_lists_everything_under_mpiexec() {
    let text = under_mpiexec(LIST, &[]);
    assert!(text.status.success(), "mpit-list: {}", text.status);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(!text.is_empty(), "rank 0 printed nothing");

    let out = under_mpiexec(LIST, &["--json"]);
    assert!(out.status.success(), "mpit-list --json: {}", out.status);
    let doc: Json = serde_json::from_slice(&out.stdout).expect("one JSON document from rank 0");
    assert_eq!(doc["mpi_init"], true);
    assert_eq!(
        doc["errors"].as_array().map(Vec::len),
        Some(0),
        "{}",
        doc["errors"]
    );

    let kv = counts();
    for (json_key, kv_key) in [
        ("cvars", "cvars"),
        ("pvars", "pvars"),
        ("categories", "categories"),
    ] {
        assert_eq!(
            doc["counts"][json_key]
                .as_u64()
                .map(|n| n.to_string())
                .as_deref(),
            kv.get(kv_key).map(String::as_str),
            "{json_key}: mpit-list and mpit-counts disagree"
        );
    }
    let holes = doc["counts"]["holes"].as_u64().unwrap();
    let listed = |k: &str| doc[k].as_array().map_or(0, Vec::len) as u64;
    let count = |k: &str| doc["counts"][k].as_u64().unwrap();
    let variable_holes = doc["holes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| ["cvar", "pvar", "category"].contains(&h["kind"].as_str().unwrap_or("")))
        .count() as u64;
    assert_eq!(
        listed("cvars") + listed("pvars") + listed("categories") + variable_holes,
        count("cvars") + count("pvars") + count("categories"),
        "every index below a count is an entry or a hole"
    );

    // Every unbound pvar was read (started first if not continuous) or refused with a reason.
    let mut started = 0;
    for p in doc["pvars"].as_array().unwrap() {
        if p["bind"] != "NO_OBJECT" {
            continue;
        }
        let name = p["name"].as_str().unwrap();
        if p["continuous"] == false && p["error"].is_null() {
            assert_eq!(p["started"], true, "{name} was read without being started");
            started += 1;
        }
        if let Some(e) = p["error"].as_str() {
            assert!(
                e.starts_with("refused"),
                "{name}: an unbound pvar failed to read: {e}"
            );
        }
        if let Some(broken) = p["rule_broken"].as_str() {
            eprintln!("flagged: {name}: {broken}");
        }
    }

    let events = doc["events"]["event_types"].as_array().unwrap();
    let sources = doc["events"]["sources"].as_array().unwrap();
    if events_required() {
        assert!(
            !events.is_empty() && !sources.is_empty(),
            "no event types or sources"
        );
        for e in events.iter().chain(sources) {
            assert!(!e["name"].as_str().unwrap_or("").is_empty(), "unnamed: {e}");
        }
        for e in events {
            assert!(text.contains(&format!("event {} [", e["name"].as_str().unwrap())));
        }
    }
    eprintln!(
        "{} {}: {} cvars, {} pvars ({started} started for the listing), {} categories, {holes} \
         holes; event types [{}], sources [{}]",
        doc["implementation"].as_str().unwrap_or("?"),
        doc["version"].as_str().unwrap_or("?"),
        listed("cvars"),
        listed("pvars"),
        doc["categories"].as_array().map_or(0, Vec::len),
        events
            .iter()
            .map(|e| e["name"].as_str().unwrap_or("?"))
            .collect::<Vec<_>>()
            .join(", "),
        sources
            .iter()
            .map(|e| e["name"].as_str().unwrap_or("?"))
            .collect::<Vec<_>>()
            .join(", "),
    );
}
