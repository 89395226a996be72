/* dvicontact — terrain models: force elements (<dvi/world.h>) that stand for
 * soft ground under a world's bodies (docs/terrain.md). */
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

#ifdef __cplusplus
}
#endif

#endif /* DVI_TERRAIN_H */
