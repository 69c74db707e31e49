/* A scheduling policy that chooses the GPU type of every start, as a fleetsim
 * plugin of ABI 3 (docs/plugins.md): first come first served (best effort),
 * and each job goes to the pools of the GPU model on which it runs fastest
 * (host->speed: cluster.speed's factor for its class), through host->start_in
 * (scheduler.placement picks the nodes) or host->place (the plugin does).
 * Options:
 *   prefer: fastest | slowest   the GPU type to choose (default fastest)
 *   wait: true | false          true: a job waits for its chosen type; false
 *                               (default): it takes the next type in that
 *                               order when the chosen one is full
 *   nodes: placement | last     placement (default): start_in; last: place,
 *                               on the highest-numbered node of the type
 *                               with room (host->node_free tells which)
 * tests/install/install.sh builds it from the installed fleetsim.h and checks
 * every job's pool and run time against a hand computation. */
#include <fleetsim.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct speedy {
    const fleetsim_host *host;
    int slowest, wait, last;
    uint32_t *nodes;        /* place: the nodes of one type, last first */
    size_t cap_nodes;
    uint32_t *q;            /* waiting handles, in arrival order */
    size_t n, cap;
    uint32_t *order;        /* pools, best type first (scratch of a pass) */
    double *speed;          /* per pool: the job's speed there */
    uint32_t n_pools;
} speedy_t;

static int create(const fleetsim_host *host, const char *const *keys, const char *const *values,
                  size_t n, void **state, char *err, size_t errlen)
{
    if (host->abi < 3)
        return snprintf(err, errlen, "needs a host of ABI 3 (speed, pools, start_in)"), 1;
    speedy_t *s = calloc(1, sizeof *s);
    if (!s)
        return snprintf(err, errlen, "out of memory"), 1;
    s->host = host;
    for (size_t i = 0; i < n; i++) {
        const char *k = keys[i], *v = values[i];
        if (strcmp(k, "prefer") == 0 && (strcmp(v, "fastest") == 0 || strcmp(v, "slowest") == 0)) {
            s->slowest = strcmp(v, "slowest") == 0;
        } else if (strcmp(k, "wait") == 0 && (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)) {
            s->wait = strcmp(v, "true") == 0;
        } else if (strcmp(k, "nodes") == 0 && (strcmp(v, "placement") == 0 || strcmp(v, "last") == 0)) {
            s->last = strcmp(v, "last") == 0;
        } else {
            free(s);
            return snprintf(err, errlen, "unknown option %s: %s (prefer: fastest|slowest, "
                            "wait: true|false, nodes: placement|last)", k, v), 1;
        }
    }
    *state = s;
    return 0;
}

static void destroy(void *state)
{
    speedy_t *s = state;
    free(s->q);
    free(s->order);
    free(s->speed);
    free(s->nodes);
    free(s);
}

/* place: job h on the highest-numbered node with room among the pools
 * pools[0 .. n-1] (one GPU type).  1, 0 or < 0. */
static int place_last(speedy_t *s, uint32_t h, const uint32_t *pools, uint32_t n)
{
    const fleetsim_host *host = s->host;
    size_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        fleetsim_pool_info info;
        if (host->pool(host->sim, pools[i], &info) != 0)
            return -1;
        if (k + info.nodes > s->cap_nodes) {
            size_t cap = 2 * (k + info.nodes);
            uint32_t *v = realloc(s->nodes, cap * sizeof *v);
            if (!v)
                return -1;
            s->nodes = v;
            s->cap_nodes = cap;
        }
        for (uint32_t d = info.nodes; d-- > 0;)
            if (host->node_free(host->sim, info.first_node + d) > 0)
                s->nodes[k++] = info.first_node + d;
    }
    /* highest id first across the pools */
    for (size_t a = 1; a < k; a++)
        for (size_t b = a; b > 0 && s->nodes[b - 1] < s->nodes[b]; b--) {
            uint32_t t = s->nodes[b];
            s->nodes[b] = s->nodes[b - 1];
            s->nodes[b - 1] = t;
        }
    return k ? host->place(host->sim, h, s->nodes, k) : 0;
}

static int enqueue(void *state, uint32_t handle)
{
    speedy_t *s = state;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        uint32_t *q = realloc(s->q, cap * sizeof *q);
        if (!q)
            return -1;
        s->q = q;
        s->cap = cap;
    }
    s->q[s->n++] = handle;
    return 0;
}

/* Starts job h on its best type (then, without wait, the next ones): 1, 0, < 0. */
static int start_best(speedy_t *s, uint32_t h)
{
    const fleetsim_host *host = s->host;
    for (uint32_t p = 0; p < s->n_pools; p++) {
        fleetsim_pool_info info;
        if (host->pool(host->sim, p, &info) != 0)
            return -1;
        s->speed[p] = host->speed(host->sim, h, info.gpu);
        if (s->speed[p] <= 0)   /* every pool's model has a speed */
            return -1;
        /* insertion sort of the pools by speed (stable: pool order on ties) */
        uint32_t k = p;
        while (k > 0 && (s->slowest ? s->speed[s->order[k - 1]] > s->speed[p]
                                    : s->speed[s->order[k - 1]] < s->speed[p])) {
            s->order[k] = s->order[k - 1];
            k--;
        }
        s->order[k] = p;
    }
    /* the pools of one speed together, best speed first */
    for (uint32_t a = 0; a < s->n_pools;) {
        uint32_t b = a + 1;
        while (b < s->n_pools && s->speed[s->order[b]] == s->speed[s->order[a]])
            b++;
        int rc = s->last ? place_last(s, h, s->order + a, b - a)
                         : host->start_in(host->sim, h, s->order + a, b - a);
        if (rc != 0 || s->wait)
            return rc;
        a = b;
    }
    return 0;
}

static int pass(void *state)
{
    speedy_t *s = state;
    const fleetsim_host *host = s->host;
    uint32_t np = host->pools(host->sim);
    if (np != s->n_pools) {
        free(s->order);
        free(s->speed);
        s->order = malloc(np * sizeof *s->order);
        s->speed = malloc(np * sizeof *s->speed);
        if (!s->order || !s->speed)
            return -1;
        s->n_pools = np;
    }
    size_t keep = 0;
    for (size_t i = 0; i < s->n; i++) {
        /* a model no pool has: no speed (the host's promise) */
        if (host->speed(host->sim, s->q[i], "no-such-gpu-model") >= 0)
            return -1;
        int rc = start_best(s, s->q[i]);
        if (rc < 0)
            return rc;
        if (rc == 0)
            s->q[keep++] = s->q[i];
    }
    s->n = keep;
    return 0;
}

static size_t queued(const void *state) { return ((const speedy_t *)state)->n; }

static const fleetsim_policy policy = {
    .abi = 3, .name = "speed-plugin", .create = create, .destroy = destroy,
    .enqueue = enqueue, .pass = pass, .job_end = NULL, .queued = queued};

const fleetsim_policy *fleetsim_policy_entry(void);
const fleetsim_policy *fleetsim_policy_entry(void) { return &policy; }
