#!/usr/bin/env python3
"""Fetches the ob1 PML headers of Open MPI 4.1.4 for mqd-types' ob1 type donor.

Open MPI does not install ob1's headers, and Debian's debug symbols are not reachable here, so
the types of ob1's unexpected fragments come from Debian's source package of the installed
version: openmpi_4.1.4.orig.tar.xz (listed, with this sha256, in openmpi_4.1.4-3.dsc). Only
ompi/mca/pml/ob1/*.h is unpacked, into CACHE/openmpi-4.1.4-ob1-headers/ (with a .sha256
stamp that mqd-types/build.rs checks). Nothing of it is part of the repository.

Usage: ob1-headers.py CACHE_DIR
"""
import importlib.util
import os
import shutil
import sys
import tarfile

POOL_PATH = "o/openmpi/openmpi_4.1.4.orig.tar.xz"
SHA256 = "ddaee7dbdb01eb4fab1fda5b5e03e8bbff026711806c095c1f39bb410f99f263"
OB1_DIR = "openmpi-4.1.4/ompi/mca/pml/ob1/"


def debian_source():
    """scripts/debian-source.py, which fetches and checks a file of a Debian source package."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        "debian_source", os.path.join(here, "debian-source.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(cache):
    headers = os.path.join(cache, "openmpi-4.1.4-ob1-headers")
    stamp = os.path.join(headers, ".sha256")
    if os.path.exists(stamp) and open(stamp).read().strip() == SHA256:
        return 0
    archive = os.path.join(cache, "openmpi_4.1.4.orig.tar.xz")
    debian_source().main(POOL_PATH, SHA256, archive)
    tmp = headers + ".part"
    shutil.rmtree(tmp, ignore_errors=True)
    n = 0
    with tarfile.open(archive, "r:xz") as tar:
        for m in tar:
            rest = m.name[len(OB1_DIR):] if m.name.startswith(OB1_DIR) else None
            if m.isfile() and rest and rest.endswith(".h") and "/" not in rest:
                dest = os.path.join(tmp, OB1_DIR, rest)
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with open(dest, "wb") as f:
                    f.write(tar.extractfile(m).read())
                n += 1
    if n == 0:
        sys.exit(f"{archive}: no {OB1_DIR}*.h")
    with open(os.path.join(tmp, ".sha256"), "w") as f:
        f.write(SHA256)
    shutil.rmtree(headers, ignore_errors=True)
    os.replace(tmp, headers)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
