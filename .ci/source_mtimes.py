#!/usr/bin/env python3
"""Keeps cargo's incremental builds across fresh clones.

Cargo decides a workspace crate is stale when one of its source files is newer than its last
build. A fresh clone gives every file the clone's time, so a warm target directory is rebuilt
from scratch (about ten minutes of a CI run). `record` writes, next to the target directory,
each tracked file's blob id and modification time; `restore` gives the files of a new clone
whose blob id is unchanged their recorded time back, so only what changed is rebuilt.

Sound only if the target directory holds what the recorded sources built: when anything in it
was built after the record was written (a developer's build sharing the directory), `restore`
does nothing and everything is rebuilt, as without this script.

Usage: source_mtimes.py record|restore TARGET_DIR   (run from the repository root)
"""

import hashlib
import os
import subprocess
import sys

MANIFEST = "ci-source-mtimes.tsv"


def tracked_files():
    """(blob id, path) of every file git tracks in the working tree."""
    out = subprocess.run(["git", "ls-files", "-s", "-z"], check=True, capture_output=True).stdout
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        _mode, blob, _stage = meta.split(b" ")
        yield blob.decode(), os.fsdecode(path)


def tracked_entries():
    """(id, path) of every tracked file (its blob id) and of every directory holding tracked
    files (a digest of the names it holds: build scripts watch directories such as
    `api/migrations`, whose time changes when an entry is added or removed)."""
    children = {}
    entries = []
    for blob, path in tracked_files():
        entries.append((blob, path))
        parts = path.split("/")
        for depth in range(1, len(parts)):
            children.setdefault("/".join(parts[:depth]), set()).add(parts[depth])
    for directory, names in children.items():
        digest = hashlib.sha1("\n".join(sorted(names)).encode()).hexdigest()
        entries.append(("dir:" + digest, directory))
    return entries


def built_after(target_dir, since_ns):
    """True when a fingerprint in the target directory is newer than the record."""
    for profile in os.scandir(target_dir):
        fingerprints = os.path.join(profile.path, ".fingerprint")
        if not profile.is_dir() or not os.path.isdir(fingerprints):
            continue
        for unit in os.scandir(fingerprints):
            # Cargo rewrites the files of a unit in place, which leaves the unit's directory
            # time alone: look at the files.
            if not unit.is_dir():
                continue
            for item in os.scandir(unit.path):
                if item.stat().st_mtime_ns > since_ns:
                    return True
    return False


def modified_files():
    """Tracked paths whose working-tree content differs from the index (the blob ids above
    describe the index, so such files must not be recorded)."""
    out = subprocess.run(
        ["git", "diff", "--name-only", "-z"], check=True, capture_output=True
    ).stdout
    return {os.fsdecode(path) for path in out.split(b"\0") if path}


def record(target_dir):
    manifest = os.path.join(target_dir, MANIFEST)
    modified = modified_files()
    lines = []
    for blob, path in tracked_entries():
        if path in modified:
            continue
        try:
            mtime = os.stat(path, follow_symlinks=False).st_mtime_ns
        except FileNotFoundError:
            continue
        lines.append(f"{blob}\t{mtime}\t{path}\n")
    with open(manifest + ".new", "w", encoding="utf-8") as out:
        out.writelines(lines)
    os.replace(manifest + ".new", manifest)
    print(f"recorded the times of {len(lines)} tracked files and directories in {manifest}")


def restore(target_dir):
    manifest = os.path.join(target_dir, MANIFEST)
    if not os.path.exists(manifest):
        print("no record of a previous run: every workspace crate is built")
        return
    if built_after(target_dir, os.stat(manifest).st_mtime_ns):
        print("the target directory was built after the last record: every workspace crate is built")
        return
    recorded = {}
    with open(manifest, encoding="utf-8") as lines:
        for line in lines:
            blob, mtime, path = line.rstrip("\n").split("\t", 2)
            recorded[path] = (blob, int(mtime))
    restored = changed = 0
    for blob, path in tracked_entries():
        previous = recorded.get(path)
        if previous is None or previous[0] != blob:
            changed += 1
            continue
        os.utime(path, ns=(previous[1], previous[1]), follow_symlinks=False)
        restored += 1
    print(f"{restored} unchanged files and directories keep their recorded time; {changed} are new or changed")


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("record", "restore"):
        sys.exit(__doc__)
    target_dir = sys.argv[2]
    os.makedirs(target_dir, exist_ok=True)
    {"record": record, "restore": restore}[sys.argv[1]](target_dir)


if __name__ == "__main__":
    main()
