/* A preemptive scheduling policy written out of tree as a fleetsim plugin of
 * ABI 2 (docs/library.md): shortest remaining time first.  At every pass all
 * active jobs (running and waiting) are ranked by their work left (ties keep
 * the previous pass's ranking; new jobs after, in arrival order) and whole
 * GPUs are handed out by count in that order, skipping a job that does not
 * fit; a running job left out is preempted when a waiting job let in has
 * strictly less work left, and the waiting jobs let in are started.  This is
 * the rule docs/policies.md gives for `scheduler.queue: srtf` with the oracle
 * run time, and tests/install/install.sh checks that the plugin schedules
 * exactly as the built-in does, job by job.  Option `quantum: SECONDS` (> 0)
 * turns it into round robin instead: first come first served, and a job that
 * has run a quantum goes to the back of the queue when others wait (a timer
 * per start), which install.sh checks against the hand-computed completions. */
#include <fleetsim.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pol {
    const fleetsim_host *host;
    double quantum;         /* > 0: round robin */
    uint32_t *ord;          /* active jobs: the last ranking, then arrivals */
    size_t n, cap;
    struct job_state {      /* by handle */
        uint64_t epoch;     /* starts and ends so far: a timer of an older epoch is stale */
        int running;
    } *js;
    size_t cap_h;
    size_t waiting;
    double *key;            /* pass scratch */
    size_t *ix, *tmp;
    uint8_t *want;
    uint32_t *next;
    size_t cap_s;
} pol_t;

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int create(const fleetsim_host *host, const char *const *keys, const char *const *values,
                  size_t n, void **state, char *err, size_t errlen)
{
    if (host->abi < 2)
        return snprintf(err, errlen, "needs a host of ABI 2 (preempt, timer)"), 1;
    pol_t *p = calloc(1, sizeof *p);
    if (!p)
        return snprintf(err, errlen, "out of memory"), 1;
    p->host = host;
    for (size_t i = 0; i < n; i++) {
        char *end;
        double q = strtod(values[i], &end);
        if (strcmp(keys[i], "quantum") == 0 && end != values[i] && !*end && q > 0) {
            p->quantum = q;
        } else {
            snprintf(err, errlen, "unknown option %s: %s (expected quantum: seconds > 0)", keys[i],
                     values[i]);
            free(p);
            return 1;
        }
    }
    *state = p;
    return 0;
}

static void destroy(void *state)
{
    pol_t *p = state;
    free(p->ord);
    free(p->js);
    free(p->key);
    free(p->ix);
    free(p->tmp);
    free(p->want);
    free(p->next);
    free(p);
}

static int enqueue(void *state, uint32_t h)
{
    pol_t *p = state;
    size_t old = p->cap_h;
    if (grow((void **)&p->ord, &p->cap, p->n + 1, sizeof *p->ord) ||
        grow((void **)&p->js, &p->cap_h, (size_t)h + 1, sizeof *p->js))
        return -1;
    memset(p->js + old, 0, (p->cap_h - old) * sizeof *p->js);   /* new handles: nothing yet */
    p->ord[p->n++] = h;
    p->js[h].running = 0;
    p->waiting++;
    return 0;
}

static void job_end(void *state, uint32_t h)
{
    pol_t *p = state;
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->ord[i] != h)
            p->ord[k++] = p->ord[i];
    p->n = k;
    p->js[h].running = 0;
    p->js[h].epoch++;
}

static int start(pol_t *p, uint32_t h)
{
    int rc = p->host->start(p->host->sim, h);
    if (rc == 1) {
        p->js[h].running = 1;
        p->waiting--;
        uint64_t e = ++p->js[h].epoch;
        if (p->quantum > 0 &&
            p->host->timer(p->host->sim, p->host->now(p->host->sim) + p->quantum,
                           (uint64_t)h << 32 | (e & 0xffffffffu)) < 0)
            return -1;
    }
    return rc < 0 ? rc : 0;
}

static int preempt(pol_t *p, uint32_t h)
{
    int rc = p->host->preempt(p->host->sim, h);
    if (rc == 0) {
        p->js[h].running = 0;
        p->waiting++;
    }
    return rc;
}

/* Round robin: the timer of a job still in the start it was set for sends
 * it to the back of the queue when another job waits. */
static int timer(void *state, uint64_t data)
{
    pol_t *p = state;
    uint32_t h = (uint32_t)(data >> 32);
    if (h >= p->cap_h || !p->js[h].running || (p->js[h].epoch & 0xffffffffu) != (data & 0xffffffffu))
        return 0;   /* stale: the job stopped since */
    if (p->waiting == 0) {   /* nobody to yield to: another quantum */
        uint64_t e = ++p->js[h].epoch;
        return p->host->timer(p->host->sim, p->host->now(p->host->sim) + p->quantum,
                              (uint64_t)h << 32 | (e & 0xffffffffu)) < 0 ? -1 : 0;
    }
    int rc = preempt(p, h);
    if (rc)
        return rc;
    size_t k = 0;   /* to the back */
    for (size_t i = 0; i < p->n; i++)
        if (p->ord[i] != h)
            p->ord[k++] = p->ord[i];
    p->ord[k] = h;
    return 0;
}

/* The pass's arrays, n entries each. */
static int scratch(pol_t *p, size_t n)
{
    if (n <= p->cap_s)
        return 0;
    size_t c = p->cap_s ? p->cap_s : 64;
    while (c < n)
        c *= 2;
    void *a;
    if (!(a = realloc(p->key, c * sizeof *p->key)))
        return -1;
    p->key = a;
    if (!(a = realloc(p->ix, c * sizeof *p->ix)))
        return -1;
    p->ix = a;
    if (!(a = realloc(p->tmp, c * sizeof *p->tmp)))
        return -1;
    p->tmp = a;
    if (!(a = realloc(p->want, c * sizeof *p->want)))
        return -1;
    p->want = a;
    if (!(a = realloc(p->next, c * sizeof *p->next)))
        return -1;
    p->next = a;
    p->cap_s = c;
    return 0;
}

static int pass_rr(pol_t *p)
{
    for (size_t i = 0; i < p->n && p->waiting; i++) {
        uint32_t h = p->ord[i];
        if (!p->js[h].running) {
            int rc = start(p, h);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int pass(void *state)
{
    pol_t *p = state;
    if (p->quantum > 0)
        return pass_rr(p);
    size_t n = p->n;
    if (scratch(p, n))
        return -1;
    fleetsim_job_info info;
    for (size_t i = 0; i < n; i++) {
        if (p->host->job(p->host->sim, p->ord[i], &info) != 0)
            return -1;
        p->key[i] = info.remaining_s;
        p->ix[i] = i;
    }
    /* stable merge sort by work left: ties keep the previous ranking */
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                p->tmp[k++] = p->key[p->ix[j]] < p->key[p->ix[i]] ? p->ix[j++] : p->ix[i++];
            while (i < mid)
                p->tmp[k++] = p->ix[i++];
            while (j < hi)
                p->tmp[k++] = p->ix[j++];
        }
        memcpy(p->ix, p->tmp, n * sizeof *p->ix);
    }
    uint64_t left = p->host->gpus_up(p->host->sim);
    for (size_t r = 0; r < n; r++) {
        size_t i = p->ix[r];
        if (p->host->job(p->host->sim, p->ord[i], &info) != 0)
            return -1;
        p->want[i] = info.gpus <= left;
        if (p->want[i])
            left -= info.gpus;
    }
    /* the best waiting job let in: running jobs with more work left give way */
    double best = 0;
    int any = 0;
    for (size_t r = 0; r < n && !any; r++) {
        size_t i = p->ix[r];
        if (p->want[i] && !p->js[p->ord[i]].running) {
            best = p->key[i];
            any = 1;
        }
    }
    for (size_t r = 0; r < n && any; r++) {
        size_t i = p->ix[r];
        if (!p->want[i] && p->js[p->ord[i]].running && p->key[i] > best) {
            int rc = preempt(p, p->ord[i]);
            if (rc)
                return rc;
        }
    }
    for (size_t r = 0; r < n; r++) {
        size_t i = p->ix[r];
        if (p->want[i] && !p->js[p->ord[i]].running) {
            int rc = start(p, p->ord[i]);
            if (rc)
                return rc;
        }
    }
    for (size_t r = 0; r < n; r++)
        p->next[r] = p->ord[p->ix[r]];
    memcpy(p->ord, p->next, n * sizeof *p->ord);
    return 0;
}

static size_t queued(const void *state) { return ((const pol_t *)state)->waiting; }

static const fleetsim_policy policy = {
    .abi = 2, .name = "srtf-plugin", .create = create, .destroy = destroy,
    .enqueue = enqueue, .pass = pass, .job_end = job_end, .queued = queued, .timer = timer};

const fleetsim_policy *fleetsim_policy_entry(void);
const fleetsim_policy *fleetsim_policy_entry(void) { return &policy; }
