#!/usr/bin/env python3
"""Report of tests/guest/run.sh: per boot, per test binary the passed/failed/skipped counts
and each failing test with its first failure line; per cordon command its exit status and
first error line. Exits 1 if anything failed or a boot did not finish.
    report.py RESULTS MODE...
"""
import json
import pathlib
import re
import sys

TESTS = ["proc_cgroup_delegation_test", "proc_limit_group_test", "namespace_backend_test",
         "container_backend_test"]
COMMANDS = [
    ("backends", "cordon backends"),
    ("plan-auto", "cordon plan -b auto"),
    ("plan-namespace", "cordon plan -b namespace"),
    ("plan-container", "cordon plan -b container"),
    ("audit-namespace", "cordon audit -b namespace"),
    ("audit-container", "cordon audit -b container"),
]


BOILERPLATE = ("Expected", "Which is", "Value of", "Actual", "With diff", "@@", "+", "-",
               "Google Test trace", "../", "/")


def failure_message(failures):
    """The first line of a test's failures that is not GoogleTest's comparison boilerplate
    (the cordon error a failing assertion printed), else the first assertion."""
    texts = [f.get("failure", "") for f in failures]
    for text in texts:
        for line in text.splitlines()[1:]:
            if line.strip() and not line.startswith((" ",) + BOILERPLATE):
                return line.strip()[:200]
    lines = texts[0].splitlines() if texts else []
    return " ".join(ln.strip() for ln in lines[:3])[:200] or "(no message)"


def first_error(log):
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    for ln in lines:
        if "error:" in ln.lower():
            return ln[ln.lower().index("error:"):][:200]
    for ln in lines:
        low = ln.lower()
        if any(w in low for w in ("refus", "fail", "cannot", "unavailable", "denied")):
            return ln[:200]
    return lines[-1][:200] if lines else "(no output)"


def details(step, log):
    """What a command's output says about the host: an audit's tally, a plan's limits."""
    lines = log.splitlines()
    if step.startswith("audit"):
        return [ln.strip() for ln in lines if re.search(r"\d+ blocked, \d+ escaped", ln)]
    if step.startswith("plan"):
        out, inside = [], False
        for ln in lines:
            if ln.startswith("limits:"):
                inside = True
            elif inside and ln.startswith("  "):
                out.append("limit " + " ".join(ln.split()))
            else:
                inside = False
        return out
    return []


def read(path):
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


def report_tests(out, name):
    """Returns whether NAME passed; prints its line and its failures."""
    rc = (read(out / f"{name}.rc") or "").strip() or "none"
    data = None
    try:
        data = json.loads((out / f"{name}.json").read_text())
    except (OSError, ValueError):
        pass
    if data is None:
        log = read(out / f"{name}.log") or ""
        print(f"  {name}: NO RESULT (exit {rc}): {first_error(log)}")
        return False
    passed = failed = skipped = 0
    failures = []
    for suite in data.get("testsuites", []):
        for test in suite.get("testsuite", []):
            full = f"{suite['name']}.{test['name']}"
            if test.get("failures"):
                failed += 1
                failures.append((full, failure_message(test["failures"])))
            elif test.get("result") == "SKIPPED":
                skipped += 1
            elif test.get("status", "RUN") == "RUN":
                passed += 1
    # A crash ends the JSON early or leaves none: the exit status says so.
    crashed = rc not in ("0", "1")
    print(f"  {name}: {passed} passed, {failed} failed, {skipped} skipped"
          + (f" (exit {rc}: crashed or timed out)" if crashed else ""))
    for full, msg in failures:
        print(f"    FAILED {full}: {msg}")
    # The causes at a glance: the same message with its pids and counters as N.
    causes = {}
    for _, msg in failures:
        key = re.sub(r"\d+", "N", msg)
        causes[key] = causes.get(key, 0) + 1
    for key, count in sorted(causes.items(), key=lambda kv: -kv[1])[:3]:
        if count > 1:
            print(f"    {count}x: {key}")
    return failed == 0 and rc == "0"


def main():
    results = pathlib.Path(sys.argv[1])
    ok = True
    for mode in sys.argv[2:]:
        out = results / mode
        facts = read(out / "facts.txt") or ""
        pick = {k: v for k, _, v in (ln.partition(": ") for ln in facts.splitlines())}
        print(f"== boot {mode}: pid 1 {pick.get('pid 1', '?')}, kernel {pick.get('kernel', '?')}, "
              f"own cgroup {pick.get('own cgroup', '?')}")
        if not (out / "done").exists():
            ok = False
            print(f"  DID NOT FINISH (see {results}/{mode}.serial.log)")
        for name in TESTS:
            ok &= report_tests(out, name)
        for step, label in COMMANDS:
            rc = (read(out / f"{step}.rc") or "").strip()
            log = read(out / f"{step}.log") or ""
            if not rc:
                print(f"  {label}: not run")
                ok = False
            elif rc == "0":
                print(f"  {label}: ok")
            else:
                ok = False
                print(f"  {label}: exit {rc}: {first_error(log)}")
            for line in details(step, log):
                print(f"    {line}")
    print(f"guest: {'all passed' if ok else 'FAILURES'} (details in {results})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
