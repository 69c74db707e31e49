/* The host's side of the plugin ABI 2 contract, checked from a plugin
 * (docs/plugins.md): preempting a job that is not running, starting one
 * that is not waiting and a NaN timer are refused (< 0) and change nothing;
 * a timer set in the past fires at the current time.  Otherwise first come
 * first served.  A broken promise makes pass return an error, which stops
 * the run (tests/install/install.sh expects exit 0 and all jobs done). */
#include <fleetsim.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct st {
    const fleetsim_host *h;
    uint32_t *q;
    size_t n, cap;
    int bad;                /* a promise the host broke */
    double timer_due;       /* when the past-time timer must fire (< 0: none set) */
    int timer_fired;
} st_t;

static int create(const fleetsim_host *h, const char *const *k, const char *const *v, size_t n,
                  void **state, char *err, size_t errlen)
{
    (void)k;
    (void)v;
    if (n || h->abi < 2)
        return snprintf(err, errlen, "takes no options and needs ABI 2"), 1;
    /* the host's reads work in create, also when the scenario's check
     * creates the policy before any model exists (they answer 0 then) */
    if (h->now(h->sim) < 0 || h->free_gpus(h->sim) > h->gpus_up(h->sim))
        return snprintf(err, errlen, "host reads in create: now %g, free %llu > up %llu",
                        h->now(h->sim), (unsigned long long)h->free_gpus(h->sim),
                        (unsigned long long)h->gpus_up(h->sim)), 1;
    st_t *s = calloc(1, sizeof *s);
    if (!s)
        return snprintf(err, errlen, "out of memory"), 1;
    s->h = h;
    s->timer_due = -1;
    *state = s;
    return 0;
}

static void destroy(void *state)
{
    st_t *s = state;
    free(s->q);
    free(s);
}

static int enqueue(void *state, uint32_t handle)
{
    st_t *s = state;
    if (s->n == s->cap) {
        size_t c = s->cap ? 2 * s->cap : 64;
        uint32_t *q = realloc(s->q, c * sizeof *q);
        if (!q)
            return -1;
        s->q = q;
        s->cap = c;
    }
    s->q[s->n++] = handle;
    return 0;
}

static int timer(void *state, uint64_t data)
{
    st_t *s = state;
    if (data != 7 || s->h->now(s->h->sim) != s->timer_due)
        s->bad = 1;
    s->timer_fired = 1;
    return 0;
}

static int pass(void *state)
{
    st_t *s = state;
    void *sim = s->h->sim;
    if (s->timer_due < 0) {   /* once: a timer 10 s in the past fires now */
        s->timer_due = s->h->now(sim);
        if (s->h->timer(sim, s->timer_due - 10, 7) != 0 || s->h->timer(sim, NAN, 8) >= 0)
            s->bad = 1;
    }
    size_t keep = 0;
    for (size_t i = 0; i < s->n; i++) {
        uint32_t j = s->q[i];
        if (s->h->preempt(sim, j) >= 0)   /* waiting, not running */
            s->bad = 1;
        int rc = s->h->start(sim, j);
        if (rc < 0)
            return rc;
        if (rc == 1 && s->h->start(sim, j) >= 0)   /* running now, not waiting */
            s->bad = 1;
        if (rc == 0)
            s->q[keep++] = j;
    }
    s->n = keep;
    return s->bad ? -1 : 0;
}

static void job_end(void *state, uint32_t handle)
{
    st_t *s = state;
    if (s->h->preempt(s->h->sim, handle) >= 0)   /* it stopped: nothing to preempt */
        s->bad = 1;
    if (!s->timer_fired && s->timer_due >= 0 && s->h->now(s->h->sim) > s->timer_due)
        s->bad = 1;   /* the past timer should have fired at once */
}

static size_t queued(const void *state) { return ((const st_t *)state)->n; }

static const fleetsim_policy policy = {
    .abi = FLEETSIM_POLICY_ABI, .name = "contract-plugin", .create = create, .destroy = destroy,
    .enqueue = enqueue, .pass = pass, .job_end = job_end, .queued = queued, .timer = timer};

const fleetsim_policy *fleetsim_policy_entry(void);
const fleetsim_policy *fleetsim_policy_entry(void) { return &policy; }
