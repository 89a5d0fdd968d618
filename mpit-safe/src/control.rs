//! Control variables: handles, typed and dynamic reads and writes (MPI-4.1 §16.3.6).

#![forbid(unsafe_code)]

use std::marker::PhantomData;

use mpit_core::{CvarInfo, Datatype, Error, MpiString, Result, Scalar, Value};

use crate::constant;
use crate::ffi::{self, RawCvarHandle};
use crate::init::{Mpit, level::Level};
use crate::object::{MpiObject, NoObject};
use crate::query::index_arg;

/// Ties a handle to its init token and element type without owning either.
type Borrow<'a, L, T> = PhantomData<(&'a Mpit<L>, fn() -> T)>;

/// A handle on one control variable bound to one object, reading and writing `T`.
///
/// MPI-4.1 §16.3.6, `MPI_T_cvar_handle`.
///
/// `T` is checked against the variable's datatype when the handle is allocated
/// ([`Error::TypeMismatch`] otherwise), so a read never reinterprets bytes. The handle borrows
/// the init token and the bound object and frees itself (`MPI_T_cvar_handle_free`) on drop.
///
/// ```
/// use mpit_safe::{Mpit, Datatype};
/// let mpit = Mpit::init()?;
/// // The first unbound integer control variable of this MPI, whatever it is.
/// let cvars = mpit.cvars()?;
/// if let Some(v) = cvars.entries.iter().find(|v| {
///     v.datatype == Datatype::Int && v.bind == mpit_safe::Bind::NoObject
/// }) {
///     let h = mpit.cvar_handle::<i32>(v.index)?;
///     if h.count() == 1 {
///         println!("{} = {}", v.name, h.read()?);
///     }
/// }
/// # Ok::<(), mpit_safe::Error>(())
/// ```
#[doc(alias = "MPI_T_cvar_handle")]
pub struct CvarHandle<'a, T, L: Level = crate::level::Single> {
    handle: RawCvarHandle<'a, L>,
    count: usize,
    /// `count` where no hazard applies, else `usize::MAX`: the reads' one check of both.
    plain: usize,
    info: CvarInfo,
    /// What a known implementation bug makes of reads and writes ([`Hazard::of`]).
    hazard: Hazard,
    _borrow: Borrow<'a, L, T>,
}

/// What a known implementation bug makes of a control variable's reads and writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hazard {
    /// None known: calls go through.
    None,
    /// Open MPI 4.1.4 reads freed memory in `MPI_T_cvar_read` of some integer and boolean
    /// variables of components that `MPI_Init` closes while their variables stay registered:
    /// - the UCX common library's and each UCX component's (`opal_common_ucx_verbose`,
    ///   `osc_ucx_progress_iterations`, `pml_ucx_opal_mem_hooks`, ...: nine here, when UCX is
    ///   not selected): a segfault on every read after `MPI_Init` (found with `mpit-list`);
    /// - the OFI ones' `verbose` (`opal_common_ofi_verbose`, `btl_ofi_verbose`,
    ///   `mtl_ofi_verbose`): a segfault after `MPI_Init` when the variables were listed before
    ///   it (found by `mpit-conform`'s sweep; reproduced through this API by `mpit.cvars()`
    ///   before `MPI_Init`, then a read after it), otherwise a read of freed memory that
    ///   happens to return 0.
    ///
    /// The string ones read fine. Reads and writes are refused once MPI is initialised.
    ClosedComponent,
    /// Open MPI 5.0's storage in a dead stack frame
    /// ([`OPEN_MPI_DANGLING_CVAR_STORAGE`](crate::quirks::OPEN_MPI_DANGLING_CVAR_STORAGE)):
    /// found by `writes_follow_the_scope` (a read after writing the value read returned
    /// another). Reads and writes are always refused.
    DanglingStorage,
}

impl Hazard {
    fn of(info: &CvarInfo) -> Hazard {
        use crate::quirks::{
            OPEN_MPI_CLOSED_COMPONENT_CVARS, OPEN_MPI_DANGLING_CVAR_STORAGE, applies,
        };
        let name = info.name.as_bytes();
        if applies(&OPEN_MPI_CLOSED_COMPONENT_CVARS)
            && info.datatype != Datatype::Char
            && (["verbose", "progress_iterations", "opal_mem_hooks"]
                .iter()
                .any(|v| name.ends_with(format!("_ucx_{v}").as_bytes()))
                || name.ends_with(b"_ofi_verbose"))
        {
            Hazard::ClosedComponent
        } else if applies(&OPEN_MPI_DANGLING_CVAR_STORAGE)
            && (name == b"mpi_ft_verbose"
                || (name == b"mpi_ft_enable" && info.scope == mpit_core::Scope::Constant))
        {
            Hazard::DanglingStorage
        } else {
            Hazard::None
        }
    }

    /// `Err(KnownCrash)` where a call on the variable must not be made now.
    #[cold]
    #[inline(never)]
    fn check(self) -> Result<()> {
        match self {
            Hazard::None => Ok(()),
            Hazard::ClosedComponent if !mpi_initialized()? => Ok(()),
            Hazard::ClosedComponent => Err(Error::KnownCrash(
                &crate::quirks::OPEN_MPI_CLOSED_COMPONENT_CVARS,
            )),
            Hazard::DanglingStorage => Err(Error::KnownCrash(
                &crate::quirks::OPEN_MPI_DANGLING_CVAR_STORAGE,
            )),
        }
    }
}

/// Whether `MPI_Init` has been called (or finalized).
fn mpi_initialized() -> Result<bool> {
    Ok(ffi::initialized()? || ffi::finalized()?)
}

impl<T, L: Level> std::fmt::Debug for CvarHandle<'_, T, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CvarHandle")
            .field("name", &self.info.name)
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

/// A control variable handle for tools that learn types at run time: values as [`Value`].
pub type DynCvarHandle<'a, L = crate::level::Single> = CvarHandle<'a, Value, L>;

impl<L: Level> Mpit<L> {
    fn alloc_cvar<'a, T>(
        &'a self,
        index: usize,
        obj: &'a (impl MpiObject + ?Sized),
        type_ok: impl FnOnce(Datatype) -> Result<()>,
    ) -> Result<CvarHandle<'a, T, L>> {
        let i = index_arg(&self.init, index)?;
        let info = self.cvar_info_at(i)?;
        type_ok(info.datatype)?;
        // The object's kind is checked against the variable's binding there; the handles
        // borrow `obj`, so it outlives them.
        let (handle, count) = ffi::cvar_handle_alloc(&self.init, i, obj.raw_object())?;
        let hazard = Hazard::of(&info);
        Ok(CvarHandle {
            handle,
            count,
            plain: if hazard == Hazard::None {
                count
            } else {
                usize::MAX
            },
            hazard,
            info,
            _borrow: PhantomData,
        })
    }

    /// A handle on the unbound control variable `index`, reading and writing `T`.
    ///
    /// MPI-4.1 §16.3.6, `MPI_T_cvar_handle_alloc`.
    #[doc(alias = "MPI_T_cvar_handle_alloc")]
    pub fn cvar_handle<T: Scalar>(&self, index: usize) -> Result<CvarHandle<'_, T, L>> {
        self.alloc_cvar(index, &NoObject, T::check)
    }

    /// A handle on control variable `index` bound to `obj`; the object's kind must be the
    /// variable's binding ([`Error::BindMismatch`] otherwise).
    ///
    /// MPI-4.1 §16.3.6, `MPI_T_cvar_handle_alloc`.
    #[doc(alias = "MPI_T_cvar_handle_alloc")]
    pub fn cvar_handle_for<'a, T: Scalar, O: MpiObject + ?Sized>(
        &'a self,
        index: usize,
        obj: &'a O,
    ) -> Result<CvarHandle<'a, T, L>> {
        self.alloc_cvar(index, obj, T::check)
    }

    /// A dynamic handle on control variable `index` bound to `obj` (use [`NoObject`] for
    /// unbound variables): values of whatever datatype the variable has.
    pub fn dyn_cvar_handle<'a, O: MpiObject + ?Sized>(
        &'a self,
        index: usize,
        obj: &'a O,
    ) -> Result<DynCvarHandle<'a, L>> {
        self.alloc_cvar(index, obj, |_| Ok(()))
    }
}

impl<T, L: Level> CvarHandle<'_, T, L> {
    /// The number of elements of the variable for the bound object.
    pub fn count(&self) -> usize {
        self.count
    }

    /// What `MPI_T_cvar_get_info` said about the variable.
    pub fn info(&self) -> &CvarInfo {
        &self.info
    }

    #[inline(always)]
    fn read_raw<U: Scalar>(&self, buf: &mut [U]) -> Result<()> {
        if self.hazard != Hazard::None {
            self.hazard.check()?;
        }
        ffi::cvar_read(&self.handle, buf)
    }

    fn write_raw<U: Scalar>(&self, buf: &[U]) -> Result<()> {
        if self.hazard != Hazard::None {
            self.hazard.check()?;
        }
        ffi::cvar_write(&self.handle, buf)
    }

    #[inline(always)]
    fn expect_count(&self, got: usize) -> Result<()> {
        constant::expect_count(self.count, got)
    }
}

impl<T: Scalar + Default, L: Level> CvarHandle<'_, T, L> {
    /// Reads a variable of one element.
    ///
    /// MPI-4.1 §16.3.6, `MPI_T_cvar_read`.
    #[doc(alias = "MPI_T_cvar_read")]
    #[inline(always)]
    pub fn read(&self) -> Result<T> {
        let mut v = T::default();
        if self.plain == 1 {
            ffi::cvar_read(&self.handle, std::slice::from_mut(&mut v))?;
        } else {
            self.expect_count(1)?;
            self.read_raw(std::slice::from_mut(&mut v))?;
        }
        Ok(v)
    }

    /// Reads all `count` elements into `out` (its length must be the count).
    ///
    /// MPI-4.1 §16.3.6, `MPI_T_cvar_read`.
    #[doc(alias = "MPI_T_cvar_read")]
    #[inline(always)]
    pub fn read_into(&self, out: &mut [T]) -> Result<()> {
        if self.plain == out.len() {
            return ffi::cvar_read(&self.handle, out);
        }
        self.expect_count(out.len())?;
        self.read_raw(out)
    }

    /// Writes a variable of one element. Refusals come back as
    /// [`ErrorClass::CvarSetNotNow`](crate::ErrorClass::CvarSetNotNow) (may succeed later) or
    /// [`ErrorClass::CvarSetNever`](crate::ErrorClass::CvarSetNever).
    ///
    /// MPI-4.1 §16.3.6, `MPI_T_cvar_write`.
    #[doc(alias = "MPI_T_cvar_write")]
    pub fn write(&self, value: T) -> Result<()> {
        self.expect_count(1)?;
        self.write_raw(&[value])
    }

    /// Writes all `count` elements from `values`.
    ///
    /// MPI-4.1 §16.3.6, `MPI_T_cvar_write`.
    #[doc(alias = "MPI_T_cvar_write")]
    pub fn write_from(&self, values: &[T]) -> Result<()> {
        self.expect_count(values.len())?;
        self.write_raw(values)
    }
}

impl<L: Level> CvarHandle<'_, u8, L> {
    /// Reads an `MPI_CHAR` variable as a string (its count includes the NUL).
    pub fn read_string(&self) -> Result<MpiString> {
        let mut buf = vec![0u8; self.count.max(1)];
        self.read_into(&mut buf)?;
        Ok(MpiString::from_nul_terminated(&buf))
    }

    /// Writes an `MPI_CHAR` variable from a string, NUL-padded to the count; a string that
    /// does not fit with its NUL is [`Error::CountMismatch`] (the variable's count against the
    /// string's length with its NUL).
    #[doc(alias = "MPI_T_cvar_write")]
    pub fn write_str(&self, s: &str) -> Result<()> {
        self.write_from(&MpiString::new(s)?.to_nul_padded(self.count)?)
    }
}

impl<L: Level> CvarHandle<'_, Value, L> {
    fn byte_len(&self) -> usize {
        self.info.datatype.size() * self.count
    }

    /// Reads all elements as [`Value`]s of the variable's datatype.
    ///
    /// MPI-4.1 §16.3.6, `MPI_T_cvar_read`.
    #[doc(alias = "MPI_T_cvar_read")]
    pub fn read_values(&self) -> Result<Vec<Value>> {
        constant::read_values(self.info.datatype, self.count, |buf| self.read_raw(buf))
    }

    /// Reads an `MPI_CHAR` variable as one string (its count includes the NUL), as
    /// [`CvarHandle::<u8>::read_string`](CvarHandle::read_string) does; any other datatype is
    /// [`Error::TypeMismatch`]. [`read_values`](Self::read_values) gives such a variable one
    /// [`Value::Char`] per byte, NULs included.
    ///
    /// MPI-4.1 §16.3.6, `MPI_T_cvar_read`.
    #[doc(alias = "MPI_T_cvar_read")]
    pub fn read_string(&self) -> Result<MpiString> {
        if self.info.datatype != Datatype::Char {
            return Err(Error::type_mismatch(self.info.datatype, "MpiString"));
        }
        let mut buf = vec![0u8; self.count.max(1)];
        self.read_raw(&mut buf)?;
        Ok(MpiString::from_nul_terminated(&buf))
    }

    /// Reads the variable as text, the form [`write_str`](Self::write_str) takes back: the
    /// string of an `MPI_CHAR` variable, otherwise its values' [`Display`](std::fmt::Display)
    /// separated by commas.
    ///
    /// ```
    /// use mpit_safe::{Bind, Datatype, Mpit, NoObject};
    /// let mpit = Mpit::init()?;
    /// for v in mpit.cvars()?.entries.iter().filter(|v| v.bind == Bind::NoObject).take(20) {
    ///     let h = mpit.dyn_cvar_handle(v.index, &NoObject)?;
    ///     if let Ok(text) = h.read_text() {
    ///         // A string variable reads as its text, never as one character per element.
    ///         assert!(v.datatype != Datatype::Char || !text.contains('\0'));
    ///         println!("{} = {text}", v.name);
    ///     }
    /// }
    /// # Ok::<(), mpit_safe::Error>(())
    /// ```
    ///
    /// MPI-4.1 §16.3.6, `MPI_T_cvar_read`.
    #[doc(alias = "MPI_T_cvar_read")]
    pub fn read_text(&self) -> Result<String> {
        if self.info.datatype == Datatype::Char {
            return Ok(self.read_string()?.to_string_lossy().into_owned());
        }
        let values = self.read_values()?;
        let text: Vec<String> = values.iter().map(ToString::to_string).collect();
        Ok(text.join(","))
    }

    /// Writes the variable from text, as a tool given a value on its command line or in a
    /// file: a string for an `MPI_CHAR` variable (NUL-padded to the count), an item's name or a
    /// number for a variable with an enumeration (`MPI_T_enum`), otherwise what
    /// [`Value::parse`] reads for the variable's datatype (`Display` of a value read from it
    /// included); a variable of more than one element takes exactly `count` elements
    /// separated by commas. The rules are [`CvarInfo::parse_values`]'s.
    ///
    /// Errors: a text that does not parse is [`Error::Parse`], a number the datatype cannot
    /// hold [`Error::NotRepresentable`], a wrong number of elements (or a string too long for
    /// the count) [`Error::CountMismatch`], all before MPI is called; then what
    /// [`write_values`](Self::write_values) returns (a refusal is
    /// [`ErrorClass::CvarSetNotNow`](crate::ErrorClass::CvarSetNotNow) or
    /// [`ErrorClass::CvarSetNever`](crate::ErrorClass::CvarSetNever)).
    ///
    /// MPI-4.1 §16.3.6, `MPI_T_cvar_write`.
    ///
    /// ```
    /// use mpit_safe::{Mpit, NoObject};
    /// let mpit = Mpit::init()?;
    /// let cvars = mpit.cvars()?;
    /// // Write the first unbound writable variable's own value back, as text.
    /// if let Some(v) = cvars
    ///     .entries
    ///     .iter()
    ///     .find(|v| v.scope.is_writable() && v.bind == mpit_safe::Bind::NoObject)
    /// {
    ///     let h = mpit.dyn_cvar_handle(v.index, &NoObject)?;
    ///     if let Ok(values) = h.read_values() {
    ///         if values.len() == 1 {
    ///             let _ = h.write_str(&values[0].to_string()); // may be refused now
    ///         }
    ///     }
    /// }
    /// # Ok::<(), mpit_safe::Error>(())
    /// ```
    #[doc(alias = "MPI_T_cvar_write")]
    pub fn write_str(&self, text: &str) -> Result<()> {
        self.write_values(&self.info.parse_values(self.count, text)?)
    }

    /// Writes all elements; each value must be of the variable's datatype.
    ///
    /// MPI-4.1 §16.3.6, `MPI_T_cvar_write`.
    #[doc(alias = "MPI_T_cvar_write")]
    pub fn write_values(&self, values: &[Value]) -> Result<()> {
        self.expect_count(values.len())?;
        let size = self.info.datatype.size();
        let mut bytes = vec![0u8; self.byte_len()];
        for (v, out) in values.iter().zip(bytes.chunks_mut(size)) {
            if v.datatype() != self.info.datatype {
                return Err(Error::type_mismatch(self.info.datatype, "Value"));
            }
            v.write_ne_bytes(out)?;
        }
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        for (w, chunk) in words.iter_mut().zip(bytes.chunks(8)) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            *w = u64::from_ne_bytes(b);
        }
        self.write_raw(&words)
    }
}
