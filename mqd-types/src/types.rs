//! The types of the interface header (`msgq_interface.h`, §6 of "Tools and Debugging Interfaces to MPI"), with the C layouts of
//! an LP64 target on an LP64 host (the header's `unsigned long`/`long` for addresses and words).
//!
//! Enumerations that the DLL or the debugger pass as `int` are `int` in the FFI signatures
//! ([`RawLangCode`], result codes as `c_int`): a value outside a Rust enum's range must become
//! a typed error, not undefined behaviour. The Rust enums ([`LangCode`], [`OpClass`],
//! [`Status`], [`ResultCode`]) convert with `TryFrom<c_int>`.

use std::borrow::Cow;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::fmt;

/// `mqs_taddr_t`: a target address, as the DLL holds it on the host (§6.3).
#[doc(alias = "mqs_taddr_t")]
pub type TAddr = std::ffi::c_ulong;

/// `mqs_tword_t`: a target word (`long`) as the DLL holds it on the host (§6.2).
#[doc(alias = "mqs_tword_t")]
pub type TWord = std::ffi::c_long;

/// `MQS_INTERFACE_COMPATIBILITY`: the interface version this crate implements (§6.7.2); the
/// header's value without MPI-2 support. A DLL whose `mqs_version_compatibility` differs is
/// refused.
#[doc(alias = "MQS_INTERFACE_COMPATIBILITY")]
pub const INTERFACE_COMPATIBILITY: c_int = 2;

/// `MQS_INVALID_PROCESS`: the value the debugger returns for an unknown process index (§6.7.4).
#[doc(alias = "MQS_INVALID_PROCESS")]
pub const INVALID_PROCESS: c_int = -1;

/// `mqs_ok`.
#[doc(alias = "mqs_ok")]
pub const MQS_OK: c_int = 0;
/// `mqs_no_information`.
#[doc(alias = "mqs_no_information")]
pub const MQS_NO_INFORMATION: c_int = 1;
/// `mqs_end_of_list`.
#[doc(alias = "mqs_end_of_list")]
pub const MQS_END_OF_LIST: c_int = 2;
/// `mqs_first_user_code`: the first implementation-defined (DLL or debugger) result code.
#[doc(alias = "mqs_first_user_code")]
pub const MQS_FIRST_USER_CODE: c_int = 100;

/// The result codes of the interface (§6.7.3); codes from
/// [`ResultCode::FirstUserCode`] on are the DLL's or the debugger's own.
#[doc(alias = "mqs_result")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C)]
pub enum ResultCode {
    /// `mqs_ok`: success.
    Ok = 0,
    /// `mqs_no_information`: the implementation has nothing to say.
    NoInformation = 1,
    /// `mqs_end_of_list`: an iteration is over.
    EndOfList = 2,
    /// `mqs_first_user_code`.
    FirstUserCode = 100,
}

impl TryFrom<c_int> for ResultCode {
    type Error = c_int;
    fn try_from(v: c_int) -> Result<Self, c_int> {
        Ok(match v {
            MQS_OK => ResultCode::Ok,
            MQS_NO_INFORMATION => ResultCode::NoInformation,
            MQS_END_OF_LIST => ResultCode::EndOfList,
            MQS_FIRST_USER_CODE => ResultCode::FirstUserCode,
            other => return Err(other),
        })
    }
}

/// The raw `mqs_lang_code` as it crosses the interface.
pub type RawLangCode = c_int;

/// The language a looked-up name belongs to (§6.7.1).
#[doc(alias = "mqs_lang_code")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C)]
pub enum LangCode {
    /// `mqs_lang_c` (`'c'`).
    #[doc(alias = "mqs_lang_c")]
    C = b'c' as isize,
    /// `mqs_lang_cplus` (`'C'`).
    #[doc(alias = "mqs_lang_cplus")]
    CPlusPlus = b'C' as isize,
    /// `mqs_lang_f77` (`'f'`).
    #[doc(alias = "mqs_lang_f77")]
    Fortran77 = b'f' as isize,
    /// `mqs_lang_f90` (`'F'`).
    #[doc(alias = "mqs_lang_f90")]
    Fortran90 = b'F' as isize,
}

impl TryFrom<c_int> for LangCode {
    type Error = c_int;
    fn try_from(v: c_int) -> Result<Self, c_int> {
        Ok(match u8::try_from(v).map_err(|_| v)? {
            b'c' => LangCode::C,
            b'C' => LangCode::CPlusPlus,
            b'f' => LangCode::Fortran77,
            b'F' => LangCode::Fortran90,
            _ => return Err(v),
        })
    }
}

/// Which queue of a communicator to iterate (§6.7.5).
#[doc(alias = "mqs_op_class")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(C)]
pub enum OpClass {
    /// `mqs_pending_sends`: sends not yet complete.
    #[doc(alias = "mqs_pending_sends")]
    PendingSends = 0,
    /// `mqs_pending_receives`: receives posted and not yet complete.
    #[doc(alias = "mqs_pending_receives")]
    PendingReceives = 1,
    /// `mqs_unexpected_messages`: arrived messages no receive has matched.
    #[doc(alias = "mqs_unexpected_messages")]
    UnexpectedMessages = 2,
}

impl OpClass {
    /// The three classes, in the header's order.
    pub const ALL: [OpClass; 3] = [
        OpClass::PendingSends,
        OpClass::PendingReceives,
        OpClass::UnexpectedMessages,
    ];
}

impl TryFrom<c_int> for OpClass {
    type Error = c_int;
    fn try_from(v: c_int) -> Result<Self, c_int> {
        Ok(match v {
            0 => OpClass::PendingSends,
            1 => OpClass::PendingReceives,
            2 => OpClass::UnexpectedMessages,
            other => return Err(other),
        })
    }
}

impl fmt::Display for OpClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OpClass::PendingSends => "pending sends",
            OpClass::PendingReceives => "pending receives",
            OpClass::UnexpectedMessages => "unexpected messages",
        })
    }
}

/// The state of a pending operation (§6.7.6; `int status` of [`PendingOperation`]).
#[doc(alias = "mqs_status")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(C)]
pub enum Status {
    /// `mqs_st_pending`: not matched yet.
    #[doc(alias = "mqs_st_pending")]
    Pending = 0,
    /// `mqs_st_matched`: matched, data not all transferred.
    #[doc(alias = "mqs_st_matched")]
    Matched = 1,
    /// `mqs_st_complete`: complete, not yet waited for.
    #[doc(alias = "mqs_st_complete")]
    Complete = 2,
}

impl TryFrom<c_int> for Status {
    type Error = c_int;
    fn try_from(v: c_int) -> Result<Self, c_int> {
        Ok(match v {
            0 => Status::Pending,
            1 => Status::Matched,
            2 => Status::Complete,
            other => return Err(other),
        })
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Pending => "pending",
            Status::Matched => "matched",
            Status::Complete => "complete",
        })
    }
}

/// The sizes of the target's basic types (§6.4), as the debugger reports them.
#[doc(alias = "mqs_target_type_sizes")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct TargetTypeSizes {
    /// `sizeof(short)`.
    pub short_size: c_int,
    /// `sizeof(int)`.
    pub int_size: c_int,
    /// `sizeof(long)`.
    pub long_size: c_int,
    /// `sizeof(long long)`.
    pub long_long_size: c_int,
    /// `sizeof(void *)`.
    pub pointer_size: c_int,
    /// `sizeof(bool)` (the header adds it to the draft's list).
    pub bool_size: c_int,
    /// `sizeof(size_t)` (the header adds it to the draft's list).
    pub size_t_size: c_int,
}

impl TargetTypeSizes {
    /// An LP64 target (Linux x86-64, aarch64, ...).
    pub const LP64: TargetTypeSizes = TargetTypeSizes {
        short_size: 2,
        int_size: 4,
        long_size: 8,
        long_long_size: 8,
        pointer_size: 8,
        bool_size: 1,
        size_t_size: 8,
    };
    /// An ILP32 target.
    pub const ILP32: TargetTypeSizes = TargetTypeSizes {
        short_size: 2,
        int_size: 4,
        long_size: 4,
        long_long_size: 8,
        pointer_size: 4,
        bool_size: 1,
        size_t_size: 4,
    };
}

macro_rules! opaque {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
            _not_send_sync: core::marker::PhantomData<(*mut u8, core::marker::PhantomPinned)>,
        }
    };
}

opaque!(
    /// `mqs_image`: the debugger's handle of an executable image (§6.5); in this crate it
    /// points at the state of an [`Image`](crate::Image).
    #[doc(alias = "mqs_image")]
    ImageHandle
);
opaque!(
    /// `mqs_process`: the debugger's handle of a process (§6.5); in this crate it points at
    /// the state of a [`Process`](crate::Process).
    #[doc(alias = "mqs_process")]
    ProcessHandle
);
opaque!(
    /// `mqs_type`: the debugger's handle of a target type (§6.5); in this crate it points at
    /// a [`TypeLayout`](crate::TypeLayout) its image owns.
    #[doc(alias = "mqs_type")]
    TypeHandle
);
opaque!(
    /// `mqs_image_info`: what the DLL hangs on an image (§6.5); the debugger only stores it.
    #[doc(alias = "mqs_image_info")]
    ImageInfo
);
opaque!(
    /// `mqs_process_info`: what the DLL hangs on a process (§6.6); the debugger only stores it.
    #[doc(alias = "mqs_process_info")]
    ProcessInfo
);

/// Reads a fixed-size C character array up to its first NUL (all of it if none).
fn fixed_str(chars: &[c_char]) -> Cow<'_, str> {
    let len = chars.iter().position(|&c| c == 0).unwrap_or(chars.len());
    // `c_char` and `u8` have the same size and alignment.
    let bytes: Vec<u8> = chars[..len].iter().map(|&c| c as u8).collect();
    Cow::Owned(String::from_utf8_lossy(&bytes).into_owned())
}

/// A communicator as the DLL describes it (§6.8.1).
#[doc(alias = "mqs_communicator")]
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Communicator {
    /// A tag unique among the process's communicators (Open MPI: the context id).
    pub unique_id: TAddr,
    /// This process's rank in it.
    pub local_rank: TWord,
    /// Its size.
    pub size: TWord,
    /// Its name, NUL-terminated if shorter than 64 bytes.
    pub name: [c_char; 64],
}

impl Communicator {
    /// An all-zero record (what the DLL fills).
    pub const fn zeroed() -> Self {
        Communicator {
            unique_id: 0,
            local_rank: 0,
            size: 0,
            name: [0; 64],
        }
    }

    /// The name, up to its NUL (lossily decoded).
    pub fn name(&self) -> Cow<'_, str> {
        fixed_str(&self.name)
    }
}

impl fmt::Debug for Communicator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Communicator")
            .field("unique_id", &self.unique_id)
            .field("local_rank", &self.local_rank)
            .field("size", &self.size)
            .field("name", &self.name())
            .finish()
    }
}

/// One entry of a queue (§6.8.2).
#[doc(alias = "mqs_pending_operation")]
#[derive(Clone, Copy)]
#[repr(C)]
pub struct PendingOperation {
    /// `int status`: a [`Status`] value (see [`PendingOperation::status`]).
    pub status: c_int,
    /// Rank of the peer in the communicator, -1 for any.
    pub desired_local_rank: TWord,
    /// The same in `MPI_COMM_WORLD`.
    pub desired_global_rank: TWord,
    /// Non-zero for a wildcard tag.
    pub tag_wild: c_int,
    /// The tag (meaningful if not `tag_wild`).
    pub desired_tag: TWord,
    /// Length of the message buffer (Open MPI: bytes, datatype size times count).
    pub desired_length: TWord,
    /// Non-zero if the buffer is the implementation's.
    pub system_buffer: c_int,
    /// Where the data is.
    pub buffer: TAddr,
    /// Peer rank once matched (or of a send).
    pub actual_local_rank: TWord,
    /// The same in `MPI_COMM_WORLD`.
    pub actual_global_rank: TWord,
    /// Tag once matched (or of a send).
    pub actual_tag: TWord,
    /// Length once matched (or of a send).
    pub actual_length: TWord,
    /// Up to five lines of text the DLL adds.
    pub extra_text: [[c_char; 64]; 5],
}

impl PendingOperation {
    /// An all-zero record (what the DLL fills).
    pub const fn zeroed() -> Self {
        PendingOperation {
            status: 0,
            desired_local_rank: 0,
            desired_global_rank: 0,
            tag_wild: 0,
            desired_tag: 0,
            desired_length: 0,
            system_buffer: 0,
            buffer: 0,
            actual_local_rank: 0,
            actual_global_rank: 0,
            actual_tag: 0,
            actual_length: 0,
            extra_text: [[0; 64]; 5],
        }
    }

    /// The status, or the raw value if it is none of [`Status`]'s.
    pub fn status(&self) -> Result<Status, c_int> {
        Status::try_from(self.status)
    }

    /// The non-empty lines of `extra_text`.
    pub fn extra_text(&self) -> Vec<String> {
        self.extra_text
            .iter()
            .map(|l| fixed_str(l).into_owned())
            .filter(|l| !l.is_empty())
            .collect()
    }
}

impl fmt::Debug for PendingOperation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingOperation")
            .field("status", &self.status())
            .field("desired_local_rank", &self.desired_local_rank)
            .field("desired_global_rank", &self.desired_global_rank)
            .field("tag_wild", &self.tag_wild)
            .field("desired_tag", &self.desired_tag)
            .field("desired_length", &self.desired_length)
            .field("system_buffer", &self.system_buffer)
            .field("buffer", &format_args!("{:#x}", self.buffer))
            .field("actual_local_rank", &self.actual_local_rank)
            .field("actual_global_rank", &self.actual_global_rank)
            .field("actual_tag", &self.actual_tag)
            .field("actual_length", &self.actual_length)
            .field("extra_text", &self.extra_text())
            .finish()
    }
}

/// `mqs_malloc_ft`: allocate store for the DLL.
#[doc(alias = "mqs_malloc_ft")]
pub type MallocFt = unsafe extern "C" fn(usize) -> *mut c_void;
/// `mqs_free_ft`: free what `mqs_malloc_ft` allocated.
#[doc(alias = "mqs_free_ft")]
pub type FreeFt = unsafe extern "C" fn(*mut c_void);
/// `mqs_dprints_ft`: print a debugging message of the DLL.
#[doc(alias = "mqs_dprints_ft")]
pub type DprintsFt = unsafe extern "C" fn(*const c_char);
/// `mqs_errorstring_ft`: the text of a debugger error code.
#[doc(alias = "mqs_errorstring_ft")]
pub type ErrorstringFt = unsafe extern "C" fn(c_int) -> *mut c_char;
/// `mqs_put_image_info_ft`: hang the DLL's information on an image.
#[doc(alias = "mqs_put_image_info_ft")]
pub type PutImageInfoFt = unsafe extern "C" fn(*mut ImageHandle, *mut ImageInfo);
/// `mqs_get_image_info_ft`: get it back.
#[doc(alias = "mqs_get_image_info_ft")]
pub type GetImageInfoFt = unsafe extern "C" fn(*mut ImageHandle) -> *mut ImageInfo;
/// `mqs_put_process_info_ft`: hang the DLL's information on a process.
#[doc(alias = "mqs_put_process_info_ft")]
pub type PutProcessInfoFt = unsafe extern "C" fn(*mut ProcessHandle, *mut ProcessInfo);
/// `mqs_get_process_info_ft`: get it back.
#[doc(alias = "mqs_get_process_info_ft")]
pub type GetProcessInfoFt = unsafe extern "C" fn(*mut ProcessHandle) -> *mut ProcessInfo;
/// `mqs_get_type_sizes_ft`: the target's basic type sizes.
#[doc(alias = "mqs_get_type_sizes_ft")]
pub type GetTypeSizesFt = unsafe extern "C" fn(*mut ProcessHandle, *mut TargetTypeSizes);
/// `mqs_find_function_ft`: the address of a function (the out-pointer may be NULL).
#[doc(alias = "mqs_find_function_ft")]
pub type FindFunctionFt =
    unsafe extern "C" fn(*mut ImageHandle, *mut c_char, RawLangCode, *mut TAddr) -> c_int;
/// `mqs_find_symbol_ft`: the address of a variable (the out-pointer may be NULL).
#[doc(alias = "mqs_find_symbol_ft")]
pub type FindSymbolFt = unsafe extern "C" fn(*mut ImageHandle, *mut c_char, *mut TAddr) -> c_int;
/// `mqs_find_type_ft`: a type by name, NULL if unknown.
#[doc(alias = "mqs_find_type_ft")]
pub type FindTypeFt =
    unsafe extern "C" fn(*mut ImageHandle, *mut c_char, RawLangCode) -> *mut TypeHandle;
/// `mqs_field_offset_ft`: a member's offset in a structure, -1 if unknown.
#[doc(alias = "mqs_field_offset_ft")]
pub type FieldOffsetFt = unsafe extern "C" fn(*mut TypeHandle, *mut c_char) -> c_int;
/// `mqs_sizeof_ft`: a type's size in bytes.
#[doc(alias = "mqs_sizeof_ft")]
pub type SizeofFt = unsafe extern "C" fn(*mut TypeHandle) -> c_int;
/// `mqs_get_global_rank_ft`: a process's rank in `MPI_COMM_WORLD`.
#[doc(alias = "mqs_get_global_rank_ft")]
pub type GetGlobalRankFt = unsafe extern "C" fn(*mut ProcessHandle) -> c_int;
/// `mqs_get_image_ft`: the image a process runs.
#[doc(alias = "mqs_get_image_ft")]
pub type GetImageFt = unsafe extern "C" fn(*mut ProcessHandle) -> *mut ImageHandle;
/// `mqs_fetch_data_ft`: read target memory.
#[doc(alias = "mqs_fetch_data_ft")]
pub type FetchDataFt = unsafe extern "C" fn(*mut ProcessHandle, TAddr, c_int, *mut c_void) -> c_int;
/// `mqs_target_to_host_ft`: convert target data to host format.
#[doc(alias = "mqs_target_to_host_ft")]
pub type TargetToHostFt =
    unsafe extern "C" fn(*mut ProcessHandle, *const c_void, *mut c_void, c_int);

/// The debugger's basic callbacks (§6.9.1), given to `mqs_setup_basic_callbacks`.
#[doc(alias = "mqs_basic_callbacks")]
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct BasicCallbacks {
    /// `mqs_malloc_fp`.
    pub mqs_malloc_fp: Option<MallocFt>,
    /// `mqs_free_fp`.
    pub mqs_free_fp: Option<FreeFt>,
    /// `mqs_dprints_fp` (in the header, not in the draft).
    pub mqs_dprints_fp: Option<DprintsFt>,
    /// `mqs_errorstring_fp`.
    pub mqs_errorstring_fp: Option<ErrorstringFt>,
    /// `mqs_put_image_info_fp`.
    pub mqs_put_image_info_fp: Option<PutImageInfoFt>,
    /// `mqs_get_image_info_fp`.
    pub mqs_get_image_info_fp: Option<GetImageInfoFt>,
    /// `mqs_put_process_info_fp`.
    pub mqs_put_process_info_fp: Option<PutProcessInfoFt>,
    /// `mqs_get_process_info_fp`.
    pub mqs_get_process_info_fp: Option<GetProcessInfoFt>,
}

/// The debugger's per-image callbacks (§6.9.2), given to `mqs_setup_image`.
#[doc(alias = "mqs_image_callbacks")]
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct ImageCallbacks {
    /// `mqs_get_type_sizes_fp`.
    pub mqs_get_type_sizes_fp: Option<GetTypeSizesFt>,
    /// `mqs_find_function_fp`.
    pub mqs_find_function_fp: Option<FindFunctionFt>,
    /// `mqs_find_symbol_fp`.
    pub mqs_find_symbol_fp: Option<FindSymbolFt>,
    /// `mqs_find_type_fp`.
    pub mqs_find_type_fp: Option<FindTypeFt>,
    /// `mqs_field_offset_fp`.
    pub mqs_field_offset_fp: Option<FieldOffsetFt>,
    /// `mqs_sizeof_fp`.
    pub mqs_sizeof_fp: Option<SizeofFt>,
}

/// The debugger's per-process callbacks (§6.9.3), given to `mqs_setup_process`.
#[doc(alias = "mqs_process_callbacks")]
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct ProcessCallbacks {
    /// `mqs_get_global_rank_fp`.
    pub mqs_get_global_rank_fp: Option<GetGlobalRankFt>,
    /// `mqs_get_image_fp`.
    pub mqs_get_image_fp: Option<GetImageFt>,
    /// `mqs_fetch_data_fp`.
    pub mqs_fetch_data_fp: Option<FetchDataFt>,
    /// `mqs_target_to_host_fp`.
    pub mqs_target_to_host_fp: Option<TargetToHostFt>,
}

/// `mqs_setup_basic_callbacks` (§6.10.1).
#[doc(alias = "mqs_setup_basic_callbacks")]
pub type SetupBasicCallbacksFn = unsafe extern "C" fn(*const BasicCallbacks);
/// `mqs_version_string` (§6.10.2).
#[doc(alias = "mqs_version_string")]
pub type VersionStringFn = unsafe extern "C" fn() -> *mut c_char;
/// `mqs_version_compatibility` (§6.10.3).
#[doc(alias = "mqs_version_compatibility")]
pub type VersionCompatibilityFn = unsafe extern "C" fn() -> c_int;
/// `mqs_dll_taddr_width` (§6.12).
#[doc(alias = "mqs_dll_taddr_width")]
pub type DllTaddrWidthFn = unsafe extern "C" fn() -> c_int;
/// `mqs_dll_error_string` (§6.13).
#[doc(alias = "mqs_dll_error_string")]
pub type DllErrorStringFn = unsafe extern "C" fn(c_int) -> *mut c_char;
/// `mqs_setup_image` (§6.14.1).
#[doc(alias = "mqs_setup_image")]
pub type SetupImageFn = unsafe extern "C" fn(*mut ImageHandle, *const ImageCallbacks) -> c_int;
/// `mqs_image_has_queues` (§6.14.2).
#[doc(alias = "mqs_image_has_queues")]
pub type ImageHasQueuesFn = unsafe extern "C" fn(*mut ImageHandle, *mut *mut c_char) -> c_int;
/// `mqs_destroy_image_info`.
#[doc(alias = "mqs_destroy_image_info")]
pub type DestroyImageInfoFn = unsafe extern "C" fn(*mut ImageInfo);
/// `mqs_setup_process`.
#[doc(alias = "mqs_setup_process")]
pub type SetupProcessFn =
    unsafe extern "C" fn(*mut ProcessHandle, *const ProcessCallbacks) -> c_int;
/// `mqs_destroy_process_info`.
#[doc(alias = "mqs_destroy_process_info")]
pub type DestroyProcessInfoFn = unsafe extern "C" fn(*mut ProcessInfo);
/// `mqs_process_has_queues`.
#[doc(alias = "mqs_process_has_queues")]
pub type ProcessHasQueuesFn = unsafe extern "C" fn(*mut ProcessHandle, *mut *mut c_char) -> c_int;
/// `mqs_update_communicator_list` (§6.15.1).
#[doc(alias = "mqs_update_communicator_list")]
pub type UpdateCommunicatorListFn = unsafe extern "C" fn(*mut ProcessHandle) -> c_int;
/// `mqs_setup_communicator_iterator` (§6.15.2).
#[doc(alias = "mqs_setup_communicator_iterator")]
pub type SetupCommunicatorIteratorFn = unsafe extern "C" fn(*mut ProcessHandle) -> c_int;
/// `mqs_get_communicator` (§6.15.3).
#[doc(alias = "mqs_get_communicator")]
pub type GetCommunicatorFn = unsafe extern "C" fn(*mut ProcessHandle, *mut Communicator) -> c_int;
/// `mqs_get_comm_group` (§6.15.4): fills `size` global ranks.
#[doc(alias = "mqs_get_comm_group")]
pub type GetCommGroupFn = unsafe extern "C" fn(*mut ProcessHandle, *mut c_int) -> c_int;
/// `mqs_next_communicator` (§6.15.5).
#[doc(alias = "mqs_next_communicator")]
pub type NextCommunicatorFn = unsafe extern "C" fn(*mut ProcessHandle) -> c_int;
/// `mqs_setup_operation_iterator` (§6.15.6): the class is an [`OpClass`] as `int`.
#[doc(alias = "mqs_setup_operation_iterator")]
pub type SetupOperationIteratorFn = unsafe extern "C" fn(*mut ProcessHandle, c_int) -> c_int;
/// `mqs_next_operation` (§6.15.7).
#[doc(alias = "mqs_next_operation")]
pub type NextOperationFn = unsafe extern "C" fn(*mut ProcessHandle, *mut PendingOperation) -> c_int;

/// Reads a NUL-terminated string the DLL returned (static storage in the DLL).
pub(crate) fn c_text(p: &CStr) -> String {
    p.to_string_lossy().into_owned()
}

macro_rules! header_errors {
    ($($name:ident),* $(,)?) => {
        /// The header's additional error codes (`err_silent_failure = mqs_first_user_code`,
        /// then consecutive): what Open MPI's DLL returns; its `mqs_dll_error_string` gives
        /// their text.
        pub mod err {
            use std::ffi::c_int;
            header_errors!(@consts 100, $($name,)*);
            /// Every code with its header name, in the header's order.
            pub const ALL: &[(&str, c_int)] = &[$((stringify!($name), $name)),*];
        }
    };
    (@consts $n:expr, $name:ident, $($rest:ident,)*) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        #[allow(non_upper_case_globals)]
        pub const $name: c_int = $n;
        header_errors!(@consts $n + 1, $($rest,)*);
    };
    (@consts $n:expr,) => {};
}

header_errors!(
    err_silent_failure,
    err_no_current_communicator,
    err_bad_request,
    err_no_store,
    err_failed_qhdr,
    err_unexpected,
    err_posted,
    err_failed_queue,
    err_first,
    err_context_id,
    err_tag,
    err_tagmask,
    err_lsrc,
    err_srcmask,
    err_next,
    err_ptr,
    err_missing_type,
    err_missing_symbol,
    err_db_shandle,
    err_db_comm,
    err_db_target,
    err_db_tag,
    err_db_data,
    err_db_byte_length,
    err_db_next,
    err_failed_rhandle,
    err_is_complete,
    err_buf,
    err_len,
    err_s,
    err_failed_status,
    err_count,
    err_MPI_SOURCE,
    err_MPI_TAG,
    err_failed_commlist,
    err_sequence_number,
    err_comm_first,
    err_failed_communicator,
    err_lrank_to_grank,
    err_send_context,
    err_recv_context,
    err_comm_next,
    err_comm_name,
    err_all_communicators,
    err_mpid_sends,
    err_mpid_recvs,
    err_group_corrupt,
);
