#!/usr/bin/env python3
"""Fetches one file of a Debian source package into a cache, checked against its sha256.

The sha256 is the one Debian's .dsc of the installed version lists, so what is built here is
exactly Debian's source. A file already in the cache with the right sha256 is reused.

Usage: debian-source.py POOL_PATH SHA256 DEST_FILE
  e.g. debian-source.py m/mpich/mpich_4.0.2.orig.tar.xz b27039f9... ~/.cache/mpit-rs/mpich_4.0.2.orig.tar.xz
"""
import hashlib
import os
import sys
import urllib.request

POOL = "http://deb.debian.org/debian/pool/main/"


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main(pool_path, sha256, dest):
    if os.path.exists(dest) and sha256_of(dest) == sha256:
        return 0
    os.makedirs(os.path.dirname(os.path.abspath(dest)), exist_ok=True)
    url = POOL + pool_path
    part = dest + ".part"
    with urllib.request.urlopen(url, timeout=300) as r, open(part, "wb") as f:
        while chunk := r.read(1 << 20):
            f.write(chunk)
    got = sha256_of(part)
    if got != sha256:
        os.remove(part)
        sys.exit(f"{url}: sha256 {got}, expected {sha256}")
    os.replace(part, dest)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
