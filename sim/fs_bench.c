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

typedef struct stamp {
    double wall, cpu; /* s */
} stamp_t;

static stamp_t now_stamp(void)
{
    struct timespec w, c;
    clock_gettime(CLOCK_MONOTONIC, &w);
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c) != 0)
        c.tv_sec = c.tv_nsec = 0;
    stamp_t s = {(double)w.tv_sec + (double)w.tv_nsec * 1e-9,
                 (double)c.tv_sec + (double)c.tv_nsec * 1e-9};
    return s;
}

/*
 * The exponential increments: Marsaglia and Tsang's ziggurat ("The
 * ziggurat method for generating random variables", J. Stat. Softw. 5(8),
 * 2000, REXP), fed by 32-bit draws of the keyed stream.  Why not
 * gsl_ran_exponential: it costs a log1p and two library calls, about 15 ns
 * here, which would be a third of the 40 ns budget of a hold and would
 * hide the event set behind the RNG; the ziggurat takes one 32-bit draw, a
 * table lookup and a multiply 98.9% of the time.
 */
void fs_bench_exp_init(fs_bench_exp_t *z, double mean)
{
    const double m1 = 4294967296.0; /* 2^32 */
    double de = 7.697117470131487, te = de, ve = 3.949659822581572e-3;
    double q = ve / exp(-de);
    z->mean = mean;
    z->k[0] = (uint32_t)((de / q) * m1);
    z->k[1] = 0;
    z->w[0] = q / m1;
    z->w[255] = de / m1;
    z->f[0] = 1.0;
    z->f[255] = exp(-de);
    for (int i = 254; i >= 1; i--) {
        de = -log(ve / de + exp(-de));
        z->k[i + 1] = (uint32_t)((de / te) * m1);
        te = de;
        z->f[i] = exp(-de);
        z->w[i] = de / m1;
    }
}

/* The wedges and the tail (1.1% of draws). */
static double exp_slow(const fs_bench_exp_t *z, gsl_rng *g, uint32_t j)
{
    for (;;) {
        unsigned i = j & 255;
        if (i == 0)
            return 7.697117470131487 - log(gsl_rng_uniform_pos(g)); /* the tail */
        double x = j * z->w[i];
        if (z->f[i] + gsl_rng_uniform(g) * (z->f[i - 1] - z->f[i]) < exp(-x))
            return x;
        j = (uint32_t)gsl_rng_get(g);
        if (j < z->k[j & 255])
            return j * z->w[j & 255];
    }
}

double fs_bench_exp_draw(const fs_bench_exp_t *z, gsl_rng *g)
{
    uint32_t j = (uint32_t)gsl_rng_get(g);
    unsigned i = j & 255;
    double x = j < z->k[i] ? j * z->w[i] : exp_slow(z, g, j);
    return x * z->mean;
}

/* Exponential increment, mean 1 s, in whole microseconds (rounded down). */
static inline fs_time_t increment(const fs_bench_exp_t *z, gsl_rng *g)
{
    return (fs_time_t)fs_bench_exp_draw(z, g);
}

static inline uint64_t mix(uint64_t h, fs_time_t t, uint32_t entity)
{
    h ^= (uint64_t)t + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
    return (h ^ entity) * UINT64_C(0x100000001b3);
}

static int check_args(size_t pending, uint64_t ops)
{
    if (pending == 0 || pending > FS_EVQ_MAX_PENDING || ops == 0)
        return FS_EINVAL;
    return 0;
}

static void finish(fs_bench_result_t *out, const char *name, size_t pending, uint64_t ops,
                   stamp_t t0, stamp_t t1, fs_time_t end, uint64_t checksum)
{
    double seconds = t1.wall - t0.wall;
    out->name = name;
    out->pending = pending;
    out->ops = ops;
    out->seconds = seconds;
    out->ns_per_op = seconds * 1e9 / (double)ops;
    out->ops_per_s = seconds > 0 ? (double)ops / seconds : 0;
    out->cpu_seconds = t1.cpu - t0.cpu;
    out->cpu_ns_per_op = out->cpu_seconds * 1e9 / (double)ops;
    out->end_time = end;
    out->checksum = checksum;
}

/* Fills q with one event per entity 0..pending-1 at increment() from 0;
 * records handles if h is non-NULL. */
static int fill(fs_evq_t *q, size_t pending, const fs_bench_exp_t *z, gsl_rng *g,
                fs_event_handle_t *h)
{
    for (size_t i = 0; i < pending; i++) {
        fs_event_t ev = {.time = increment(z, g), .entity = (uint32_t)i,
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
    fs_bench_exp_t z;
    fs_bench_exp_init(&z, BENCH_MEAN_US);
    fs_evq_t q;
    fs_evq_init(&q);
    if ((rc = fill(&q, pending, &z, g, NULL)))
        goto done;

    uint64_t sum = 0;
    fs_time_t last = 0;
    fs_event_t ev = {0};
    stamp_t t0 = now_stamp();
    for (uint64_t i = 0; i < ops; i++) {
        fs_evq_pop(&q, &ev);
        sum = mix(sum, ev.time, ev.entity);
        last = ev.time;
        ev.time += increment(&z, g);
        if ((rc = fs_evq_push(&q, &ev, NULL)))
            goto done;
    }
    stamp_t t1 = now_stamp();
    finish(out, "hold", pending, ops, t0, t1, last, sum);
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
    fs_bench_exp_t z;
    fs_bench_exp_init(&z, BENCH_MEAN_US);
    fs_evq_t q;
    fs_evq_init(&q);
    if ((rc = fill(&q, pending, &z, g, h)))
        goto done;

    uint64_t sum = 0;
    fs_time_t last = 0;
    fs_event_t ev = {0};
    stamp_t t0 = now_stamp();
    for (uint64_t i = 0; i < ops; i++) {
        fs_evq_pop(&q, &ev);
        sum = mix(sum, ev.time, ev.entity);
        fs_time_t now = last = ev.time;
        ev.time = now + increment(&z, g);
        if ((rc = fs_evq_push(&q, &ev, &h[ev.entity])))
            goto done;
        /* every entity has exactly one pending event: move a random one */
        uint32_t r = (uint32_t)gsl_rng_uniform_int(g, pending);
        if (fs_evq_cancel(&q, h[r]) != 1) {
            rc = FS_EINTERNAL;
            goto done;
        }
        fs_event_t mv = {.time = now + increment(&z, g), .entity = r, .priority = FS_PRIO_TIMER};
        if ((rc = fs_evq_push(&q, &mv, &h[r])))
            goto done;
    }
    stamp_t t1 = now_stamp();
    finish(out, "reschedule", pending, ops, t0, t1, last, sum);
done:
    fs_evq_release(&q);
    fs_rng_release(&rng);
    fs_free(h);
    return rc;
}

/* The hold model as an fs_sim model. */
typedef struct loop_model {
    const fs_bench_exp_t *z;
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
    next.time += increment(m->z, m->g);
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
    fs_bench_exp_t z;
    fs_bench_exp_init(&z, BENCH_MEAN_US);
    loop_model_t m = {.z = &z, .g = fs_rng_gsl(&rng), .remaining = ops};
    fs_sim_t sim;
    fs_sim_init(&sim, &loop_ops, &m);
    if ((rc = fill(&sim.evq, pending, &z, m.g, NULL)))
        goto done;
    stamp_t t0 = now_stamp();
    rc = fs_sim_run(&sim, FS_TIME_NEVER);
    stamp_t t1 = now_stamp();
    if (rc == 0 && sim.events != ops)
        rc = FS_EINTERNAL;
    if (rc == 0)
        finish(out, "loop", pending, ops, t0, t1, m.last, m.sum);
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
