//! The PMIx tool side (`mpir_types::pmix::tool`) on a live 3-rank job of Open MPI 5.0.11's
//! wheel (`scripts/with-mpi openmpi5`: `MPIEXEC` beside `prterun`): the jobs' table is the
//! ranks' own view, and a second connection in the process is refused; then by URI (the
//! launcher's `--report-uri`) from a child process. This is the only test of the binary that
//! connects (libpmix initialises once per process). Under another MPI it
//! says so and returns. Also the fence: `unsafe` only in the crate's FFI files.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mpir_types::pmix::tool::{PmixError, PmixTool, Server, ToolOptions, attach};

fn wheel_mpiexec() -> Option<PathBuf> {
    let mpiexec = std::env::var("MPIEXEC").ok()?;
    let prog = PathBuf::from(mpiexec.split_whitespace().next()?);
    prog.with_file_name("prterun").is_file().then_some(prog)
}

#[test]
fn attach_reads_the_ranks_and_a_second_connection_is_refused() {
    let Some(mpiexec) = wheel_mpiexec() else {
        println!("skipped: MPIEXEC is not Open MPI 5's (run under scripts/with-mpi openmpi5)");
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pmix-tool");
    std::fs::create_dir_all(&dir).unwrap();
    let app = dir.join("mpi_app");
    let lib = mpiexec.parent().unwrap().join("../lib");
    let st = Command::new(std::env::var("MPICC").unwrap())
        .arg("-o")
        .arg(&app)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/targets/mpi_app.c"))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .status()
        .unwrap();
    assert!(st.success());
    let (mut job, _out, own) = start_job(&mpiexec, &app, &[]);
    let (jobs, library) = attach(job.id() as i32, &ToolOptions::default()).unwrap();
    assert!(library.to_string_lossy().contains("libpmix"));
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    let got: Vec<_> = jobs[0]
        .procs
        .iter()
        .enumerate()
        .map(|(r, p)| {
            (
                r,
                p.pid,
                p.host_name.to_string(),
                p.executable_name.to_string(),
            )
        })
        .collect();
    assert_eq!(got, own);
    let again = PmixTool::connect(Server::Pid(job.id() as i32), &ToolOptions::default());
    assert!(matches!(again, Err(PmixError::AlreadyUsed)), "{again:?}");
    assert!(job.wait().unwrap().success());

    // By URI, in a process of its own (libpmix initialises once per process): a job whose
    // launcher writes its URI (`--report-uri`), the child test connects with it.
    let uri_file = dir.join("uri");
    let _ = std::fs::remove_file(&uri_file);
    let (mut job, _out, own) = start_job(
        &mpiexec,
        &app,
        &["--report-uri", uri_file.to_str().unwrap()],
    );
    let uri = std::fs::read_to_string(&uri_file).unwrap();
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "pmix_tool::attach_by_uri_child", "--nocapture"])
        .env(URI_CHILD, uri.trim())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&child.stderr)
    );
    let got: Vec<Row> = out
        .lines()
        .filter_map(|l| l.strip_prefix("row "))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (
                w[0].parse().unwrap(),
                w[1].parse().unwrap(),
                w[2].into(),
                w[3].into(),
            )
        })
        .collect();
    assert_eq!(got, own, "{out}");
    assert!(job.wait().unwrap().success());
}

/// Set in the environment of `attach_by_uri_child`: the URI to connect to.
const URI_CHILD: &str = "MPIR_TYPES_PMIX_TEST_URI";

/// The child of the test above (nothing to do otherwise): connects by `PMIX_SERVER_URI` and
/// prints the one job's table, `row RANK PID HOST EXE` a rank.
#[test]
fn attach_by_uri_child() {
    let Ok(uri) = std::env::var(URI_CHILD) else {
        return;
    };
    let mut tool = PmixTool::connect(Server::Uri(uri), &ToolOptions::default()).unwrap();
    let jobs = tool.jobs().unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    for (r, p) in jobs[0].procs.iter().enumerate() {
        println!("row {r} {} {} {}", p.pid, p.host_name, p.executable_name);
    }
}

/// `mpiexec [extra] -n 3 app 4`, and each rank's own line (rank, pid, host, executable),
/// sorted (read once every rank is in its sleep after `MPI_Init`), with the job's output.
fn start_job(
    mpiexec: &Path,
    app: &Path,
    extra: &[&str],
) -> (std::process::Child, Reader, Vec<Row>) {
    let mut job = Command::new(mpiexec)
        .args(extra)
        .args(["-n", "3"])
        .arg(app)
        .arg("4")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(job.stdout.take().unwrap());
    let mut own = Vec::new();
    for _ in 0..3 {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        // rank R pid P host H exe E
        let w: Vec<&str> = line.split_whitespace().collect();
        own.push((
            w[1].parse::<usize>().unwrap(),
            w[3].parse::<i64>().unwrap(),
            w[5].to_owned(),
            w[7].to_owned(),
        ));
    }
    own.sort();
    (job, reader, own)
}

/// A rank's line: rank, pid, host, executable.
type Row = (usize, i64, String, String);

/// A job's standard output, kept open until it ends.
type Reader = BufReader<std::process::ChildStdout>;

#[test]
fn unsafe_is_only_in_the_ffi_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if std::fs::read_to_string(&p).unwrap().lines().any(|l| {
                l.contains("unsafe {")
                    || l.contains("unsafe impl")
                    || l.contains("unsafe fn")
                    || l.contains("unsafe extern")
            }) {
                found.push(p.strip_prefix(&src).unwrap().display().to_string());
            }
        }
    }
    for f in &found {
        assert!(
            f.starts_with("os/") || f == "starter/ffi.rs" || f == "pmix/ffi.rs",
            "unsafe outside the FFI files: {f}"
        );
    }
    assert!(found.iter().any(|f| f == "pmix/ffi.rs"));
}
