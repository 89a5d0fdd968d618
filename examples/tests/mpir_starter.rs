//! `mpir-starter` (a Rust MPIR starter built on mpir-types' `starter` feature) acquired by
//! mpir-types' own tool side: the ptrace launch model sees `MPIR_DEBUG_SPAWNED` with exactly
//! the (rank, pid, executable, host) the children print themselves and `MPIR_DEBUG_ABORTING`
//! with the abort string, one event per `MPIR_Breakpoint` call; the attach model reads the
//! running starter; the tool daemon a tool requests (§2.6.1) is launched with the decoded
//! arguments in both models; the symbols are in the executable (`SymbolTable`, `nm`) and
//! `MPIR_Breakpoint` is a function of its own. `mpir-attach` acquires it too.
#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mpir_types::os::{Acquisition, ProcessMemory, SymKind, SymbolTable, attach, target_layout};
use mpir_types::{DebugState, Symbol, encode_executable_path, encode_server_arguments};
use mpit_test_support::rows::{Row, own_rows};

const STARTER: &str = env!("CARGO_BIN_EXE_mpir-starter");
const TOOL: &str = env!("CARGO_BIN_EXE_mpir-attach");

/// What each child runs: `/bin/sh -c RANK_SCRIPT sh SECONDS` prints its own row, then becomes
/// `sleep` (same pid: killing the child leaves no orphan holding the output open).
const RANK_SCRIPT: &str =
    r#"echo "rank $MPIR_STARTER_RANK pid $$ host $(uname -n) exe /bin/sh"; exec sleep "$1""#;

/// The tool daemon: `/bin/sh -c DAEMON_SCRIPT MARKER ARGS...` writes its parent's pid and its
/// arguments, one a line, into MARKER.
const DAEMON_SCRIPT: &str = r#"printf '%s\n' "$PPID" "$@" > "$0""#;
/// The arguments after MARKER: the spec's example (§2.8.17), spaces and a tab included.
const DAEMON_ARGS: [&str; 4] = ["--callback", "10.0.0.10", "-name", "has spaces and\ttabs"];

fn workdir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpir-starter");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `mpir-starter [OPTIONS] -- /bin/sh -c RANK_SCRIPT sh SECONDS`.
fn starter_argv(options: &[&str], seconds: &str) -> Vec<String> {
    let mut v = vec![STARTER.to_owned()];
    v.extend(options.iter().map(|s| s.to_string()));
    v.extend(["--", "/bin/sh", "-c", RANK_SCRIPT, "sh", seconds].map(String::from));
    v
}

fn daemon_argv(marker: &Path) -> Vec<String> {
    let mut v = vec![
        "-c".to_owned(),
        DAEMON_SCRIPT.to_owned(),
        marker.display().to_string(),
    ];
    v.extend(DAEMON_ARGS.map(String::from));
    v
}

/// Writes the tool daemon request into the starter (§2.6.1 step 1), sized by its symbols.
fn request_daemon(acq: &Acquisition, marker: &Path) {
    let path = acq.locate(Symbol::ExecutablePath).unwrap();
    let args = acq.locate(Symbol::ServerArguments).unwrap();
    assert_eq!((path.size, args.size), (256, 1024));
    let mem = ProcessMemory::new(acq.starter_pid);
    let encoded = encode_server_arguments(daemon_argv(marker), args.size as usize).unwrap();
    mem.write(args.addr, &encoded).unwrap();
    let encoded = encode_executable_path("/bin/sh", path.size as usize).unwrap();
    mem.write(path.addr, &encoded).unwrap();
}

/// Waits (up to 10 s) for the daemon's marker; returns its lines.
fn marker_lines(marker: &Path) -> Vec<String> {
    let t0 = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(marker)
            && text.ends_with('\n')
            && text.lines().count() == 1 + DAEMON_ARGS.len()
        {
            return text.lines().map(str::to_owned).collect();
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "no {marker:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn acquired_rows(acq: &Acquisition) -> BTreeSet<Row> {
    acq.ranks()
        .map(|(rank, p)| {
            (
                rank,
                p.pid,
                p.executable_name.to_string(),
                p.host_name.to_string(),
            )
        })
        .collect()
}

/// The starter's own count of `MPIR_Breakpoint` calls, from its last report line.
fn breakpoint_calls(stderr: &str) -> usize {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("mpir-starter: "))
        .find_map(|l| l.strip_suffix(" MPIR_Breakpoint calls"))
        .unwrap_or_else(|| panic!("no count in {stderr}"))
        .parse()
        .unwrap()
}

fn gone(pid: i64) -> bool {
    !Path::new(&format!("/proc/{pid}")).exists()
}

/// A starter running untraced, its stdout read line by line; killed and reaped on drop.
struct Running {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Running {
    fn start(argv: &[String]) -> Running {
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Running { child, lines }
    }

    /// The first `n` lines of its stdout.
    fn lines(&self, n: usize) -> String {
        (0..n)
            .map(|_| {
                let l = self.lines.recv_timeout(Duration::from_secs(10)).unwrap();
                l + "\n"
            })
            .collect()
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_symbols_are_in_the_starter_executable() {
    let run = Running::start(&starter_argv(&["-n", "1"], "2"));
    run.lines(1);
    let table = SymbolTable::mpir_of_process(run.pid()).unwrap();
    let set = table.symbol_set();
    for symbol in [
        Symbol::Breakpoint,
        Symbol::Proctable,
        Symbol::ProctableSize,
        Symbol::DebugState,
        Symbol::BeingDebugged,
        Symbol::DebugAbortString,
        Symbol::IAmStarter,
        Symbol::PartialAttachOk,
        Symbol::ExecutablePath,
        Symbol::ServerArguments,
    ] {
        assert!(set.contains(symbol), "{symbol}");
        let sym = table.lookup(symbol.name()).unwrap();
        assert!(sym.in_executable, "{symbol}: {sym:?}");
        assert_eq!(&*sym.object_path, Path::new(STARTER));
    }
    assert_eq!(set.len(), 10, "{set:?}");
    let bp = table.lookup("MPIR_Breakpoint").unwrap();
    assert_eq!(bp.kind, SymKind::Function);
    // A function of its own: nothing else of any loaded object at its address.
    let all = SymbolTable::of_process(run.pid()).unwrap();
    let aliases: Vec<&str> = all
        .names()
        .filter(|n| *n != "MPIR_Breakpoint" && all.lookup_all(n).iter().any(|s| s.addr == bp.addr))
        .collect();
    assert!(aliases.is_empty(), "{aliases:?}");
    let caps = table.capabilities();
    assert!(caps.can_acquire && caps.separate_starter && caps.supports_partial_attach);
    assert!(caps.supports_tool_daemons && !caps.must_attach_all);

    match Command::new("nm")
        .arg("--defined-only")
        .arg(STARTER)
        .output()
    {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            let mpir: Vec<&str> = text.lines().filter(|l| l.contains(" MPIR_")).collect();
            println!("nm {STARTER}:\n{}", mpir.join("\n"));
            assert_eq!(mpir.len(), 10);
            assert!(mpir.iter().any(|l| l.ends_with(" T MPIR_Breakpoint")));
        }
        _ => println!("skip: nm: binutils' nm is not installed"),
    }
}

#[cfg(target_arch = "x86_64")]
mod launch_model {
    use super::*;
    use mpir_types::os::{ArmPoint, GateOutcome, LaunchOptions, TracedRun, launch, trace_to_exit};

    /// Traces `argv` to its end with stdout and stderr in files; returns the run, stdout and
    /// stderr. `hook` as for `trace_to_exit`.
    fn traced(
        name: &str,
        argv: &[String],
        hook: impl FnMut(&mpir_types::os::MpirEvent, Option<&Acquisition>),
    ) -> (TracedRun, String, String) {
        let (out, err) = (
            workdir().join(format!("{name}.out")),
            workdir().join(format!("{name}.err")),
        );
        let run = trace_to_exit(
            argv,
            LaunchOptions {
                timeout: Duration::from_secs(60),
                stdout: Some(std::fs::File::create(&out).unwrap().into()),
                stderr: Some(std::fs::File::create(&err).unwrap().into()),
                ..LaunchOptions::default()
            },
            hook,
        )
        .unwrap();
        let out = std::fs::read_to_string(out).unwrap();
        let err = std::fs::read_to_string(err).unwrap();
        println!("--- children (stdout)\n{out}--- starter (stderr)\n{err}");
        (run, out, err)
    }

    #[test]
    fn spawned_carries_exactly_the_children() {
        let (run, out, err) = traced("spawned", &starter_argv(&["-n", "3"], "0.3"), |_, _| {});
        assert!(run.status.success(), "{:?}", run.status);
        assert_eq!(run.armed_at, Some(ArmPoint::Exec));
        let states: Vec<_> = run.events.iter().map(|e| e.state).collect();
        assert_eq!(states, [DebugState::Spawned]);
        let acq = run.acquisition.unwrap();
        let own = own_rows(&out);
        assert_eq!(own.len(), 3, "{out}");
        assert_eq!(acquired_rows(&acq), own);
        for (_, p) in acq.ranks() {
            println!(
                "acquired: rank pid {} host {} executable {}",
                p.pid, p.host_name, p.executable_name
            );
        }
        assert!(
            run.gates
                .iter()
                .all(|g| g.outcome == GateOutcome::NotRequired)
        );
        assert_eq!(breakpoint_calls(&err), run.events.len());
    }

    #[test]
    fn abort_after_raises_aborting_with_the_abort_string() {
        let (run, out, err) = traced(
            "abort-after",
            &starter_argv(&["-n", "2", "--abort-after", "300"], "30"),
            |_, _| {},
        );
        assert_eq!(run.status.code(), Some(3));
        let states: Vec<_> = run.events.iter().map(|e| e.state).collect();
        assert_eq!(states, [DebugState::Spawned, DebugState::Aborting]);
        assert_eq!(
            run.events[1].abort_string.as_ref().unwrap(),
            "mpir-starter: job aborted after 300 ms (--abort-after)"
        );
        assert!(run.events[1].at >= run.events[0].at + Duration::from_millis(300));
        let acq = run.acquisition.unwrap();
        assert_eq!(acquired_rows(&acq), own_rows(&out));
        // Two calls of MPIR_Breakpoint, two events: neither call was merged away.
        assert_eq!(breakpoint_calls(&err), 2);
        // The starter killed its children.
        assert!(acq.procs.iter().all(|p| gone(p.pid)));
    }

    #[test]
    fn a_failing_child_aborts_the_job() {
        let argv = [
            STARTER,
            "-n",
            "3",
            "--",
            "/bin/sh",
            "-c",
            r#"[ "$MPIR_STARTER_RANK" = 1 ] && exit 7; exec sleep 30"#,
        ]
        .map(String::from);
        let (run, _, _) = traced("failing-child", &argv, |_, _| {});
        assert_eq!(run.status.code(), Some(3));
        let acq = run.acquisition.unwrap();
        let why = run.events.last().unwrap().abort_string.as_ref().unwrap();
        assert_eq!(
            why.to_string(),
            format!(
                "mpir-starter: rank 1 (pid {}) ended: exit status: 7",
                acq.procs[1].pid
            )
        );
    }

    #[test]
    fn the_tool_daemon_requested_at_spawned_is_launched() {
        let marker = workdir().join("daemon-launch-model");
        let _ = std::fs::remove_file(&marker);
        let (run, _, err) = traced(
            "daemon-launch-model",
            &starter_argv(&["-n", "2"], "0.3"),
            |e, acq| {
                if e.state == DebugState::Spawned {
                    request_daemon(acq.unwrap(), &marker);
                }
            },
        );
        assert!(run.status.success(), "{:?}", run.status);
        let lines = marker_lines(&marker);
        assert_eq!(lines[0], run.pid.to_string(), "the starter is its parent");
        assert_eq!(lines[1..], DAEMON_ARGS);
        assert!(
            err.contains("mpir-starter: launched tool daemon pid "),
            "{err}"
        );
    }

    #[test]
    fn launch_detaches_at_spawned_and_the_job_completes() {
        let out = workdir().join("launch.out");
        let err = workdir().join("launch.err");
        let mut job = launch(
            &starter_argv(&["-n", "3"], "0.5"),
            LaunchOptions {
                timeout: Duration::from_secs(60),
                stdout: Some(std::fs::File::create(&out).unwrap().into()),
                stderr: Some(std::fs::File::create(&err).unwrap().into()),
                ..LaunchOptions::default()
            },
        )
        .unwrap();
        let status = std::fs::read_to_string(format!("/proc/{}/status", job.pid())).unwrap();
        assert!(status.lines().any(|l| l == "TracerPid:\t0"), "detached");
        let status = job.wait(Some(Duration::from_secs(30))).unwrap();
        assert!(status.success(), "{status:?}");
        let text = std::fs::read_to_string(out).unwrap();
        assert_eq!(acquired_rows(&job.acquisition), own_rows(&text));
        assert_eq!(job.acquisition.debug_state, DebugState::Spawned);
    }

    #[test]
    fn mpir_attach_acquires_the_rust_starter() {
        let mut argv = vec!["--trace".to_owned(), "--".to_owned()];
        // The abort comes late enough for every child to have printed its row on a loaded
        // host (at 200 ms, rank 0's shell was once killed before its `echo`).
        argv.extend(starter_argv(&["-n", "3", "--abort-after", "2000"], "30"));
        let out = Command::new(TOOL).args(&argv).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        println!("{stdout}{stderr}");
        assert_eq!(out.status.code(), Some(3), "the job's exit status");
        // mpir-attach prints `rank R host H executable E pid P`; the children their own rows
        // (`rank R pid P host H exe E`).
        let tool: BTreeSet<Row> = stdout
            .lines()
            .filter_map(|l| match l.split(' ').collect::<Vec<_>>()[..] {
                ["rank", r, "host", h, "executable", e, "pid", p] => {
                    Some((r.parse().ok()?, p.parse().ok()?, e.into(), h.into()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(tool.len(), 3);
        // The job's own output goes to the tool's stderr (stdout holds only the tool's rows).
        assert_eq!(tool, own_rows(&stderr));
        assert!(
            own_rows(&stdout).is_empty(),
            "the job's output reached stdout"
        );
        assert!(stderr.contains("mpir-attach: MPIR event MPIR_DEBUG_ABORTING"));
        assert!(stderr.contains(
            "mpir-attach: abort string: mpir-starter: job aborted after 2000 ms (--abort-after)"
        ));
    }
}

#[test]
fn the_attach_model_reads_the_running_starter_and_its_daemon_is_launched() {
    let run = Running::start(&starter_argv(&["-n", "3"], "3"));
    let own = own_rows(&run.lines(3));
    // The starter publishes, then raises the event: wait for the state.
    let t0 = Instant::now();
    let acq = loop {
        let acq = attach(run.pid()).unwrap();
        if acq.debug_state == DebugState::Spawned {
            break acq;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "{acq:?}");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(acquired_rows(&acq), own);
    assert!(!acq.capabilities.must_attach_all);

    // §2.6.1: path and arguments first, then MPIR_being_debugged = 1; the starter notices.
    let marker = workdir().join("daemon-attach-model");
    let _ = std::fs::remove_file(&marker);
    request_daemon(&acq, &marker);
    let being_debugged = acq.locate(Symbol::BeingDebugged).unwrap().addr;
    let layout = target_layout(run.pid()).unwrap();
    let mem = ProcessMemory::new(run.pid());
    mem.write_int(&layout, being_debugged, 1).unwrap();
    let lines = marker_lines(&marker);
    assert_eq!(lines[0], run.pid().to_string(), "the starter is its parent");
    assert_eq!(lines[1..], DAEMON_ARGS);
    // Detaching: MPIR_being_debugged = 0.
    mem.write_int(&layout, being_debugged, 0).unwrap();
    let mut run = run;
    let status = run.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let mut err = String::new();
    std::io::Read::read_to_string(run.child.stderr.as_mut().unwrap(), &mut err).unwrap();
    println!("{err}");
    assert_eq!(err.matches("launched tool daemon").count(), 1, "{err}");
}
