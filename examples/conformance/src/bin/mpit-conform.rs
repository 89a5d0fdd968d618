//! `mpit-conform`: property-based conformance tests of the installed MPI's MPI_T against the
//! standard (the `mpit_conformance` library), with a report.
//!
//! ```text
//! mpit-conform [--json] [--only ID]... [--cases N] [--list] [--repro-dir DIR]
//! ```
//!
//! Every property runs in a child process (this program re-executed with `--run-property ID`),
//! so a crash inside MPI is a finding that names the call. Each finding is graded
//! (`violation`, `error-class`, `unchecked-input`), names the rule of the standard it departs
//! from, and comes with a standalone C reproducer written into `--repro-dir` (default
//! `target/conform-repro/<key>/`, the key as in `examples/conformance/expected/<key>.expected`), one
//! `.c` file per finding with its build and run line. `--json` prints the report as one JSON
//! document (schema: `examples/schemas/mpit-conform.schema.json`).
//!
//! Exit status: 0 when nothing was found, 1 when some property has a finding, 2 on a usage
//! error (an unknown option or property); errors go to standard error.
//!
//! The event properties run against the MPI's own events and sources after `MPI_Init`, and,
//! where the header has the MPI-4 event API, against the test event provider
//! (`examples/event-provider/`, built by this package's build script, preloaded): the
//! `*.provider` properties and `events.model`, which raises events at chosen safety levels.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use mpit_conformance::{self as conformance, Config, Report, Status};
use serde_json::json;

/// Exit statuses, as `--help` lists them.
const EXIT_STATUS: &str = "Exit status: 0 when nothing was found, 1 when some property has a \
                           finding, 2 on a usage error (an unknown option or property).";

/// Property-based conformance tests of the installed MPI's MPI_T against the standard.
#[derive(Parser, Debug)]
#[command(name = "mpit-conform", version, after_help = EXIT_STATUS)]
struct Args {
    /// Print the report as one JSON document (schema: examples/schemas/mpit-conform.schema.json).
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
    /// Where to write the C reproducers (default: target/conform-repro/KEY/ under the
    /// workspace, KEY as in examples/conformance/expected/KEY.expected).
    #[arg(long)]
    repro_dir: Option<PathBuf>,
}

/// `conform-repro/<key>` in the `target` directory this executable lives in (cargo's
/// `target/<impl>/<profile>/mpit-conform`), else in the current directory.
fn default_repro_dir(key: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let target = exe
        .ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "target"))
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    target.join("conform-repro").join(key)
}

/// The test event provider: `MPIT_EVENT_PROVIDER` at run time (the ABI build has none of its
/// own: `scripts/with-mpi abi:IMPL` builds one for IMPL's ABI library), else the one built
/// with this crate if it is still there (`cargo install` removes its build directory).
fn provider() -> Option<std::path::PathBuf> {
    std::env::var_os("MPIT_EVENT_PROVIDER")
        .filter(|p| !p.is_empty())
        .map(Into::into)
        .or_else(|| {
            option_env!("MPIT_EVENT_PROVIDER")
                .map(PathBuf::from)
                .filter(|p| p.is_file())
        })
}

fn json_report(r: &Report, repros: &[Option<PathBuf>]) -> serde_json::Value {
    let i = &r.implementation;
    let mut paths = repros.iter();
    json!({
        "implementation": {
            "vendor": i.library.vendor.name(),
            "version": i.library.version.to_string(),
            "key": i.key,
            "library_version": i.library_version,
            "library_version_full": i.library_version_full,
            "mpi_version": format!("{}.{}", i.mpi_version.0, i.mpi_version.1),
        },
        "cases": r.cases,
        "findings": r.findings(),
        "properties": r.outcomes.iter().map(|o| json!({
            "id": o.id,
            "section": o.section,
            "rule": o.rule,
            "phase": o.phase.describe(),
            "status": o.status.to_string(),
            "detail": o.detail,
            "seconds": (o.seconds * 100.0).round() / 100.0,
            "findings": o.findings.iter().enumerate().map(|(n, f)| {
                let path = paths.next().cloned().flatten();
                let name = conformance::repro_name(o.id, n);
                json!({
                    "kind": f.kind,
                    "grade": f.grade.as_str(),
                    "tag": f.tag(),
                    "rule": {
                        "id": f.rule.id,
                        "spec": f.rule.spec,
                        "section": f.rule.section,
                        "text": f.rule.text,
                    },
                    "grade_basis": f.grade.basis(),
                    "counterexample": f.counterexample,
                    "detail": f.detail,
                    "repro": f.repro.as_ref().map(|rp| json!({
                        "path": path,
                        "ranks": rp.ranks,
                        "expect": rp.expect.describe(),
                        "command": rp.command(&name),
                    })),
                })
            }).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

fn print_text(r: &Report, repros: &[Option<PathBuf>], dir: &std::path::Path) {
    let i = &r.implementation;
    println!(
        "mpit-conform: {} (MPI {}.{}), key {}, library: {}",
        i.library,
        i.mpi_version.0,
        i.mpi_version.1,
        i.key.unwrap_or("(none)"),
        i.library_version
    );
    println!(
        "{} cases per generated property; C reproducers in {}\n",
        r.cases,
        dir.display()
    );
    let mut paths = repros.iter();
    for o in &r.outcomes {
        let tag = match &o.status {
            Status::Pass => "PASS   ",
            Status::Finding => "FINDING",
            Status::Skip { .. } => "SKIP   ",
            Status::LauncherRefused { .. } => "LAUNCHER REFUSED",
        };
        println!(
            "{tag} {}  [{}]  {}  {:.1} s",
            o.id,
            o.section,
            o.phase.describe(),
            o.seconds
        );
        println!("    rule: {}", o.rule);
        if !o.detail.is_empty() {
            println!("    {}", o.detail);
        }
        for (n, f) in o.findings.iter().enumerate() {
            let path = paths.next().cloned().flatten();
            println!("    - {} ({}): {}", f.kind, f.grade, f.counterexample);
            if f.detail != f.counterexample {
                println!("      {}", f.detail);
            }
            println!(
                "      breaks {}: {} {}",
                f.rule.id, f.rule.spec, f.rule.section
            );
            println!("        \"{}\"", f.rule.text);
            if f.grade == conformance::Grade::UncheckedInput {
                println!("      graded {}: {}", f.grade, f.grade.basis());
            }
            if let (Some(rp), Some(p)) = (&f.repro, path) {
                let name = conformance::repro_name(o.id, n);
                println!(
                    "      reproducer: {} (shows as {}): cd {} && {}",
                    p.display(),
                    rp.expect.describe(),
                    dir.display(),
                    rp.command(&name)
                );
            }
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
            println!(
                "{}\t{}\t{}\t{}",
                p.id,
                p.section,
                p.phase.describe(),
                p.rule
            );
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
    let dir = args
        .repro_dir
        .unwrap_or_else(|| default_repro_dir(report.implementation.key.unwrap_or("unknown")));
    let repros = match report.write_repros(&dir) {
        Ok(p) => p,
        Err(e) => {
            eprintln!(
                "mpit-conform: cannot write the reproducers into {}: {e}",
                dir.display()
            );
            Vec::new()
        }
    };
    if args.json {
        println!("{:#}", json_report(&report, &repros));
    } else {
        print_text(&report, &repros, &dir);
    }
    if report.findings() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
