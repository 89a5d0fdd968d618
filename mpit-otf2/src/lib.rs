//! `mpit-otf2`: the OTF2 trace library (Open Trace Format 2, the format of Score-P, Scalasca
//! and Vampir; OTF2 3.0 API reference) for Rust, in two layers: the C API as bindgen reads it
//! from the installed headers at build time (`ffi`, private: the crate's one `unsafe` fence),
//! and above it a thin safe writer ([`SerialArchive`]). mpit-prof's trace writer sits above
//! this crate.
//!
//! Without OTF2 installed the crate still builds; [`available`] then says what to install.
//!
//! ```
//! # if mpit_otf2::available().is_err() { return Ok(()); }
//! use mpit_otf2::{Paradigm, RegionRole, SerialArchive};
//! let dir = std::env::temp_dir().join(format!("mpit-otf2-doc-{}", std::process::id()));
//! let mut a = SerialArchive::create(&dir, "traces")?;
//! let main = a.region("main", RegionRole::Function, Paradigm::User)?;
//! let loc = a.location("Master thread", "MPI Rank 0")?;
//! a.enter(loc, 10, main)?;
//! a.leave(loc, 20, main)?;
//! a.close(1_000_000_000, 10, 10)?;
//! assert!(dir.join("traces.otf2").exists());
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), mpit_otf2::Error>(())
//! ```

mod ffi;

use std::path::Path;

pub use ffi::{Paradigm, RegionRole};

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The crate was built without OTF2.
    #[error("this build has no OTF2: install libopen-trace-format2-dev (Debian) and rebuild")]
    Missing,
    /// An OTF2 call failed, with its `OTF2_ErrorCode` and OTF2's name for it.
    #[error("{call}: {name} (OTF2 error {code})")]
    Otf2 {
        /// The C function.
        call: &'static str,
        /// The code.
        code: i64,
        /// `OTF2_Error_GetName`.
        name: String,
    },
    /// A path or name OTF2 cannot take (a NUL byte, not UTF-8).
    #[error("invalid argument: {0}")]
    Invalid(String),
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Whether this build can write traces: `Err(Error::Missing)` when OTF2 was not found at build
/// time.
pub fn available() -> Result<()> {
    if cfg!(mpit_otf2_missing) {
        Err(Error::Missing)
    } else {
        Ok(())
    }
}

/// A region's reference in an archive's global definitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegionRef(pub u32);

/// A location's reference (one stream of events).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LocationRef(pub u64);

/// An archive written by one process alone (OTF2's serial collective callbacks): the global
/// definitions and every location's events. Nothing is written before [`SerialArchive::close`]
/// but what OTF2 flushes of full buffers.
pub struct SerialArchive {
    raw: ffi::Archive,
    strings: Vec<String>,
    regions: u32,
    groups: Vec<String>,
    locations: Vec<(String, u32, u64)>,
}

impl SerialArchive {
    /// Creates the archive `dir/name.otf2` (and `dir/name/`) for writing.
    #[doc(alias = "OTF2_Archive_Open")]
    pub fn create(dir: &Path, name: &str) -> Result<SerialArchive> {
        available()?;
        let dir = dir
            .to_str()
            .ok_or_else(|| Error::Invalid(format!("{} is not UTF-8", dir.display())))?;
        Ok(SerialArchive {
            raw: ffi::Archive::create(dir, name)?,
            strings: Vec::new(),
            regions: 0,
            groups: Vec::new(),
            locations: Vec::new(),
        })
    }

    fn string(&mut self, s: &str) -> Result<u32> {
        if let Some(i) = self.strings.iter().position(|x| x == s) {
            return Ok(i as u32);
        }
        let id = self.strings.len() as u32;
        self.raw.def_string(id, s)?;
        self.strings.push(s.to_owned());
        Ok(id)
    }

    /// Defines a region.
    #[doc(alias = "OTF2_GlobalDefWriter_WriteRegion")]
    pub fn region(
        &mut self,
        name: &str,
        role: RegionRole,
        paradigm: Paradigm,
    ) -> Result<RegionRef> {
        let s = self.string(name)?;
        let id = self.regions;
        self.raw.def_region(id, s, role, paradigm)?;
        self.regions += 1;
        Ok(RegionRef(id))
    }

    /// A location (a thread) of the location group (a process) `group`, both defined at
    /// [`SerialArchive::close`].
    pub fn location(&mut self, name: &str, group: &str) -> Result<LocationRef> {
        let g = match self.groups.iter().position(|x| x == group) {
            Some(i) => i,
            None => {
                self.groups.push(group.to_owned());
                self.groups.len() - 1
            }
        } as u32;
        let id = self.locations.len() as u64;
        self.raw.evt_writer(id)?;
        self.locations.push((name.to_owned(), g, 0));
        Ok(LocationRef(id))
    }

    fn count(&mut self, loc: LocationRef) {
        if let Some(l) = self.locations.get_mut(loc.0 as usize) {
            l.2 += 1;
        }
    }

    /// `region` entered at `t`.
    #[doc(alias = "OTF2_EvtWriter_Enter")]
    pub fn enter(&mut self, loc: LocationRef, t: u64, region: RegionRef) -> Result<()> {
        self.raw.enter(loc.0, t, region.0)?;
        self.count(loc);
        Ok(())
    }

    /// `region` left at `t`.
    #[doc(alias = "OTF2_EvtWriter_Leave")]
    pub fn leave(&mut self, loc: LocationRef, t: u64, region: RegionRef) -> Result<()> {
        self.raw.leave(loc.0, t, region.0)?;
        self.count(loc);
        Ok(())
    }

    /// Writes the clock properties (`resolution` ticks per second, the first tick, the
    /// trace's length in ticks), the system tree, location groups and locations, and closes
    /// the archive.
    #[doc(alias = "OTF2_Archive_Close")]
    pub fn close(mut self, resolution: u64, start: u64, length: u64) -> Result<()> {
        self.raw.def_clock(resolution, start, length)?;
        let machine = self.string("machine")?;
        let class = self.string("machine")?;
        self.raw.def_system_tree_node(0, machine, class)?;
        for (i, g) in self.groups.clone().iter().enumerate() {
            let s = self.string(g)?;
            self.raw.def_location_group(i as u32, s, 0)?;
        }
        for (i, (name, g, events)) in self.locations.clone().into_iter().enumerate() {
            let s = self.string(&name)?;
            self.raw.def_location(i as u64, s, events, g)?;
        }
        self.raw.close()
    }
}
