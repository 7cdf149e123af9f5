"""Runs numbered fuzz cases in child interpreters, a batch per child, and
records the cases that kill the child (a signal, an ASan report), hang it
or take long. The child writes "B <case>" before each call to a progress
file, so after a death the parent knows the case and resumes after it.

A fuzz script defines count and run_case (see main) and calls
main(count, run_case) from its `if __name__ == "__main__"` block:

    script.py OUT.json [--seed S] [--per N]    # parent: the whole run
    script.py --worker START END PROGRESS ...  # child: one batch

Under the ASan build (LD_PRELOAD set) no address-space limit is set (ASan
reserves terabytes); set ASAN_OPTIONS=hard_rss_limit_mb=... instead, so a
runaway allocation is a report rather than the machine's OOM killer."""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

BATCH = 2000
SLOW_S = 5.0
BATCH_TIMEOUT_S = 300  # a batch still running then holds a hanging call


def _worker(start, end, progress, run_case):
    import warnings
    warnings.simplefilter("ignore")
    if not os.environ.get("LD_PRELOAD"):
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
    with open(progress, "w", buffering=1) as pf:
        for i in range(start, end):
            pf.write(f"B {i}\n")
            t0 = time.time()
            try:
                run_case(i, lambda text: pf.write(f"N {text}\n"))
            except Exception:  # noqa: BLE001 - any exception is a clean outcome
                pass
            if time.time() - t0 > SLOW_S:
                pf.write(f"SLOW {i} {time.time() - t0:.1f}\n")
        pf.write("DONE\n")


def _parent(out, total, argv_tail):
    me = os.path.abspath(sys.argv[0])
    progress = out + ".progress"
    found, pos = [], 0
    print(f"{total} cases", flush=True)
    while pos < total:
        end = min(total, pos + BATCH)
        cmd = [sys.executable, me, "--worker", str(pos), str(end), progress] + argv_tail
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=BATCH_TIMEOUT_S)
            status, err = p.returncode, p.stderr.decode(errors="replace")[-4000:]
        except subprocess.TimeoutExpired:
            status, err = "timeout", ""
        lines = open(progress).read().splitlines() if os.path.exists(progress) else []
        found += [{"kind": "slow", "line": ln} for ln in lines if ln.startswith("SLOW")]
        if lines and lines[-1] == "DONE":
            pos = end
            continue
        starts = [k for k, ln in enumerate(lines) if ln.startswith("B ")]
        case = int(lines[starts[-1]].split()[1]) if starts else pos
        found.append({"kind": "crash", "status": status, "case": case,
                      "notes": lines[starts[-1] + 1:] if starts else [], "stderr": err})
        print(f"CRASH case {case} status {status}: {err[-300:]}", flush=True)
        pos = case + 1
        with open(out, "w") as f:
            json.dump(found, f, indent=1)
    with open(out, "w") as f:
        json.dump(found, f, indent=1)
    crashes = sum(r["kind"] == "crash" for r in found)
    print(f"done: {crashes} crashes, {len(found) - crashes} slow cases; {out}", flush=True)
    return 1 if crashes else 0


def main(count, run_case):
    """count(seed, per) -> number of cases; run_case(seed, per, i, note) runs
    case i, calling note(text) with what it is about to call"""
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per", type=int, default=40, help="cases per function")
    ap.add_argument("out", nargs="?", default="fuzz_results.json")
    a = ap.parse_args()
    tail = ["--seed", str(a.seed), "--per", str(a.per)]
    if a.worker:
        start, end, progress = a.worker
        _worker(int(start), int(end), progress, lambda i, note: run_case(a.seed, a.per, i, note))
        return 0
    return _parent(a.out, count(a.seed, a.per), tail)
