/*
 * fs_sim: the run context and the event loop.
 *
 * A model plugs in through fs_model_ops_t (a table of functions plus a
 * model pointer, as in Redis ae and ROSS); the engine includes no other
 * folder.  The context holds the clock, the event set and the counters of
 * one run; two contexts can coexist in one process (no globals).
 *
 * Same-instant rule.  At one instant t the loop first applies every state
 * change due at t -- heap events in (priority, sequence) order, with the
 * arrivals of the external source merged in at priority FS_PRIO_ARRIVAL
 * (after heap events of the same priority) -- and only then calls
 * on_instant_end once (the scheduling pass).  If that pass schedules more
 * events at t, they are applied and the pass runs again.  The priorities
 * below put completions before failures before arrivals before sampling.
 *
 * Arrivals come from a sorted stream (the model's source_peek/source_take),
 * merged with the heap rather than pushed into it: a million-job trace costs
 * no heap memory.
 *
 * Scheduling an event before now is a bug: the engine aborts, naming the
 * time, the event type and the entity.
 */
#ifndef FS_SIM_H
#define FS_SIM_H

#include <signal.h>
#include <stdint.h>

#include "fs_evq.h"
#include "fs_time.h"

enum fs_event_priority {
    FS_PRIO_COMPLETION = 10,  /* a job finishes: frees capacity first */
    FS_PRIO_REPAIR     = 20,  /* a component comes back */
    FS_PRIO_FAILURE    = 30,  /* a component fails */
    FS_PRIO_TIMER      = 40,  /* model timers (checkpoint, backoff, ...) */
    FS_PRIO_ARRIVAL    = 50,  /* a job is submitted (source stream) */
    FS_PRIO_SAMPLE     = 90   /* timeline sample: sees the settled state */
};

typedef struct fs_sim fs_sim_t;

typedef struct fs_model_ops {
    /* A heap event fired. */
    void (*on_event)(fs_sim_t *sim, const fs_event_t *ev, void *model);
    /* Every state change at the current instant is applied: run one
     * scheduling pass.  May be NULL. */
    void (*on_instant_end)(fs_sim_t *sim, void *model);
    /* Time of the next arrival of the external stream, or FS_TIME_NEVER.
     * May be NULL (no stream).  Must be >= the last time taken. */
    fs_time_t (*source_peek)(void *model);
    /* Consume and handle the arrival that source_peek announced. */
    void (*source_take)(fs_sim_t *sim, void *model);
} fs_model_ops_t;

struct fs_sim {
    fs_time_t now;              /* current simulated time, us */
    fs_evq_t evq;
    const fs_model_ops_t *ops;
    void *model;
    int status;                 /* sticky: first error (FS_E*) a model reported */
    int stop_requested;         /* set by fs_sim_stop: the loop returns */
    const volatile sig_atomic_t *interrupt; /* optional external flag (SIGINT) */
    uint64_t events;            /* heap events handled */
    uint64_t arrivals;          /* source arrivals handled */
    uint64_t passes;            /* scheduling passes run */
};

void fs_sim_init(fs_sim_t *sim, const fs_model_ops_t *ops, void *model);
void fs_sim_release(fs_sim_t *sim);

/* Schedules an event (time >= now, else abort).  Returns 0, FS_ENOMEM or
 * FS_ELIMIT (more than FS_EVQ_MAX_PENDING pending), also recorded in
 * sim->status (and the loop stops). */
int fs_sim_schedule(fs_sim_t *sim, const fs_event_t *ev, fs_event_handle_t *h);
int fs_sim_cancel(fs_sim_t *sim, fs_event_handle_t h);

/* Runs until nothing is pending, or the next instant is after `until`, or a
 * model called fs_sim_stop / fs_sim_fail, or *interrupt became non-zero.
 * Returns 0, FS_EINTR when interrupted, or the model's error. */
int fs_sim_run(fs_sim_t *sim, fs_time_t until);

/* A model asks the loop to return after the current event.  The request
 * stays (a later fs_sim_run returns at once) until the driver clears
 * sim->stop_requested. */
static inline void fs_sim_stop(fs_sim_t *sim) { sim->stop_requested = 1; }
/* A model reports an error (first one sticks) and stops the loop. */
void fs_sim_fail(fs_sim_t *sim, int code);

/* Broken invariant: prints file, line, simulated time and message, aborts. */
_Noreturn void fs_bug(const char *file, int line, const fs_sim_t *sim, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define FS_BUG(sim, ...) fs_bug(__FILE__, __LINE__, (sim), __VA_ARGS__)

#endif
