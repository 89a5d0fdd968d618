//! Standalone C reproducers of findings: each finding of a run can carry a [`Repro`], a C
//! program that makes the same calls without Rust and exits with a status that says whether
//! the behaviour showed ([`Repro::render`] writes the file, with its build and run line).
//!
//! Exit status of a reproducer: [`ABSENT`] (0) when the behaviour did not show, [`SETUP`] (2)
//! when it could not set up what it needs (a variable missing), [`ANSWER`] (10) a wrong answer,
//! [`CLASS`] (11) the same wrong error class as the finding, [`ACCEPTED`] (12) the invalid input
//! accepted; a crash shows as a signal or as any other status.

use std::fmt::Write as _;

use mpit_core::ErrorClass;

use super::raw;

/// The behaviour did not show.
pub const ABSENT: i32 = 0;
/// The reproducer could not set up what it needs.
pub const SETUP: i32 = 2;
/// A wrong answer (a value, a length, an info field, an error where success is due).
pub const ANSWER: i32 = 10;
/// The call returned the same wrong error class as the finding.
pub const CLASS: i32 = 11;
/// The invalid input was accepted (`MPI_SUCCESS`).
pub const ACCEPTED: i32 = 12;

/// What a reproducer shows when the behaviour is present.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// The process dies: a signal, or an exit status that is none of the program's own.
    Crash,
    /// It exits with this status ([`ANSWER`], [`CLASS`], [`ACCEPTED`]).
    Exit(i32),
}

impl Expect {
    /// Whether a finished process (`code`: its exit status, `None` when a signal ended it)
    /// shows the behaviour.
    pub fn shown_by(self, code: Option<i32>) -> bool {
        match self {
            Expect::Crash => !matches!(code, Some(ABSENT | SETUP | ANSWER | CLASS | ACCEPTED)),
            Expect::Exit(want) => code == Some(want),
        }
    }

    /// `crash` or `exit N`.
    pub fn describe(self) -> String {
        match self {
            Expect::Crash => "crash".into(),
            Expect::Exit(c) => format!("exit {c}"),
        }
    }

    /// Parses [`Expect::describe`].
    pub fn parse(s: &str) -> Option<Expect> {
        match s {
            "crash" => Some(Expect::Crash),
            _ => s.strip_prefix("exit ")?.parse().ok().map(Expect::Exit),
        }
    }
}

/// A standalone C program showing one finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repro {
    /// Processes to start: 1 runs the program directly, more under `mpiexec -n`.
    pub ranks: u32,
    /// What the program shows when the behaviour is present.
    pub expect: Expect,
    /// Definitions before `main` (callbacks), after the prelude.
    pub globals: String,
    /// The statements of `main` (the helpers of the prelude are in scope).
    pub body: String,
}

/// The helpers every reproducer starts with.
const PRELUDE: &str = r#"#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ABSENT 0   /* the behaviour did not show */
#define SETUP 2    /* what the program needs is missing */
#define ANSWER 10  /* a wrong answer */
#define CLASS 11   /* the same wrong error class as the finding */
#define ACCEPTED 12 /* the invalid input was accepted */

static void say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("mpit-repro: ");
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
}

static const char *rc_name(int rc) {
    static char buf[64];
    if (rc == MPI_SUCCESS) return "MPI_SUCCESS";
#define N(c) if (rc == c) return #c;
    N(MPI_T_ERR_MEMORY) N(MPI_T_ERR_NOT_INITIALIZED) N(MPI_T_ERR_CANNOT_INIT)
    N(MPI_T_ERR_INVALID_INDEX) N(MPI_T_ERR_INVALID_ITEM) N(MPI_T_ERR_INVALID_HANDLE)
    N(MPI_T_ERR_OUT_OF_HANDLES) N(MPI_T_ERR_OUT_OF_SESSIONS) N(MPI_T_ERR_INVALID_SESSION)
    N(MPI_T_ERR_CVAR_SET_NOT_NOW) N(MPI_T_ERR_CVAR_SET_NEVER) N(MPI_T_ERR_PVAR_NO_STARTSTOP)
    N(MPI_T_ERR_PVAR_NO_WRITE) N(MPI_T_ERR_PVAR_NO_ATOMIC) N(MPI_T_ERR_INVALID_NAME)
    N(MPI_T_ERR_INVALID)
#undef N
    snprintf(buf, sizeof buf, "error code %d", rc);
    return buf;
}

static void must(int rc, const char *what) {
    if (rc != MPI_SUCCESS) {
        say("setup: %s returned %s", what, rc_name(rc));
        exit(SETUP);
    }
}

static void t_init(void) {
    int provided;
    must(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), "MPI_T_init_thread");
}

static void mpi_init(void) {
    int provided;
    must(MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided), "MPI_Init_thread");
}

static int cvar_index(const char *name) {
    int i = -1;
    must(MPI_T_cvar_get_index(name, &i), name);
    return i;
}

static int pvar_index(const char *name, int var_class) {
    int i = -1;
    must(MPI_T_pvar_get_index(name, var_class, &i), name);
    return i;
}

static int category_index(const char *name) {
    int i = -1;
    must(MPI_T_category_get_index(name, &i), name);
    return i;
}

enum { CVAR = 0, PVAR = 1, CATEGORY = 2 };

/* MPI_T_{cvar,pvar,category}_get_info(index) with the string buffers given (NULL: length
   queries); the fixed answers are written into `out` (may be NULL) as text. */
static int get_info(int kind, int index, char *name, int *name_len, char *desc, int *desc_len,
                    char *out, size_t size) {
    int a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, rc;
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    MPI_T_enum en = MPI_T_ENUM_NULL;
    if (kind == CVAR)
        rc = MPI_T_cvar_get_info(index, name, name_len, &a, &dt, &en, desc, desc_len, &b, &c);
    else if (kind == PVAR)
        rc = MPI_T_pvar_get_info(index, name, name_len, &a, &b, &dt, &en, desc, desc_len, &c,
                                 &d, &e, &f);
    else
        rc = MPI_T_category_get_info(index, name, name_len, desc, desc_len, &a, &b, &c);
    if (out) {
        /* Datatypes by name where MPI can name them (after MPI_Init), else by handle. */
        char dtname[MPI_MAX_OBJECT_NAME] = "";
        int up = 0, down = 0, len = 0;
        MPI_Initialized(&up);
        MPI_Finalized(&down);
        if (rc == MPI_SUCCESS && kind != CATEGORY && up && !down)
            MPI_Type_get_name(dt, dtname, &len);
        if (!dtname[0])
            snprintf(dtname, sizeof dtname, "%llu", (unsigned long long) (uintptr_t) dt);
        snprintf(out, size, "rc %d ints %d %d %d %d %d %d datatype %s enum %llu", rc, a, b, c,
                 d, e, f, dtname, (unsigned long long) (uintptr_t) en);
    }
    return rc;
}

/* The name and description of `index` (length query, then a buffer of that length), the
   fixed answers in front; the return code of the first failing call. */
static int describe(int kind, int index, char *out, size_t size) {
    char fixed[256], *name, *desc;
    int nl = 0, dl = 0, rc = get_info(kind, index, NULL, &nl, NULL, &dl, fixed, sizeof fixed);
    if (rc != MPI_SUCCESS) {
        snprintf(out, size, "%s", fixed);
        return rc;
    }
    name = calloc(nl + 1, 1);
    desc = calloc(dl + 1, 1);
    nl += 1;
    dl += 1;
    rc = get_info(kind, index, name, &nl, desc, &dl, NULL, 0);
    snprintf(out, size, "%s name \"%s\" desc \"%s\"", fixed, name, desc);
    free(name);
    free(desc);
    return rc;
}

/* Ends the program: finalises MPI if it is initialised (as the Rust property does), then
   returns the status. MPI_T is left initialised, as in the property. */
static int end(int status) {
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down) MPI_Finalize();
    say("exit status %d", status);
    return status;
}
"#;

impl Repro {
    /// A reproducer of `ranks` processes.
    pub(crate) fn new(ranks: u32, expect: Expect) -> Repro {
        Repro {
            ranks,
            expect,
            globals: String::new(),
            body: String::new(),
        }
    }

    /// Appends definitions before `main`.
    #[cfg_attr(not(mpit_events), allow(dead_code))] // used by the event properties
    pub(crate) fn global(mut self, s: impl AsRef<str>) -> Repro {
        self.globals.push_str(s.as_ref());
        self.globals.push('\n');
        self
    }

    /// Appends statements.
    pub(crate) fn line(mut self, s: impl AsRef<str>) -> Repro {
        for l in s.as_ref().lines() {
            let _ = writeln!(self.body, "    {l}");
        }
        self
    }

    /// `MPI_T_init_thread`, and `MPI_Init_thread` if `after_init`.
    pub(crate) fn init(self, after_init: bool) -> Repro {
        let r = self.line("t_init();");
        if after_init { r.line("mpi_init();") } else { r }
    }

    /// Announces and makes `call` (an expression of type `int`, stored in `rc`), then ends by
    /// the expectation: a crash that did not happen is [`ABSENT`]; an error class is present when
    /// `rc` equals `observed` (the code the finding saw); an accepted input when `rc` is
    /// `MPI_SUCCESS`; a wrong answer when `answer` (a C condition on `rc` and what the setup
    /// declared) holds.
    pub(crate) fn call(self, call: &str, observed: i32, answer: Option<&str>) -> Repro {
        let text = call.replace(['"', '\\'], "'").replace('\n', " ");
        let (cond, status) = match (self.expect, answer) {
            (Expect::Crash, _) => {
                return self.line(format!(
                    "say(\"calling {text}\");\nrc = {call};\n\
                     say(\"returned %s: no crash\", rc_name(rc));\nreturn end(ABSENT);"
                ));
            }
            (Expect::Exit(ANSWER), Some(a)) => (a.to_string(), "ANSWER"),
            (Expect::Exit(CLASS), _) => (format!("rc == {}", c_code(observed)), "CLASS"),
            (Expect::Exit(_), _) => ("rc == MPI_SUCCESS".to_string(), "ACCEPTED"),
        };
        let seen = raw::rc_name(observed).replace('"', "'");
        self.line(format!(
            "say(\"calling {text}\");\nrc = {call};\n\
             say(\"returned %s (in the finding: {seen})\", rc_name(rc));\n\
             if ({cond}) {{\n    say(\"the finding shows\");\n    return end({status});\n}}\n\
             say(\"the finding does not show\");\nreturn end(ABSENT);"
        ))
    }

    /// The C source: a header comment (finding, rule, grade, build and run line, statuses),
    /// the prelude, and `main`.
    pub fn render(&self, name: &str, header: &[String]) -> String {
        let mut s = String::from("/*\n");
        for h in header {
            for l in h.lines() {
                let _ = writeln!(s, " * {}", l.replace("*/", "* /"));
            }
        }
        let _ = writeln!(s, " *\n * Build and run:\n *   {}", self.command(name));
        let _ = writeln!(
            s,
            " * The behaviour shows as: {}. Exit status 0: it did not show; 2: setup failed;\n \
             * 10: a wrong answer; 11: the same wrong error class; 12: the invalid input \
             accepted;\n * a crash: a signal or any other status.\n */",
            self.expect.describe()
        );
        s.push_str(PRELUDE);
        if !self.globals.is_empty() {
            s.push('\n');
            s.push_str(&self.globals);
        }
        let _ = write!(
            s,
            "\nint main(void) {{\n    int rc = MPI_SUCCESS;\n    (void) rc;\n{}}}\n",
            self.body
        );
        s
    }

    /// The build and run line: `mpicc NAME.c -o NAME && ./NAME` (with `mpiexec -n N` for more
    /// than one process). In the ABI build the compiler is the ABI's: `$MPIT_ABI_MPICC`'s
    /// program name (`mpicc_abi`, `mpicc -mpi-abi`), else `mpicc_abi`.
    pub fn command(&self, name: &str) -> String {
        let run = if self.ranks > 1 {
            format!("mpiexec -n {} ./{name}", self.ranks)
        } else {
            format!("./{name}")
        };
        let cc = if cfg!(mpit_abi) {
            abi_compiler()
        } else {
            "mpicc".to_owned()
        };
        format!("{cc} {name}.c -o {name} && {run}")
    }

    /// One line of the child-to-parent protocol.
    pub(crate) fn encode(&self) -> String {
        format!(
            "{}\u{1e}{}\u{1e}{}\u{1e}{}",
            self.ranks,
            self.expect.describe(),
            self.globals,
            self.body
        )
    }

    pub(crate) fn decode(s: &str) -> Option<Repro> {
        let mut f = s.splitn(4, '\u{1e}');
        Some(Repro {
            ranks: f.next()?.parse().ok()?,
            expect: Expect::parse(f.next()?)?,
            globals: f.next()?.to_string(),
            body: f.next()?.to_string(),
        })
    }
}

/// A return code as C: the constant's name where every header has it, else the number.
pub(crate) fn c_code(rc: i32) -> String {
    match raw::class(rc) {
        Some(ErrorClass::NotAccessible | ErrorClass::NotSupported) | None => {
            format!("{rc} /* {} */", raw::rc_name(rc))
        }
        Some(c) => c.c_name().to_string(),
    }
}

/// A C string literal.
pub(crate) fn c_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_ascii_graphic() || c == ' ' => out.push(c),
            c => {
                let mut b = [0u8; 4];
                for byte in c.encode_utf8(&mut b).bytes() {
                    let _ = write!(out, "\\{byte:03o}");
                }
            }
        }
    }
    out.push('"');
    out
}

/// The ABI build's C compiler as a reproducer's build line names it: the file name of
/// `$MPIT_ABI_MPICC`'s program and its arguments (`mpicc -mpi-abi` for Intel MPI), else
/// `mpicc_abi` (MPICH's).
fn abi_compiler() -> String {
    let line = std::env::var("MPIT_ABI_MPICC").unwrap_or_default();
    let mut words = line.split_whitespace();
    match words.next() {
        Some(program) => {
            let base = program.rsplit('/').next().unwrap_or(program);
            std::iter::once(base)
                .chain(words)
                .collect::<Vec<_>>()
                .join(" ")
        }
        None => "mpicc_abi".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectations_classify_exits() {
        assert!(Expect::Crash.shown_by(None));
        assert!(Expect::Crash.shown_by(Some(139)));
        assert!(Expect::Crash.shown_by(Some(1)));
        assert!(!Expect::Crash.shown_by(Some(ABSENT)));
        assert!(Expect::Exit(CLASS).shown_by(Some(CLASS)));
        assert!(!Expect::Exit(CLASS).shown_by(Some(ANSWER)));
        assert!(!Expect::Exit(ACCEPTED).shown_by(None));
    }

    #[test]
    fn repros_round_trip_and_render() {
        let r = Repro::new(2, Expect::Exit(ACCEPTED))
            .global("static int x;")
            .init(true)
            .call("MPI_T_cvar_handle_free(&h)", mpit_sys::MPI_SUCCESS, None);
        assert_eq!(Repro::decode(&r.encode()), Some(r.clone()));
        let c = r.render("repro_x", &["finding".into()]);
        assert!(c.contains("mpiexec -n 2 ./repro_x"), "{c}");
        assert!(c.contains("rc == MPI_SUCCESS"), "{c}");
        assert!(c.contains("return end(ACCEPTED)"), "{c}");
        assert_eq!(c_str("a\"b\\c\u{e9}"), "\"a\\\"b\\\\c\\303\\251\"");
    }
}
