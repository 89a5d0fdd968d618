//! `mpir-starter`: a tiny launcher that is an MPIR starter process (§2.2.2.2 of the MPIR spec),
//! built on `mpir-types`' `starter` feature.
//!
//! ```text
//! mpir-starter -n 3 -- /bin/sleep 2
//! mpir-starter -n 2 --abort-after 500 -- ./app arg
//! ```
//!
//! Runs `-n` copies of PROGRAM ("ranks"; each gets `MPIR_STARTER_RANK` and `MPIR_STARTER_SIZE`
//! in its environment), publishes the MPIR process table (host: this host's name, executable:
//! PROGRAM's absolute path, pid: each child's), raises `MPIR_DEBUG_SPAWNED` and waits for the
//! children. While it waits it honours the tool daemon launch extension: when a tool has
//! written `MPIR_executable_path` and `MPIR_server_arguments` and set `MPIR_being_debugged`, it
//! launches that daemon with the decoded arguments. With `--abort-after MS`, or when a child
//! fails, it sets `MPIR_debug_abort_string`, raises `MPIR_DEBUG_ABORTING`, kills the remaining
//! children and exits with status 3. Otherwise it exits with status 0. It exits with 127 when
//! it cannot start the program or publish the table, and with 2 on a usage error.
//!
//! Its own report goes to standard error, one line each, prefixed `mpir-starter:`; the children
//! share its standard output. A tool finds its MPIR symbols in the executable's `.symtab`
//! (e.g. `mpir-attach --trace -- mpir-starter -n 3 -- /bin/sleep 1`).
//!
//! Unlike the other tools, its logic stays in the binary rather than in `mpit_tools`: code
//! that calls `mpir_types::starter` links the MPIR starter symbols (`MPIR_being_debugged`, ...)
//! into the executable, and every other tool linking the library would then carry them too.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

/// Exit statuses, as `--help` lists them.
const EXIT_STATUS: &str = "Exit status: 0 when every copy exited 0; 3 after an abort \
                           (--abort-after, or a copy that failed); 127 when the program could \
                           not be started or the table published; 2 on a usage error. Errors go \
                           to standard error.";

/// A minimal MPIR starter: run N copies of a program and publish them to a tool.
#[derive(Parser, Debug)]
#[command(name = "mpir-starter", version, after_help = EXIT_STATUS)]
struct Args {
    /// Number of processes ("ranks") to start.
    #[arg(short = 'n', long = "np", default_value_t = 1)]
    n: usize,
    /// Abort the job this many milliseconds after the spawned event.
    #[arg(long, value_name = "MS")]
    abort_after: Option<u64>,
    /// The program and its arguments, after `--`.
    #[arg(last = true, required = true)]
    command: Vec<OsString>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match imp::run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mpir-starter: {e}");
            ExitCode::from(127)
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub(crate) fn run(_: &super::Args) -> Result<std::process::ExitCode, String> {
        Err("the MPIR starter example is implemented for Linux only".to_owned())
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command, ExitCode};
    use std::time::{Duration, Instant};

    use mpir_types::DebugState;
    use mpir_types::starter::{ProcEntry, Starter, host_name};

    use super::Args;

    /// How often the starter looks at its children and at `MPIR_being_debugged`.
    const POLL: Duration = Duration::from_millis(5);
    /// The exit status after an abort.
    const ABORTED: u8 = 3;

    fn kill_all(children: &mut [(usize, Child)]) {
        for (_, child) in children.iter_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Launches the tool daemon a tool asked for, if any (§2.6.1).
    fn tool_daemons(daemons: &mut Vec<Child>) {
        // For the report only: what launch_tool_daemons is about to decode.
        let request = Starter::tool_daemon_request().ok().flatten();
        match Starter::launch_tool_daemons() {
            Ok(Some(daemon)) => {
                if let Some(r) = request {
                    let args: Vec<String> = r.args.iter().map(|a| format!("{a:?}")).collect();
                    eprintln!(
                        "mpir-starter: launched tool daemon pid {}: {} {}",
                        daemon.id(),
                        r.path,
                        args.join(" ")
                    );
                }
                daemons.push(daemon);
            }
            Ok(None) => {}
            Err(e) => eprintln!("mpir-starter: tool daemon: {e}"),
        }
    }

    fn abort(why: &str, children: &mut [(usize, Child)]) -> ExitCode {
        eprintln!("mpir-starter: raising MPIR_DEBUG_ABORTING: {why}");
        if let Err(e) = Starter::abort(why) {
            eprintln!("mpir-starter: {e}");
        }
        kill_all(children);
        ExitCode::from(ABORTED)
    }

    /// The program's absolute path: as given if it contains a `/` (made absolute, symbolic links
    /// kept), else the first executable file of that name in `PATH`.
    fn resolve(program: &Path) -> Result<PathBuf, String> {
        use std::os::unix::fs::PermissionsExt;
        if program.components().count() > 1 || program.is_absolute() {
            return std::path::absolute(program).map_err(|e| format!("{}: {e}", program.display()));
        }
        let path =
            std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
        std::env::split_paths(&path)
            .map(|dir| dir.join(program))
            .find(|p| {
                p.metadata()
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            })
            .map(|p| std::path::absolute(&p).unwrap_or(p))
            .ok_or_else(|| format!("{}: not found in PATH", program.display()))
    }

    pub(crate) fn run(args: &Args) -> Result<ExitCode, String> {
        let program = resolve(Path::new(&args.command[0]))?;
        let host = host_name().map_err(|e| format!("gethostname: {e}"))?;
        let mut children: Vec<(usize, Child)> = Vec::with_capacity(args.n);
        for rank in 0..args.n {
            let spawned = Command::new(&program)
                .args(&args.command[1..])
                .env("MPIR_STARTER_RANK", rank.to_string())
                .env("MPIR_STARTER_SIZE", args.n.to_string())
                .spawn();
            match spawned {
                Ok(child) => children.push((rank, child)),
                Err(e) => {
                    kill_all(&mut children);
                    return Err(format!(
                        "cannot start rank {rank} ({}): {e}",
                        program.display()
                    ));
                }
            }
        }
        let entries: Vec<ProcEntry<'_>> = children
            .iter()
            .map(|(_, c)| ProcEntry::new(&host, &program, c.id()))
            .collect();
        if let Err(e) = Starter::publish(&entries) {
            kill_all(&mut children);
            return Err(e.to_string());
        }
        for (rank, e) in entries.iter().enumerate() {
            eprintln!(
                "mpir-starter: rank {rank} pid {} host {} executable {}",
                e.pid,
                e.host.to_string_lossy(),
                e.executable.display()
            );
        }
        let debugged = Starter::being_debugged();
        eprintln!(
            "mpir-starter: raising MPIR_DEBUG_SPAWNED ({} ranks, MPIR_being_debugged {})",
            entries.len(),
            u8::from(debugged)
        );
        Starter::debug_event(DebugState::Spawned);
        let spawned_at = Instant::now();

        let mut daemons = Vec::new();
        let mut code = ExitCode::SUCCESS;
        let mut running = children.len();
        while running > 0 {
            tool_daemons(&mut daemons);
            if let Some(ms) = args.abort_after
                && spawned_at.elapsed() >= Duration::from_millis(ms)
            {
                let why = format!("mpir-starter: job aborted after {ms} ms (--abort-after)");
                code = abort(&why, &mut children);
                break;
            }
            let mut failed = None;
            running = 0;
            for (rank, child) in &mut children {
                match child.try_wait() {
                    Ok(None) => running += 1,
                    Ok(Some(status)) if !status.success() => {
                        failed = Some(format!("rank {rank} (pid {}) ended: {status}", child.id()));
                    }
                    Ok(Some(_)) => {}
                    Err(e) => failed = Some(format!("rank {rank}: {e}")),
                }
            }
            if let Some(why) = failed {
                code = abort(&format!("mpir-starter: {why}"), &mut children);
                break;
            }
            if running > 0 {
                std::thread::sleep(POLL);
            }
        }
        // A tool may have asked for its daemon just before the job ended.
        tool_daemons(&mut daemons);
        for mut daemon in daemons {
            match daemon.try_wait() {
                Ok(Some(status)) => {
                    eprintln!("mpir-starter: tool daemon {} ended: {status}", daemon.id())
                }
                _ => eprintln!(
                    "mpir-starter: tool daemon {} still running, left to the tool",
                    daemon.id()
                ),
            }
        }
        eprintln!(
            "mpir-starter: {} MPIR_Breakpoint calls",
            Starter::breakpoint_calls()
        );
        Ok(code)
    }
}
