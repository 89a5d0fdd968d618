//! Every `sizeof`, field offset and enum value of mqd-types' `repr(C)` types against the real
//! header (`ompi/debuggers/msgq_interface.h` of Debian's libopenmpi-dev), compiled with the C
//! compiler at test time.

use std::mem::{offset_of, size_of};
use std::path::Path;
use std::process::Command;

use crate::common;
use mqd_types::types::*;

fn rust_values() -> Vec<(String, i64)> {
    let mut v: Vec<(String, i64)> = Vec::new();
    macro_rules! size {
        ($c:literal, $t:ty) => {
            v.push((format!("sizeof({})", $c), size_of::<$t>() as i64));
        };
    }
    macro_rules! off {
        ($c:literal, $t:ty, $($f:tt)+) => {
            v.push((format!("offsetof({}, {})", $c, stringify!($($f)+)), offset_of!($t, $($f)+) as i64));
        };
    }
    macro_rules! val {
        ($c:literal, $e:expr) => {
            v.push(($c.to_owned(), $e as i64));
        };
    }
    size!("mqs_taddr_t", TAddr);
    size!("mqs_tword_t", TWord);
    val!("(long)((mqs_taddr_t)-1 > 0)", 1); // unsigned, as TAddr
    val!("(long)((mqs_tword_t)-1 < 0)", (-1 as TWord) < 0);
    size!("mqs_target_type_sizes", TargetTypeSizes);
    off!("mqs_target_type_sizes", TargetTypeSizes, short_size);
    off!("mqs_target_type_sizes", TargetTypeSizes, int_size);
    off!("mqs_target_type_sizes", TargetTypeSizes, long_size);
    off!("mqs_target_type_sizes", TargetTypeSizes, long_long_size);
    off!("mqs_target_type_sizes", TargetTypeSizes, pointer_size);
    off!("mqs_target_type_sizes", TargetTypeSizes, bool_size);
    off!("mqs_target_type_sizes", TargetTypeSizes, size_t_size);
    size!("mqs_communicator", Communicator);
    off!("mqs_communicator", Communicator, unique_id);
    off!("mqs_communicator", Communicator, local_rank);
    off!("mqs_communicator", Communicator, size);
    off!("mqs_communicator", Communicator, name);
    val!("sizeof(((mqs_communicator *)0)->name)", 64);
    size!("mqs_pending_operation", PendingOperation);
    off!("mqs_pending_operation", PendingOperation, status);
    off!(
        "mqs_pending_operation",
        PendingOperation,
        desired_local_rank
    );
    off!(
        "mqs_pending_operation",
        PendingOperation,
        desired_global_rank
    );
    off!("mqs_pending_operation", PendingOperation, tag_wild);
    off!("mqs_pending_operation", PendingOperation, desired_tag);
    off!("mqs_pending_operation", PendingOperation, desired_length);
    off!("mqs_pending_operation", PendingOperation, system_buffer);
    off!("mqs_pending_operation", PendingOperation, buffer);
    off!("mqs_pending_operation", PendingOperation, actual_local_rank);
    off!(
        "mqs_pending_operation",
        PendingOperation,
        actual_global_rank
    );
    off!("mqs_pending_operation", PendingOperation, actual_tag);
    off!("mqs_pending_operation", PendingOperation, actual_length);
    off!("mqs_pending_operation", PendingOperation, extra_text);
    val!(
        "sizeof(((mqs_pending_operation *)0)->extra_text)",
        size_of::<[[std::ffi::c_char; 64]; 5]>()
    );
    size!("mqs_basic_callbacks", BasicCallbacks);
    off!("mqs_basic_callbacks", BasicCallbacks, mqs_malloc_fp);
    off!("mqs_basic_callbacks", BasicCallbacks, mqs_free_fp);
    off!("mqs_basic_callbacks", BasicCallbacks, mqs_dprints_fp);
    off!("mqs_basic_callbacks", BasicCallbacks, mqs_errorstring_fp);
    off!("mqs_basic_callbacks", BasicCallbacks, mqs_put_image_info_fp);
    off!("mqs_basic_callbacks", BasicCallbacks, mqs_get_image_info_fp);
    off!(
        "mqs_basic_callbacks",
        BasicCallbacks,
        mqs_put_process_info_fp
    );
    off!(
        "mqs_basic_callbacks",
        BasicCallbacks,
        mqs_get_process_info_fp
    );
    size!("mqs_image_callbacks", ImageCallbacks);
    off!("mqs_image_callbacks", ImageCallbacks, mqs_get_type_sizes_fp);
    off!("mqs_image_callbacks", ImageCallbacks, mqs_find_function_fp);
    off!("mqs_image_callbacks", ImageCallbacks, mqs_find_symbol_fp);
    off!("mqs_image_callbacks", ImageCallbacks, mqs_find_type_fp);
    off!("mqs_image_callbacks", ImageCallbacks, mqs_field_offset_fp);
    off!("mqs_image_callbacks", ImageCallbacks, mqs_sizeof_fp);
    size!("mqs_process_callbacks", ProcessCallbacks);
    off!(
        "mqs_process_callbacks",
        ProcessCallbacks,
        mqs_get_global_rank_fp
    );
    off!("mqs_process_callbacks", ProcessCallbacks, mqs_get_image_fp);
    off!("mqs_process_callbacks", ProcessCallbacks, mqs_fetch_data_fp);
    off!(
        "mqs_process_callbacks",
        ProcessCallbacks,
        mqs_target_to_host_fp
    );
    // Enumerations: sizes and every value.
    size!("mqs_lang_code", LangCode);
    size!("mqs_op_class", OpClass);
    size!("enum mqs_status", Status);
    val!("MQS_INTERFACE_COMPATIBILITY", INTERFACE_COMPATIBILITY);
    val!("MQS_INVALID_PROCESS", INVALID_PROCESS);
    val!("mqs_ok", ResultCode::Ok as i32);
    val!("mqs_no_information", ResultCode::NoInformation as i32);
    val!("mqs_end_of_list", ResultCode::EndOfList as i32);
    val!("mqs_first_user_code", ResultCode::FirstUserCode as i32);
    val!("mqs_lang_c", LangCode::C as i32);
    val!("mqs_lang_cplus", LangCode::CPlusPlus as i32);
    val!("mqs_lang_f77", LangCode::Fortran77 as i32);
    val!("mqs_lang_f90", LangCode::Fortran90 as i32);
    val!("mqs_pending_sends", OpClass::PendingSends as i32);
    val!("mqs_pending_receives", OpClass::PendingReceives as i32);
    val!(
        "mqs_unexpected_messages",
        OpClass::UnexpectedMessages as i32
    );
    val!("mqs_st_pending", Status::Pending as i32);
    val!("mqs_st_matched", Status::Matched as i32);
    val!("mqs_st_complete", Status::Complete as i32);
    for (name, code) in err::ALL {
        v.push(((*name).to_owned(), i64::from(*code)));
    }
    v
}

/// What the C compiler checks of the signatures: callback tables initialised with functions of
/// the signatures the Rust aliases restate (an incompatible pointer is an error), and every DLL
/// entry point's declared type equal to the Rust alias's C form.
const SIGNATURE_CHECKS: &str = r#"
static void *sig_malloc(size_t n) { (void)n; return 0; }
static void sig_free(void *p) { (void)p; }
static void sig_dprints(const char *s) { (void)s; }
static char *sig_errorstring(int c) { (void)c; return 0; }
static void sig_put_image_info(mqs_image *i, mqs_image_info *x) { (void)i; (void)x; }
static mqs_image_info *sig_get_image_info(mqs_image *i) { (void)i; return 0; }
static void sig_put_process_info(mqs_process *p, mqs_process_info *x) { (void)p; (void)x; }
static mqs_process_info *sig_get_process_info(mqs_process *p) { (void)p; return 0; }
static void sig_get_type_sizes(mqs_process *p, mqs_target_type_sizes *s) { (void)p; (void)s; }
static int sig_find_function(mqs_image *i, char *n, mqs_lang_code l, mqs_taddr_t *a) { (void)i; (void)n; (void)l; (void)a; return 0; }
static int sig_find_symbol(mqs_image *i, char *n, mqs_taddr_t *a) { (void)i; (void)n; (void)a; return 0; }
static mqs_type *sig_find_type(mqs_image *i, char *n, mqs_lang_code l) { (void)i; (void)n; (void)l; return 0; }
static int sig_field_offset(mqs_type *t, char *n) { (void)t; (void)n; return 0; }
static int sig_sizeof(mqs_type *t) { (void)t; return 0; }
static int sig_get_global_rank(mqs_process *p) { (void)p; return 0; }
static mqs_image *sig_get_image(mqs_process *p) { (void)p; return 0; }
static int sig_fetch_data(mqs_process *p, mqs_taddr_t a, int n, void *b) { (void)p; (void)a; (void)n; (void)b; return 0; }
static void sig_target_to_host(mqs_process *p, const void *s, void *d, int n) { (void)p; (void)s; (void)d; (void)n; }
static const mqs_basic_callbacks basic = { sig_malloc, sig_free, sig_dprints, sig_errorstring,
    sig_put_image_info, sig_get_image_info, sig_put_process_info, sig_get_process_info };
static const mqs_image_callbacks image = { sig_get_type_sizes, sig_find_function,
    sig_find_symbol, sig_find_type, sig_field_offset, sig_sizeof };
static const mqs_process_callbacks process = { sig_get_global_rank, sig_get_image,
    sig_fetch_data, sig_target_to_host };
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_setup_basic_callbacks), void (*)(const mqs_basic_callbacks *)), "mqs_setup_basic_callbacks");
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_version_string), char *(*)(void)), "mqs_version_string");
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_version_compatibility), int (*)(void)), "mqs_version_compatibility");
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_dll_taddr_width), int (*)(void)), "mqs_dll_taddr_width");
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_dll_error_string), char *(*)(int)), "mqs_dll_error_string");
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_setup_image), int (*)(mqs_image *, const mqs_image_callbacks *)), "mqs_setup_image");
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_image_has_queues), int (*)(mqs_image *, char **)), "mqs_image_has_queues");
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_destroy_image_info), void (*)(mqs_image_info *)), "mqs_destroy_image_info");
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_setup_process), int (*)(mqs_process *, const mqs_process_callbacks *)), "mqs_setup_process");
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_destroy_process_info), void (*)(mqs_process_info *)), "mqs_destroy_process_info");
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_process_has_queues), int (*)(mqs_process *, char **)), "mqs_process_has_queues");
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_update_communicator_list), int (*)(mqs_process *)), "mqs_update_communicator_list");
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_setup_communicator_iterator), int (*)(mqs_process *)), "mqs_setup_communicator_iterator");
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_get_communicator), int (*)(mqs_process *, mqs_communicator *)), "mqs_get_communicator");
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_get_comm_group), int (*)(mqs_process *, int *)), "mqs_get_comm_group");
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_next_communicator), int (*)(mqs_process *)), "mqs_next_communicator");
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_setup_operation_iterator), int (*)(mqs_process *, int)), "mqs_setup_operation_iterator");
_Static_assert(__builtin_types_compatible_p(__typeof__(&mqs_next_operation), int (*)(mqs_process *, mqs_pending_operation *)), "mqs_next_operation");
"#;

#[test]
fn every_size_offset_and_value_matches_the_installed_header() {
    let Some(incdirs) = common::showme("incdirs") else {
        return common::skip("layout");
    };
    let values = rust_values();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mqd-layout");
    std::fs::create_dir_all(&dir).unwrap();
    let mut c = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include \"ompi/debuggers/msgq_interface.h\"\n",
    );
    c.push_str(SIGNATURE_CHECKS);
    c.push_str("int main(void) {\n");
    c.push_str("    (void)basic; (void)image; (void)process;\n");
    for (expr, _) in &values {
        c.push_str(&format!("    printf(\"%ld\\n\", (long)({expr}));\n"));
    }
    c.push_str("    return 0;\n}\n");
    let src = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&src, c).unwrap();
    let mut cc = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".to_owned()));
    cc.args(["-Wall", "-Werror=incompatible-pointer-types", "-o"])
        .arg(&exe)
        .arg(&src);
    for d in &incdirs {
        cc.arg(format!("-I{}", d.display()));
    }
    let out = cc.output().expect("run the C compiler");
    assert!(
        out.status.success(),
        "the layout program did not compile:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    let c_values: Vec<i64> = String::from_utf8_lossy(&run.stdout)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(c_values.len(), values.len());
    let mismatches: Vec<String> = values
        .iter()
        .zip(&c_values)
        .filter(|((_, r), c)| r != *c)
        .map(|((e, r), c)| format!("{e}: Rust {r}, C {c}"))
        .collect();
    println!(
        "{} sizes, offsets and values compared with the header",
        values.len()
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
