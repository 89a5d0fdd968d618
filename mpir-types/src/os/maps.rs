//! `/proc/PID/maps`: the mappings of a process.

use std::path::PathBuf;

use super::ToolError;

/// One line of `/proc/PID/maps`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// Readable.
    pub read: bool,
    /// Writable.
    pub write: bool,
    /// Executable.
    pub execute: bool,
    /// Shared (`s`) rather than private (`p`).
    pub shared: bool,
    /// Offset in the file of the first mapped byte.
    pub offset: u64,
    /// Device major number of the file.
    pub dev_major: u32,
    /// Device minor number of the file.
    pub dev_minor: u32,
    /// Inode of the file (0 for anonymous memory).
    pub inode: u64,
    /// The pathname column: a file's absolute path, a pseudo-name such as
    /// `[heap]`, or `None` for anonymous memory. A `" (deleted)"` suffix is
    /// removed and reported in [`Mapping::deleted`].
    pub path: Option<PathBuf>,
    /// The file was deleted (or replaced) after it was mapped.
    pub deleted: bool,
}

impl Mapping {
    /// Whether the mapping is of a file (an absolute path with an inode).
    pub fn is_file(&self) -> bool {
        self.inode != 0
            && self
                .path
                .as_ref()
                .is_some_and(|p| p.as_os_str().as_encoded_bytes().first() == Some(&b'/'))
    }
}

fn parse_line(line: &str) -> Option<Mapping> {
    // start-end perms offset dev inode [path]; the path may contain spaces.
    let mut rest = line;
    let mut field = || {
        let s = rest.trim_start_matches(' ');
        let end = s.find(' ').unwrap_or(s.len());
        let (f, r) = s.split_at(end);
        rest = r;
        (!f.is_empty()).then_some(f)
    };
    let range = field()?;
    let perms = field()?.as_bytes();
    let offset = field()?;
    let dev = field()?;
    let inode = field()?;
    let (start, end) = range.split_once('-')?;
    let (major, minor) = dev.split_once(':')?;
    if perms.len() < 4 {
        return None;
    }
    let mut path = rest.trim_start_matches(' ').to_owned();
    let deleted = path.ends_with(" (deleted)");
    if deleted {
        path.truncate(path.len() - " (deleted)".len());
    }
    Some(Mapping {
        start: u64::from_str_radix(start, 16).ok()?,
        end: u64::from_str_radix(end, 16).ok()?,
        read: perms[0] == b'r',
        write: perms[1] == b'w',
        execute: perms[2] == b'x',
        shared: perms[3] == b's',
        offset: u64::from_str_radix(offset, 16).ok()?,
        dev_major: u32::from_str_radix(major, 16).ok()?,
        dev_minor: u32::from_str_radix(minor, 16).ok()?,
        inode: inode.parse().ok()?,
        path: (!path.is_empty()).then(|| PathBuf::from(path)),
        deleted,
    })
}

/// Parses the text of `/proc/PID/maps`; lines that do not parse are
/// skipped.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines().filter_map(parse_line).collect()
}

/// Reads and parses `/proc/PID/maps`.
pub fn read_maps(pid: i32) -> Result<Vec<Mapping>, ToolError> {
    let what = format!("/proc/{pid}/maps");
    match std::fs::read_to_string(&what) {
        Ok(text) => Ok(parse_maps(&text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ToolError::NoSuchProcess { pid }),
        Err(e) => Err(ToolError::io(what, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines() {
        let text = "\
55d0c0a00000-55d0c0a01000 r--p 00000000 08:01 1835033                    /usr/bin/orterun
7f3c1c000000-7f3c1c021000 rw-p 00000000 00:00 0 
7f3c1d400000-7f3c1d47d000 r-xp 00023000 fe:01 131  /opt/my dir/libx.so (deleted)
7ffd7b1f0000-7ffd7b211000 rw-p 00000000 00:00 0                          [stack]
garbage line
";
        let m = parse_maps(text);
        assert_eq!(m.len(), 4);
        assert_eq!(m[0].start, 0x55d0c0a00000);
        assert_eq!(
            m[0].path.as_deref(),
            Some(std::path::Path::new("/usr/bin/orterun"))
        );
        assert!(m[0].is_file() && m[0].read && !m[0].write);
        assert_eq!(
            (m[0].dev_major, m[0].dev_minor, m[0].inode),
            (8, 1, 1835033)
        );
        assert_eq!(m[1].path, None);
        assert!(!m[1].is_file());
        assert_eq!(
            m[2].path.as_deref(),
            Some(std::path::Path::new("/opt/my dir/libx.so"))
        );
        assert!(m[2].deleted && m[2].execute);
        assert_eq!(m[2].offset, 0x23000);
        assert!(!m[3].is_file());
    }
}
