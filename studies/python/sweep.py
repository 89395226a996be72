#!/usr/bin/env python3
"""A parameter sweep from Python (docs/python.md, "A parameter sweep"): the
sliding box of examples/scenes/sliding_box_coulomb.json (1 kg, launched at
2 m/s, Coulomb's law) stops after v0^2 / (2 mu g); its stop distance for 16
friction coefficients, the runs spread over threads with concurrent.futures
(each model releases the GIL while it steps), against the analytic curve.

    PYTHONPATH=build-release/python /usr/bin/python3 studies/python/sweep.py [--threads N] [--out SVG]

Prints the distances, the worst difference from the analytic value, and the
wall time of the sweep on 1 thread and on N (default 2); writes the figure
(default docs/figures/python_sweep.svg).
"""

import argparse
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import dvicontact

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
V0, G, DT = 2.0, 9.81, 1e-4


def stop_distance(mu):
    """The box's sliding distance (m) at friction coefficient mu, stepped until 0.05 s after it stops."""
    with open(os.path.join(SRC, "examples", "scenes", "sliding_box_coulomb.json")) as f:
        scene = json.load(f)
    scene["materials"]["default"]["friction"] = mu
    scene["probes"] = []
    m = dvicontact.Model(dvicontact.Scene(scene, overrides={"dt": DT, "threads": 1}))
    m.run(V0 / (mu * G) + 0.05)
    return m.positions[m.body_index("box"), 0]


def sweep(mus, threads):
    t0 = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        d = list(pool.map(stop_distance, mus))
    return np.array(d), time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(SRC, "docs", "figures", "python_sweep.svg"))
    a = ap.parse_args()
    mus = np.linspace(0.1, 0.85, 16)
    d1, wall1 = sweep(mus, 1)
    dn, walln = sweep(mus, a.threads)
    assert np.array_equal(d1, dn), "threads changed the answers"
    exact = V0**2 / (2 * mus * G)
    for mu, d, e in zip(mus, dn, exact):
        print(f"mu {mu:.3f}: {d:.6f} m (v0^2/(2 mu g) = {e:.6f} m)")
    print(f"worst |d - v0^2/(2 mu g)|: {np.max(np.abs(dn - exact)):.2e} m (h v0 / 2 = {DT * V0 / 2:.1e} m)")
    print(f"wall: {wall1:.2f} s on 1 thread, {walln:.2f} s on {a.threads}: speed-up {wall1 / walln:.2f}")

    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    plt.rcParams["svg.hashsalt"] = "dvicontact"  # the same file for the same answers
    fig, ax = plt.subplots(figsize=(6, 4))
    m = np.linspace(mus[0], mus[-1], 200)
    ax.plot(m, V0**2 / (2 * m * G), color="0.6", label=r"$v_0^2 / (2 \mu g)$")
    ax.plot(mus, dn, "o", color="C0", label=f"sliding_box_coulomb.json, h = {DT:g} s")
    ax.set_xlabel(r"friction coefficient $\mu$")
    ax.set_ylabel("stop distance [m]")
    ax.set_title(f"The sliding box's stop distance ({V0:g} m/s)")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(a.out, metadata={"Date": None})
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
