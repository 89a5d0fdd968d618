//! The crate's one `unsafe` fence: bindgen's declarations of the OTF2 C API
//! (`$OUT_DIR/otf2.rs`) and the only code that calls them, each call checked.

#![allow(missing_docs, unreachable_pub)]

use crate::{Error, Result};

/// What a region does (OTF2's `OTF2_RegionRole`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionRole {
    /// A function or a user region.
    Function,
    /// A point-to-point call.
    PointToPoint,
    /// A collective call.
    Collective,
    /// A barrier.
    Barrier,
}

/// Who a region belongs to (OTF2's `OTF2_Paradigm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paradigm {
    /// MPI.
    Mpi,
    /// The program's own regions.
    User,
    /// The measurement system.
    Measurement,
}

#[cfg(mpit_otf2_missing)]
mod imp {
    use super::*;
    pub struct Archive;
    impl Archive {
        pub fn create(_: &str, _: &str) -> Result<Archive> {
            Err(Error::Missing)
        }
        pub fn def_string(&mut self, _: u32, _: &str) -> Result<()> {
            Err(Error::Missing)
        }
        pub fn def_region(&mut self, _: u32, _: u32, _: RegionRole, _: Paradigm) -> Result<()> {
            Err(Error::Missing)
        }
        pub fn def_clock(&mut self, _: u64, _: u64, _: u64) -> Result<()> {
            Err(Error::Missing)
        }
        pub fn def_system_tree_node(&mut self, _: u32, _: u32, _: u32) -> Result<()> {
            Err(Error::Missing)
        }
        pub fn def_location_group(&mut self, _: u32, _: u32, _: u32) -> Result<()> {
            Err(Error::Missing)
        }
        pub fn def_location(&mut self, _: u64, _: u32, _: u64, _: u32) -> Result<()> {
            Err(Error::Missing)
        }
        pub fn evt_writer(&mut self, _: u64) -> Result<()> {
            Err(Error::Missing)
        }
        pub fn enter(&mut self, _: u64, _: u64, _: u32) -> Result<()> {
            Err(Error::Missing)
        }
        pub fn leave(&mut self, _: u64, _: u64, _: u32) -> Result<()> {
            Err(Error::Missing)
        }
        pub fn close(self) -> Result<()> {
            Err(Error::Missing)
        }
    }
}

#[cfg(not(mpit_otf2_missing))]
mod imp {
    use super::*;
    use std::ffi::{CStr, CString, c_void};
    use std::ptr::{self, NonNull};

    mod sys {
        #![allow(
            non_camel_case_types,
            non_snake_case,
            non_upper_case_globals,
            dead_code,
            unreachable_pub,
            missing_docs,
            clippy::all
        )]
        include!(concat!(env!("OUT_DIR"), "/otf2.rs"));
    }

    fn check(call: &'static str, code: sys::OTF2_ErrorCode) -> Result<()> {
        if code == sys::OTF2_ErrorCode_OTF2_SUCCESS {
            return Ok(());
        }
        // SAFETY: OTF2_Error_GetName returns a static NUL-terminated string for any code.
        let name = unsafe { CStr::from_ptr(sys::OTF2_Error_GetName(code)) };
        Err(Error::Otf2 {
            call,
            code: code as i64,
            name: name.to_string_lossy().into_owned(),
        })
    }

    fn cstring(s: &str) -> Result<CString> {
        CString::new(s).map_err(|_| Error::Invalid(format!("{s:?} has a NUL byte")))
    }

    // Flush callbacks: every full buffer is written out (never dropped); post-flush reports
    // no time of its own (the records keep theirs).
    unsafe extern "C" fn pre_flush(
        _user: *mut c_void,
        _file: sys::OTF2_FileType,
        _loc: sys::OTF2_LocationRef,
        _caller: *mut c_void,
        _final: bool,
    ) -> sys::OTF2_FlushType {
        sys::OTF2_FlushType_enum_OTF2_FLUSH as _
    }

    unsafe extern "C" fn post_flush(
        _user: *mut c_void,
        _file: sys::OTF2_FileType,
        _loc: sys::OTF2_LocationRef,
    ) -> sys::OTF2_TimeStamp {
        0
    }

    static FLUSH: sys::OTF2_FlushCallbacks = sys::OTF2_FlushCallbacks {
        otf2_pre_flush: Some(pre_flush),
        otf2_post_flush: Some(post_flush),
    };

    pub struct Archive {
        raw: NonNull<sys::OTF2_Archive>,
        defs: *mut sys::OTF2_GlobalDefWriter,
        evts: Vec<(u64, *mut sys::OTF2_EvtWriter)>,
    }

    impl Archive {
        pub fn create(dir: &str, name: &str) -> Result<Archive> {
            let (dir, name) = (cstring(dir)?, cstring(name)?);
            // SAFETY: two NUL-terminated strings OTF2 copies; the chunk sizes are OTF2's
            // defaults; POSIX files, no compression.
            let raw = unsafe {
                sys::OTF2_Archive_Open(
                    dir.as_ptr(),
                    name.as_ptr(),
                    sys::OTF2_FileMode_enum_OTF2_FILEMODE_WRITE as _,
                    1024 * 1024,
                    4 * 1024 * 1024,
                    sys::OTF2_FileSubstrate_enum_OTF2_SUBSTRATE_POSIX as _,
                    sys::OTF2_Compression_enum_OTF2_COMPRESSION_NONE as _,
                )
            };
            let raw = NonNull::new(raw).ok_or(Error::Otf2 {
                call: "OTF2_Archive_Open",
                code: -1,
                name: "no archive".into(),
            })?;
            let mut a = Archive {
                raw,
                defs: ptr::null_mut(),
                evts: Vec::new(),
            };
            // SAFETY: a live archive; FLUSH is a static, no user data.
            check("OTF2_Archive_SetFlushCallbacks", unsafe {
                sys::OTF2_Archive_SetFlushCallbacks(a.raw.as_ptr(), &FLUSH, ptr::null_mut())
            })?;
            // SAFETY: a live archive.
            check("OTF2_Archive_SetSerialCollectiveCallbacks", unsafe {
                sys::OTF2_Archive_SetSerialCollectiveCallbacks(a.raw.as_ptr())
            })?;
            // SAFETY: a live archive with its collective callbacks.
            check("OTF2_Archive_OpenEvtFiles", unsafe {
                sys::OTF2_Archive_OpenEvtFiles(a.raw.as_ptr())
            })?;
            // SAFETY: a live archive; the writer lives as long as the archive.
            a.defs = unsafe { sys::OTF2_Archive_GetGlobalDefWriter(a.raw.as_ptr()) };
            if a.defs.is_null() {
                return Err(Error::Otf2 {
                    call: "OTF2_Archive_GetGlobalDefWriter",
                    code: -1,
                    name: "no writer".into(),
                });
            }
            Ok(a)
        }

        pub fn def_string(&mut self, id: u32, s: &str) -> Result<()> {
            let s = cstring(s)?;
            // SAFETY: the archive's live global definition writer; OTF2 copies the string.
            check("OTF2_GlobalDefWriter_WriteString", unsafe {
                sys::OTF2_GlobalDefWriter_WriteString(self.defs, id, s.as_ptr())
            })
        }

        pub fn def_region(
            &mut self,
            id: u32,
            name: u32,
            role: RegionRole,
            paradigm: Paradigm,
        ) -> Result<()> {
            let role = match role {
                RegionRole::Function => sys::OTF2_RegionRole_enum_OTF2_REGION_ROLE_FUNCTION,
                RegionRole::PointToPoint => sys::OTF2_RegionRole_enum_OTF2_REGION_ROLE_POINT2POINT,
                RegionRole::Collective => sys::OTF2_RegionRole_enum_OTF2_REGION_ROLE_COLL_ALL2ALL,
                RegionRole::Barrier => sys::OTF2_RegionRole_enum_OTF2_REGION_ROLE_BARRIER,
            };
            let paradigm = match paradigm {
                Paradigm::Mpi => sys::OTF2_Paradigm_enum_OTF2_PARADIGM_MPI,
                Paradigm::User => sys::OTF2_Paradigm_enum_OTF2_PARADIGM_USER,
                Paradigm::Measurement => sys::OTF2_Paradigm_enum_OTF2_PARADIGM_MEASUREMENT_SYSTEM,
            };
            // SAFETY: the live global definition writer; `name` is a defined string.
            check("OTF2_GlobalDefWriter_WriteRegion", unsafe {
                sys::OTF2_GlobalDefWriter_WriteRegion(
                    self.defs,
                    id,
                    name,
                    name,
                    name,
                    role as _,
                    paradigm as _,
                    sys::OTF2_RegionFlag_enum_OTF2_REGION_FLAG_NONE as _,
                    name,
                    0,
                    0,
                )
            })
        }

        pub fn def_clock(&mut self, resolution: u64, start: u64, length: u64) -> Result<()> {
            // SAFETY: the live global definition writer.
            check("OTF2_GlobalDefWriter_WriteClockProperties", unsafe {
                sys::OTF2_GlobalDefWriter_WriteClockProperties(
                    self.defs,
                    resolution,
                    start,
                    length,
                    u64::MAX, /* OTF2_UNDEFINED_TIMESTAMP */
                )
            })
        }

        pub fn def_system_tree_node(&mut self, id: u32, name: u32, class: u32) -> Result<()> {
            // SAFETY: the live global definition writer; strings defined.
            check("OTF2_GlobalDefWriter_WriteSystemTreeNode", unsafe {
                sys::OTF2_GlobalDefWriter_WriteSystemTreeNode(
                    self.defs,
                    id,
                    name,
                    class,
                    u32::MAX, /* OTF2_UNDEFINED_SYSTEM_TREE_NODE */
                )
            })
        }

        pub fn def_location_group(&mut self, id: u32, name: u32, node: u32) -> Result<()> {
            // SAFETY: the live global definition writer; string and node defined.
            check("OTF2_GlobalDefWriter_WriteLocationGroup", unsafe {
                sys::OTF2_GlobalDefWriter_WriteLocationGroup(
                    self.defs,
                    id,
                    name,
                    sys::OTF2_LocationGroupType_enum_OTF2_LOCATION_GROUP_TYPE_PROCESS as _,
                    node,
                    u32::MAX, /* OTF2_UNDEFINED_LOCATION_GROUP */
                )
            })
        }

        pub fn def_location(&mut self, id: u64, name: u32, events: u64, group: u32) -> Result<()> {
            // SAFETY: the live global definition writer; string and group defined.
            check("OTF2_GlobalDefWriter_WriteLocation", unsafe {
                sys::OTF2_GlobalDefWriter_WriteLocation(
                    self.defs,
                    id,
                    name,
                    sys::OTF2_LocationType_enum_OTF2_LOCATION_TYPE_CPU_THREAD as _,
                    events,
                    group,
                )
            })
        }

        pub fn evt_writer(&mut self, loc: u64) -> Result<()> {
            // SAFETY: a live archive with its event files open.
            let w = unsafe { sys::OTF2_Archive_GetEvtWriter(self.raw.as_ptr(), loc) };
            if w.is_null() {
                return Err(Error::Otf2 {
                    call: "OTF2_Archive_GetEvtWriter",
                    code: -1,
                    name: "no writer".into(),
                });
            }
            self.evts.push((loc, w));
            Ok(())
        }

        fn writer(&self, loc: u64) -> Result<*mut sys::OTF2_EvtWriter> {
            self.evts
                .iter()
                .find(|(l, _)| *l == loc)
                .map(|(_, w)| *w)
                .ok_or_else(|| Error::Invalid(format!("location {loc} has no writer")))
        }

        pub fn enter(&mut self, loc: u64, t: u64, region: u32) -> Result<()> {
            let w = self.writer(loc)?;
            // SAFETY: a live event writer of this archive; no attribute list.
            check("OTF2_EvtWriter_Enter", unsafe {
                sys::OTF2_EvtWriter_Enter(w, ptr::null_mut(), t, region)
            })
        }

        pub fn leave(&mut self, loc: u64, t: u64, region: u32) -> Result<()> {
            let w = self.writer(loc)?;
            // SAFETY: a live event writer of this archive; no attribute list.
            check("OTF2_EvtWriter_Leave", unsafe {
                sys::OTF2_EvtWriter_Leave(w, ptr::null_mut(), t, region)
            })
        }

        pub fn close(mut self) -> Result<()> {
            let a = self.raw.as_ptr();
            for (loc, w) in std::mem::take(&mut self.evts) {
                // SAFETY: each writer closed once, before the event files.
                check("OTF2_Archive_CloseEvtWriter", unsafe {
                    sys::OTF2_Archive_CloseEvtWriter(a, w)
                })?;
                // SAFETY: a live archive; a local definition file per location (empty).
                check("OTF2_Archive_OpenDefFiles", unsafe {
                    sys::OTF2_Archive_OpenDefFiles(a)
                })?;
                // SAFETY: a live archive with its definition files open.
                let d = unsafe { sys::OTF2_Archive_GetDefWriter(a, loc) };
                if !d.is_null() {
                    // SAFETY: the writer just got, closed once.
                    check("OTF2_Archive_CloseDefWriter", unsafe {
                        sys::OTF2_Archive_CloseDefWriter(a, d)
                    })?;
                }
                // SAFETY: opened above.
                check("OTF2_Archive_CloseDefFiles", unsafe {
                    sys::OTF2_Archive_CloseDefFiles(a)
                })?;
            }
            // SAFETY: opened in `create`, every writer closed.
            check("OTF2_Archive_CloseEvtFiles", unsafe {
                sys::OTF2_Archive_CloseEvtFiles(a)
            })?;
            self.close_archive()
        }

        fn close_archive(self) -> Result<()> {
            let a = self.raw.as_ptr();
            std::mem::forget(self);
            // SAFETY: the archive, closed once (Drop is skipped above).
            check("OTF2_Archive_Close", unsafe { sys::OTF2_Archive_Close(a) })
        }
    }

    impl Drop for Archive {
        fn drop(&mut self) {
            // SAFETY: the archive, closed once (`close` forgets it before closing).
            unsafe { sys::OTF2_Archive_Close(self.raw.as_ptr()) };
        }
    }
}

pub use imp::Archive;
