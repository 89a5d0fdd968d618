//! Why a process cannot be acquired: zombies, launchers known not to implement MPIR, and MPI
//! processes mistaken for their starter (with the starter found among their ancestors).
//!
//! Everything here reads `/proc` and the process's symbol tables; nothing stops or writes the
//! process.

use super::ToolError;
use super::maps::read_maps;
use super::symbols::{SymbolTable, exe_path};

/// A launcher known not to implement MPIR: it defines no MPIR symbol, so no tool can acquire
/// its job through MPIR, whatever it waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KnownLauncher {
    /// MPICH's Hydra (`mpiexec.hydra`, Debian's `mpiexec.mpich`): MPICH's launcher has no MPIR
    /// symbols (its `-gdb` and `-tv` options were removed with MPD).
    Hydra,
    /// PRRTE's `prterun`/`prte` (Open MPI 5's `mpiexec`): it offers the PMIx tool interface
    /// instead of MPIR unless built with the MPIR shim.
    Prrte,
}

impl KnownLauncher {
    /// Its name, as a message shows it.
    pub fn name(self) -> &'static str {
        match self {
            KnownLauncher::Hydra => "MPICH's Hydra launcher (mpiexec.hydra)",
            KnownLauncher::Prrte => "PRRTE's prterun (Open MPI 5's mpiexec)",
        }
    }

    /// What to do instead.
    pub fn advice(self) -> &'static str {
        match self {
            KnownLauncher::Hydra => {
                "acquire the ranks directly (they are the children of its hydra_pmi_proxy \
                 processes), or launch the job with a starter that implements MPIR (Open MPI \
                 4's mpiexec)"
            }
            KnownLauncher::Prrte => {
                "use a PMIx tool (e.g. the MPIR shim of the openpmix/mpir-to-pmix-guide project, \
                 which defines the MPIR symbols over PMIx), or acquire the ranks directly"
            }
        }
    }
}

/// The launcher process `pid` runs, if it is one known not to implement MPIR: Hydra by its
/// executable's name (`mpiexec.hydra`, what Debian's `mpiexec.mpich` links to, `hydra_*`) or
/// by an `mpiexec`/`mpirun` installed beside `hydra_pmi_proxy` (MPICH's wheels); PRRTE by its
/// executable's name (`prterun`, `prte`) or by a mapped `libprrte.so`. The caller checks that
/// the process defines no MPIR symbol (Intel MPI's Hydra, for one, defines them).
pub fn known_launcher(pid: i32) -> Option<KnownLauncher> {
    let exe = exe_path(pid)?;
    let name = exe.file_name()?.to_string_lossy().into_owned();
    let beside_hydra_proxy = || {
        (name.starts_with("mpiexec") || name.starts_with("mpirun"))
            && exe.with_file_name("hydra_pmi_proxy").is_file()
    };
    if name.starts_with("mpiexec.hydra") || name.starts_with("hydra_") || beside_hydra_proxy() {
        return Some(KnownLauncher::Hydra);
    }
    if name == "prterun" || name == "prte" {
        return Some(KnownLauncher::Prrte);
    }
    let maps = read_maps(pid).ok()?;
    maps.iter()
        .filter_map(|m| m.path.as_deref())
        .any(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libprrte.so"))
        })
        .then_some(KnownLauncher::Prrte)
}

/// The state letter of process `pid` (`R`, `S`, `Z`, ...), from `/proc/PID/stat`.
pub fn process_state(pid: i32) -> Result<char, ToolError> {
    Ok(stat_fields(pid)?.0)
}

/// The parent of process `pid`, from `/proc/PID/stat` (0 for none).
pub fn parent_pid(pid: i32) -> Result<i32, ToolError> {
    Ok(stat_fields(pid)?.1)
}

/// The state and the parent pid of `/proc/PID/stat` (the fields after the command's closing
/// parenthesis: the command may contain spaces and parentheses).
fn stat_fields(pid: i32) -> Result<(char, i32), ToolError> {
    let what = format!("/proc/{pid}/stat");
    let text = match std::fs::read_to_string(&what) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::NoSuchProcess { pid });
        }
        Err(e) => return Err(ToolError::io(what, e)),
    };
    let bad = || ToolError::io(what.clone(), std::io::ErrorKind::InvalidData.into());
    let rest = text.rsplit_once(')').ok_or_else(bad)?.1;
    let mut fields = rest.split_whitespace();
    let state = fields
        .next()
        .and_then(|s| s.chars().next())
        .ok_or_else(bad)?;
    let ppid = fields.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
    Ok((state, ppid))
}

/// [`ToolError::Zombie`] if process `pid` is a zombie, [`ToolError::NoSuchProcess`] if it
/// does not exist.
pub fn check_alive(pid: i32) -> Result<(), ToolError> {
    match process_state(pid)? {
        'Z' => Err(ToolError::Zombie { pid }),
        _ => Ok(()),
    }
}

/// [`ToolError::Ended`] if process `pid` has ended (it no longer exists, or it is a zombie):
/// what the tool read of it `during` (e.g. `"its MPIR data was read"`) is not to be taken for a
/// live process's. `None` while it runs (or is stopped).
pub fn ended(pid: i32, during: &'static str) -> Option<ToolError> {
    match process_state(pid) {
        Err(ToolError::NoSuchProcess { .. }) => Some(ToolError::Ended {
            pid,
            during,
            zombie: false,
        }),
        Ok('Z' | 'X' | 'x') => Some(ToolError::Ended {
            pid,
            during,
            zombie: true,
        }),
        _ => None,
    }
}

/// The error for a process whose loaded objects lack the starter's symbols: `NoMpir` naming
/// the launcher if it is one known not to implement MPIR and it defines no MPIR symbol at all,
/// else `not_a_starter`.
pub(crate) fn refine_not_a_starter(table: &SymbolTable, not_a_starter: ToolError) -> ToolError {
    if table.names().next().is_some() {
        return not_a_starter;
    }
    match known_launcher(table.pid()) {
        Some(launcher) => ToolError::NoMpir {
            pid: table.pid(),
            launcher,
        },
        None => not_a_starter,
    }
}

/// The starter of the job MPI process `rank_pid` belongs to: the nearest ancestor (up to 32
/// generations) that is an MPIR starter whose table lists `rank_pid`; `None` if there is none.
pub fn find_starter_of(rank_pid: i32) -> Option<i32> {
    let mut pid = parent_pid(rank_pid).ok()?;
    for _ in 0..32 {
        if pid <= 1 {
            return None;
        }
        let listed = super::acquire::attach_any(pid, &super::AttachOptions::default())
            .is_ok_and(|acq| acq.procs.iter().any(|p| p.pid == i64::from(rank_pid)));
        if listed {
            return Some(pid);
        }
        pid = parent_pid(pid).ok()?;
    }
    None
}
