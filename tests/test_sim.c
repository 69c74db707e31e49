/*
 * Tests of the run loop (sim/fs_sim): the same-instant rule, the order of
 * priority classes, the merge of the arrival stream, scheduling passes that
 * schedule at `now`, `until`, stop, fail, interrupt, two contexts in one
 * process, out of memory, and the aborts on scheduling into the past.
 *
 * The models log what they see as text ("T:Kid", K = E event, A arrival,
 * P pass) so that a failure shows the whole trajectory.
 */
#define _POSIX_C_SOURCE 200809L /* fork, pipe, dup2 */

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <gsl/gsl_randist.h>

#include "fs_test_util.h"
#include "sim/fs_alloc.h"
#include "sim/fs_error.h"
#include "sim/fs_rng.h"
#include "sim/fs_sim.h"

/* ---- a scripted model ---- */

enum {
    T_PLAIN = 1,      /* log only */
    T_SPAWN_NOW = 2,  /* schedule event id=data at now, priority = entity */
    T_STOP = 3,       /* fs_sim_stop */
    T_FAIL = 4,       /* fs_sim_fail(data), then fs_sim_fail(FS_EINVAL) */
    T_INTERRUPT = 5,  /* raise the interrupt flag */
    T_PAST = 6,       /* schedule type 7, entity 42, at now - 50 */
    T_FLOOD = 8       /* schedule 17 events with the allocator failing */
};

typedef struct smodel {
    char log[4096];
    const fs_time_t *src;      /* arrival times */
    size_t n_src, i_src;
    uint32_t arrival_spawn;    /* arrival i == this: schedule a completion at now */
    int pass_spawns;           /* passes that still schedule an event at now */
    volatile sig_atomic_t *flag;
    int flood_rc;              /* what the failing schedule returned */
} smodel_t;

static void logf_(smodel_t *m, fs_time_t t, char kind, uint32_t id)
{
    size_t n = strlen(m->log);
    if (kind == 'P')
        snprintf(m->log + n, sizeof m->log - n, "%s%lld:P", n ? " " : "", (long long)t);
    else
        snprintf(m->log + n, sizeof m->log - n, "%s%lld:%c%u", n ? " " : "", (long long)t, kind,
                 (unsigned)id);
}

static fs_event_t mk(fs_time_t t, uint8_t prio, uint32_t type, uint32_t id)
{
    fs_event_t ev = {.time = t, .type = type, .entity = id, .data = 0, .priority = prio};
    return ev;
}

static void s_on_event(fs_sim_t *sim, const fs_event_t *ev, void *vm)
{
    smodel_t *m = vm;
    logf_(m, ev->time, 'E', ev->entity);
    switch (ev->type) {
    case T_SPAWN_NOW: {
        fs_event_t c = mk(sim->now, (uint8_t)ev->data, T_PLAIN, (uint32_t)(ev->data >> 8));
        assert_int_equal(fs_sim_schedule(sim, &c, NULL), 0);
        break;
    }
    case T_STOP:
        fs_sim_stop(sim);
        break;
    case T_FAIL:
        fs_sim_fail(sim, (int)(int64_t)ev->data);
        fs_sim_fail(sim, FS_EINVAL); /* the first error sticks */
        break;
    case T_INTERRUPT:
        *m->flag = 1;
        break;
    case T_PAST: {
        fs_event_t p = {.time = sim->now - 50, .type = 7, .entity = 42, .priority = 10};
        fs_sim_schedule(sim, &p, NULL);
        break;
    }
    case T_FLOOD:
        fs_alloc_fail_after(1);
        for (uint32_t i = 0; i < 17; i++) {
            fs_event_t f = mk(sim->now + 1 + i, FS_PRIO_TIMER, T_PLAIN, 1000 + i);
            int rc = fs_sim_schedule(sim, &f, NULL);
            if (rc) {
                m->flood_rc = rc;
                break;
            }
        }
        fs_alloc_fail_after(0);
        break;
    default:
        break;
    }
}

static void s_on_instant_end(fs_sim_t *sim, void *vm)
{
    smodel_t *m = vm;
    logf_(m, sim->now, 'P', 0);
    if (m->pass_spawns > 0) {
        m->pass_spawns--;
        fs_event_t e = mk(sim->now, FS_PRIO_TIMER, T_PLAIN, 200);
        assert_int_equal(fs_sim_schedule(sim, &e, NULL), 0);
    }
}

static fs_time_t s_source_peek(void *vm)
{
    smodel_t *m = vm;
    return m->i_src < m->n_src ? m->src[m->i_src] : FS_TIME_NEVER;
}

static void s_source_take(fs_sim_t *sim, void *vm)
{
    smodel_t *m = vm;
    uint32_t i = (uint32_t)m->i_src++;
    assert_int_equal(sim->now, m->src[i]);
    logf_(m, sim->now, 'A', i);
    if (i == m->arrival_spawn) {
        fs_event_t c = mk(sim->now, FS_PRIO_COMPLETION, T_PLAIN, 100);
        assert_int_equal(fs_sim_schedule(sim, &c, NULL), 0);
    }
}

static const fs_model_ops_t s_ops = {
    .on_event = s_on_event,
    .on_instant_end = s_on_instant_end,
    .source_peek = s_source_peek,
    .source_take = s_source_take,
};

static void sched(fs_sim_t *sim, fs_event_t ev)
{
    assert_int_equal(fs_sim_schedule(sim, &ev, NULL), 0);
}

static void smodel_init(smodel_t *m, const fs_time_t *src, size_t n_src)
{
    memset(m, 0, sizeof *m);
    m->src = src;
    m->n_src = n_src;
    m->arrival_spawn = UINT32_MAX;
}

/* ---- the same-instant rule and the priority classes ---- */

static void test_same_instant_rule(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static const fs_time_t src[] = {50, 100, 100, 200, 300};
    smodel_t m;
    smodel_init(&m, src, 5);
    fs_sim_t sim;
    fs_sim_init(&sim, &s_ops, &m);
    sched(&sim, mk(100, FS_PRIO_SAMPLE, T_PLAIN, 1));
    sched(&sim, mk(100, FS_PRIO_ARRIVAL, T_PLAIN, 2));
    sched(&sim, mk(100, FS_PRIO_COMPLETION, T_PLAIN, 3));
    sched(&sim, mk(100, FS_PRIO_TIMER, T_PLAIN, 4));
    sched(&sim, mk(100, FS_PRIO_FAILURE, T_PLAIN, 5));
    sched(&sim, mk(100, FS_PRIO_REPAIR, T_PLAIN, 6));
    sched(&sim, mk(100, FS_PRIO_COMPLETION, T_PLAIN, 7));
    sched(&sim, mk(50, FS_PRIO_TIMER, T_PLAIN, 8));
    sched(&sim, mk(200, FS_PRIO_COMPLETION, T_PLAIN, 9));
    sched(&sim, mk(200, FS_PRIO_SAMPLE, T_PLAIN, 10));
    assert_int_equal(fs_sim_run(&sim, FS_TIME_NEVER), 0);
    /* per instant: completions, repairs, failures, timers, heap events of
     * arrival priority, then the source's arrivals, then samples, and one
     * pass after all of them */
    assert_string_equal(m.log,
                        "50:E8 50:A0 50:P "
                        "100:E3 100:E7 100:E6 100:E5 100:E4 100:E2 100:A1 100:A2 100:E1 100:P "
                        "200:E9 200:A3 200:E10 200:P "
                        "300:A4 300:P");
    assert_int_equal(sim.events, 10);
    assert_int_equal(sim.arrivals, 5);
    assert_int_equal(sim.passes, 4);
    assert_int_equal(sim.now, 300);
    assert_int_equal(fs_evq_size(&sim.evq), 0);
    fs_sim_release(&sim);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_changes_at_now_are_applied_before_the_pass(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static const fs_time_t src[] = {10, 10, 30};
    smodel_t m;
    smodel_init(&m, src, 3);
    m.arrival_spawn = 0; /* arrival 0 finishes a job at once (completion at now) */
    m.pass_spawns = 1;   /* the first pass schedules an event at now */
    fs_sim_t sim;
    fs_sim_init(&sim, &s_ops, &m);
    /* an event at 10 that schedules a completion (id 5) at now */
    fs_event_t sp = mk(10, FS_PRIO_TIMER, T_SPAWN_NOW, 4);
    sp.data = (5u << 8) | FS_PRIO_COMPLETION;
    sched(&sim, sp);
    assert_int_equal(fs_sim_run(&sim, FS_TIME_NEVER), 0);
    /* E4 spawns E5 (completion, at now: before the arrivals); A0 spawns
     * E100 (a completion at now: applied before A1 and the pass); the
     * first pass schedules E200 at now: applied, then a second pass */
    assert_string_equal(m.log, "10:E4 10:E5 10:A0 10:E100 10:A1 10:P 10:E200 10:P 30:A2 30:P");
    assert_int_equal(sim.passes, 3);
    assert_int_equal(sim.events, 4);
    assert_int_equal(sim.arrivals, 3);
    fs_sim_release(&sim);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_no_pass_callback(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static const fs_model_ops_t ops = {.on_event = s_on_event}; /* no pass, no source */
    smodel_t m;
    smodel_init(&m, NULL, 0);
    fs_sim_t sim;
    fs_sim_init(&sim, &ops, &m);
    sched(&sim, mk(3, FS_PRIO_TIMER, T_PLAIN, 1));
    sched(&sim, mk(3, FS_PRIO_TIMER, T_PLAIN, 2));
    sched(&sim, mk(9, FS_PRIO_TIMER, T_PLAIN, 3));
    assert_int_equal(fs_sim_run(&sim, FS_TIME_NEVER), 0);
    assert_string_equal(m.log, "3:E1 3:E2 9:E3");
    assert_int_equal(sim.passes, 0);
    fs_sim_release(&sim);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- until, stop, fail, interrupt ---- */

static void test_until(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static const fs_time_t src[] = {25};
    smodel_t m;
    smodel_init(&m, src, 1);
    fs_sim_t sim;
    fs_sim_init(&sim, &s_ops, &m);
    sched(&sim, mk(10, FS_PRIO_TIMER, T_PLAIN, 1));
    sched(&sim, mk(20, FS_PRIO_TIMER, T_PLAIN, 2));
    sched(&sim, mk(30, FS_PRIO_TIMER, T_PLAIN, 3));
    assert_int_equal(fs_sim_run(&sim, 5), 0); /* nothing due by 5 */
    assert_string_equal(m.log, "");
    assert_int_equal(sim.now, 0);
    assert_int_equal(fs_sim_run(&sim, 20), 0); /* 20 itself is included */
    assert_string_equal(m.log, "10:E1 10:P 20:E2 20:P");
    assert_int_equal(sim.now, 20);
    assert_int_equal(fs_evq_size(&sim.evq), 1);
    assert_int_equal(fs_sim_run(&sim, 29), 0);
    assert_string_equal(m.log, "10:E1 10:P 20:E2 20:P 25:A0 25:P");
    assert_int_equal(fs_sim_run(&sim, FS_TIME_NEVER), 0);
    assert_string_equal(m.log, "10:E1 10:P 20:E2 20:P 25:A0 25:P 30:E3 30:P");
    assert_int_equal(fs_sim_run(&sim, FS_TIME_NEVER), 0); /* nothing left */
    assert_int_equal(sim.now, 30);
    fs_sim_release(&sim);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_stop(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    smodel_t m;
    smodel_init(&m, NULL, 0);
    fs_sim_t sim;
    fs_sim_init(&sim, &s_ops, &m);
    sched(&sim, mk(10, FS_PRIO_TIMER, T_STOP, 1));
    sched(&sim, mk(10, FS_PRIO_TIMER, T_PLAIN, 2));
    sched(&sim, mk(20, FS_PRIO_TIMER, T_PLAIN, 3));
    assert_int_equal(fs_sim_run(&sim, FS_TIME_NEVER), 0);
    /* returns right after the event: no more events, no pass */
    assert_string_equal(m.log, "10:E1");
    assert_int_equal(fs_evq_size(&sim.evq), 2);
    assert_int_equal(sim.passes, 0);
    /* the request stays until the driver clears it */
    assert_int_equal(fs_sim_run(&sim, FS_TIME_NEVER), 0);
    assert_string_equal(m.log, "10:E1");
    sim.stop_requested = 0;
    assert_int_equal(fs_sim_run(&sim, FS_TIME_NEVER), 0);
    assert_string_equal(m.log, "10:E1 10:E2 10:P 20:E3 20:P");
    fs_sim_release(&sim);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_fail(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    smodel_t m;
    smodel_init(&m, NULL, 0);
    fs_sim_t sim;
    fs_sim_init(&sim, &s_ops, &m);
    sched(&sim, mk(5, FS_PRIO_TIMER, T_PLAIN, 1));
    fs_event_t f = mk(10, FS_PRIO_TIMER, T_FAIL, 2);
    f.data = (uint64_t)(int64_t)FS_EIO;
    sched(&sim, f);
    sched(&sim, mk(10, FS_PRIO_TIMER, T_PLAIN, 3));
    assert_int_equal(fs_sim_run(&sim, FS_TIME_NEVER), FS_EIO);
    assert_string_equal(m.log, "5:E1 5:P 10:E2");
    assert_int_equal(sim.status, FS_EIO); /* not FS_EINVAL: the first sticks */
    assert_int_equal(fs_sim_run(&sim, FS_TIME_NEVER), FS_EIO);
    assert_string_equal(m.log, "5:E1 5:P 10:E2");
    fs_sim_release(&sim);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_interrupt(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    volatile sig_atomic_t flag = 0;
    smodel_t m;
    smodel_init(&m, NULL, 0);
    m.flag = &flag;
    fs_sim_t sim;
    fs_sim_init(&sim, &s_ops, &m);
    sim.interrupt = &flag;
    sched(&sim, mk(10, FS_PRIO_TIMER, T_INTERRUPT, 1));
    sched(&sim, mk(10, FS_PRIO_TIMER, T_PLAIN, 2));
    sched(&sim, mk(20, FS_PRIO_TIMER, T_PLAIN, 3));
    assert_int_equal(fs_sim_run(&sim, FS_TIME_NEVER), FS_EINTR);
    /* the instant in progress is finished; the next one is not started */
    assert_string_equal(m.log, "10:E1 10:E2 10:P");
    assert_int_equal(sim.now, 10);
    assert_int_equal(fs_evq_size(&sim.evq), 1);
    assert_int_equal(sim.status, 0); /* an interrupt is not a model error */
    flag = 0;
    assert_int_equal(fs_sim_run(&sim, FS_TIME_NEVER), 0);
    assert_string_equal(m.log, "10:E1 10:E2 10:P 20:E3 20:P");
    fs_sim_release(&sim);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_schedule_enomem_stops_the_run(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    smodel_t m;
    smodel_init(&m, NULL, 0);
    fs_sim_t sim;
    fs_sim_init(&sim, &s_ops, &m);
    sched(&sim, mk(10, FS_PRIO_TIMER, T_FLOOD, 1));
    sched(&sim, mk(10, FS_PRIO_TIMER, T_PLAIN, 2));
    /* the pool holds 16 records: the 17th pending event needs memory */
    assert_int_equal(fs_sim_run(&sim, FS_TIME_NEVER), FS_ENOMEM);
    assert_int_equal(m.flood_rc, FS_ENOMEM);
    assert_int_equal(sim.status, FS_ENOMEM);
    assert_string_equal(m.log, "10:E1");
    assert_int_equal(fs_evq_size(&sim.evq), 16); /* E2 and 15 flood events */
    fs_sim_release(&sim);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- two contexts in one process ---- */

/* A random model: Poisson arrivals from the source, each starting a job
 * whose completion is scheduled (and sometimes cancelled and moved), timers
 * that sometimes land at `now`, and passes that sometimes schedule at now.
 * Everything it sees goes into a hash. */
typedef struct rmodel {
    fs_rng_t rng;
    fs_time_t next_arrival;
    uint32_t arrivals, max_arrivals, next_id;
    fs_event_handle_t h[64];
    fs_time_t last_pass;
    uint64_t hash;
} rmodel_t;

static void r_mix(rmodel_t *m, char kind, fs_time_t t, uint64_t x)
{
    uint64_t v = m->hash ^ ((uint64_t)(unsigned char)kind << 56) ^ (uint64_t)t ^ (x << 20);
    v *= UINT64_C(0x9e3779b97f4a7c15);
    m->hash = v ^ (v >> 29);
}

static fs_time_t r_exp(rmodel_t *m, double mean_us)
{
    return (fs_time_t)gsl_ran_exponential(fs_rng_gsl(&m->rng), mean_us);
}

static void r_on_event(fs_sim_t *sim, const fs_event_t *ev, void *vm)
{
    rmodel_t *m = vm;
    r_mix(m, 'E', ev->time, ((uint64_t)ev->entity << 8) | ev->priority);
    if (fs_rng_uniform(&m->rng) < 0.3) {
        /* a timer, at now one time in four */
        fs_time_t dt = fs_rng_uniform(&m->rng) < 0.25 ? 0 : r_exp(m, 500);
        fs_event_t t = mk(sim->now + dt, FS_PRIO_TIMER, 1, m->next_id++);
        assert_int_equal(fs_sim_schedule(sim, &t, NULL), 0);
    }
}

static void r_on_instant_end(fs_sim_t *sim, void *vm)
{
    rmodel_t *m = vm;
    r_mix(m, 'P', sim->now, 0);
    if (m->last_pass != sim->now && fs_rng_uniform(&m->rng) < 0.1) {
        fs_event_t t = mk(sim->now, FS_PRIO_SAMPLE, 2, m->next_id++);
        assert_int_equal(fs_sim_schedule(sim, &t, NULL), 0);
    }
    m->last_pass = sim->now;
}

static fs_time_t r_source_peek(void *vm)
{
    rmodel_t *m = vm;
    return m->arrivals < m->max_arrivals ? m->next_arrival : FS_TIME_NEVER;
}

static void r_source_take(fs_sim_t *sim, void *vm)
{
    rmodel_t *m = vm;
    r_mix(m, 'A', sim->now, m->arrivals);
    m->arrivals++;
    m->next_arrival += r_exp(m, 1000) / 10 * 10; /* coarse: arrivals tie */
    uint32_t id = m->next_id++;
    fs_event_t c = mk(sim->now + r_exp(m, 3000), FS_PRIO_COMPLETION, 3, id);
    assert_int_equal(fs_sim_schedule(sim, &c, &m->h[id % 64]), 0);
    if (fs_rng_uniform(&m->rng) < 0.2) {
        /* a rate change: move a random job's completion */
        uint32_t k = (uint32_t)gsl_rng_uniform_int(fs_rng_gsl(&m->rng), 64);
        if (fs_sim_cancel(sim, m->h[k])) {
            fs_event_t mv = mk(sim->now + r_exp(m, 2000), FS_PRIO_COMPLETION, 4, k);
            assert_int_equal(fs_sim_schedule(sim, &mv, &m->h[k]), 0);
        }
    }
}

static const fs_model_ops_t r_ops = {
    .on_event = r_on_event,
    .on_instant_end = r_on_instant_end,
    .source_peek = r_source_peek,
    .source_take = r_source_take,
};

static void rmodel_init(rmodel_t *m, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    assert_int_equal(fs_rng_init(&m->rng, seed, 0, FS_RNG_PURPOSE_USER, 0), 0);
    m->max_arrivals = 5000;
    m->last_pass = -1;
}

static void test_two_contexts_interleaved(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    uint64_t alone[2];
    uint64_t counts[2][3];
    /* each run alone */
    for (int k = 0; k < 2; k++) {
        rmodel_t m;
        rmodel_init(&m, 100 + (uint64_t)k);
        fs_sim_t sim;
        fs_sim_init(&sim, &r_ops, &m);
        assert_int_equal(fs_sim_run(&sim, FS_TIME_NEVER), 0);
        alone[k] = m.hash;
        counts[k][0] = sim.events;
        counts[k][1] = sim.arrivals;
        counts[k][2] = sim.passes;
        assert_int_equal(sim.arrivals, 5000);
        assert_true(sim.events > 5000);
        fs_sim_release(&sim);
        fs_rng_release(&m.rng);
    }
    assert_int_not_equal(alone[0], alone[1]);
    /* both at once, advanced in alternating slices of simulated time */
    rmodel_t ma, mb;
    rmodel_init(&ma, 100);
    rmodel_init(&mb, 101);
    fs_sim_t a, b;
    fs_sim_init(&a, &r_ops, &ma);
    fs_sim_init(&b, &r_ops, &mb);
    for (fs_time_t until = 0; fs_evq_size(&a.evq) || fs_evq_size(&b.evq) ||
                              ma.arrivals < ma.max_arrivals || mb.arrivals < mb.max_arrivals;
         until += 777) {
        assert_int_equal(fs_sim_run(&a, until), 0);
        assert_int_equal(fs_sim_run(&b, until + 333), 0);
    }
    assert_int_equal(ma.hash, alone[0]);
    assert_int_equal(mb.hash, alone[1]);
    assert_int_equal(a.events, counts[0][0]);
    assert_int_equal(a.arrivals, counts[0][1]);
    assert_int_equal(a.passes, counts[0][2]);
    assert_int_equal(b.events, counts[1][0]);
    assert_int_equal(b.passes, counts[1][2]);
    fs_sim_release(&a);
    fs_sim_release(&b);
    fs_rng_release(&ma.rng);
    fs_rng_release(&mb.rng);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- broken invariants abort (in a child process) ---- */

/* Runs fn in a forked child with stderr captured; returns the child's wait
 * status and its stderr text (in buf). */
static int run_in_child(void (*fn)(void), char *buf, size_t cap)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        dup2(p[1], 2);
        fn();
        _exit(0); /* not reached when fn aborts */
    }
    close(p[1]);
    size_t n = 0;
    ssize_t k;
    while (n + 1 < cap && (k = read(p[0], buf + n, cap - n - 1)) > 0)
        n += (size_t)k;
    buf[n] = '\0';
    close(p[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static void child_schedule_in_past(void)
{
    smodel_t m;
    smodel_init(&m, NULL, 0);
    fs_sim_t sim;
    fs_sim_init(&sim, &s_ops, &m);
    fs_event_t ev = mk(100, FS_PRIO_TIMER, T_PAST, 1);
    fs_sim_schedule(&sim, &ev, NULL);
    fs_sim_run(&sim, FS_TIME_NEVER);
}

static void test_schedule_in_past_aborts(void **st)
{
    (void)st;
    char err[2048];
    int status = run_in_child(child_schedule_in_past, err, sizeof err);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
    /* names the time, the event type and the entity */
    assert_non_null(strstr(err, "fleetsim: BUG at "));
    assert_non_null(strstr(err, "(t=100 us)"));
    assert_non_null(strstr(err, "event type 7 for entity 42 scheduled at 50 us, before now"));
}

static void child_source_goes_back(void)
{
    static const fs_time_t src[] = {10, 5};
    smodel_t m;
    smodel_init(&m, src, 2);
    fs_sim_t sim;
    fs_sim_init(&sim, &s_ops, &m);
    fs_sim_run(&sim, FS_TIME_NEVER);
}

static void test_source_going_back_aborts(void **st)
{
    (void)st;
    char err[2048];
    int status = run_in_child(child_source_goes_back, err, sizeof err);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
    assert_non_null(strstr(err, "(t=10 us)"));
    assert_non_null(strstr(err, "source produced an arrival at 5 us, before now"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_instant_rule),
        cmocka_unit_test(test_changes_at_now_are_applied_before_the_pass),
        cmocka_unit_test(test_no_pass_callback),
        cmocka_unit_test(test_until),
        cmocka_unit_test(test_stop),
        cmocka_unit_test(test_fail),
        cmocka_unit_test(test_interrupt),
        cmocka_unit_test(test_schedule_enomem_stops_the_run),
        cmocka_unit_test(test_two_contexts_interleaved),
        cmocka_unit_test(test_schedule_in_past_aborts),
        cmocka_unit_test(test_source_going_back_aborts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
