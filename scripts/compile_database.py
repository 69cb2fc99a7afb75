#!/usr/bin/env python3
"""A compile database with one entry per source file, also for a unity build.

The Release build (scripts/setup) is a unity build: CMake's compile_commands.json then names its
unity files (`.../CMakeFiles/TARGET.dir/Unity/unity_N_cxx.cxx`, each an #include of up to 16 of
the target's sources by absolute path), not the sources. Tools that work per source (clang-tidy,
scripts/check-thread-safety) read this database instead: each source a unity file includes gets
that unity file's command with the source in its place. Its "output" stays the unity object, so
ninja's dependency log of the object still describes the source (as the union of its unit's
headers). A build that is not unity gives its own entries back unchanged.

    scripts/compile_database.py [BUILD [OUT]]   writes OUT/compile_commands.json (default
                                                BUILD/per-source/) and prints OUT
"""
import json
import os
import re
import shlex
import sys

# CMake's unity files name their sources by absolute path, one #include each.
UNITY_SOURCE = re.compile(r'^#include "(/[^"]+)"$', re.M)


def arguments(entry):
    return entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])


def output_of(entry):
    """The object file an entry writes (absolute), or None."""
    args = arguments(entry)
    if "-o" not in args:
        return None
    return os.path.normpath(os.path.join(entry["directory"], args[args.index("-o") + 1]))


def unity_sources(path):
    """The sources a CMake unity file includes; None when `path` is not one."""
    if os.sep + "Unity" + os.sep not in path or not os.path.basename(path).startswith("unity_"):
        return None
    with open(path) as f:
        return [os.path.normpath(s) for s in UNITY_SOURCE.findall(f.read())]


def per_source_entries(build):
    """The entries of BUILD/compile_commands.json, one per source file."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    out = []
    for entry in entries:
        path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
        sources = unity_sources(path)
        if sources is None:
            out.append(dict(entry, file=path, arguments=arguments(entry), output=output_of(entry)))
            continue
        args = arguments(entry)
        for source in sources:
            out.append({
                "directory": entry["directory"],
                "file": source,
                "arguments": [source if os.path.normpath(os.path.join(entry["directory"], a)) ==
                              path else a for a in args],
                "output": output_of(entry),
            })
    return out


def main(argv):
    build = os.path.abspath(argv[1] if len(argv) > 1 else "build")
    out = os.path.abspath(argv[2] if len(argv) > 2 else os.path.join(build, "per-source"))
    entries = per_source_entries(build)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "compile_commands.json"), "w") as f:
        json.dump(entries, f, indent=1)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
