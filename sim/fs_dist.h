/*
 * fs_dist: a parametric or empirical distribution of a positive quantity
 * (durations in seconds, times between failures, repair times, ...), sampled
 * through GSL's gsl_ran_* functions.
 *
 * A distribution is declared with the parameters a user thinks in (mean,
 * median, shape) and fs_dist_prepare derives the ones GSL wants:
 *   constant     value
 *   exponential  mean
 *   lognormal    median | mean, and sigma (of the log)
 *   weibull      shape, and mean | scale
 *   gamma        shape, and mean | scale
 *   uniform      lo, hi
 *   empirical    values[] (bootstrap: each draw picks one value uniformly)
 * Unset parameters are NAN.  Ownership: values[] belongs to the fs_dist_t
 * (fs_dist_release frees it; fs_dist_copy deep-copies).
 */
#ifndef FS_DIST_H
#define FS_DIST_H

#include <stddef.h>
#include <gsl/gsl_rng.h>

#include "fs_error.h"

enum fs_dist_kind {
    FS_DIST_NONE = 0,
    FS_DIST_CONSTANT,
    FS_DIST_EXPONENTIAL,
    FS_DIST_LOGNORMAL,
    FS_DIST_WEIBULL,
    FS_DIST_GAMMA,
    FS_DIST_UNIFORM,
    FS_DIST_EMPIRICAL
};

typedef struct fs_dist {
    int kind;           /* enum fs_dist_kind */
    double value;       /* constant */
    double mean;        /* exponential, lognormal, weibull, gamma */
    double median;      /* lognormal */
    double sigma;       /* lognormal: standard deviation of log */
    double shape;       /* weibull k, gamma k */
    double scale;       /* weibull lambda, gamma theta */
    double lo, hi;      /* uniform */
    double *values;     /* empirical sample, owned */
    size_t n_values;
    /* derived by fs_dist_prepare */
    double mu;          /* lognormal: mean of log */
} fs_dist_t;

/* All parameters NAN, kind NONE. */
void fs_dist_init(fs_dist_t *d);
void fs_dist_release(fs_dist_t *d);
int fs_dist_copy(fs_dist_t *dst, const fs_dist_t *src);

/* Checks the parameters and derives the rest.  Returns 0 or FS_EINVAL with a
 * message naming the parameter ("lognormal needs sigma >= 0").  A parameter
 * that is given (not NAN) must be valid even when another one would do.
 * The derived values are written into the same fields (lognormal: mean or
 * median; weibull, gamma: mean or scale), so prepare a distribution once,
 * from its declared parameters: a prepared lognormal, weibull or gamma has
 * both and would be refused ("exactly one of ..."). */
int fs_dist_prepare(fs_dist_t *d, fs_error_t *err);

/* One draw (> 0 for every kind with positive support). */
double fs_dist_sample(const fs_dist_t *d, gsl_rng *r);

/* Analytic mean (empirical: sample mean). */
double fs_dist_mean(const fs_dist_t *d);

const char *fs_dist_kind_name(int kind);
/* Parses a kind name; returns -1 if unknown. */
int fs_dist_kind_parse(const char *name);

#endif
