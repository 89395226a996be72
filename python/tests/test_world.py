"""Worlds built in Python: physics against analytic answers, bits against the
same world built in C (examples/pendulum.c), errors with the library's text,
no leaks."""

import math
import os
import re
import signal
import subprocess
import threading
import tracemalloc

import numpy as np
import pytest

import dvicontact
from dvicontact import _core

G = 9.81


def sphere_on_plane(z0=1.0, r=0.1, **settings):
    w = dvicontact.World(**settings)
    ground = w.add_body(fixed=True)
    w.add_plane(ground)
    b = w.add_body(mass=1.0, inertia=[0.4 * r * r] * 3, position=(0.0, 0.0, z0))
    w.add_sphere(b, radius=r)
    return w, b


def test_free_fall_is_semi_implicit_euler_then_rest():
    # v_n = -g h n, x_n = x0 - g h^2 n (n + 1) / 2 (velocity first, then position) while the
    # sphere is farther from the plane than the collision envelope can see in one step
    h, z0, r = 1e-3, 1.0, 0.1
    w, b = sphere_on_plane(z0, r, dt=h)
    n = 0
    while True:
        x_next = z0 - G * h * h * (n + 1) * (n + 2) / 2
        if x_next - r < 0.005 + G * h * (n + 1) * h:  # the envelope, and a step's travel, to spare
            break
        w.step()
        n += 1
        z = b.position[2]
        assert z == pytest.approx(x_next, abs=1e-13, rel=0), "step %d" % n
        assert b.velocity[2] == pytest.approx(-G * h * n, abs=1e-13, rel=0)
    assert n == 425  # 0.425 s of free fall: 0.888 m
    assert w.time == pytest.approx(n * h, rel=1e-12)
    w.step(2000)
    # at rest at its radius above the plane (penetration below a nanometre), carried by the plane
    assert b.position[2] == pytest.approx(r, abs=1e-9)
    assert np.abs(b.velocity).max() < 1e-9
    assert b.contact_force[2] == pytest.approx(G, rel=1e-6)
    s = w.stats
    assert s["contacts"] == 1 and s["bodies"] == 2 and s["solver_status"] == "converged"
    assert s["max_penetration"] < 1e-9


def test_block_sliding_stops_after_v0_squared_over_2_mu_g():
    # tests/test_world.c, test_box_sliding_distance: a 0.2 m cube on a plane, mu = 0.4, from
    # 2 m/s stops after v0^2 / (2 mu g) = 0.50968 m, within 1 %
    mu, v0 = 0.4, 2.0
    w = dvicontact.World()
    ground = w.add_body(fixed=True)
    w.add_plane(ground, friction=mu)
    box = w.add_body(mass=1.0, inertia=[4 * 0.01 / 6.0] * 3, position=(0, 0, 0.1))
    w.add_box(box, half_extents=(0.1, 0.1, 0.1), material={"friction": mu})
    w.step(20)
    x0 = box.position
    box.set_velocity((v0, 0.0, 0.0))
    w.step(1000)  # stops after v0 / (mu g) = 0.51 s
    d = box.position[0] - x0[0]
    expect = v0 * v0 / (2 * mu * G)
    assert d == pytest.approx(expect, rel=0.01)
    assert abs(box.velocity[0]) < 1e-6  # and stays


def test_pendulum_period():
    # a 1 m revolute pendulum from 5 degrees: T = 2 pi sqrt(L / g) within 1 % (the ball's
    # inertia and the amplitude add 0.05 % each)
    L, r, amp = 1.0, 0.02, math.radians(5.0)
    w = dvicontact.World()
    bob = w.add_body(mass=1.0, inertia=[0.4 * r * r] * 3, position=(0.0, L * math.sin(amp), -L * math.cos(amp)))
    w.add_sphere(bob, radius=r)
    pivot = w.add_joint("revolute", None, bob, anchor=(0, 0, 0), axis=(1, 0, 0))
    crossings, prev, tprev = [], bob.position[1], 0.0
    for _ in range(6000):
        w.step()
        y, t = bob.position[1], w.time
        if prev > 0.0 >= y:
            crossings.append(tprev + (t - tprev) * prev / (prev - y))
        prev, tprev = y, t
    period = (crossings[-1] - crossings[0]) / (len(crossings) - 1)
    assert len(crossings) == 3
    assert period == pytest.approx(2 * math.pi * math.sqrt(L / G), rel=0.01)
    # the pivot holds the bob: its distance stays L, the reaction carries its weight plus m v^2 / L
    assert np.linalg.norm(bob.position) == pytest.approx(L, abs=1e-6)
    f, torque = pivot.reaction()
    v = bob.velocity
    assert f.shape == (3,) and torque.shape == (3,)
    n = -bob.position / L  # towards the pivot
    assert f @ n == pytest.approx(G * n[2] + v @ v / L, rel=1e-3)


def test_motor_turns_a_wheel_at_the_commanded_speed():
    w = dvicontact.World()
    wheel = w.add_body(mass=2.0, inertia=[0.05, 0.05, 0.09], position=(0, 0, 1))
    w.add_cylinder(wheel, radius=0.3, half_length=0.05)
    axle = w.add_joint("revolute", None, wheel, anchor=(0, 0, 1), axis=(0, 0, 1), motor="rotation_speed",
                       motor_speed=10.0)
    w.step(100)
    assert wheel.angular_velocity == pytest.approx([0, 0, 10.0], abs=1e-9)
    assert wheel.position == pytest.approx([0, 0, 1], abs=1e-9)
    # 100 steps later the wheel has turned by 10 rad/s x 0.1 s, as the orientation's update
    # (q + h/2 w q, normalised) turns it: 2 atan(w h / 2) a step, 0.99999167 rad
    q0 = wheel.orientation
    w.step(100)
    q1 = wheel.orientation
    qrel = np.array([q0 @ q1, *(q0[0] * q1[1:] - q1[0] * q0[1:] - np.cross(q1[1:], q0[1:]))])
    angle = 2 * math.atan2(qrel[3], qrel[0])
    assert angle == pytest.approx(100 * 2 * math.atan(10.0 * 1e-3 / 2), abs=1e-11)
    axle.set_motor(speed=-4.0)
    w.step(2)
    assert wheel.angular_velocity[2] == pytest.approx(-4.0, abs=1e-9)
    with pytest.raises(dvicontact.InputError, match="no motor"):
        w.add_joint("revolute", None, w.add_body(position=(5, 0, 0)), anchor=(5, 0, 0)).set_motor(speed=1.0)


def build_example_pendulum():
    """examples/pendulum.c, line for line."""
    L, m, r, amp, g = 1.0, 1.0, 0.05, 10.0 * 3.14159265358979 / 180.0, 9.81
    w = dvicontact.World()
    bob = w.add_body(mass=m, inertia=[0.4 * m * r * r] * 3, position=(0.0, L * math.sin(amp), -L * math.cos(amp)))
    pivot = w.add_joint("revolute", None, bob, axis=(1.0, 0.0, 0.0))
    return w, bob, pivot, (L, m, r, amp, g)


def test_bits_equal_the_c_example():
    exe = os.path.join(os.environ["DVI_BUILD_DIR"], "examples", "pendulum")
    assert os.path.exists(exe), "build the examples first (ninja -C BUILD)"
    out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.splitlines()
    w, bob, pivot, (L, m, r, amp, g) = build_example_pendulum()
    prev = tprev = first = last = worst = 0.0
    first, crossings = -1.0, 0
    for i in range(6000):
        w.step(dt=1e-3)
        x = bob.position
        t = w.time
        if i > 0 and prev > 0.0 and x[1] <= 0.0:
            tc = tprev + (t - tprev) * prev / (prev - x[1])
            if first < 0.0:
                first = tc
            last = tc
            crossings += 1
        prev, tprev = x[1], t
        worst = max(worst, abs(math.sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) - L))
    T = (last - first) / (crossings - 1)
    T0 = 2 * 3.14159265358979 * math.sqrt((m * L * L + 0.4 * m * r * r) / (m * g * L)) * (1 + amp * amp / 16)
    F, _ = pivot.reaction()
    line = "period %.5f s (theory %.5f s, %+.3f%%), max joint violation %.2e m, pivot force (%.3f, %.3f, %.3f) N" % (
        T, T0, 100 * (T - T0) / T0, worst, F[0], F[1], F[2])
    assert line == out[0]
    nums = [float(s) for s in re.findall(r"[-+0-9.e]+(?=[,) ])", out[1].split("t = ")[1])]
    assert len(nums) == 7
    got = [w.time] + list(bob.position) + list(bob.velocity)
    assert [x.hex() for x in got] == [x.hex() for x in nums]


def test_save_and_load_state_replay_bit_for_bit():
    w, b = sphere_on_plane(0.3)
    w.step(100)
    state = w.save_state()
    assert isinstance(state, bytes)
    w.step(300)
    end = w.positions, w.velocities, w.time
    w.load_state(state)
    assert w.time == pytest.approx(0.1, rel=1e-12)
    w.step(300)
    assert (w.positions == end[0]).all() and (w.velocities == end[1]).all() and w.time == end[2]
    other, _ = sphere_on_plane(0.3, r=0.2)
    with pytest.raises(dvicontact.InputError):
        other.load_state(state)  # another structure: refused, the world unchanged
    with pytest.raises(dvicontact.Error):
        w.load_state(state[:-5])


def test_arrays_of_all_bodies_and_contacts():
    w = dvicontact.World()
    ground = w.add_body(fixed=True)
    w.add_plane(ground)
    for k in range(3):
        b = w.add_body(position=(k, 0, 0.1), inertia=(0.004, 0.004, 0.004))
        w.add_sphere(b, radius=0.1)
    w.step(50)
    x = w.positions
    assert x.shape == (4, 3) and x.dtype == np.float64
    assert x[1:, 2] == pytest.approx([0.1] * 3, abs=1e-9)
    assert w.orientations.shape == (4, 4) and w.angular_velocities.shape == (4, 3)
    assert (w.body(2).position == x[2]).all() and w.body(-1) == w.body(3) and w.body_count == 4
    c = w.contacts
    assert sorted(c["body_b"].tolist()) == [1, 2, 3] and (c["body_a"] == 0).all()
    assert c["force"][:, 2] == pytest.approx([G] * 3, rel=1e-6)
    assert w.contact_forces[1:, 2] == pytest.approx([G] * 3, rel=1e-6)
    assert w.body(1).type == "dynamic" and w.body(0).type == "fixed" and w.body(1).mass == 1.0


def test_shapes_of_every_kind():
    w = dvicontact.World(gravity=(0, 0, -G), solver="pgs", pgs={"omega": 1.0}, tolerance=1e-7)
    ground = w.add_body(fixed=True)
    hf = w.add_heightfield(ground, heights=np.zeros((5, 4)), dx=1.0, dy=1.0, position=(-1.5, -2, 0))
    mesh = w.add_mesh(ground, vertices=[[10, 0, 0], [11, 0, 0], [10, 1, 0]], triangles=[[0, 1, 2]])
    assert (hf, mesh) == (0, 1)
    for k, (add, geo) in enumerate([(w.add_sphere, dict(radius=0.1)), (w.add_box, dict(half_extents=(0.1,) * 3)),
                                    (w.add_capsule, dict(radius=0.1, half_length=0.1)),
                                    (w.add_cylinder, dict(radius=0.1, half_length=0.1)),
                                    (w.add_ellipsoid, dict(semi_axes=(0.1, 0.1, 0.1)))]):
        b = w.add_body(position=(0, 0, 0.5 + k), inertia=[0.01] * 3)
        assert add(b, **geo) == k + 2
    with pytest.raises(dvicontact.InputError, match="fixed body"):
        w.add_plane(w.add_body())


def test_errors_carry_the_library_s_text():
    w = dvicontact.World()
    with pytest.raises(dvicontact.InputError, match=r"body\.mass: must be finite and > 0 \(got -1\)") as e:
        w.add_body(mass=-1.0)
    assert e.value.status == "invalid_arg"
    with pytest.raises(dvicontact.InputError, match=r'World: unknown setting "tolerence" \(known: gravity, dt, .*'
                                                    r'tolerance'):
        dvicontact.World(tolerence=1e-6)
    with pytest.raises(dvicontact.InputError, match='add_body: unknown setting "radius"'):
        w.add_body(radius=0.1)
    with pytest.raises(dvicontact.InputError, match=r"position: must have shape \(3,\) \(got \(2,\)\)"):
        w.add_body(position=[0.0, 1.0])
    with pytest.raises(dvicontact.InputError, match=r"inertia: must have shape \(3, 3\) \(got \(2, 2\)\)"):
        w.add_body(inertia=np.eye(2))
    with pytest.raises(TypeError, match="position: must be an array of real numbers"):
        w.add_body(position=np.array([1j, 0, 0]))
    with pytest.raises(TypeError, match="mass: must be a real number"):
        w.add_body(mass="heavy")
    with pytest.raises(dvicontact.InputError, match="position or velocity is not finite"):
        w.add_body(position=[np.nan, 0, 0])
    with pytest.raises(dvicontact.InputError, match=r"orientation: must be a unit quaternion"):
        w.add_body(orientation=(1, 1, 0, 0))
    b = w.add_body()
    with pytest.raises(dvicontact.InputError, match=r"shape\.radius: must be > 0"):
        w.add_sphere(b, radius=np.nan)
    with pytest.raises(dvicontact.InputError, match=r"shape\.material\.restitution: must be in \[0, 1\] \(got 2\)"):
        w.add_sphere(b, radius=0.1, restitution=2.0)
    with pytest.raises(dvicontact.InputError, match=r'add_box: material: unknown setting "mu"'):
        w.add_box(b, half_extents=(1, 1, 1), material={"mu": 0.3})
    with pytest.raises(dvicontact.InputError, match=r'kind: unknown value "hinge" \(one of "spherical", "revolute"'):
        w.add_joint("hinge", None, b)
    with pytest.raises(dvicontact.InputError, match=r'World: method: unknown value "fem"'):
        dvicontact.World(method="fem")
    with pytest.raises(dvicontact.InputError, match=r'World: apgd: unknown setting "restrat"'):
        dvicontact.World(apgd={"restrat": False})
    with pytest.raises(dvicontact.InputError, match=r"contact_recovery_speed: must be > 0 \(got -1\)"):
        dvicontact.World(contact_recovery_speed=-1.0)
    with pytest.raises(dvicontact.InputError, match=r"step: h must be > 0"):
        w.step(dt=-1e-3)
    with pytest.raises(dvicontact.InputError, match='friction law "coulomb" needs a solver of Coulomb.s law'):
        dvicontact.World(friction_law="coulomb", solver="apgd").step()
    # the friction law and solver of Coulomb's law together are accepted
    dvicontact.World(friction_law="coulomb", solver="nsgs").step()


def test_bodies_of_another_or_a_closed_world():
    w1, b1 = sphere_on_plane()
    w2 = dvicontact.World()
    with pytest.raises(dvicontact.InputError, match="add_sphere: body: a body of another World"):
        w2.add_sphere(b1, radius=0.1)
    with pytest.raises(dvicontact.InputError, match="add_joint: body_b: a body of another World"):
        w2.add_joint("spherical", None, b1)
    with pytest.raises(TypeError, match="must be a dvicontact.Body"):
        w2.add_sphere(0, radius=0.1)
    # a Body keeps its World alive
    del w1
    assert b1.world.body_count == 2 and b1.position[2] == 1.0
    b1.world.close()
    with pytest.raises(dvicontact.InputError, match="World: closed"):
        b1.position
    with pytest.raises(dvicontact.InputError, match="World: closed"):
        b1.world.step()
    with dvicontact.World() as w3:
        b3 = w3.add_body()
    with pytest.raises(dvicontact.InputError, match="World: closed"):
        b3.set_velocity((1, 0, 0))


def test_ctrl_c_stops_between_steps_and_the_world_stays_usable():
    w, b = sphere_on_plane(dt=1e-3)
    killer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    killer.start()
    with pytest.raises(KeyboardInterrupt):
        w.step(10**8)
    killer.join()
    steps = w.time / 1e-3
    assert steps == pytest.approx(round(steps), abs=1e-6) and steps < 10**8
    t = w.time
    w.step(10)
    assert w.time == pytest.approx(t + 0.01, rel=1e-9)


def test_worlds_step_in_parallel_threads_as_alone():
    def run(out, k):
        w, b = sphere_on_plane(1.0 + 0.1 * k)
        w.step(700)
        out[k] = (w.positions, w.velocities)

    alone, together = {}, {}
    for k in range(2):
        run(alone, k)
    threads = [threading.Thread(target=run, args=(together, k)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(2):
        assert (alone[k][0] == together[k][0]).all() and (alone[k][1] == together[k][1]).all()


def test_no_leak_over_10000_worlds():
    def cycle():
        w = dvicontact.World()
        g = w.add_body(fixed=True)
        w.add_plane(g, friction=0.3)
        b = w.add_body(position=(0, 0, 0.1))
        w.add_box(b, half_extents=(0.1, 0.1, 0.1))
        w.add_joint("distance", g, b, anchor=(0, 0, 1), anchor_b=(0, 0, 0.1))
        w.step(3)
        w.positions
        w.save_state()
        w.close()

    for _ in range(100):  # the first calls' one-time allocations
        cycle()
    blocks = _core._live_blocks()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(10000):
        cycle()
    growth = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert _core._live_blocks() == blocks
    assert growth < 100_000


def doc_blocks(heading):
    """The ```python blocks of docs/python.md under that heading."""
    with open(os.path.join(os.environ["DVI_SOURCE_DIR"], "docs", "python.md"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("\n" + heading + "\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_guide_s_example_runs(capsys):
    blocks = doc_blocks("## Building a world")
    assert len(blocks) == 1
    exec(compile(blocks[0], "docs/python.md", "exec"), {})
    a, theory = re.match(r"a = ([0-9.]+) m/s\^2, theory ([0-9.]+)", capsys.readouterr().out).groups()
    assert theory == "2.3563" and float(a) == pytest.approx(2.3563, rel=0.01)
