#!/usr/bin/env python3
"""dvicontact — `dvi` under an address-space limit (the limit batch schedulers set).

Usage: test_memlimit.py DVI SOURCE_ROOT PENDULUM

Runs `dvi --version`, `dvi run` of a small example scene, `dvi solve` of a
small CCP with every solver and `dvi study` of a small scene (and, below
the generous limit, `dvi run` of a scene of some 30,000 spheres that does
not fit: "out of memory" while it is built), and examples/pendulum.c, a
program that uses the library itself (a world made, stepped, destroyed,
then exit: no thread may outlive it), each under
RLIMIT_AS of 60, 100 and 220 MB and a generous 4 GB (what
`prlimit --as=N` sets), with OpenBLAS allowed 4 threads. Each command must
end within 30 s (else it is killed: a failure), either with status 0 and
its normal output, or with a non-zero status and a message that says out
of memory: the library's "out of memory", or, when the limit is too small
for the dynamic loader to map the shared libraries before `main`, the
loader's "failed to map segment" (status 127). Under the generous limit
every command must succeed. A command killed by a signal fails.

Why: Debian's default OpenBLAS (the pthreads variant) starts its threads
when it is loaded; each allocates a buffer of up to 128 MB, and when that
fails it retries forever, so `dvi --version` spun at 100 % CPU under a
220 MB limit and `dvi run` hung at exit after a finished run (only SIGKILL
ended it). The library loads a BLAS without threads (meson -Dblas) and
does its dense algebra itself (src/ccp/dense.c).

Sanitizer builds reserve terabytes of address space at start-up: under
them (DVI_SANITIZE, set by tests/meson.build from b_sanitize) the test is
skipped with that reason (exit 77).
"""
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile

MB = 1000 * 1000
LIMITS = [60 * MB, 100 * MB, 220 * MB, 4000 * MB]
GENEROUS = 4000 * MB
TIMEOUT = 30.0
OOM = re.compile(r"out of memory|cannot allocate memory|failed to map segment", re.IGNORECASE)


def run_limited(cmd, limit):
    """Runs cmd under RLIMIT_AS = limit in its own session; (status, output) or
    (None, output) when it had to be killed after TIMEOUT seconds."""
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = "4"  # the hang needs BLAS threads (the suite's env sets 1)
    env.pop("OMP_NUM_THREADS", None)

    def limit_child():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                         preexec_fn=limit_child, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=TIMEOUT)
        return p.returncode, out.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # the command and the runs it started
        out, _ = p.communicate()
        return None, out.decode("utf-8", "replace")


def main():
    if len(sys.argv) != 4:
        print("usage: test_memlimit.py DVI SOURCE_ROOT PENDULUM", file=sys.stderr)
        return 2
    sanitize = os.environ.get("DVI_SANITIZE", "none")
    if sanitize not in ("", "none"):
        print(f"SKIP: built with -Db_sanitize={sanitize}: the sanitizer reserves more address space "
              "at start-up than any limit tested here")
        return 77
    dvi, src, pendulum = sys.argv[1], sys.argv[2], sys.argv[3]
    scenes = os.path.join(src, "examples", "scenes")
    failures = 0
    with tempfile.TemporaryDirectory(prefix="dvi_memlimit_") as tmp:
        for limit in LIMITS:
            tag = f"{limit // MB} MB"
            cases = [
                ("dvi --version", [dvi, "--version"], r"^dvi \d"),
                ("dvi run box_stack_10", [dvi, "run", os.path.join(scenes, "box_stack_10.json"), "--duration", "0.05",
                                          "--out", os.path.join(tmp, f"run_{limit}")], r"finished"),
                ("dvi solve stack3 --all-solvers", [dvi, "solve", os.path.join(src, "tests", "data", "ccp", "stack3.json"),
                                                   "--all-solvers"], r"(?m)^newton\s+converged"),
                ("dvi study pendulum", [dvi, "study", os.path.join(scenes, "pendulum.json"), "--methods", "dvi",
                                        "--dts-dvi", "2e-3,4e-3", "--duration", "0.1", "--jobs", "1", "--quiet",
                                        "--out", os.path.join(tmp, f"study_{limit}")], r"largest acceptable step"),
                ("examples/pendulum (the library)", [pendulum], r"period [0-9.]+ s \(theory"),
            ]
            if limit < GENEROUS:  # a scene too large for the limit: "out of memory" while it is built, then exit
                cases.append(("dvi run rover_obstacle_granular", [dvi, "run", os.path.join(scenes, "rover_obstacle_granular.json"),
                                                                  "--duration", "0.002", "--quiet", "--out",
                                                                  os.path.join(tmp, f"big_{limit}")], r"finished"))
            for name, cmd, normal in cases:
                status, out = run_limited(cmd, limit)
                last = out.strip().splitlines()[-1] if out.strip() else "(no output)"
                if status is None:
                    verdict = f"FAIL: still running after {TIMEOUT:.0f} s (killed)"
                elif status < 0:
                    verdict = f"FAIL: killed by signal {-status}"
                elif status == 0 and re.search(normal, out):
                    verdict = "ok (finished)"
                elif status == 0:
                    verdict = "FAIL: status 0 without the normal output"
                elif limit >= GENEROUS:
                    verdict = f"FAIL: status {status} under the generous limit"
                elif OOM.search(out):
                    verdict = f"ok (status {status}, out of memory)"
                else:
                    verdict = f"FAIL: status {status} without an out-of-memory message"
                print(f"{tag:>8}  {name:32s} {verdict}  [{last[:120]}]")
                failures += verdict.startswith("FAIL")
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
