#!/usr/bin/env python3
"""Reference values of the Bekker–Wong wheel model (docs/terrain.md), written
independently of src/terrain/bekker_wong.c: plain Python, adaptive Simpson
quadrature (to 1e-10 relative) in place of the library's Gauss–Legendre, and
bisection in place of its regula falsi for the static sinkage.

    python3 tests/data/bekker_wong_reference.py > tests/data/bekker_wong_reference.csv

Rows: the static model (load W carried at slip s and slip angle beta) of the
two soils of Kruuse 2023, Table 4.1, on their wheels, and the forces at a
given sinkage. test_bekker_wong compares the library to every row.
"""
import math

DEG = math.pi / 180.0

# Kruuse 2023, Table 4.1 (SI); K of Ding et al. 2011: the middle of 9.7–13.1 mm
SOILS = {
    "ishigami2007": dict(kc=1.37e3, kphi=814e3, n0=1.0, n1=0.0, c=0.8e3, phi=37.2 * DEG,
                         Kx0=0.036, Kx1=0.043, Ky0=0.013, Ky1=0.020, a1=0.4, a2=0.15, lam=1.0,
                         r=0.09, b=0.11, W=50.0),
    "ding2011": dict(kc=15.6e3, kphi=2407.4e3, n0=1.1, n1=0.0, c=0.25e3, phi=31.9 * DEG,
                     Kx0=0.0114, Kx1=0.0, Ky0=0.0114, Ky1=0.0, a1=0.4, a2=0.15, lam=0.0,
                     r=0.15735, b=0.165, W=80.0),
}


def simpson(f, a, b, tol):
    """Adaptive Simpson on [a, b] to absolute tolerance tol."""
    def rec(a, b, fa, fm, fb, whole, tol, depth):
        m = 0.5 * (a + b)
        lm, rm = 0.5 * (a + m), 0.5 * (m + b)
        flm, frm = f(lm), f(rm)
        left = (m - a) / 6.0 * (fa + 4.0 * flm + fm)
        right = (b - m) / 6.0 * (fm + 4.0 * frm + fb)
        if depth <= 0 or abs(left + right - whole) <= 15.0 * tol:
            return left + right + (left + right - whole) / 15.0
        return (rec(a, m, fa, flm, fm, left, 0.5 * tol, depth - 1) +
                rec(m, b, fm, frm, fb, right, 0.5 * tol, depth - 1))
    if b <= a:
        return 0.0
    fa, fb, fm = f(a), f(b), f(0.5 * (a + b))
    return rec(a, b, fa, fm, fb, (b - a) / 6.0 * (fa + 4.0 * fm + fb), tol, 50)


def forces(p, theta1, s, beta):
    """(fz, fx, fy, T, sinkage, theta2, theta_m) at entry angle theta1."""
    r, b = p["r"], p["b"]
    h0 = r * (1.0 - math.cos(theta1))
    n = p["n0"] + p["n1"] * abs(s)
    k = p["kc"] / b + p["kphi"]
    theta2 = -math.acos(max(-1.0, min(1.0, 1.0 - p["lam"] * h0 / r)))
    theta_m = min(theta1, max(theta2, (p["a1"] + p["a2"] * s) * theta1))
    Kx = p["Kx0"] + p["Kx1"] * abs(beta)
    Ky = p["Ky0"] + p["Ky1"] * abs(beta)

    def sigma(t):
        if t >= theta_m:
            te = t
        else:
            te = theta1 - (t - theta2) / (theta_m - theta2) * (theta1 - theta_m)
        h = r * (math.cos(te) - math.cos(theta1))
        return k * max(h, 0.0) ** n

    def shear(t, j, K):
        tm = p["c"] + sigma(t) * math.tan(p["phi"])
        return math.copysign(tm * (1.0 - math.exp(-abs(j) / K)), j)

    def tx(t):
        j = r * (theta1 - t - (1.0 - s) * (math.sin(theta1) - math.sin(t)))
        return shear(t, j, Kx)

    def ty(t):
        j = r * (1.0 - s) * (theta1 - t) * math.tan(beta)
        return shear(t, j, Ky)

    def integral(f):
        # the integrands are smooth on each side of theta_m
        return (simpson(f, theta2, theta_m, 1e-12) + simpson(f, theta_m, theta1, 1e-12))

    fz = b * r * integral(lambda t: sigma(t) * math.cos(t) + tx(t) * math.sin(t))
    fx = b * r * integral(lambda t: tx(t) * math.cos(t) - sigma(t) * math.sin(t))
    fy = b * r * integral(ty)
    T = b * r * r * integral(tx)
    return fz, fx, fy, T, h0, theta2, theta_m


def static(p, W, s, beta):
    """Bisection on theta1 in (0, pi/2] for fz = W."""
    lo, hi = 0.0, 0.5 * math.pi
    while hi - lo > 1e-13:
        mid = 0.5 * (lo + hi)
        if forces(p, mid, s, beta)[0] < W:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def main():
    print("# Bekker-Wong reference (tests/data/bekker_wong_reference.py): adaptive Simpson, bisection")
    print("kind,soil,load_N,slip,slip_angle_rad,theta1_rad,sinkage_m,fz_N,fx_N,fy_N,torque_Nm")
    for name, p in SOILS.items():
        slip_angles = [0.0, 10.0 * DEG] if name == "ishigami2007" else [0.0]
        for beta in slip_angles:
            for s in [-0.5, -0.2, 0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9]:
                t1 = static(p, p["W"], s, beta)
                fz, fx, fy, T, z, _, _ = forces(p, t1, s, beta)
                print("static,%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g"
                      % (name, p["W"], s, beta, t1, z, fz, fx, fy, T))
        for z in [0.002, 0.01, 0.03]:
            for s in [-0.3, 0.0, 0.4]:
                beta = 5.0 * DEG
                t1 = math.acos(1.0 - z / p["r"])
                fz, fx, fy, T, _, _, _ = forces(p, t1, s, beta)
                print("sinkage,%s,0,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g"
                      % (name, s, beta, t1, z, fz, fx, fy, T))


if __name__ == "__main__":
    main()
