//! The rules the properties check, each quoted from the standard, and the grades of a departure
//! from them.
//!
//! Sources: the MPI-3.0 draft of the tool information interface (MPI Forum, 2011; draft names
//! `MPIT_*`, where the final standard's `MPI_T_*` are what the installed `mpi.h` declares), with
//! the MPI-4.1 section where each rule now lives, and MPI-4.1 §16.3.8, Events. The passages the
//! quotes come from are in this package's `rules/` directory, word for word
//! (`rules/mpi-3.0-draft-mpit.txt`, `rules/mpi-4.1-events.txt`, one group per rule id), and a
//! test checks every quote against them. Rule ids starting `000-` quote the draft, `001-`
//! MPI-4.1 §16.3.8.

use std::fmt;

/// The MPI-3.0 draft of MPI_T (MPI Forum, "MPI: A Message-Passing Interface Standard, Version
/// 3.0", draft of January 24th, 2011, §1.2); its passages are in `rules/mpi-3.0-draft-mpit.txt`.
pub const MPIT_DRAFT: &str = "MPI-3.0 draft (2011)";
/// MPI-4.1 (MPI Forum, 2023), whose §16.3.8 Events the event rules quote; its passages are in
/// `rules/mpi-4.1-events.txt`.
pub const MPI_4_1: &str = "MPI-4.1";

/// One rule of the standard.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    /// Stable identifier (`<document>-<section>-<topic>`, the document `000` for the MPI-3.0
    /// draft and `001` for MPI-4.1 §16.3.8), pinned by the expectation files.
    pub id: &'static str,
    /// The document quoted ([`MPIT_DRAFT`] or [`MPI_4_1`]).
    pub spec: &'static str,
    /// The section of that document, with the MPI-4.1 section where the rule now lives.
    pub section: &'static str,
    /// The rule, quoted from the document (`[...]` marks an omission).
    pub text: &'static str,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: \"{}\"", self.spec, self.section, self.text)
    }
}

/// How serious a departure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Grade {
    /// The text states the rule as a requirement (must, shall, will, is required, is not
    /// allowed) and a valid call departs from it (a crash of a valid call included).
    Violation,
    /// An error is returned where the standard names a different error class.
    ErrorClass,
    /// An invalid argument is accepted, or crashes the process: MPI-4.1 §16.3.10 (the draft's
    /// §1.2.9) lets an implementation leave parameters unchecked ([`UNCHECKED`]). A robustness note, not a
    /// violation.
    UncheckedInput,
}

impl Grade {
    /// The stable tag: `violation`, `error-class`, `unchecked-input`.
    pub fn as_str(self) -> &'static str {
        match self {
            Grade::Violation => "violation",
            Grade::ErrorClass => "error-class",
            Grade::UncheckedInput => "unchecked-input",
        }
    }

    /// Parses [`Grade::as_str`].
    pub fn parse(s: &str) -> Option<Grade> {
        [Grade::Violation, Grade::ErrorClass, Grade::UncheckedInput]
            .into_iter()
            .find(|g| g.as_str() == s)
    }

    /// Why a departure gets this grade.
    pub fn basis(self) -> String {
        match self {
            Grade::Violation => "the text requires it of a valid call".into(),
            Grade::ErrorClass => "an error, but not the class the text names".into(),
            Grade::UncheckedInput => format!(
                "invalid input the implementation need not check ({} {}: \"{}\"); a \
                 robustness note, not a violation",
                UNCHECKED.spec, UNCHECKED.section, UNCHECKED.text
            ),
        }
    }
}

impl fmt::Display for Grade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! rules {
    ($($(#[$m:meta])* $name:ident = ($id:literal, $spec:expr, $section:literal, $text:literal);)*) => {
        $(
            $(#[$m])*
            pub static $name: Rule = Rule { id: $id, spec: $spec, section: $section, text: $text };
        )*
        /// Every rule, for lookup by id.
        pub static ALL: &[&Rule] = &[$(&$name),*];
    };
}

rules! {
    /// MPI_T is usable before `MPI_Init`, after `MPI_Finalize`, and again after finalising.
    ANY_TIME = ("000-1.2.4-any-time", MPIT_DRAFT,
        "§1.2 and §1.2.4 Initialization and Finalization (MPI-4.1 §16.3.4)",
        "MPIT routines can be called before MPI_INIT and after MPI_FINALIZE. [...] As long as \
         the number of calls to MPIT_FINALIZE is smaller than the number of calls to MPIT_INIT \
         [...] calls to all MPIT routines are permissible. Further, additional calls to \
         MPIT_INIT after one or more calls to MPIT_FINALIZE are permissible.");
    /// Every call returns a code (a valid call that crashes breaks it).
    RETURNS = ("000-1.2.9-returns", MPIT_DRAFT,
        "§1.2.9 Return and Error Codes (MPI-4.1 §16.3.10)",
        "All MPIT functions return a return or error code. [...] None of the error codes \
         returned by an MPIT routine is fatal to the overall MPI implementation");
    /// The string-return convention.
    STRINGS = ("000-1.2.3-strings", MPIT_DRAFT,
        "§1.2.3 String Arguments (MPI-4.1 §16.3.3)",
        "On return, the function writes at most n - 1 of the string's characters into the \
         buffer, followed by a null terminator. [...] The buffer is always null-terminated. If \
         the user passes the null pointer as the buffer argument or passes 0 as the length \
         argument, the function does not return the string and only returns the length of the \
         string plus one in the length argument.");
    /// An absent description is `""` with length one.
    EMPTY_DESC = ("000-1.2.6-empty-desc", MPIT_DRAFT,
        "§1.2.6, §1.2.7, §1.2.8 query functions (MPI-4.1 §16.3.6, §16.3.7, §16.3.9)",
        "Returning a description is optional. If an MPI implementation decides not to return \
         a description, the first character for desc must be set to the null character and \
         desc_len must be set to one at the return of this call.");
    /// Names: at least one character, unique.
    NAMES = ("000-1.2.6-names", MPIT_DRAFT,
        "§1.2.6, §1.2.7, §1.2.8 query functions (MPI-4.1 §16.3.6, §16.3.7, §16.3.9)",
        "If completed successfully, the routine is required to return a name of at least \
         length one, which is unique with respect to all other names for MPIT control \
         variables used by the MPI implementation.");
    /// The same query gives the same answer.
    SAME_INFO = ("000-1.2.6-same-info", MPIT_DRAFT,
        "§1.2.6, §1.2.7 query functions (MPI-4.1 §16.3.6, §16.3.7)",
        "After a successful call to MPIT_CONTROLVAR_GET_INFO for a particular variable, \
         subsequent calls to this routine querying information about the same variable must \
         return the same information. An MPIT implementation is not allowed to alter it at \
         runtime.");
    /// Indices run from 0 to N-1.
    INDICES = ("000-1.2.6-indices", MPIT_DRAFT,
        "§1.2.6, §1.2.7, §1.2.8 query functions (MPI-4.1 §16.3.6, §16.3.7, §16.3.9)",
        "Each MPI implementation exports a set of N control variables through MPIT. If N is \
         zero, then the MPIT implementation does not export any control variables, otherwise \
         the provided control variables are indexed from 0 to N - 1.");
    /// Indices never change or vanish.
    NO_DELETE = ("000-1.2.6-no-delete", MPIT_DRAFT,
        "§1.2.6, §1.2.7, §1.2.8 query functions (MPI-4.1 §16.3.6, §16.3.7, §16.3.9)",
        "An MPIT implementation is allowed to increase the number of control variables during \
         the execution of an MPI application [...]. However, MPIT implementations are not \
         allowed to change the index of a control variable or delete a variable once it has \
         been added to the set.");
    /// A name looked up gives its index; an unknown name `MPI_T_ERR_INVALID_NAME`.
    GET_INDEX = ("001-16.3.8.3-get-index", MPI_4_1,
        "§16.3.8.3 Event Type Query Functions (the rule MPI-4.1 §16.3.6, §16.3.7 and §16.3.9 \
         give MPI_T_cvar_get_index, MPI_T_pvar_get_index and MPI_T_category_get_index, which \
         came with MPI-3.1, after the MPI-3.0 draft)",
        "MPI_T_EVENT_GET_INDEX returns the index of an event type identified by a known event \
         type name. [...] This routine returns MPI_SUCCESS on success and returns \
         MPI_T_ERR_INVALID_NAME if name does not match the name of any event type provided by \
         the implementation at the time of the call.");
    /// The datatypes each performance variable class allows.
    CLASS_DATATYPES = ("000-1.2.7-class-datatypes", MPIT_DRAFT,
        "§1.2.7 Performance Variable Classes (MPI-4.1 §16.3.7)",
        "[MPIT_PERFVAR_CLASS_EVENT_COUNTER] Values must be non-negative and represented by one \
         of the following types: MPIT_SHORT, MPIT_INT, MPIT_LONG, MPIT_LONG_LONG. [and \
         likewise for each class]");
    /// Categories form a DAG of valid members.
    CATEGORY_DAG = ("000-1.2.8-dag", MPIT_DRAFT,
        "§1.2.8 Variable Categorization (MPI-4.1 §16.3.9)",
        "Categories can never include themselves either directly or transitively within other \
         included categories. [...] The index values returned in indices by \
         MPIT_CATEGORY_GET_CONTROLVARS, MPIT_CATEGORY_GET_PERFVARS or \
         MPIT_CATEGORY_GET_CATEGORIES can be used as input to MPIT_CONTROLVAR_GET_INFO, \
         MPIT_PERFVAR_GET_INFO or MPIT_CATEGORY_GET_INFO respectively.");
    /// Enumeration items.
    ENUM_ITEMS = ("000-1.2.5-enum-items", MPIT_DRAFT,
        "§1.2.5 Type System (MPI-4.1 §16.3.5)",
        "If completed successfully, the routine is required to return a name of at least \
         length one, which is unique with respect to all other names of items for the same \
         MPIT enumeration type.");
    /// The error classes Table 1.6 names for invalid arguments.
    ERROR_CODES = ("000-1.2.9-error-codes", MPIT_DRAFT,
        "§1.2.9 Return and Error Codes, Table 1.6 (MPI-4.1 §16.3.10)",
        "MPIT_ERR_INVALIDITEM The item index queried is out of range [...] MPIT_ERR_INVALIDINDEX \
         The variable or category index is invalid [...] MPIT_ERR_INVALIDHANDLE The handle is \
         invalid [...] MPIT_ERR_INVALIDSESSION Session argument is not a valid session");
    /// Unchecked parameters: the basis of [`Grade::UncheckedInput`].
    UNCHECKED = ("000-1.2.9-unchecked", MPIT_DRAFT,
        "§1.2.9 Return and Error Codes (MPI-4.1 §16.3.10)",
        "However, the MPIT implementation is not required to check all user provided \
         parameters; if a user passes illegal parameter values to any MPIT routine that are not \
         caught by the implementation, the behavior of the implementation is undefined.");
    /// Freeing sets the handle to its null value.
    FREE_SETS_NULL = ("000-1.2.6-free-sets-null", MPIT_DRAFT,
        "§1.2.6 and §1.2.7 Handle Allocation and Deallocation (MPI-4.1 §16.3.6, §16.3.7)",
        "On a successful return, MPIT sets the handle to MPIT_CONTROLVAR_HANDLE_NULL. [...] \
         On a successful return, MPIT sets the handle to MPIT_PERFVAR_HANDLE_NULL.");
    /// Writing control variables.
    CVAR_WRITE = ("000-1.2.6-cvar-write", MPIT_DRAFT,
        "§1.2.6 Control Variable Access Functions (MPI-4.1 §16.3.6)",
        "MPIT_SCOPE_READONLY read-only, cannot be written [...] The MPIT_CONTROLVAR_WRITE sets \
         the value of the control variable identified by the argument handle to the data \
         stored in the buffer buf. [...] If it is not possible to change the variable at the \
         time the call is made, the functions returns either MPIT_ERR_SETNOTNOW [...] or \
         MPIT_ERR_SETNEVER");
    /// Binding to an object instance.
    BINDING = ("000-1.2.7-binding", MPIT_DRAFT,
        "§1.2.6 and §1.2.7 Handle Allocation (MPI-4.1 §16.3.2)",
        "A call to this routine, if successfully completed, allocates a handle for the \
         performance variable specified by the argument index, binds this variable to the \
         instance of an MPI resource passed in the argument resource");
    /// Starting and stopping.
    START_STOP = ("000-1.2.7-start-stop", MPIT_DRAFT,
        "§1.2.7 Starting and Stopping of Performance Variables (MPI-4.1 §16.3.7)",
        "Performance variables that have the continuous flag set [...] cannot be stopped or \
         paused by the user. All other variables are in a stopped state after their handle has \
         been allocated [...] the routine returns MPI_SUCCESS if all variables are started \
         successfully, otherwise MPIT_ERR_NOSTARTSTOP is returned.");
    /// Writing and resetting performance variables.
    PVAR_WRITE = ("000-1.2.7-pvar-write", MPIT_DRAFT,
        "§1.2.7 Performance Variable Access Functions (MPI-4.1 §16.3.7)",
        "If it is not possible to change the variable the function returns \
         MPIT_ERR_PERFVAR_WRITE. [...] Note that the constant MPIT_PERFVAR_ALL_HANDLES can not \
         be used as an argument for the MPIT function MPIT_PERFVAR_WRITE");
    /// Reading with `MPI_T_PVAR_ALL_HANDLES`.
    ALL_HANDLES = ("000-1.2.7-all-handles", MPIT_DRAFT,
        "§1.2.7 Performance Variable Access Functions (MPI-4.1 §16.3.7)",
        "Note that the constant MPIT_PERFVAR_ALL_HANDLES can not be used as an argument for the \
         MPIT function MPIT_PERFVAR_READ, since this would require the function to return a \
         set of variable values instead of just one.");
    /// The value rules of the classes.
    PVAR_VALUES = ("000-1.2.7-values", MPIT_DRAFT,
        "§1.2.7 Performance Variable Classes and Starting and Stopping (MPI-4.1 §16.3.7)",
        "The value of a variable of this class is monotonically increasing (from the \
         initialization or reset of the performance variable) [...] The default starting value \
         for variables of this class is 0. [...] All other variables are in a stopped state \
         after their handle has been allocated, i.e., their values are not updated as the \
         program executes");
    /// Sessions isolate, and a freed session is gone.
    SESSIONS = ("000-1.2.7-sessions", MPIT_DRAFT,
        "§1.2.7 Performance Experiment Sessions (MPI-4.1 §16.3.7)",
        "Any call executed in a session must not influence the results in any other session. \
         [...] This call frees an existing session, i.e., calls to MPIT can no longer be made \
         within the context of the freed session. This call also frees all handles that have \
         been allocated within the specified session");
    /// The same name means the same attributes on every process.
    ACROSS_PROCESSES = ("001-16.3.8.3-across-processes", MPI_4_1,
        "§16.3.8.3 Event Type Query Functions (the rule MPI-4.1 §16.3.6 and §16.3.7 give \
         variables)",
        "If an event type has an equivalent name across connected MPI processes, the following \
         OUT parameters must be identical: verbosity, array_of_datatypes, num_elements, \
         enumtype, and bind.");
    /// Event sources.
    SOURCES = ("001-16.3.8.1-sources", MPI_4_1,
        "§16.3.8.1 Event Sources",
        "The arguments name and name_len are used to return the name of the source as \
         described in Section Convention for Returning Strings. [...] The value of ordering can \
         be MPI_T_SOURCE_ORDERED or MPI_T_SOURCE_UNORDERED. [...] The call returns \
         MPI_T_ERR_INVALID_INDEX if the index does not identify a valid source. The call \
         returns MPI_T_ERR_NOT_SUPPORTED if the source does not support the ad-hoc generation \
         of timestamps.");
    /// Event type queries.
    EVENT_INFO = ("001-16.3.8.3-event-info", MPI_4_1,
        "§16.3.8.3 Event Type Query Functions",
        "subsequent calls to this routine that query information about the same event type \
         must return the same information. [...] the argument array_of_displacements returns an \
         array of byte displacements in the event buffer in ascending order starting with zero. \
         [...] MPI can optionally return an enumeration identifier in the enumtype argument \
         [...]. Otherwise, enumtype is set to MPI_T_ENUM_NULL. [...] returns \
         MPI_T_ERR_INVALID_INDEX if event_index does not match a valid event type index");
    /// Callback selection and arguments.
    CALLBACKS = ("001-16.3.8.4-callbacks", MPI_4_1,
        "§16.3.8.4 Handle Allocation and Deallocation",
        "When an event is triggered, the implementation will select from all registered \
         callbacks the callback with the lowest safety level valid in the context in which the \
         callback is invoked. [...] The argument event_registration corresponds to the \
         event-registration handle returned by MPI_T_EVENT_HANDLE_ALLOC [...] The argument \
         user_data is the pointer to user-allocated memory that was passed to the MPI \
         implementation during callback registration.");
    /// The free callback.
    FREE_CALLBACK = ("001-16.3.8.4-free", MPI_4_1,
        "§16.3.8.4 Handle Allocation and Deallocation",
        "The callback function free_cb_function is called by the MPI implementation, when it \
         is able to guarantee that no further event instances for the corresponding \
         event-registration handle will be raised.");
    /// Dropped events.
    DROPPED = ("001-16.3.8.5-dropped", MPI_4_1,
        "§16.3.8.5 Handling Dropped Events",
        "If dropped event notifications have been observed for a specific source since the \
         last event notification of that source, the corresponding dropped handler callback \
         function must be called before other events are raised for that source.");
    /// Reading event data and meta data.
    EVENT_DATA = ("001-16.3.8.6-read", MPI_4_1,
        "§16.3.8.6 Reading Event Data and §16.3.8.7 Reading Event Meta Data",
        "MPI_T_EVENT_READ allows users to copy one element of the event data to a \
         user-specified buffer at a time. [...] MPI_T_EVENT_COPY copies the event data as a \
         whole into the user-provided buffer. [...] The source_index argument returns the index \
         of the source of the event instance.");
    /// Timestamps of an ordered source.
    ORDERED = ("001-16.3.8.1-ordered", MPI_4_1,
        "§16.3.8.1 Event Sources",
        "The ordering argument returns whether event callbacks of this source will be invoked \
         in chronological order, i.e., the timestamps reported by MPI_T_EVENT_GET_TIMESTAMP of \
         subsequent events of the same source are monotonically increasing.");
}

/// The rule with this id.
pub fn by_id(id: &str) -> Option<&'static Rule> {
    ALL.iter().copied().find(|r| r.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The passages the rules quote, per document: word for word from the MPI Forum's texts.
    /// `include_str!` makes a missing file a build failure, never a skipped check.
    const PASSAGES: [(&str, &str); 2] = [
        (MPIT_DRAFT, include_str!("../rules/mpi-3.0-draft-mpit.txt")),
        (MPI_4_1, include_str!("../rules/mpi-4.1-events.txt")),
    ];

    /// Whitespace collapsed, the minus sign as a hyphen.
    fn norm(s: &str) -> String {
        s.replace('\u{2212}', "-")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The passage groups of one file: `[rule id]` opens a group, `#` lines are comments.
    fn groups(file: &str) -> Vec<(&str, String)> {
        let mut groups: Vec<(&str, String)> = Vec::new();
        for line in file.lines().filter(|l| !l.starts_with('#')) {
            if let Some(id) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                groups.push((id, String::new()));
            } else if let Some((_, text)) = groups.last_mut() {
                text.push_str(line);
                text.push('\n');
            } else {
                assert!(
                    line.trim().is_empty(),
                    "text before the first rule id: {line:?}"
                );
            }
        }
        groups
    }

    /// Every quote is in its rule's passages (modulo whitespace, `[...]` omissions and
    /// `[...]`-bracketed glosses), so a rule cannot drift from the standard's text; every
    /// passage belongs to a rule.
    #[test]
    fn quotes_are_in_the_standards_text() {
        let mut ids = std::collections::BTreeSet::new();
        for r in ALL {
            assert!(ids.insert(r.id), "duplicate rule id {}", r.id);
        }
        for (doc, file) in PASSAGES {
            for (id, _) in groups(file) {
                let rule = by_id(id).unwrap_or_else(|| panic!("passages of {id}: no such rule"));
                assert_eq!(
                    rule.spec, doc,
                    "passages of {id} are in the file of another document"
                );
            }
        }
        for r in ALL {
            let (_, file) = PASSAGES
                .iter()
                .find(|(doc, _)| *doc == r.spec)
                .unwrap_or_else(|| panic!("rule {}: no passages of {}", r.id, r.spec));
            let found: Vec<String> = groups(file)
                .into_iter()
                .filter(|(id, _)| *id == r.id)
                .map(|(_, text)| norm(&text))
                .collect();
            assert_eq!(
                found.len(),
                1,
                "rule {}: {} passage groups, not one",
                r.id,
                found.len()
            );
            let text = &found[0];
            for piece in r.text.split("[...]") {
                // Drop bracketed glosses ("[and likewise for each class]").
                let mut p = String::new();
                let mut depth = 0;
                for c in piece.chars() {
                    match c {
                        '[' => depth += 1,
                        ']' => depth -= 1,
                        _ if depth == 0 => p.push(c),
                        _ => {}
                    }
                }
                let p = norm(&p);
                let p = p.trim_matches(|c: char| c == '.' || c == ' ' || c == ',');
                if p.len() > 3 {
                    assert!(text.contains(p), "rule {}: {p:?} not in its passages", r.id);
                }
            }
        }
        assert!(by_id("000-1.2.9-unchecked").is_some());
        assert_eq!(Grade::parse("error-class"), Some(Grade::ErrorClass));
    }
}
