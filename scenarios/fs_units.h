/*
 * fs_units: numbers with units in the scenario language.
 *
 * Durations:  "250us" "500ms" "90s" "15m" (or "15min") "2h" "30d" "1w" "1y"
 *             (y = 365 days); decimals and exponents allowed ("1.5h",
 *             "2e3s"); optional blanks between number and unit.  A bare
 *             number is refused (units are required) except zero.  The
 *             decimal text is converted EXACTLY and rounded to the nearest
 *             microsecond (halves away from zero).  Negative, non-finite and
 *             values beyond FS_TIME_MAX_INPUT are refused.
 * Rates:      "40/h" "3/min" (or "3/m") "0.5/s" "10/d" (any duration unit
 *             after the slash), stored as events per second (a double:
 *             N / seconds-of-unit for units of a second or more, N * (1e6 /
 *             microseconds-of-unit) below).  A bare number is refused except
 *             zero; negative and non-finite rates are refused.
 * Numbers:    plain finite decimals ("0.5", "1e-3"); NaN and infinities are
 *             refused.
 *
 * Formatting writes the shortest text that parses back to exactly the same
 * value (durations: the largest unit of d, h, m, s, ms, us that divides the
 * value: "45m", "2700001us"), so that dump -> load is an identity.
 *
 * Parsers return 0, or FS_EINVAL with a message (no position: the caller
 * prefixes "FILE:LINE:COL: key: ") that says what was expected.
 * No allocation, no state.
 */
#ifndef FS_UNITS_H
#define FS_UNITS_H

#include <stddef.h>

#include "../sim/fs_error.h"
#include "../sim/fs_time.h"

/* Buffer size that every fs_units_format_* result fits in. */
#define FS_UNITS_BUF 64

/* The phrases used in messages, so that every caller says the same thing. */
#define FS_UNITS_DURATION_EXPECT "expected a duration such as 90s, 15m, 2h or 30d"
#define FS_UNITS_RATE_EXPECT "expected a rate such as 40/h, 3/min or 0.5/s"

int fs_units_parse_duration(const char *s, fs_time_t *out, fs_error_t *err);
int fs_units_parse_rate(const char *s, double *per_s, fs_error_t *err);
/* A finite decimal number (optional sign, fraction, exponent). */
int fs_units_parse_number(const char *s, double *out, fs_error_t *err);

/* Each writes into buf (n >= FS_UNITS_BUF always suffices) and returns buf. */
char *fs_units_format_duration(fs_time_t t, char *buf, size_t n);
char *fs_units_format_rate(double per_s, char *buf, size_t n);
char *fs_units_format_number(double x, char *buf, size_t n);

#endif
