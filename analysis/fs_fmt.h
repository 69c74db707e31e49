/*
 * fs_fmt: figures in human units for the printed tables of `fleetsim run`,
 * `versus`, `compare` and `plan` (one formatter, shared).  Times in seconds
 * become "42.0 s", "12.5 min", "3.20 h" or "2.10 d"; money becomes
 * "$1,234" (or "$6.88" below $100); shares become "76.6%".  The unit of a
 * /summary metric is taken from its name (fs_fmt_metric_unit).  Machine
 * output (CSV, --json, HDF5) never goes through here: it keeps every digit.
 *
 * An interval whose half-width is zero or within rounding of zero (the
 * replications are identical: 5.44e-10 on 2.2e6 is floating-point noise,
 * not variance) is not printed: fs_fmt_is_constant says when.
 */
#ifndef FS_FMT_H
#define FS_FMT_H

#include <stddef.h>

typedef enum fs_fmt_unit {
    FS_FMT_NUMBER = 0,      /* plain: %.6g, or an integer when integral */
    FS_FMT_DURATION,        /* seconds */
    FS_FMT_MONEY,           /* the results' currency (dollars) */
    FS_FMT_SHARE,           /* a fraction 0..1, printed as a percentage */
    FS_FMT_RATE,            /* per second, printed per hour */
} fs_fmt_unit_t;

/* The unit of a /summary metric by its name (docs/results.md): wait_*,
 * jct_*, queued_*, makespan and *_s are durations (wait_prob is a share);
 * cost_* is money; utilization*, goodput, availability, wait_prob,
 * ettr_mean, little_rel_err, finished_share and *_share are shares;
 * *_rate (per second) is a rate; anything else a number. */
fs_fmt_unit_t fs_fmt_metric_unit(const char *metric);

/* "12.5 min" and the like; "-" for NaN; a leading '-' for negative values. */
void fs_fmt_duration(char *buf, size_t n, double s);
/* "$1,234", "$6.88"; "-" for NaN. */
void fs_fmt_money(char *buf, size_t n, double v);
/* v in unit u (NaN: "-"). */
void fs_fmt_value(char *buf, size_t n, fs_fmt_unit_t u, double v);
/* A signed difference in unit u: "+12.5 min", "-$1,234", "+1.2 pts" for
 * shares (percentage points).  Rates print as "0.114/h". */
void fs_fmt_diff(char *buf, size_t n, fs_fmt_unit_t u, double d);
/* "mean +- half" in unit u; just the mean when half is NaN or
 * fs_fmt_is_constant(mean, half). */
void fs_fmt_interval(char *buf, size_t n, fs_fmt_unit_t u, double mean, double half);

/* 1 when a half-width (or sd) is zero or within floating-point rounding of
 * zero relative to mean (|half| <= 1e-9 |mean|, or exactly 0). */
int fs_fmt_is_constant(double mean, double half);

#endif
