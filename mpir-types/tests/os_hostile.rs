//! The Linux tool side against small C targets compiled at test time (any C compiler `cc`):
//! symbol lookup and relocation in every link mode, process memory, the attach model against
//! hostile starters whose MPIR data is garbage (typed errors, quickly), and the launch model
//! against a minimal MPIR starter written from the spec (events from a second thread, the
//! debug gate, the abort string, timeouts, cleanup).
#![cfg(target_os = "linux")]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mpir_types::os::{ProcessMemory, SymKind, SymbolTable, ToolError, attach, read_maps};
use mpir_types::{DebugState, DecodeError, Field, Location, MemoryReader, ReadError, Symbol};

use crate::os_common::{self, compile, skip};

/// The link modes the hostile target is built in: which symbol table holds the MPIR symbols
/// and whether the executable is relocated.
const VARIANTS: &[(&str, &[&str])] = &[
    // PIE, symbols in .dynsym and .symtab.
    ("hostile-rdynamic", &["-O0", "-rdynamic"]),
    // PIE, symbols only in the static .symtab.
    ("hostile-symtab", &["-O0"]),
    // PIE, stripped: symbols only in .dynsym.
    ("hostile-stripped", &["-O0", "-rdynamic", "-s"]),
    // Fixed address: load bias 0.
    ("hostile-nopie", &["-O0", "-no-pie", "-rdynamic"]),
];

fn hostile(variant: usize) -> Option<PathBuf> {
    let (out, args) = VARIANTS[variant];
    compile("cc", "hostile.c", out, args)
}

/// A running target, killed and reaped on drop.
struct Target {
    child: Child,
    syms: HashMap<String, u64>,
}

impl Target {
    fn pid(&self) -> i32 {
        self.child.id() as i32
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `exe MODE` and reads the addresses it prints until `ready`.
fn start(exe: &Path, mode: &str) -> Target {
    let mut child = Command::new(exe)
        .arg(mode)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the target");
    let mut syms = HashMap::new();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        let line = line.unwrap();
        if line == "ready" {
            break;
        }
        if let Some(rest) = line.strip_prefix("sym ") {
            let (name, addr) = rest.split_once(' ').unwrap();
            let addr = u64::from_str_radix(addr.trim_start_matches("0x"), 16).unwrap();
            syms.insert(name.to_owned(), addr);
        }
    }
    Target { child, syms }
}

#[test]
fn symbols_are_found_and_relocated_in_every_link_mode() {
    for (i, (name, _)) in VARIANTS.iter().enumerate() {
        let Some(exe) = hostile(i) else {
            skip(
                "symbols_are_found_and_relocated_in_every_link_mode",
                "no C compiler",
            );
            return;
        };
        let t = start(&exe, "big");
        let table = SymbolTable::mpir_of_process(t.pid()).unwrap();
        for (sym, addr) in &t.syms {
            let found = table
                .lookup(sym)
                .unwrap_or_else(|| panic!("{name}: {sym} not found"));
            assert_eq!(found.addr, *addr, "{name}: address of {sym}");
            assert!(found.in_executable, "{name}: {sym} in {found:?}");
            assert_eq!(&*found.object_path, exe.as_path());
        }
        let size = |s: &str| table.lookup(s).unwrap().size;
        assert_eq!(size("MPIR_proctable"), 8, "{name}");
        assert_eq!(size("MPIR_proctable_size"), 4, "{name}");
        assert_eq!(
            table.lookup("MPIR_Breakpoint").unwrap().kind,
            SymKind::Function
        );
        assert_eq!(
            table.lookup("MPIR_debug_state").unwrap().kind,
            SymKind::Data
        );
        let exe_obj = table.objects().iter().find(|o| o.is_executable).unwrap();
        if name.ends_with("nopie") {
            assert_eq!(
                exe_obj.bias, 0,
                "a fixed-address executable is not relocated"
            );
        } else {
            assert_ne!(exe_obj.bias, 0, "{name}: a PIE is relocated");
        }
        let caps = table.capabilities();
        assert!(caps.can_acquire && caps.separate_starter && caps.supports_partial_attach);
        println!(
            "{name}: {} MPIR symbols, executable bias {:#x}, {} objects read",
            table.symbol_set().len(),
            exe_obj.bias,
            table.objects().len()
        );
    }
}

#[test]
fn a_big_table_is_acquired_with_shared_strings() {
    let Some(exe) = hostile(0) else {
        return skip(
            "a_big_table_is_acquired_with_shared_strings",
            "no C compiler",
        );
    };
    let t = start(&exe, "big");
    let t0 = Instant::now();
    let acq = attach(t.pid()).unwrap();
    let took = t0.elapsed();
    assert_eq!(acq.procs.len(), 100_000);
    assert_eq!(acq.debug_state, DebugState::Spawned);
    for (rank, p) in acq.ranks() {
        assert_eq!(p.pid, 1000 + rank as i64);
        assert_eq!(p.host_name, "node0");
        assert_eq!(p.executable_name, "/bin/app");
    }
    assert!(
        acq.procs[0]
            .host_name
            .shares_storage_with(&acq.procs[99_999].host_name)
    );
    println!("100000 ranks acquired in {took:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

/// Attaches to a hostile target and returns the error, checking it came quickly.
fn hostile_error(mode: &str) -> Option<ToolError> {
    let exe = hostile(0)?;
    let t = start(&exe, mode);
    let t0 = Instant::now();
    let result = attach(t.pid());
    let took = t0.elapsed();
    println!("{mode}: {took:?}: {:?}", result.as_ref().err());
    assert!(took < Duration::from_secs(2), "{mode} took {took:?}");
    Some(result.expect_err(mode))
}

#[test]
fn hostile_starters_give_typed_errors_quickly() {
    if hostile(0).is_none() {
        return skip(
            "hostile_starters_give_typed_errors_quickly",
            "no C compiler",
        );
    }
    let decode = |mode| match hostile_error(mode) {
        Some(ToolError::Decode { source, .. }) => source,
        other => panic!("{mode}: {other:?}"),
    };
    assert!(matches!(
        decode("huge"),
        DecodeError::TooManyEntries { size, .. } if size == i64::from(i32::MAX)
    ));
    assert!(matches!(
        decode("negative"),
        DecodeError::NegativeSize { size: -5 }
    ));
    assert!(matches!(
        decode("wild-table"),
        DecodeError::Read {
            at: Location::Entries { first: 0, .. },
            source: ReadError::Unmapped { addr: 0x1000, .. }
        }
    ));
    assert!(matches!(
        decode("wild-string"),
        DecodeError::Read {
            at: Location::Name {
                rank: 1,
                field: Field::HostName
            },
            source: ReadError::Unmapped { .. }
        }
    ));
    assert!(matches!(
        decode("null-string"),
        DecodeError::NullPointer {
            at: Location::Name {
                rank: 0,
                field: Field::ExecutableName
            }
        }
    ));
    assert!(matches!(
        decode("unterminated"),
        DecodeError::Unterminated { max_len: 4096, .. }
    ));
}

#[test]
fn an_undefined_debug_state_is_kept() {
    let Some(exe) = hostile(0) else {
        return skip("an_undefined_debug_state_is_kept", "no C compiler");
    };
    let t = start(&exe, "bad-state");
    let acq = attach(t.pid()).unwrap();
    assert_eq!(acq.debug_state, DebugState::Unknown(12345));
    assert_eq!(acq.procs.len(), 1);
}

#[test]
fn a_process_without_mpir_symbols_is_no_starter() {
    match attach(std::process::id() as i32) {
        Err(ToolError::NotAStarter { missing, .. }) => {
            assert!(missing.contains(&Symbol::Breakpoint));
            assert!(missing.contains(&Symbol::Proctable));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        attach(0x7fff_fff0),
        Err(ToolError::NoSuchProcess { pid: 0x7fff_fff0 })
    ));
}

#[test]
fn process_memory_reads_writes_and_reports_unmapped_and_short_reads() {
    let me = std::process::id() as i32;
    let mem = ProcessMemory::new(me);
    let data: Vec<u8> = (0..=255).collect();
    let mut buf = vec![0u8; 256];
    mem.read(data.as_ptr() as u64, &mut buf).unwrap();
    assert_eq!(buf, data);

    // Written and read back only through ProcessMemory, never through Rust references.
    let mut target = [0u8; 16];
    let addr = std::hint::black_box(target.as_mut_ptr()) as u64;
    mem.write(addr + 4, b"MPIR").unwrap();
    let mut back = [0u8; 16];
    mem.read(addr, &mut back).unwrap();
    assert_eq!(&back[4..8], b"MPIR");
    std::hint::black_box(&mut target);

    assert!(matches!(
        mem.read(0x1000, &mut buf[..8]),
        Err(ReadError::Unmapped {
            addr: 0x1000,
            len: 8
        })
    ));
    // A readable mapping followed by a hole: a read across its end is short.
    let maps = read_maps(me).unwrap();
    let edge = maps
        .windows(2)
        .find(|w| w[0].read && w[0].end < w[1].start)
        .map(|w| w[0].end)
        .expect("a mapping followed by a hole");
    assert!(matches!(
        mem.read(edge - 8, &mut buf[..16]),
        Err(ReadError::Short {
            got: 8,
            len: 16,
            ..
        })
    ));
    assert!(mem.write(0x1000, b"x").is_err());
}

#[cfg(target_arch = "x86_64")]
mod launch {
    use super::*;
    use mpir_types::os::{
        ArmPoint, GateOutcome, GatePolicy, LaunchOptions, MpirEvent, launch, launch_with,
        trace_to_exit,
    };

    fn fake_starter() -> Option<PathBuf> {
        compile("cc", "fake_starter.c", "fake_starter", &["-O1", "-pthread"])
    }

    fn hostname() -> String {
        String::from_utf8(Command::new("hostname").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_owned()
    }

    fn opts(gate: GatePolicy) -> LaunchOptions {
        LaunchOptions {
            timeout: Duration::from_secs(30),
            gate,
            ..LaunchOptions::default()
        }
    }

    fn gone(pid: i32) -> bool {
        !Path::new(&format!("/proc/{pid}")).exists()
    }

    #[test]
    fn the_fake_starter_is_acquired_and_its_processes_released_through_the_gate() {
        let Some(exe) = fake_starter() else {
            return skip("the_fake_starter_is_acquired...", "no C compiler");
        };
        let mut seen = Vec::new();
        let t0 = Instant::now();
        let run = trace_to_exit(
            &[exe.as_os_str(), "2".as_ref(), "20".as_ref()],
            opts(GatePolicy::IfRequired),
            |e: &MpirEvent, acq| seen.push((e.state, acq.map(|a| a.procs.len()))),
        )
        .unwrap();
        println!("{run:#?} in {:?}", t0.elapsed());
        assert_eq!(seen, [(DebugState::Spawned, Some(2))]);
        assert_eq!(
            run.armed_at,
            Some(ArmPoint::Exec),
            "the symbols are in the executable"
        );
        assert!(run.status.success(), "{:?}", run.status);
        let [event] = &run.events[..] else {
            panic!("{:?}", run.events)
        };
        assert_ne!(
            event.thread, run.pid,
            "MPIR_Breakpoint was called by a second thread"
        );
        let acq = run.acquisition.unwrap();
        assert!(acq.capabilities.must_attach_all && acq.capabilities.supports_debug_gate);
        for (rank, p) in acq.ranks() {
            assert_eq!(p.host_name.to_string(), hostname());
            assert_eq!(p.executable_name.as_os_str(), exe.as_os_str());
            assert!(
                matches!(&run.gates[rank].outcome, GateOutcome::Opened { object, .. } if **object == *exe),
                "{:?}",
                run.gates[rank]
            );
        }
    }

    #[test]
    fn an_abort_event_carries_the_abort_string() {
        let Some(exe) = fake_starter() else {
            return skip("an_abort_event_carries_the_abort_string", "no C compiler");
        };
        let run = trace_to_exit(
            &[
                exe.as_os_str(),
                "2".as_ref(),
                "20".as_ref(),
                "abort".as_ref(),
            ],
            opts(GatePolicy::IfRequired),
            |_, _| {},
        )
        .unwrap();
        let states: Vec<_> = run.events.iter().map(|e| e.state).collect();
        assert_eq!(states, [DebugState::Spawned, DebugState::Aborting]);
        assert_eq!(
            run.events[1].abort_string.as_ref().unwrap(),
            "fake abort: requested"
        );
        assert_eq!(run.status.code(), Some(3));
    }

    #[test]
    fn without_the_gate_the_processes_are_never_released() {
        let Some(exe) = fake_starter() else {
            return skip("without_the_gate...", "no C compiler");
        };
        let run = trace_to_exit(
            &[exe.as_os_str(), "2".as_ref(), "1".as_ref()],
            opts(GatePolicy::Never),
            |_, _| {},
        )
        .unwrap();
        assert!(run.gates.iter().all(|g| g.outcome == GateOutcome::Skipped));
        let last = run.events.last().unwrap();
        assert_eq!(last.state, DebugState::Aborting);
        assert_eq!(
            last.abort_string.as_ref().unwrap().to_string(),
            "rank 1 was never released"
        );
        assert_eq!(run.status.code(), Some(3));
    }

    #[test]
    fn symbols_of_a_library_loaded_later_are_found_at_the_dynamic_linker() {
        let (Some(main), Some(lib)) = (
            compile("cc", "dlopen_starter.c", "dlopen_starter", &["-O1", "-ldl"]),
            compile(
                "cc",
                "fake_starter.c",
                "libfake_starter.so",
                &["-O1", "-pthread", "-shared", "-fPIC", "-Dmain=starter_main"],
            ),
        ) else {
            return skip("symbols_of_a_library_loaded_later...", "no C compiler");
        };
        let run = trace_to_exit(
            &[
                main.as_os_str(),
                lib.as_os_str(),
                "2".as_ref(),
                "20".as_ref(),
            ],
            opts(GatePolicy::IfRequired),
            |_, _| {},
        )
        .unwrap();
        assert_eq!(run.armed_at, Some(ArmPoint::DynamicLinker));
        assert!(run.status.success(), "{:?}", run.status);
        let acq = run.acquisition.unwrap();
        let bp = acq.locate(Symbol::Breakpoint).unwrap();
        assert_eq!(&*bp.object_path, lib.as_path());
        assert!(
            run.gates.iter().all(
                |g| matches!(&g.outcome, GateOutcome::Opened { object, .. } if **object == *lib)
            ),
            "{:?}",
            run.gates
        );
        println!("armed at the dynamic linker: {:?}", run.timings);
    }

    #[test]
    fn launch_detaches_at_spawned_and_the_job_completes() {
        let Some(exe) = fake_starter() else {
            return skip("launch_detaches_at_spawned...", "no C compiler");
        };
        let mut job = launch(
            &[exe.as_os_str(), "3".as_ref(), "20".as_ref()],
            opts(GatePolicy::IfRequired),
        )
        .unwrap();
        let status = std::fs::read_to_string(format!("/proc/{}/status", job.pid())).unwrap();
        let tracer = status
            .lines()
            .find(|l| l.starts_with("TracerPid:"))
            .unwrap();
        assert_eq!(tracer.split_whitespace().nth(1), Some("0"), "detached");
        assert_eq!(job.acquisition.procs.len(), 3);
        assert_eq!(job.events.len(), 1);
        let status = job.wait(Some(Duration::from_secs(30))).unwrap();
        assert!(status.success(), "{status:?}");
        println!("timings {:?}", job.timings);
    }

    #[test]
    fn a_panicking_hook_leaves_no_stopped_starter() {
        let Some(exe) = fake_starter() else {
            return skip(
                "a_panicking_hook_leaves_no_stopped_starter",
                "no C compiler",
            );
        };
        let starter = std::cell::Cell::new(0);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // Gate timeout 1 s: the orphaned "MPI processes" end by themselves.
            launch_with(
                &[exe.as_os_str(), "2".as_ref(), "1".as_ref()],
                opts(GatePolicy::Never),
                |_, acq| {
                    starter.set(acq.map_or(0, |a| a.starter_pid));
                    panic!("the hook fails while the starter is stopped at MPIR_Breakpoint");
                },
            )
        }));
        assert!(result.is_err());
        let pid = starter.get();
        assert!(pid > 0);
        assert!(gone(pid), "the starter {pid} was ended and reaped");
    }

    #[test]
    fn launching_a_non_starter_or_nothing_fails_cleanly() {
        let err = launch(&["/bin/true"], opts(GatePolicy::IfRequired)).unwrap_err();
        assert!(
            matches!(err, ToolError::StarterEnded { ref status, .. } if status.success()),
            "{err:?}"
        );
        let err = launch(&["/nonexistent/mpiexec"], opts(GatePolicy::IfRequired)).unwrap_err();
        assert!(matches!(err, ToolError::Exec { .. }), "{err:?}");
        let err = launch(&["no-such-program-here"], opts(GatePolicy::IfRequired)).unwrap_err();
        assert!(matches!(err, ToolError::Exec { .. }), "{err:?}");
        let err = launch::<&str>(&[], opts(GatePolicy::IfRequired)).unwrap_err();
        assert!(matches!(err, ToolError::InvalidArgument(_)), "{err:?}");
    }

    #[test]
    fn a_timeout_ends_the_starter_and_leaves_nothing_behind() {
        let pidfile = os_common::workdir().join("timeout.pid");
        let _ = std::fs::remove_file(&pidfile);
        let script = format!("echo $$ > {}; exec sleep 30", pidfile.display());
        let t0 = Instant::now();
        let err = launch(
            &["sh", "-c", &script],
            LaunchOptions {
                timeout: Duration::from_millis(500),
                ..LaunchOptions::default()
            },
        )
        .unwrap_err();
        let took = t0.elapsed();
        assert!(matches!(err, ToolError::Timeout { .. }), "{err:?}");
        assert!(took < Duration::from_secs(8), "{took:?}");
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(gone(pid), "the starter {pid} was ended and reaped");
        println!("timeout handled in {took:?}");
    }

    #[test]
    fn a_hostile_table_at_the_spawned_event_is_a_typed_error_and_the_starter_ends() {
        let Some(exe) = hostile(0) else {
            return skip("a_hostile_table_at_the_spawned_event...", "no C compiler");
        };
        let out = os_common::workdir().join("spawn-huge.out");
        let file = std::fs::File::create(&out).unwrap();
        let t0 = Instant::now();
        let err = launch(
            &[exe.as_os_str(), "spawn-huge".as_ref()],
            LaunchOptions {
                stdout: Some(file.into()),
                ..opts(GatePolicy::IfRequired)
            },
        )
        .unwrap_err();
        let took = t0.elapsed();
        assert!(
            matches!(
                err,
                ToolError::Decode {
                    source: DecodeError::TooManyEntries { .. },
                    ..
                }
            ),
            "{err:?}"
        );
        let text = std::fs::read_to_string(&out).unwrap();
        let pid: i32 = text
            .lines()
            .find_map(|l| l.strip_prefix("pid "))
            .unwrap()
            .parse()
            .unwrap();
        assert!(gone(pid), "the hostile starter {pid} was ended and reaped");
        assert!(took < Duration::from_secs(8), "{took:?}");
        println!("hostile launch failed in {took:?}: {err}");
    }
}
