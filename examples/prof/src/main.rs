//! `mpit-prof`: profiles an MPI program's performance variables per region and MPI function.
//!
//! ```text
//! mpiexec -n 4 mpit-prof [--mode region|call] [--pvars REGEX] [--classes C,..]
//!                        [--verbosity V] [--output DIR] [--progress] [--events]
//!                        [--trace [--trace-buffer MIB] [--trace-clock tsc|monotonic]]
//!                        -- ./app args
//! mpit-prof report [--trace] DIR
//! mpit-prof diff DIR1 DIR2
//! ```
//!
//! Run under any launcher, once per rank: it sets the `MPIT_PROF_*` variables, puts
//! `libmpit_prof.so` (`MPIT_PROF_LIB`, else the one next to this executable, else the copy a
//! release build carries, written once to a cache: `src/preload.rs`) first in `LD_PRELOAD`
//! and `exec`s the program, so its exit status is the program's. A program linked against another libmpi than the one
//! the library was built for runs unchanged, after one line saying so.
//!
//! Exit status: when it runs a program, the program's (126 when it cannot be run, 127 when it
//! is not found, 1 when `libmpit_prof.so` is missing); `report` and `diff` exit 0, or 1 when an
//! output directory (or its trace) cannot be read; 2 on a usage error. Errors go to standard
//! error.

#![forbid(unsafe_code)]

use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::str::FromStr;

use clap::{CommandFactory, Parser, Subcommand};
use preload::LIBRARY;

mod elf;
mod preload;

/// The SONAME of the libmpi the library was built against (`libmpi.so.40`).
const BUILD_SONAME: &str = env!("MPIT_PROF_BUILD_SONAME");
/// That library's file.
const BUILD_LIBMPI: &str = env!("MPIT_PROF_BUILD_LIBMPI");
/// Exit statuses, as `--help` lists them.
const EXIT_STATUS: &str = "Exit status: when it runs a program, the program's (126 when it \
                           cannot be run, 127 when it is not found, 1 when libmpit_prof.so is \
                           missing); report and diff exit 0, or 1 when an output directory \
                           (or its trace) cannot be read; 2 on a usage error. Errors go to \
                           standard error.";

#[derive(Parser)]
#[command(
    name = "mpit-prof",
    version,
    about = "Profile an MPI program's performance variables (MPI_T pvars) per region and MPI \
             function",
    long_about = "Profile an MPI program's performance variables (MPI_T pvars) per region and \
                  MPI function.\n\nRun it under the launcher, once per rank:\n  mpiexec -n 4 \
                  mpit-prof [OPTIONS] -- ./app args\nRank 0 writes profile.txt, profile.json \
                  (Caliper json-split, for Hatchet), comm-matrix.json and SVG heat maps of \
                  per-peer pvars, and ranks.json into the output directory. The options can also \
                  be given as MPIT_PROF_MODE, MPIT_PROF_PVARS, MPIT_PROF_CLASSES, \
                  MPIT_PROF_VERBOSITY, MPIT_PROF_OUTPUT, MPIT_PROF_PROGRESS, MPIT_PROF_EVENTS, \
                  MPIT_PROF_TRACE, MPIT_PROF_TRACE_BUFFER and MPIT_PROF_TRACE_CLOCK.",
    after_help = EXIT_STATUS,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Sub>,
    #[command(flatten)]
    run: Run,
}

#[derive(clap::Args)]
struct Run {
    /// When pvars are read: at region boundaries only (region, the default: within 2-3% of an
    /// unprofiled small-message round trip) or also at every MPI call's entry and exit (call:
    /// every pvar read twice a call, so a program of many short calls can take twice as long
    /// or more: see "Cost" in docs/profiler.md).
    #[arg(long, value_parser = ["region", "call"])]
    mode: Option<String>,
    /// Profile only the pvars whose name matches this regular expression.
    #[arg(long, value_name = "REGEX", value_parser = regex_arg)]
    pvars: Option<String>,
    /// Profile only pvars of these classes (counter, timer, level, ...).
    #[arg(long, value_name = "CLASS,...", value_delimiter = ',', value_parser = class_arg)]
    classes: Vec<String>,
    /// Profile only pvars at this verbosity or below (user_basic ... mpidev_all).
    #[arg(long, value_name = "LEVEL", value_parser = verbosity_arg)]
    verbosity: Option<String>,
    /// The output directory (default: mpit-prof-<date>-<time> in the working directory).
    #[arg(long, value_name = "DIR")]
    output: Option<PathBuf>,
    /// Progress lines on standard error.
    #[arg(long)]
    progress: bool,
    /// Count MPI_T events per region (MPI-4 event API).
    #[arg(long)]
    events: bool,
    /// Also write an OTF2 trace of every MPI call and message to <output>/trace/traces.otf2
    /// (read by otf2-print, Vampir, Python's otf2).
    #[arg(long)]
    trace: bool,
    /// The most memory per rank the trace's buffers hold, in MiB (default 64): a full
    /// buffer is flushed to its file, never dropped.
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..))]
    trace_buffer: Option<u64>,
    /// The trace's clock: `tsc` (the time stamp counter, the default where it is invariant)
    /// or `monotonic` (CLOCK_MONOTONIC).
    #[arg(long, value_name = "CLOCK", value_parser = ["tsc", "monotonic"])]
    trace_clock: Option<String>,
    /// The program and its arguments, after `--`.
    #[arg(last = true, value_name = "PROGRAM")]
    program: Vec<OsString>,
}

#[derive(Subcommand)]
enum Sub {
    /// Print the profile table of an output directory again (from its ranks.json).
    Report {
        /// Instead, summarise the directory's OTF2 trace (trace/traces.otf2, or DIR names the
        /// anchor file itself): per rank its records by kind, its MPI_T events and the span
        /// of its timeline, and the trace's properties.
        #[arg(long)]
        trace: bool,
        /// An output directory of mpit-prof (with --trace, also its trace's anchor file).
        dir: PathBuf,
    },
    /// Compare two output directories: per node and metric, both values and the change.
    Diff {
        /// The first run's output directory.
        before: PathBuf,
        /// The second run's output directory.
        after: PathBuf,
    },
}

fn regex_arg(s: &str) -> Result<String, String> {
    regex::Regex::new(s)
        .map(|_| s.to_owned())
        .map_err(|e| e.to_string())
}

fn class_arg(s: &str) -> Result<String, String> {
    mpit_safe::PvarClass::from_str(s)
        .map(|_| s.trim().to_owned())
        .map_err(|e| e.to_string())
}

fn verbosity_arg(s: &str) -> Result<String, String> {
    mpit_safe::Verbosity::from_str(s)
        .map(|_| s.trim().to_owned())
        .map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Sub::Report { dir, trace: false }) => {
            mpit_prof::write::report(&dir).map(|t| print!("{t}"))
        }
        Some(Sub::Report { dir, trace: true }) => {
            mpit_prof::write::trace_report::report(&dir).map(|t| print!("{t}"))
        }
        Some(Sub::Diff { before, after }) => {
            mpit_prof::write::diff(&before, &after).map(|t| print!("{t}"))
        }
        None => {
            if cli.run.program.is_empty() {
                Cli::command()
                    .error(
                        clap::error::ErrorKind::MissingRequiredArgument,
                        "no program given: mpit-prof [OPTIONS] -- PROGRAM [ARGS]...",
                    )
                    .exit();
            }
            return launch(cli.run);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mpit-prof: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Sets the environment and `exec`s the program; returns only if that fails.
fn launch(run: Run) -> ExitCode {
    let program = &run.program[0];
    let args = &run.program[1..];
    let mut cmd = Command::new(program);
    cmd.args(args);
    let path = resolve(program);

    let library = match preload::find() {
        Ok(found) => found.path().to_path_buf(),
        Err(why) => {
            eprintln!("mpit-prof: {why}");
            return ExitCode::FAILURE;
        }
    };

    let preload = match std::env::var_os("LD_PRELOAD").filter(|p| !p.is_empty()) {
        Some(old) => {
            let mut p = library.clone().into_os_string();
            p.push(":");
            p.push(old);
            p
        }
        None => library.clone().into_os_string(),
    };

    let mut elf = false;
    if let Some(path) = &path {
        match elf::dynamic(path) {
            Ok(Some(dynamic)) => {
                elf = true;
                if let Some(why) = wrong_library(path, &dynamic, &preload) {
                    eprintln!(
                        "mpit-prof: not profiling: {why}; {LIBRARY} was built for {}; the \
                         program runs unchanged",
                        built_for()
                    );
                    return exec(cmd, program);
                }
            }
            Ok(None) => {}
            Err(e) => eprintln!("mpit-prof: cannot read {e}; running it anyway"),
        }
    }

    let set = |cmd: &mut Command, var: &str, value: Option<String>| {
        if let Some(v) = value {
            cmd.env(var, v);
        }
    };
    set(&mut cmd, "MPIT_PROF_MODE", run.mode);
    set(&mut cmd, "MPIT_PROF_PVARS", run.pvars);
    set(
        &mut cmd,
        "MPIT_PROF_CLASSES",
        (!run.classes.is_empty()).then(|| run.classes.join(",")),
    );
    set(&mut cmd, "MPIT_PROF_VERBOSITY", run.verbosity);
    // Absolute, so a program that changes directory still writes where it was asked.
    set(
        &mut cmd,
        "MPIT_PROF_OUTPUT",
        run.output
            .map(|o| std::path::absolute(&o).unwrap_or(o).display().to_string()),
    );
    set(
        &mut cmd,
        "MPIT_PROF_PROGRESS",
        run.progress.then(|| "1".into()),
    );
    set(&mut cmd, "MPIT_PROF_EVENTS", run.events.then(|| "1".into()));
    set(&mut cmd, "MPIT_PROF_TRACE", run.trace.then(|| "1".into()));
    set(
        &mut cmd,
        "MPIT_PROF_TRACE_BUFFER",
        run.trace_buffer.map(|m| m.to_string()),
    );
    set(&mut cmd, "MPIT_PROF_TRACE_CLOCK", run.trace_clock.clone());
    // `exec` keeps the pid: the program's own process (not its children, not a script's
    // interpreter's children) reports a missing MPI_Init.
    cmd.env("LD_PRELOAD", preload);
    if elf {
        cmd.env("MPIT_PROF_PID", std::process::id().to_string());
        cmd.env_remove("MPIT_PROF_MARK");
        return exec(cmd, program);
    }
    cmd.env_remove("MPIT_PROF_PID");
    run_script(cmd, program)
}

/// Runs a program that is not an ELF file (a script, e.g. a pyenv shim): which of its
/// processes is "the program" is unknown, so the launcher waits for it and says afterwards if
/// none of them called `MPI_Init` (the preload library creates the file `MPIT_PROF_MARK`
/// names when one does). The exit status is the script's (128 + N when signal N ended it, as
/// shells report).
fn run_script(mut cmd: Command, program: &OsString) -> ExitCode {
    use std::os::unix::process::ExitStatusExt as _;
    let mark = std::env::temp_dir().join(format!("mpit-prof-init-{}", std::process::id()));
    let _ = std::fs::remove_file(&mark);
    cmd.env("MPIT_PROF_MARK", &mark);
    let status = match cmd.status() {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "mpit-prof: cannot run {}: {e}",
                Path::new(program).display()
            );
            return ExitCode::from(if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            });
        }
    };
    if std::fs::remove_file(&mark).is_err() {
        eprintln!(
            "mpit-prof: {} (a script) ran no process that called MPI_Init or \
             MPI_Init_thread: nothing was profiled",
            Path::new(program).display()
        );
    }
    let code = match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        (None, None) => 1,
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// Replaces this process with `cmd`; returns only on failure (126: not runnable, 127: not
/// found, as shells do).
fn exec(mut cmd: Command, program: &OsString) -> ExitCode {
    let e = cmd.exec();
    eprintln!(
        "mpit-prof: cannot run {}: {e}",
        Path::new(program).display()
    );
    ExitCode::from(if e.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    })
}

/// The file `exec` will run: `program` itself if it names a path, else the first match in
/// `PATH`.
fn resolve(program: &OsString) -> Option<PathBuf> {
    let p = Path::new(program);
    if p.components().count() > 1 || p.is_absolute() {
        return p.is_file().then(|| p.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(p))
        .find(|c| c.is_file())
}

/// Why `path` must run unprofiled, if it must: it is linked against another libmpi than ours
/// (its DT_NEEDED), or the dynamic loader would give it another libmpi file, or our library
/// would not load beside it (a `PMPI_` function missing: the library is bound at load time).
///
/// The second and third come from the loader itself, in trace mode as `ldd -r` runs it
/// (`LD_TRACE_LOADED_OBJECTS`, every symbol bound now, unresolved ones reported): it lists
/// what it would load and stops before the program runs. Only for programs that name their
/// loader (PT_INTERP); a static program would run.
fn wrong_library(path: &Path, dynamic: &elf::Dynamic, preload: &OsStr) -> Option<String> {
    if let Some(other) = other_libmpi(&dynamic.needed) {
        return Some(format!("{} is linked against {other}", path.display()));
    }
    let interpreter = dynamic.interpreter.as_ref()?;
    let out = Command::new(interpreter)
        .arg(path)
        .env("LD_TRACE_LOADED_OBJECTS", "1")
        .env("LD_WARN", "yes")
        .env("LD_BIND_NOW", "yes")
        .env("LD_PRELOAD", preload)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let (loaded, missing) = parse_trace(&text);
    if let Some(first) = missing.first() {
        return Some(format!(
            "{LIBRARY} cannot be loaded beside {}: {} of its PMPI functions are missing from \
             the libmpi it would get ({first}, ...)",
            path.display(),
            missing.len()
        ));
    }
    let ours = std::fs::canonicalize(BUILD_LIBMPI).ok()?;
    let loaded = loaded?;
    let theirs = std::fs::canonicalize(&loaded).unwrap_or(loaded);
    (!same_library(&theirs, &ours))
        .then(|| format!("{} would load {}", path.display(), theirs.display()))
}

/// The same file, or an identical copy of it: Intel MPI's wheel ships `libmpi.so`,
/// `libmpi.so.12`, ... as copies, not symbolic links.
fn same_library(a: &Path, b: &Path) -> bool {
    if a == b {
        return true;
    }
    let len = |p: &Path| std::fs::metadata(p).map(|m| m.len()).ok();
    len(a).is_some()
        && len(a) == len(b)
        && matches!((std::fs::read(a), std::fs::read(b)), (Ok(x), Ok(y)) if x == y)
}

/// From the loader's trace: the file of the libmpi it resolves and the symbols of our library
/// it cannot bind.
fn parse_trace(text: &str) -> (Option<PathBuf>, Vec<String>) {
    let mut libmpi = None;
    let mut missing = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some((name, rest)) = line.split_once(" => ")
            && elf::is_libmpi(name.trim())
            && libmpi.is_none()
        {
            libmpi = rest.split(" (").next().map(|p| PathBuf::from(p.trim()));
        }
        if let Some(sym) = line.strip_prefix("undefined symbol: ")
            && line.contains(LIBRARY)
        {
            missing.extend(sym.split_whitespace().next().map(str::to_owned));
        }
    }
    (libmpi, missing)
}

/// The library the wrappers were built for: its SONAME and file (the ABI build names no
/// file: any library of the MPI-5 ABI).
fn built_for() -> String {
    if BUILD_LIBMPI.is_empty() {
        format!("{BUILD_SONAME} (any MPI-5 ABI library)")
    } else {
        format!("{BUILD_SONAME} ({BUILD_LIBMPI})")
    }
}

/// A libmpi among `needed` that is not ours (`None`: ours, or none at all, as for a script,
/// a Python interpreter or a program linked through another library; the preload library
/// checks those at `MPI_Init`).
fn other_libmpi(needed: &[String]) -> Option<&str> {
    let mpis: Vec<&str> = needed
        .iter()
        .map(String::as_str)
        .filter(|n| elf::is_libmpi(n))
        .collect();
    if mpis.is_empty() || BUILD_SONAME.is_empty() || mpis.contains(&BUILD_SONAME) {
        None
    } else {
        Some(mpis[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libmpi_comparison() {
        let ours = BUILD_SONAME.to_owned();
        assert!(elf::is_libmpi(&ours), "{ours}");
        let other = if ours.ends_with(".so.12") {
            "libmpi.so.40"
        } else {
            "libmpi.so.12"
        };
        let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(other_libmpi(&v(&["libc.so.6", &ours])), None);
        assert_eq!(other_libmpi(&v(&["libc.so.6"])), None);
        assert_eq!(other_libmpi(&v(&["libmpifort.so.12", "libc.so.6"])), None);
        assert_eq!(other_libmpi(&v(&[other, "libc.so.6"])), Some(other));
    }

    #[test]
    fn loader_trace() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\t/t/libmpit_prof.so (0x00007f)\n\
                    \tlibmpi.so.40 => /usr/lib/x86_64-linux-gnu/libmpi.so.40 (0x00007f)\n\
                    undefined symbol: PMPI_Allgather_init\t(/t/libmpit_prof.so)\n\
                    undefined symbol: foo\t(/usr/lib/libother.so)\n";
        let (lib, missing) = parse_trace(text);
        assert_eq!(
            lib,
            Some(PathBuf::from("/usr/lib/x86_64-linux-gnu/libmpi.so.40"))
        );
        assert_eq!(missing, ["PMPI_Allgather_init"]);
        assert!(elf::is_libmpi("libmpich.so.12"));
        assert!(!elf::is_libmpi("libmpich_foo.so.12"));
        assert!(!elf::is_libmpi("libmpi_mpifh.so.40"));
    }

    #[test]
    fn cli_parses() {
        Cli::command().debug_assert();
        let cli = Cli::try_parse_from([
            "mpit-prof",
            "--mode",
            "call",
            "--classes",
            "counter,timer",
            "--",
            "./app",
            "--mode",
            "x",
        ])
        .unwrap();
        assert_eq!(cli.run.mode.as_deref(), Some("call"));
        assert_eq!(cli.run.classes, ["counter", "timer"]);
        assert_eq!(cli.run.program, ["./app", "--mode", "x"]);
        assert!(Cli::try_parse_from(["mpit-prof", "--mode", "sometimes", "--", "a"]).is_err());
        assert!(Cli::try_parse_from(["mpit-prof", "--pvars", "(", "--", "a"]).is_err());
        let cli = Cli::try_parse_from(["mpit-prof", "report", "dir"]).unwrap();
        assert!(matches!(
            cli.command,
            Some(Sub::Report { trace: false, .. })
        ));
        let cli = Cli::try_parse_from(["mpit-prof", "report", "--trace", "dir"]).unwrap();
        assert!(matches!(cli.command, Some(Sub::Report { trace: true, .. })));
    }
}
