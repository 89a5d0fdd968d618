//! `mpit-list` on the installed MPI, as a person runs it: under `$MPIEXEC -n 2` (only rank 0
//! prints), in text and `--json`. It exits 0; the JSON is valid against its schema and its
//! counts are those `mpit-counts --json` reports after `MPI_Init`; every listed index is an
//! entry or a hole; every unbound pvar is read (non-continuous ones started by the listing) or
//! refused with a reason, never left stopped; every pvar bound to a communicator is read for
//! `MPI_COMM_WORLD` or fails with a reason; and where the implementation raises events (MPICH
//! configured with `--enable-mpit-events`) the event types and sources are listed with their
//! names. The environment variable the listing names for a cvar sets it: set to another value,
//! the listing shows that value.

use std::process::{Command, Output};

use serde_json::Value as Json;

use mpit_test_support::schema;

const LIST: &str = env!("CARGO_BIN_EXE_mpit-list");
const COUNTS: &str = env!("CARGO_BIN_EXE_mpit-counts");

/// `$MPIEXEC -n 2 PROGRAM ARGS` (`MPIEXEC` may carry arguments; set by scripts/with-mpi).
fn under_mpiexec(program: &str, args: &[&str]) -> Output {
    let words =
        mpit_safe::launcher().expect("no MPI launcher: set MPIEXEC (scripts/with-mpi does)");
    let mut cmd = Command::new(&words[0]);
    cmd.args(&words[1..]).args(["-n", "2", program]).args(args);
    let out = cmd.output().expect("run the launcher");
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    }
    out
}

/// `mpit-counts --json` (validated against its schema): the counts before and after
/// `MPI_Init`.
fn counts() -> Json {
    let out = Command::new(COUNTS).arg("--json").output().unwrap();
    assert!(out.status.success(), "mpit-counts: {out:?}");
    schema::assert_valid_text("mpit-counts", &String::from_utf8(out.stdout).unwrap())
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
    let doc = schema::assert_valid_text("mpit-list", &String::from_utf8(out.stdout).unwrap());
    assert_eq!(doc["mpi_init"], true);
    assert_eq!(
        doc["errors"].as_array().map(Vec::len),
        Some(0),
        "{}",
        doc["errors"]
    );

    let after = &counts()["after"];
    for key in ["cvars", "pvars", "categories"] {
        assert_eq!(
            doc["counts"][key], after[key],
            "{key}: mpit-list and mpit-counts disagree"
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

    // Every unbound pvar was read (started first if not continuous) or refused with a reason;
    // every pvar bound to a communicator was read for MPI_COMM_WORLD or failed with a reason.
    let mut started = 0;
    let mut bound = 0;
    for p in doc["pvars"].as_array().unwrap() {
        let name = p["name"].as_str().unwrap();
        if p["bind"] == "MPI_COMM" {
            bound += 1;
            assert_eq!(p["object"], "MPI_COMM_WORLD", "{name}: {p}");
            assert!(
                !p["value"].is_null() || p["error"].is_string(),
                "{name}: neither read nor failed: {p}"
            );
            continue;
        }
        if p["bind"] != "NO_OBJECT" {
            assert!(p["bound_to"].is_string(), "{name}: {p}");
            continue;
        }
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
        "{} {}: {} cvars, {} pvars ({started} started for the listing, {bound} read for \
         MPI_COMM_WORLD), {} categories, {holes} holes; event types [{}], sources [{}]",
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

/// Cvars whose environment variable the test sets, with a value other than their default:
/// each one the listing has is checked, and it must have one.
const SETTABLE: [(&str, i64); 4] = [
    // MPICH 4 and 5, Intel MPI: the largest "short" broadcast (default 12288).
    ("MPIR_CVAR_BCAST_SHORT_MSG_SIZE", 4096),
    // Intel MPI's own: the offload domain size (default -1).
    ("I_MPI_OFFLOAD_DOMAIN_SIZE", 7),
    // Open MPI 4.1 and 5: the basic collective component's crossover (default 4).
    ("coll_basic_crossover", 7),
    // Open MPI 4.1 and 5: the TCP BTL's send buffer size (default 0).
    ("btl_tcp_sndbuf", 12345),
];

/// `mpit-list --json --name NAME` as a singleton, with `env` set; the cvar's entry.
fn cvar_entry(name: &str, env: Option<(&str, String)>) -> Json {
    let mut cmd = Command::new(LIST);
    cmd.args(["--json", "--name", name]);
    if let Some((k, v)) = env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "mpit-list --name {name}: {out:?}");
    let doc = schema::assert_valid_text("mpit-list", &String::from_utf8(out.stdout).unwrap());
    doc["cvars"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no cvar {name}"))
}

#[test]
fn the_environment_variable_listed_for_a_cvar_sets_it() {
    let out = Command::new(LIST).args(["--json"]).output().unwrap();
    assert!(out.status.success(), "mpit-list: {out:?}");
    let doc = schema::assert_valid_text("mpit-list", &String::from_utf8(out.stdout).unwrap());
    let listed = |n: &str| {
        doc["cvars"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == n)
    };
    let settable: Vec<(&str, i64)> = SETTABLE.into_iter().filter(|(n, _)| listed(n)).collect();
    assert!(
        !settable.is_empty(),
        "none of {SETTABLE:?} is listed by {} {}: add one of its cvars",
        doc["implementation"],
        doc["version"]
    );
    for (name, value) in settable {
        let before = cvar_entry(name, None);
        let env = before["env"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no environment variable listed: {before}"))
            .to_owned();
        assert_ne!(
            before["value"], value,
            "{name} already has the test's value"
        );
        let after = cvar_entry(name, Some((&env, value.to_string())));
        assert_eq!(
            after["value"], value,
            "{env}={value} did not set {name}: {after}"
        );
        eprintln!(
            "{env}={value}: {name} {} -> {}",
            before["value"], after["value"]
        );
    }
}
