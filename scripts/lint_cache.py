#!/usr/bin/env python3
"""clang-tidy with a committed, content-addressed result cache (the ctcache idea).

    scripts/lint_cache.py BUILD_DIR CACHE_FILE JOBS [--no-cache] [--no-write]

A translation unit (TU) that clang-tidy passed is recorded in CACHE_FILE as
`<key> <path>`. Its key is a sha256 over everything that decides clang-tidy's verdict:
  - `clang-tidy-19 --version`, the .clang-tidy files and .clang-format (FormatStyle: file);
  - the TU's compile command(s) from compile_commands.json, with the source root and the
    build dir replaced by placeholders (a clean clone lives at another path) and the
    sanitizer flags of CORDON_SANITIZE left out (they change the code generated, not the
    source clang-tidy reads; no file of ours tests __SANITIZE_ADDRESS__ or the like), so the
    asan build shares the keys of build/dev; likewise the debug-info level (`-g1` of
    the `ci` preset is keyed as `-g`: it changes what is emitted, not what is read) and
    the compiler (keyed as `<CXX>`: clang-tidy parses with its own front end whatever
    compiled the build, g++ for build/dev, clang++-19 for build/ci; CMake's two
    spellings of C++23 for them are keyed as one);
  - the content of the TU and of every file of this repository it includes (from
    `ninja -t deps` of the build that has just run; `<compiler> -M` when ninja has no
    current deps for it).
System and third-party headers are left out: they come from pinned Debian packages
(scripts/install-deps.sh) whose changes arrive together with a new clang-tidy-19 package
version or a changed compile command, and hashing them would cost more than the lint of a
changed file. Bump KEY_VERSION when the key recipe changes.

Only TUs whose key is not in the cache are linted (like run-clang-tidy-19: `clang-tidy-19
-p BUILD_DIR -quiet FILE`, JOBS at a time, but with a verdict per TU). Unless --no-write, the
cache file is rewritten with one line per current TU that is clean: stale lines (deleted
files, old keys) go away.
"""

import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

KEY_VERSION = "cordon-lint-cache 2"
TIDY = "clang-tidy-19"
# The TUs linted: the sources of core/, backends/, audit/, prompts/, frontend/ and cli/ (the
# tests are format-checked only).
TU_PATTERN = re.compile(r"^(core|backends|audit|prompts|frontend|cli)/.*\.cpp$")


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


class FileHashes:
    """Content hash per absolute path, each file read once per run."""

    def __init__(self):
        self.known = {}

    def get(self, path):
        if path not in self.known:
            try:
                with open(path, "rb") as f:
                    self.known[path] = sha256_bytes(f.read())
            except OSError:
                self.known[path] = "missing"
        return self.known[path]


def entry_args(entry):
    if "arguments" in entry:
        return list(entry["arguments"])
    return shlex.split(entry["command"])


def output_of(entry, args):
    if "output" in entry:
        return entry["output"]
    for i, arg in enumerate(args[:-1]):
        if arg == "-o":
            return args[i + 1]
    return None


# Flags cmake/sanitizers.cmake adds per target: out of the key (see the docstring).
SANITIZER_FLAG = re.compile(r"^-f(no-)?sanitize(-recover)?=|^-fno-omit-frame-pointer$")


def without_pch(args):
    """The command without CMake's precompiled header (cmake/pch.cmake): g++'s `-include
    <dir>/cmake_pch.hxx`, clang's `-Xclang -include-pch -Xclang <dir>/cmake_pch.hxx.pch
    -Xclang -include -Xclang <dir>/cmake_pch.hxx`, and -Winvalid-pch. clang-tidy cannot
    read gcc's .gch (nor a clang .pch made with other flags), and without the forced include
    a TU that does not include what it uses fails the lint. The header holds third-party
    ones only (not hashed), so the key leaves it out as well."""
    out, i = [], 0
    while i < len(args):
        if args[i] == "-include" and i + 1 < len(args) and args[i + 1].endswith("/cmake_pch.hxx"):
            i += 2
            continue
        if (args[i] == "-Xclang" and i + 3 < len(args) and args[i + 1] in ("-include-pch", "-include")
                and args[i + 2] == "-Xclang"
                and args[i + 3].endswith(("/cmake_pch.hxx", "/cmake_pch.hxx.pch"))):
            i += 4
            continue
        if args[i] != "-Winvalid-pch":
            out.append(args[i])
        i += 1
    return out


# -g, -g1, -g3, -ggdb...: the level of debug info. Keyed as plain -g (see the docstring).
DEBUG_INFO_FLAG = re.compile(r"^-g(gdb)?[0-3]?$")


# CMake spells C++23 -std=c++23 for g++ 12 and -std=c++2b for clang++-19: one mode to clang-tidy.
SAME_FLAG = {"-std=c++2b": "-std=c++23"}


def key_args(args):
    args = without_pch(args)
    return ["<CXX>"] + [SAME_FLAG.get(arg, "-g" if DEBUG_INFO_FLAG.match(arg) else arg)
                        for arg in args[1:] if not SANITIZER_FLAG.match(arg)]


def normalise(text, src, build):
    # The build dir lies inside the source root: replace it first.
    return text.replace(build, "<BUILD>").replace(src, "<SRC>")


def parse_ninja_deps(text):
    """`ninja -t deps` output -> {object: [dep paths]} for entries ninja still trusts."""
    deps, current = {}, None
    for line in text.splitlines():
        if not line.strip():
            current = None
        elif not line.startswith(" "):
            head, _, status = line.partition(": #deps")
            # STALE: the object is older than its deps record (or missing): don't trust it.
            current = head if "(VALID)" in status else None
            if current is not None:
                deps[current] = []
        elif current is not None:
            deps[current].append(line.strip())
    return deps


def compiler_deps(entry, args):
    """Fallback: ask the compiler which files the TU includes (-M, all headers)."""
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
        elif arg in ("-c", "-MD", "-MMD"):
            continue
        else:
            out.append(arg)
    proc = subprocess.run(out + ["-M", "-MF", "-"], cwd=entry["directory"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return None
    text = proc.stdout.replace("\\\n", " ")
    return shlex.split(text.partition(":")[2])


def compute_keys(build, db, hashes):
    """{relative TU path: key} for the TUs of TU_PATTERN."""
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tidy_version = subprocess.run([TIDY, "--version"], capture_output=True, text=True,
                                  check=True).stdout
    common = "\n".join([KEY_VERSION, tidy_version] +
                        [name + " " + hashes.get(os.path.join(src, name))
                         for name in (".clang-tidy", ".clang-format")])

    by_file = {}
    for entry in db:
        path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
        rel = os.path.relpath(path, src)
        if TU_PATTERN.match(rel):
            by_file.setdefault(rel, []).append(entry)

    objects = {}
    for rel, entries in by_file.items():
        for entry in entries:
            obj = output_of(entry, entry_args(entry))
            if obj is not None:
                objects[obj] = rel
    proc = subprocess.run(["ninja", "-C", build, "-t", "deps"] + sorted(objects),
                          capture_output=True, text=True, check=False)
    # Objects never built yet print "deps not found" and fall back to the compiler below.
    ninja_deps = parse_ninja_deps(proc.stdout)

    keys, fallbacks = {}, 0
    for rel, entries in sorted(by_file.items()):
        commands, files = [], set()
        for entry in entries:
            args = entry_args(entry)
            commands.append(normalise("\0".join(key_args(args)), src, build))
            deps = ninja_deps.get(output_of(entry, args))
            if deps is None:
                fallbacks += 1
                deps = compiler_deps(entry, args)
            if deps is None:
                deps = []  # the compiler failed too: the key holds the TU only; lint sees the error
            for dep in deps:
                absolute = os.path.normpath(os.path.join(build, dep))
                if os.path.basename(absolute).startswith("cmake_pch.hxx"):
                    continue  # CMake's precompiled header: see without_pch()
                if absolute == src or absolute.startswith(src + "/"):
                    files.add(absolute)
        files.add(os.path.join(src, rel))
        # clang-tidy also reads any .clang-tidy between the file and the root (none today).
        directory = os.path.dirname(os.path.join(src, rel))
        while directory.startswith(src + "/"):
            if hashes.get(os.path.join(directory, ".clang-tidy")) != "missing":
                files.add(os.path.join(directory, ".clang-tidy"))
            directory = os.path.dirname(directory)
        lines = [common] + sorted(commands)
        lines += [normalise(f, src, build) + " " + hashes.get(f) for f in sorted(files)]
        keys[rel] = sha256_bytes("\n".join(lines).encode())
    return src, keys, fallbacks


def read_cache(path):
    cached = set()
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2 and not line.startswith("#"):
                    cached.add((parts[0], parts[1]))
    except FileNotFoundError:
        pass
    return cached


def write_cache(path, clean):
    text = ("# clang-tidy-19 results of scripts/lint.sh: `<key> <path>` per clean translation\n"
            "# unit (key recipe: scripts/lint_cache.py). Update by running scripts/lint.sh\n"
            "# (build/dev) before a commit; never edit by hand.\n")
    text += "".join(f"{key} {rel}\n" for rel, key in sorted(clean.items()))
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return False
    except FileNotFoundError:
        pass
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    return True


def write_tidy_db(db, directory):
    """compile_commands.json for clang-tidy in `directory`: the build's, without_pch()."""
    entries = [{"directory": e["directory"], "file": e["file"],
                "arguments": without_pch(entry_args(e))} for e in db]
    with open(os.path.join(directory, "compile_commands.json"), "w", encoding="utf-8") as f:
        json.dump(entries, f)


def lint_one(tidy_db_dir, src, rel):
    proc = subprocess.run([TIDY, "-p", tidy_db_dir, "-quiet", os.path.join(src, rel)],
                          capture_output=True, text=True, check=False)
    # "N warnings generated." counts the suppressed ones (system headers, disabled checks).
    output = [line for line in (proc.stdout + proc.stderr).splitlines()
              if not re.fullmatch(r"\d+ warnings? (and \d+ errors? )?generated\.", line)]
    return rel, proc.returncode, "\n".join(output)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    no_cache = "--no-cache" in sys.argv
    no_write = "--no-write" in sys.argv
    build, cache_path, jobs = os.path.abspath(args[0]), args[1], int(args[2])
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        db = json.load(f)

    started = time.monotonic()
    src, keys, fallbacks = compute_keys(build, db, FileHashes())
    cached = set() if no_cache else read_cache(cache_path)
    todo = sorted(rel for rel, key in keys.items() if (key, rel) not in cached)
    print(f"lint: clang-tidy keys of {len(keys)} TUs in {time.monotonic() - started:.1f}s"
          + (f" ({fallbacks} via the compiler, not ninja)" if fallbacks else "")
          + f"; {len(keys) - len(todo)} cached, {len(todo)} to lint ({jobs} jobs)",
          flush=True)

    # The cache is rewritten after each clean TU, so an interrupted lint keeps its progress.
    # Lines of TUs that no longer exist or whose key changed are dropped (unless cached).
    clean = {rel: key for rel, key in keys.items() if (key, rel) in cached}
    written = not no_write and write_cache(cache_path, clean)
    failed = set()
    # Not "cordon-*": the suite's leftover check (tests/suite_leftovers.cpp) counts every
    # /tmp/cordon-* as a run's leftover, and a lint may run beside the tests.
    with tempfile.TemporaryDirectory(prefix="lint-tidy-") as tidy_db_dir, \
            concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        write_tidy_db(db, tidy_db_dir)
        for rel, rc, output in pool.map(lambda r: lint_one(tidy_db_dir, src, r), todo):
            if rc != 0:
                failed.add(rel)
            else:
                clean[rel] = keys[rel]
                written = (not no_write and write_cache(cache_path, clean)) or written
            if rc != 0 or output.strip():
                print(f"--- clang-tidy-19 {rel} (exit {rc})\n{output.rstrip()}", flush=True)

    if written:
        print(f"lint: updated {os.path.relpath(cache_path, src)} (commit it with the code)")
    if failed:
        print(f"lint: clang-tidy-19 failed on {len(failed)} of {len(todo)} linted TUs: "
              + " ".join(sorted(failed)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
