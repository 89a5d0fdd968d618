//! Raw enumeration counts through mpit-sys equal those of a C program compiled with the same
//! `mpicc` and run in the same test, before and after `MPI_Init`.
//!
//! Both sides use the one ordering every implementation here survives: `MPI_T_init_thread`,
//! counts, `MPI_Init_thread`, counts, `MPI_T_finalize`, `MPI_Finalize`. One test per file:
//! `MPI_Init` may run once per process.

use std::ffi::c_int;
use std::path::PathBuf;
use std::process::Command;

use mpit_sys::*;

use mpit_test_support::cc;

/// The C reference, shared with `scripts/test`'s summary.
const C_PROGRAM: &str = include_str!("counts.c");

fn check(what: &str, rc: c_int) {
    assert_eq!(rc, MPI_SUCCESS, "{what} failed with {rc}");
}

fn rust_counts(when: &str) -> String {
    let (mut c, mut p, mut k, mut e, mut s) = (-1, -1, -1, -1, -1);
    // SAFETY: MPI_T is initialised; the out-pointers are valid.
    unsafe {
        check("MPI_T_cvar_get_num", MPI_T_cvar_get_num(&mut c));
        check("MPI_T_pvar_get_num", MPI_T_pvar_get_num(&mut p));
        check("MPI_T_category_get_num", MPI_T_category_get_num(&mut k));
        #[cfg(mpit_events)]
        {
            check("MPI_T_event_get_num", MPI_T_event_get_num(&mut e));
            check("MPI_T_source_get_num", MPI_T_source_get_num(&mut s));
        }
    }
    if !HAS_EVENTS {
        (e, s) = (-1, -1);
    }
    format!("{when} {c} {p} {k} {e} {s}")
}

/// Compiles the C program with the build's `mpicc` (or the C compiler and the probe's flags).
fn c_counts() -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join("mpit_counts.c");
    let exe = dir.join("mpit_counts_c");
    std::fs::write(&src, C_PROGRAM).unwrap();
    let mpicc = cc::mpicc_words(env!("MPIT_SYS_MPICC"));
    let mut cmd = if mpicc.is_empty() {
        let mut c = Command::new("cc");
        c.args(env!("MPIT_SYS_CFLAGS").split_whitespace());
        c.arg(&src)
            .args(env!("MPIT_SYS_LDFLAGS").split_whitespace());
        c
    } else {
        let mut c = Command::new(&mpicc[0]);
        c.args(&mpicc[1..]).arg(&src);
        c
    };
    let out = cmd.arg("-o").arg(&exe).output().expect("run mpicc");
    assert!(
        out.status.success(),
        "compiling the C reference failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().expect("run the C reference");
    assert!(
        run.status.success(),
        "the C reference failed ({}):\n{}{}",
        run.status,
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    String::from_utf8(run.stdout).unwrap()
}

/// What the loaded library calls itself (`MPI_Get_library_version`, callable at any time).
fn library_version() -> String {
    let mut buf = vec![0 as std::ffi::c_char; 1 << 14];
    let mut len = 0;
    // SAFETY: callable at any time; the buffer exceeds MPI_MAX_LIBRARY_VERSION_STRING.
    check("MPI_Get_library_version", unsafe {
        MPI_Get_library_version(buf.as_mut_ptr(), &mut len)
    });
    // SAFETY: NUL-terminated on success.
    unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// In the ABI mode: the library loaded at run time implements the ABI the declarations come
/// from (its `MPI_Abi_get_version`), and names itself.
#[cfg(mpit_abi)]
fn assert_runtime_library_matches_header() {
    let lib = mpit_sys::abi::library().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lib.abi_version.0, ABI_VERSION.0, "{lib:?}");
    let v = library_version();
    eprintln!(
        "ABI {}.{} library {}: {}",
        lib.abi_version.0,
        lib.abi_version.1,
        lib.path,
        v.lines().next().unwrap_or("")
    );
}

/// The library loaded at run time is the one whose header the build read (the Open MPI 5 wheel
/// shares `libmpi.so.40` with Debian's Open MPI 4.1: a wrong `LD_LIBRARY_PATH` loads the wrong one).
#[cfg(not(mpit_abi))]
fn assert_runtime_library_matches_header() {
    let v = library_version();
    assert!(
        v.contains(IMPLEMENTATION_VERSION),
        "header says {IMPLEMENTATION} {IMPLEMENTATION_VERSION}, the loaded library says {v:?}"
    );
    // The vendor is the library's own word: Intel MPI defines MPICH_VERSION ("3.4a2") too.
    let vendor = [
        ("Intel(R) MPI Library", "Intel MPI", "MPICH"),
        ("MPICH Version:", "MPICH", "MPICH"),
        ("Open MPI v", "Open MPI", "Open MPI"),
    ]
    .into_iter()
    .find(|(prefix, _, _)| v.starts_with(prefix));
    let (_, name, family) = vendor.unwrap_or_else(|| panic!("unrecognised library {v:?}"));
    assert_eq!(
        (IMPLEMENTATION, IMPLEMENTATION_FAMILY),
        (name, family),
        "the header's vendor macros name another library than the loaded one ({v:?})"
    );
    eprintln!(
        "identified: {IMPLEMENTATION} {IMPLEMENTATION_VERSION} ({IMPLEMENTATION_FAMILY} family)"
    );
}

#[test]
fn counts_equal_those_of_c() {
    assert_runtime_library_matches_header();
    // The C reference runs first, in its own process, so this process's MPI state is untouched.
    let c = c_counts();
    let mut provided = 0;
    // SAFETY: MPI_T may be initialised before MPI_Init.
    check("MPI_T_init_thread", unsafe {
        MPI_T_init_thread(MPI_THREAD_SINGLE, &mut provided)
    });
    let before = rust_counts("before");
    // SAFETY: the only MPI_Init of this process, null argc/argv as the standard allows.
    check("MPI_Init_thread", unsafe {
        MPI_Init_thread(
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            MPI_THREAD_SINGLE,
            &mut provided,
        )
    });
    let after = rust_counts("after");
    // SAFETY: balances MPI_T_init_thread, before MPI_Finalize.
    check("MPI_T_finalize", unsafe { MPI_T_finalize() });
    // SAFETY: MPI was initialised above.
    check("MPI_Finalize", unsafe { MPI_Finalize() });
    let rust = format!("{before}\n{after}\n");
    assert_eq!(rust, c, "Rust (left) and C (right) counts differ");
    // The standard lets counts grow after MPI_Init but never shrink (MPI-4.1 §16.3.6/7/9).
    let nums = |l: &str| -> Vec<i64> { l.split(' ').skip(1).map(|n| n.parse().unwrap()).collect() };
    for (b, a) in nums(&before).iter().zip(nums(&after)) {
        assert!(
            a >= *b,
            "a count shrank across MPI_Init: {before} -> {after}"
        );
    }
    eprintln!("{IMPLEMENTATION} {IMPLEMENTATION_VERSION}:\n{rust}");
}
