//! `mqd-dump` against a live 2-rank job of Debian's Open MPI 4.1 (`--mca pml ob1`): the
//! program `examples/mqd/mqd_target.c` posts a receive on rank 0 (peer 1, tag 42, 10 ints),
//! three unexpected eager messages and a synchronous send (peer 0, tag 99, 5 ints) on rank 1,
//! all on a communicator it names "mqd-test-comm", and waits; the tool dumps both ranks through
//! Open MPI's own DLL; the test compares the dump with what the program posted, releases the
//! ranks and expects the job to exit 0. The DLL has no unexpected-message queue; the test
//! checks the one mqd-types reads from ob1's structures. The `--json` document is valid against
//! `examples/schemas/mqd-dump.schema.json`; without the type donor the error goes to standard
//! error. Skips (with a line saying so) where Debian's Open MPI 4.1 is not installed.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use mpit_test_support::{openmpi, schema};

const TOOL: &str = env!("CARGO_BIN_EXE_mqd-dump");

/// The job, killed if the test fails before it ends.
struct Job(Option<Child>);

impl Drop for Job {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Two ranks of `exe DIR` under `mpiexec.openmpi` with the MCA settings `mca` (and `env`),
/// their output in `DIR/job.out`.
fn launch(exe: &Path, dir: &Path, mca: &[&str], env: &[(&str, &str)]) -> Job {
    let out = std::fs::File::create(dir.join("job.out")).expect("the job's output file");
    let child = openmpi::command("mpiexec.openmpi")
        .arg("--oversubscribe")
        .args(mca)
        .args(["-n", "2"])
        .arg(exe)
        .arg(dir)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .expect("run mpiexec.openmpi");
    Job(Some(child))
}

/// `(pid, rank)` of each rank, from its ready file; `Err` with the job's status and output if
/// it ended first.
fn try_wait_ready(dir: &Path, job: &mut Job) -> Result<Vec<(i32, i64)>, String> {
    let start = Instant::now();
    loop {
        let ready: Vec<(i32, i64)> = (0..2)
            .filter_map(|r| {
                let text = std::fs::read_to_string(dir.join(format!("ready.{r}"))).ok()?;
                let mut it = text.split_whitespace();
                Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
            })
            .collect();
        if ready.len() == 2 {
            return Ok(ready);
        }
        if let Some(st) = job.0.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
            let out = std::fs::read_to_string(dir.join("job.out")).unwrap_or_default();
            return Err(format!(
                "the job ended before its ranks were ready: {st}\n{out}"
            ));
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "ranks not ready after 120 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_ready(dir: &Path, job: &mut Job) -> Vec<(i32, i64)> {
    try_wait_ready(dir, job).unwrap_or_else(|e| panic!("{e}"))
}

/// Two ranks of `mqd_target` (built with `mpicc.openmpi`) launched by [`launch`] in a fresh
/// directory named after `name`; `None` without Open MPI 4.1.
fn start(name: &str, mca: &[&str], env: &[(&str, &str)]) -> Option<(Job, std::path::PathBuf)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("mqd/mqd_target.c");
    let exe = openmpi::build(
        &src,
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("mqd-dump"),
        "mqd_target",
    )?;
    let dir = job_dir(name);
    Some((launch(&exe, &dir, mca, env), dir))
}

/// A fresh directory for one job of a test.
fn job_dir(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mqd-dump-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Releases the ranks and expects the job to end with 0 within 120 s.
fn release(dir: &Path, job: &mut Job) {
    std::fs::write(dir.join("release"), b"").unwrap();
    let mut child = job.0.take().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("the job did not end within 120 s of its release");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "the job ended with {status}");
    println!("the job completed normally after the dump ({status})");
}

/// `--pid P0 --pid P1` of the ranks, in rank order.
fn pid_args(ready: &[(i32, i64)]) -> Vec<String> {
    [0, 1]
        .iter()
        .flat_map(|&r| {
            let pid = ready.iter().find(|x| x.1 == r).expect("both ranks").0;
            ["--pid".to_owned(), pid.to_string()]
        })
        .collect()
}

fn tool(args: &[String]) -> Output {
    let out = Command::new(TOOL)
        .args(args)
        .output()
        .expect("run mqd-dump");
    assert!(
        out.status.success(),
        "mqd-dump {args:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn comm<'a>(process: &'a Json, name: &str) -> &'a Json {
    process["communicators"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no communicator {name:?} in {process}"))
}

fn ops<'a>(c: &'a Json, queue: &str) -> &'a [Json] {
    c[queue]
        .as_array()
        .unwrap_or_else(|| panic!("{queue} of {} is not a list: {}", c["name"], c[queue]))
}

#[test]
fn dump_shows_what_two_ranks_posted() {
    let Some((mut job, dir)) = start("ob1", &["--mca", "pml", "ob1"], &[]) else {
        return openmpi::skip("mqd-dump");
    };
    let ready = wait_ready(&dir, &mut job);
    let pid_of = |rank: i64| ready.iter().find(|r| r.1 == rank).expect("both ranks").0;
    let pid_args = pid_args(&ready);

    let t = Instant::now();
    let text = tool(&pid_args);
    let text_time = t.elapsed();
    let mut json_args = pid_args.clone();
    json_args.push("--json".to_owned());
    let json = schema::assert_valid_text(
        "mqd-dump",
        &String::from_utf8(tool(&json_args).stdout).expect("UTF-8"),
    );

    println!("what the program posted (all on \"mqd-test-comm\", a dup of MPI_COMM_WORLD):");
    println!(
        "  rank 0: MPI_Irecv(10 x MPI_INT, from 1, tag 42)   -> a pending receive of 40 bytes"
    );
    println!(
        "  rank 1: 3 x MPI_Send(1, 2, 3 x MPI_INT, to 0, tag 7) -> unexpected at rank 0 (4, 8, 12 bytes)"
    );
    println!("  rank 1: MPI_Issend(5 x MPI_INT, to 0, tag 99)      -> a pending send of 20 bytes,");
    println!(
        "                                                        unexpected at rank 0 (probed)"
    );
    println!("what mqd-dump shows ({} ms):", text_time.as_millis());
    print!("{}", String::from_utf8_lossy(&text.stdout));

    check_dump(
        &json,
        &String::from_utf8_lossy(&text.stdout),
        &pid_of,
        &["ob1"],
    );

    // Without the type donor, Debian's stripped libmpi has no types: a typed error naming the
    // first type the DLL needs, and a failing exit, not a crash.
    let bare = Command::new(TOOL)
        .args(["--no-donor", "--pid", &pid_of(0).to_string()])
        .output()
        .expect("run mqd-dump");
    let bare_text = String::from_utf8_lossy(&bare.stdout);
    let bare_error = String::from_utf8_lossy(&bare.stderr);
    println!("without the type donor:\n{bare_text}{bare_error}");
    assert_eq!(bare.status.code(), Some(1), "{bare_text}");
    assert!(
        bare_error.contains("the image has no type \"opal_list_item_t\""),
        "the error goes to standard error: {bare_error}"
    );
    assert!(!bare_text.contains("no type"), "{bare_text}");

    release(&dir, &mut job);
    let _ = std::fs::remove_dir_all(&dir);
}

/// What the dump of `mqd_target`'s two ranks must show (the JSON document `json` and the
/// `text`), whatever the PML stack `pml` over ob1.
fn check_dump(json: &Json, text: &str, pid_of: &dyn Fn(i64) -> i32, pml: &[&str]) {
    let processes = json["processes"].as_array().expect("processes");
    assert_eq!(processes.len(), 2);
    for (i, p) in processes.iter().enumerate() {
        assert!(p.get("error").is_none(), "{p}");
        assert!(p.get("refused").is_none(), "{p}");
        assert_eq!(p["pml"], serde_json::json!(pml), "{p}");
        assert_eq!(p["pid"], pid_of(i as i64));
        assert_eq!(p["rank"], i as i64, "the rank from the environment");
        assert!(p["dll_version"].as_str().unwrap().contains("Open MPI"));
        // Section 5's search: the list first (Open MPI leaves it NULL), then MPIR_dll_name,
        // which names the DLL that was loaded.
        let search: Vec<&str> = p["dll_search"]
            .as_array()
            .expect("dll_search")
            .iter()
            .filter_map(Json::as_str)
            .collect();
        assert!(search[0].contains("mpimsgq_dll_locations"), "{search:?}");
        let dll = p["dll"].as_str().unwrap();
        assert!(
            search
                .iter()
                .any(|s| s.contains("MPIR_dll_name") && s.ends_with(dll)),
            "{search:?}"
        );
        let world = comm(p, "MPI_COMM_WORLD");
        assert_eq!(world["size"], 2);
        assert_eq!(world["local_rank"], i as i64);
        assert_eq!(world["group"], serde_json::json!([0, 1]));
        let selfc = comm(p, "MPI_COMM_SELF");
        assert_eq!(selfc["size"], 1);
        assert_eq!(selfc["group"], serde_json::json!([i]));
        let named = comm(p, "mqd-test-comm");
        assert_eq!(named["size"], 2);
        assert_eq!(named["local_rank"], i as i64);
        assert_ne!(named["unique_id"], world["unique_id"]);
        // Nothing was posted on the predefined communicators.
        for c in [world, selfc] {
            assert!(ops(c, "pending_sends").is_empty(), "{c}");
            assert!(ops(c, "pending_receives").is_empty(), "{c}");
        }
    }
    let (r0, r1) = (
        comm(&processes[0], "mqd-test-comm"),
        comm(&processes[1], "mqd-test-comm"),
    );

    let recvs = ops(r0, "pending_receives");
    assert_eq!(recvs.len(), 1, "{r0}");
    let recv = &recvs[0];
    assert_eq!(recv["status"], "pending");
    assert_eq!(recv["desired_local_rank"], 1);
    assert_eq!(recv["desired_global_rank"], 1);
    assert_eq!(recv["tag_wild"], false);
    assert_eq!(recv["desired_tag"], 42);
    assert_eq!(recv["desired_length"], 10 * 4, "10 ints, in bytes");
    assert!(ops(r0, "pending_sends").is_empty(), "{r0}");

    let sends = ops(r1, "pending_sends");
    assert_eq!(sends.len(), 1, "{r1}");
    let send = &sends[0];
    assert_eq!(send["desired_local_rank"], 0);
    assert_eq!(send["desired_global_rank"], 0);
    assert_eq!(send["desired_tag"], 99);
    assert_eq!(send["desired_length"], 5 * 4, "5 ints, in bytes");
    assert!(ops(r1, "pending_receives").is_empty(), "{r1}");

    // Open MPI 4.1.4's DLL has no unexpected-message queue (mqs_no_information); mqd-types
    // reads ob1's unexpected fragments itself: the three tag-7 eager messages of rank 1 in
    // send order (1, 2, 3 ints) and the synchronous send (5 ints, tag 99), which ob1 sends as
    // a rendezvous and rank 0 has probed but not received.
    for (i, p) in processes.iter().enumerate() {
        for c in p["communicators"].as_array().unwrap() {
            let u = &c["unexpected_messages"];
            assert_eq!(u["dll"], "no information", "{u}");
            assert!(
                u["read_by"].as_str().is_some_and(|r| r.contains("ob1")),
                "rank {i} {}: {u}",
                c["name"]
            );
            if c["name"] != "mqd-test-comm" || i == 1 {
                assert_eq!(
                    u["messages"],
                    serde_json::json!([]),
                    "rank {i} {}",
                    c["name"]
                );
            }
        }
    }
    let unexpected = r0["unexpected_messages"]["messages"]
        .as_array()
        .unwrap_or_else(|| panic!("rank 0's unexpected messages: {r0}"));
    assert_eq!(unexpected.len(), 4, "{unexpected:?}");
    for (m, len) in unexpected[..3].iter().zip([4, 8, 12]) {
        assert_eq!(m["peer"], 1, "{m}");
        assert_eq!(m["peer_global"], 1, "{m}");
        assert_eq!(m["source"], 1, "{m}");
        assert_eq!(m["tag"], 7, "{m}");
        assert_eq!(m["length"], len, "{m}");
        assert_eq!(m["kind"], "eager", "{m}");
        assert_eq!(m["out_of_sequence"], false, "{m}");
    }
    let seqs: Vec<u64> = unexpected
        .iter()
        .map(|m| m["sequence"].as_u64().unwrap())
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "send order: {seqs:?}"
    );
    let ssend = &unexpected[3];
    assert_eq!(ssend["peer"], 1, "{ssend}");
    assert_eq!(ssend["tag"], 99, "{ssend}");
    assert_eq!(ssend["length"], 5 * 4, "{ssend}");
    assert_eq!(ssend["kind"], "rendezvous", "{ssend}");
    assert!(
        text
            .contains("unexpected messages (4): no information from the DLL; read by mqd-types, from ob1's structures"),
        "the text dump labels what mqd-types read itself"
    );
    assert!(
        text.contains(&format!("  PML: {}", pml.join(" over "))),
        "the text names the PML"
    );
    assert!(
        text.contains("\"MPI_COMM_NULL\": local rank MPI_PROC_NULL,"),
        "MPI_COMM_NULL's rank by name: {text}"
    );
}

/// The monitoring PML stacked over ob1 (`pml_monitoring_enable`): seen through, the dump shows
/// the same queues as under ob1 alone.
#[test]
fn monitoring_over_ob1_shows_the_right_queues() {
    let mca = "--mca pml ob1,monitoring --mca pml_monitoring_enable 1";
    let mca: Vec<&str> = mca.split(' ').collect();
    let Some((mut job, dir)) = start("monitoring", &mca, &[]) else {
        return openmpi::skip("mqd-dump monitoring");
    };
    let ready = wait_ready(&dir, &mut job);
    let pid_of = |rank: i64| ready.iter().find(|r| r.1 == rank).expect("both ranks").0;
    let text = tool(&pid_args(&ready));
    let mut json_args = pid_args(&ready);
    json_args.push("--json".to_owned());
    let json = schema::assert_valid_text(
        "mqd-dump",
        &String::from_utf8(tool(&json_args).stdout).expect("UTF-8"),
    );
    check_dump(
        &json,
        &String::from_utf8_lossy(&text.stdout),
        &pid_of,
        &["monitoring", "ob1"],
    );
    release(&dir, &mut job);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The cm PML (through libfabric's tcp provider, which Open MPI excludes by default): the
/// DLL would read cm's requests as ob1's, so each rank is refused, naming the PML, with exit
/// status 3 and no queue printed. Skips if cm cannot run here.
#[test]
fn cm_is_refused_naming_the_pml() {
    let mca = "--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_exclude none";
    let mca: Vec<&str> = mca.split(' ').collect();
    let Some((mut job, dir)) = start("cm", &mca, &[("FI_PROVIDER", "tcp")]) else {
        return openmpi::skip("mqd-dump cm");
    };
    let ready = match try_wait_ready(&dir, &mut job) {
        Ok(ready) => ready,
        Err(e) => return println!("skip: cm_is_refused_naming_the_pml: cm does not run here: {e}"),
    };
    for json in [false, true] {
        let mut args = pid_args(&ready);
        if json {
            args.push("--json".to_owned());
        }
        let out = Command::new(TOOL)
            .args(&args)
            .output()
            .expect("run mqd-dump");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        println!(
            "mqd-dump {args:?} under cm: {:?}\n{stdout}{stderr}",
            out.status.code()
        );
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        assert_eq!(
            stderr
                .matches("refused: the process runs Open MPI's PML \"cm\"")
                .count(),
            2
        );
        assert!(
            !stdout.contains("pending") && !stdout.contains("communicator"),
            "{stdout}"
        );
        if json {
            let v = schema::assert_valid_text("mqd-dump", &stdout);
            for p in v["processes"].as_array().unwrap() {
                assert_eq!(p["pml"], serde_json::json!(["cm"]), "{p}");
                assert!(p["refused"].as_str().unwrap().contains("\"cm\""), "{p}");
                assert!(p.get("communicators").is_none(), "{p}");
            }
        }
    }
    release(&dir, &mut job);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--starter` of a process that is no starter: said as such (it used to be "no process to
/// dump (give --pid, --starter or a command)", though --starter was given).
#[test]
fn a_failing_starter_is_named() {
    let mut sleep = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = sleep.id().to_string();
    let out = Command::new(TOOL)
        .args(["--starter", &pid])
        .output()
        .unwrap();
    let _ = sleep.kill();
    let _ = sleep.wait();
    let err = String::from_utf8_lossy(&out.stderr);
    println!("{err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("cannot read the process table of starter {pid}"))
            && err.contains("no MPIR starter"),
        "{err}"
    );
    assert!(!err.contains("no process to dump"), "{err}");
}

/// A command's output goes to standard error (or `--job-output`), never into the dump.
#[test]
fn the_commands_output_is_kept_out_of_standard_output() {
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mqd-dump-job-output.txt");
    for to_file in [false, true] {
        let mut cmd = Command::new(TOOL);
        cmd.args(["--delay", "0", "--json"]);
        if to_file {
            cmd.arg("--job-output").arg(&file);
        }
        let out = cmd
            .args([
                "--",
                "sh",
                "-c",
                "echo job-says-hello; echo job-complains >&2",
            ])
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(!stdout.contains("job-"), "{stdout}");
        let job = if to_file {
            std::fs::read_to_string(&file).unwrap()
        } else {
            stderr.clone().into_owned()
        };
        assert!(
            job.contains("job-says-hello") && job.contains("job-complains"),
            "{job}"
        );
    }
}

/// Open MPI 5.0.11's wheel (`scripts/with-mpi openmpi5`): mqd-dump finds the ranks of a
/// running `mpiexec` (PRRTE, no MPIR symbols) through PMIx, says what it lacks for the queues
/// (the MQD DLL the ranks' `MPIR_dll_name` names is not shipped), reports each rank's search,
/// and exits 1. Under another MPI it says so and returns.
#[test]
fn open_mpi_5_ranks_are_found_through_pmix_and_the_missing_dll_is_named() {
    let Some(mpiexec) = std::env::var("MPIEXEC").ok().and_then(|m| {
        let p = std::path::PathBuf::from(m.split_whitespace().next()?);
        p.with_file_name("prterun").is_file().then_some(p)
    }) else {
        println!("skipped: MPIEXEC is not Open MPI 5's (run under scripts/with-mpi openmpi5)");
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mqd-dump-pmix");
    std::fs::create_dir_all(&dir).unwrap();
    let app = dir.join("mpi_app");
    let lib = mpiexec.parent().unwrap().join("../lib");
    let st = Command::new(std::env::var("MPICC").unwrap())
        .arg("-o")
        .arg(&app)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("mpir/mpi_app.c"))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .status()
        .unwrap();
    assert!(st.success());
    let mut job = Command::new(&mpiexec)
        .args(["-n", "3"])
        .arg(&app)
        .arg("4")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let out = Command::new(TOOL)
        .args(["--starter", &job.id().to_string()])
        .output()
        .unwrap();
    let _ = job.wait();
    let err = String::from_utf8_lossy(&out.stderr);
    eprintln!("{err}");
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("its 3 ranks found through PMIx"), "{err}");
    assert!(err.contains("libompi_dbg_msgq.so"), "{err}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    for r in 0..3 {
        assert!(stdout.contains(&format!("rank {r} (pid")), "{stdout}");
    }
}
