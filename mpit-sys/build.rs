//! Build script of `mpit-sys`.
//!
//! 1. Finds MPI the way `mpi-sys` does (`build-probe-mpi`: `MPICC`, then `mpicc`, then
//!    `pkg-config` honouring `MPI_PKG_CONFIG`), so both crates bind the same library.
//! 2. Reads the installed `mpi.h` for the MPI_T constants by compiling and running a small C
//!    program (constants are enum items or macros whose names and values differ between
//!    implementations, so they must come from the header, not from bindgen's mangled names).
//!    Which constants: the rows of `mpit_core::constants::FAMILIES`, the one table of each
//!    family; the values land in named constants and, per family, in `tables::<FAMILY>` in
//!    the table's order.
//! 3. Probes which optional parts of MPI_T the header declares (MPI-4 events, newer error
//!    classes, `MPI_T_BIND_MPI_SESSION`) and sets cfgs for them.
//! 4. Compiles a C shim holding the handles that are casts or link-time objects in C
//!    (datatypes, null handles, `MPI_T_PVAR_ALL_HANDLES`).

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use mpit_core::constants::{FAMILIES, Gate, Repr};

/// Not reached in practice: `mpit-sys-probe`'s build script (a dependency, so it runs first)
/// stops the build with what to install before this one runs.
const NO_MPI: &str = "\
mpit-sys: no MPI library was found (see mpit-sys-probe's message for what to install, or set \
MPICC=/path/to/mpicc or MPI_PKG_CONFIG=/path/to/x.pc).";

/// Version macros of `mpi.h` that tell implementations and their versions apart, and that
/// bindgen turns into constants of `mpi_sys` (checked on the six MPIs of the project).
const HEADER_FINGERPRINT: [&str; 7] = [
    "MPI_VERSION",
    "MPI_SUBVERSION",
    "MPICH_NUMVERSION",
    "I_MPI_NUMVERSION",
    "OMPI_MAJOR_VERSION",
    "OMPI_MINOR_VERSION",
    "OMPI_RELEASE_VERSION",
];

/// A compile-time check that `mpi-sys` was built from the header read here. Its build script
/// does not rerun when `MPICC` or `MPI_PKG_CONFIG` change, so a target directory reused for
/// another MPI would otherwise link two libraries. Each macro is looked up in `mpi_sys`
/// through a glob import in an inner block, which shadows the outer block's "absent" value
/// only where bindgen emitted the constant.
fn same_header_check(fingerprint: &[(String, String)], header: &str, found_by: &str) -> String {
    let mut s = String::from(
        "/// `mpi-sys` must bind the `mpi.h` this crate read (see `same_header_check` in the \
         build script).\n#[allow(dead_code, clippy::unnecessary_cast)]\nconst _: () = {\n",
    );
    for (name, _) in fingerprint {
        let _ = writeln!(s, "    const {name}: u64 = u64::MAX;");
    }
    let names: Vec<&str> = fingerprint.iter().map(|(n, _)| n.as_str()).collect();
    let _ = writeln!(
        s,
        "    let theirs: [u64; {n}] = {{\n        #[allow(unused_imports, clippy::wildcard_imports)]\n        \
         use mpi_sys::*;\n        [{casts}]\n    }};\n    let ours: [u64; {n}] = [{ours}];\n    \
         let mut i = 0;\n    while i < {n} {{\n        assert!(theirs[i] == ours[i], {msg:?});\n        \
         i += 1;\n    }}\n}};",
        n = names.len(),
        casts = names
            .iter()
            .map(|n| format!("{n} as u64"))
            .collect::<Vec<_>>()
            .join(", "),
        ours = fingerprint
            .iter()
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        msg = stale_message(header, found_by)
    );
    s
}

/// What both header checks say: the stale `mpi-sys` and the two ways out.
fn stale_message(header: &str, found_by: &str) -> String {
    format!(
        "mpi-sys was built from another mpi.h than the one mpit-sys reads now ({header}, \
         found by {found_by}). mpi-sys's build script does not rerun when MPICC or \
         MPI_PKG_CONFIG change: run `cargo clean -p mpi-sys`, or keep one target directory \
         per MPI (CARGO_TARGET_DIR)."
    )
}

/// The same check before anything compiles: `mpi-sys`'s bindings (`functions_and_types.rs` in
/// its `OUT_DIR`, a sibling of ours) read for the fingerprint's constants. Switching between
/// two implementations otherwise shows dozens of unresolved imports before the const check's
/// message. `Err` only when every `mpi-sys` build beside ours was made from another header (a
/// leftover of another feature set is not a verdict); nothing found leaves it to the const check.
fn early_header_check(fingerprint: &[(String, String)]) -> Result<(), String> {
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default());
    let Some(build) = out.parent().and_then(Path::parent) else {
        return Ok(());
    };
    let Ok(entries) = fs::read_dir(build) else {
        return Ok(());
    };
    let show = |v: u64| match v {
        u64::MAX => "undefined".to_owned(),
        v => v.to_string(),
    };
    let mut first_difference = None;
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with("mpi-sys-") {
            continue;
        }
        let Ok(text) = fs::read_to_string(entry.path().join("out/functions_and_types.rs")) else {
            continue;
        };
        let mut differ = Vec::new();
        for (m, ours) in fingerprint {
            let theirs = text
                .lines()
                .find_map(|l| l.strip_prefix(&format!("pub const {m}: ")))
                .and_then(|rest| rest.split_once(" = "))
                .and_then(|(_, v)| v.trim_end_matches(';').parse::<u64>().ok())
                .unwrap_or(u64::MAX);
            let ours = ours.parse::<u64>().unwrap_or(u64::MAX);
            if theirs != ours {
                differ.push(format!("{m} {} there, {} here", show(theirs), show(ours)));
            }
        }
        if differ.is_empty() {
            return Ok(());
        }
        first_difference.get_or_insert_with(|| differ.join(", "));
    }
    first_difference.map_or(Ok(()), Err)
}

/// The launcher of the MPI whose `mpicc` the build used: beside it, `mpiexec.X` for
/// `mpicc.X` (Debian's alternatives), else `mpiexec`, `mpirun`; found through pkg-config,
/// `../bin` of a library directory. Tests start ranks with it, never with whatever `mpiexec`
/// comes first on `PATH`.
fn launcher_beside(mpicc: Option<&str>, lib_paths: &[PathBuf]) -> Option<PathBuf> {
    let mut dirs_names: Vec<(PathBuf, Vec<String>)> = Vec::new();
    let plain = || vec!["mpiexec".to_owned(), "mpirun".to_owned()];
    if let Some(cc) = mpicc.filter(|c| !c.is_empty()) {
        let path = Path::new(cc);
        let resolved = if path.components().count() > 1 {
            Some(path.to_path_buf())
        } else {
            env::var_os("PATH").and_then(|p| {
                env::split_paths(&p)
                    .map(|d| d.join(cc))
                    .find(|c| c.is_file())
            })
        };
        if let Some(cc) = resolved {
            let file = cc.file_name().and_then(|f| f.to_str()).unwrap_or("mpicc");
            let mut names = Vec::new();
            if let Some(suffix) = file.strip_prefix("mpicc")
                && !suffix.is_empty()
            {
                names.push(format!("mpiexec{suffix}"));
                names.push(format!("mpirun{suffix}"));
            }
            names.extend(plain());
            dirs_names.push((cc.parent().unwrap_or(Path::new(".")).to_path_buf(), names));
        }
    }
    for lib in lib_paths {
        if let Some(prefix) = lib.parent() {
            dirs_names.push((prefix.join("bin"), plain()));
        }
    }
    dirs_names
        .iter()
        .flat_map(|(dir, names)| names.iter().map(move |n| dir.join(n)))
        .find(|p| p.is_file())
}

/// C lines printing an `Option<c_int>` constant: `Some` when the preprocessor line `cond` holds.
fn optional(name: &str, cond: &str) -> String {
    format!(
        "{cond}\n  OPT({name});\n#else\n  printf(\"/// `{name}`: not declared by the installed \
         mpi.h.\\npub const {name}: Option<c_int> = None;\\n\");\n#endif"
    )
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(mpit_abi)");
    // The ABI backend reads no header and probes no MPI: its declarations are checked in
    // (src/abi/generated.rs), and the ABI header declares the event API and session binding.
    if env::var_os("CARGO_CFG_MPIT_ABI").is_some() {
        println!("cargo:rerun-if-changed=build.rs");
        println!("cargo::rustc-check-cfg=cfg(mpit_events)");
        println!("cargo::rustc-check-cfg=cfg(mpit_bind_session)");
        println!("cargo:rustc-cfg=mpit_events");
        println!("cargo:rustc-cfg=mpit_bind_session");
        println!("cargo::metadata=events=true");
        println!("cargo::metadata=bind_session=true");
        println!("cargo::metadata=abi=true");
        // The one declaration of every function of the ABI header, for dependents' build
        // scripts (`DEP_MPIT_SHIM_ABI_DECLARATIONS`): a file of this package.
        let manifest = env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
        println!(
            "cargo::metadata=abi_declarations={}",
            Path::new(&manifest).join("src/abi/generated.rs").display()
        );
        println!("cargo:rustc-env=MPIT_SYS_MPICC=");
        println!("cargo:rustc-env=MPIT_SYS_CFLAGS=");
        println!("cargo:rustc-env=MPIT_SYS_LDFLAGS=");
        return;
    }
    for var in ["MPICC", "MPI_PKG_CONFIG", "PKG_CONFIG_PATH", "CC", "CFLAGS"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    // Without an absolute MPICC the wrapper (and the launcher beside it) is looked up in PATH:
    // another PATH may mean another MPI, so rerun and let the header check below say whether
    // mpi-sys is stale. An absolute MPICC keeps PATH out of it (no rebuilds when it changes).
    if !env::var_os("MPICC").is_some_and(|c| Path::new(&c).is_absolute()) {
        println!("cargo:rerun-if-env-changed=PATH");
    }
    println!("cargo:rerun-if-changed=build.rs");
    for cfg in [
        "mpit_events",
        "mpit_bind_session",
        "mpich",
        "intel_mpi",
        "open_mpi",
    ] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }

    let lib = match build_probe_mpi::probe() {
        Ok(lib) => lib,
        Err(errs) => {
            let mut reasons = String::new();
            for (i, e) in errs.iter().enumerate() {
                let _ = writeln!(reasons, "  probe {}: {}", i + 1, e.to_string().trim());
            }
            panic!("\n{NO_MPI}\nWhat was tried:\n{reasons}");
        }
    };
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));

    // The compiler used for probes and the shim: the probe's mpicc when there is one (so the
    // header is exactly the one mpi-sys sees), otherwise the C compiler with the include paths.
    let mut base = cc::Build::new();
    base.cargo_warnings(false);
    if let Some(mpicc) = &lib.mpicc {
        base.compiler(mpicc);
    }
    for inc in &lib.include_paths {
        base.include(inc);
    }
    let compiler = base.get_compiler();
    let includes: Vec<String> = lib
        .include_paths
        .iter()
        .map(|p| format!("-I{}", p.display()))
        .collect();

    let compiles = |name: &str, body: &str| -> bool {
        let src = out.join(format!("probe_{name}.c"));
        fs::write(&src, format!("#include <mpi.h>\n{body}\n")).expect("write probe");
        let status = compiler
            .to_command()
            .args(&includes)
            .arg("-fsyntax-only")
            .arg("-Werror=implicit-function-declaration")
            .arg(&src)
            .output()
            .expect("run the C compiler");
        status.status.success()
    };

    let events = compiles(
        "events",
        "int f(void) { MPI_T_event_registration r; MPI_T_event_instance i; \
         MPI_T_cb_safety s = MPI_T_CB_REQUIRE_NONE; MPI_T_source_order o = MPI_T_SOURCE_ORDERED; \
         (void)r; (void)i; (void)s; (void)o; \
         return MPI_T_event_handle_alloc(0, 0, MPI_INFO_NULL, &r) + MPI_T_source_get_num(0); }",
    );
    let bind_session = compiles("bind_session", "int x = MPI_T_BIND_MPI_SESSION;");
    let category_events = events
        && compiles(
            "category_events",
            "int f(void) { int n; return MPI_T_category_get_num_events(0, &n); }",
        );
    // Datatypes differ in availability only for the newest ones; probe each so a missing one is
    // NULL in the shim instead of a build failure.
    let datatypes: Vec<(&str, bool)> = FAMILIES
        .iter()
        .filter(|f| f.repr == Repr::DatatypeHandle)
        .flat_map(|f| f.rows.iter().map(|r| r.c_name))
        .map(|dt| {
            let ok = compiles(
                &format!("dt_{dt}"),
                &format!("MPI_Datatype f(void) {{ return {dt}; }}"),
            );
            (dt, ok)
        })
        .collect();

    if events {
        println!("cargo:rustc-cfg=mpit_events");
    }
    if bind_session {
        println!("cargo:rustc-cfg=mpit_bind_session");
    }

    // --- constants: compile and run a generator ---------------------------------------------
    let mut gen_c = String::from(
        "#include <mpi.h>\n#include <stdio.h>\n#include <stddef.h>\n\
         #define C(n) printf(\"/// `%s` of the installed mpi.h.\\npub const %s: c_int = %d;\\n\", #n, #n, (int)(n))\n\
         #define OPT(n) printf(\"/// `%s` of the installed mpi.h (`None`: the header does not declare it).\\npub const %s: Option<c_int> = Some(%d);\\n\", #n, #n, (int)(n))\n\
         #define SZ(t) printf(\"/// `sizeof(%s)` in C.\\npub const SIZEOF_%s: usize = %d;\\n\", #t, #t, (int)sizeof(t))\n\
         int main(void) {\n",
    );
    let group = |out_c: &mut String, names: &[&str]| {
        for n in names {
            let _ = writeln!(out_c, "  C({n});");
        }
    };
    // The families' tables: a row added after MPI-3.0 (`since`) is probed and may be missing;
    // a family gated on the event API is read only from a header that has it.
    let mut tables = String::from(
        "// Generated by mpit-sys/build.rs from mpit_core::constants::FAMILIES and mpi.h.\n",
    );
    for family in FAMILIES.iter().filter(|f| f.repr == Repr::Int) {
        let gated_out = family.gate == Gate::Events && !events;
        let mut values = Vec::new();
        for row in family.rows {
            let n = row.c_name;
            if gated_out {
                values.push("None".to_owned());
            } else if row.since.is_some() {
                let present = compiles(&format!("c_{n}"), &format!("int x = {n};"));
                let cond = if present { "#if 1" } else { "#if 0" };
                let _ = writeln!(gen_c, "{}", optional(n, cond));
                values.push(n.to_owned());
            } else {
                let _ = writeln!(gen_c, "  C({n});");
                values.push(format!("Some({n})"));
            }
        }
        let _ = writeln!(
            tables,
            "/// The installed values of the `{}` family, in the order of `mpit_core::{}::ALL` \
             (`None`: not declared by this header).\n\
             pub const {}: [Option<c_int>; {}] = [{}];",
            family.kind,
            family.rust_name,
            family.table_name,
            values.len(),
            values.join(", ")
        );
    }
    let int_families: Vec<_> = FAMILIES.iter().filter(|f| f.repr == Repr::Int).collect();
    let _ = writeln!(
        tables,
        "/// Every `int` family: the name of its table here, and the table.\n\
         pub const ALL: [(&str, &[Option<c_int>]); {}] = [{}];",
        int_families.len(),
        int_families
            .iter()
            .map(|f| format!("({:?}, &{})", f.table_name, f.table_name))
            .collect::<Vec<_>>()
            .join(", ")
    );
    group(
        &mut gen_c,
        &[
            "MPI_SUCCESS",
            "MPI_ERR_LASTCODE",
            "MPI_MAX_INFO_KEY",
            "MPI_MAX_INFO_VAL",
            "MPI_VERSION",
            "MPI_SUBVERSION",
        ],
    );
    for t in [
        "int",
        "long",
        "MPI_Count",
        "MPI_Aint",
        "MPI_Offset",
        "MPI_Datatype",
        "MPI_T_enum",
    ] {
        let _ = writeln!(gen_c, "  SZ({t});");
    }
    // MPI_IN_PLACE, a pointer macro that mpi-sys does not bind (MPICH's (void *) -1, Open
    // MPI's (void *) 1): tools that read collectives' buffer arguments compare with it.
    gen_c.push_str(
        "  printf(\"/// `MPI_IN_PLACE` as an address: a collective's buffer argument that says the \
         data is in place (MPI-4.1, Collective Communication).\\npub const MPI_IN_PLACE_ADDRESS: usize = \
         %llu;\\n\", (unsigned long long)(size_t)(MPI_IN_PLACE));\n",
    );
    // The header's version macros, which mpi-sys's bindings carry too: `@fp NAME VALUE`
    // (absent: u64::MAX), compared at compile time in `consts.rs`.
    for m in HEADER_FINGERPRINT {
        let _ = writeln!(
            gen_c,
            "#ifdef {m}\n  printf(\"@fp {m} %llu\\n\", (unsigned long long)({m}));\n#else\n  \
             printf(\"@fp {m} 18446744073709551615\\n\");\n#endif"
        );
    }
    // The vendor macros, most specific first: Intel MPI defines MPICH_VERSION too ("3.4a2").
    gen_c.push_str(
        "#if defined(I_MPI_VERSION)\n\
         printf(\"@cfg mpich\\n@cfg intel_mpi\\n@impl Intel MPI\\n@family MPICH\\n@version %s\\n\", I_MPI_VERSION);\n\
         #elif defined(MPICH_VERSION)\n\
         printf(\"@cfg mpich\\n@impl MPICH\\n@family MPICH\\n@version %s\\n\", MPICH_VERSION);\n\
         #elif defined(OPEN_MPI)\n\
         printf(\"@cfg open_mpi\\n@impl Open MPI\\n@family Open MPI\\n@version %d.%d.%d\\n\", \
           OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION);\n\
         #else\n\
         printf(\"@impl unknown\\n@family unknown\\n@version unknown\\n\");\n\
         #endif\n  return 0;\n}\n",
    );
    let gen_src = out.join("mpit_consts_gen.c");
    let gen_bin = out.join("mpit_consts_gen");
    fs::write(&gen_src, gen_c).expect("write generator");
    // No MPI function is called, so the generator links without libmpi and runs anywhere the
    // build runs (a cross build would need the constants generated on the target instead).
    let o = compiler
        .to_command()
        .args(&includes)
        .arg(&gen_src)
        .arg("-o")
        .arg(&gen_bin)
        .output()
        .expect("run the C compiler");
    assert!(
        o.status.success(),
        "mpit-sys: compiling the constant generator against mpi.h failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let run = Command::new(&gen_bin).output().expect("run generator");
    assert!(run.status.success(), "mpit-sys: constant generator failed");
    let mut consts = String::from("// Generated by mpit-sys/build.rs from the installed mpi.h.\n");
    let mut fingerprint = Vec::new();
    let mut header = String::new();
    for line in String::from_utf8(run.stdout).expect("ascii").lines() {
        if let Some(fp) = line.strip_prefix("@fp ") {
            let (name, value) = fp.split_once(' ').expect("@fp NAME VALUE");
            fingerprint.push((name.to_owned(), value.to_owned()));
        } else if let Some(cfg) = line.strip_prefix("@cfg ") {
            println!("cargo:rustc-cfg={cfg}");
        } else if let Some(name) = line.strip_prefix("@impl ") {
            header.push_str(name);
            let _ = writeln!(
                consts,
                "/// The MPI implementation whose header was read, from its vendor macros \
                 (`MPICH`, `Intel MPI`, `Open MPI`).\n\
                 pub const IMPLEMENTATION: &str = {name:?};"
            );
        } else if let Some(name) = line.strip_prefix("@family ") {
            let _ = writeln!(
                consts,
                "/// The code base the implementation derives from (`MPICH` for Intel MPI too).\n\
                 pub const IMPLEMENTATION_FAMILY: &str = {name:?};"
            );
        } else if let Some(v) = line.strip_prefix("@version ") {
            let _ = write!(header, " {v}");
            let _ = writeln!(
                consts,
                "/// The implementation's own version (`I_MPI_VERSION`, `MPICH_VERSION`, \
                 `OMPI_*_VERSION`).\n\
                 pub const IMPLEMENTATION_VERSION: &str = {v:?};"
            );
        } else {
            consts.push_str(line);
            consts.push('\n');
        }
    }
    let found_by = lib.mpicc.as_deref().unwrap_or("pkg-config");
    if let Err(differ) = early_header_check(&fingerprint) {
        eprintln!("{}", stale_message(&header, found_by));
        eprintln!("(mpi.h's version macros: {differ})");
        std::process::exit(1);
    }
    consts.push_str(&same_header_check(&fingerprint, &header, found_by));
    let launcher = launcher_beside(lib.mpicc.as_deref(), &lib.lib_paths)
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let facts: [(&str, &str, String); 6] = [
        ("HAS_EVENTS", "bool", format!("{events}")),
        ("HAS_CATEGORY_EVENTS", "bool", format!("{category_events}")),
        ("HAS_BIND_SESSION", "bool", format!("{bind_session}")),
        (
            "BUILD_MPICC",
            "&str",
            format!("{:?}", lib.mpicc.clone().unwrap_or_default()),
        ),
        ("BUILD_MPIEXEC", "&str", format!("{launcher:?}")),
        (
            "BUILD_MPI_LIBRARY_VERSION",
            "&str",
            format!("{:?}", lib.version),
        ),
    ];
    let docs = [
        "Whether the header declares the MPI-4 event API (`cfg(mpit_events)`).",
        "Whether the header declares `MPI_T_category_get_events`.",
        "Whether the header declares `MPI_T_BIND_MPI_SESSION` (`cfg(mpit_bind_session)`).",
        "The `mpicc` the build found (empty when found through pkg-config).",
        "The launcher installed beside the build's `mpicc` (or in `../bin` of its library \
         directory), an absolute path; empty when none was found (`mpit_safe::launcher` prefers \
         `$MPIEXEC`).",
        "The library version `build-probe-mpi` reported at build time.",
    ];
    for ((name, ty, value), doc) in facts.iter().zip(docs) {
        let _ = writeln!(consts, "/// {doc}\npub const {name}: {ty} = {value};");
    }
    // Dependents' build scripts see these as DEP_MPIT_SHIM_* and can re-emit the cfgs.
    println!("cargo::metadata=events={events}");
    println!("cargo::metadata=bind_session={bind_session}");
    let mpicc = lib.mpicc.clone().unwrap_or_default();
    fs::write(out.join("consts.rs"), consts).expect("write consts.rs");
    fs::write(out.join("tables.rs"), tables).expect("write tables.rs");
    // Let the crate's tests compile C programs with the same wrapper.
    println!("cargo:rustc-env=MPIT_SYS_MPICC={mpicc}");
    println!("cargo:rustc-env=MPIT_SYS_CFLAGS={}", includes.join(" "));
    let libs: Vec<String> = lib
        .lib_paths
        .iter()
        .map(|p| format!("-L{}", p.display()))
        .chain(lib.libs.iter().map(|l| format!("-l{l}")))
        .collect();
    println!("cargo:rustc-env=MPIT_SYS_LDFLAGS={}", libs.join(" "));

    // --- the shim ------------------------------------------------------------------------------
    let mut shim = String::from(
        "/* Generated by mpit-sys/build.rs: handles that are casts or link-time objects in C. */\n\
         #include <stddef.h>\n#include <mpi.h>\n\n",
    );
    for (dt, ok) in &datatypes {
        let value = if *ok { *dt } else { "MPI_DATATYPE_NULL" };
        let _ = writeln!(shim, "const MPI_Datatype MPIT_SYS_{dt} = {value};");
    }
    shim.push_str(
        "const MPI_Datatype MPIT_SYS_MPI_DATATYPE_NULL = MPI_DATATYPE_NULL;\n\
         const MPI_T_enum MPIT_SYS_MPI_T_ENUM_NULL = MPI_T_ENUM_NULL;\n\
         const MPI_T_cvar_handle MPIT_SYS_MPI_T_CVAR_HANDLE_NULL = MPI_T_CVAR_HANDLE_NULL;\n\
         const MPI_T_pvar_handle MPIT_SYS_MPI_T_PVAR_HANDLE_NULL = MPI_T_PVAR_HANDLE_NULL;\n\
         const MPI_T_pvar_session MPIT_SYS_MPI_T_PVAR_SESSION_NULL = MPI_T_PVAR_SESSION_NULL;\n\
         /* MPICH declares MPI_T_PVAR_ALL_HANDLES as an extern object, not a constant expression. */\n\
         MPI_T_pvar_handle mpit_sys_pvar_all_handles(void) { return MPI_T_PVAR_ALL_HANDLES; }\n\
         const MPI_Info MPIT_SYS_MPI_INFO_NULL = MPI_INFO_NULL;\n",
    );
    let shim_src = out.join("mpit_shim.c");
    fs::write(&shim_src, shim).expect("write shim");
    base.file(&shim_src).compile("mpit_shim");

    // Rust declarations of the shim's objects, one per datatype.
    let mut decls = String::from("// Generated by mpit-sys/build.rs.\nunsafe extern \"C\" {\n");
    let mut table = String::new();
    for (dt, ok) in &datatypes {
        let note = if *ok {
            ""
        } else {
            " Not declared by this MPI's header: `MPI_DATATYPE_NULL`."
        };
        let _ = writeln!(
            decls,
            "    /// The datatype handle `{dt}` of the installed MPI.{note}\n    \
             #[link_name = \"MPIT_SYS_{dt}\"]\n    pub safe static {dt}: MPI_Datatype;"
        );
        let _ = writeln!(table, "        ({dt:?}, {dt}, {ok}),");
    }
    decls.push_str("}\n");
    let _ = write!(
        decls,
        "/// Every basic datatype handle the shim exposes: C name, handle, and whether this MPI's\n\
         /// header declares it (a missing one is `MPI_DATATYPE_NULL`).\n\
         pub fn datatypes() -> [(&'static str, MPI_Datatype, bool); {}] {{\n    [\n{table}    ]\n}}\n",
        datatypes.len()
    );
    fs::write(out.join("shim.rs"), decls).expect("write shim.rs");
}
