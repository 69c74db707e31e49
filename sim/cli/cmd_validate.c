#include "fs_cli.h"
#include "../../models/fs_policy.h"
#include "../../scenarios/fs_scenario.h"
#include "../../traces/fs_trace.h"
#include "../fs_alloc.h"

#include <stdlib.h>
#include <string.h>

/* ---- jobs no queue or quota can ever admit (the policy's probe hook) ---------- */

enum { MAX_REASONS = 8, NAMED = 5 };

typedef struct never {
    char why[320];
    uint64_t count;
    uint64_t ids[NAMED];
    size_t n_ids;
} never_t;

typedef struct never_set {
    never_t r[MAX_REASONS];
    size_t n;
    uint64_t other;     /* jobs with a reason beyond the first MAX_REASONS */
} never_set_t;

static void never_add(never_set_t *ns, const char *why, int has_id, uint64_t id, uint64_t count)
{
    never_t *r = NULL;
    for (size_t i = 0; i < ns->n && !r; i++)
        if (strcmp(ns->r[i].why, why) == 0)
            r = &ns->r[i];
    if (!r && ns->n < MAX_REASONS) {
        r = &ns->r[ns->n++];
        memset(r, 0, sizeof *r);
        snprintf(r->why, sizeof r->why, "%s", why);
    }
    if (!r) {
        ns->other += count;
        return;
    }
    r->count += count;
    if (has_id && r->n_ids < NAMED)
        r->ids[r->n_ids++] = id;
}

/* Warns (stderr) about jobs of the workload that the scheduler can never
 * admit, by the probe hook of its policy (fs_policy.h): for Kueue a tenant
 * no LocalQueue, CQ or default_queue covers, or a request above what the
 * CQ could ever hold in some resource it quotas (GPUs, a pod's CPU and
 * memory, the job's pods); for Volcano a request above the capability of the
 * tenant's queue.  A trace is read once for it (up to the horizon, as a run
 * replays it); a synthetic workload is judged by its tenants and GPU-count
 * mix.  Returns 0, or an error status (the trace cannot be read, out of
 * memory). */
static int warn_never_admitted(const char *scenario, const fs_config_t *cfg)
{
    const fs_policy_ops_t *ops = fs_policy_select(&cfg->scheduler);
    if (!ops || !ops->probe_create)
        return 0;
    void *probe = NULL;
    fs_error_t err;
    fs_error_clear(&err);
    int rc = ops->probe_create(cfg, &probe, &err);
    if (rc) {
        fprintf(stderr, "%s\n", err.msg);
        return fs_error_exit_status(rc);
    }
    never_set_t ns;
    memset(&ns, 0, sizeof ns);
    char why[320];
    if (cfg->workload.kind == FS_WORKLOAD_SYNTHETIC) {
        const fs_synth_cfg_t *sc = &cfg->workload.synth;
        size_t nt = sc->n_tenants ? sc->n_tenants : 1;
        for (size_t t = 0; t < nt; t++)
            for (size_t i = 0; i < sc->n_sizes; i++) {
                fs_job_t j;     /* a job of the mix, as the generator makes it */
                fs_job_init(&j);
                j.gpus = sc->sizes[i];
                if (sc->mig) {
                    j.mig = sc->mig;
                    j.gpu_milli = sc->mig_milli;
                }
                if (!ops->probe(probe, sc->n_tenants ? sc->tenant_names[t] : NULL, &j, why,
                               sizeof why)) {
                    char what[400];
                    snprintf(what, sizeof what, "%u-GPU jobs%s%s%s: %s", sc->sizes[i],
                             sc->n_tenants ? " of tenant '" : "",
                             sc->n_tenants ? sc->tenant_names[t] : "", sc->n_tenants ? "'" : "",
                             why);
                    never_add(&ns, what, 0, 0, 1);
                }
            }
    } else {
        fs_source_t *src = NULL;
        enum { BATCH = 4096 };
        fs_job_t *batch = fs_malloc(BATCH * sizeof *batch);
        rc = batch ? fs_trace_open(cfg->workload.trace.format ? cfg->workload.trace.format : "native",
                                   cfg->workload.trace.path, &cfg->workload.trace.opts, &src, &err)
                   : fs_error_set(&err, FS_ENOMEM, "out of memory");
        size_t n = 0;
        int end = 0;
        while (!rc && !end && (rc = fs_source_next(src, batch, BATCH, &n, &err)) == 0 && n > 0) {
            for (size_t i = 0; i < n; i++) {
                const fs_job_t *j = &batch[i];
                if (j->submit >= cfg->horizon) {
                    end = 1;
                    break;
                }
                const char *tn = j->tenant >= 0 ? fs_source_tenant_name(src, j->tenant) : NULL;
                if (!ops->probe(probe, tn, j, why, sizeof why)) {
                    never_add(&ns, why, 1, j->id, 1);
                }
            }
        }
        if (src)
            fs_source_destroy(src);
        fs_free(batch);
        if (rc) {
            ops->probe_destroy(probe);
            fprintf(stderr, "%s\n", err.msg);
            return fs_error_exit_status(rc);
        }
    }
    ops->probe_destroy(probe);
    for (size_t i = 0; i < ns.n; i++) {
        const never_t *r = &ns.r[i];
        if (cfg->workload.kind == FS_WORKLOAD_SYNTHETIC) {
            fprintf(stderr, "%s: warning: no queue or quota can ever admit %s (a run stops when they "
                    "are all that is left)\n", scenario, r->why);
            continue;
        }
        char ids[NAMED * 24 + 8];
        size_t len = 0;
        for (size_t k = 0; k < r->n_ids; k++)
            len += (size_t)snprintf(ids + len, sizeof ids - len, "%s%llu", k ? ", " : "",
                                    (unsigned long long)r->ids[k]);
        if (r->count > r->n_ids)
            snprintf(ids + len, sizeof ids - len, ", ...");
        fprintf(stderr, "%s: warning: no queue or quota can ever admit %llu job%s of the trace "
                "(%s): %s\n", scenario, (unsigned long long)r->count, r->count == 1 ? "" : "s",
                ids, r->why);
    }
    if (ns.other)
        fprintf(stderr, "%s: warning: %llu more jobs can never be admitted, for other reasons\n",
                scenario, (unsigned long long)ns.other);
    return 0;
}

int fs_cmd_validate(int argc, char **argv)
{
    const char *scenario = NULL;
    const char **sets = fs_calloc((size_t)argc + 1, sizeof *sets);
    size_t n_sets = 0;
    int dump = 0;
    if (!sets)
        return 1;
    fs_cli_getopt_t g;
    fs_cli_getopt_init(&g, "validate", argc, argv, fs_cli_find("validate")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        const char *a = g.opt ? g.opt : g.arg, *v = g.arg;
        if (id == 'h') {
            fs_cli_print_usage(stdout, fs_cli_find("validate"));
            fs_free(sets);
            return 0;
        } else if (id == FS_OPT_KEYS) {
            fs_scenario_print_keys(stdout);
            fs_free(sets);
            return 0;
        } else if (id == FS_OPT_DUMP) {
            dump = 1;
        } else if (id == FS_OPT_SET) {
            if (!v || !strchr(v, '=')) {
                fs_free(sets);
                return fs_cli_usage_error("validate", "--set needs KEY=VALUE");
            }
            sets[n_sets++] = v;
        } else if (id == FS_CLI_BAD) {
            fs_free(sets);
            return g.status;
        } else if (!scenario) {
            scenario = a;
        } else {
            fs_free(sets);
            return fs_cli_usage_error("validate", "only one scenario file may be given");
        }
    }
    if (!scenario) {
        fs_free(sets);
        return fs_cli_usage_error("validate", "which scenario file? (fleetsim validate FILE)");
    }
    fs_config_t cfg;
    fs_error_t err;
    fs_error_clear(&err);
    int rc = fs_scenario_load_file(scenario, sets, n_sets, &cfg, &err);
    fs_free(sets);
    if (rc) {
        fprintf(stderr, "%s\n", err.msg);
        return fs_error_exit_status(rc);
    }
    if (dump) {
        char *text = fs_scenario_dump(&cfg);
        if (!text) {
            fs_config_release(&cfg);
            fprintf(stderr, "fleetsim validate: out of memory\n");
            return 1;
        }
        fputs(text, stdout);
        fs_free(text);
    } else {
        if ((rc = warn_never_admitted(scenario, &cfg)) != 0) {
            fs_config_release(&cfg);
            return rc;
        }
        printf("%s: ok\n", scenario);
    }
    char loss[512];   /* valid, but a preemptive policy would throw work away */
    if (fs_policy_work_loss(&cfg, loss, sizeof loss))
        fprintf(stderr, "fleetsim validate: warning: %s\n", loss);
    fs_config_release(&cfg);
    return 0;
}
