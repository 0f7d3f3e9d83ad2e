#!/usr/bin/env python3
"""Copy-paste between backends (issue #14): no run of six or more identical lines may stand in
the code of two different backends, nor in the tests of two different backends.

  scripts/cross_backend_clones.py JSCPD

Runs jscpd (pinned: scripts/jscpd/package.json, installed by `npm ci` there) once over
backends/ and the backend tests, and fails on every clone whose two sides belong to
different groups: a backend's folder backends/<name>/, the tests named after it
(tests/<name>_*.cpp), or the attack suite they share (tests/backend_attack_suite.*). A clone
inside one group is not reported here (one file, or one backend and its own files).
#include lines are not counted: an include list says what a file uses, not how.

A clone between two files listed in scripts/jscpd/known-clones.txt is reported but does not
fail: files another change is rewriting, each with the reason. A listed file that is in no
clone any more is named, to be removed from the list.
"""

import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BACKENDS = ("subprocess", "namespace", "container")
# Lines that only name what a file uses (includes, using-declarations, namespace aliases):
# jscpd takes each as one token, so a run of them alone stays under --min-tokens.
IGNORE = ["--ignore-pattern",
          "|".join((r'#include\s*[<"][^>"]*[>"]', r"\busing [^;{}]*;", r"\bnamespace \w+ = [^;]*;"))]
KNOWN = ROOT / "scripts" / "jscpd" / "known-clones.txt"


def group(path: str) -> str | None:
    p = pathlib.PurePosixPath(path)
    if p.parts[0] == "backends" and len(p.parts) > 2:
        return p.parts[1]
    if p.parts[0] == "tests" and len(p.parts) == 2:
        if p.name.startswith("backend_attack_suite."):
            return "attack suite"
        for backend in BACKENDS:
            if p.name.startswith(backend + "_"):
                return backend + " tests"
    return None


def sources() -> list[str]:
    patterns = ["backends/*.cpp", "backends/*.h", "tests/backend_attack_suite.*"]
    patterns += [f"tests/{b}_*.cpp" for b in BACKENDS]
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "--"]
                         + patterns, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return sorted({f for f in out.splitlines() if (ROOT / f).is_file()})


def known_files() -> dict[str, str]:
    files = {}
    for line in KNOWN.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, reason = line.partition(":")
            files[name.strip()] = reason.strip()
    return files


def main() -> int:
    jscpd = sys.argv[1]
    files = sources()
    with tempfile.TemporaryDirectory(prefix="cordon-jscpd-") as out:
        # --min-lines 6 with --min-tokens 20: six lines of code are more than 20 tokens, so
        # lines decide. --max-lines/--max-size: jscpd skips larger files silently otherwise.
        run = subprocess.run(
            [jscpd, "--silent", "--min-lines", "6", "--min-tokens", "20",
             "--max-lines", "100000", "--max-size", "1mb", "--format", "cpp",
             "--formats-exts", "cpp:cpp,h", *IGNORE,
             "--reporters", "json", "--output", out, "--no-gitignore", *files],
            cwd=ROOT, capture_output=True, text=True)
        report = pathlib.Path(out) / "jscpd-report.json"
        if run.returncode != 0 or not report.exists():
            sys.stderr.write(run.stdout + run.stderr)
            print("cross-backend clones: jscpd failed", file=sys.stderr)
            return 1
        duplicates = json.loads(report.read_text())["duplicates"]
    known = known_files()
    in_clones = set()
    failed = 0
    for d in duplicates:
        a, b = d["firstFile"], d["secondFile"]
        ga, gb = group(a["name"]), group(b["name"])
        if ga is None or gb is None or ga == gb:
            continue
        where = f'{a["name"]}:{a["start"]} ~ {b["name"]}:{b["start"]} ({d["lines"]} lines)'
        in_clones.update((a["name"], b["name"]))
        if a["name"] in known and b["name"] in known:
            print(f"cross-backend clone (known: {known[a['name']]}): {where}")
        else:
            failed += 1
            print(f"cross-backend clone: {where}", file=sys.stderr)
    for name in sorted(known.keys() - in_clones):
        print(f"cross-backend clones: {name} is in no clone now; remove it from "
              f"{KNOWN.relative_to(ROOT)}")
    if failed:
        print(f"cross-backend clones: {failed} found; make one copy serve both (in core/ or a "
              "shared test header)", file=sys.stderr)
        return 1
    print(f"cross-backend clones: none but the known ones, in {len(files)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
