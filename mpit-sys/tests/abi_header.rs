//! The ABI backend's declarations (`src/abi/generated.rs`) are exactly what each installed
//! MPI-5 `mpi_abi.h` says: this test generates them again from every header it finds (MPICH
//! 5.0.2's and Intel MPI 2021.18.1's, under `.mpi/`, or the paths in `MPIT_ABI_HEADERS`) and
//! compares. `MPIT_BLESS=1` writes the file from the first header instead.
//!
//! What is generated: the MPI_T section of the header (every `MPI_T_` type, constant and
//! function), the handle types and the few MPI functions and constants the safe layer and the
//! tools call around MPI_T (`SELECTED_FUNCTIONS`, `selected_constant`), and the `consts` and
//! `tables` modules in the shape the native build script gives them (the rows of
//! `mpit_core::constants::FAMILIES`). Constants the two shipped headers disagree on
//! (`MPI_ERRORS_ABORT`/`MPI_ERRORS_RETURN`, `MPI_SEEK_*`, `MPI_APPNUM`, ...) are left out on
//! purpose; [`the_headers_disagree_only_outside_the_selection`] lists them.
//!
//! Pure text work: no MPI is loaded, so it runs in every build mode.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use mpit_core::constants::{FAMILIES, Repr};

/// The MPI functions (beyond `MPI_T_*`) the ABI backend declares: MPI_T's surroundings
/// (initialisation, the library's name, info objects for event hints) and what the tools and
/// tests use to make traffic and reduce results.
const SELECTED_FUNCTIONS: &[&str] = &[
    "MPI_Abi_get_version",
    "MPI_Abort",
    "MPI_Allgather",
    "MPI_Allreduce",
    "MPI_Barrier",
    "MPI_Bcast",
    "MPI_Comm_dup",
    "MPI_Comm_free",
    "MPI_Comm_rank",
    "MPI_Comm_size",
    "MPI_Comm_split",
    "MPI_Error_class",
    "MPI_Error_string",
    "MPI_Finalize",
    "MPI_Finalized",
    "MPI_Gather",
    "MPI_Gatherv",
    "MPI_Get_count",
    "MPI_Get_library_version",
    "MPI_Get_processor_name",
    "MPI_Get_version",
    "MPI_Info_create",
    "MPI_Info_delete",
    "MPI_Info_dup",
    "MPI_Info_free",
    "MPI_Info_get",
    "MPI_Info_get_nkeys",
    "MPI_Info_get_nthkey",
    "MPI_Info_get_string",
    "MPI_Info_get_valuelen",
    "MPI_Info_set",
    "MPI_Init",
    "MPI_Init_thread",
    "MPI_Initialized",
    "MPI_Iprobe",
    "MPI_Irecv",
    "MPI_Isend",
    "MPI_Probe",
    "MPI_Query_thread",
    "MPI_Recv",
    "MPI_Reduce",
    "MPI_Send",
    "MPI_Sendrecv",
    "MPI_Type_contiguous",
    "MPI_Type_commit",
    "MPI_Type_free",
    "MPI_Type_size",
    "MPI_Wait",
    "MPI_Waitall",
    "MPI_Win_create",
    "MPI_Win_free",
    "MPI_Wtime",
];

/// The MPI constants (beyond `MPI_T_*`) the backend declares; both shipped headers agree on
/// each (the test below checks that they agree on everything selected).
fn selected_constant(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "MPI_VERSION",
        "MPI_SUBVERSION",
        "MPI_ABI_VERSION",
        "MPI_ABI_SUBVERSION",
        "MPI_SUCCESS",
        "MPI_ANY_SOURCE",
        "MPI_ANY_TAG",
        "MPI_PROC_NULL",
        "MPI_UNDEFINED",
        "MPI_COMM_WORLD",
        "MPI_COMM_SELF",
        "MPI_STATUS_IGNORE",
        "MPI_STATUSES_IGNORE",
        "MPI_IN_PLACE",
    ];
    EXACT.contains(&name)
        || name.starts_with("MPI_T_")
        || name.starts_with("MPI_ERR_")
        || name.starts_with("MPI_THREAD_")
        || name.starts_with("MPI_MAX_")
        || (name.starts_with("MPI_") && name.ends_with("_NULL"))
}

/// A constant of the header: an `int`, or a handle (a cast of an integer to a handle type).
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Int(i64),
    /// Type (`MPI_Comm`, or `MPI_Status*`) and integer.
    Handle(String, u64),
}

/// One parsed header: its constants, types and prototypes, by name.
#[derive(Debug, Default)]
struct Header {
    constants: BTreeMap<String, Value>,
    /// Handle typedefs: name → the opaque struct it points to.
    handles: BTreeMap<String, String>,
    /// `typedef enum X {...} X;`: the names.
    enum_types: BTreeSet<String>,
    /// Function typedefs: name → parameters (C text).
    fn_types: BTreeMap<String, String>,
    /// Plain struct typedefs: name → fields (C text).
    structs: BTreeMap<String, Vec<String>>,
    /// Prototypes: name → (return type, parameters).
    functions: BTreeMap<String, (String, String)>,
    /// `#define X Y` whose value is not a constant (the ABI's integer type choices).
    macros: BTreeMap<String, String>,
}

fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        rest = rest[i + 2..].split_once("*/").map(|(_, r)| r).unwrap_or("");
    }
    out.push_str(rest);
    out.lines()
        .map(|l| l.split_once("//").map(|(a, _)| a).unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

fn parse_int(s: &str) -> Option<i64> {
    let s = s
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim();
    if s.contains('+') {
        return s.split('+').map(parse_int).sum();
    }
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r.trim()),
        None => (false, s),
    };
    let v = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => i64::from_str_radix(h, 16).ok()?,
        None => s.parse().ok()?,
    };
    Some(if neg { -v } else { v })
}

/// `((MPI_Comm)0x00000101)` → `("MPI_Comm", 0x101)`.
fn parse_cast(s: &str) -> Option<(String, u64)> {
    let inner = s.trim().strip_prefix("((")?.strip_suffix(')')?;
    let (ty, lit) = inner.split_once(')')?;
    let v = parse_int(lit)?;
    Some((ty.trim().replace(' ', ""), u64::try_from(v).ok()?))
}

fn parse(text: &str) -> Header {
    let text = strip_comments(text);
    let mut h = Header::default();
    // Statements: preprocessor lines alone, everything else up to `;` (enum bodies included).
    let mut stmts: Vec<String> = Vec::new();
    let mut cur = String::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('#') {
            stmts.push(t.to_owned());
            continue;
        }
        cur.push(' ');
        cur.push_str(t);
        while let Some(i) = cur.find(';') {
            stmts.push(cur[..i].trim().to_owned());
            cur = cur[i + 1..].to_owned();
        }
        // `extern "C" {` and `}` of the C++ guard, and similar, carry no `;`.
        if cur.trim() == "}" || cur.trim().ends_with("extern \"C\" {") {
            cur.clear();
        }
    }
    for s in stmts {
        let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some(d) = s.strip_prefix("#define ") {
            let (name, value) = d.split_once(' ').unwrap_or((d, ""));
            if let Some((ty, v)) = parse_cast(value) {
                h.constants.insert(name.to_owned(), Value::Handle(ty, v));
            } else if let Some(v) = parse_int(value) {
                h.constants.insert(name.to_owned(), Value::Int(v));
            } else if !value.is_empty() {
                h.macros.insert(name.to_owned(), value.to_owned());
            }
        } else if s.starts_with("enum {")
            || s.starts_with("enum{")
            || s.starts_with("typedef enum ")
        {
            let (Some(open), Some(close)) = (s.find('{'), s.rfind('}')) else {
                continue;
            };
            for item in s[open + 1..close].split(',') {
                if let Some((n, v)) = item.split_once('=')
                    && let Some(v) = parse_int(v)
                {
                    h.constants.insert(n.trim().to_owned(), Value::Int(v));
                }
            }
            if s.starts_with("typedef") {
                h.enum_types.insert(s[close + 1..].trim().to_owned());
            }
        } else if let Some(t) = s.strip_prefix("typedef struct ") {
            // A struct with a body (MPI_Status) was split at its fields' `;`: it is read
            // whole from the text below.
            if t.starts_with('{') {
                continue;
            }
            if let Some((target, name)) = t.split_once('*') {
                h.handles
                    .insert(name.trim().to_owned(), target.trim().to_owned());
            }
        } else if let Some(t) = s.strip_prefix("typedef void (") {
            let (name, rest) = t.split_once(')').expect("function typedef");
            let params = rest.trim().trim_start_matches('(').trim_end_matches(')');
            h.fn_types
                .insert(name.trim().to_owned(), params.trim().to_owned());
        } else if s.starts_with("int MPI_") || s.starts_with("double MPI_") {
            // (`int MPI_SOURCE` of MPI_Status's body, split at its `;`, is no prototype.)
            let (ret, rest) = s.split_once(' ').expect("a space");
            let Some((name, params)) = rest.split_once('(') else {
                continue;
            };
            h.functions.insert(
                name.trim().to_owned(),
                (ret.to_owned(), params.trim_end_matches(')').to_owned()),
            );
        }
    }
    // Struct bodies were split at `;` above: re-read MPI_Status from the text.
    if let Some(i) = text.find("typedef struct {") {
        let body = &text[i + "typedef struct {".len()..];
        let (fields, rest) = body.split_once('}').expect("struct");
        let name = rest.split(';').next().unwrap_or("").trim().to_owned();
        h.structs.insert(
            name,
            fields
                .split(';')
                .map(|f| f.split_whitespace().collect::<Vec<_>>().join(" "))
                .filter(|f| !f.is_empty())
                .collect(),
        );
    }
    h
}

/// A C type (without the parameter name) in Rust, as bindgen spells it (`mpi-sys`'s): a
/// pointer to a function typedef is the typedef's `Option<fn>`.
fn rust_type(h: &Header, c: &str) -> String {
    let c = c.trim();
    let konst = c.starts_with("const ");
    let c = c.trim_start_matches("const ").trim();
    let stars = c.matches('*').count();
    let base = c.trim_end_matches(['*', ' ']).trim();
    let base_rust = match base {
        "int" => "c_int".to_owned(),
        "char" => "c_char".to_owned(),
        "void" => "c_void".to_owned(),
        "double" => "f64".to_owned(),
        other if other.starts_with("MPI") => other.to_owned(),
        other => panic!("no Rust type for C type {other:?}"),
    };
    let mut stars = stars;
    // A parameter of function type is a pointer to one (C adjusts it), as is a pointer to a
    // function typedef: both are the typedef's `Option<fn>`.
    if h.fn_types.contains_key(base) && stars > 0 {
        stars -= 1;
    }
    let mut t = base_rust;
    for i in 0..stars {
        let q = if konst && i == 0 { "*const" } else { "*mut" };
        t = format!("{q} {t}");
    }
    t
}

/// `const int recvcounts[]` → (`recvcounts`, `*const c_int`).
fn rust_param(h: &Header, p: &str) -> (String, String) {
    let p = p.trim();
    // An array parameter is a pointer.
    let (p, array) = match p.strip_suffix("[]") {
        Some(q) => (q.trim_end(), true),
        None => (p, false),
    };
    let split = p
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .expect("a parameter has a type");
    let (ty, name) = p.split_at(split + 1);
    let ty = if array {
        format!("{ty}*")
    } else {
        ty.to_owned()
    };
    let name = match name {
        "type" | "ref" | "fn" | "in" | "match" => format!("{name}_"),
        n => n.to_owned(),
    };
    (name, rust_type(h, &ty))
}

fn rust_params(h: &Header, params: &str) -> String {
    if params.trim() == "void" || params.trim().is_empty() {
        return String::new();
    }
    params
        .split(',')
        .map(|p| {
            let (n, t) = rust_param(h, p);
            format!("{n}: {t}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn generate(h: &Header) -> String {
    let mut o = String::from(
        "// @generated by mpit-sys/tests/abi_header.rs from the MPI-5 ABI header `mpi_abi.h`:\n\
         // do not edit; `MPIT_BLESS=1 cargo test -p mpit-sys --test abi_header` rewrites it.\n\n",
    );
    let abi = |n: &str| match h.constants.get(n) {
        Some(Value::Int(v)) => *v,
        _ => panic!("the header lacks {n}"),
    };
    // The integer types: the header makes them configurable (MPI_ABI_Aint, ...), with these
    // defaults, which both shipped libraries use.
    for (m, want) in [
        ("MPI_ABI_Aint", "intptr_t"),
        ("MPI_ABI_Offset", "int64_t"),
        ("MPI_ABI_Count", "MPI_Offset"),
    ] {
        assert_eq!(h.macros.get(m).map(String::as_str), Some(want), "{m}");
    }
    let _ = writeln!(
        o,
        "/// The MPI ABI version this file was generated from (`MPI_ABI_VERSION`.`MPI_ABI_SUBVERSION`).\n\
         pub const ABI_VERSION: (c_int, c_int) = ({}, {});\n",
        abi("MPI_ABI_VERSION"),
        abi("MPI_ABI_SUBVERSION")
    );
    o.push_str(
        "/// `MPI_Aint`: `intptr_t`.\npub type MPI_Aint = isize;\n\
         /// `MPI_Offset`: `int64_t`.\npub type MPI_Offset = i64;\n\
         /// `MPI_Count`: `MPI_Offset`.\npub type MPI_Count = i64;\n\n",
    );
    // Handle types: pointers to opaque structs.
    let mut opaque: Vec<&str> = Vec::new();
    for (name, target) in &h.handles {
        let target = target.trim_start_matches("struct ").trim();
        opaque.push(target);
        let _ = writeln!(
            o,
            "/// `{name}`: a handle, a pointer to `struct {target}` (whose layout only MPI knows).\n\
             pub type {name} = *mut {target};"
        );
    }
    let _ = writeln!(o, "opaque! {{ {} }}\n", opaque.join(", "));
    for (name, fields) in &h.structs {
        let _ = writeln!(
            o,
            "/// `{name}` of the ABI: its public fields and its reserved ones.\n\
             #[repr(C)]\n#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]\npub struct {name} {{"
        );
        for f in fields {
            let (ty, field) = f.rsplit_once(' ').expect("field");
            let (field, n) = match field.split_once('[') {
                Some((f, n)) => (f, Some(n.trim_end_matches(']'))),
                None => (field, None),
            };
            let t = rust_type(h, ty);
            let t = n.map_or(t.clone(), |n| format!("[{t}; {n}]"));
            let _ = writeln!(o, "    /// `{field}`.\n    pub {field}: {t},");
        }
        o.push_str("}\n\n");
    }
    for name in &h.enum_types {
        let _ = writeln!(
            o,
            "/// `{name}`: a C enum (its values are the `consts` of the same prefix).\n\
             pub type {name} = c_uint;"
        );
    }
    for (name, params) in &h.fn_types {
        if !name.starts_with("MPI_T_") {
            continue;
        }
        let _ = writeln!(
            o,
            "/// `{name}`: a callback MPI calls; `None` is a null pointer.\n\
             pub type {name} = Option<unsafe extern \"C\" fn({})>;",
            rust_params(h, params)
        );
    }
    o.push('\n');
    // Handle constants (the named objects and null handles).
    for (name, v) in &h.constants {
        let Value::Handle(ty, bits) = v else { continue };
        if !selected_constant(name) {
            continue;
        }
        let (ty, ptr) = match ty.strip_suffix('*') {
            // MPI_STATUS_IGNORE, MPI_IN_PLACE...; not MPI_ARGVS_NULL's `char***`.
            Some(t)
                if !t.contains('*') && (t == "void" || t == "int" || h.structs.contains_key(t)) =>
            {
                (rust_type(h, &format!("{t} *")), true)
            }
            Some(_) => continue,
            None => (ty.clone(), false),
        };
        if !ptr && !h.handles.contains_key(&ty) {
            continue; // a function-pointer constant (MPI_*_NULL_FN ...)
        }
        let value = if *bits == 0 {
            "core::ptr::null_mut()".to_owned()
        } else {
            format!("{bits:#x} as {ty}")
        };
        let _ = writeln!(
            o,
            "/// `{name}` of the ABI.\npub const {name}: {ty} = {value};"
        );
    }
    // Datatypes: the rows of the DatatypeHandle families, as the native shim names them.
    let mut dts = String::new();
    let mut n_dts = 0;
    for f in FAMILIES.iter().filter(|f| f.repr == Repr::DatatypeHandle) {
        for r in f.rows {
            let n = r.c_name;
            let (value, declared) = match h.constants.get(n) {
                Some(Value::Handle(ty, bits)) if ty == "MPI_Datatype" => {
                    (format!("{bits:#x} as MPI_Datatype"), true)
                }
                _ => ("MPI_DATATYPE_NULL".to_owned(), false),
            };
            let note = if declared {
                ""
            } else {
                " Not in the ABI header: `MPI_DATATYPE_NULL`."
            };
            let _ = writeln!(
                o,
                "/// The datatype handle `{n}` of the ABI.{note}\npub const {n}: MPI_Datatype = {value};"
            );
            let _ = writeln!(dts, "        ({n:?}, {n}, {declared}),");
            n_dts += 1;
        }
    }
    let _ = writeln!(
        o,
        "/// Every basic datatype handle: C name, handle, and whether the ABI header declares it\n\
         /// (a missing one is `MPI_DATATYPE_NULL`).\n\
         pub fn datatypes() -> [(&'static str, MPI_Datatype, bool); {n_dts}] {{\n    [\n{dts}    ]\n}}\n"
    );
    // consts: the int constants, FAMILIES' rows in the native shape (`Option` for rows that
    // came after MPI-3.0), then the other selected ones.
    o.push_str(
        "/// The `int` constants of the ABI under their C names, in the shape the native build\n\
         /// gives them (`Option` where an older native header may lack the constant).\n\
         pub mod consts {\n    use core::ffi::c_int;\n    pub use crate::abi::facts::*;\n",
    );
    let mut done = BTreeSet::new();
    let mut tables = String::new();
    let mut int_families = Vec::new();
    for f in FAMILIES.iter().filter(|f| f.repr == Repr::Int) {
        let mut values = Vec::new();
        for r in f.rows {
            let n = r.c_name;
            let v = match h.constants.get(n) {
                Some(Value::Int(v)) => Some(*v),
                _ => None,
            };
            match (v, r.since) {
                (Some(v), None) => {
                    let _ = writeln!(
                        o,
                        "    /// `{n}` of the ABI.\n    pub const {n}: c_int = {v};"
                    );
                    values.push(format!("Some({n})"));
                }
                (Some(v), Some(_)) => {
                    let _ = writeln!(
                        o,
                        "    /// `{n}` of the ABI (an `Option`: older native headers may lack it).\n    \
                         pub const {n}: Option<c_int> = Some({v});"
                    );
                    values.push(n.to_owned());
                }
                (None, Some(_)) => {
                    let _ = writeln!(
                        o,
                        "    /// `{n}`: not in the ABI header.\n    pub const {n}: Option<c_int> = None;"
                    );
                    values.push(n.to_owned());
                }
                (None, None) => panic!("the ABI header lacks {n}, which MPI-3.0 has"),
            }
            done.insert(n);
        }
        let _ = writeln!(
            tables,
            "    /// The ABI's values of the `{}` family, in the order of `mpit_core::{}::ALL`.\n    \
             pub const {}: [Option<c_int>; {}] = [{}];",
            f.kind,
            f.rust_name,
            f.table_name,
            values.len(),
            values.join(", ")
        );
        int_families.push(f.table_name);
    }
    for (name, v) in &h.constants {
        let Value::Int(v) = v else { continue };
        if done.contains(name.as_str()) || !selected_constant(name) {
            continue;
        }
        let _ = writeln!(
            o,
            "    /// `{name}` of the ABI.\n    pub const {name}: c_int = {v};"
        );
    }
    o.push_str("}\n\n");
    let _ = writeln!(
        o,
        "/// The ABI's values of each family of MPI_T constants, one array per family in the order\n\
         /// of its table in `mpit_core::constants` (`None`: not in the ABI header).\n\
         pub mod tables {{\n    use super::consts::*;\n    use core::ffi::c_int;\n{tables}    \
         /// Every `int` family: the name of its table here, and the table.\n    \
         pub const ALL: [(&str, &[Option<c_int>]); {}] = [{}];\n}}\n",
        int_families.len(),
        int_families
            .iter()
            .map(|t| format!("({t:?}, &{t})"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    // Functions: every MPI_T one and the selected others, for the loader's table.
    o.push_str("functions! {\n");
    for (name, (ret, params)) in &h.functions {
        if !(name.starts_with("MPI_T_") || SELECTED_FUNCTIONS.contains(&name.as_str())) {
            continue;
        }
        let ret = if ret == "int" { "c_int" } else { "f64" };
        let _ = writeln!(o, "    fn {name}({}) -> {ret};", rust_params(h, params));
    }
    o.push_str("}\n");
    o
}

/// The ABI headers to check: `MPIT_ABI_HEADERS` (`:`-separated), else the project's wheels.
fn headers() -> Vec<PathBuf> {
    if let Ok(list) = std::env::var("MPIT_ABI_HEADERS") {
        return list
            .split(':')
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect();
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let found: Vec<PathBuf> = ["mpich-wheel", "intel-wheel"]
        .iter()
        .map(|w| root.join(".mpi").join(w).join("include/mpi_abi.h"))
        .filter(|p| p.is_file())
        .collect();
    if std::env::var_os("CI").is_some() {
        assert_eq!(
            found.len(),
            2,
            "under CI both ABI headers (MPICH 5.0.2's and Intel MPI's, installed by scripts/test) \
             must be checked; found {found:?}"
        );
    }
    found
}

fn generated_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/abi/generated.rs")
}

/// The checked-in declarations equal what every installed ABI header generates.
#[test]
fn generated_declarations_match_every_installed_abi_header() {
    let hs = headers();
    if hs.is_empty() {
        println!("no mpi_abi.h installed (.mpi/*-wheel or MPIT_ABI_HEADERS): nothing to compare");
        return;
    }
    let mut checked_in = std::fs::read_to_string(generated_path()).unwrap_or_default();
    for (i, path) in hs.iter().enumerate() {
        let text = std::fs::read_to_string(path).expect("read the header");
        let got = generate(&parse(&text));
        if i == 0 && std::env::var_os("MPIT_BLESS").is_some() {
            std::fs::write(generated_path(), &got).expect("write generated.rs");
            checked_in = got;
            continue;
        }
        if got != checked_in {
            let first = got
                .lines()
                .zip(checked_in.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(got.lines().count().min(checked_in.lines().count()));
            panic!(
                "src/abi/generated.rs differs from what {} generates, first at line {}:\n  \
                 generated:  {:?}\n  checked in: {:?}\n(MPIT_BLESS=1 regenerates it)",
                path.display(),
                first + 1,
                got.lines().nth(first),
                checked_in.lines().nth(first)
            );
        }
    }
}

/// The generator sees the whole MPI_T section: the 51 `MPI_T_` functions both libraries
/// export (MPI-4.1 §16.3 and MPI-5.0's), and every family row of MPI-4.1's MPI_T.
#[test]
fn the_mpi_t_section_is_complete() {
    for path in headers() {
        let h = parse(&std::fs::read_to_string(&path).expect("read"));
        let t: Vec<_> = h
            .functions
            .keys()
            .filter(|n| n.starts_with("MPI_T_"))
            .collect();
        assert_eq!(t.len(), 51, "{}: {t:?}", path.display());
        for f in SELECTED_FUNCTIONS {
            assert!(h.functions.contains_key(*f), "{}: no {f}", path.display());
        }
        for f in FAMILIES.iter().filter(|f| f.repr == Repr::Int) {
            for r in f.rows {
                assert!(
                    matches!(h.constants.get(r.c_name), Some(Value::Int(_))),
                    "{}: no {}",
                    path.display(),
                    r.c_name
                );
            }
        }
    }
}

/// The shipped headers disagree (Intel MPI 2021.18.1 keeps pre-release values), but never on
/// what the backend declares: each disagreement is outside the selection, and is printed.
#[test]
fn the_headers_disagree_only_outside_the_selection() {
    let hs = headers();
    if hs.len() < 2 {
        println!("fewer than two ABI headers installed: nothing to compare");
        return;
    }
    let a = parse(&std::fs::read_to_string(&hs[0]).expect("read"));
    let b = parse(&std::fs::read_to_string(&hs[1]).expect("read"));
    let mut differ = Vec::new();
    for (n, v) in &a.constants {
        if let Some(w) = b.constants.get(n)
            && v != w
        {
            assert!(!selected_constant(n), "{n}: {v:?} against {w:?}");
            differ.push(format!("{n}: {v:?} / {w:?}"));
        }
    }
    println!("constants the headers disagree on (left out): {differ:#?}");
}
