//! `mpir_types::pmix::abi` against the installed PMIx headers (Debian's libpmix-dev, or the
//! directory in `MPIR_PMIX_INCLUDE`): a C program generated from the Rust definitions' own
//! lists prints the size and alignment of every structure, the offset and size of every
//! field (and of every union member the Rust side declares) and the value of every constant
//! of the tables, and each is compared with the Rust side; then an answer built in C with
//! the header's structures (`tests/targets/pmix_answer.c`) is decoded from its bytes.
//!
//! Without the headers or `gcc` the tests say so and pass, except under CI (`CI` set),
//! where they fail.

use std::collections::BTreeMap;
use std::ffi::CStr;
use std::mem::{align_of, offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

use mpir_types::pmix::*;
use mpir_types::{Limits, MemoryImage};

/// The directory of `pmix.h`: `MPIR_PMIX_INCLUDE`, else Debian's libpmix-dev.
fn include_dir() -> PathBuf {
    std::env::var_os("MPIR_PMIX_INCLUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/x86_64-linux-gnu/pmix2/include"))
}

/// Compiles `src` against the PMIx headers with gcc and runs it; its standard output, or
/// `None` (after saying why) where the headers or the compiler are missing outside CI.
fn compile_and_run(name: &str, src: &Path) -> Option<String> {
    let include = include_dir();
    let missing = if !include.join("pmix.h").is_file() {
        Some(format!(
            "no pmix.h in {} (install libpmix-dev, or set MPIR_PMIX_INCLUDE)",
            include.display()
        ))
    } else if Command::new("gcc").arg("--version").output().is_err() {
        Some("gcc is not installed".to_owned())
    } else {
        None
    };
    if let Some(why) = missing {
        assert!(
            std::env::var_os("CI").is_none(),
            "{name}: under CI the PMIx headers must be checked: {why}"
        );
        println!("skip: {name}: {why}");
        return None;
    }
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let out = Command::new("gcc")
        .args(["-std=gnu11", "-Wall", "-Wextra", "-I"])
        .arg(&include)
        .arg("-o")
        .arg(&exe)
        .arg(src)
        .output()
        .expect("run gcc");
    assert!(
        out.status.success(),
        "gcc {} failed:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe)
        .output()
        .expect("run the compiled program");
    assert!(run.status.success(), "{} failed", exe.display());
    Some(String::from_utf8(run.stdout).expect("ASCII output"))
}

/// One structure field (or union member) as Rust lays it out.
struct FieldRow {
    ty: &'static str,
    /// The C path (`proc.rank`, `data.string`).
    path: String,
    offset: usize,
    size: usize,
}

fn field_size<S, F>(_: fn(&S) -> &F) -> usize {
    size_of::<F>()
}

fn member_size<T>(_: fn(T) -> pmix_value_data) -> usize {
    size_of::<T>()
}

/// The C spelling of a Rust field path (`type_` is C's `type`).
fn c_path(rust: &[&str]) -> String {
    rust.iter()
        .map(|f| f.strip_suffix('_').unwrap_or(f))
        .collect::<Vec<_>>()
        .join(".")
}

macro_rules! fields {
    ($( $ty:ident { $( $($f:ident).+ ),* $(,)? } )*) => {
        vec![ $( $( FieldRow {
            ty: stringify!($ty),
            path: c_path(&[$(stringify!($f)),+]),
            offset: offset_of!($ty, $($f).+),
            size: field_size(|s: &$ty| &s.$($f).+),
        }, )* )* ]
    };
}

macro_rules! members {
    ($( $m:ident ),* $(,)?) => {
        vec![ $( FieldRow {
            ty: "pmix_value_t",
            path: format!("data.{}", stringify!($m)),
            offset: offset_of!(pmix_value_t, data) + offset_of!(pmix_value_data, $m),
            size: member_size(|x| pmix_value_data { $m: x }),
        }, )* ]
    };
}

macro_rules! types {
    ($( $ty:ident ),* $(,)?) => {
        vec![ $( (stringify!($ty), size_of::<$ty>(), align_of::<$ty>()) ),* ]
    };
}

fn rust_fields() -> Vec<FieldRow> {
    let mut rows = fields! {
        pmix_proc_t { nspace, rank }
        pmix_proc_info_t {
            proc, proc.nspace, proc.rank, hostname, executable_name, pid, exit_code, state,
        }
        pmix_byte_object_t { bytes, size }
        pmix_envar_t { envar, value, separator }
        pmix_value_t { type_, data }
        pmix_info_t { key, flags, value, value.type_, value.data }
        pmix_data_array_t { type_, size, array }
        pmix_query_t { keys, qualifiers, nqual }
    };
    rows.extend(members!(
        flag, byte, string, size, pid, integer, int8, int16, int32, int64, uint, uint8, uint16,
        uint32, uint64, status, rank, nspace, proc, bo, state, pinfo, darray, ptr, envar,
    ));
    rows
}

fn rust_types() -> Vec<(&'static str, usize, usize)> {
    types!(
        pmix_proc_t,
        pmix_proc_info_t,
        pmix_byte_object_t,
        pmix_envar_t,
        pmix_value_t,
        pmix_info_t,
        pmix_data_array_t,
        pmix_query_t,
        pmix_status_t,
        pmix_rank_t,
        pmix_data_type_t,
        pmix_info_directives_t,
        pmix_proc_state_t,
        pid_t,
        pmix_nspace_t,
        pmix_key_t,
    )
}

/// Every integer constant of the tables, as `i128`.
fn rust_ints() -> Vec<(&'static str, i128)> {
    let mut out = Vec::new();
    out.extend(LENGTHS.iter().map(|&(n, v)| (n, v as i128)));
    out.extend(STATUSES.iter().map(|&(n, v)| (n, i128::from(v))));
    out.extend(DATA_TYPES.iter().map(|&(n, v)| (n, i128::from(v))));
    out.extend(RANKS.iter().map(|&(n, v)| (n, i128::from(v))));
    out.extend(PROC_STATES.iter().map(|&(n, v)| (n, i128::from(v))));
    out.extend(INFO_DIRECTIVES.iter().map(|&(n, v)| (n, i128::from(v))));
    out.extend(RANGES.iter().map(|&(n, v)| (n, i128::from(v))));
    out
}

/// The probe's source: one line of output per type, field and constant.
fn probe_source() -> String {
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <pmix.h>\n#include <pmix_tool.h>\n\
         int main(void) {\n",
    );
    for (ty, _, _) in rust_types() {
        c += &format!("  printf(\"type {ty} %zu %zu\\n\", sizeof({ty}), _Alignof({ty}));\n");
    }
    for f in rust_fields() {
        let (ty, path) = (f.ty, &f.path);
        c += &format!(
            "  printf(\"field {ty}:{path} %zu %zu\\n\", offsetof({ty}, {path}), \
             sizeof((({ty} *)0)->{path}));\n"
        );
    }
    for (name, _) in rust_ints() {
        c += &format!("  printf(\"int {name} %lld\\n\", (long long)({name}));\n");
    }
    for (name, _) in ATTRIBUTES {
        c += &format!("  printf(\"str {name} %s\\n\", {name});\n");
    }
    c += "  return 0;\n}\n";
    c
}

/// The probe's output: `kind name` (a field's name is `type:path`) to the rest of the line.
/// Built and run once for the tests that read it (two tests writing and running the same
/// program at once fail with `ETXTBSY`).
fn probe() -> Option<&'static BTreeMap<String, String>> {
    static PROBE: std::sync::OnceLock<Option<BTreeMap<String, String>>> =
        std::sync::OnceLock::new();
    PROBE.get_or_init(run_probe).as_ref()
}

fn run_probe() -> Option<BTreeMap<String, String>> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join("pmix_abi_probe.c");
    std::fs::write(&src, probe_source()).expect("write the probe");
    let out = compile_and_run("pmix_abi_probe", &src)?;
    let mut map = BTreeMap::new();
    for line in out.lines() {
        let mut words = line.splitn(3, ' ');
        let (kind, name, rest) = (words.next(), words.next(), words.next());
        let (Some(kind), Some(name), Some(rest)) = (kind, name, rest) else {
            panic!("probe line {line:?}");
        };
        map.insert(format!("{kind} {name}"), rest.to_owned());
    }
    Some(map)
}

/// PMIx Standard v4.2, "Data Structures and Types": every structure the tool side declares
/// has the header's size and alignment, every field its offset and size, every union member
/// of `pmix_value_t` its offset and size; every typedef its size.
#[test]
fn structures_match_the_header() {
    let Some(c) = probe() else { return };
    let mut checked = 0;
    for (ty, size, align) in rust_types() {
        let got = &c[&format!("type {ty}")];
        let want = format!("{size} {align}");
        assert_eq!(got, &want, "{ty}: sizeof and alignment, header vs Rust");
        checked += 1;
    }
    for f in rust_fields() {
        let got = &c[&format!("field {}:{}", f.ty, f.path)];
        assert_eq!(
            got,
            &format!("{} {}", f.offset, f.size),
            "{}.{}: offset and size, header vs Rust",
            f.ty,
            f.path
        );
        checked += 1;
    }
    println!("{checked} types and fields match the header");
}

/// Every constant of the tables (lengths, status and event codes, data types, reserved
/// ranks, process states, info directives) has the header's value; every attribute key is
/// the header's string.
#[test]
fn constants_match_the_header() {
    let Some(c) = probe() else { return };
    for (name, value) in rust_ints() {
        assert_eq!(c[&format!("int {name}")], value.to_string(), "{name}");
    }
    for &(name, key) in ATTRIBUTES {
        assert_eq!(
            c[&format!("str {name}")].as_bytes(),
            key.to_bytes(),
            "{name}"
        );
    }
    // The same name is never listed twice with different values.
    let mut names: Vec<&str> = rust_ints().iter().map(|r| r.0).collect();
    names.extend(ATTRIBUTES.iter().map(|r| r.0));
    let n = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), n, "a constant listed twice");
}

/// An answer the C compiler laid out with the header's structures (the results of a
/// PMIX_QUERY_NAMESPACES and a PMIX_QUERY_PROC_TABLE query, the proc table in reverse rank
/// order, hosts alternating, one executable string) decodes from its bytes: the results
/// found by key, the namespaces split, the table in array order and by rank.
#[test]
fn an_answer_built_with_the_header_decodes() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/targets/pmix_answer.c");
    let Some(out) = compile_and_run("pmix_answer", &src) else {
        return;
    };
    let mut lines = out.lines();
    let head: Vec<&str> = lines.next().expect("a header line").split(' ').collect();
    let arena = u64::from_str_radix(head[0], 16).unwrap();
    let used: usize = head[1].parse().unwrap();
    let results = arena + head[2].parse::<u64>().unwrap();
    let hex = lines.next().expect("the bytes");
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    assert_eq!(bytes.len(), used);
    let mut mem = MemoryImage::new();
    mem.map(arena, bytes).unwrap();
    let limits = Limits::default();

    let find = |key: &CStr| find_info_value(&mem, results, 2, key, &limits).unwrap();
    let ns_value = find(PMIX_QUERY_NAMESPACES).expect("the namespaces result");
    let table_value = find(PMIX_QUERY_PROC_TABLE).expect("the proc table result");
    assert_eq!(find(PMIX_QUERY_LOCAL_PROC_TABLE), None);

    let all = decode_namespaces(&mem, ns_value, None, &limits).unwrap();
    assert_eq!(all, ["prterun-node0-77@0", "prterun-node0-77@1"]);
    let jobs = decode_namespaces(&mem, ns_value, Some(b"prterun-node0-77@0"), &limits).unwrap();
    assert_eq!(jobs, ["prterun-node0-77@1"]);

    let infos = decode_proc_infos(&mem, table_value, &limits).unwrap();
    let ranks: Vec<u32> = infos.iter().map(|i| i.rank).collect();
    assert_eq!(ranks, [3, 2, 1, 0]);
    for info in &infos {
        assert_eq!(info.nspace, "prterun-node0-77@1");
        assert_eq!(info.exit_code, info.rank as i32);
        assert_eq!(info.state, PMIX_PROC_STATE_RUNNING);
    }
    let procs = decode_proc_table(&mem, table_value, None, &limits).unwrap();
    assert_eq!(procs.len(), 4);
    for (rank, p) in procs.iter().enumerate() {
        assert_eq!(p.pid, 4000 + rank as i64);
        assert_eq!(p.host_name, ["node0", "node1"][rank % 2]);
        assert_eq!(p.executable_name, "/home/me/a.out");
        assert!(
            p.executable_name
                .shares_storage_with(&procs[0].executable_name)
        );
    }
    // The table's namespace skipped: nothing left.
    let none = decode_proc_table(&mem, table_value, Some(b"prterun-node0-77@1"), &limits);
    assert!(none.unwrap().is_empty());
    // The wrong value for each decoder: typed errors.
    assert!(matches!(
        decode_proc_table(&mem, ns_value, None, &limits),
        Err(PmixDecodeError::WrongType {
            found: PMIX_STRING,
            expected: PMIX_DATA_ARRAY,
            ..
        })
    ));
    assert!(matches!(
        decode_namespaces(&mem, table_value, None, &limits),
        Err(PmixDecodeError::WrongType {
            found: PMIX_DATA_ARRAY,
            expected: PMIX_STRING,
            ..
        })
    ));
}
