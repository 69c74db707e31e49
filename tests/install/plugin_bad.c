/* Broken plugins, one per macro (tests/install/install.sh builds each): the
 * host must refuse them with a message and exit status 2, or (a crash during
 * the run) the isolated Python run must survive them.  Never an example.
 *   BAD_ABI=N       a table of ABI N (outside what the host loads)
 *   BAD_NO_PASS     no pass function
 *   BAD_WILD        the entry returns a wild pointer
 *   BAD_CREATE      create dereferences NULL
 *   BAD_RUN         a FIFO whose pass dereferences NULL once 1 h has passed */
#include <fleetsim.h>

#include <stdint.h>
#include <stdlib.h>

typedef struct bad {
    const fleetsim_host *host;
    uint32_t q[4096];
    size_t n;
} bad_t;

static int create(const fleetsim_host *host, const char *const *keys, const char *const *values,
                  size_t n, void **state, char *err, size_t errlen)
{
    (void)keys, (void)values, (void)n, (void)err, (void)errlen;
#ifdef BAD_CREATE
    volatile int *nowhere = NULL;
    *nowhere = 1;
#endif
    bad_t *b = calloc(1, sizeof *b);
    if (!b)
        return 1;
    b->host = host;
    *state = b;
    return 0;
}

static void destroy(void *state) { free(state); }

static int enqueue(void *state, uint32_t handle)
{
    bad_t *b = state;
    if (b->n == sizeof b->q / sizeof b->q[0])
        return -1;
    b->q[b->n++] = handle;
    return 0;
}

__attribute__((unused)) static int pass(void *state)
{
    bad_t *b = state;
#ifdef BAD_RUN
    if (b->host->now(b->host->sim) > 3600) {
        volatile int *nowhere = NULL;
        *nowhere = 1;
    }
#endif
    size_t keep = 0;
    for (size_t i = 0; i < b->n; i++)
        if (b->host->start(b->host->sim, b->q[i]) == 0)
            b->q[keep++] = b->q[i];
    b->n = keep;
    return 0;
}

static size_t queued(const void *state) { return ((const bad_t *)state)->n; }

#ifdef BAD_ABI
#define ABI BAD_ABI
#else
#define ABI 1
#endif
#ifdef BAD_NO_PASS
#define PASS NULL
#else
#define PASS pass
#endif

__attribute__((unused)) static const fleetsim_policy policy = {
    .abi = ABI, .name = "bad-plugin", .create = create, .destroy = destroy,
    .enqueue = enqueue, .pass = PASS, .job_end = NULL, .queued = queued};

const fleetsim_policy *fleetsim_policy_entry(void);
const fleetsim_policy *fleetsim_policy_entry(void)
{
#ifdef BAD_WILD
    return (const fleetsim_policy *)(uintptr_t)0x10;
#else
    return &policy;
#endif
}
