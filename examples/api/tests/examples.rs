//! Builds every example of this package (one `cargo build --examples` into the target
//! directory of this test) and runs each against the selected MPI (`scripts/with-mpi IMPL`),
//! the 2-rank ones under `mpit_safe::launcher()`, checking what they print against what could
//! go wrong: a value read back that differs from the one written, a listing that differs from
//! `Mpit::cvars()`'s, a queue length or event count other than the messages sent, a process
//! table other than the processes started, a posted receive the DLL does not show.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mpit_safe::{Family, Listing, Mpit, Vendor, features, implementation, quirks};

/// The example `name`, built once for all the tests with the profile this test was built with.
fn example(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        // This test is <target>/<profile>/deps/examples-<hash>.
        let exe = std::env::current_exe().unwrap();
        let profile = exe.parent().and_then(Path::parent).unwrap();
        let mut cargo = Command::new(env!("CARGO"));
        cargo
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["build", "-q", "-p", "mpit-api-examples", "--examples"])
            .env("CARGO_TARGET_DIR", profile.parent().unwrap());
        match profile.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => {}
            Some(other) => {
                cargo.args(["--profile", other]);
            }
        }
        let status = cargo.status().expect("run cargo");
        assert!(status.success(), "cargo build --examples: {status}");
        profile.join("examples")
    });
    dir.join(name)
}

/// Runs `cmd` (at most 120 s) and returns its standard output; it must succeed unless `fails`.
fn run(cmd: &mut Command, fails: bool) -> (String, String) {
    // Open MPI as root, more ranks than cores, and the ob1 PML (whose queues the MQD DLL and
    // the pvar `pml_ob1_unexpected_msgq_length` show); other MPIs ignore these.
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .env("OMPI_MCA_pml", "ob1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let read = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            r.read_to_string(&mut s).map(|_| s).unwrap_or_default()
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{cmd:?} did not end within 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    eprintln!("{cmd:?}: {status}\n{out}{err}");
    assert_eq!(status.success(), !fails, "{cmd:?}: {status}");
    (out, err)
}

/// One process of `name`, started from another directory than the package's.
fn single(name: &str, args: &[&str]) -> String {
    let mut cmd = Command::new(example(name));
    run(cmd.args(args).current_dir(std::env::temp_dir()), false).0
}

/// `name` on 2 ranks under the selected MPI's launcher.
fn two_ranks(name: &str) -> String {
    let words = mpit_safe::launcher().expect("no MPI launcher: set MPIEXEC (scripts/with-mpi)");
    let mut cmd = Command::new(&words[0]);
    run(
        cmd.args(&words[1..]).args(["-n", "2"]).arg(example(name)),
        false,
    )
    .0
}

/// The line of `out` that starts with `prefix`, without it.
fn line<'a>(out: &'a str, prefix: &str) -> Option<&'a str> {
    out.lines().find_map(|l| l.strip_prefix(prefix))
}

/// The text between `before` and `after` in `s`.
fn between<'a>(s: &'a str, before: &str, after: &str) -> &'a str {
    let rest = &s[s
        .find(before)
        .unwrap_or_else(|| panic!("{before:?} in {s:?}"))
        + before.len()..];
    &rest[..rest
        .find(after)
        .unwrap_or_else(|| panic!("{after:?} in {rest:?}"))]
}

/// Whether the library's configure line (in `MPI_Get_library_version`) has `flag`.
fn configured_with(flag: &str) -> bool {
    quirks::library_version().is_some_and(|v| v.contains(flag))
}

#[test]
fn cvars_reads_typed_and_dynamic_and_reads_back_a_write() {
    let out = single("cvars", &[]);
    let cvar = line(&out, "cvar ").expect("an eager limit (every MPI here has one)");
    let name = cvar.split(' ').next().unwrap();
    let typed = between(cvar, "typed ", ",");
    if !typed.starts_with('(') {
        let value = cvar.rsplit(' ').next().unwrap();
        assert_eq!(
            typed.split(' ').nth(1),
            Some(value),
            "typed and dynamic reads differ"
        );
    }
    let wrote: i32 = between(&out, "wrote ", ",").parse().unwrap();
    let back: i32 = between(&out, "read back ", "\n").parse().unwrap();
    assert_eq!(
        back, wrote,
        "a control variable read back differs from the value written"
    );
    let restored: i32 = between(&out, "restored ", "\n")
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        restored,
        wrote.wrapping_sub(1),
        "the old value was not restored"
    );
    // By name on the command line: the same variable, the same line.
    assert_eq!(line(&single("cvars", &[name]), "cvar "), Some(cvar));
}

#[test]
fn catalog_before_init_is_the_listing_and_refresh_only_grows() {
    let out = single("catalog", &[]);
    let mpit = Mpit::init().unwrap();
    fn summary<T>(what: &str, l: &Listing<T>) -> String {
        let (n, e, h) = (l.count, l.entries.len(), l.holes.len());
        format!("{n} {what} ({e} listed, {h} holes)")
    }
    let (c, p, g) = (
        mpit.cvars().unwrap(),
        mpit.pvars().unwrap(),
        mpit.categories().unwrap(),
    );
    let expected = format!(
        "{}, {}, {}",
        summary("cvars", &c),
        summary("pvars", &p),
        summary("categories", &g)
    );
    assert_eq!(line(&out, "before MPI_Init: "), Some(expected.as_str()));
    let after = line(&out, "after MPI_Init: ").unwrap();
    let cvars_after: usize = after.split(' ').next().unwrap().parse().unwrap();
    assert!(cvars_after >= c.count, "indices never disappear: {after}");
    let again = line(&out, "listed again: ").unwrap();
    let n: Vec<usize> = again
        .split(|ch: char| !ch.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(
        (n[0], n[1] + n[2]),
        (cvars_after, cvars_after),
        "entries and holes: {again}"
    );
}

#[test]
fn pvars_count_the_unexpected_messages() {
    let out = two_ranks("pvars");
    match line(&out, "pml_ob1_unexpected_msgq_length (").or(line(&out, "unexpected_recvq_length ("))
    {
        Some(l) => assert!(l.ends_with(": 5 before the receives, 0 after"), "{l}"),
        None => {
            assert!(
                out.contains("no unexpected-queue pvar among this MPI's"),
                "{out}"
            );
            assert_ne!(
                implementation().family(),
                Family::OpenMpi,
                "Open MPI's ob1 has one"
            );
            assert!(
                !configured_with("--enable-mpit-pvars"),
                "configured with pvars, none here"
            );
        }
    }
}

#[test]
fn events_reach_the_closure_and_the_stream() {
    let out = two_ranks("events");
    if !features().events {
        for r in 0..2 {
            assert!(out.contains(&format!("rank {r}: no event API in this MPI's header")));
        }
    } else if configured_with("--enable-mpit-events") {
        assert!(
            out.contains("event type unexp_message_enqueued (2 elements)"),
            "{out}"
        );
        let l = line(&out, "unexp_message_enqueued: ").expect("the events seen");
        assert_eq!(
            l,
            r#"closure 4 from rank 1, stream 4 from ["1", "1", "1", "1"]"#
        );
    } else {
        assert!(
            out.contains("rank 0: no event type unexp_message_enqueued"),
            "{out}"
        );
    }
}

#[test]
fn mpir_reads_back_the_table_it_published() {
    let out = single("mpir", &["-n", "3"]);
    let started: Vec<(String, String)> = out
        .lines()
        .filter_map(|l| l.strip_prefix("started rank "))
        .map(|l| {
            (
                between(l, "", " ").to_owned(),
                l.rsplit(' ').next().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(started.len(), 3, "{out}");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let read: Vec<(String, String)> = out
        .lines()
        .filter_map(|l| l.strip_prefix("rank "))
        .map(|l| {
            assert_eq!(between(l, "host ", " "), host.trim());
            assert!(between(l, "executable ", " ").ends_with("/sleep"), "{l}");
            (
                between(l, "", " ").to_owned(),
                l.rsplit(' ').next().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        read, started,
        "the table read back is not the processes started"
    );
    let starter = line(&out, "starter ").unwrap();
    assert!(
        starter.contains(": 3 ranks, Spawned, MPIR_Breakpoint in "),
        "{starter}"
    );
    assert!(
        starter.ends_with("examples/mpir"),
        "the symbols are in the example: {starter}"
    );
    // The tool side alone, on a process that does not exist: a typed error.
    let mut cmd = Command::new(example("mpir"));
    let (_, err) = run(cmd.args(["--pid", "2147483647"]), true);
    assert!(err.contains("NoSuchProcess"), "{err}");
}

#[test]
fn mqd_loads_the_dll_and_shows_the_posted_receives() {
    let out = two_ranks("mqd");
    let i = implementation();
    // Debian's Open MPI 4.1 ships the DLL and runs ob1 here (mqd-dump's tests prove it there).
    let required = i.vendor == Vendor::OpenMpi && i.version.major == 4;
    for r in 0..2 {
        let dll = line(&out, &format!("rank {r}: /"));
        let world = line(&out, &format!("rank {r}: MPI_COMM_WORLD size 2, "));
        if required {
            assert!(dll.is_some_and(|l| l.contains("libompi_dbg_msgq.so version \"Open MPI")));
        }
        match world {
            Some(l) => assert_eq!(l, format!("posted receives with tags Some([{}])", 42 + r)),
            None => {
                assert!(!required, "rank {r} showed no MPI_COMM_WORLD: {out}");
                let why = ["no message queue DLL", "PML "].map(|w| format!("rank {r}: {w}"));
                assert!(why.iter().any(|w| out.contains(w.as_str())), "{out}");
            }
        }
    }
}
