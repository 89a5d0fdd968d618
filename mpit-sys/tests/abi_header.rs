//! The one generator and check of the MPI-5 ABI declarations, `src/abi/generated.rs`: this
//! test generates them again from every installed `mpi_abi.h` (MPICH 5.0.2's and Intel MPI
//! 2021.18.1's, under `.mpi/`, or the paths in `MPIT_ABI_HEADERS`) and compares.
//! `MPIT_BLESS=1` writes the file from the first header (MPICH's; Intel's keeps pre-release
//! values of a few constants and fewer `const`s, see below).
//!
//! The header is read twice over, each part by what reads it best: bindgen (as `mpi-sys` reads
//! `mpi.h`) gives every function and every callback type, and a reader of the preprocessor
//! text gives what bindgen cannot evaluate, the constants (`((MPI_Comm)0x00000101)` is a cast),
//! with the handle types and `MPI_Status`.
//!
//! What is generated: the handle types, `MPI_Status`, the callback types, the constants the
//! safe layer and the tools use (every `MPI_T_` one and `selected_constant`'s), the `consts`
//! and `tables` modules in the shape the native build script gives them (the rows of
//! `mpit_core::constants::FAMILIES`), the functions the backend loads (every `MPI_T_` one and
//! `SELECTED_FUNCTIONS`, in `functions!`) and every other function of the header (in
//! `declarations!`, for tools that wrap them). Each function is given once, by its `MPI_` name:
//! the header declares its `PMPI_` twin with the same parameter types (checked here).
//!
//! The file is what one installed header generates exactly; every other header may differ
//! only where the calls stay the same: a `const` less on a pointer parameter, and functions
//! beyond the file's that return no error code (Intel's `MPI_File_c2f`/`_f2c` on `MPI_Fint`;
//! MPICH's header has neither and converts handles with `MPI_*_toint`/`_fromint`).
//! Constants the headers disagree on (`MPI_ERRORS_ABORT`/`MPI_ERRORS_RETURN`, `MPI_SEEK_*`,
//! `MPI_APPNUM`, ...) are left out on purpose;
//! [`the_headers_disagree_only_outside_the_selection`] lists them.
//!
//! Pure text work: no MPI is loaded, so it runs in every build mode (bindgen needs libclang).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

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

/// What the preprocessor text of a header says: its constants and plain types, by name.
#[derive(Debug, Default)]
struct Header {
    constants: BTreeMap<String, Value>,
    /// Handle typedefs: name → the opaque struct it points to.
    handles: BTreeMap<String, String>,
    /// `typedef enum X {...} X;`: the names.
    enum_types: BTreeSet<String>,
    /// Plain struct typedefs: name → fields (C text).
    structs: BTreeMap<String, Vec<String>>,
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

/// One function in Rust as bindgen reads it: the parameters (name, type) and the return type
/// (empty for none).
#[derive(Debug, PartialEq)]
struct Func {
    params: Vec<(String, String)>,
    ret: String,
    variadic: bool,
}

impl Func {
    /// `fn NAME(a: T, ...) -> R;`, as `functions!` and `declarations!` take it.
    fn declaration(&self, name: &str) -> String {
        let mut params: Vec<String> = self
            .params
            .iter()
            .map(|(n, t)| format!("{n}: {t}"))
            .collect();
        if self.variadic {
            params.push("...".to_owned());
        }
        let ret = if self.ret.is_empty() {
            String::new()
        } else {
            format!(" -> {}", self.ret)
        };
        format!("fn {name}({}){ret};", params.join(", "))
    }

    /// The types alone: what the twin of a function must repeat.
    fn types(&self) -> String {
        let params: Vec<&str> = self.params.iter().map(|(_, t)| t.as_str()).collect();
        format!(
            "({}{}) -> {}",
            params.join(", "),
            if self.variadic { ", ..." } else { "" },
            self.ret
        )
    }

    /// What a call depends on: the types with `*const` read as `*mut` (the same call).
    fn call(&self) -> String {
        self.types().replace("*const ", "*mut ")
    }
}

/// What bindgen reads in a header: every callback type and every function.
#[derive(Debug, Default)]
struct Declarations {
    /// Callback types (`Option<unsafe extern "C" fn(..)>`) and the other names of callback
    /// types (`MPI_Comm_errhandler_fn`): name → the Rust type.
    fn_types: BTreeMap<String, String>,
    /// Every function, by its `MPI_` name (its `PMPI_` twin has the same types).
    functions: BTreeMap<String, Func>,
}

/// A type of bindgen's output in this file's spelling: the last segment of a path
/// (`::std::os::raw::c_int` is `c_int`), `*const`/`*mut`, arrays, callbacks.
fn render(t: &syn::Type) -> String {
    match t {
        syn::Type::Ptr(p) => {
            let q = if p.mutability.is_some() {
                "mut"
            } else {
                "const"
            };
            format!("*{q} {}", render(&p.elem))
        }
        syn::Type::Path(p) if p.qself.is_none() => {
            let seg = p.path.segments.last().expect("a path has a segment");
            let name = seg.ident.to_string();
            match &seg.arguments {
                syn::PathArguments::None => name,
                syn::PathArguments::AngleBracketed(a) => {
                    let args: Vec<String> = a
                        .args
                        .iter()
                        .map(|g| match g {
                            syn::GenericArgument::Type(t) => render(t),
                            _ => panic!("{name}: a generic argument that is not a type"),
                        })
                        .collect();
                    format!("{name}<{}>", args.join(", "))
                }
                syn::PathArguments::Parenthesized(_) => panic!("{name}: a parenthesised path"),
            }
        }
        syn::Type::BareFn(f) => {
            assert!(f.unsafety.is_some(), "bindgen's callbacks are unsafe");
            let mut params: Vec<String> = f
                .inputs
                .iter()
                .map(|a| match &a.name {
                    Some((n, _)) => format!("{n}: {}", render(&a.ty)),
                    None => render(&a.ty),
                })
                .collect();
            if f.variadic.is_some() {
                params.push("...".to_owned());
            }
            let ret = match &f.output {
                syn::ReturnType::Default => String::new(),
                syn::ReturnType::Type(_, t) => format!(" -> {}", render(t)),
            };
            format!("unsafe extern \"C\" fn({}){ret}", params.join(", "))
        }
        syn::Type::Array(a) => match &a.len {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(n),
                ..
            }) => format!("[{}; {}]", render(&a.elem), n.base10_digits()),
            _ => panic!("an array whose length is not a literal"),
        },
        syn::Type::Paren(p) => render(&p.elem),
        _ => panic!("a type bindgen gives for no C declaration of mpi_abi.h"),
    }
}

/// bindgen on `header`: every `MPI_`/`PMPI_` function and every `MPI_` type, read with syn.
/// Panics unless each `PMPI_` function has its `MPI_` twin with the same types, and back.
fn declarations(header: &Path) -> Declarations {
    let text = bindgen::builder()
        .header(header.display().to_string())
        .allowlist_function("P?MPI_.*")
        .allowlist_type("MPI_.*")
        .layout_tests(false)
        .generate_comments(false)
        .formatter(bindgen::Formatter::None)
        .generate()
        .unwrap_or_else(|e| panic!("bindgen on {} (needs libclang): {e:?}", header.display()))
        .to_string();
    let file = syn::parse_file(&text).expect("parse bindgen's output");
    let mut d = Declarations::default();
    let mut twins: BTreeMap<String, Func> = BTreeMap::new();
    for item in &file.items {
        match item {
            syn::Item::Type(t) => {
                let ty = render(&t.ty);
                if ty.starts_with("Option<unsafe extern \"C\" fn(") {
                    d.fn_types.insert(t.ident.to_string(), ty);
                }
            }
            syn::Item::ForeignMod(m) => {
                for fi in &m.items {
                    let syn::ForeignItem::Fn(f) = fi else {
                        continue;
                    };
                    let name = f.sig.ident.to_string();
                    let params = f
                        .sig
                        .inputs
                        .iter()
                        .map(|a| match a {
                            syn::FnArg::Typed(p) => match &*p.pat {
                                syn::Pat::Ident(id) => (id.ident.to_string(), render(&p.ty)),
                                _ => panic!("{name}: a parameter without a name"),
                            },
                            syn::FnArg::Receiver(_) => panic!("{name}: a receiver"),
                        })
                        .collect();
                    let ret = match &f.sig.output {
                        syn::ReturnType::Default => String::new(),
                        syn::ReturnType::Type(_, t) => render(t),
                    };
                    let func = Func {
                        params,
                        ret,
                        variadic: f.sig.variadic.is_some(),
                    };
                    match name.strip_prefix('P') {
                        Some(base) if base.starts_with("MPI_") => {
                            twins.insert(base.to_owned(), func)
                        }
                        _ => d.functions.insert(name, func),
                    };
                }
            }
            _ => {}
        }
    }
    // The other names of callback types (`typedef MPI_Comm_errhandler_function
    // MPI_Comm_errhandler_fn;`).
    for item in &file.items {
        if let syn::Item::Type(t) = item {
            let ty = render(&t.ty);
            if d.fn_types.contains_key(&ty) {
                d.fn_types.insert(t.ident.to_string(), ty);
            }
        }
    }
    let names: BTreeSet<&String> = d.functions.keys().collect();
    let twin_names: BTreeSet<&String> = twins.keys().collect();
    assert_eq!(
        names.symmetric_difference(&twin_names).collect::<Vec<_>>(),
        Vec::<&&String>::new(),
        "{}: functions without their PMPI_ twin, or PMPI_ functions without their MPI_ one",
        header.display()
    );
    for (name, f) in &d.functions {
        assert_eq!(
            f.types(),
            twins[name].types(),
            "{}: {name} and P{name} differ",
            header.display()
        );
    }
    d
}

/// One header, read both ways.
struct Abi {
    header: Header,
    decls: Declarations,
}

fn read(path: &Path) -> Abi {
    let text = std::fs::read_to_string(path).expect("read the header");
    Abi {
        header: parse(&text),
        decls: declarations(path),
    }
}

/// Every installed header, read once (libclang is loaded once, in one thread).
fn abis() -> &'static [(PathBuf, Abi)] {
    static ABIS: OnceLock<Vec<(PathBuf, Abi)>> = OnceLock::new();
    ABIS.get_or_init(|| {
        headers()
            .into_iter()
            .map(|p| {
                let a = read(&p);
                (p, a)
            })
            .collect()
    })
}

/// A C type of a struct field in Rust (the header's structs have `int` fields only).
fn field_type(c: &str) -> String {
    match c.trim() {
        "int" => "c_int".to_owned(),
        other => panic!("no Rust type for the field type {other:?}"),
    }
}

fn generate(abi: &Abi) -> String {
    let (h, d) = (&abi.header, &abi.decls);
    let mut o = String::from(
        "// @generated by mpit-sys/tests/abi_header.rs from the MPI-5 ABI header `mpi_abi.h`:\n\
         // do not edit; `MPIT_BLESS=1 cargo test -p mpit-sys --test integration abi_header::` rewrites it.\n\n",
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
            let t = field_type(ty);
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
    for (name, ty) in &d.fn_types {
        let doc = match d.fn_types.get(ty) {
            Some(_) => format!("another name of `{ty}`"),
            None => "a callback MPI calls; `None` is a null pointer".to_owned(),
        };
        let _ = writeln!(o, "/// `{name}`: {doc}.\npub type {name} = {ty};");
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
                let t = match t {
                    "void" => "c_void",
                    "int" => "c_int",
                    s => s,
                };
                (format!("*mut {t}"), true)
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
    // Functions: every MPI_T one and the selected others, for the loader's table; then the
    // rest of the header.
    let loaded = |name: &str| name.starts_with("MPI_T_") || SELECTED_FUNCTIONS.contains(&name);
    o.push_str("functions! {\n");
    for (name, f) in d.functions.iter().filter(|(n, _)| loaded(n)) {
        let _ = writeln!(o, "    {}", f.declaration(name));
    }
    o.push_str(
        "}\n\n// Every other function of the header, for tools that define or forward them (nothing is\n\
         // compiled for them here). Each stands for its `PMPI_` twin too (the same types).\n\
         declarations! {\n",
    );
    for (name, f) in d.functions.iter().filter(|(n, _)| !loaded(n)) {
        let _ = writeln!(o, "    {}", f.declaration(name));
    }
    o.push_str("}\n");
    o
}

/// The part of a generated file before the functions.
fn preamble(text: &str) -> &str {
    text.split_once("\nfunctions! {").map_or(text, |(p, _)| p)
}

/// The names of MPI types (`MPI_...`) a Rust type mentions.
fn type_names(ty: &str) -> impl Iterator<Item = &str> {
    ty.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("MPI_"))
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

/// The first line where `a` and `b` differ (1-based), with both lines.
fn first_difference(a: &str, b: &str) -> (usize, Option<String>, Option<String>) {
    let first = a
        .lines()
        .zip(b.lines())
        .position(|(x, y)| x != y)
        .unwrap_or(a.lines().count().min(b.lines().count()));
    (
        first + 1,
        a.lines().nth(first).map(str::to_owned),
        b.lines().nth(first).map(str::to_owned),
    )
}

/// The checked-in declarations are what one installed header generates, and every other
/// installed header makes the same calls: the same functions with the same types (a `const`
/// aside), and beyond them only functions that return no error code.
#[test]
fn generated_declarations_match_every_installed_abi_header() {
    let abis = abis();
    if abis.is_empty() {
        println!("no mpi_abi.h installed (.mpi/*-wheel or MPIT_ABI_HEADERS): nothing to compare");
        return;
    }
    let texts: Vec<String> = abis.iter().map(|(_, a)| generate(a)).collect();
    if std::env::var_os("MPIT_BLESS").is_some() {
        std::fs::write(generated_path(), &texts[0]).expect("write generated.rs");
    }
    let checked_in = std::fs::read_to_string(generated_path()).unwrap_or_default();
    let Some(k) = texts.iter().position(|t| *t == checked_in) else {
        let (line, got, have) = first_difference(&texts[0], &checked_in);
        panic!(
            "src/abi/generated.rs differs from what {} generates, first at line {line}:\n  \
             generated:  {got:?}\n  checked in: {have:?}\n(MPIT_BLESS=1 regenerates it)",
            abis[0].0.display()
        );
    };
    let (source, decls) = (&abis[k].0, &abis[k].1.decls);
    println!(
        "src/abi/generated.rs is what {} generates",
        source.display()
    );
    // Every MPI type a declaration names is declared (a tool's wrappers name them).
    let declared: BTreeSet<String> = checked_in
        .lines()
        .filter_map(|l| l.strip_prefix("pub type "))
        .filter_map(|l| l.split_once(' ').map(|(n, _)| n.to_owned()))
        .chain(abis[k].1.header.structs.keys().cloned())
        .collect();
    let named = decls
        .functions
        .values()
        .flat_map(|f| {
            f.params
                .iter()
                .map(|(_, t)| t.as_str())
                .chain([f.ret.as_str()])
        })
        .chain(decls.fn_types.values().map(String::as_str));
    for ty in named {
        for n in type_names(ty) {
            assert!(
                declared.contains(n),
                "{n} (in {ty}) is named but not declared"
            );
        }
    }
    for (i, (path, abi)) in abis.iter().enumerate() {
        if i == k {
            continue;
        }
        let (line, got, have) = first_difference(preamble(&texts[i]), preamble(&checked_in));
        assert_eq!(
            preamble(&texts[i]),
            preamble(&checked_in),
            "{} generates other types or constants than src/abi/generated.rs, first at line \
             {line}:\n  generated:  {got:?}\n  checked in: {have:?}",
            path.display()
        );
        let mut otherwise = Vec::new();
        for (name, f) in &decls.functions {
            let g = abi.decls.functions.get(name);
            let g = g.unwrap_or_else(|| panic!("{} lacks {name}", path.display()));
            assert_eq!(
                f.call(),
                g.call(),
                "{name}: {} makes another call",
                path.display()
            );
            if f != g {
                otherwise.push(name.as_str());
            }
        }
        let mut beyond = Vec::new();
        for (name, g) in &abi.decls.functions {
            if decls.functions.contains_key(name) {
                continue;
            }
            assert!(
                g.ret != "c_int",
                "{name} of {} returns an error code but is not in src/abi/generated.rs",
                path.display()
            );
            beyond.push(name.as_str());
        }
        println!(
            "{}: the same calls; other `const`s or parameter names in {otherwise:?}; beyond \
             the declarations, {beyond:?} (no error code)",
            path.display()
        );
    }
}

/// The generator sees the whole MPI_T section: the 51 `MPI_T_` functions both libraries
/// export (MPI-4.1 §16.3 and MPI-5.0's), and every family row of MPI-4.1's MPI_T.
#[test]
fn the_mpi_t_section_is_complete() {
    for (path, abi) in abis() {
        let t: Vec<_> = abi
            .decls
            .functions
            .keys()
            .filter(|n| n.starts_with("MPI_T_"))
            .collect();
        assert_eq!(t.len(), 51, "{}: {t:?}", path.display());
        for f in SELECTED_FUNCTIONS {
            assert!(
                abi.decls.functions.contains_key(*f),
                "{}: no {f}",
                path.display()
            );
        }
        for f in FAMILIES.iter().filter(|f| f.repr == Repr::Int) {
            for r in f.rows {
                assert!(
                    matches!(abi.header.constants.get(r.c_name), Some(Value::Int(_))),
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
    let abis = abis();
    if abis.len() < 2 {
        println!("fewer than two ABI headers installed: nothing to compare");
        return;
    }
    let (a, b) = (&abis[0].1.header, &abis[1].1.header);
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
