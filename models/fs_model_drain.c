/*
 * A drain that cannot end (until: drain): jobs wait with nothing that could
 * start them, or are still active drain_limit after the last arrival.  The
 * message names the first jobs and why.  Prefix fs_drain_.
 */
#include "fs_model_int.h"

/* ---- a run that cannot go on ------------------------------------------------- */

/* Why queued job j does not start with nothing running: it does not fit
 * the GPUs of its pools in service, or it fits and the policy holds it. */
static void stuck_reason(const fs_model_t *m, const fs_jobrt_t *j, uint32_t slot, char *buf,
                         size_t n)
{
    uint64_t up = 0, total = 0;
    uint32_t p;
    FOR_POOLS(m, j->type_pools, p) {
        up += m->cluster.pools[p].gpus_up;
        total += m->cluster.pools[p].gpus_total;
    }
    if (!fs_model_fits(m, slot))
        snprintf(buf, n, "job %llu needs %u GPU%s; its pool%s %llu of %llu GPUs in service, "
                 "and nothing pending can bring more back",
                 (unsigned long long)j->job.id, j->job.gpus, j->job.gpus == 1 ? "" : "s",
                 j->type_pools < 0 && m->cluster.n_pools == 1 ? " has" : "s have",
                 (unsigned long long)up, (unsigned long long)total);
    else {
        char why[320];
        if (m->pol->why_waiting && m->pol->why_waiting(m->pol_state, m, slot, why, sizeof why))
            snprintf(buf, n, "job %llu fits the GPUs in service, but policy '%s' never starts it: "
                     "%s", (unsigned long long)j->job.id, m->pol->name, why);
        else
            snprintf(buf, n, "job %llu fits the GPUs in service, but policy '%s' does not start "
                     "it (a queue or quota that can never admit it)",
                     (unsigned long long)j->job.id, m->pol->name);
    }
}

/* The run cannot end as a drain should (docs/scenario.md, until): jobs
 * wait with nothing running and no pending event that could start them
 * (capped == 0), or jobs are still active drain_limit after the last
 * arrival (capped == 1).  Names the first jobs by admission order and the
 * reason; the run stops with FS_ESTUCK (exit status 1). */
void fs_drain_cannot_go_on(fs_model_t *m, int capped)
{
    uint32_t first[NAMED_JOBS];
    size_t k = 0;
    uint64_t n = 0;
    for (size_t i = 0; i < m->js.n_slots; i++) {
        const fs_jobrt_t *j = &m->js.slots[i];
        if (j->state == FS_JOBRT_FREE || (!capped && j->state != FS_JOBRT_QUEUED))
            continue;
        n++;
        /* keep the NAMED_JOBS earliest admitted, in order */
        size_t at = k < NAMED_JOBS ? k : NAMED_JOBS;
        while (at > 0 && m->js.slots[first[at - 1]].seq > j->seq)
            at--;
        if (at >= NAMED_JOBS)
            continue;
        if (k < NAMED_JOBS)
            k++;
        memmove(first + at + 1, first + at, (k - 1 - at) * sizeof *first);
        first[at] = (uint32_t)i;
    }
    char ids[NAMED_JOBS * 24 + 8], why[400];
    size_t len = 0;
    for (size_t i = 0; i < k; i++)
        len += (size_t)snprintf(ids + len, sizeof ids - len, "%s%llu", i ? ", " : "",
                                (unsigned long long)m->js.slots[first[i]].job.id);
    if ((uint64_t)k < n)
        snprintf(ids + len, sizeof ids - len, ", ...");
    char d[40];
    double lim = fs_time_to_s(m->cfg->drain_limit);
    if (capped) {
        snprintf(d, sizeof d, "%.6g d", lim / 86400.0);
        fs_error_set(&m->err, FS_ESTUCK, "until: drain: %llu job%s still queued or running %s "
                     "after the last arrival (drain_limit) at simulated time %.6g d: %s; raise "
                     "drain_limit, or use until: horizon", (unsigned long long)n,
                     n == 1 ? " is" : "s are", d, fs_time_to_s(m->sim.now) / 86400.0, ids);
    } else {
        stuck_reason(m, &m->js.slots[first[0]], first[0], why, sizeof why);
        fs_error_set(&m->err, FS_ESTUCK, "no queued job can ever start: %llu job%s (%s) wait%s "
                     "at simulated time %.6g d with nothing running and no event left that "
                     "could start them; %s", (unsigned long long)n, n == 1 ? "" : "s", ids,
                     n == 1 ? "s" : "", fs_time_to_s(m->sim.now) / 86400.0, why);
    }
    m->drain_stop = capped ? FS_DRAIN_LIMIT : FS_DRAIN_STUCK;
    fs_sim_fail(&m->sim, FS_ESTUCK);
}

int fs_model_drain_stop(const fs_model_t *m)
{
    return m->drain_stop;
}
