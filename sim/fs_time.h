/*
 * fs_time: simulated time.
 *
 * Simulated time is a signed 64-bit count of MICROSECONDS since the start of
 * the run (fs_time_t).  It is advanced only by the event loop.  2^63 us is
 * about 292,000 years, so horizons of centuries are representable; inputs
 * beyond FS_TIME_MAX_INPUT (1,000 years) are refused by the loaders.
 * Results files store float64 seconds (fs_time_to_s).
 */
#ifndef FS_TIME_H
#define FS_TIME_H

#include <stdint.h>

typedef int64_t fs_time_t;

#define FS_US_PER_S   INT64_C(1000000)
#define FS_US_PER_MIN (INT64_C(60) * FS_US_PER_S)
#define FS_US_PER_H   (INT64_C(3600) * FS_US_PER_S)
#define FS_US_PER_DAY (INT64_C(86400) * FS_US_PER_S)
#define FS_TIME_NEVER INT64_MAX
/* Largest time any input may name: 1000 years of 365.25 days. */
#define FS_TIME_MAX_INPUT (INT64_C(1000) * INT64_C(31557600) * FS_US_PER_S)

static inline double fs_time_to_s(fs_time_t t) { return (double)t / 1e6; }

/* Rounds seconds to the nearest microsecond; the caller checks the range
 * (|s| <= FS_TIME_MAX_INPUT / 1e6) before calling. */
static inline fs_time_t fs_time_from_s(double s)
{
    double us = s * 1e6;
    return (fs_time_t)(us < 0 ? us - 0.5 : us + 0.5);
}

#endif
