// dvicontact — the granular bed side by side with Project Chrono (NSC).
//
// One engine per run, so that each row's peak memory is its own:
//
//   bench_chrono_bed --engine chrono|dvi SCENE [--solver NAME] [--iterations N]
//                    [--tolerance T] [--threads T] [--steps N] [--measure K] [--json]
//
// SCENE is a dvicontact scene of spheres in a box of fixed boxes
// (bench/chrono/granular_hex_bed.json: the 53,728-sphere hexagonal bed of the
// full rover scene, without the rover). Both engines start from the
// positions dvicontact's generator gives (read through the public API), with
// the same radius, mass, friction (the scene's), gravity, collision envelope,
// contact recovery speed and step; both take --steps steps from rest and the
// row reports the mean over the last --measure of them:
//
//   ms per step (the whole step), contacts, iterations, the deepest
//   penetration after the last step (m, over all contacts), the solver's own
//   residual or violation measure, and the peak resident memory (VmHWM).
//
// Solvers: chrono psor (projected SOR, Chrono's default for NSC; tolerance
// 0 unless given, so it runs all --iterations) or apgd; dvi apgd or pgs (the
// tolerance likewise 0 unless given, so every step takes --iterations).
// Chrono's "violation" (ChIterativeSolverVI::GetError) and dvicontact's CCP
// residual are different measures; the penetrations are comparable.
//
// Build (Chrono built with its core module, dvicontact built with meson):
//   cmake -S bench/chrono -B build-chrono -DChrono_DIR=CHRONO_BUILD/cmake \
//         -DDVI_SOURCE_DIR=$PWD -DDVI_BUILD_DIR=$PWD/build-release
//   cmake --build build-chrono
// bench/chrono/README.md has the commands, the measured table and what the
// comparison does and does not say.

#include "chrono/collision/ChCollisionModel.h"
#include "chrono/collision/ChCollisionSystem.h"
#include "chrono/physics/ChBodyEasy.h"
#include "chrono/physics/ChContactContainer.h"
#include "chrono/physics/ChContactMaterialNSC.h"
#include "chrono/physics/ChSystemNSC.h"
#include "chrono/solver/ChIterativeSolverVI.h"

#include <dvi/scene.h>
#include <dvi/world.h>

#include <cjson/cJSON.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace chrono;

namespace {

struct options {
    std::string engine, scene, solver;
    int iterations = 100;
    double tolerance = 0.0;
    int threads = 2;
    int steps = 100;
    int measure = 10;
    bool json = false;
};

struct sphere {
    double x[3], radius, mass;
};

struct box {
    double x[3], half[3];
};

struct bed {
    std::vector<sphere> spheres;
    std::vector<box> boxes;
    double gravity[3] = {0, 0, -9.81};
    double friction = 0.4, envelope = 0.005, recovery = 0.1, dt = 0.001;
};

struct row {
    double ms_per_step = 0.0, penetration = 0.0, residual = 0.0, rss_mb = 0.0;
    double ms_collide = 0.0, ms_setup = 0.0, ms_solve = 0.0, ms_update = 0.0; // the engine's own phase timers
    long contacts = 0;
    int iterations = 0;
};

[[noreturn]] void die(const std::string& msg) {
    std::fprintf(stderr, "bench_chrono_bed: %s\n", msg.c_str());
    std::exit(1);
}

double peak_rss_mb() {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("VmHWM:", 0) == 0) return 1e-3 * std::atof(line.c_str() + 6);  // kB -> MB
    return 0.0;
}

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The fixed boxes of the scene file, its friction and formulation settings.
void read_scene_file(const std::string& path, bed& b) {
    std::ifstream f(path);
    if (!f) die(path + ": cannot open");
    std::stringstream ss;
    ss << f.rdbuf();
    cJSON* root = cJSON_Parse(ss.str().c_str());
    if (!root) die(path + ": not JSON");
    const cJSON* bodies = cJSON_GetObjectItemCaseSensitive(root, "bodies");
    const cJSON* it = nullptr;
    cJSON_ArrayForEach(it, bodies) {
        const cJSON* type = cJSON_GetObjectItemCaseSensitive(it, "type");
        if (!cJSON_IsString(type) || std::strcmp(type->valuestring, "fixed") != 0) continue;
        const cJSON* pos = cJSON_GetObjectItemCaseSensitive(it, "position");
        const cJSON* shapes = cJSON_GetObjectItemCaseSensitive(it, "shapes");
        const cJSON* s0 = cJSON_GetArrayItem(shapes, 0);
        const cJSON* he = cJSON_GetObjectItemCaseSensitive(s0, "half_extents");
        if (cJSON_GetArraySize(shapes) != 1 || cJSON_GetArraySize(pos) != 3 || cJSON_GetArraySize(he) != 3)
            die(path + ": every fixed body must be one box with a position");
        box x;
        for (int k = 0; k < 3; k++) {
            x.x[k] = cJSON_GetArrayItem(pos, k)->valuedouble;
            x.half[k] = cJSON_GetArrayItem(he, k)->valuedouble;
        }
        b.boxes.push_back(x);
    }
    const cJSON* g = cJSON_GetObjectItemCaseSensitive(root, "gravity");
    if (cJSON_GetArraySize(g) == 3)
        for (int k = 0; k < 3; k++) b.gravity[k] = cJSON_GetArrayItem(g, k)->valuedouble;
    const cJSON* form = cJSON_GetObjectItemCaseSensitive(root, "formulation");
    const cJSON* v;
    if ((v = cJSON_GetObjectItemCaseSensitive(form, "collision_envelope")) && cJSON_IsNumber(v)) b.envelope = v->valuedouble;
    if ((v = cJSON_GetObjectItemCaseSensitive(form, "contact_recovery_speed")) && cJSON_IsNumber(v))
        b.recovery = v->valuedouble;
    if ((v = cJSON_GetObjectItemCaseSensitive(form, "dt")) && cJSON_IsNumber(v)) b.dt = v->valuedouble;
    const cJSON* grain = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "materials"), "grain");
    if ((v = cJSON_GetObjectItemCaseSensitive(grain, "friction")) && cJSON_IsNumber(v)) b.friction = v->valuedouble;
    cJSON_Delete(root);
}

// The spheres as dvicontact's generator places them.
void read_spheres(dvi_model* m, bed& b) {
    const dvi_world* w = dvi_model_world_const(m);
    const int32_t n = dvi_world_body_count(w);
    for (int32_t i = 0; i < n; i++) {
        dvi_body_id id;
        dvi_body_info info;
        if (dvi_world_body_at(w, i, &id) != DVI_OK || dvi_body_get_info(w, id, &info) != DVI_OK) die("body enumeration");
        if (info.type != DVI_BODY_DYNAMIC) continue;
        if (info.shape_count != 1 || info.shape_type != DVI_SHAPE_SPHERE) die("a dynamic body that is not one sphere");
        sphere s;
        dvi_body_get_position(w, id, s.x);
        s.radius = info.bounding_radius;
        s.mass = info.mass;
        b.spheres.push_back(s);
    }
}

row run_chrono(const options& o, const bed& b) {
    ChSystemNSC sys;
    sys.SetCollisionSystemType(ChCollisionSystem::Type::BULLET);
    sys.SetGravitationalAcceleration(ChVector3d(b.gravity[0], b.gravity[1], b.gravity[2]));
    sys.SetNumThreads(o.threads, o.threads, 1);
    sys.SetMaxPenetrationRecoverySpeed(b.recovery);
    ChCollisionModel::SetDefaultSuggestedEnvelope(b.envelope);
    ChCollisionModel::SetDefaultSuggestedMargin(0.001);
    auto mat = chrono_types::make_shared<ChContactMaterialNSC>();
    mat->SetFriction((float)b.friction);
    mat->SetRestitution(0.0f);
    for (const box& x : b.boxes) {
        auto body = chrono_types::make_shared<ChBodyEasyBox>(2 * x.half[0], 2 * x.half[1], 2 * x.half[2], 1000.0, false,
                                                             true, mat);
        body->SetPos(ChVector3d(x.x[0], x.x[1], x.x[2]));
        body->SetFixed(true);
        sys.AddBody(body);
    }
    for (const sphere& s : b.spheres) {
        const double rho = s.mass / (4.0 / 3.0 * CH_PI * s.radius * s.radius * s.radius);
        auto body = chrono_types::make_shared<ChBodyEasySphere>(s.radius, rho, false, true, mat);
        body->SetPos(ChVector3d(s.x[0], s.x[1], s.x[2]));
        sys.AddBody(body);
    }
    if (o.solver == "psor")
        sys.SetSolverType(ChSolver::Type::PSOR);
    else if (o.solver == "apgd")
        sys.SetSolverType(ChSolver::Type::APGD);
    else
        die("--solver: chrono takes psor or apgd");
    auto solver = std::dynamic_pointer_cast<ChIterativeSolverVI>(sys.GetSolver());
    if (!solver) die("the solver is not iterative");
    solver->SetMaxIterations(o.iterations);
    solver->SetTolerance(o.tolerance);

    row r;
    double sum = 0.0;
    for (int k = 0; k < o.steps; k++) {
        const double t0 = now();
        sys.DoStepDynamics(b.dt);
        const double t1 = now();
        if (k >= o.steps - o.measure) {
            sum += t1 - t0;
            r.iterations = solver->GetIterations();
            r.residual = std::max(r.residual, solver->GetError());
            r.ms_collide += 1e3 * sys.GetTimerCollision() / o.measure;
            r.ms_setup += 1e3 * (sys.GetTimerSetup() + sys.GetTimerLSsetup() + sys.GetTimerJacobian()) / o.measure;
            r.ms_solve += 1e3 * sys.GetTimerLSsolve() / o.measure;
            r.ms_update += 1e3 * sys.GetTimerUpdate() / o.measure;
        }
        if (!o.json && (k + 1) % 10 == 0)
            std::fprintf(stderr, "chrono: step %d of %d, %.0f ms, %u contacts\n", k + 1, o.steps, 1e3 * (t1 - t0),
                         sys.GetNumContacts());
    }
    r.ms_per_step = 1e3 * sum / o.measure;
    r.contacts = (long)sys.GetNumContacts();
    struct deepest : public ChContactContainer::ReportContactCallback {
        double d = 0.0;
        bool OnReportContact(const ChVector3d&, const ChVector3d&, const ChMatrix33<>&, double distance,
                             double, const ChVector3d&, const ChVector3d&, ChContactable*, ChContactable*,
                             int) override {
            d = std::max(d, -distance);
            return true;
        }
    };
    auto cb = chrono_types::make_shared<deepest>();
    sys.GetContactContainer()->ReportAllContacts(cb);
    r.penetration = cb->d;
    r.rss_mb = peak_rss_mb();
    return r;
}

row run_dvi(const options& o, dvi_model* m) {
    dvi_world* w = dvi_model_world(m);
    dvi_solver_settings ss = dvi_default_solver_settings();
    ss.max_iterations = o.iterations;
    ss.tolerance = o.tolerance > 0.0 ? o.tolerance : 1e-300; /* 0: every step runs all iterations */
    ss.threads = o.threads;
    if (o.solver != "apgd" && o.solver != "pgs") die("--solver: dvi takes apgd or pgs");
    if (dvi_world_set_solver(w, o.solver.c_str(), &ss) != DVI_OK) die(dvi_world_last_error(w));
    row r;
    double sum = 0.0, it = 0.0;
    for (int k = 0; k < o.steps; k++) {
        const double t0 = now();
        if (dvi_model_step(m) < 0) die(std::string("step: ") + dvi_world_last_error(w));
        const double t1 = now();
        dvi_step_stats st = dvi_world_get_stats(w);
        if (k >= o.steps - o.measure) {
            sum += t1 - t0;
            it += st.iterations;
            r.residual = std::max(r.residual, st.residual);
            r.ms_collide += 1e3 * st.seconds_collide / o.measure;
            r.ms_setup += 1e3 * st.seconds_assemble / o.measure;
            r.ms_solve += 1e3 * st.seconds_solve / o.measure;
            r.ms_update += 1e3 * st.seconds_integrate / o.measure;
        }
        if (!o.json && (k + 1) % 10 == 0)
            std::fprintf(stderr, "dvi: step %d of %d, %.0f ms, %d contacts, %d iterations, residual %.2e\n", k + 1,
                         o.steps, 1e3 * (t1 - t0), st.contacts, st.iterations, st.residual);
    }
    dvi_step_stats st = dvi_world_get_stats(w);
    r.ms_per_step = 1e3 * sum / o.measure;
    r.iterations = (int)std::lround(it / o.measure);
    r.contacts = st.contacts;
    // the deepest contact of the last step (its gap at collision time, as Chrono reports its own)
    const int32_t nc = dvi_world_contact_count(w);
    for (int32_t c = 0; c < nc; c++) {
        dvi_contact_info ci;
        if (dvi_world_get_contact(w, c, &ci) == DVI_OK) r.penetration = std::max(r.penetration, -ci.distance);
    }
    r.rss_mb = peak_rss_mb();
    return r;
}

void usage() {
    std::fprintf(stderr,
                 "usage: bench_chrono_bed --engine chrono|dvi SCENE [--solver NAME] [--iterations N] [--tolerance T]\n"
                 "                        [--threads T] [--steps N] [--measure K] [--json]\n");
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto next = [&]() -> const char* {
            if (i + 1 >= argc) usage();
            return argv[++i];
        };
        if (a == "--engine")
            o.engine = next();
        else if (a == "--solver")
            o.solver = next();
        else if (a == "--iterations")
            o.iterations = std::atoi(next());
        else if (a == "--tolerance")
            o.tolerance = std::atof(next());
        else if (a == "--threads")
            o.threads = std::atoi(next());
        else if (a == "--steps")
            o.steps = std::atoi(next());
        else if (a == "--measure")
            o.measure = std::atoi(next());
        else if (a == "--json")
            o.json = true;
        else if (!a.empty() && a[0] != '-' && o.scene.empty())
            o.scene = a;
        else
            usage();
    }
    if ((o.engine != "chrono" && o.engine != "dvi") || o.scene.empty() || o.iterations < 1 || o.threads < 1 ||
        o.measure < 1 || o.steps < o.measure || !(o.tolerance >= 0.0))
        usage();
    if (o.solver.empty()) o.solver = o.engine == "chrono" ? "psor" : "apgd";

    dvi_scene* s = nullptr;
    dvi_scene_errors e;
    if (dvi_scene_load(o.scene.c_str(), &s, &e) != DVI_OK) die(o.scene + ": " + (e.text ? e.text : "invalid scene"));
    dvi_scene_overrides ov = {};
    ov.threads = o.threads;
    if (dvi_scene_apply_overrides(s, &ov, &e) != DVI_OK) die(std::string("--threads: ") + (e.text ? e.text : "invalid"));
    dvi_model* m = nullptr;
    char msg[256];
    if (dvi_model_create(s, &m, msg, sizeof msg) != DVI_OK) die(msg);
    bed b;
    read_scene_file(o.scene, b);
    read_spheres(m, b);

    row r;
    if (o.engine == "chrono") {
        dvi_model_destroy(m);  // only the positions were needed
        m = nullptr;
        r = run_chrono(o, b);
    } else {
        r = run_dvi(o, m);
        dvi_model_destroy(m);
    }
    dvi_scene_destroy(s);
    if (o.json)
        std::printf("{\"engine\": \"%s\", \"solver\": \"%s\", \"spheres\": %zu, \"threads\": %d, \"iterations\": %d, "
                    "\"tolerance\": %g, \"steps\": %d, \"measured\": %d, \"contacts\": %ld, \"ms_per_step\": %.2f, "
                    "\"ms_collide\": %.2f, \"ms_setup\": %.2f, \"ms_solve\": %.2f, \"ms_update\": %.2f, "
                    "\"penetration_m\": %.3e, \"residual\": %.3e, \"rss_mb\": %.1f}\n",
                    o.engine.c_str(), o.solver.c_str(), b.spheres.size(), o.threads, r.iterations, o.tolerance, o.steps,
                    o.measure, r.contacts, r.ms_per_step, r.ms_collide, r.ms_setup, r.ms_solve, r.ms_update,
                    r.penetration, r.residual, r.rss_mb);
    else
        std::printf("%-7s %-5s spheres %zu, %d threads: %.1f ms per step (mean of the last %d of %d steps; collision "
                    "%.1f, set-up %.1f, solve %.1f, update %.1f), %ld contacts, %d iterations, deepest penetration "
                    "%.2e m, %s %.2e, peak RSS %.0f MB\n",
                    o.engine.c_str(), o.solver.c_str(), b.spheres.size(), o.threads, r.ms_per_step, o.measure, o.steps,
                    r.ms_collide, r.ms_setup, r.ms_solve, r.ms_update, r.contacts, r.iterations, r.penetration,
                    o.engine == "chrono" ? "violation (m/s)" : "CCP residual", r.residual, r.rss_mb);
    return 0;
}
