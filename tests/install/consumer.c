/* An out-of-tree program against an installed libfleetsim (tests/install/install.sh):
 * runs a scenario with one override, prints three summary values exactly, and
 * checks the error and cancellation paths.  Exit 0 on success. */
#include <fleetsim.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a policy table that does nothing (only its acceptance is tested) */
static int p_create(const fleetsim_host *h, const char *const *k, const char *const *v, size_t n,
                    void **state, char *err, size_t errlen)
{
    (void)h, (void)k, (void)v, (void)n, (void)err, (void)errlen;
    *state = NULL;
    return 0;
}
static int p_enqueue(void *state, uint32_t handle) { (void)state, (void)handle; return 0; }
static int p_pass(void *state) { (void)state; return 0; }
static size_t p_queued(const void *state) { (void)state; return 0; }

static int cancel_at_second(void *ud, double t, double h, uint64_t done, uint64_t running,
                            uint64_t queued)
{
    int *calls = ud;
    (void)t, (void)h, (void)done, (void)running, (void)queued;
    return ++*calls >= 2;
}

/* A counting allocator (API 1.2): requests served, blocks live. */
typedef struct counts {
    unsigned long long requests;
    long long live;
} counts_t;

static void *counting(void *ud, void *ptr, size_t osize, size_t nsize)
{
    counts_t *c = ud;
    (void)osize;
    if (nsize == 0) {
        c->live--;
        free(ptr);
        return NULL;
    }
    c->requests++;
    if (!ptr)
        c->live++;
    return ptr ? realloc(ptr, nsize) : malloc(nsize);
}

int main(int argc, char **argv)
{
    if (fleetsim_api_version() / 1000 != FLEETSIM_API_VERSION_MAJOR) {
        fprintf(stderr, "API %d, built against %d\n", fleetsim_api_version(), FLEETSIM_API_VERSION);
        return 1;
    }
    fleetsim_scenario *s = NULL;
    int st = argc > 1 ? fleetsim_scenario_load_file(argv[1], &s) : fleetsim_scenario_load_default(&s);
    if (st != FLEETSIM_OK || fleetsim_scenario_set(s, "horizon=2d") != FLEETSIM_OK) {
        fprintf(stderr, "load: %s\n", fleetsim_scenario_error(s));
        return 1;
    }
    /* a bad override is refused with the key named, and the scenario stays usable */
    if (fleetsim_scenario_set(s, "horizon=soon") != FLEETSIM_EINVAL ||
        !strstr(fleetsim_scenario_error(s), "horizon")) {
        fprintf(stderr, "bad override accepted: %s\n", fleetsim_scenario_error(s));
        return 1;
    }
    /* a policy table of another ABI is refused (API 1.1), and nothing changes */
    static const fleetsim_policy future = {.abi = FLEETSIM_POLICY_ABI + 1, .name = "future"};
    if (fleetsim_api_version() >= 1001 &&
        (fleetsim_scenario_set_policy(s, &future) != FLEETSIM_EINVAL ||
         !strstr(fleetsim_scenario_error(s), "ABI"))) {
        fprintf(stderr, "a policy of ABI %d accepted: %s\n", future.abi, fleetsim_scenario_error(s));
        return 1;
    }
    /* a sweep refuses a policy table (it runs configurations on its own threads) */
    static const fleetsim_policy noop = {.abi = FLEETSIM_POLICY_ABI, .name = "noop",
                                         .create = p_create, .enqueue = p_enqueue,
                                         .pass = p_pass, .queued = p_queued};
    if (fleetsim_api_version() >= 1001 &&
        (fleetsim_scenario_set_policy(s, &noop) != FLEETSIM_OK ||
         fleetsim_sweep(s, "never-written", 1, 1) != FLEETSIM_EINVAL ||
         !strstr(fleetsim_scenario_error(s), "fleetsim_run only") ||
         fleetsim_scenario_set_policy(s, NULL) != FLEETSIM_OK)) {
        fprintf(stderr, "a sweep with a policy table: %s\n", fleetsim_scenario_error(s));
        return 1;
    }
    /* overrides as one set (API 1.4): keys valid only together, in either
     * order (one at a time, horizon=1d fails against the default warmup of
     * 1d); a set with a bad key keeps none of its keys */
    if (fleetsim_api_version() >= 1004) {
        fleetsim_scenario *t = NULL;
        const char *both[] = {"horizon=1d", "warmup=0s"}, *bad2[] = {"warmup=2h", "horizon=soon"};
        char *before = NULL;
        int ok = fleetsim_scenario_load_default(&t) == FLEETSIM_OK &&
                 fleetsim_scenario_set(t, "horizon=1d") == FLEETSIM_EINVAL &&
                 fleetsim_scenario_set_many(t, both, 2) == FLEETSIM_OK &&
                 fleetsim_scenario_dump(t) &&
                 (before = malloc(strlen(fleetsim_scenario_dump(t)) + 1)) &&
                 strcpy(before, fleetsim_scenario_dump(t)) &&
                 fleetsim_scenario_set_many(t, bad2, 2) == FLEETSIM_EINVAL &&
                 strstr(fleetsim_scenario_error(t), "horizon") && fleetsim_scenario_dump(t) &&
                 strcmp(before, fleetsim_scenario_dump(t)) == 0 &&
                 fleetsim_scenario_set_many(t, NULL, 0) == FLEETSIM_OK;
        if (!ok)
            fprintf(stderr, "fleetsim_scenario_set_many: %s\n", fleetsim_scenario_error(t));
        free(before);
        fleetsim_scenario_free(t);
        if (!ok)
            return 1;
    }
    fleetsim_result *r = NULL;
    /* the results file: install.sh compares it with the CLI's, byte for byte */
    if ((st = fleetsim_run(s, "api.h5", NULL, NULL, &r)) != FLEETSIM_OK) {
        fprintf(stderr, "run: %s: %s\n", fleetsim_strerror(st), fleetsim_scenario_error(s));
        return 1;
    }
    double u, done, wait;
    if (fleetsim_result_get(r, "utilization", &u) || fleetsim_result_get(r, "jobs_completed", &done) ||
        fleetsim_result_get(r, "wait_mean", &wait) ||
        fleetsim_result_get(r, "no_such_value", &u) != FLEETSIM_EINVAL) {
        fprintf(stderr, "summary values\n");
        return 1;
    }
    printf("fleetsim %s api %d: %zu summary values\n", fleetsim_version(), fleetsim_api_version(),
           fleetsim_result_count(r));
    printf("utilization %.17g\njobs_completed %.17g\nwait_mean %.17g\n", u, done, wait);
    fleetsim_result_free(r);
    /* the run's memory (API 1.2): counted, nothing left live; a caller's
     * allocator sees every allocation of a run */
    fleetsim_memory m;
    counts_t c = {0, 0};
    if (fleetsim_api_version() >= 1002 &&
        (fleetsim_scenario_memory(s, &m) != FLEETSIM_OK || m.allocations == 0 ||
         m.live_blocks != 0 || m.peak_bytes <= 0 ||
         fleetsim_scenario_set_allocator(s, counting, &c) != FLEETSIM_OK ||
         fleetsim_run(s, NULL, NULL, NULL, &r) != FLEETSIM_OK ||
         fleetsim_scenario_memory(s, &m) != FLEETSIM_OK || c.requests != m.allocations ||
         c.live != 0 || m.live_blocks != 0 || fleetsim_scenario_set_allocator(s, NULL, NULL))) {
        fprintf(stderr, "memory: %llu requests, %llu allocations, %lld live\n", c.requests,
                (unsigned long long)m.allocations, c.live);
        return 1;
    }
    if (fleetsim_api_version() >= 1002)
        fleetsim_result_free(r);
    /* cancellation from the progress callback */
    int calls = 0;
    fleetsim_scenario_set(s, "horizon=60d");
    st = fleetsim_run(s, NULL, cancel_at_second, &calls, &r);
    if (st != FLEETSIM_ECANCELED || r != NULL || calls != 2) {
        fprintf(stderr, "cancel: status %d, %d calls\n", st, calls);
        return 1;
    }
    fleetsim_scenario_free(s);
    /* a located error in a YAML string */
    st = fleetsim_scenario_load_string("inline.yaml", "name: x\nhorizon: [1\n", &s);
    if (st != FLEETSIM_EINVAL || strncmp(fleetsim_scenario_error(s), "inline.yaml:", 12) != 0) {
        fprintf(stderr, "bad YAML: %d %s\n", st, fleetsim_scenario_error(s));
        return 1;
    }
    fleetsim_scenario_free(s);
    return 0;
}
