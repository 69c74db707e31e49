/*
 * fs_clock: the wall and CPU clocks the commands and the run report use
 * (progress lines, rates, benchmarks).  Never simulated time.
 */
#ifndef FS_CLOCK_H
#define FS_CLOCK_H

#include <time.h>

/* Seconds on the monotonic clock (differences only). */
static inline double fs_clock_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds of this process (on a shared machine wall time also counts
 * other processes' load). */
static inline double fs_clock_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
