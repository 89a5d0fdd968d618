//! `mqd-dump`: the communicators and message queues of live MPI processes, through the MPI
//! implementation's own message queue DLL (Open MPI: `libompi_dbg_msgq.so`).
//!
//! ```text
//! mqd-dump --pid PID [--pid PID ...]         # ranks of a running job
//! mqd-dump --starter PID                     # every rank of the job of a running mpiexec
//! mqd-dump --delay 2 -- mpiexec.openmpi --mca pml ob1 -n 2 ./app
//!                                            # launch, dump after 2 s, wait for the job
//! ```
//!
//! The DLL is found by section 5's search (the starter's `mpimsgq_dll_locations`, the MPI
//! process's, then `MPIR_dll_name`) unless `--dll` names it. Types come from the libraries'
//! debug info if they have it, else from mqd-types' Open MPI type donor. `--json` prints one
//! JSON document instead of text.
//!
//! Where the DLL has no information on the unexpected messages (Open MPI 4.1's DLL never has),
//! mqd-types reads them itself from the ob1 PML's structures (types from its ob1 type donor)
//! and the dump says so: `read by mqd-types from ob1's structures`.

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    linux::main()
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("mqd-dump reads live processes through /proc: Linux only");
    std::process::exit(2);
}

#[cfg(target_os = "linux")]
mod linux {
    use std::path::PathBuf;
    use std::process::{Command, ExitCode};
    use std::time::Duration;

    use clap::Parser;
    use mqd_types::live::{
        LiveImage, LiveProcess, TypeSources, add_ob1_unexpected, dll_candidates, find_dll,
    };
    use mqd_types::ob1::Ob1Message;
    use mqd_types::{CommunicatorQueues, Dll, Image, OpClass, PendingOperation, Queue};
    use serde_json::{Value as Json, json};

    /// Print the communicators and message queues of live MPI processes.
    #[derive(Parser, Debug)]
    #[command(version)]
    struct Args {
        /// An MPI process to dump (repeatable).
        #[arg(long = "pid")]
        pids: Vec<i32>,
        /// The job's starter (mpiexec): its ranks are dumped (from its MPIR process table)
        /// and its `mpimsgq_dll_locations` is searched first.
        #[arg(long)]
        starter: Option<i32>,
        /// Load this DLL instead of searching for it.
        #[arg(long)]
        dll: Option<PathBuf>,
        /// Do not use the Open MPI type donor (only the libraries' own debug info).
        #[arg(long)]
        no_donor: bool,
        /// With a command: seconds to wait before dumping.
        #[arg(long, default_value_t = 2.0)]
        delay: f64,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// A command to launch (an MPI starter), dumped after `--delay` seconds.
        #[arg(last = true)]
        command: Vec<String>,
    }

    pub(super) fn main() -> ExitCode {
        let args = Args::parse();
        let mut child = None;
        let mut starter = args.starter;
        if let Some((program, rest)) = args.command.split_first() {
            match Command::new(program).args(rest).spawn() {
                Ok(c) => {
                    starter = Some(c.id() as i32);
                    child = Some(c);
                }
                Err(e) => {
                    eprintln!("mqd-dump: cannot run {program}: {e}");
                    return ExitCode::from(2);
                }
            }
            std::thread::sleep(Duration::from_secs_f64(args.delay.max(0.0)));
        }
        let mut pids = args.pids.clone();
        if let Some(s) = starter.filter(|_| pids.is_empty()) {
            match mpir_types::os::attach(s) {
                Ok(acq) => pids.extend(acq.ranks().map(|(_, d)| d.pid as i32)),
                Err(e) => eprintln!("mqd-dump: reading the starter {s}'s process table: {e}"),
            }
        }
        let mut ok = !pids.is_empty();
        if pids.is_empty() {
            eprintln!("mqd-dump: no process to dump (give --pid, --starter or a command)");
        }
        let mut docs = Vec::new();
        for &pid in &pids {
            let doc = dump(pid, starter, &args);
            ok &= doc.get("error").is_none();
            if args.json {
                docs.push(doc);
            } else {
                print!("{}", text(&doc));
            }
        }
        if args.json {
            println!("{}", json!({ "processes": docs }));
        }
        if let Some(mut c) = child {
            match c.wait() {
                Ok(st) if !st.success() => {
                    eprintln!("mqd-dump: the command ended with {st}");
                    ok = false;
                }
                Ok(_) => {}
                Err(e) => {
                    eprintln!("mqd-dump: waiting for the command: {e}");
                    ok = false;
                }
            }
        }
        if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    }

    fn dump(pid: i32, starter: Option<i32>, args: &Args) -> Json {
        let rank = mqd_types::live::rank_from_environment(pid);
        let mut doc = json!({ "pid": pid, "rank": rank });
        if let Err(e) = dump_into(pid, starter, args, &mut doc) {
            doc["error"] = json!(e.to_string());
        }
        doc
    }

    fn dump_into(
        pid: i32,
        starter: Option<i32>,
        args: &Args,
        doc: &mut Json,
    ) -> Result<(), mqd_types::MqdError> {
        let dll = match &args.dll {
            Some(p) => Dll::load(p)?,
            None => {
                doc["dll_search"] = json!(
                    dll_candidates(starter, pid)
                        .iter()
                        .map(|c| match (&c.path, &c.note) {
                            (Some(p), _) => format!("{}: {}", c.origin, p.display()),
                            (None, n) => format!("{}: {}", c.origin, n.as_deref().unwrap_or("")),
                        })
                        .collect::<Vec<_>>()
                );
                find_dll(starter, pid)?
            }
        };
        doc["dll"] = json!(dll.path().display().to_string());
        doc["dll_version"] = json!(dll.version());
        let sources = TypeSources {
            debug_info: true,
            donor: !args.no_donor,
        };
        let live = LiveImage::new(pid, sources)?;
        doc["type_debug_info"] = json!(
            live.debug_info_sources()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
        );
        doc["type_donor_checks"] = json!(
            live.donor_checks()
                .iter()
                .map(|c| json!({
                    "symbol": c.symbol, "type": c.type_name,
                    "symbol_size": c.symbol_size, "type_size": c.type_size,
                }))
                .collect::<Vec<_>>()
        );
        let symbols = live.shared_symbols();
        let image = Image::new(&dll, Box::new(live))?;
        let mut process = image.process(Box::new(LiveProcess::new(pid)?))?;
        let mut comms = process.queues(&OpClass::ALL)?;
        add_ob1_unexpected(&symbols, &LiveProcess::new(pid)?, &mut comms);
        doc["communicators"] = json!(comms.iter().map(communicator).collect::<Vec<_>>());
        Ok(())
    }

    fn key(class: OpClass) -> &'static str {
        match class {
            OpClass::PendingSends => "pending_sends",
            OpClass::PendingReceives => "pending_receives",
            OpClass::UnexpectedMessages => "unexpected_messages",
        }
    }

    fn communicator(c: &CommunicatorQueues) -> Json {
        let mut j = json!({
            "name": c.communicator.name(),
            "unique_id": c.communicator.unique_id,
            "local_rank": c.communicator.local_rank,
            "size": c.communicator.size,
            "group": c.group,
        });
        for (class, q) in &c.queues {
            j[key(*class)] = match q {
                Queue::Operations(ops) => json!(ops.iter().map(operation).collect::<Vec<_>>()),
                Queue::NoInformation => json!("no information"),
                Queue::Failed(e @ mqd_types::MqdError::Ob1(_)) => json!({
                    "dll": "no information",
                    "error": e.to_string(),
                }),
                Queue::Failed(e) => json!({ "error": e.to_string() }),
                Queue::FromOb1(msgs) => json!({
                    "dll": "no information",
                    "read_by": OB1_LABEL,
                    "messages": msgs.iter().map(|m| ob1_message(m, c.group.as_deref())).collect::<Vec<_>>(),
                }),
            };
        }
        j
    }

    /// How the dump labels the unexpected messages mqd-types read itself.
    const OB1_LABEL: &str = "mqd-types, from ob1's structures (unexpected_frags, frags_cant_match)";

    fn ob1_message(m: &Ob1Message, group: Option<&[i32]>) -> Json {
        json!({
            "peer": m.peer,
            "peer_global": group.and_then(|g| g.get(m.peer as usize)),
            "source": m.source,
            "tag": m.tag,
            "length": m.length,
            "sequence": m.sequence,
            "kind": m.kind.to_string(),
            "out_of_sequence": m.out_of_sequence,
            "frag": m.frag,
        })
    }

    fn operation(op: &PendingOperation) -> Json {
        json!({
            "status": op.status().map(|s| s.to_string()).unwrap_or_else(|v| v.to_string()),
            "desired_local_rank": op.desired_local_rank,
            "desired_global_rank": op.desired_global_rank,
            "tag_wild": op.tag_wild != 0,
            "desired_tag": op.desired_tag,
            "desired_length": op.desired_length,
            "system_buffer": op.system_buffer != 0,
            "buffer": op.buffer,
            "actual_local_rank": op.actual_local_rank,
            "actual_global_rank": op.actual_global_rank,
            "actual_tag": op.actual_tag,
            "actual_length": op.actual_length,
            "extra_text": op.extra_text(),
        })
    }

    fn text(doc: &Json) -> String {
        let mut s = format!(
            "rank {} (pid {})",
            doc["rank"]
                .as_i64()
                .map_or("?".to_owned(), |r| r.to_string()),
            doc["pid"]
        );
        if let Some(dll) = doc["dll"].as_str() {
            s += &format!(": {dll}\n  {}\n", doc["dll_version"].as_str().unwrap_or(""));
        } else {
            s += "\n";
        }
        for c in doc["dll_search"].as_array().into_iter().flatten() {
            s += &format!("  DLL search: {}\n", c.as_str().unwrap_or(""));
        }
        let checks: Vec<String> = doc["type_donor_checks"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                format!(
                    "{} {} B = {} {} B",
                    c["symbol"].as_str().unwrap_or(""),
                    c["symbol_size"],
                    c["type"].as_str().unwrap_or(""),
                    c["type_size"]
                )
            })
            .collect();
        if !checks.is_empty() {
            s += &format!("  type donor checked: {}\n", checks.join(", "));
        }
        if let Some(e) = doc["error"].as_str() {
            s += &format!("  error: {e}\n");
        }
        for c in doc["communicators"].as_array().into_iter().flatten() {
            s += &format!(
                "  communicator {} {:?}: local rank {}, size {}, group {}\n",
                c["unique_id"],
                c["name"].as_str().unwrap_or(""),
                c["local_rank"],
                c["size"],
                c["group"]
            );
            for class in OpClass::ALL {
                let q = &c[key(class)];
                match q.as_array() {
                    Some(ops) if ops.is_empty() => s += &format!("    {class}: none\n"),
                    Some(ops) => {
                        s += &format!("    {class} ({}):\n", ops.len());
                        for op in ops {
                            s += &format!(
                                "      {} peer {} (world {}) tag {} length {} buffer {:#x}{}  [{}]\n",
                                op["status"].as_str().unwrap_or(""),
                                op["desired_local_rank"],
                                op["desired_global_rank"],
                                if op["tag_wild"] == json!(true) {
                                    "ANY".to_owned()
                                } else {
                                    op["desired_tag"].to_string()
                                },
                                op["desired_length"],
                                op["buffer"].as_u64().unwrap_or(0),
                                if op["status"] == json!("pending") {
                                    String::new()
                                } else {
                                    format!(
                                        "; actual peer {} tag {} length {}",
                                        op["actual_local_rank"],
                                        op["actual_tag"],
                                        op["actual_length"]
                                    )
                                },
                                op["extra_text"]
                                    .as_array()
                                    .into_iter()
                                    .flatten()
                                    .filter_map(|t| t.as_str())
                                    .collect::<Vec<_>>()
                                    .join("; ")
                            );
                        }
                    }
                    None => match (q.as_str(), q["messages"].as_array()) {
                        (Some(t), _) => s += &format!("    {class}: {t} from the DLL\n"),
                        (None, Some(msgs)) => {
                            let by = q["read_by"].as_str().unwrap_or("");
                            s += &if msgs.is_empty() {
                                format!(
                                    "    {class}: none (no information from the DLL; read by {by})\n"
                                )
                            } else {
                                format!(
                                    "    {class} ({}): no information from the DLL; read by {by}:\n",
                                    msgs.len()
                                )
                            };
                            for m in msgs {
                                s += &format!(
                                    "      peer {} (world {}) tag {} length {} [{}, seq {}{}, frag {:#x}]\n",
                                    m["peer"],
                                    m["peer_global"],
                                    m["tag"],
                                    m["length"],
                                    m["kind"].as_str().unwrap_or(""),
                                    m["sequence"],
                                    if m["out_of_sequence"] == json!(true) {
                                        ", out of sequence"
                                    } else {
                                        ""
                                    },
                                    m["frag"].as_u64().unwrap_or(0)
                                );
                            }
                        }
                        (None, None) if q.get("dll").is_some() => {
                            s += &format!(
                                "    {class}: no information from the DLL; {}\n",
                                q["error"].as_str().unwrap_or("")
                            );
                        }
                        (None, None) => s += &format!("    {class}: {}\n", q["error"]),
                    },
                }
            }
        }
        s
    }
}
