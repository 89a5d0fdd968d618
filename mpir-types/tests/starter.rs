//! The starter side (feature `starter`) against the crate's own tool side: the MPIR symbols
//! are in the executable with their C types and found by `SymbolTable`; a published table is
//! what the attach model reads; the tool daemon a tool writes is launched once per session;
//! and, under the ptrace launch model, this test binary re-executed as a starter is acquired
//! with exactly its children, one event per `MPIR_Breakpoint` call, the abort string, and the
//! tool daemon the tool asked for at the spawned event.
#![cfg(all(feature = "starter", target_os = "linux"))]

mod os_common;

use std::collections::BTreeMap;
use std::mem::{offset_of, size_of};
use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use mpir_types::os::{ProcessMemory, SymKind, SymbolTable, attach, target_layout};
use mpir_types::starter::ffi::MPIR_PROCDESC;
use mpir_types::starter::{ProcEntry, Starter, StarterError, ToolDaemon, host_name};
use mpir_types::{
    CodecError, DebugState, Field, Symbol, SymbolSet, TargetLayout, TargetString,
    encode_executable_path, encode_server_arguments,
};

use os_common::workdir;

/// The tests of this binary share the process's MPIR symbols: one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

fn me() -> i32 {
    std::process::id() as i32
}

/// The definitions this starter has, by C name.
const DEFINED: [&str; 10] = [
    "MPIR_proctable",
    "MPIR_proctable_size",
    "MPIR_debug_state",
    "MPIR_being_debugged",
    "MPIR_debug_abort_string",
    "MPIR_i_am_starter",
    "MPIR_partial_attach_ok",
    "MPIR_executable_path",
    "MPIR_server_arguments",
    "MPIR_Breakpoint",
];

/// The tool daemon of these tests: `/bin/sh -c SCRIPT MARKER ARGS...` writes its parent's pid
/// and its arguments, one a line, into MARKER.
const DAEMON_SCRIPT: &str = r#"printf '%s\n' "$PPID" "$@" > "$0""#;
/// The arguments after MARKER: the spec's example (§2.8.17), spaces and a tab included.
const DAEMON_ARGS: [&str; 4] = ["--callback", "10.0.0.10", "-name", "has spaces and\ttabs"];

fn daemon_argv(marker: &Path) -> Vec<String> {
    let mut v = vec![
        "-c".to_owned(),
        DAEMON_SCRIPT.to_owned(),
        marker.display().to_string(),
    ];
    v.extend(DAEMON_ARGS.map(String::from));
    v
}

/// Waits (up to 10 s) for the daemon's marker and returns its lines.
fn marker_lines(marker: &Path) -> Vec<String> {
    let t0 = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(marker)
            && text.ends_with('\n')
            && text.lines().count() == 1 + DAEMON_ARGS.len()
        {
            return text.lines().map(str::to_owned).collect();
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "no marker {}",
            marker.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn mpir_procdesc_has_the_layout_the_tool_computes() {
    let desc = TargetLayout::host().procdesc();
    assert_eq!(size_of::<MPIR_PROCDESC>(), desc.size());
    assert_eq!(
        offset_of!(MPIR_PROCDESC, host_name),
        desc.host_name_offset()
    );
    assert_eq!(
        offset_of!(MPIR_PROCDESC, executable_name),
        desc.executable_name_offset()
    );
    assert_eq!(offset_of!(MPIR_PROCDESC, pid), desc.pid_offset());
}

#[test]
fn the_symbols_are_in_the_executable_with_their_c_types() {
    let addrs = Starter::symbol_addresses();
    let table = SymbolTable::mpir_of_process(me()).unwrap();
    let exe = std::env::current_exe().unwrap();
    let ptr = size_of::<usize>() as u64;
    let sizes: BTreeMap<&str, u64> = [
        ("MPIR_proctable", ptr),
        ("MPIR_proctable_size", 4),
        ("MPIR_debug_state", 4),
        ("MPIR_being_debugged", 4),
        ("MPIR_debug_abort_string", ptr),
        ("MPIR_i_am_starter", 4),
        ("MPIR_partial_attach_ok", 4),
        ("MPIR_executable_path", 256),
        ("MPIR_server_arguments", 1024),
    ]
    .into();
    for (name, addr) in addrs {
        let sym = table
            .lookup(name)
            .unwrap_or_else(|| panic!("{name} not found"));
        assert_eq!(sym.addr, addr as u64, "{name}: {sym:?}");
        assert!(sym.in_executable, "{name}: {sym:?}");
        assert_eq!(&*sym.object_path, exe.as_path());
        if name == "MPIR_Breakpoint" {
            assert_eq!(sym.kind, SymKind::Function);
            assert!(sym.size > 0, "{sym:?}");
        } else {
            assert_eq!(sym.kind, SymKind::Data, "{name}");
            assert_eq!(sym.size, sizes[name], "{name}");
        }
    }
    assert_eq!(table.symbol_set(), SymbolSet::from_names(DEFINED));
    let caps = table.capabilities();
    assert!(caps.can_acquire && caps.separate_starter && !caps.starter_is_rank0);
    assert!(caps.can_signal_presence && caps.has_abort_string && caps.supports_tool_daemons);
    assert!(caps.supports_partial_attach && !caps.must_attach_all && !caps.supports_debug_gate);
    assert!(!caps.acquired_pre_main && !caps.force_to_main);

    // MPIR_Breakpoint is a function of its own: no other symbol of any loaded object is at
    // its address (no identical-code folding or function merging made it an alias).
    let bp = table.lookup("MPIR_Breakpoint").unwrap().clone();
    let all = SymbolTable::of_process(me()).unwrap();
    let aliases: Vec<&str> = all
        .names()
        .filter(|n| *n != "MPIR_Breakpoint" && all.lookup_all(n).iter().any(|s| s.addr == bp.addr))
        .collect();
    assert!(aliases.is_empty(), "MPIR_Breakpoint aliased by {aliases:?}");

    // What binutils says: every definition in .symtab (a Rust executable exports nothing
    // into .dynsym unless linked with -rdynamic or --export-dynamic-symbol).
    let nm = |dynamic: bool| -> Option<BTreeMap<String, String>> {
        let mut cmd = Command::new("nm");
        if dynamic {
            cmd.arg("-D");
        }
        let out = cmd.arg("--defined-only").arg(&exe).output().ok()?;
        out.status.success().then(|| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
                    [_, ty, name] if name.starts_with("MPIR_") => {
                        Some((name.to_owned(), ty.to_owned()))
                    }
                    _ => None,
                })
                .collect()
        })
    };
    match (nm(false), nm(true)) {
        (Some(symtab), Some(dynsym)) => {
            println!("nm: .symtab {symtab:?}, .dynsym {dynsym:?}");
            for name in DEFINED {
                let ty = symtab.get(name).unwrap_or_else(|| panic!("nm: no {name}"));
                let want = if name == "MPIR_Breakpoint" { "T" } else { "B" };
                assert_eq!(ty, want, "nm: {name}");
            }
        }
        _ => os_common::skip("nm", "binutils' nm is not installed"),
    }
}

#[test]
fn a_published_table_is_what_the_attach_model_reads() {
    let _serial = serial();
    let host = host_name().unwrap();
    let (a, b) = (Path::new("/opt/app/a.out"), Path::new("/opt/app/b.out"));
    let entries = [
        ProcEntry::new(&host, a, 4242),
        ProcEntry::new(&host, b, 4243),
        ProcEntry::new(&host, a, 4244),
    ];
    Starter::publish(&entries).unwrap();
    // One host name and two executable names, shared across entries (§2.8.2).
    assert_eq!(Starter::published(), (3, 3));
    let acq = attach(me()).unwrap();
    assert_eq!(acq.procs.len(), 3);
    for (rank, p) in acq.ranks() {
        assert_eq!(p.host_name.as_os_str(), host.as_os_str());
        assert_eq!(p.executable_name.as_os_str(), entries[rank].executable);
        assert_eq!(p.pid, i64::from(entries[rank].pid));
    }
    let (p0, p1, p2) = (&acq.procs[0], &acq.procs[1], &acq.procs[2]);
    assert!(p0.executable_name.shares_storage_with(&p2.executable_name));
    assert!(p0.host_name.shares_storage_with(&p1.host_name));

    // One MPIR_Breakpoint call per event; MPIR_debug_state keeps the state for later readers.
    let calls = Starter::breakpoint_calls();
    Starter::debug_event(DebugState::Spawned);
    assert_eq!(Starter::breakpoint_calls(), calls + 1);
    assert_eq!(Starter::debug_state(), DebugState::Spawned);
    assert_eq!(attach(me()).unwrap().debug_state, DebugState::Spawned);
    Starter::abort("test: the job aborted").unwrap();
    assert_eq!(Starter::breakpoint_calls(), calls + 2);
    let acq = attach(me()).unwrap();
    assert_eq!(acq.debug_state, DebugState::Aborting);
    assert_eq!(acq.abort_string.unwrap(), "test: the job aborted");

    // Errors leave the published table as it was.
    let bad_host = ProcEntry::new("no\0de", a, 1);
    assert!(matches!(
        Starter::publish(&[entries[0], bad_host]),
        Err(StarterError::ContainsNul {
            rank: 1,
            field: Field::HostName
        })
    ));
    assert!(matches!(
        Starter::publish(&[ProcEntry::new(&host, a, u32::MAX)]),
        Err(StarterError::PidOutOfRange { rank: 0, .. })
    ));
    assert!(matches!(
        Starter::abort("a\0b"),
        Err(StarterError::AbortMessageContainsNul { position: 1 })
    ));
    assert_eq!(Starter::breakpoint_calls(), calls + 2);
    assert_eq!(attach(me()).unwrap().procs, acq.procs);

    // An empty table: MPIR_proctable NULL, size 0.
    Starter::publish(&[]).unwrap();
    assert_eq!(Starter::published(), (0, 0));
    assert!(attach(me()).unwrap().procs.is_empty());
    Starter::debug_event(DebugState::Null);
}

#[test]
fn the_tool_daemon_a_tool_writes_is_launched_once_per_session() {
    let _serial = serial();
    let table = SymbolTable::mpir_of_process(me()).unwrap();
    let sym = |name: &str| table.lookup(name).unwrap().clone();
    let (path_var, args_var, debugged) = (
        sym("MPIR_executable_path"),
        sym("MPIR_server_arguments"),
        sym("MPIR_being_debugged"),
    );
    let mem = ProcessMemory::new(me());
    let layout = target_layout(me()).unwrap();
    // The tool's writes, sized by the symbol table (§2.6.1 step 1, then step 2).
    let write_request = |path: &str, args: &[String]| {
        let p = encode_executable_path(path, path_var.size as usize).unwrap();
        let a = encode_server_arguments(args, args_var.size as usize).unwrap();
        mem.write(path_var.addr, &p).unwrap();
        mem.write(args_var.addr, &a).unwrap();
    };
    let set_debugged = |v: i64| mem.write_int(&layout, debugged.addr, v).unwrap();

    set_debugged(0);
    let marker = workdir().join(format!("daemon-in-process-{}", me()));
    let _ = std::fs::remove_file(&marker);
    let argv = daemon_argv(&marker);
    write_request("/bin/sh", &argv);
    // Not yet: MPIR_being_debugged is 0.
    assert!(!Starter::being_debugged());
    assert_eq!(Starter::tool_daemon_request().unwrap(), None);
    assert!(Starter::launch_tool_daemons().unwrap().is_none());

    set_debugged(1);
    assert!(Starter::being_debugged());
    let want = ToolDaemon {
        path: "/bin/sh".into(),
        args: argv
            .iter()
            .map(|a| TargetString::from(a.as_str()))
            .collect(),
    };
    assert_eq!(Starter::tool_daemon_request().unwrap(), Some(want));
    let mut daemon = Starter::launch_tool_daemons().unwrap().expect("launched");
    assert!(daemon.wait().unwrap().success());
    let lines = marker_lines(&marker);
    assert_eq!(
        lines[0],
        me().to_string(),
        "the starter is the daemon's parent"
    );
    assert_eq!(lines[1..], DAEMON_ARGS);
    // Once per tool session.
    assert!(Starter::launch_tool_daemons().unwrap().is_none());

    // The tool detaches (0), a tool attaches again (1): launched again.
    set_debugged(0);
    assert!(Starter::launch_tool_daemons().unwrap().is_none());
    std::fs::remove_file(&marker).unwrap();
    set_debugged(1);
    let mut daemon = Starter::launch_tool_daemons().unwrap().expect("relaunched");
    assert!(daemon.wait().unwrap().success());
    assert_eq!(marker_lines(&marker)[1..], DAEMON_ARGS);

    // An unterminated argument list is reported once.
    set_debugged(0);
    assert!(Starter::launch_tool_daemons().unwrap().is_none());
    mem.write(args_var.addr, &vec![b'x'; args_var.size as usize])
        .unwrap();
    set_debugged(1);
    assert!(matches!(
        Starter::launch_tool_daemons(),
        Err(StarterError::ToolDaemon(CodecError::Unterminated {
            size: 1024,
            ..
        }))
    ));
    assert!(Starter::launch_tool_daemons().unwrap().is_none());

    // A daemon that cannot be executed.
    set_debugged(0);
    assert!(Starter::launch_tool_daemons().unwrap().is_none());
    write_request("/nonexistent/tool-daemon", &[]);
    set_debugged(1);
    match Starter::launch_tool_daemons() {
        Err(StarterError::Spawn { path, .. }) => assert_eq!(path, "/nonexistent/tool-daemon"),
        other => panic!("{other:?}"),
    }

    // Leave no request behind.
    set_debugged(0);
    mem.write(path_var.addr, &vec![0; path_var.size as usize])
        .unwrap();
    mem.write(args_var.addr, &vec![0; args_var.size as usize])
        .unwrap();
    assert!(Starter::launch_tool_daemons().unwrap().is_none());
}

/// The environment variable that makes [`starter_role`] act.
const ROLE: &str = "MPIR_TYPES_TEST_STARTER_ROLE";
const ABORT_MESSAGE: &str = "mpir-types test starter: aborting on purpose";
const RANKS: usize = 3;

/// Not a test of its own: the starter that `the_crates_tool_side_acquires_a_rust_starter`
/// runs in a child process of this test binary (a no-op otherwise). Starts three `/bin/sh`
/// children that print `rank R pid P`, publishes them, raises `MPIR_DEBUG_SPAWNED`, launches
/// the tool daemon if asked, waits for the children, then aborts on purpose.
#[test]
fn starter_role() {
    if std::env::var_os(ROLE).is_none() {
        return;
    }
    let host = host_name().unwrap();
    let sh = Path::new("/bin/sh");
    let mut children: Vec<_> = (0..RANKS)
        .map(|rank| {
            Command::new(sh)
                .args(["-c", r#"echo "rank $0 pid $$""#, &rank.to_string()])
                .spawn()
                .unwrap()
        })
        .collect();
    let entries: Vec<_> = children
        .iter()
        .map(|c| ProcEntry::new(&host, sh, c.id()))
        .collect();
    Starter::publish(&entries).unwrap();
    Starter::debug_event(DebugState::Spawned);
    if let Some(mut daemon) = Starter::launch_tool_daemons().unwrap() {
        println!("starter: tool daemon {}", daemon.id());
        assert!(daemon.wait().unwrap().success());
    }
    for c in &mut children {
        assert!(c.wait().unwrap().success());
    }
    Starter::abort(ABORT_MESSAGE).unwrap();
    println!(
        "starter: MPIR_Breakpoint calls {}",
        Starter::breakpoint_calls()
    );
}

#[cfg(target_arch = "x86_64")]
#[test]
fn the_crates_tool_side_acquires_a_rust_starter() {
    use mpir_types::os::{ArmPoint, GateOutcome, LaunchOptions, trace_to_exit};

    let exe = std::env::current_exe().unwrap();
    let out = workdir().join(format!("rust-starter-{}.out", me()));
    let marker = workdir().join(format!("daemon-launch-model-{}", me()));
    let _ = std::fs::remove_file(&marker);
    let argv = daemon_argv(&marker);
    let mut requested = 0;
    let run = trace_to_exit(
        &[
            exe.as_os_str(),
            "starter_role".as_ref(),
            "--exact".as_ref(),
            "--nocapture".as_ref(),
            "--test-threads=1".as_ref(),
        ],
        LaunchOptions {
            timeout: Duration::from_secs(60),
            env: vec![(ROLE.into(), "1".into())],
            stdout: Some(std::fs::File::create(&out).unwrap().into()),
            ..LaunchOptions::default()
        },
        |event, acq| {
            // At the spawned event, the tool asks for its daemon (§2.6.1): the starter
            // launches it when continued (MPIR_being_debugged was set when it was armed).
            if event.state == DebugState::Spawned {
                let acq = acq.expect("the table at the spawned event");
                let path = acq.locate(Symbol::ExecutablePath).unwrap();
                let args = acq.locate(Symbol::ServerArguments).unwrap();
                let mem = ProcessMemory::new(acq.starter_pid);
                mem.write(
                    args.addr,
                    &encode_server_arguments(&argv, args.size as usize).unwrap(),
                )
                .unwrap();
                mem.write(
                    path.addr,
                    &encode_executable_path("/bin/sh", path.size as usize).unwrap(),
                )
                .unwrap();
                requested += 1;
            }
        },
    )
    .unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    println!("{text}{run:#?}");
    assert!(run.status.success(), "{:?}", run.status);
    assert_eq!(
        run.armed_at,
        Some(ArmPoint::Exec),
        "symbols in the executable"
    );
    let states: Vec<_> = run.events.iter().map(|e| e.state).collect();
    assert_eq!(states, [DebugState::Spawned, DebugState::Aborting]);
    assert_eq!(run.events[1].abort_string.as_ref().unwrap(), ABORT_MESSAGE);
    assert_eq!(requested, 1);

    // Exactly the children, as they report themselves (the first line follows libtest's
    // "test starter_role ... ").
    let own: BTreeMap<usize, i64> = text
        .lines()
        .filter_map(|l| l.find("rank ").map(|at| &l[at..]))
        .filter_map(|l| match l.split(' ').collect::<Vec<_>>()[..] {
            ["rank", r, "pid", p] => Some((r.parse().ok()?, p.parse().ok()?)),
            _ => None,
        })
        .collect();
    assert_eq!(own.len(), RANKS, "{text}");
    let acq = run.acquisition.unwrap();
    assert_eq!(acq.starter_pid, run.pid);
    assert_eq!(acq.procs.len(), RANKS);
    let host = host_name().unwrap();
    for (rank, p) in acq.ranks() {
        assert_eq!(p.pid, own[&rank], "rank {rank}");
        assert_eq!(p.host_name.as_os_str(), host.as_os_str());
        assert_eq!(p.executable_name, "/bin/sh");
    }
    assert!(
        run.gates
            .iter()
            .all(|g| g.outcome == GateOutcome::NotRequired)
    );

    // One event per MPIR_Breakpoint call, as the starter counted them.
    let calls: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("starter: MPIR_Breakpoint calls "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(calls, run.events.len());

    // The daemon ran with the decoded arguments, as the starter's child.
    let lines = marker_lines(&marker);
    assert_eq!(lines[0], run.pid.to_string());
    assert_eq!(lines[1..], DAEMON_ARGS);
}
