/* dvicontact — the DEM penalty back end: settings, pair constants and the
 * step (design note in dem.h; model, parameters and sources in docs/dem.md).
 *
 * Per overlapping contact point (overlap δ = −Φ > 0, normal n from A to B,
 * relative velocity v = v_B(p) − v_A(p), v_n = v·n, v_t = v − v_n n):
 *     F_n = f(δ/d) k_n δ − c_n v_n,   clamped at F_n ≥ 0,
 *           c_n = g(δ/d) γ_n m_eff / (1 + h Λ), Λ = Σ over the dynamic bodies
 *           of the largest rate of their normal dashpots with the other
 *           bodies held still (normal_damping_rates): the dashpot the explicit
 *           step can integrate, including a body's rocking modes
 *     u   ← |u| · unit(u − (u·n) n) + h v_t          (history, rotated into the tangent plane)
 *     F_t = −f(δ/d) k_t u − c v_t,   |F_t| ≤ μ F_n; when f k_t |u| > μ F_n
 *           the stored u is scaled back to μ F_n / (f k_t) (sliding);
 *           c = c_t / (1 + h c_t W), c_t = g(δ/d) γ_t m_eff, W = Σ over the
 *           dynamic bodies of (their penalty contacts this step) × (the trace
 *           of their tangential inverse mass at the point): the dashpot the
 *           explicit step can integrate without overshoot (docs/dem.md)
 *     rolling (μ_r > 0): θ ← rotated θ + h ω_r, M = −k_r θ − c_r ω_r, |M| ≤ μ_r F_n,
 *           ω_r = tangential part of ω_B − ω_A
 * with f = g = 1 (Hooke) or f = √x, g = x^¼ (Hertz, Tsuji damping). The force
 * F_n n + F_t acts on B at the contact point (−it on A), plus ±M.
 * Integration (symplectic Euler): v_free = v + h M⁻¹ (f_contact + f_applied
 * + m g − ω × Jω); joints and speed motors: one bilateral-only problem
 * N γ = −r on v_free (dense Cholesky up to DEM_DENSE_ROWS rows, else the
 * world's solver), v⁺ = v_free + M⁻¹ D γ; x⁺ = x + h v⁺,
 * q⁺ = normalise(q + h/2 [0, ω⁺] ⊗ q) (as the DVI step).
 */
#include "dem.h"
#include "error.h"
#include "material_pair.h"

#include "math3.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- settings -------------------------------------------------------------------- */

dvi_dem_settings dvi_default_dem_settings(void)
{
    dvi_dem_settings s;
    memset(&s, 0, sizeof s);
    s.normal_model = DVI_DEM_HERTZ;
    s.constants = DVI_DEM_FROM_MATERIAL;
    s.k_n = 1e5;
    s.k_t = 0.0;
    s.gamma_n = -1.0;
    s.gamma_t = -1.0;
    s.characteristic_speed = 1.0;
    s.rolling_damping = 0.3;
    s.terrain_slip_speed = 0.01;
    s.max_speed = 1e3;
    return s;
}

bool wld_dem_settings_valid(const dvi_dem_settings* s)
{
    return s && (s->normal_model == DVI_DEM_HERTZ || s->normal_model == DVI_DEM_HOOKE) &&
           (s->constants == DVI_DEM_FROM_MATERIAL || s->constants == DVI_DEM_DIRECT) && s->k_n > 0.0 &&
           isfinite(s->k_n) && isfinite(s->k_t) && isfinite(s->gamma_n) && isfinite(s->gamma_t) &&
           s->characteristic_speed > 0.0 && isfinite(s->characteristic_speed) && s->rolling_damping >= 0.0 &&
           isfinite(s->rolling_damping) && s->terrain_slip_speed > 0.0 && isfinite(s->terrain_slip_speed) &&
           s->max_speed > 0.0;
}

/* ---- restitution ↔ damping ----------------------------------------------------------- */

/* One collision of the dimensionless clamped model
 *     x'' = −F,  F = max(0, x^p + α x^q x'),  x(0) = 0, x'(0) = 1,
 * p = 1, q = 0 (Hooke: x in units of v0 sqrt(m/k), time sqrt(m/k)) or
 * p = 3/2, q = 1/4 (Hertz: x in units of (m v0²/K)^(2/5), time x-unit/v0).
 * Contact ends when F returns to 0 (the clamp: no attraction) or x to 0; the
 * restitution is −x' then. Classical RK4 with step 5e-4 and the end located
 * by linear interpolation: error < 1e-4 against the closed form for Hooke. */
static double model_force(int hertz, double a, double x, double v)
{
    if (x <= 0.0) return 0.0;
    return hertz ? x * sqrt(x) + a * sqrt(sqrt(x)) * v : x + a * v;
}

double wld_dem_restitution(int hertz, double alpha)
{
    const double dt = 5e-4;
    double x = 0.0, v = 1.0;
    for (long i = 0; i < 20000000L; i++) {
        double k1x = v, k1v = -model_force(hertz, alpha, x, v);
        double k2x = v + 0.5 * dt * k1v, k2v = -model_force(hertz, alpha, x + 0.5 * dt * k1x, v + 0.5 * dt * k1v);
        double k3x = v + 0.5 * dt * k2v, k3v = -model_force(hertz, alpha, x + 0.5 * dt * k2x, v + 0.5 * dt * k2v);
        double k4x = v + dt * k3v, k4v = -model_force(hertz, alpha, x + dt * k3x, v + dt * k3v);
        double nx = x + dt / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
        double nv = v + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
        if (nv < 0.0) {
            double f0 = model_force(hertz, alpha, x, v), f1 = model_force(hertz, alpha, nx, nv);
            if (nx <= 0.0 && f1 >= 0.0) return -(v + (x / (x - nx)) * (nv - v));
            if (f1 <= 0.0) {
                double s = f0 > f1 ? f0 / (f0 - f1) : 1.0;
                return -(v + s * (nv - v));
            }
        }
        x = nx;
        v = nv;
    }
    return 0.0;
}

double wld_dem_alpha(int hertz, double e)
{
    if (!(e < 1.0)) return 0.0;
    if (!(e >= DVI_DEM_E_MIN)) e = DVI_DEM_E_MIN;
    double lo = 0.0, hi = 1.0;
    while (wld_dem_restitution(hertz, hi) > e && hi < 1e4) {
        lo = hi;
        hi *= 2.0;
    }
    for (int it = 0; it < 44; it++) { /* e(α) decreases: bisection */
        double mid = 0.5 * (lo + hi);
        if (wld_dem_restitution(hertz, mid) > e) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* ---- state ----------------------------------------------------------------------------- */

wld_dem* wld_dem_get(dvi_world* w)
{
    if (!w->dem) {
        w->dem = base_mem_calloc(&w->alloc, 1, sizeof *w->dem);
        if (w->dem) {
            w->dem->alloc = w->alloc;
            wld_dem_history_init(&w->dem->history, &w->alloc);
            w->dem->lists_dirty = true;
        }
    }
    return w->dem;
}

void wld_dem_destroy(wld_dem* d)
{
    if (!d) return;
    const dvi_allocator a = d->alloc;
    wld_dem_history_free(&d->history);
    base_mem_free(&a, d->shapes);
    base_mem_free(&a, d->samples);
    base_mem_free(&a, d->terrains);
    base_mem_free(&a, d->sampled);
    base_mem_free(&a, d->work);
    base_mem_free(&a, d->acc);
    base_mem_free(&a, d->next);
    base_mem_free(&a, d->recs);
    base_mem_free(&a, d->geo);
    base_mem_free(&a, d->touch);
    base_mem_free(&a, d->iinv);
    base_mem_free(&a, d->pairs);
    base_mem_free(&a, d->ndamp);
    base_mem_free(&a, d->lam);
    base_mem_free(&a, d);
}

static bool ensure_shapes(wld_dem* d, int32_t n)
{
    if (n <= d->shape_cap) return true;
    size_t c = (size_t)d->shape_cap;
    void* p = d->shapes;
    if (!base_mem_grow(&d->alloc, &p, &c, (size_t)n, sizeof *d->shapes, 16)) return false;
    d->shapes = p;
    memset(d->shapes + d->shape_cap, 0, (c - (size_t)d->shape_cap) * sizeof *d->shapes);
    d->shape_cap = (int32_t)c;
    return true;
}

static bool push_index(const dvi_allocator* alloc, int32_t** a, int32_t* count, int32_t* cap, int32_t v)
{
    if (*count >= *cap) {
        size_t c = (size_t)*cap;
        void* p = *a;
        if (!base_mem_grow(alloc, &p, &c, (size_t)*count + 1, sizeof **a, 16)) return false;
        *a = p;
        *cap = (int32_t)c;
    }
    (*a)[(*count)++] = v;
    return true;
}

/* Characteristic radius of a shape (its class's contact radius: the
 * sphere's, capsule's or cylinder's radius, a box's smallest half extent);
 * infinite for plane, height field and mesh (flat or many-faced static
 * terrain). */
static double shape_radius(const wld_shape* s)
{
    const col_shape_class* c = col_shape_class_of(s->type);
    if (!c || !c->contact_radius) return INFINITY;
    const col_geom g = wld_shape_local_geom(s);
    return c->contact_radius(&g);
}

static double cached_alpha(wld_dem* d, int hertz, double e)
{
    for (int32_t k = 0; k < d->cache_count; k++)
        if (d->cache[k].model == hertz && d->cache[k].e == e) return d->cache[k].alpha;
    double a = wld_dem_alpha(hertz, e);
    if (d->cache_count < (int32_t)(sizeof d->cache / sizeof d->cache[0])) {
        d->cache[d->cache_count].model = hertz;
        d->cache[d->cache_count].e = e;
        d->cache[d->cache_count].alpha = a;
        d->cache_count++;
    }
    return a;
}

/* Radius and damping factor of new shapes; lists of terrains and sampled shapes. */
static dvi_status prepare(dvi_world* w, wld_dem* d)
{
    const int32_t ns = w->shape_count;
    if (!ensure_shapes(d, ns + 1)) return DVI_ERR_NOMEM;
    const int hertz = w->def.dem.normal_model == DVI_DEM_HERTZ;
    for (int32_t s = d->prepared; s < ns; s++) {
        d->shapes[s].radius = shape_radius(&w->shapes[s]);
        d->shapes[s].alpha = cached_alpha(d, hertz, wld_shape_material(w, &w->shapes[s])->restitution);
    }
    if (d->prepared != ns) d->lists_dirty = true;
    d->prepared = ns;
    if (d->lists_dirty) {
        d->terrain_count = d->sampled_count = 0;
        for (int32_t s = 0; s < ns; s++) {
            const wld_shape* sh = &w->shapes[s];
            if (sh->type == DVI_SHAPE_HEIGHTFIELD && wld_shape_material(w, sh)->terrain_stiffness > 0.0 &&
                !push_index(&d->alloc, &d->terrains, &d->terrain_count, &d->terrain_cap, s))
                return DVI_ERR_NOMEM;
            if (d->shapes[s].sample_count > 0 && !push_index(&d->alloc, &d->sampled, &d->sampled_count, &d->sampled_cap, s))
                return DVI_ERR_NOMEM;
        }
        d->lists_dirty = false;
    }
    return DVI_OK;
}

/* ---- public calls ------------------------------------------------------------------------- */

dvi_status dvi_world_set_method(dvi_world* w, dvi_method method, const dvi_dem_settings* settings)
{
    if (!w) return base_error_set(DVI_ERR_INVALID_ARG, "world: NULL");
    if (method != DVI_METHOD_DVI && method != DVI_METHOD_DEM)
        return wld_error(w, DVI_ERR_INVALID_ARG, "method: unknown method %d", (int)method);
    if (settings && !wld_dem_settings_valid(settings))
        return wld_error(w, DVI_ERR_INVALID_ARG,
                               "method: DEM settings out of range (k_n > 0, speeds > 0, constants finite)");
    if (w->time != 0.0 || (w->dem && w->dem->steps > 0))
        return wld_error(w, DVI_ERR_INVALID_ARG, "method: can only be changed before the first step");
    w->def.method = method;
    if (settings) w->def.dem = *settings;
    if (w->dem) w->dem->prepared = 0; /* damping factors depend on the normal model */
    return DVI_OK;
}

dvi_status dvi_shape_set_dem_samples(dvi_world* w, dvi_shape_id id, int32_t count, const double* samples)
{
    if (!w) return base_error_set(DVI_ERR_INVALID_ARG, "world: NULL");
    if (id.index1 <= 0 || id.index1 > w->shape_count || id.world != w->tag ||
        w->shapes[id.index1 - 1].generation != id.generation)
        return wld_error(w, DVI_ERR_INVALID_ARG, "dem samples: not a shape of this world");
    const int32_t s = id.index1 - 1;
    if (count < 0 || (count > 0 && !samples) || count > INT32_MAX / 8)
        return wld_error(w, DVI_ERR_INVALID_ARG, "dem samples: count must be >= 0 with a non-NULL array");
    if (w->bodies[w->shapes[s].body].type == DVI_BODY_FIXED)
        return wld_error(w, DVI_ERR_INVALID_ARG, "dem samples: the shape is on a fixed body");
    for (int32_t k = 0; k < count; k++) {
        const double* p = samples + 4 * (size_t)k;
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]) || !(p[3] > 0.0) || !isfinite(p[3]))
            return wld_error(w, DVI_ERR_INVALID_ARG,
                                   "dem samples[%d]: position must be finite and area finite and > 0", (int)k);
    }
    wld_dem* d = wld_dem_get(w);
    if (!d || !ensure_shapes(d, w->shape_count + 1))
        return wld_error(w, DVI_ERR_NOMEM, "dem samples: out of memory");
    wld_dem_shape* ds = &d->shapes[s];
    if (count > ds->sample_count) { /* a new block at the end of the pool */
        if (d->sample_count > INT32_MAX / 8 - count)
            return wld_error(w, DVI_ERR_NOMEM, "dem samples: too many samples");
        int32_t need = d->sample_count + count;
        if (need > d->sample_cap) {
            size_t c = (size_t)d->sample_cap;
            void* p = d->samples;
            if (!base_mem_grow(&d->alloc, &p, &c, (size_t)need, 4 * sizeof *d->samples, 64))
                return wld_error(w, DVI_ERR_NOMEM, "dem samples: out of memory");
            d->samples = p;
            d->sample_cap = (int32_t)c;
        }
        ds->sample_first = d->sample_count;
        d->sample_count = need;
    }
    if (count > 0) memcpy(d->samples + 4 * (size_t)ds->sample_first, samples, 4 * (size_t)count * sizeof(double));
    ds->sample_count = count;
    d->lists_dirty = true;
    return DVI_OK;
}

/* ---- pair constants ------------------------------------------------------------------------- */

typedef struct wld_dem_pair {
    double kn, kt, gn, gt; /* N/m, N/m, 1/s, 1/s */
    double d;              /* m, length scale of f(δ/d) */
    double mu, mu_roll;
    int32_t point, body_a, body_b; /* the collision point and its bodies (a penalty contact of the step) */
} pair_consts;

/* Mean of the values a material pair gives (given: > 0, or ≥ 0 for rates). */
static bool given_mean(double a, double b, bool rate, double* out)
{
    bool ga = rate ? a >= 0.0 : a > 0.0, gb = rate ? b >= 0.0 : b > 0.0;
    *out = 0.0;
    if (ga && gb) *out = 0.5 * (a + b);
    else if (ga) *out = a;
    else if (gb) *out = b;
    return ga || gb;
}

static dvi_status pair_constants(dvi_world* w, const wld_dem* d, int32_t sa, int32_t sb, double m_eff,
                                 pair_consts* pc)
{
    const dvi_dem_settings* set = &w->def.dem;
    const bool hertz = set->normal_model == DVI_DEM_HERTZ;
    memset(pc, 0, sizeof *pc);
    const dvi_material* ma = wld_shape_material(w, &w->shapes[sa]);
    const dvi_material* mb = wld_shape_material(w, &w->shapes[sb]);
    const double Ra = d->shapes[sa].radius, Rb = d->shapes[sb].radius;
    double inv = (isfinite(Ra) ? 1.0 / Ra : 0.0) + (isfinite(Rb) ? 1.0 / Rb : 0.0);
    double R = inv > 0.0 ? 1.0 / inv : 1.0; /* effective radius */
    double dl = (isfinite(Ra) ? Ra : 0.0) + (isfinite(Rb) ? Rb : 0.0);
    pc->d = dl > 0.0 ? dl : 1.0;
    const wld_material_pair mp = wld_pair_of(ma, mb);
    pc->mu = mp.mu;
    pc->mu_roll = mp.mu_roll;
    const double alpha = fmin(d->shapes[sa].alpha, d->shapes[sb].alpha); /* of the larger restitution */
    /* E* and G* (Hertz, Mindlin); with a modulus missing, the ratio G* : E* uses equal moduli */
    bool have_e = ma->young_modulus > 0.0 && mb->young_modulus > 0.0;
    double wa = have_e ? 1.0 / ma->young_modulus : 1.0, wb = have_e ? 1.0 / mb->young_modulus : 1.0;
    double se = (1.0 - ma->poisson_ratio * ma->poisson_ratio) * wa + (1.0 - mb->poisson_ratio * mb->poisson_ratio) * wb;
    double sg = 2.0 * (2.0 - ma->poisson_ratio) * (1.0 + ma->poisson_ratio) * wa +
                2.0 * (2.0 - mb->poisson_ratio) * (1.0 + mb->poisson_ratio) * wb;
    double ratio_ge = se / sg; /* G* over E* */
    if (!given_mean(ma->k_n, mb->k_n, false, &pc->kn)) {
        if (set->constants == DVI_DEM_DIRECT) {
            pc->kn = set->k_n;
        } else {
            if (!have_e)
                return wld_error(w, DVI_ERR_INVALID_ARG,
                                       "DEM: shapes %d and %d: young_modulus must be > 0 on both materials to derive "
                                       "k_n (or give material.k_n, or use DVI_DEM_DIRECT)",
                                       (int)sa, (int)sb);
            double E = 1.0 / se;
            if (hertz) {
                pc->kn = 4.0 / 3.0 * E * sqrt(R * pc->d);
            } else {
                double K = 16.0 / 15.0 * E * sqrt(R), v = set->characteristic_speed;
                pc->kn = pow(K, 0.8) * pow(m_eff * v * v, 0.2);
            }
        }
    }
    if (!given_mean(ma->k_t, mb->k_t, false, &pc->kt)) {
        if (set->constants == DVI_DEM_DIRECT) pc->kt = set->k_t > 0.0 ? set->k_t : 2.0 / 7.0 * pc->kn;
        else pc->kt = (hertz ? 6.0 : 4.0) * ratio_ge * pc->kn;
    }
    if (!given_mean(ma->gamma_n, mb->gamma_n, true, &pc->gn)) {
        if (set->constants == DVI_DEM_DIRECT && set->gamma_n >= 0.0) pc->gn = set->gamma_n;
        else pc->gn = alpha * sqrt(pc->kn / m_eff);
    }
    if (!given_mean(ma->gamma_t, mb->gamma_t, true, &pc->gt)) {
        if (set->constants == DVI_DEM_DIRECT && set->gamma_t >= 0.0) pc->gt = set->gamma_t;
        else pc->gt = alpha * sqrt(pc->kt / m_eff);
    }
    return DVI_OK;
}

/* ---- the penalty forces of a step -------------------------------------------------------------- */

/* u rotated into the plane ⊥ n, keeping its length. */
static void to_tangent_plane(double* u, const double* n)
{
    double len0 = v3_norm(u);
    if (!(len0 > 0.0)) {
        v3_set(u, 0, 0, 0);
        return;
    }
    v3_axpy(u, -v3_dot(u, n), n);
    double len1 = v3_norm(u);
    if (len1 > 1e-300) v3_scale(u, len0 / len1, u);
    else v3_set(u, 0, 0, 0);
}

/* Scalar moment of inertia of body b about an axis through a point at
 * distance r from its centre (trace/3 + m r²); infinite unless dynamic. */
static double inertia_about(const wld_body* b, double r)
{
    if (b->type != DVI_BODY_DYNAMIC) return INFINITY;
    return (b->inertia[0] + b->inertia[4] + b->inertia[8]) / 3.0 + b->mass * r * r;
}

/* Adds force F at lever ρ and couple M to the accumulator of body b (sign s). */
static void accumulate(double* acc, int32_t b, double s, const double* F, const double* rho, const double* M)
{
    double* a = acc + 6 * (size_t)b;
    double t[3];
    v3_cross(t, rho, F);
    if (M) v3_add(t, t, M);
    v3_axpy(a, s, F);
    v3_axpy(a + 3, s, t);
}

static void velocity_at(const wld_body* b, const double* rho, double* v)
{
    double c[3];
    v3_cross(c, b->w, rho);
    v3_add(v, b->v, c);
}

/* The stable step of symplectic Euler on a spring–dashpot mode of rate ω
 * (ω² = k/m) whose dashpot, of rate β = a ω, is limited as the step limits
 * it (β / (1 + h β)): x = h ω must satisfy x² + 2 a x / (1 + a x) < 4 (the
 * Jury test on λ² − (2 − x² − x b)λ + (1 − x b), b = a / (1 + a x)), i.e.
 * a x³ + x² − 2 a x − 4 < 0. Returns that bound on x, between √2 (a → ∞)
 * and 2 (a = 0); bisection to 1e-12. */
static double stable_x(double a)
{
    double lo = 0.0, hi = 2.0;
    for (int it = 0; it < 42; it++) {
        const double x = 0.5 * (lo + hi);
        if (a * x * x * x + x * x - 2.0 * a * x - 4.0 < 0.0) lo = x;
        else hi = x;
    }
    return lo;
}

/* The stable step of work item wk with its normal stiffness raised to kk
 * (≥ its own): the rates of the pair's bodies when it has them (rotation and
 * the body's other contacts included; the spring rate scaled by kk/k_eff,
 * the ratio of the dashpot's rate to the spring's kept, which the Hertz
 * model keeps along an impact), else of m_eff. */
static double work_stable_step(const wld_dem_work* wk, double kk)
{
    if (wk->omega2 > 0.0) {
        const double w0 = sqrt(wk->omega2);
        return stable_x(wk->rate / w0) / (w0 * sqrt(kk / wk->k_eff));
    }
    return stable_x(wk->alpha) * sqrt(wk->m_eff / kk);
}

/* Stable step estimate over the work items of body b; INFINITY if it has
 * none. */
double wld_dem_stable_step(const wld_dem* d, int32_t nwork, int32_t b, double* kmax)
{
    double best = INFINITY;
    *kmax = 0.0;
    for (int32_t k = 0; k < nwork; k++) {
        const wld_dem_work* wk = &d->work[k];
        if (wk->body_a != b && wk->body_b != b) continue;
        if (!(wk->k_eff > 0.0)) continue;
        if (wk->k_eff > *kmax) *kmax = wk->k_eff;
        const double hs = work_stable_step(wk, wk->k_eff);
        if (hs < best) best = hs;
    }
    return best;
}

dvi_status dvi_world_dem_stable_step(const dvi_world* w, double* h)
{
    if (h) *h = INFINITY;
    if (!w || !h) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_world_dem_stable_step: invalid argument (!w || !h)");
    if (w->def.method != DVI_METHOD_DEM)
        return base_error_set(DVI_ERR_INVALID_ARG, "dvi_world_dem_stable_step: the world's method is not DEM");
    const wld_dem* d = w->dem;
    const double v = w->def.dem.characteristic_speed;
    for (int32_t k = 0; d && k < d->last_nwork; k++) {
        const wld_dem_work* wk = &d->work[k];
        if (!(wk->k_eff > 0.0) || !(wk->m_eff < INFINITY)) continue;
        double kk = wk->k_eff;
        if (wk->k_n > 0.0 && wk->d > 0.0) {
            /* Hertz: the tangent stiffness at the overlap of an impact at v, when stiffer:
             * delta_max = (5 m v^2 / (4 K))^(2/5), K = k_n / sqrt(d) (docs/dem.md) */
            const double dmax = pow(5.0 * wk->m_eff * v * v * sqrt(wk->d) / (4.0 * wk->k_n), 0.4);
            kk = fmax(kk, 1.5 * wk->k_n * sqrt(dmax / wk->d));
        }
        const double hs = work_stable_step(wk, kk);
        if (hs < *h) *h = hs;
    }
    return DVI_OK;
}

dvi_status wld_dem_prepare_step(dvi_world* w, wld_dem* d)
{
    dvi_status st = prepare(w, d);
    if (st != DVI_OK) return wld_error(w, st, "step: out of memory");
    const int32_t nb = w->body_count;
    if (!DVI_RESERVE(d, acc, 6 * (size_t)nb + 6) || !DVI_RESERVE(d, next, 13 * (size_t)nb + 13) ||
        !DVI_RESERVE(d, touch, (size_t)nb + 1) || !DVI_RESERVE(d, iinv, 9 * (size_t)nb + 9) ||
        !DVI_RESERVE(d, ndamp, 24 * (size_t)nb + 24) || !DVI_RESERVE(d, lam, 2 * (size_t)nb + 2))
        return wld_error(w, DVI_ERR_NOMEM, "step: out of memory");
    return DVI_OK;
}

/* The bodies of collision point pt when it is a penalty contact of the step
 * (overlapping, not a sampled shape against a terrain it meets through its
 * samples, at least one dynamic body); false otherwise. */
static bool penalty_contact(const dvi_world* w, const wld_dem* d, const col_contact_point* pt, int32_t* ia,
                            int32_t* ib)
{
    if (!(pt->distance < 0.0)) return false; /* touching only when overlapping */
    const int32_t sa = pt->geom_a, sb = pt->geom_b;
    const wld_shape* SA = &w->shapes[sa];
    const wld_shape* SB = &w->shapes[sb];
    /* a sampled shape meets a terrain through its samples only */
    if ((d->shapes[sa].sample_count > 0 && SB->type == DVI_SHAPE_HEIGHTFIELD &&
         wld_shape_material(w, SB)->terrain_stiffness > 0.0) ||
        (d->shapes[sb].sample_count > 0 && SA->type == DVI_SHAPE_HEIGHTFIELD &&
         wld_shape_material(w, SA)->terrain_stiffness > 0.0))
        return false;
    *ia = SA->body;
    *ib = SB->body;
    return w->bodies[*ia].inv_mass + w->bodies[*ib].inv_mass > 0.0;
}

/* Trace of body b's share of the tangential block of the contact's inverse
 * mass, J_t M⁻¹ J_tᵀ (2×2, lever ρ, normal n): 2/m + |ρ|² tr I⁻¹ − ρᵀ I⁻¹ ρ
 * − (ρ × n)ᵀ I⁻¹ (ρ × n), an upper bound of its largest eigenvalue; 0 unless
 * b is dynamic. Iinv: the world-frame inverse inertia. */
static double tangential_inverse_mass(const wld_body* b, const double* Iinv, const double* rho, const double* n)
{
    if (b->type != DVI_BODY_DYNAMIC) return 0.0;
    double Ir[3], c[3], Ic[3];
    m3_mulv(Ir, Iinv, rho);
    v3_cross(c, rho, n);
    m3_mulv(Ic, Iinv, c);
    const double t = 2.0 * b->inv_mass + v3_dot(rho, rho) * (Iinv[0] + Iinv[4] + Iinv[8]) - v3_dot(rho, Ir) -
                     v3_dot(c, Ic);
    return t > 0.0 ? t : 0.0;
}

/* An upper bound of the largest eigenvalue of the 3×3 matrix X (row-major),
 * whose eigenvalues are real and ≥ 0: (tr X⁴)^¼, which lies between λ_max
 * and 3^¼ λ_max. */
static double rate_bound3(const double* X)
{
    double X2[9], t = 0.0;
    m3_mul(X2, X, X);
    for (int p = 0; p < 3; p++)
        for (int q = 0; q < 3; q++) t += X2[3 * p + q] * X2[3 * q + p];
    return t > 0.0 ? sqrt(sqrt(t)) : 0.0;
}

/* The largest damping rate of each dynamic body's normal dashpots with the
 * other bodies held still, bounded above: λ_max(M_b⁻¹ D_b), D_b = Σ c_n J_bᵀ
 * J_b over its contacts (J_b = (n, ρ × n)), is at most the sum of its
 * translational and rotational blocks' largest eigenvalues,
 * λ_max(Σ c_n n nᵀ)/m + λ_max(I⁻¹ Σ c_n (ρ × n)(ρ × n)ᵀ), each bounded by
 * rate_bound3. d->lam[b] is that sum. The constants of the step's penalty
 * contacts go to d->pairs in their order. O(contacts + bodies); bodies in
 * index order, contacts in the collision's order. */
static dvi_status normal_damping_rates(dvi_world* w, wld_dem* d, const col_contact_point* pts, int32_t npts,
                                       int32_t* npen)
{
    const bool hertz = w->def.dem.normal_model == DVI_DEM_HERTZ;
    const int32_t nb = w->body_count;
    memset(d->touch, 0, (size_t)nb * sizeof *d->touch);
    memset(d->ndamp, 0, 24 * (size_t)nb * sizeof *d->ndamp);
    *npen = 0;
    for (int32_t c = 0; c < npts; c++) {
        const col_contact_point* pt = &pts[c];
        int32_t ia, ib;
        if (!penalty_contact(w, d, pt, &ia, &ib)) continue;
        d->touch[ia]++;
        if (ib != ia) d->touch[ib]++;
        const wld_body* A = &w->bodies[ia];
        const wld_body* B = &w->bodies[ib];
        const double m_eff = 1.0 / (A->inv_mass + B->inv_mass);
        pair_consts* pc = &d->pairs[(*npen)++];
        const dvi_status st = pair_constants(w, d, pt->geom_a, pt->geom_b, m_eff, pc);
        if (st != DVI_OK) return st;
        pc->point = c;
        pc->body_a = ia;
        pc->body_b = ib;
        const double f = hertz ? sqrt(-pt->distance / pc->d) : 1.0;
        const double cn = (hertz ? sqrt(f) : 1.0) * pc->gn * m_eff, kn = hertz ? 1.5 * f * pc->kn : pc->kn;
        const double* n = pt->normal;
        const int32_t body[2] = {ia, ib};
        for (int s = 0; s < 2; s++) {
            const int32_t i = body[s];
            const wld_body* b = &w->bodies[i];
            if (b->type != DVI_BODY_DYNAMIC || (s == 1 && ib == ia)) continue;
            double rho[3], x[3];
            v3_sub(rho, pt->point, b->x);
            v3_cross(x, rho, n);
            double* T = d->ndamp + 24 * (size_t)i; /* Σ c n nᵀ, Σ c x xᵀ, then with k: xx xy xz yy yz zz */
            const double nn[6] = {n[0] * n[0], n[0] * n[1], n[0] * n[2], n[1] * n[1], n[1] * n[2], n[2] * n[2]};
            const double xx[6] = {x[0] * x[0], x[0] * x[1], x[0] * x[2], x[1] * x[1], x[1] * x[2], x[2] * x[2]};
            for (int q = 0; q < 6; q++) {
                T[q] += cn * nn[q];
                T[6 + q] += cn * xx[q];
                T[12 + q] += kn * nn[q];
                T[18 + q] += kn * xx[q];
            }
        }
    }
    for (int32_t i = 0; i < nb; i++) {
        const wld_body* b = &w->bodies[i];
        d->lam[2 * i] = d->lam[2 * i + 1] = 0.0;
        if (b->type != DVI_BODY_DYNAMIC || d->touch[i] == 0) continue;
        double R[9];
        q_to_m3(R, b->q);
        m3_rotate_tensor(d->iinv + 9 * (size_t)i, R, b->inv_inertia);
        for (int m = 0; m < 2; m++) {
            const double* T = d->ndamp + 24 * (size_t)i + 12 * m;
            const double Tt[9] = {T[0], T[1], T[2], T[1], T[3], T[4], T[2], T[4], T[5]};
            const double S[9] = {T[6], T[7], T[8], T[7], T[9], T[10], T[8], T[10], T[11]};
            double P[9];
            m3_mul(P, d->iinv + 9 * (size_t)i, S);
            d->lam[2 * i + m] = b->inv_mass * rate_bound3(Tt) + rate_bound3(P);
        }
    }
    return DVI_OK;
}

dvi_status wld_dem_forces(dvi_world* w, wld_dem* d, double h, const col_contact_point* pts, int32_t npts,
                          wld_dem_forces_out* out)
{
    const dvi_dem_settings* set = &w->def.dem;
    const bool hertz = set->normal_model == DVI_DEM_HERTZ;
    const int32_t nb = w->body_count;
    dvi_status st = DVI_OK;
    size_t nterrain_max = 0;
    for (int32_t k = 0; k < d->sampled_count; k++)
        nterrain_max += (size_t)d->shapes[d->sampled[k]].sample_count * (size_t)d->terrain_count;
    size_t nwork_max = (size_t)npts + nterrain_max + 1;
    if (!DVI_RESERVE(d, work, nwork_max) || !DVI_RESERVE(d, pairs, (size_t)npts + 1) ||
        !DVI_RESERVE(d, recs, nwork_max) || !DVI_RESERVE(d, geo, 9 * nwork_max) ||
        !DVI_RESERVE(w, contacts, nwork_max) || !wld_step_reserve_frames(w, (int32_t)nwork_max))
        return wld_error(w, DVI_ERR_NOMEM, "step: out of memory");
    memset(d->acc, 0, 6 * (size_t)nb * sizeof(double));
    int32_t nwork = 0, ncon = 0, new_entries = 0;
    double max_overlap = 0.0;
    /* the penalty contacts on each dynamic body, the bodies' inverse
     * inertia and their normal rates, for the step's limits on the dashpots
     * and the stable-step estimate; the pairs' constants */
    int32_t npen = 0;
    st = normal_damping_rates(w, d, pts, npts, &npen);
    if (st != DVI_OK) return st;
    int32_t chattering = 0, chatter_contact = -1;
    for (int32_t k = 0; k < npen; k++) {
        const pair_consts pc = d->pairs[k];
        const col_contact_point* pt = &pts[pc.point];
        const int32_t ia = pc.body_a, ib = pc.body_b;
        const int32_t sa = pt->geom_a, sb = pt->geom_b;
        const wld_body* A = &w->bodies[ia];
        const wld_body* B = &w->bodies[ib];
        const double inv_m = A->inv_mass + B->inv_mass;
        const double m_eff = 1.0 / inv_m;
        const double delta = -pt->distance;
        const double* n = pt->normal;
        const double f = hertz ? sqrt(delta / pc.d) : 1.0, g = hertz ? sqrt(f) : 1.0;
        double rhoA[3], rhoB[3], va[3], vb[3], vrel[3];
        v3_sub(rhoA, pt->point, A->x);
        v3_sub(rhoB, pt->point, B->x);
        velocity_at(A, rhoA, va);
        velocity_at(B, rhoB, vb);
        v3_sub(vrel, vb, va);
        const double vn = v3_dot(vrel, n);
        /* the normal dashpot, limited to what the step can integrate:
         * c_n / (1 + h Λ), Λ = Σ over the pair's dynamic bodies of the
         * largest damping rate of their normal dashpots (normal_damping_rates) */
        const double cn = g * pc.gn * m_eff;
        const bool da = A->type == DVI_BODY_DYNAMIC, db = B->type == DVI_BODY_DYNAMIC && ib != ia;
        const double Lam = (da ? d->lam[2 * ia] : 0.0) + (db ? d->lam[2 * ib] : 0.0);
        double Fn = f * pc.kn * delta - cn / (1.0 + h * Lam) * vn;
        if (Fn < 0.0) Fn = 0.0; /* no attraction (a NaN goes on to the guard) */
        if (delta > max_overlap) max_overlap = delta;
        /* history */
        wld_dem_work* wk = &d->work[nwork++];
        wk->key.shape_a = sa;
        wk->key.shape_b = sb;
        wk->key.feature = pt->feature;
        wk->entry = wld_dem_history_find(&d->history, &wk->key);
        wk->body_a = ia;
        wk->body_b = ib;
        wk->m_eff = m_eff;
        wk->k_eff = hertz ? 1.5 * f * pc.kn : pc.kn;
        wk->alpha = g * pc.gn * m_eff / sqrt(wk->k_eff * m_eff);
        wk->rate = Lam;
        wk->omega2 = (da ? d->lam[2 * ia + 1] : 0.0) + (db ? d->lam[2 * ib + 1] : 0.0);
        wk->k_n = hertz ? pc.kn : 0.0;
        wk->d = hertz ? pc.d : 0.0;
        if (wk->entry >= 0) {
            const wld_dem_entry* en = &d->history.entries[wk->entry];
            v3_copy(wk->u, en->u);
            v3_copy(wk->roll, en->roll);
        } else {
            v3_set(wk->u, 0, 0, 0);
            v3_set(wk->roll, 0, 0, 0);
            new_entries++;
        }
        /* tangential spring (Mindlin type) with Coulomb cap; the dashpot is
         * limited to what the step can integrate: c / (1 + h c W), W = Σ over
         * the dynamic bodies of (their penalty contacts) × (their share of
         * the tangential inverse mass here), so that h Σ c_eff/m_t < 1 over
         * each body's contacts and one step of damping cannot reverse them */
        double vt[3], Ft[3];
        v3_copy(vt, vrel);
        v3_axpy(vt, -vn, n);
        to_tangent_plane(wk->u, n);
        v3_axpy(wk->u, h, vt);
        const double Wt = (double)d->touch[ia] * tangential_inverse_mass(A, d->iinv + 9 * (size_t)ia, rhoA, n) +
                          (double)d->touch[ib] * tangential_inverse_mass(B, d->iinv + 9 * (size_t)ib, rhoB, n);
        const double ct = g * pc.gt * m_eff;
        v3_scale(Ft, -f * pc.kt, wk->u);
        v3_axpy(Ft, -ct / (1.0 + h * ct * Wt), vt);
        const double Fmax = pc.mu * Fn;
        double ft = v3_norm(Ft), fs = f * pc.kt * v3_norm(wk->u);
        if (ft > Fmax) v3_scale(Ft, ft > 0.0 ? Fmax / ft : 0.0, Ft);
        if (fs > Fmax) v3_scale(wk->u, Fmax / fs, wk->u); /* sliding: the spring holds μ F_n */
        /* chatter count (dem.h) */
        {
            const wld_dem_entry* en = wk->entry >= 0 ? &d->history.entries[wk->entry] : NULL;
            const double fm = v3_norm(Ft);
            wk->near_limit = Fmax > 0.0 && fm >= DVI_DEM_CHATTER_FRACTION * Fmax;
            const bool rev = wk->near_limit && en && en->near_limit &&
                             v3_dot(Ft, en->ft) < -0.5 * fm * v3_norm(en->ft);
            wk->reversals = rev ? en->reversals + 1 : 0;
            v3_copy(wk->ft, Ft);
            if (wk->reversals >= DVI_DEM_CHATTER_STEPS) {
                if (chatter_contact < 0) chatter_contact = ncon;
                chattering++;
            }
        }
        /* rolling resistance: spring–dashpot on the relative rolling rotation */
        double M[3] = {0, 0, 0};
        if (pc.mu_roll > 0.0) {
            double wrel[3], wr[3];
            v3_sub(wrel, B->w, A->w);
            v3_copy(wr, wrel);
            v3_axpy(wr, -v3_dot(wrel, n), n);
            to_tangent_plane(wk->roll, n);
            v3_axpy(wk->roll, h, wr);
            const double kr = 2.25 * wk->k_eff * pc.mu_roll * pc.mu_roll;
            const double Ia = inertia_about(A, v3_norm(rhoA)), Ib = inertia_about(B, v3_norm(rhoB));
            const double Ir = 1.0 / ((isfinite(Ia) ? 1.0 / Ia : 0.0) + (isfinite(Ib) ? 1.0 / Ib : 0.0));
            const double cr = 2.0 * set->rolling_damping * sqrt(Ir * kr);
            v3_scale(M, -kr, wk->roll);
            v3_axpy(M, -cr, wr);
            const double Mmax = pc.mu_roll * Fn;
            double mm = v3_norm(M), ms = kr * v3_norm(wk->roll);
            if (mm > Mmax) v3_scale(M, mm > 0.0 ? Mmax / mm : 0.0, M);
            if (ms > Mmax) v3_scale(wk->roll, Mmax / ms, wk->roll);
        } else {
            v3_set(wk->roll, 0, 0, 0);
        }
        double F[3];
        v3_scale(F, Fn, n);
        v3_add(F, F, Ft);
        accumulate(d->acc, ib, 1.0, F, rhoB, M);
        accumulate(d->acc, ia, -1.0, F, rhoA, M);
        double* geo = d->geo + 9 * (size_t)ncon;
        wld_contact_rec* rec = &d->recs[ncon++];
        memset(rec, 0, sizeof *rec);
        rec->body_a = ia;
        rec->body_b = ib;
        rec->shape_a = sa;
        rec->shape_b = sb;
        rec->feature = pt->feature;
        v3_copy(rec->point, pt->point);
        rec->distance = pt->distance;
        rec->row = -1;
        v3_copy(rec->force, F);
        v3_copy(geo, n);
        v3_copy(geo + 3, rhoA);
        v3_copy(geo + 6, rhoB);
    }

    /* ---- hysteretic terrain: samples of sampled shapes against terrains ---- */
    for (int32_t k = 0; k < d->sampled_count; k++) {
        const int32_t s = d->sampled[k];
        const wld_shape* S = &w->shapes[s];
        const wld_body* B = &w->bodies[S->body];
        if (B->type == DVI_BODY_FIXED) continue;
        const col_geom* gs = &w->geoms[s];
        const wld_dem_shape* ds = &d->shapes[s];
        for (int32_t q = 0; q < d->terrain_count; q++) {
            const int32_t t = d->terrains[q];
            const wld_shape* T = &w->shapes[t];
            if (T->body == S->body) continue;
            const wld_body* TB = &w->bodies[T->body];
            const col_geom* gt = &w->geoms[t];
            const dvi_material* mt = wld_shape_material(w, T);
            const double c = mt->terrain_stiffness, gam = mt->terrain_hysteresis;
            const double mu = wld_pair_of(wld_shape_material(w, S), mt).mu;
            for (int32_t i = 0; i < ds->sample_count; i++) {
                const double* smp = d->samples + 4 * (size_t)(ds->sample_first + i);
                double pw[3], pl[3], rel[3], nl[3], nw[3], z;
                m3_mulv(pw, gs->rot, smp);
                v3_add(pw, pw, gs->pos);
                v3_sub(rel, pw, gt->pos);
                m3_tmulv(pl, gt->rot, rel);
                if (!wld_dem_terrain_query(T->hfield, pl, nl, &z) || !(z < 0.0)) continue;
                m3_mulv(nw, gt->rot, nl);
                double rho[3], rhoT[3], v[3], vt[3], ft[3];
                v3_sub(rho, pw, B->x);
                v3_sub(rhoT, pw, TB->x);
                velocity_at(B, rho, v); /* the terrain is fixed */
                const double vn = v3_dot(v, nw);
                v3_copy(vt, v);
                v3_axpy(vt, -vn, nw);
                double Fn = wld_dem_terrain_force(c, smp[3], gam, mu, set->terrain_slip_speed, z, vn, vt, ft);
                double F[3];
                v3_scale(F, Fn, nw);
                v3_add(F, F, ft);
                accumulate(d->acc, S->body, 1.0, F, rho, NULL);
                accumulate(d->acc, T->body, -1.0, F, rhoT, NULL);
                if (-z > max_overlap) max_overlap = -z;
                wld_dem_work* wk = &d->work[nwork++];
                memset(wk, 0, sizeof *wk);
                wk->entry = -2; /* no history */
                wk->body_a = T->body;
                wk->body_b = S->body;
                wk->k_eff = c * smp[3] * (1.0 + gam);
                wk->m_eff = B->type == DVI_BODY_DYNAMIC ? B->mass : INFINITY;
                double* geo = d->geo + 9 * (size_t)ncon;
                wld_contact_rec* rec = &d->recs[ncon++];
                memset(rec, 0, sizeof *rec);
                rec->body_a = T->body;
                rec->body_b = S->body;
                rec->shape_a = t;
                rec->shape_b = s;
                rec->feature = (uint32_t)i;
                v3_copy(rec->point, pw);
                rec->distance = z;
                rec->row = -1;
                v3_copy(rec->force, F);
                v3_copy(geo, nw);
                v3_copy(geo + 3, rhoT);
                v3_copy(geo + 6, rho);
            }
        }
    }
    d->last_nwork = nwork;
    *out = (wld_dem_forces_out){.nwork = nwork, .ncon = ncon, .new_entries = new_entries, .max_overlap = max_overlap,
                                .chattering = chattering, .chatter_contact = chatter_contact};
    return DVI_OK;
}
