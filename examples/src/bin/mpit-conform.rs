//! `mpit-conform`: property-based conformance tests of the installed MPI's MPI_T against the
//! standard (`mpit_safe::conformance`), with a report.
//!
//! ```text
//! mpit-conform [--json] [--only ID]... [--cases N] [--list]
//! ```
//!
//! Every property runs in a child process (this program re-executed with `--run-property ID`),
//! so a crash inside MPI is a finding that names the call. Exit status: 0 when nothing was
//! found, 1 when some property has a finding, 2 on a usage error.
//!
//! Where the header has the MPI-4 event API (MPICH), the event properties run with the test
//! event provider preloaded (`examples/event-provider/`, built by this package's build script):
//! the MPICH builds here raise no events themselves.

use std::process::ExitCode;

use clap::Parser;
use mpit_safe::conformance::{self, Config, Report, Status};
use serde_json::json;

/// Property-based conformance tests of the installed MPI's MPI_T against the standard.
#[derive(Parser, Debug)]
#[command(name = "mpit-conform")]
struct Args {
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Run only this property (repeatable).
    #[arg(long)]
    only: Vec<String>,
    /// Generated cases per property (default: $MPIT_CONFORM_CASES or 64).
    #[arg(long)]
    cases: Option<u32>,
    /// List the properties and exit.
    #[arg(long)]
    list: bool,
}

fn provider() -> Option<std::path::PathBuf> {
    option_env!("MPIT_EVENT_PROVIDER").map(Into::into)
}

fn json_report(r: &Report) -> serde_json::Value {
    json!({
        "implementation": {
            "name": r.implementation.name,
            "version": r.implementation.version,
            "library_version": r.implementation.library_version,
            "mpi_version": format!("{}.{}", r.implementation.mpi_version.0, r.implementation.mpi_version.1),
        },
        "cases": r.cases,
        "findings": r.findings(),
        "properties": r.outcomes.iter().map(|o| json!({
            "id": o.id,
            "section": o.section,
            "rule": o.rule,
            "status": o.status.to_string(),
            "counterexample": o.counterexample,
            "detail": o.detail,
            "seconds": (o.seconds * 100.0).round() / 100.0,
        })).collect::<Vec<_>>(),
    })
}

fn print_text(r: &Report) {
    let i = &r.implementation;
    println!(
        "mpit-conform: {} {} (MPI {}.{}), library: {}",
        i.name, i.version, i.mpi_version.0, i.mpi_version.1, i.library_version
    );
    println!("{} cases per generated property\n", r.cases);
    for o in &r.outcomes {
        let tag = match &o.status {
            Status::Pass => "PASS   ".to_string(),
            Status::Finding { kind } => format!("FINDING ({kind})"),
            Status::Skip { .. } => "SKIP   ".to_string(),
        };
        println!("{tag} {}  [{}]  {:.1} s", o.id, o.section, o.seconds);
        println!("    rule: {}", o.rule);
        if let Some(c) = &o.counterexample {
            println!("    counterexample: {c}");
        }
        if !o.detail.is_empty() {
            println!("    {}", o.detail);
        }
    }
    println!(
        "\n{} properties: {}",
        r.outcomes.len(),
        conformance::summary(r)
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

fn main() -> ExitCode {
    conformance::child_main();
    let args = Args::parse();
    if args.list {
        for p in conformance::properties() {
            println!("{}\t{}\t{}", p.id, p.section, p.rule);
        }
        return ExitCode::SUCCESS;
    }
    let known: Vec<&str> = conformance::properties().iter().map(|p| p.id).collect();
    if let Some(bad) = args.only.iter().find(|o| !known.contains(&o.as_str())) {
        eprintln!("mpit-conform: no property {bad:?} (see --list)");
        return ExitCode::from(2);
    }
    let mut cfg = Config {
        only: args.only,
        event_provider: provider(),
        ..Config::default()
    };
    if let Some(c) = args.cases {
        cfg.cases = c;
    }
    let report = conformance::run(&cfg);
    if args.json {
        println!("{:#}", json_report(&report));
    } else {
        print_text(&report);
    }
    if report.findings() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
