#include "fs_sim.h"
#include "fs_error.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fs_sim_init(fs_sim_t *sim, const fs_model_ops_t *ops, void *model)
{
    memset(sim, 0, sizeof *sim);
    fs_evq_init(&sim->evq);
    sim->ops = ops;
    sim->model = model;
}

void fs_sim_release(fs_sim_t *sim)
{
    fs_evq_release(&sim->evq);
}

_Noreturn void fs_bug(const char *file, int line, const fs_sim_t *sim, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fleetsim: BUG at %s:%d", file, line);
    if (sim)
        fprintf(stderr, " (t=%" PRId64 " us)", sim->now);
    fputs(": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

void fs_sim_fail(fs_sim_t *sim, int code)
{
    if (sim->status == 0)
        sim->status = code;
    sim->stop_requested = 1;
}

int fs_sim_schedule(fs_sim_t *sim, const fs_event_t *ev, fs_event_handle_t *h)
{
    if (ev->time < sim->now)
        FS_BUG(sim, "event type %" PRIu32 " for entity %" PRIu32
                    " scheduled at %" PRId64 " us, before now",
               ev->type, ev->entity, ev->time);
    int rc = fs_evq_push(&sim->evq, ev, h);
    if (rc)
        fs_sim_fail(sim, rc);
    return rc;
}

int fs_sim_cancel(fs_sim_t *sim, fs_event_handle_t h)
{
    return fs_evq_cancel(&sim->evq, h);
}

/* Which comes next, a heap event or the source's arrival?  Returns the time
 * (FS_TIME_NEVER if neither) and sets *from_source. */
static fs_time_t next_due(fs_sim_t *sim, int *from_source)
{
    const fs_event_t *e = fs_evq_peek(&sim->evq);
    fs_time_t ta = sim->ops->source_peek ? sim->ops->source_peek(sim->model) : FS_TIME_NEVER;
    if (!e) {
        *from_source = ta != FS_TIME_NEVER;
        return ta;
    }
    /* arrivals have priority FS_PRIO_ARRIVAL and come after heap events of
     * equal time and equal priority */
    if (ta < e->time || (ta == e->time && e->priority > FS_PRIO_ARRIVAL)) {
        *from_source = 1;
        return ta;
    }
    *from_source = 0;
    return e->time;
}

int fs_sim_run(fs_sim_t *sim, fs_time_t until)
{
    int from_source;
    while (!sim->stop_requested) {
        fs_time_t t = next_due(sim, &from_source);
        if (t == FS_TIME_NEVER || t > until)
            break;
        if (sim->interrupt && *sim->interrupt)
            return FS_EINTR;
        if (t < sim->now)
            FS_BUG(sim, "source produced an arrival at %" PRId64 " us, before now", t);
        sim->now = t;
        /* apply every state change due at this instant */
        do {
            if (from_source) {
                sim->ops->source_take(sim, sim->model);
                sim->arrivals++;
            } else {
                fs_event_t ev;
                fs_evq_pop(&sim->evq, &ev);
                sim->ops->on_event(sim, &ev, sim->model);
                sim->events++;
            }
            if (sim->stop_requested)
                return sim->status;
            t = next_due(sim, &from_source);
            if (t == sim->now)
                continue;
            /* instant over: one scheduling pass, which may add events now */
            if (sim->ops->on_instant_end) {
                sim->ops->on_instant_end(sim, sim->model);
                sim->passes++;
                if (sim->stop_requested)
                    return sim->status;
                t = next_due(sim, &from_source);
            }
        } while (t == sim->now);
    }
    return sim->status;
}
