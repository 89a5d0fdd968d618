//! The PMIx ABI a tool needs for process acquisition, written by hand from the PMIx Standard
//! v4.2 (its chapters "Data Structures and Types", "Job Management and Reporting" for the
//! query, and "Tools and Debuggers"): the structures as `#[repr(C)]` definitions, and the
//! constants and attribute keys with their C names.
//!
//! `mpir-types/tests/pmix_abi.rs` compiles a C program against the installed `pmix.h` and
//! checks every size, alignment and field offset here and every value of the tables below
//! ([`STATUSES`], [`DATA_TYPES`], [`RANKS`], [`PROC_STATES`], [`INFO_DIRECTIVES`],
//! [`LENGTHS`], [`RANGES`], [`ATTRIBUTES`]), so a constant added to a table is checked with no more
//! work. The structures hold raw pointers: nothing here dereferences them; the decoders of
//! [`super`] read what they point to through a
//! [`MemoryReader`](crate::memory::MemoryReader).
#![allow(non_camel_case_types)]

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};

/// `pmix_status_t`: a return or event code (`int`).
pub type pmix_status_t = c_int;
/// `pmix_rank_t`: a process rank in its namespace (`uint32_t`).
pub type pmix_rank_t = u32;
/// `pmix_data_type_t`: the type tag of a [`pmix_value_t`] or [`pmix_data_array_t`]
/// (`uint16_t`).
pub type pmix_data_type_t = u16;
/// `pmix_info_directives_t`: the flags of a [`pmix_info_t`] (`uint32_t`).
pub type pmix_info_directives_t = u32;
/// `pmix_proc_state_t`: the state of a process (`uint8_t`).
pub type pmix_proc_state_t = u8;
/// `pmix_data_range_t`: the range of an event or of published data (`uint8_t`).
pub type pmix_data_range_t = u8;
/// `pid_t` as Linux defines it (`int`).
pub type pid_t = c_int;

/// `pmix_nspace_t`: a namespace, a NUL-terminated string in a fixed array.
pub type pmix_nspace_t = [c_char; PMIX_MAX_NSLEN + 1];
/// `pmix_key_t`: an attribute key, a NUL-terminated string in a fixed array.
pub type pmix_key_t = [c_char; PMIX_MAX_KEYLEN + 1];

/// Declares each constant and a table of `(C name, value)` rows listing them, in order.
macro_rules! constants {
    ($(#[$table_meta:meta])* $table:ident: $ty:ty {
        $( $(#[$meta:meta])* $name:ident = $value:expr; )*
    }) => {
        $( $(#[$meta])* pub const $name: $ty = $value; )*
        $(#[$table_meta])*
        pub const $table: &[(&str, $ty)] = &[ $( (stringify!($name), $name), )* ];
    };
}

constants! {
    /// The lengths of the fixed string arrays, without their NUL.
    LENGTHS: usize {
        /// Longest namespace, without the NUL (`PMIX_MAX_NSLEN`).
        PMIX_MAX_NSLEN = 255;
        /// Longest attribute key, without the NUL (`PMIX_MAX_KEYLEN`).
        PMIX_MAX_KEYLEN = 511;
    }
}

constants! {
    /// The status and event codes a tool sees while it acquires processes (the Standard's
    /// error constants and the events of "Tools and Debuggers").
    STATUSES: pmix_status_t {
        /// Success.
        PMIX_SUCCESS = 0;
        /// A general error.
        PMIX_ERROR = -1;
        /// Event: the debugger releases the processes it stopped.
        PMIX_DEBUGGER_RELEASE = -3;
        /// A value has another type than the one asked for.
        PMIX_ERR_TYPE_MISMATCH = -18;
        /// Unpacking a buffer failed.
        PMIX_ERR_UNPACK_FAILURE = -20;
        /// Packing a buffer failed.
        PMIX_ERR_PACK_FAILURE = -21;
        /// The caller may not do this.
        PMIX_ERR_NO_PERMISSIONS = -23;
        /// The operation timed out.
        PMIX_ERR_TIMEOUT = -24;
        /// The server is unreachable.
        PMIX_ERR_UNREACH = -25;
        /// A parameter is wrong.
        PMIX_ERR_BAD_PARAM = -27;
        /// The library is not initialized.
        PMIX_ERR_INIT = -31;
        /// Out of memory.
        PMIX_ERR_NOMEM = -32;
        /// The data asked for does not exist.
        PMIX_ERR_NOT_FOUND = -46;
        /// The operation is not supported.
        PMIX_ERR_NOT_SUPPORTED = -47;
        /// Communication with the server failed.
        PMIX_ERR_COMM_FAILURE = -49;
        /// Some of the requested data is returned (a query answered in part).
        PMIX_ERR_PARTIAL_SUCCESS = -52;
        /// Event: processes are stopped where the debugger asked.
        PMIX_READY_FOR_DEBUG = -58;
        /// The connection to the server is lost.
        PMIX_ERR_LOST_CONNECTION = -61;
        /// Event: a job ended.
        PMIX_EVENT_JOB_END = -145;
    }
}

constants! {
    /// The data types a tool decodes or builds while it acquires processes.
    DATA_TYPES: pmix_data_type_t {
        /// Undefined.
        PMIX_UNDEF = 0;
        /// `bool`.
        PMIX_BOOL = 1;
        /// `uint8_t`, a byte of data.
        PMIX_BYTE = 2;
        /// `char *`, a NUL-terminated string.
        PMIX_STRING = 3;
        /// `size_t`.
        PMIX_SIZE = 4;
        /// `pid_t`.
        PMIX_PID = 5;
        /// `int`.
        PMIX_INT = 6;
        /// `int8_t`.
        PMIX_INT8 = 7;
        /// `int16_t`.
        PMIX_INT16 = 8;
        /// `int32_t`.
        PMIX_INT32 = 9;
        /// `int64_t`.
        PMIX_INT64 = 10;
        /// `unsigned int`.
        PMIX_UINT = 11;
        /// `uint8_t`.
        PMIX_UINT8 = 12;
        /// `uint16_t`.
        PMIX_UINT16 = 13;
        /// `uint32_t`.
        PMIX_UINT32 = 14;
        /// `uint64_t`.
        PMIX_UINT64 = 15;
        /// `pmix_status_t`.
        PMIX_STATUS = 20;
        /// `pmix_value_t`.
        PMIX_VALUE = 21;
        /// `pmix_proc_t`.
        PMIX_PROC = 22;
        /// `pmix_info_t`.
        PMIX_INFO = 24;
        /// `pmix_byte_object_t`.
        PMIX_BYTE_OBJECT = 27;
        /// `void *`.
        PMIX_POINTER = 31;
        /// `pmix_proc_state_t`.
        PMIX_PROC_STATE = 37;
        /// `pmix_proc_info_t`.
        PMIX_PROC_INFO = 38;
        /// `pmix_data_array_t`.
        PMIX_DATA_ARRAY = 39;
        /// `pmix_rank_t`.
        PMIX_PROC_RANK = 40;
        /// `pmix_query_t`.
        PMIX_QUERY = 41;
        /// `pmix_envar_t`.
        PMIX_ENVAR = 46;
        /// `pmix_nspace_t`.
        PMIX_PROC_NSPACE = 60;
    }
}

constants! {
    /// The reserved ranks.
    RANKS: pmix_rank_t {
        /// A rank not known or not specified.
        PMIX_RANK_UNDEF = u32::MAX;
        /// Every rank of the namespace.
        PMIX_RANK_WILDCARD = u32::MAX - 1;
        /// Every rank on the local node.
        PMIX_RANK_LOCAL_NODE = u32::MAX - 2;
        /// An invalid rank.
        PMIX_RANK_INVALID = u32::MAX - 3;
        /// Every peer (same namespace) on the local node.
        PMIX_RANK_LOCAL_PEERS = u32::MAX - 4;
        /// Ranks below this one are ranks of processes (`PMIX_RANK_IS_VALID`).
        PMIX_RANK_VALID = u32::MAX - 50;
    }
}

constants! {
    /// Process states a proc table reports.
    PROC_STATES: pmix_proc_state_t {
        /// Undefined.
        PMIX_PROC_STATE_UNDEF = 0;
        /// Ready to be launched.
        PMIX_PROC_STATE_PREPPED = 1;
        /// Launch under way.
        PMIX_PROC_STATE_LAUNCH_UNDERWAY = 2;
        /// The local daemon forked the process.
        PMIX_PROC_STATE_RUNNING = 5;
        /// The process connected to its PMIx server.
        PMIX_PROC_STATE_CONNECTED = 6;
        /// The process terminated.
        PMIX_PROC_STATE_TERMINATED = 20;
        /// States from here on are errors.
        PMIX_PROC_STATE_ERROR = 50;
        /// The process aborted.
        PMIX_PROC_STATE_ABORTED = 52;
    }
}

constants! {
    /// The flags of a [`pmix_info_t`].
    INFO_DIRECTIVES: pmix_info_directives_t {
        /// The attribute is required.
        PMIX_INFO_REQD = 0x1;
        /// The last element of an array made by `PMIX_INFO_CREATE`.
        PMIX_INFO_ARRAY_END = 0x2;
        /// The value is not the array's to release (`PMIX_INFO_FREE` leaves it).
        PMIX_INFO_PERSISTENT = 0x10;
    }
}

constants! {
    /// The ranges of an event (PMIx Standard v4.2, "Data Range").
    RANGES: pmix_data_range_t {
        /// The host's resource manager.
        PMIX_RANGE_RM = 1;
        /// The processes of the caller's namespace.
        PMIX_RANGE_NAMESPACE = 3;
        /// The processes an info of key [`PMIX_EVENT_CUSTOM_RANGE`] lists.
        PMIX_RANGE_CUSTOM = 6;
    }
}

constants! {
    /// The attribute keys a tool uses to connect, query and control processes (the Standard's
    /// query, tool connection and debugger attributes), as C strings.
    ATTRIBUTES: &CStr {
        /// Query key (`char *` answer): a comma-separated list of the active namespaces.
        PMIX_QUERY_NAMESPACES = c"pmix.qry.ns";
        /// Query key (`pmix_data_array_t *` answer): information about each active namespace.
        PMIX_QUERY_NAMESPACE_INFO = c"pmix.qry.nsinfo";
        /// Query key (`pmix_data_array_t *` of `pmix_proc_info_t`): the processes of the
        /// namespace named by a [`PMIX_NSPACE`] qualifier.
        PMIX_QUERY_PROC_TABLE = c"pmix.qry.ptable";
        /// Query key: as [`PMIX_QUERY_PROC_TABLE`], the processes on the local node only.
        PMIX_QUERY_LOCAL_PROC_TABLE = c"pmix.qry.lptable";
        /// Query key (`char *` answer): the debugger attributes the host supports.
        PMIX_QUERY_DEBUG_SUPPORT = c"pmix.qry.debug";
        /// Query qualifier (`bool`): ask the server again instead of answering from a cache.
        PMIX_QUERY_REFRESH_CACHE = c"pmix.qry.rfsh";
        /// (`pmix_data_array_t *`) the qualifiers a query's results answer.
        PMIX_QUERY_QUALIFIERS = c"pmix.qry.quals";
        /// (`pmix_data_array_t *`) the results of one query, each a `pmix_info_t`.
        PMIX_QUERY_RESULTS = c"pmix.qry.res";
        /// (`char *`) a namespace (the qualifier of a proc table query).
        PMIX_NSPACE = c"pmix.nspace";
        /// (`pmix_rank_t`) a rank.
        PMIX_RANK = c"pmix.rank";
        /// (`char *`) a host name.
        PMIX_HOSTNAME = c"pmix.hname";
        /// (`uint32_t`) the number of processes of a job.
        PMIX_JOB_SIZE = c"pmix.job.size";
        /// (`pid_t`) the pid of the server a tool connects to.
        PMIX_SERVER_PIDINFO = c"pmix.srvr.pidinfo";
        /// (`char *`) the URI of the server a tool connects to.
        PMIX_SERVER_URI = c"pmix.srvr.uri";
        /// (`char *`) the namespace of a server.
        PMIX_SERVER_NSPACE = c"pmix.srv.nspace";
        /// (`char *`) the namespace a tool asks to be given.
        PMIX_TOOL_NSPACE = c"pmix.tool.nspace";
        /// (`uint32_t`) the rank a tool asks to be given.
        PMIX_TOOL_RANK = c"pmix.tool.rank";
        /// (`bool`) connect to a server if there is one, else run unconnected.
        PMIX_TOOL_CONNECT_OPTIONAL = c"pmix.tool.conopt";
        /// (`bool`) do not connect to any server.
        PMIX_TOOL_DO_NOT_CONNECT = c"pmix.tool.nocon";
        /// (`char *`) a file with the connection information of the server to attach to.
        PMIX_TOOL_ATTACHMENT_FILE = c"pmix.tool.attach";
        /// (`bool`) connect to the system server only.
        PMIX_CONNECT_TO_SYSTEM = c"pmix.cnct.sys";
        /// (`bool`) look for the system server first.
        PMIX_CONNECT_SYSTEM_FIRST = c"pmix.cnct.sys.first";
        /// (`uint32_t`) how many times to try to connect.
        PMIX_CONNECT_MAX_RETRIES = c"pmix.tool.mretries";
        /// (`uint32_t`) seconds between connection attempts.
        PMIX_CONNECT_RETRY_DELAY = c"pmix.tool.retry";
        /// (`bool`) the tool is a launcher.
        PMIX_LAUNCHER = c"pmix.tool.launcher";
        /// (`int`) seconds before an operation times out (0: never).
        PMIX_TIMEOUT = c"pmix.timeout";
        /// (`pmix_proc_t *`) the processes to debug.
        PMIX_DEBUG_TARGET = c"pmix.dbg.tgt";
        /// (varies) stop the processes in `PMIx_Init` and report them ready to debug.
        PMIX_DEBUG_STOP_IN_INIT = c"pmix.dbg.init";
        /// (varies) stop the processes at `exec` and report them ready to debug.
        PMIX_DEBUG_STOP_ON_EXEC = c"pmix.dbg.exec";
        /// (`pmix_proc_t` or an array of them) the processes an event of range
        /// [`PMIX_RANGE_CUSTOM`] goes to.
        PMIX_EVENT_CUSTOM_RANGE = c"pmix.evrange";
        /// (bool) the event is not delivered to default event handlers.
        PMIX_EVENT_NON_DEFAULT = c"pmix.evnondef";
    }
}

/// The C name of a status code of [`STATUSES`].
pub fn status_name(status: pmix_status_t) -> Option<&'static str> {
    STATUSES.iter().find(|r| r.1 == status).map(|r| r.0)
}

/// The C name of a data type of [`DATA_TYPES`].
pub fn data_type_name(ty: pmix_data_type_t) -> Option<&'static str> {
    DATA_TYPES.iter().find(|r| r.1 == ty).map(|r| r.0)
}

/// `pmix_proc_t`: a process, named by its namespace and its rank in it. 260 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct pmix_proc_t {
    /// The namespace, NUL-terminated.
    pub nspace: pmix_nspace_t,
    /// The rank in the namespace.
    pub rank: pmix_rank_t,
}

/// `pmix_proc_info_t`: one process of a proc table. 296 bytes on LP64.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pmix_proc_info_t {
    /// The process.
    pub proc: pmix_proc_t,
    /// The host it runs on (a string the library allocated).
    pub hostname: *mut c_char,
    /// The executable it runs (a string the library allocated).
    pub executable_name: *mut c_char,
    /// Its pid on that host.
    pub pid: pid_t,
    /// Its exit code, once it exited.
    pub exit_code: c_int,
    /// Its state.
    pub state: pmix_proc_state_t,
}

/// `pmix_byte_object_t`: bytes and their count, a member of [`pmix_value_data`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pmix_byte_object_t {
    /// The bytes.
    pub bytes: *mut c_char,
    /// How many.
    pub size: usize,
}

/// `pmix_envar_t`: an environment variable to set; the largest member of
/// [`pmix_value_data`], which makes the union 24 bytes on LP64.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pmix_envar_t {
    /// The variable's name.
    pub envar: *mut c_char,
    /// Its value.
    pub value: *mut c_char,
    /// The separator used to prepend or append to a list.
    pub separator: c_char,
}

/// The union of a [`pmix_value_t`] (anonymous in C, `pmix_value_t.data`): the members a
/// tool reads, and [`pmix_envar_t`], which gives the union its size.
#[repr(C)]
#[derive(Clone, Copy)]
pub union pmix_value_data {
    /// [`PMIX_BOOL`].
    pub flag: bool,
    /// [`PMIX_BYTE`].
    pub byte: u8,
    /// [`PMIX_STRING`].
    pub string: *mut c_char,
    /// [`PMIX_SIZE`].
    pub size: usize,
    /// [`PMIX_PID`].
    pub pid: pid_t,
    /// [`PMIX_INT`].
    pub integer: c_int,
    /// [`PMIX_INT8`].
    pub int8: i8,
    /// [`PMIX_INT16`].
    pub int16: i16,
    /// [`PMIX_INT32`].
    pub int32: i32,
    /// [`PMIX_INT64`].
    pub int64: i64,
    /// [`PMIX_UINT`].
    pub uint: c_uint,
    /// [`PMIX_UINT8`].
    pub uint8: u8,
    /// [`PMIX_UINT16`].
    pub uint16: u16,
    /// [`PMIX_UINT32`].
    pub uint32: u32,
    /// [`PMIX_UINT64`].
    pub uint64: u64,
    /// [`PMIX_STATUS`].
    pub status: pmix_status_t,
    /// [`PMIX_PROC_RANK`].
    pub rank: pmix_rank_t,
    /// [`PMIX_PROC_NSPACE`].
    pub nspace: *mut pmix_nspace_t,
    /// [`PMIX_PROC`].
    pub proc: *mut pmix_proc_t,
    /// [`PMIX_BYTE_OBJECT`].
    pub bo: pmix_byte_object_t,
    /// [`PMIX_PROC_STATE`].
    pub state: pmix_proc_state_t,
    /// [`PMIX_PROC_INFO`].
    pub pinfo: *mut pmix_proc_info_t,
    /// [`PMIX_DATA_ARRAY`].
    pub darray: *mut pmix_data_array_t,
    /// [`PMIX_POINTER`].
    pub ptr: *mut c_void,
    /// [`PMIX_ENVAR`].
    pub envar: pmix_envar_t,
}

/// `pmix_value_t`: a typed value: the type tag, then the union. 32 bytes on LP64.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct pmix_value_t {
    /// The type of the member of `data` in use (one of [`DATA_TYPES`]).
    pub type_: pmix_data_type_t,
    /// The value.
    pub data: pmix_value_data,
}

/// `pmix_info_t`: a key and its value: a query's qualifier or result, an
/// attribute. 552 bytes on LP64.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct pmix_info_t {
    /// The key, NUL-terminated (one of [`ATTRIBUTES`]).
    pub key: pmix_key_t,
    /// [`INFO_DIRECTIVES`] flags.
    pub flags: pmix_info_directives_t,
    /// The value.
    pub value: pmix_value_t,
}

/// `pmix_data_array_t`: `size` elements of one type. 24 bytes on LP64.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pmix_data_array_t {
    /// The elements' type (one of [`DATA_TYPES`]).
    pub type_: pmix_data_type_t,
    /// How many elements.
    pub size: usize,
    /// The first element.
    pub array: *mut c_void,
}

/// `pmix_query_t`: one query: NULL-terminated keys and their qualifiers. 24
/// bytes on LP64.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pmix_query_t {
    /// The keys, a NULL-terminated array of strings.
    pub keys: *mut *mut c_char,
    /// The qualifiers.
    pub qualifiers: *mut pmix_info_t,
    /// How many qualifiers.
    pub nqual: usize,
}

// The sizes the header gives on LP64 (checked against it by tests/pmix_abi.rs).
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(size_of::<pmix_proc_t>() == 260);
    assert!(size_of::<pmix_proc_info_t>() == 296);
    assert!(size_of::<pmix_value_data>() == 24);
    assert!(size_of::<pmix_value_t>() == 32);
    assert!(size_of::<pmix_info_t>() == 552);
    assert!(size_of::<pmix_data_array_t>() == 24);
    assert!(size_of::<pmix_query_t>() == 24);
};
