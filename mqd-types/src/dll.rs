//! The DLL and the debugger's callback tables: the crate's one module with `unsafe`.
//!
//! - [`Dll::load`] opens the shared object with `libloading`, resolves every entry point,
//!   checks `mqs_version_compatibility`, `mqs_version_string` and `mqs_dll_taddr_width`, and
//!   hands the DLL the basic callbacks (a `static` table: it lives as long as the process).
//! - [`Image`] and [`Process`] own the state behind the `mqs_image *` and `mqs_process *`
//!   handles the DLL receives (boxed: the addresses stay put), the image and process callback
//!   tables are `static` too, and a [`Process`] borrows its [`Image`], so no handle outlives
//!   what it points at. The DLL's own information is destroyed when they drop.
//! - Every call into the DLL holds one process-wide lock: Open MPI's DLL keeps global state
//!   (the callback table, a version buffer) and is not thread-safe.
//! - Every callback is an `extern "C"` trampoline that catches panics and answers with the
//!   interface's failure value instead.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::dwarf::TypeLayout;
use crate::error::MqdError;
use crate::target::{ImageTarget, ProcessTarget};
use crate::types::*;

/// Serialises every call into any DLL (see the module documentation).
static CALLS: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    CALLS.lock().unwrap_or_else(PoisonError::into_inner)
}

// The C library's allocator: `mqs_malloc`/`mqs_free` hand out C heap memory (the DLL may
// free with them what it allocated with them, nothing else).
unsafe extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn free(p: *mut c_void);
}

/// The resolved entry points.
#[derive(Clone, Copy)]
struct Entry {
    setup_basic_callbacks: SetupBasicCallbacksFn,
    version_string: VersionStringFn,
    version_compatibility: VersionCompatibilityFn,
    dll_taddr_width: DllTaddrWidthFn,
    dll_error_string: DllErrorStringFn,
    setup_image: SetupImageFn,
    image_has_queues: ImageHasQueuesFn,
    destroy_image_info: DestroyImageInfoFn,
    setup_process: SetupProcessFn,
    destroy_process_info: DestroyProcessInfoFn,
    process_has_queues: ProcessHasQueuesFn,
    update_communicator_list: UpdateCommunicatorListFn,
    setup_communicator_iterator: SetupCommunicatorIteratorFn,
    get_communicator: GetCommunicatorFn,
    get_comm_group: GetCommGroupFn,
    next_communicator: NextCommunicatorFn,
    setup_operation_iterator: SetupOperationIteratorFn,
    next_operation: NextOperationFn,
}

struct DllInner {
    entry: Entry,
    path: PathBuf,
    version: String,
    compatibility: c_int,
    // Last: dropped after everything that could call into it (images and processes hold an
    // `Arc` of this).
    _lib: libloading::Library,
}

/// A loaded message queue DLL (e.g. Open MPI's `libompi_dbg_msgq.so`).
///
/// Cloning shares it; it is unloaded when the last clone and the last [`Image`] made from it
/// are gone.
#[derive(Clone)]
pub struct Dll {
    inner: Arc<DllInner>,
}

impl std::fmt::Debug for Dll {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dll")
            .field("path", &self.inner.path)
            .field("version", &self.inner.version)
            .finish()
    }
}

/// Copies the string a DLL returned (NULL is `None`).
fn dll_string(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the interface returns NUL-terminated strings in the DLL's static storage (or
    // string literals); the pointer is not NULL.
    Some(c_text(unsafe { CStr::from_ptr(p) }))
}

macro_rules! entry_points {
    ($lib:expr, $path:expr, $($field:ident = $name:literal),* $(,)?) => {
        Entry {
            $($field: {
                // SAFETY: the symbol is the interface's entry point of that name, whose C
                // signature the field's type restates (msgq_interface.h); the pointer is
                // copied out and used only while the `Library` is loaded (`DllInner` keeps
                // it last).
                let sym = unsafe { $lib.get(concat!($name, "\0").as_bytes()) };
                *sym.map_err(|_| MqdError::MissingEntryPoint { path: $path.clone(), symbol: $name })?
            },)*
        }
    };
}

impl Dll {
    /// Loads the DLL at `path` and checks that this crate can use it: every entry point
    /// present, `mqs_version_compatibility` equal to
    /// [`INTERFACE_COMPATIBILITY`], `mqs_dll_taddr_width` equal to the size of [`TAddr`].
    /// Then gives it the basic callbacks.
    ///
    /// ```no_run
    /// let dll = mqd_types::Dll::load("/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/libompi_dbg_msgq.so")?;
    /// println!("{}", dll.version());
    /// # Ok::<(), mqd_types::MqdError>(())
    /// ```
    #[doc(alias = "mqs_setup_basic_callbacks")]
    pub fn load(path: impl AsRef<Path>) -> Result<Dll, MqdError> {
        let path = path.as_ref().to_path_buf();
        let _guard = lock();
        // SAFETY: loading runs the object's initialisers; a message queue DLL (the purpose of
        // this call) has none that matter, and anything else is what the caller asked to load.
        let lib = unsafe { libloading::Library::new(&path) }.map_err(|e| MqdError::Load {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        let entry = entry_points!(
            lib,
            path,
            setup_basic_callbacks = "mqs_setup_basic_callbacks",
            version_string = "mqs_version_string",
            version_compatibility = "mqs_version_compatibility",
            dll_taddr_width = "mqs_dll_taddr_width",
            dll_error_string = "mqs_dll_error_string",
            setup_image = "mqs_setup_image",
            image_has_queues = "mqs_image_has_queues",
            destroy_image_info = "mqs_destroy_image_info",
            setup_process = "mqs_setup_process",
            destroy_process_info = "mqs_destroy_process_info",
            process_has_queues = "mqs_process_has_queues",
            update_communicator_list = "mqs_update_communicator_list",
            setup_communicator_iterator = "mqs_setup_communicator_iterator",
            get_communicator = "mqs_get_communicator",
            get_comm_group = "mqs_get_comm_group",
            next_communicator = "mqs_next_communicator",
            setup_operation_iterator = "mqs_setup_operation_iterator",
            next_operation = "mqs_next_operation",
        );
        // SAFETY: entry points without arguments (header signatures); the string is the DLL's
        // static buffer, copied at once.
        let (compatibility, version, width) = unsafe {
            (
                (entry.version_compatibility)(),
                dll_string((entry.version_string)()).unwrap_or_default(),
                (entry.dll_taddr_width)(),
            )
        };
        if compatibility != INTERFACE_COMPATIBILITY {
            return Err(MqdError::Incompatible {
                path,
                found: compatibility,
                expected: INTERFACE_COMPATIBILITY,
                version,
            });
        }
        if usize::try_from(width) != Ok(size_of::<TAddr>()) {
            return Err(MqdError::AddressWidth {
                path,
                found: width,
                expected: size_of::<TAddr>(),
            });
        }
        // SAFETY: `BASIC_CALLBACKS` is a `static`: it outlives every use the DLL makes of it.
        unsafe { (entry.setup_basic_callbacks)(&BASIC_CALLBACKS) };
        Ok(Dll {
            inner: Arc::new(DllInner {
                entry,
                path,
                version,
                compatibility,
                _lib: lib,
            }),
        })
    }

    /// The file it was loaded from.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// `mqs_version_string`.
    #[doc(alias = "mqs_version_string")]
    pub fn version(&self) -> &str {
        &self.inner.version
    }

    /// `mqs_version_compatibility` (equal to [`INTERFACE_COMPATIBILITY`]).
    #[doc(alias = "mqs_version_compatibility")]
    pub fn compatibility(&self) -> c_int {
        self.inner.compatibility
    }

    /// `mqs_dll_error_string(code)`: the DLL's text for a result code.
    #[doc(alias = "mqs_dll_error_string")]
    pub fn error_string(&self, code: c_int) -> String {
        let _guard = lock();
        self.error_string_locked(code)
    }

    fn error_string_locked(&self, code: c_int) -> String {
        // SAFETY: header signature; any int is accepted (unknown codes have a default text).
        dll_string(unsafe { (self.inner.entry.dll_error_string)(code) })
            .unwrap_or_else(|| format!("error {code}"))
    }

    fn failure(&self, call: &'static str, code: c_int, message: Option<String>) -> MqdError {
        MqdError::Dll {
            call,
            code,
            dll_text: self.error_string_locked(code),
            message,
        }
    }
}

/// A type lookup the DLL made through `mqs_find_type`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeRequest {
    /// The name asked for.
    pub name: String,
    /// Whether the image's target knew it.
    pub found: bool,
}

struct ImageState {
    target: Box<dyn ImageTarget>,
    info: AtomicPtr<ImageInfo>,
    /// Boxed: a box's address is the `mqs_type *` handle, stable while the vector grows.
    #[allow(clippy::vec_box)]
    types: Mutex<Vec<Box<TypeLayout>>>,
    requests: Mutex<Vec<TypeRequest>>,
    missing_fields: Mutex<Vec<(String, String)>>,
}

/// An executable image set up in the DLL (`mqs_setup_image` and `mqs_image_has_queues`
/// succeeded).
pub struct Image {
    dll: Dll,
    state: Box<ImageState>,
}

impl std::fmt::Debug for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Image")
            .field("dll", &self.dll)
            .field("types", &self.type_requests())
            .finish()
    }
}

impl Image {
    /// Sets up `target` in `dll` and asks whether it has message queues. A missing type is
    /// [`MqdError::MissingType`] naming it.
    #[doc(alias = "mqs_setup_image")]
    #[doc(alias = "mqs_image_has_queues")]
    pub fn new(dll: &Dll, target: Box<dyn ImageTarget>) -> Result<Image, MqdError> {
        let image = Image {
            dll: dll.clone(),
            state: Box::new(ImageState {
                target,
                info: AtomicPtr::new(ptr::null_mut()),
                types: Mutex::new(Vec::new()),
                requests: Mutex::new(Vec::new()),
                missing_fields: Mutex::new(Vec::new()),
            }),
        };
        let e = dll.inner.entry;
        let handle = image.handle();
        let _guard = lock();
        // SAFETY: `handle` points at the boxed state, which lives until `image` drops (after
        // `mqs_destroy_image_info`); `IMAGE_CALLBACKS` is static.
        let rc = unsafe { (e.setup_image)(handle, &IMAGE_CALLBACKS) };
        if rc != MQS_OK {
            return Err(dll.failure("mqs_setup_image", rc, None));
        }
        let mut message: *mut c_char = ptr::null_mut();
        // SAFETY: as above; `message` is a valid out-pointer.
        let rc = unsafe { (e.image_has_queues)(handle, &mut message) };
        if rc != MQS_OK {
            let message = dll_string(message);
            if rc == err::err_missing_type {
                return Err(MqdError::MissingType {
                    name: message.unwrap_or_default(),
                    dll_text: dll.error_string_locked(rc),
                });
            }
            return Err(dll.failure("mqs_image_has_queues", rc, message));
        }
        Ok(image)
    }

    fn handle(&self) -> *mut ImageHandle {
        (&*self.state as *const ImageState).cast_mut().cast()
    }

    /// The DLL.
    pub fn dll(&self) -> &Dll {
        &self.dll
    }

    /// Every type the DLL asked for, in order, and whether it was found.
    pub fn type_requests(&self) -> Vec<TypeRequest> {
        self.state
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Every `(type, member)` the DLL asked an offset for that the type lacks.
    pub fn missing_fields(&self) -> Vec<(String, String)> {
        self.state
            .missing_fields
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Sets up a process running this image (`mqs_setup_process`,
    /// `mqs_process_has_queues`).
    #[doc(alias = "mqs_setup_process")]
    #[doc(alias = "mqs_process_has_queues")]
    pub fn process(&self, target: Box<dyn ProcessTarget>) -> Result<Process<'_>, MqdError> {
        let process = Process {
            image: self,
            state: Box::new(ProcessState {
                target,
                image: &*self.state,
                info: AtomicPtr::new(ptr::null_mut()),
            }),
        };
        let e = self.dll.inner.entry;
        let handle = process.handle();
        let _guard = lock();
        // SAFETY: `handle` points at the boxed state, alive until `process` drops (after
        // `mqs_destroy_process_info`); its image state outlives it (the borrow of `self`);
        // `PROCESS_CALLBACKS` is static.
        let rc = unsafe { (e.setup_process)(handle, &PROCESS_CALLBACKS) };
        if rc != MQS_OK {
            return Err(self.dll.failure("mqs_setup_process", rc, None));
        }
        let mut message: *mut c_char = ptr::null_mut();
        // SAFETY: as above; `message` is a valid out-pointer.
        let rc = unsafe { (e.process_has_queues)(handle, &mut message) };
        if rc != MQS_OK {
            return Err(self
                .dll
                .failure("mqs_process_has_queues", rc, dll_string(message)));
        }
        Ok(process)
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        let info = self.state.info.swap(ptr::null_mut(), Ordering::AcqRel);
        if !info.is_null() {
            let _guard = lock();
            // SAFETY: `info` is what the DLL hung on this image, handed back once.
            unsafe { (self.dll.inner.entry.destroy_image_info)(info) };
        }
    }
}

struct ProcessState {
    target: Box<dyn ProcessTarget>,
    image: *const ImageState,
    info: AtomicPtr<ProcessInfo>,
}

/// One queue of a communicator.
#[derive(Debug)]
pub enum Queue {
    /// Its operations, in matching order.
    Operations(Vec<PendingOperation>),
    /// The DLL has no information about this queue (`mqs_no_information`; Open MPI 4.1's DLL
    /// for the unexpected messages).
    NoInformation,
    /// Setting up or stepping the iteration failed (or, after the DLL had no information,
    /// reading ob1's structures did: [`MqdError::Ob1`]).
    Failed(MqdError),
    /// The DLL had no information; mqd-types read these unexpected messages itself from the
    /// ob1 PML's structures ([`crate::ob1`]), per peer in arrival order.
    FromOb1(Vec<crate::ob1::Ob1Message>),
}

impl Queue {
    /// The operations, if the DLL listed them.
    pub fn operations(&self) -> Option<&[PendingOperation]> {
        match self {
            Queue::Operations(v) => Some(v),
            _ => None,
        }
    }
}

/// A communicator with its group and queues.
#[derive(Debug)]
pub struct CommunicatorQueues {
    /// The DLL's description.
    pub communicator: Communicator,
    /// `MPI_COMM_WORLD` ranks of its members (`mqs_get_comm_group`), if the DLL gave them.
    pub group: Option<Vec<c_int>>,
    /// The queues asked for, in the order asked.
    pub queues: Vec<(OpClass, Queue)>,
}

impl CommunicatorQueues {
    /// The queue of `class`, if it was asked for.
    pub fn queue(&self, class: OpClass) -> Option<&Queue> {
        self.queues
            .iter()
            .find(|(c, _)| *c == class)
            .map(|(_, q)| q)
    }
}

/// Most communicators or operations one iteration visits before it is called runaway.
pub const ITERATION_LIMIT: usize = 1 << 16;

/// A process set up in the DLL.
pub struct Process<'i> {
    image: &'i Image,
    state: Box<ProcessState>,
}

impl std::fmt::Debug for Process<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Process")
            .field("rank", &self.state.target.global_rank())
            .finish()
    }
}

impl Process<'_> {
    fn handle(&self) -> *mut ProcessHandle {
        (&*self.state as *const ProcessState).cast_mut().cast()
    }

    /// The image it runs.
    pub fn image(&self) -> &Image {
        self.image
    }

    /// The process's communicators and the queues `classes` of each
    /// (`mqs_update_communicator_list`, the communicator iterator, `mqs_get_comm_group`,
    /// the operation iterator).
    #[doc(alias = "mqs_update_communicator_list")]
    #[doc(alias = "mqs_next_operation")]
    pub fn queues(&mut self, classes: &[OpClass]) -> Result<Vec<CommunicatorQueues>, MqdError> {
        let dll = &self.image.dll;
        let e = dll.inner.entry;
        let h = self.handle();
        let _guard = lock();
        // SAFETY: `h` is this process's handle, alive for the borrow of `self` (so are the
        // other calls of this function); out-pointers point at locals of the header's types.
        let rc = unsafe { (e.update_communicator_list)(h) };
        if rc != MQS_OK {
            return Err(dll.failure("mqs_update_communicator_list", rc, None));
        }
        // SAFETY: see above.
        let mut rc = unsafe { (e.setup_communicator_iterator)(h) };
        let mut out = Vec::new();
        while rc == MQS_OK {
            if out.len() >= ITERATION_LIMIT {
                return Err(MqdError::Runaway {
                    class: OpClass::PendingSends,
                    comm: 0,
                    limit: ITERATION_LIMIT,
                });
            }
            let mut comm = Communicator::zeroed();
            // SAFETY: see above.
            let grc = unsafe { (e.get_communicator)(h, &mut comm) };
            if grc != MQS_OK {
                return Err(dll.failure("mqs_get_communicator", grc, None));
            }
            let group = usize::try_from(comm.size)
                .ok()
                .filter(|&n| n <= ITERATION_LIMIT)
                .and_then(|n| {
                    let mut ranks: Vec<c_int> = vec![0; n];
                    // SAFETY: see above; the DLL writes `size` ints (Open MPI: the entries of
                    // the group the size was taken from), the buffer has room for them.
                    (unsafe { (e.get_comm_group)(h, ranks.as_mut_ptr()) } == MQS_OK)
                        .then_some(ranks)
                });
            let mut queues = Vec::new();
            for &class in classes {
                queues.push((class, self.queue_locked(&comm, class)));
            }
            out.push(CommunicatorQueues {
                communicator: comm,
                group,
                queues,
            });
            // SAFETY: see above.
            rc = unsafe { (e.next_communicator)(h) };
        }
        if rc != MQS_END_OF_LIST {
            return Err(dll.failure("mqs_next_communicator", rc, None));
        }
        Ok(out)
    }

    fn queue_locked(&self, comm: &Communicator, class: OpClass) -> Queue {
        let dll = &self.image.dll;
        let e = dll.inner.entry;
        let h = self.handle();
        // SAFETY: `h` is this process's handle; the caller holds the lock.
        let rc = unsafe { (e.setup_operation_iterator)(h, class as c_int) };
        match rc {
            MQS_OK => {}
            MQS_NO_INFORMATION => return Queue::NoInformation,
            rc => {
                return Queue::Failed(dll.failure("mqs_setup_operation_iterator", rc, None));
            }
        }
        let mut ops = Vec::new();
        loop {
            if ops.len() >= ITERATION_LIMIT {
                return Queue::Failed(MqdError::Runaway {
                    class,
                    comm: comm.unique_id,
                    limit: ITERATION_LIMIT,
                });
            }
            let mut op = PendingOperation::zeroed();
            // SAFETY: as above; `op` is a valid out-pointer.
            match unsafe { (e.next_operation)(h, &mut op) } {
                MQS_OK => ops.push(op),
                MQS_END_OF_LIST => return Queue::Operations(ops),
                rc => return Queue::Failed(dll.failure("mqs_next_operation", rc, None)),
            }
        }
    }
}

impl Drop for Process<'_> {
    fn drop(&mut self) {
        let info = self.state.info.swap(ptr::null_mut(), Ordering::AcqRel);
        if !info.is_null() {
            let _guard = lock();
            // SAFETY: `info` is what the DLL hung on this process, handed back once.
            unsafe { (self.image.dll.inner.entry.destroy_process_info)(info) };
        }
    }
}

// ---- the callback tables -------------------------------------------------------------------

static BASIC_CALLBACKS: BasicCallbacks = BasicCallbacks {
    mqs_malloc_fp: Some(cb_malloc),
    mqs_free_fp: Some(cb_free),
    mqs_dprints_fp: Some(cb_dprints),
    mqs_errorstring_fp: Some(cb_errorstring),
    mqs_put_image_info_fp: Some(cb_put_image_info),
    mqs_get_image_info_fp: Some(cb_get_image_info),
    mqs_put_process_info_fp: Some(cb_put_process_info),
    mqs_get_process_info_fp: Some(cb_get_process_info),
};

static IMAGE_CALLBACKS: ImageCallbacks = ImageCallbacks {
    mqs_get_type_sizes_fp: Some(cb_get_type_sizes),
    mqs_find_function_fp: Some(cb_find_function),
    mqs_find_symbol_fp: Some(cb_find_symbol),
    mqs_find_type_fp: Some(cb_find_type),
    mqs_field_offset_fp: Some(cb_field_offset),
    mqs_sizeof_fp: Some(cb_sizeof),
};

static PROCESS_CALLBACKS: ProcessCallbacks = ProcessCallbacks {
    mqs_get_global_rank_fp: Some(cb_get_global_rank),
    mqs_get_image_fp: Some(cb_get_image),
    mqs_fetch_data_fp: Some(cb_fetch_data),
    mqs_target_to_host_fp: Some(cb_target_to_host),
};

/// Runs `f`, answering `fallback` if it panics (no unwinding into C).
fn guard<R>(fallback: R, f: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// The image state behind a handle.
///
/// # Safety
/// `h` is NULL or a handle this module gave the DLL whose [`Image`] is alive.
unsafe fn image_state<'a>(h: *mut ImageHandle) -> Option<&'a ImageState> {
    // SAFETY: per the contract, a non-NULL `h` points at a live boxed `ImageState`.
    unsafe { h.cast::<ImageState>().as_ref() }
}

/// The process state behind a handle.
///
/// # Safety
/// `h` is NULL or a handle this module gave the DLL whose [`Process`] is alive.
unsafe fn process_state<'a>(h: *mut ProcessHandle) -> Option<&'a ProcessState> {
    // SAFETY: per the contract, a non-NULL `h` points at a live boxed `ProcessState`.
    unsafe { h.cast::<ProcessState>().as_ref() }
}

/// A name the DLL passed.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn name_arg(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: per the contract.
    Some(c_text(unsafe { CStr::from_ptr(p) }))
}

unsafe extern "C" fn cb_malloc(size: usize) -> *mut c_void {
    // SAFETY: the C allocator accepts any size (NULL on failure, which the DLL checks).
    unsafe { malloc(size) }
}

unsafe extern "C" fn cb_free(p: *mut c_void) {
    // SAFETY: the DLL frees what `cb_malloc` gave it (or NULL).
    unsafe { free(p) }
}

unsafe extern "C" fn cb_dprints(text: *const c_char) {
    guard((), || {
        // SAFETY: the DLL passes a NUL-terminated message (or NULL).
        if let Some(t) = unsafe { name_arg(text) } {
            eprint!("mqd dll: {t}");
        }
    })
}

/// The debugger's own error codes: `mqs_no_information` is all it returns.
unsafe extern "C" fn cb_errorstring(code: c_int) -> *mut c_char {
    let text: &'static CStr = match code {
        MQS_OK => c"ok",
        MQS_NO_INFORMATION => c"the debugger has no such information (symbol, type or memory)",
        MQS_END_OF_LIST => c"end of list",
        _ => c"unknown debugger error",
    };
    // The DLL only reads the string.
    text.as_ptr().cast_mut()
}

unsafe extern "C" fn cb_put_image_info(h: *mut ImageHandle, info: *mut ImageInfo) {
    guard((), || {
        // SAFETY: the DLL passes handles this module gave it, of live images.
        if let Some(s) = unsafe { image_state(h) } {
            s.info.store(info, Ordering::Release);
        }
    })
}

unsafe extern "C" fn cb_get_image_info(h: *mut ImageHandle) -> *mut ImageInfo {
    guard(ptr::null_mut(), || {
        // SAFETY: as in `cb_put_image_info`.
        unsafe { image_state(h) }.map_or(ptr::null_mut(), |s| s.info.load(Ordering::Acquire))
    })
}

unsafe extern "C" fn cb_put_process_info(h: *mut ProcessHandle, info: *mut ProcessInfo) {
    guard((), || {
        // SAFETY: the DLL passes handles this module gave it, of live processes.
        if let Some(s) = unsafe { process_state(h) } {
            s.info.store(info, Ordering::Release);
        }
    })
}

unsafe extern "C" fn cb_get_process_info(h: *mut ProcessHandle) -> *mut ProcessInfo {
    guard(ptr::null_mut(), || {
        // SAFETY: as in `cb_put_process_info`.
        unsafe { process_state(h) }.map_or(ptr::null_mut(), |s| s.info.load(Ordering::Acquire))
    })
}

unsafe extern "C" fn cb_get_type_sizes(h: *mut ProcessHandle, out: *mut TargetTypeSizes) {
    guard((), || {
        // SAFETY: a live process's handle; `out` is the DLL's record or NULL.
        if let (Some(s), Some(out)) = (unsafe { process_state(h) }, unsafe { out.as_mut() }) {
            *out = s.target.type_sizes();
        }
    })
}

/// Writes `addr` through an optional out-pointer and answers the lookup.
///
/// # Safety
/// `out` is NULL or points at a writable `mqs_taddr_t`.
unsafe fn answer(addr: Option<u64>, out: *mut TAddr) -> c_int {
    match addr {
        Some(a) => {
            // SAFETY: per the contract (Open MPI's DLL passes NULL to test presence only).
            if let Some(out) = unsafe { out.as_mut() } {
                *out = a as TAddr;
            }
            MQS_OK
        }
        None => MQS_NO_INFORMATION,
    }
}

unsafe extern "C" fn cb_find_function(
    h: *mut ImageHandle,
    name: *mut c_char,
    lang: RawLangCode,
    out: *mut TAddr,
) -> c_int {
    guard(MQS_NO_INFORMATION, || {
        // SAFETY: a live image's handle and a NUL-terminated name from the DLL.
        let (Some(s), Some(name)) = (unsafe { image_state(h) }, unsafe { name_arg(name) }) else {
            return MQS_NO_INFORMATION;
        };
        let lang = LangCode::try_from(lang).unwrap_or(LangCode::C);
        // SAFETY: `out` is the DLL's out-pointer or NULL.
        unsafe { answer(s.target.find_function(&name, lang), out) }
    })
}

unsafe extern "C" fn cb_find_symbol(
    h: *mut ImageHandle,
    name: *mut c_char,
    out: *mut TAddr,
) -> c_int {
    guard(MQS_NO_INFORMATION, || {
        // SAFETY: a live image's handle and a NUL-terminated name from the DLL.
        let (Some(s), Some(name)) = (unsafe { image_state(h) }, unsafe { name_arg(name) }) else {
            return MQS_NO_INFORMATION;
        };
        // SAFETY: `out` is the DLL's out-pointer or NULL.
        unsafe { answer(s.target.find_symbol(&name), out) }
    })
}

unsafe extern "C" fn cb_find_type(
    h: *mut ImageHandle,
    name: *mut c_char,
    lang: RawLangCode,
) -> *mut TypeHandle {
    guard(ptr::null_mut(), || {
        // SAFETY: a live image's handle and a NUL-terminated name from the DLL.
        let (Some(s), Some(name)) = (unsafe { image_state(h) }, unsafe { name_arg(name) }) else {
            return ptr::null_mut();
        };
        let lang = LangCode::try_from(lang).unwrap_or(LangCode::C);
        let found = s.target.find_type(&name, lang);
        s.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(TypeRequest {
                name,
                found: found.is_some(),
            });
        let Some(layout) = found else {
            return ptr::null_mut();
        };
        // The box's address is the handle; the image keeps every box until it drops.
        let boxed = Box::new(layout);
        let handle = (&*boxed as *const TypeLayout).cast_mut().cast();
        s.types
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(boxed);
        handle
    })
}

/// The layout behind a type handle.
///
/// # Safety
/// `t` is NULL or a handle `cb_find_type` returned for an image that is alive.
unsafe fn type_layout<'a>(t: *mut TypeHandle) -> Option<&'a TypeLayout> {
    // SAFETY: per the contract, a boxed `TypeLayout` its image keeps.
    unsafe { t.cast::<TypeLayout>().as_ref() }
}

unsafe extern "C" fn cb_field_offset(t: *mut TypeHandle, field: *mut c_char) -> c_int {
    guard(-1, || {
        // SAFETY: a type handle of a live image and a NUL-terminated name from the DLL.
        let (Some(l), Some(field)) = (unsafe { type_layout(t) }, unsafe { name_arg(field) }) else {
            return -1;
        };
        l.field_offset(&field)
            .and_then(|o| c_int::try_from(o).ok())
            .unwrap_or(-1)
    })
}

unsafe extern "C" fn cb_sizeof(t: *mut TypeHandle) -> c_int {
    guard(0, || {
        // SAFETY: a type handle of a live image.
        unsafe { type_layout(t) }.map_or(0, |l| c_int::try_from(l.size).unwrap_or(0))
    })
}

unsafe extern "C" fn cb_get_global_rank(h: *mut ProcessHandle) -> c_int {
    guard(INVALID_PROCESS, || {
        // SAFETY: a live process's handle.
        unsafe { process_state(h) }
            .and_then(|s| s.target.global_rank())
            .unwrap_or(INVALID_PROCESS)
    })
}

unsafe extern "C" fn cb_get_image(h: *mut ProcessHandle) -> *mut ImageHandle {
    guard(ptr::null_mut(), || {
        // SAFETY: a live process's handle; its image outlives it.
        unsafe { process_state(h) }.map_or(ptr::null_mut(), |s| s.image.cast_mut().cast())
    })
}

unsafe extern "C" fn cb_fetch_data(
    h: *mut ProcessHandle,
    addr: TAddr,
    size: c_int,
    buf: *mut c_void,
) -> c_int {
    guard(MQS_NO_INFORMATION, || {
        // SAFETY: a live process's handle.
        let Some(s) = (unsafe { process_state(h) }) else {
            return MQS_NO_INFORMATION;
        };
        let Ok(len) = usize::try_from(size) else {
            return MQS_NO_INFORMATION;
        };
        if len == 0 {
            return MQS_OK;
        }
        if buf.is_null() {
            return MQS_NO_INFORMATION;
        }
        // SAFETY: the DLL passes a buffer of at least `size` bytes for the data.
        let buf = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), len) };
        // `mqs_taddr_t` is `unsigned long`: 64 bits here, 32 on LLP64 hosts.
        #[allow(clippy::useless_conversion)]
        let addr = u64::from(addr);
        if s.target.fetch(addr, buf) {
            MQS_OK
        } else {
            MQS_NO_INFORMATION
        }
    })
}

unsafe extern "C" fn cb_target_to_host(
    h: *mut ProcessHandle,
    src: *const c_void,
    dst: *mut c_void,
    size: c_int,
) {
    guard((), || {
        // SAFETY: a live process's handle.
        let Some(s) = (unsafe { process_state(h) }) else {
            return;
        };
        let Ok(len) = usize::try_from(size) else {
            return;
        };
        if len == 0 || src.is_null() || dst.is_null() {
            return;
        }
        // SAFETY: the DLL passes `size` readable bytes at `src` and `size` writable ones at
        // `dst` (distinct buffers in Open MPI's DLL: a local and a field).
        let (src, dst) = unsafe {
            (
                std::slice::from_raw_parts(src.cast::<u8>(), len),
                std::slice::from_raw_parts_mut(dst.cast::<u8>(), len),
            )
        };
        s.target.target_to_host(src, dst);
    })
}
