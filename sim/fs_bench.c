#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "fs_bench.h"
#include "fs_alloc.h"
#include "fs_error.h"
#include "fs_evq.h"
#include "fs_rng.h"
#include "fs_sim.h"

#include <math.h>
#include <time.h>

#define BENCH_MEAN_US 1e6 /* mean increment: 1 s */

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Exponential increment in whole microseconds (rounded down), by inversion
 * -mean * log(U) with U uniform on (0,1): the same law as
 * gsl_ran_exponential, which computes log1p(-U) and costs 6 ns more. */
static inline fs_time_t increment(gsl_rng *g)
{
    return (fs_time_t)(-BENCH_MEAN_US * log(gsl_rng_uniform_pos(g)));
}

static inline uint64_t mix(uint64_t h, fs_time_t t, uint32_t entity)
{
    h ^= (uint64_t)t + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
    return (h ^ entity) * UINT64_C(0x100000001b3);
}

static int check_args(size_t pending, uint64_t ops)
{
    if (pending == 0 || pending > ((size_t)1 << 31) || ops == 0)
        return FS_EINVAL;
    return 0;
}

static void finish(fs_bench_result_t *out, const char *name, size_t pending, uint64_t ops,
                   double seconds, fs_time_t end, uint64_t checksum)
{
    out->name = name;
    out->pending = pending;
    out->ops = ops;
    out->seconds = seconds;
    out->ns_per_op = seconds * 1e9 / (double)ops;
    out->ops_per_s = seconds > 0 ? (double)ops / seconds : 0;
    out->end_time = end;
    out->checksum = checksum;
}

/* Fills q with one event per entity 0..pending-1 at increment() from 0;
 * records handles if h is non-NULL. */
static int fill(fs_evq_t *q, size_t pending, gsl_rng *g, fs_event_handle_t *h)
{
    for (size_t i = 0; i < pending; i++) {
        fs_event_t ev = {.time = increment(g), .entity = (uint32_t)i,
                         .priority = FS_PRIO_TIMER};
        int rc = fs_evq_push(q, &ev, h ? &h[i] : NULL);
        if (rc)
            return rc;
    }
    return 0;
}

int fs_bench_hold(size_t pending, uint64_t ops, uint64_t seed, fs_bench_result_t *out)
{
    int rc = check_args(pending, ops);
    if (rc)
        return rc;
    fs_rng_t rng;
    if ((rc = fs_rng_init(&rng, seed, 0, FS_RNG_ARRIVAL, 0)))
        return rc;
    gsl_rng *g = fs_rng_gsl(&rng);
    fs_evq_t q;
    fs_evq_init(&q);
    if ((rc = fill(&q, pending, g, NULL)))
        goto done;

    uint64_t sum = 0;
    fs_time_t last = 0;
    fs_event_t ev = {0};
    double t0 = wall_seconds();
    for (uint64_t i = 0; i < ops; i++) {
        fs_evq_pop(&q, &ev);
        sum = mix(sum, ev.time, ev.entity);
        last = ev.time;
        ev.time += increment(g);
        if ((rc = fs_evq_push(&q, &ev, NULL)))
            goto done;
    }
    double t1 = wall_seconds();
    finish(out, "hold", pending, ops, t1 - t0, last, sum);
done:
    fs_evq_release(&q);
    fs_rng_release(&rng);
    return rc;
}

int fs_bench_reschedule(size_t pending, uint64_t ops, uint64_t seed, fs_bench_result_t *out)
{
    int rc = check_args(pending, ops);
    if (rc)
        return rc;
    fs_event_handle_t *h = fs_malloc(pending * sizeof *h);
    if (!h)
        return FS_ENOMEM;
    fs_rng_t rng;
    if ((rc = fs_rng_init(&rng, seed, 0, FS_RNG_ARRIVAL, 0))) {
        fs_free(h);
        return rc;
    }
    gsl_rng *g = fs_rng_gsl(&rng);
    fs_evq_t q;
    fs_evq_init(&q);
    if ((rc = fill(&q, pending, g, h)))
        goto done;

    uint64_t sum = 0;
    fs_time_t last = 0;
    fs_event_t ev = {0};
    double t0 = wall_seconds();
    for (uint64_t i = 0; i < ops; i++) {
        fs_evq_pop(&q, &ev);
        sum = mix(sum, ev.time, ev.entity);
        fs_time_t now = last = ev.time;
        ev.time = now + increment(g);
        if ((rc = fs_evq_push(&q, &ev, &h[ev.entity])))
            goto done;
        /* every entity has exactly one pending event: move a random one */
        uint32_t r = (uint32_t)gsl_rng_uniform_int(g, pending);
        if (fs_evq_cancel(&q, h[r]) != 1) {
            rc = FS_EINTERNAL;
            goto done;
        }
        fs_event_t mv = {.time = now + increment(g), .entity = r, .priority = FS_PRIO_TIMER};
        if ((rc = fs_evq_push(&q, &mv, &h[r])))
            goto done;
    }
    double t1 = wall_seconds();
    finish(out, "reschedule", pending, ops, t1 - t0, last, sum);
done:
    fs_evq_release(&q);
    fs_rng_release(&rng);
    fs_free(h);
    return rc;
}

/* The hold model as an fs_sim model. */
typedef struct loop_model {
    gsl_rng *g;
    uint64_t remaining;
    uint64_t sum;
    uint64_t passes;
    fs_time_t last;
} loop_model_t;

static void loop_on_event(fs_sim_t *sim, const fs_event_t *ev, void *vm)
{
    loop_model_t *m = vm;
    m->sum = mix(m->sum, ev->time, ev->entity);
    m->last = ev->time;
    fs_event_t next = *ev;
    next.time += increment(m->g);
    if (fs_sim_schedule(sim, &next, NULL))
        return; /* fs_sim_schedule recorded FS_ENOMEM and stopped the loop */
    if (--m->remaining == 0)
        fs_sim_stop(sim);
}

static void loop_on_instant_end(fs_sim_t *sim, void *vm)
{
    loop_model_t *m = vm;
    m->passes++;
}

static const fs_model_ops_t loop_ops = {
    .on_event = loop_on_event,
    .on_instant_end = loop_on_instant_end,
};

int fs_bench_loop(size_t pending, uint64_t ops, uint64_t seed, fs_bench_result_t *out)
{
    int rc = check_args(pending, ops);
    if (rc)
        return rc;
    fs_rng_t rng;
    if ((rc = fs_rng_init(&rng, seed, 0, FS_RNG_ARRIVAL, 0)))
        return rc;
    loop_model_t m = {.g = fs_rng_gsl(&rng), .remaining = ops};
    fs_sim_t sim;
    fs_sim_init(&sim, &loop_ops, &m);
    if ((rc = fill(&sim.evq, pending, m.g, NULL)))
        goto done;
    double t0 = wall_seconds();
    rc = fs_sim_run(&sim, FS_TIME_NEVER);
    double t1 = wall_seconds();
    if (rc == 0 && sim.events != ops)
        rc = FS_EINTERNAL;
    if (rc == 0)
        finish(out, "loop", pending, ops, t1 - t0, m.last, m.sum);
done:
    fs_sim_release(&sim);
    fs_rng_release(&rng);
    return rc;
}

static const fs_bench_entry_t bench_table[] = {
    {"hold", fs_bench_hold, "event set: pop the earliest event, push one at +Exp(1 s)"},
    {"reschedule", fs_bench_reschedule,
     "event set: hold, plus cancel and re-push one random pending event"},
    {"loop", fs_bench_loop, "run loop: hold driven by fs_sim_run with a scheduling pass"},
};

const fs_bench_entry_t *fs_bench_table(size_t *n)
{
    *n = sizeof bench_table / sizeof bench_table[0];
    return bench_table;
}
