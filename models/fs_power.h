/*
 * fs_power: the GPU power model and power caps (docs/observability.md
 * "Activity, power, temperature" and "Power caps").
 *
 * A GPU draws idle + context + (TDP - idle - context) x SM activity: idle is
 * 10% of TDP (an assumption), context 38 W while a job computes (holding a
 * CUDA context adds 26-50 W over bare idle, DOMAIN.md 5.4).  One definition
 * for the model (the throughput a cap leaves) and the exporter (the power it
 * writes).
 *
 * A cap (nvidia-smi -pl) below a job's draw lowers the clock until the draw
 * meets it.  Dynamic power goes as f x V^2 and, in the DVFS range, V roughly
 * with f, so the dynamic part goes as f^e with e = 3; a compute-bound job
 * runs at f.  Speed under a cap C: ((C - idle - context) / (draw - idle -
 * context))^(1/e), 1 when the draw is at or below C.  e is a setting
 * (telemetry.cap_exponent); e = 3 is the textbook CMOS relation, not a
 * measurement of a GPU ([U] in docs).
 */
#ifndef FS_POWER_H
#define FS_POWER_H

#include <math.h>

#define FS_POWER_IDLE_SHARE 0.10    /* bare idle draw, share of TDP [U] */
#define FS_POWER_CONTEXT_W 38.0     /* a held CUDA context over idle (26-50 W measured) */

/* The floor of a computing GPU: idle plus a context.  A cap must exceed it. */
static inline double fs_power_floor_w(double tdp)
{
    return FS_POWER_IDLE_SHARE * tdp + FS_POWER_CONTEXT_W;
}

/* Draw of a GPU of TDP tdp with SM activity sm (summed over its jobs), W,
 * before any cap. */
static inline double fs_power_w(double tdp, int computing, double sm)
{
    double idle = FS_POWER_IDLE_SHARE * tdp, ctx = computing ? FS_POWER_CONTEXT_W : 0;
    return idle + ctx + (tdp - idle - ctx) * sm;
}

/* The first-order thermal model (docs/observability.md "Activity, power,
 * temperature"): a GPU drawing P watts settles at ambient + FS_THERMAL_C_PER_W
 * x P with time constant FS_THERMAL_TAU_S (assumptions, [U]: an H100 at 700 W
 * in 30 C air settles at 79 C). */
#define FS_THERMAL_AMBIENT_C 30.0   /* default cluster.pools[].ambient_c */
#define FS_THERMAL_C_PER_W 0.07
#define FS_THERMAL_TAU_S 60.0

/* Thermal throttling (telemetry.throttle_c): a GPU whose steady temperature
 * would pass the slowdown temperature clocks down until it holds it, which
 * is a power limit of (throttle - ambient) / C_PER_W.  0 (infinite limit)
 * when throttle_c <= 0. */
static inline double fs_thermal_limit_w(double throttle_c, double ambient_c)
{
    return throttle_c > 0 ? (throttle_c - ambient_c) / FS_THERMAL_C_PER_W : 0;
}

/* The tighter of a power cap and a thermal limit (each 0: none). */
static inline double fs_power_limit_w(double cap_w, double thermal_w)
{
    if (cap_w > 0 && thermal_w > 0)
        return cap_w < thermal_w ? cap_w : thermal_w;
    return cap_w > 0 ? cap_w : thermal_w;
}

/* Speed (0, 1] of a job with SM activity sm on a GPU capped at cap_w
 * (> fs_power_floor_w(tdp)); cap_w <= 0: no cap. */
static inline double fs_power_cap_speed(double tdp, double cap_w, double sm, double exponent)
{
    double draw = fs_power_w(tdp, 1, sm), floor_w = fs_power_floor_w(tdp);
    if (cap_w <= 0 || draw <= cap_w || draw <= floor_w)
        return 1.0;
    return pow((cap_w - floor_w) / (draw - floor_w), 1.0 / exponent);
}

#endif
