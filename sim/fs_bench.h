/*
 * fs_bench: micro-benchmarks of the engine (run by `fleetsim bench`).
 *
 * Like the scheduler benchmarks that ship with ns-3 and OMNeT++, these time
 * the event set under the classic "hold" model: the queue is filled with
 * `pending` events, then each operation pops the earliest event and pushes
 * a new one at its time plus an exponential increment (mean 1 s, rounded
 * down to whole us) drawn from the keyed RNG stream (seed, 0,
 * FS_RNG_ARRIVAL, 0) with the ziggurat sampler below.  The queue size stays
 * at `pending`, so ns_per_op is the cost of one pop + one push at that
 * size, RNG draw included (about 5 ns of it).
 *
 *   hold        pop + push on the bare fs_evq_t
 *   reschedule  hold, plus one cancel + push of a random pending event per
 *               operation (the "rate changed, move the completion" pattern:
 *               exercises lazy cancellation and compaction)
 *   loop        hold driven by fs_sim_run: each fired event schedules its
 *               successor from on_event; one scheduling pass per instant
 *
 * Timing uses clock_gettime(CLOCK_MONOTONIC) around the operations only (the
 * fill is not timed), and CLOCK_THREAD_CPUTIME_ID beside it; this module and
 * progress reporting are the only places where fleetsim reads a clock.  The simulated work is deterministic:
 * `checksum` and `end_time` depend only on (pending, ops, seed), which lets
 * tests compare a benchmark run with a reference implementation.
 *
 * Ownership: every routine allocates and frees its own queue; nothing is
 * kept between calls (no globals).
 */
#ifndef FS_BENCH_H
#define FS_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "fs_time.h"

typedef struct fs_bench_result {
    const char *name;       /* "hold", "reschedule", "loop" (static string) */
    size_t pending;         /* queue size held constant during the run */
    uint64_t ops;           /* timed operations */
    double seconds;         /* wall-clock seconds of the timed part */
    double ns_per_op;       /* seconds * 1e9 / ops */
    double ops_per_s;       /* ops / seconds */
    double cpu_seconds;     /* CPU time of the calling thread in the timed part */
    double cpu_ns_per_op;   /* cpu_seconds * 1e9 / ops: on a shared machine the
                               wall figure also counts time other work ran */
    fs_time_t end_time;     /* simulated time of the last popped event, us */
    uint64_t checksum;      /* hash of the popped (time, entity) sequence */
} fs_bench_result_t;

/* Exponential variates by the ziggurat of Marsaglia and Tsang (2000), one
 * 32-bit draw of g per variate in 98.9% of cases.  The tables are built by
 * fs_bench_exp_init (no globals); exposed so that tests can check the law
 * and replay the benchmarks on a reference queue. */
typedef struct fs_bench_exp {
    uint32_t k[256];
    double w[256];
    double f[256];
    double mean;
} fs_bench_exp_t;

void fs_bench_exp_init(fs_bench_exp_t *z, double mean);
double fs_bench_exp_draw(const fs_bench_exp_t *z, gsl_rng *g);

/* Each returns 0, FS_EINVAL (pending == 0, pending > FS_EVQ_MAX_PENDING or
 * ops == 0) or FS_ENOMEM; *out is filled on success. */
int fs_bench_hold(size_t pending, uint64_t ops, uint64_t seed, fs_bench_result_t *out);
int fs_bench_reschedule(size_t pending, uint64_t ops, uint64_t seed, fs_bench_result_t *out);
int fs_bench_loop(size_t pending, uint64_t ops, uint64_t seed, fs_bench_result_t *out);

/* The standard table: routine and name, for the CLI to iterate over. */
typedef int (*fs_bench_fn)(size_t pending, uint64_t ops, uint64_t seed, fs_bench_result_t *out);
typedef struct fs_bench_entry {
    const char *name;
    fs_bench_fn fn;
    const char *doc;
} fs_bench_entry_t;

/* Returns the table and sets *n to its length. */
const fs_bench_entry_t *fs_bench_table(size_t *n);

#endif
