//! Compiles the type donor (`donor/ompi_types.c`) with `-g` against the Open MPI headers that
//! libopenmpi-dev installs, linked into a small shared object so that its DWARF is relocated.
//! The library embeds it when this succeeds (`cfg(mqd_donor)`) and reports its absence at run
//! time otherwise.
//!
//! The headers are found by `$MQD_OMPI_INCLUDE` (colon-separated directories) or else by
//! `mpicc.openmpi --showme:incdirs` (`$MQD_OMPI_MPICC` overrides the wrapper's name): the
//! ambient MPI may be MPICH, whose headers cannot supply Open MPI's types.
//!
//! A second donor, `donor/ob1_types.c`, supplies the types of the ob1 PML (its unexpected
//! fragments), whose headers Open MPI does not install: when the installed headers are Open MPI
//! 4.1.4, the script fetches Debian's source package of that version
//! (`openmpi_4.1.4.orig.tar.xz` from deb.debian.org, listed in `openmpi_4.1.4-3.dsc`), checks
//! its sha256, unpacks only `ompi/mca/pml/ob1/*.h` and compiles the donor against them and the
//! installed headers (`cfg(mqd_ob1_donor)`). The archive and the headers are cached under the
//! workspace's git-ignored `.mpi/debian-src/` (or `$MQD_OMPI_SOURCE_CACHE`); nothing of Open
//! MPI's source is part of this crate. Any failure is recorded (`MQD_OB1_DONOR_ERROR`) and
//! reported at run time.

use std::env;
use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use sha2::{Digest, Sha256};

/// The installed Open MPI version the ob1 source is for.
const OB1_VERSION: &str = "4.1.4";
const SOURCE_HOST: &str = "deb.debian.org";
const SOURCE_PATH: &str = "/debian/pool/main/o/openmpi/openmpi_4.1.4.orig.tar.xz";
const SOURCE_SHA256: &str = "ddaee7dbdb01eb4fab1fda5b5e03e8bbff026711806c095c1f39bb410f99f263";
const SOURCE_SIZE: usize = 6_916_772;
const OB1_DIR: &str = "openmpi-4.1.4/ompi/mca/pml/ob1/";

fn include_dirs() -> Option<Vec<PathBuf>> {
    if let Ok(dirs) = env::var("MQD_OMPI_INCLUDE") {
        return Some(env::split_paths(&dirs).collect());
    }
    let mpicc = env::var("MQD_OMPI_MPICC").unwrap_or_else(|_| "mpicc.openmpi".to_owned());
    let out = Command::new(mpicc)
        .arg("--showme:incdirs")
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let dirs: Vec<PathBuf> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(PathBuf::from)
        .collect();
    (!dirs.is_empty()).then_some(dirs)
}

/// `OMPI_{MAJOR,MINOR,RELEASE}_VERSION` of the `mpi.h` among `dirs`.
fn installed_version(dirs: &[PathBuf]) -> Option<String> {
    let text = dirs
        .iter()
        .find_map(|d| fs::read_to_string(d.join("mpi.h")).ok())?;
    let part = |name: &str| {
        text.lines().find_map(|l| {
            let rest = l
                .strip_prefix("#define ")?
                .trim_start()
                .strip_prefix(name)?;
            rest.trim().parse::<u32>().ok()
        })
    };
    Some(format!(
        "{}.{}.{}",
        part("OMPI_MAJOR_VERSION")?,
        part("OMPI_MINOR_VERSION")?,
        part("OMPI_RELEASE_VERSION")?
    ))
}

fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A plain HTTP/1.1 GET (the Debian archive serves HTTP; the sha256 check is the integrity
/// guarantee, as for apt).
fn http_get(host: &str, path: &str) -> Result<Vec<u8>, String> {
    use std::net::ToSocketAddrs;
    let addrs: Vec<_> = (host, 80)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}: {e}"))?
        .collect();
    let mut last = format!("no address for {host}");
    for addr in addrs {
        let mut stream = match TcpStream::connect_timeout(&addr, Duration::from_secs(20)) {
            Ok(s) => s,
            Err(e) => {
                last = format!("cannot connect to {host} ({addr}): {e}");
                continue;
            }
        };
        stream
            .set_read_timeout(Some(Duration::from_secs(120)))
            .map_err(|e| e.to_string())?;
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: mqd-types-build\r\n\
             Connection: close\r\n\r\n"
        )
        .map_err(|e| format!("sending the request to {host}: {e}"))?;
        let mut response = Vec::with_capacity(SOURCE_SIZE + 4096);
        stream
            .read_to_end(&mut response)
            .map_err(|e| format!("reading http://{host}{path}: {e}"))?;
        let end = response
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| format!("http://{host}{path}: no HTTP header in the response"))?;
        let head = String::from_utf8_lossy(&response[..end]).into_owned();
        let status = head.lines().next().unwrap_or("");
        if status.split_whitespace().nth(1) != Some("200") {
            return Err(format!("http://{host}{path}: {status}"));
        }
        let body = response.split_off(end + 4);
        if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            return dechunk(&body).ok_or_else(|| format!("http://{host}{path}: bad chunks"));
        }
        return Ok(body);
    }
    Err(last)
}

/// The body of a `Transfer-Encoding: chunked` response.
fn dechunk(mut body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(body.len());
    loop {
        let line = body.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&body[..line]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        body = &body[line + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(body.get(..size)?);
        body = body.get(size + 2..)?;
    }
}

/// The ob1 headers of Open MPI 4.1.4, unpacked (once) under `cache`.
fn ob1_headers(cache: &Path) -> Result<PathBuf, String> {
    let headers = cache.join("openmpi-4.1.4-ob1-headers");
    let stamp = headers.join(".sha256");
    if fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == SOURCE_SHA256) {
        return Ok(headers.join(OB1_DIR));
    }
    fs::create_dir_all(cache).map_err(|e| format!("creating {}: {e}", cache.display()))?;
    let archive = cache.join("openmpi_4.1.4.orig.tar.xz");
    let data = match fs::read(&archive) {
        Ok(d) if sha256_hex(&d) == SOURCE_SHA256 => d,
        _ => {
            let d = http_get(SOURCE_HOST, SOURCE_PATH)?;
            let sum = sha256_hex(&d);
            if sum != SOURCE_SHA256 {
                return Err(format!(
                    "http://{SOURCE_HOST}{SOURCE_PATH}: {} bytes with sha256 {sum}, expected \
                     {SOURCE_SIZE} bytes with sha256 {SOURCE_SHA256}",
                    d.len()
                ));
            }
            let tmp = archive.with_extension(format!("part{}", std::process::id()));
            fs::write(&tmp, &d).map_err(|e| format!("writing {}: {e}", tmp.display()))?;
            fs::rename(&tmp, &archive).map_err(|e| format!("{}: {e}", archive.display()))?;
            d
        }
    };
    let mut tarball = Vec::new();
    lzma_rs::xz_decompress(&mut &data[..], &mut tarball)
        .map_err(|e| format!("{}: xz: {e}", archive.display()))?;
    let tmp = cache.join(format!("ob1-headers.part{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    let mut n = 0;
    let mut tar = tar::Archive::new(&tarball[..]);
    for entry in tar.entries().map_err(|e| format!("tar: {e}"))? {
        let mut entry = entry.map_err(|e| format!("tar: {e}"))?;
        let path = entry.path().map_err(|e| format!("tar: {e}"))?.into_owned();
        let name = path.to_string_lossy();
        let Some(file) = name.strip_prefix(OB1_DIR) else {
            continue;
        };
        if !file.ends_with(".h") || file.contains('/') {
            continue;
        }
        let dest = tmp.join(OB1_DIR).join(file);
        fs::create_dir_all(dest.parent().expect("a parent"))
            .map_err(|e| format!("{}: {e}", dest.display()))?;
        let mut text = Vec::new();
        entry
            .read_to_end(&mut text)
            .map_err(|e| format!("tar: {name}: {e}"))?;
        fs::write(&dest, text).map_err(|e| format!("{}: {e}", dest.display()))?;
        n += 1;
    }
    if n == 0 {
        return Err(format!("{}: no {OB1_DIR}*.h", archive.display()));
    }
    fs::write(tmp.join(".sha256"), SOURCE_SHA256).map_err(|e| e.to_string())?;
    let _ = fs::remove_dir_all(&headers);
    fs::rename(&tmp, &headers).map_err(|e| format!("{}: {e}", headers.display()))?;
    Ok(headers.join(OB1_DIR))
}

/// Compiles `source` with `-g` against `includes` into `out`.
fn compile_donor(source: &str, out: &Path, includes: &[PathBuf]) -> Result<(), String> {
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .cargo_warnings(false)
        .get_compiler();
    let mut cmd = compiler.to_command();
    cmd.args(["-g", "-O0", "-fPIC", "-shared", "-nostdlib", "-o"])
        .arg(out)
        .arg(source)
        .arg("-Idonor/stub");
    for d in includes {
        cmd.arg(format!("-I{}", d.display()));
    }
    match cmd.output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(String::from_utf8_lossy(&o.stderr)
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or("")
            .to_owned()),
        Err(e) => Err(format!("no C compiler: {e}")),
    }
}

/// Builds the ob1 donor; `Err` says why there is none.
fn ob1_donor(dirs: &[PathBuf], out: &Path) -> Result<PathBuf, String> {
    match installed_version(dirs) {
        Some(v) if v == OB1_VERSION => {}
        Some(v) => {
            return Err(format!(
                "the installed Open MPI headers are version {v}; the ob1 type donor is built \
                 from Debian's Open MPI {OB1_VERSION} source"
            ));
        }
        None => return Err("no OMPI_*_VERSION in the installed mpi.h".to_owned()),
    }
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let cache = match env::var_os("MQD_OMPI_SOURCE_CACHE") {
        Some(d) => PathBuf::from(d),
        None => {
            let mpi = manifest.join("../.mpi");
            if mpi.is_dir() {
                mpi.join("debian-src")
            } else {
                out.join("debian-src")
            }
        }
    };
    println!(
        "cargo:rerun-if-changed={}",
        cache.join("openmpi-4.1.4-ob1-headers/.sha256").display()
    );
    let ob1 = ob1_headers(&cache)?;
    let donor = out.join("ob1_type_donor.so");
    let mut includes = dirs.to_vec();
    includes.push(ob1);
    compile_donor("donor/ob1_types.c", &donor, &includes)
        .map_err(|e| format!("the ob1 type donor did not compile: {e}"))?;
    Ok(donor)
}

fn main() {
    println!("cargo:rustc-check-cfg=cfg(mqd_donor)");
    println!("cargo:rustc-check-cfg=cfg(mqd_ob1_donor)");
    println!("cargo:rerun-if-env-changed=MQD_OMPI_SOURCE_CACHE");
    println!("cargo:rerun-if-changed=donor");
    println!("cargo:rerun-if-env-changed=MQD_OMPI_INCLUDE");
    println!("cargo:rerun-if-env-changed=MQD_OMPI_MPICC");
    let Some(dirs) = include_dirs() else {
        println!(
            "cargo:rustc-env=MQD_OB1_DONOR_ERROR=Open MPI's headers were not found at build time \
             (install libopenmpi-dev)"
        );
        println!(
            "cargo:warning=mqd-types: Open MPI's headers not found (install libopenmpi-dev or \
             set MQD_OMPI_INCLUDE): no type donor, the DLL will miss the types of a stripped libmpi"
        );
        return;
    };
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let donor = out.join("ompi_type_donor.so");
    match compile_donor("donor/ompi_types.c", &donor, &dirs) {
        Ok(()) => {
            println!("cargo:rustc-cfg=mqd_donor");
            println!("cargo:rustc-env=MQD_DONOR_OBJECT={}", donor.display());
        }
        Err(e) => println!("cargo:warning=mqd-types: the type donor did not compile: {e}"),
    }
    match ob1_donor(&dirs, &out) {
        Ok(path) => {
            println!("cargo:rustc-cfg=mqd_ob1_donor");
            println!("cargo:rustc-env=MQD_OB1_DONOR_OBJECT={}", path.display());
        }
        Err(e) => {
            let e = e.replace(['\n', '\r'], " ");
            println!("cargo:warning=mqd-types: no ob1 type donor: {e}");
            println!("cargo:rustc-env=MQD_OB1_DONOR_ERROR={e}");
        }
    }
}
