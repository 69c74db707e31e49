/*
 * FIFO with gang allocation, strict or best-effort (Kueue's StrictFIFO and
 * BestEffortFIFO).
 *
 * Why classes: best-effort FIFO must start, in arrival order, every queued
 * job that fits.  Scanning the whole queue at every pass is O(queue) per
 * pass.  Instead the queue is split into classes of identical shape (GPU
 * count, pool set): all jobs of a class fit or not together, so only class
 * heads are ever tested.  A pass repeatedly starts the earliest-arrived head
 * among the classes that fit.  This starts exactly the jobs a full in-order
 * scan would: capacity only shrinks during a pass, so a job that did not fit
 * when the scan passed it cannot fit later in the same pass.  Cost per
 * started job: O(classes).  A shape is (GPU count, milli-GPU share, pool
 * set): a fractional request and a whole GPU are different shapes.  Strict FIFO tests only the earliest head and
 * stops at the first that does not fit.
 */
#include "fs_policy.h"
#include "../sim/fs_alloc.h"
#include "fs_shape.h"

#include <string.h>

typedef struct fifo_class {
    uint32_t *ring;         /* slots in arrival order */
    size_t cap, head, len;
} fifo_class_t;

typedef struct fifo {
    int strict;
    fs_shapemap_t shapes;   /* shape -> class index */
    fifo_class_t *cls;      /* cls[i]: the queue of class i */
    size_t cap_cls;
    size_t queued;
} fifo_t;

/* Class of a job shape, created on first use.  Returns its index or -1. */
static long class_of(fifo_t *f, uint32_t gpus, uint32_t milli, uint64_t res, int32_t tp)
{
    /* room for a new class first, so that the map never gets ahead */
    if (fs_grow((void **)&f->cls, &f->cap_cls, f->shapes.n + 1, sizeof *f->cls))
        return -1;
    int added;
    long c = fs_shapemap_get(&f->shapes, gpus, milli, res, tp, &added);
    if (c >= 0 && added)
        memset(&f->cls[c], 0, sizeof f->cls[c]);
    return c;
}

static int ring_push(fifo_class_t *c, uint32_t slot)
{
    if (c->len == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 8;
        uint32_t *r = fs_malloc(ncap * sizeof *r);
        if (!r)
            return FS_ENOMEM;
        for (size_t i = 0; i < c->len; i++)
            r[i] = c->ring[(c->head + i) % c->cap];
        fs_free(c->ring);
        c->ring = r;
        c->cap = ncap;
        c->head = 0;
    }
    c->ring[(c->head + c->len) % c->cap] = slot;
    c->len++;
    return 0;
}

/* A job requeued after a failure keeps its place: the ring stays in
 * admission order.  New arrivals append and a requeued job, older than
 * everything queued in its class, goes to the front, both O(1); anything
 * else (not seen) walks back from the tail. */
static int ring_insert(fifo_class_t *c, fs_model_t *m, uint32_t slot)
{
    uint64_t seq = fs_model_job(m, slot)->seq;
    int front = c->len > 0 && seq < fs_model_job(m, c->ring[c->head])->seq;
    int rc = ring_push(c, slot);
    if (rc || c->len == 1)
        return rc;
    if (front) {    /* move the appended slot to just before the head */
        c->len--;
        c->head = (c->head + c->cap - 1) % c->cap;
        c->ring[c->head] = slot;
        c->len++;
        return 0;
    }
    for (size_t i = c->len - 1; i > 0; i--) {
        size_t a = (c->head + i - 1) % c->cap, b = (c->head + i) % c->cap;
        if (fs_model_job(m, c->ring[a])->seq < seq)
            break;
        c->ring[b] = c->ring[a];
        c->ring[a] = slot;
    }
    return 0;
}

static int fifo_create(fs_model_t *m, const fs_sched_cfg_t *cfg, void **state, fs_error_t *err)
{
    fifo_t *f = fs_calloc(1, sizeof *f);
    if (!f || fs_shapemap_init(&f->shapes)) {
        fs_free(f);
        return fs_error_set(err, FS_ENOMEM, "fifo: out of memory");
    }
    f->strict = cfg->mode == FS_FIFO_STRICT;
    *state = f;
    return 0;
}

static void fifo_destroy(void *state)
{
    fifo_t *f = state;
    if (!f)
        return;
    for (size_t i = 0; i < f->shapes.n; i++)
        fs_free(f->cls[i].ring);
    fs_free(f->cls);
    fs_shapemap_release(&f->shapes);
    fs_free(f);
}

static int fifo_enqueue(void *state, fs_model_t *m, uint32_t slot)
{
    fifo_t *f = state;
    fs_jobrt_t *j = fs_model_job(m, slot);
    long c = class_of(f, j->job.gpus, j->job.gpu_milli, fs_jobq_pod_res(&j->job), j->type_pools);
    if (c < 0 || ring_insert(&f->cls[c], m, slot))
        return FS_ENOMEM;
    f->queued++;
    return 0;
}

static int fifo_pass(void *state, fs_model_t *m)
{
    fifo_t *f = state;
    while (f->queued > 0) {
        long best = -1;
        uint64_t best_seq = UINT64_MAX;
        for (size_t i = 0; i < f->shapes.n; i++) {
            fifo_class_t *c = &f->cls[i];
            if (c->len == 0)
                continue;
            uint32_t slot = c->ring[c->head];
            uint64_t seq = fs_model_job(m, slot)->seq;
            if (seq >= best_seq)
                continue;
            if (f->strict || fs_model_fits(m, slot)) {
                best = (long)i;
                best_seq = seq;
            }
        }
        if (best < 0)
            return 0;
        fifo_class_t *c = &f->cls[best];
        int rc = fs_model_start(m, c->ring[c->head]);
        if (rc < 0)
            return rc;
        if (rc == 0)    /* strict: the earliest job does not fit */
            return 0;
        c->head = (c->head + 1) % c->cap;
        c->len--;
        f->queued--;
    }
    return 0;
}

static size_t fifo_queued(const void *state)
{
    return ((const fifo_t *)state)->queued;
}

/* FIFO keeps no running set: nothing to forget (the model requeues the
 * job through enqueue, which puts it back in its place). */
static void fifo_job_interrupted(void *state, fs_model_t *m, uint32_t slot)
{
    (void)state;
    (void)m;
    (void)slot;
}

/* A queued job leaves its class's ring (its class: the shape's, as at
 * enqueue); the jobs behind it move up one. */
static int fifo_withdraw(void *state, fs_model_t *m, uint32_t slot)
{
    fifo_t *f = state;
    const fs_jobrt_t *j = fs_model_job(m, slot);
    long ci = class_of(f, j->job.gpus, j->job.gpu_milli, fs_jobq_pod_res(&j->job), j->type_pools);
    if (ci < 0)
        return FS_ENOMEM;
    fifo_class_t *c = &f->cls[ci];
    size_t i = 0;
    while (i < c->len && c->ring[(c->head + i) % c->cap] != slot)
        i++;
    if (i == c->len)
        return FS_EINVAL;
    for (; i + 1 < c->len; i++)
        c->ring[(c->head + i) % c->cap] = c->ring[(c->head + i + 1) % c->cap];
    c->len--;
    f->queued--;
    return 0;
}

const fs_policy_ops_t fs_policy_fifo = {
    .name = "fifo",
    .create = fifo_create,
    .destroy = fifo_destroy,
    .enqueue = fifo_enqueue,
    .pass = fifo_pass,
    .queued = fifo_queued,
    .job_interrupted = fifo_job_interrupted,
    .withdraw = fifo_withdraw,
};
