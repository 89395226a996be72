/* rover_events — finds the three characteristic wheel-load events of a
 * rocker-bogie rover driving over an obstacle under the wheels of one side
 * (the pattern of Horvat 2024, §6.4, and of the experiment it compares
 * against):
 *
 *   1. front climbs: the front wheel's load jumps, the middle wheel's drops;
 *   2. middle climbs: the middle wheel's load jumps, front and rear become
 *      about equal; once it is over the top its load drops and front and
 *      rear rise;
 *   3. rear climbs: the middle wheel's load drops (from the value it jumps
 *      to when the rear wheel hits); once the rear wheel is over the top its
 *      load falls and the middle wheel's rises.
 *   Then the loads settle back to the static ones.
 *
 * Input: time series of the travelled distance and of the three loads of
 * the crossing side (normal loads, N), the static loads, and from the
 * geometry the travel at which each wheel reaches and leaves the obstacle
 * (rover_obstacle_travel). Method:
 *   - an excursion is a stretch of samples in which some crossing-side load
 *     is off its static value by more than `band` (relative), from when the
 *     rover has covered half the distance to the obstacle on; excursions
 *     closer than merge_travel (m of travel) are merged. With
 *     baseline_travel > 0 the reference is not the static loads but, for
 *     each wheel, the mean loads just before it reaches the obstacle, from
 *     the start of that baseline window on (excursions are not merged
 *     across a change of reference). On a course where
 *     the wheels cross one at a time (the wheelbase is longer than the
 *     obstacle) there are three, one per wheel; each starts when its wheel
 *     reaches the obstacle;
 *   - predicted times: when the travelled distance reaches each wheel's
 *     reach and leave distances (linear interpolation between samples);
 *   - each event is checked on its excursion: the climb is the part before
 *     the wheel's centre passes over the obstacle's centre, the descent the
 *     part after, with the thresholds of rover_event_thresholds;
 *   - crossing time: from the front wheel's predicted reach to the rear
 *     wheel's predicted leave; an event is on time when its excursion starts
 *     within timing_tolerance × crossing time of its prediction;
 *   - settling: after the last excursion, every load of the side within
 *     settle_tolerance of its static value.
 * Pure computation on arrays: no world, no I/O, no allocation. */
#ifndef ROVER_EVENTS_H
#define ROVER_EVENTS_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { ROVER_FRONT = 0, ROVER_MIDDLE = 1, ROVER_REAR = 2 };

typedef struct rover_course {
    int n;                   ///< samples
    const double* t;         ///< [n] s, increasing
    const double* travel;    ///< [n] m, distance driven along +x since t = 0
    const double* load[3];   ///< [n] N, crossing side: front, middle, rear
    double static_load[3];   ///< N
    double reach[3];         ///< m of travel at which each wheel reaches the obstacle
    double leave[3];         ///< m of travel at which it leaves it
} rover_course;

typedef struct rover_event_thresholds {
    double band;             ///< relative load change that starts an excursion; default 0.05
    double merge_travel;     ///< m; excursions closer than this are one; default 0.1
    double jump;             ///< a load "jumps" when its ratio to static exceeds 1 + jump; default 0.2
    double drop;             ///< a load "drops" when its ratio falls below 1 − drop (the middle wheel's
                             ///< while the rear climbs: below 1 − drop of its peak in the climb); default 0.1
    double equal;            ///< front ≈ rear: |N_F − N_R| ≤ equal · (N_F + N_R)/2 on average over the
                             ///< middle wheel's climb; default 0.25
    double timing_tolerance; ///< fraction of the crossing time; default 0.05
    double settle_tolerance; ///< relative, after the crossing; default 0.01
    double baseline_travel;  ///< m; 0 (default): loads are measured against the static loads. > 0: each
                             ///< event against its own baseline, the mean loads over the `baseline_travel`
                             ///< metres of travel that end 0.02 m before its wheel reaches the obstacle (for
                             ///< models whose loads do not return to static between the climbs, such as DEM's
                             ///< stored tangential springs; settling is still measured against static)
} rover_event_thresholds;

rover_event_thresholds rover_default_event_thresholds(void);

typedef struct rover_event {
    double t_reach;          ///< s, predicted from the travel (NaN if never reached)
    double t_top;            ///< s, the wheel's centre over the obstacle's centre (predicted)
    double t_leave;          ///< s, predicted
    double t_start, t_end;   ///< s, the excursion (NaN if none)
    double error;            ///< t_start − t_reach, s
    double climb_max[3], climb_min[3];   ///< load / baseline over the climb, per wheel (F, M, R)
    double descent_max[3], descent_min[3]; ///< over the descent
    double baseline[3];      ///< N, the loads the event is measured against (static, or as baseline_travel)
    double front_rear;       ///< mean |N_F − N_R| / ((N_F + N_R)/2) over the climb
    bool pattern;            ///< the event's load pattern is there
    bool on_time;            ///< |error| ≤ timing_tolerance × crossing time
    char why[160];           ///< what was found, in words
} rover_event;

typedef struct rover_events {
    rover_event event[3];    ///< front, middle, rear
    int excursions;          ///< found (after merging); 3 expected
    double crossing_time;    ///< s
    double settle_error;     ///< largest |N/N_static − 1| after the last excursion (NaN if none left)
    double t_settled;        ///< s, from when settle_error holds
    bool ok;                 ///< three excursions, every pattern present and on time, loads settled
} rover_events;

/// Analyses a crossing. th may be NULL (defaults). Returns the number of
/// excursions found (≥ 0), or −1 for bad input.
int rover_find_events(const rover_course* c, const rover_event_thresholds* th, rover_events* out);

/* Phase means: the same pattern read from mean loads over stretches of
 * travel instead of from excursions, for loads too noisy for a band of a few
 * per cent (a granular bed: every grouser and grain that enters or leaves a
 * wheel's contact moves its load by tens of per cent within milliseconds).
 * The travel is cut at each wheel's reach, top (its centre over the
 * obstacle's centre) and leave distances; each climb and each descent is
 * halved once more. The phases, in order:
 *   0 before      the `baseline_travel` metres that end 0.02 m before the
 *                 front wheel reaches the obstacle: the baseline;
 *   1–4           front wheel: climb (first, second half), descent (first,
 *                 second half);
 *   5             between the front wheel's leave and the middle's reach;
 *   6–9           middle wheel, as 1–4;
 *   10            between the middle and the rear wheel;
 *   11–14         rear wheel, as 1–4;
 *   15 after      the `baseline_travel` metres from 0.3 m after the rear
 *                 wheel leaves (NaN when the run ends before).
 * Every mean is relative to the baseline (the mean loads of phase 0; the
 * static loads when baseline_travel is 0). The patterns, with climb and
 * descent the means over both halves and j, d the thresholds' jump and drop:
 *   front   climb: front > 1 + j, middle < 1 − d;
 *   middle  climb: middle > 1 + j, |front − rear| ≤ equal · (front + rear)/2;
 *           descent: middle < 1 − d, front > 1 + d, rear > 1 + d;
 *   rear    climb: middle lower in the second half than in the first;
 *           descent: rear < 1 − d, middle > 1 + j. */
enum { ROVER_PHASES = 16 };

typedef struct rover_phases {
    double d0[ROVER_PHASES], d1[ROVER_PHASES]; ///< m of travel: each phase's stretch
    double t0[ROVER_PHASES], t1[ROVER_PHASES]; ///< s: its first and last sample (NaN if none)
    int samples[ROVER_PHASES];                 ///< samples in it
    double mean[ROVER_PHASES][3];              ///< mean load / baseline: front, middle, rear (NaN if no samples)
    double baseline[3];                        ///< N
    double climb[3][3], descent[3][3];         ///< [wheel][load]: means over the two halves (sample-weighted)
    bool pattern[3];                           ///< front, middle, rear: the event's pattern is in the means
    char why[3][160];                          ///< what was found, in words
} rover_phases;

/// Phase means of a crossing (see above). th may be NULL (defaults); only
/// its jump, drop and equal are used. baseline_travel ≥ 0 (m; 0: the static
/// loads). Returns the number of patterns found (0..3), or −1 for bad input
/// or when no sample lies in the baseline window.
int rover_phase_means(const rover_course* c, const rover_event_thresholds* th, double baseline_travel,
                      rover_phases* out);

/// The crossing side's climbs as measured from the wheel centres, for phase
/// means cut where the wheels actually climb and land (where the rover yaws,
/// on a bed under one side, each wheel meets the obstacle later than a
/// straight drive predicts). height[w][n]: wheel w's centre height (m) at
/// each sample of c (only c->n, c->travel, c->reach and c->leave are used).
/// For each wheel, level is its mean height over the 0.1 m of travel that
/// ends 0.02 m before its predicted reach; it reaches the obstacle at the
/// first sample after that window's start whose height exceeds level + 0.01
/// m, and leaves it at the first sample after its highest point (searched up
/// to its predicted leave + 0.3 m of travel) back within 0.01 m of the
/// ground it lands on: the higher of level and its lowest height between
/// that highest point and the end of the search (on grains a wheel can land
/// on a surface higher than its rut before the obstacle; such a landing
/// counts only when the wheel then stays within 0.01 m of it for 0.05 m of
/// travel, so a run that ends in the middle of a descent has no landing).
/// Writes the travel of those samples to reach and leave. Returns 3 when
/// every wheel climbs and lands in the run, else the index (0..2) of the
/// first wheel that does not (reach and leave then hold the wheels before
/// it), or −1 for bad input.
int rover_measured_cuts(const rover_course* c, const double* const height[3], double reach[3], double leave[3]);

/// The name of phase k ("before", "front climb 1", ... "after").
const char* rover_phase_name(int k);

#ifdef __cplusplus
}
#endif
#endif /* ROVER_EVENTS_H */
