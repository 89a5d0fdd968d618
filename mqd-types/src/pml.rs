//! Which point-to-point messaging layer (PML) an Open MPI process runs, read from its memory
//! before anything is shown: Open MPI's message queue DLL walks the request free lists and
//! reads every request as ob1 lays it out, so its queues are true only under ob1 (cm's and
//! ucx's requests read that way are garbage).
//!
//! ```text
//! mca_pml_base_selected_component (mca_pml_base_component_t, a copy of the selected
//!   component) .pmlm_version (mca_base_component_t, MCA 2.1):
//!     int major, minor, release; char project[16]; int 3 x; char type[32]; int 3 x;
//!     char name[64]
//! the monitoring PML stacks itself over the one selected: it copies that component into its
//!   own global pml_selected_component (mca_pml_monitoring.so, or libmpi when built in) and
//!   puts itself in mca_pml_base_selected_component
//! ```
//!
//! The layout of `mca_base_component_t`'s head is the same from Open MPI 3 to 5 (MCA 2.1); a
//! read is accepted only if it says MCA 2, project `ompi`, type `pml`, so a foreign or garbage
//! structure is an error, not a name.

use crate::ob1::Ob1Error;
use crate::target::ProcessTarget;

/// The symbol of the selected PML component's copy.
pub const SELECTED_COMPONENT: &str = "mca_pml_base_selected_component";
/// The monitoring PML's copy of the component it stacks over.
pub const MONITORED_COMPONENT: &str = "pml_selected_component";

/// Offsets in `mca_base_component_t` (MCA 2.1): the major version, the project, type and
/// component names, and the end of the name.
const MAJOR: usize = 0;
const PROJECT: (usize, usize) = (12, 28);
const TYPE: (usize, usize) = (40, 72);
const NAME: (usize, usize) = (84, 148);

/// The PML of an Open MPI process: the selected component and, under the monitoring PML,
/// the one it stacks over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PmlStack {
    /// The components, outermost first: `["ob1"]`, `["monitoring", "ob1"]`.
    pub components: Vec<String>,
}

impl PmlStack {
    /// The PML that keeps the queues: the innermost component.
    pub fn effective(&self) -> &str {
        self.components.last().map_or("", String::as_str)
    }

    /// Whether Open MPI's message queue DLL shows this PML's queues (ob1's, possibly under
    /// monitoring).
    pub fn queues_shown_by_open_mpi_dll(&self) -> bool {
        self.effective() == "ob1"
    }
}

impl std::fmt::Display for PmlStack {
    /// `ob1`, `monitoring over ob1`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.components.join(" over "))
    }
}

/// The name of the `mca_base_component_t` at `addr`, checked to be an Open MPI PML's.
pub fn component_name(
    memory: &dyn ProcessTarget,
    what: &str,
    addr: u64,
) -> Result<String, Ob1Error> {
    let mut raw = [0u8; NAME.1];
    if addr == 0 || !memory.fetch(addr, &mut raw) {
        return Err(Ob1Error::Unreadable {
            what: what.to_owned(),
            addr,
            len: raw.len(),
        });
    }
    let text = |(start, end): (usize, usize)| {
        let field = &raw[start..end];
        let len = field.iter().position(|&b| b == 0);
        len.map(|n| String::from_utf8_lossy(&field[..n]).into_owned())
    };
    let mut major = [0u8; 4];
    memory.target_to_host(&raw[MAJOR..MAJOR + 4], &mut major);
    let major = i32::from_ne_bytes(major);
    let (project, kind, name) = (text(PROJECT), text(TYPE), text(NAME));
    match (major, project.as_deref(), kind.as_deref(), name) {
        (2, Some("ompi"), Some("pml"), Some(name)) if !name.is_empty() => Ok(name),
        _ => Err(Ob1Error::Mismatch(format!(
            "{what} at {addr:#x} is no MCA 2 PML component of Open MPI (MCA version {major}, \
             project {project:?}, type {kind:?})"
        ))),
    }
}

/// The PML stack of an Open MPI process, `lookup` giving its symbols' addresses; `Ok(None)`
/// if it defines no [`SELECTED_COMPONENT`] (not an Open MPI process).
pub fn pml_stack(
    lookup: impl Fn(&str) -> Option<u64>,
    memory: &dyn ProcessTarget,
) -> Result<Option<PmlStack>, Ob1Error> {
    let Some(selected) = lookup(SELECTED_COMPONENT) else {
        return Ok(None);
    };
    let mut components = vec![component_name(memory, SELECTED_COMPONENT, selected)?];
    if components[0] == "monitoring" {
        let below =
            lookup(MONITORED_COMPONENT).ok_or(Ob1Error::MissingSymbol(MONITORED_COMPONENT))?;
        components.push(component_name(memory, MONITORED_COMPONENT, below)?);
    }
    Ok(Some(PmlStack { components }))
}
