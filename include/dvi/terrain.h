/* dvicontact — terrain models: soils and wheel–terrain force laws that act
 * on a world's bodies through force elements (<dvi/world.h>). Each model
 * has a section of its own below; docs/terrain.md describes them. */
#ifndef DVI_TERRAIN_H
#define DVI_TERRAIN_H

#include "world.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Bekker–Wong wheels ------------------------------------------------- */

/// Soil of the Bekker–Wong wheel model (docs/terrain.md, "Bekker–Wong
/// wheel"): Bekker's pressure–sinkage law with Wong and Reece's stress
/// distribution, Janosi and Hanamoto's shear. SI units throughout.
typedef struct dvi_bw_soil {
    double k_c;            ///< Pa/m^(n−1), cohesive modulus of deformation
    double k_phi;          ///< Pa/m^n, frictional modulus of deformation
    double n0, n1;         ///< sinkage exponent n = n0 + n1 |s|
    double cohesion;       ///< Pa, c
    double friction_angle; ///< rad, φ (internal friction)
    double K_x0, K_x1;     ///< m and m/rad: shear modulus K_x = K_x0 + K_x1 |β|
    double K_y0, K_y1;     ///< m and m/rad: K_y = K_y0 + K_y1 |β|
    double a1, a2;         ///< maximum-stress angle θ_m = (a1 + a2 s) θ1
    double lambda;         ///< exit angle θ2 = −acos(1 − λ z/r), λ ≥ 0 (0: Bekker's θ2 = 0)
} dvi_bw_soil;

/// The lunar soil simulant of Ishigami et al. 2007 (Kruuse 2023, Table 4.1;
/// λ = 1, n1 = 0).
DVI_API dvi_bw_soil dvi_bw_soil_ishigami2007(void);
/// The soil of Ding et al. 2011 (Kruuse 2023, Table 4.1: K = 11.4 mm, the
/// middle of 9.7–13.1 mm, for K_x and K_y; a1, a2 of Ishigami et al.; λ = 0,
/// n1 = 0).
DVI_API dvi_bw_soil dvi_bw_soil_ding2011(void);

/// One wheel's forces on the soil's side of the model: what the integrals
/// give (Kruuse 2023, eqs 3.4–3.7), in the wheel's contact frame.
typedef struct dvi_bw_forces {
    double normal;        ///< N, f_z along the ground normal (damping included in a world)
    double drawbar_pull;  ///< N, f_x along the wheel's forward direction
    double lateral;       ///< N, f_y: the shear force resisting the slip angle (the force on the wheel is
                          ///< −f_y along the lateral direction n × forward)
    double torque;        ///< N·m, T: the soil's resisting torque about the axle (against the wheel's spin)
    double sinkage;       ///< m, z: depth of the wheel's lowest point below the ground
    double theta1;        ///< rad, entry angle
    double theta2;        ///< rad, exit angle (≤ 0: behind the lowest point)
    double theta_m;       ///< rad, angle of the maximum normal stress
    double slip;          ///< s in [−1, 1]
    double slip_angle;    ///< rad, β
    double exponent;      ///< n = n0 + n1 |s|
} dvi_bw_forces;

/// The forces on a wheel of radius r and width b (m) at sinkage z (m, in
/// [0, r]), slip s (in [−1, 1]) and slip angle β (rad, |β| < π/2), without
/// damping. Quadrature: Gauss–Legendre, DVI_BW_QUADRATURE_POINTS points on
/// each side of θ_m. DVI_ERR_INVALID_ARG (message) for a NULL argument, a
/// soil or geometry out of range (names the field), or z, s, β out of range.
DVI_API dvi_status dvi_bw_forces_at(const dvi_bw_soil* soil, double r, double b, double sinkage, double slip,
                                    double slip_angle, dvi_bw_forces* out);
#define DVI_BW_QUADRATURE_POINTS 12

/// The static model: the sinkage at which the normal force carries the load
/// W (N) at slip s and slip angle β, found by a bracketed root search over
/// θ1 in (0, π/2] (to 1e-12 rad), and the forces there. DVI_ERR_INVALID_ARG
/// (message) as above, for W ≤ 0, or when the soil cannot carry W at any
/// sinkage up to r.
DVI_API dvi_status dvi_bw_static(const dvi_bw_soil* soil, double r, double b, double load, double slip,
                                 double slip_angle, dvi_bw_forces* out);

/// Bekker–Wong wheels in a world: one force element acting on the listed
/// wheel bodies over one ground.
typedef struct dvi_bw_def {
    dvi_bw_soil soil;
    const dvi_body_id* wheels;  ///< the wheel bodies (copied); each has a cylinder shape (its first),
                                ///< whose axis is the axle, radius r and length the width b
    int32_t wheel_count;        ///< 1 … DVI_BW_MAX_WHEELS
    double radius;              ///< m, effective radius (a grousered wheel's r + lug height);
                                ///< 0 (default): each cylinder's own radius
    double damping;             ///< N·s/m, γ of f_z = … + γ ż (eq 3.4); default 0
    double regularisation_speed;///< m/s, v_reg > 0 of the slip and the tangential forces' fade; default 0.01
    /* The ground: a plane through (0, 0, plane_height) with plane_normal,
     * or, when ground_set is true, the height-field shape ground_shape of
     * the body ground_body (fixed). */
    double plane_height;        ///< m; default 0
    double plane_normal[3];     ///< default (0, 0, 1) (normalised when the element is added)
    bool ground_set;            ///< default false
    dvi_body_id ground_body;
    int32_t ground_shape;       ///< index among the body's shapes
} dvi_bw_def;
#define DVI_BW_MAX_WHEELS 256

DVI_API dvi_bw_def dvi_default_bw_def(void);

/// Adds the wheels' force element to the world (it owns its copy of the
/// definition). Each step it finds every wheel's sinkage below the ground,
/// its slip and slip angle from its velocities, and applies f_x, f_y, f_z at
/// the wheel's centre and −T about its axle. index: the element's index
/// (may be NULL). DVI_ERR_INVALID_ARG (message naming the field or the
/// wheel) for a bad definition: a wheel without a cylinder, a ground that
/// is not a height field, a soil out of range.
///
/// During the steps: a wheel over no part of the height field fails the
/// step (DVI_ERR_INVALID_ARG, naming the wheel); a wheel above the ground
/// takes no force; a sinkage beyond r is taken as r.
DVI_API dvi_status dvi_world_add_bekker_wong(dvi_world* world, const dvi_bw_def* def, int32_t* index);

/// The forces of wheel `wheel` (its place in def.wheels) in the last step of
/// element `index` (as dvi_world_add_bekker_wong gave it); zero before the
/// first step. DVI_ERR_INVALID_ARG for an element that is not a Bekker–Wong
/// one or a wheel out of range.
DVI_API dvi_status dvi_bw_wheel_forces(const dvi_world* world, int32_t index, int32_t wheel, dvi_bw_forces* out);

/* ---- SCM: the soil contact model (deformable soil grid) ------------------
 *
 * A rectangular patch of soil nodes on a regular grid of spacing Δ, in the
 * patch's frame (origin at node (0, 0), x and y along the grid, z the soil
 * normal, up). Every step, rays cast up along z from below each node under
 * a body's shape find how far the shape has pressed into the soil; each
 * node then follows the elastic–plastic (Reuss–Prandtl) update with
 * Bekker's pressure–sinkage law σ = (k_c/b + k_φ) yⁿ, damping, and the
 * Mohr–Coulomb / Janosi–Hanamoto shear law, and the node forces are added
 * to the bodies (docs/terrain.md, "SCM"). Only nodes a shape has touched
 * are stored. The soil's state is part of the world's saved state. */

/// Most nodes along one side of a patch (nx, ny ≤ this).
#define DVI_SCM_MAX_SIDE 1048576
/// Default and largest value of dvi_scm_def.max_nodes.
#define DVI_SCM_DEFAULT_MAX_NODES 4194304
#define DVI_SCM_MAX_NODES_LIMIT 67108864

typedef struct dvi_scm_def {
    double origin[3];          ///< m, world position of node (0, 0) (the patch's corner)
    double orientation[4];     ///< (w, x, y, z) of the patch frame; its z is the soil normal; default identity
    double size[2];            ///< m, the patch's extent along its x and y (> 0); default 1 × 1
    double spacing;            ///< m, grid spacing Δ (> 0); default 0.02. Nodes: (size/Δ rounded) + 1 per side
    /// Initial heights along the patch's z (m), (nx + 1)·(ny + 1) of them,
    /// heights[j·(nx + 1) + i] at node (i, j), nx = round(size[0]/Δ); copied.
    /// NULL (default): flat at z = 0.
    const double* heights;
    double k_phi;              ///< Pa/m^n, Bekker's k_φ (> 0); default 0.82e6
    double k_c;                ///< Pa/m^(n−1), Bekker's k_c (≥ 0); default 0.14e6
    double n;                  ///< Bekker's sinkage exponent, in (0, 3]; default 1
    double cohesion;           ///< Pa, Mohr–Coulomb c (≥ 0); default 0
    double friction_angle;     ///< rad, Mohr–Coulomb φ in [0, π/2); default π/6 (30°)
    double janosi_shear;       ///< m, Janosi–Hanamoto K (> 0); default 0.01
    double elastic_stiffness;  ///< Pa/m, k_e, the unloading and reloading slope (> k_φ); default 4e7
    double damping;            ///< Pa·s/m, r of σ + r·v_c (≥ 0); default 3e4
    /// Bulldozing: each step the plastic flow of a contact patch's nodes is
    /// heaped on the patch's rim and erodes down to the angle of repose
    /// (docs/terrain.md). Default false.
    bool bulldozing;
    double erosion_angle;      ///< rad, angle of repose, in (0, π/2); default 40°
    int32_t erosion_iterations;   ///< erosion sweeps a step, 0 … 100; default 3
    int32_t erosion_propagations; ///< rings beyond the rim that erosion may reach, 0 … 1000; default 10
    int64_t max_nodes;         ///< touched nodes at most (1 … DVI_SCM_MAX_NODES_LIMIT); default
                               ///< DVI_SCM_DEFAULT_MAX_NODES. A step that would exceed it fails
    /// The bodies the soil acts on; NULL (body_count 0, the default): every
    /// dynamic and kinematic body of the world at each step.
    const dvi_body_id* bodies;
    int32_t body_count;
} dvi_scm_def;

DVI_API dvi_scm_def dvi_default_scm_def(void);

typedef struct dvi_scm dvi_scm;

/// Adds an SCM soil patch to the world, as a force element named "scm"
/// (the world owns it: it is freed with the world). DVI_ERR_INVALID_ARG,
/// with a message naming the field, for a bad definition (e.g. an elastic
/// stiffness not above k_φ, a grid of more than DVI_SCM_MAX_SIDE nodes a
/// side), or a listed body that is fixed, unknown or has a shape whose
/// kind cannot be ray-cast. `out` may be NULL.
DVI_API dvi_status dvi_scm_create(dvi_world* world, const dvi_scm_def* def, dvi_scm** out);

/// One soil node. Sinkages are along the patch's z, positive down, from
/// the initial height.
typedef struct dvi_scm_node {
    bool touched;              ///< a shape has pressed it (else: the initial state)
    bool contact;              ///< under a shape in the last step
    double level_initial;      ///< m, initial height (patch frame)
    double level;              ///< m, current height: level_initial − sinkage
    double sinkage;            ///< m, plastic + elastic
    double sinkage_plastic;    ///< m, permanent
    double sinkage_elastic;    ///< m, recovered when the shape leaves
    double pressure;           ///< Pa, σ of the last step (damping included; 0 off contact)
    double yield_pressure;     ///< Pa, σ_yield: the pressure reloading must pass to flow again
    double shear_displacement; ///< m, the path j on Janosi's curve that gives the node's shear (0 off contact)
} dvi_scm_node;

/// Node (i, j), 0 ≤ i ≤ nx, 0 ≤ j ≤ ny. DVI_ERR_INVALID_ARG off the grid.
DVI_API dvi_status dvi_scm_get_node(const dvi_scm* scm, int32_t i, int32_t j, dvi_scm_node* out);

/// The touched nodes, in the order they were first touched: k in
/// [0, nodes_touched). i, j receive the node's indices.
DVI_API dvi_status dvi_scm_touched_node(const dvi_scm* scm, int64_t k, int32_t* i, int32_t* j,
                                        dvi_scm_node* out);

/// What the soil did to one body in the last step.
typedef struct dvi_scm_body_contact {
    int32_t contacts;          ///< nodes under the body's shapes
    double sinkage_max;        ///< m, the deepest of them (0: none)
    double force[3];           ///< N, world frame: the soil's force on the body
    double torque[3];          ///< N·m, about its centre of mass
} dvi_scm_body_contact;

/// The last step's contact of `body` (zeros when it had none or the soil
/// does not act on it). DVI_ERR_INVALID_ARG for a bad id.
DVI_API dvi_status dvi_scm_get_body_contact(const dvi_scm* scm, dvi_body_id body, dvi_scm_body_contact* out);

/// The soil of force element `element` of the world (dvi_world_force_element),
/// or NULL when that element is not an SCM soil.
DVI_API const dvi_scm* dvi_scm_of_element(const dvi_world* world, int32_t element);

/// Counts of the patch and of the last step.
typedef struct dvi_scm_stats {
    int32_t nx, ny;            ///< cells along x, y (nodes: nx + 1, ny + 1)
    double spacing;            ///< m, Δ
    double origin[3];          ///< m, the patch frame's origin (node (0, 0)), world
    double rotation[9];        ///< the patch frame's axes in the world, row-major (columns: x, y, z)
    int64_t nodes_touched;     ///< nodes stored (touched at least once)
    int64_t rays;              ///< rays cast in the last step
    int64_t contacts;          ///< nodes under a shape in the last step
    int32_t patches;           ///< connected contact patches in the last step
    double min_b, max_b;       ///< m, smallest and largest patch b of the last step (0: none)
    int32_t shapes_off_patch;  ///< shapes of the last step whose part below the highest node reached
                               ///< past the patch's edge (there is no soil beyond it)
    double seconds;            ///< wall time of the last step's soil update
} dvi_scm_stats;

DVI_API dvi_scm_stats dvi_scm_get_stats(const dvi_scm* scm);

#ifdef __cplusplus
}
#endif

#endif /* DVI_TERRAIN_H */
