/*
 * fs_recovery: checkpoint/restart arithmetic and recovery rules (see
 * fs_recovery.h and docs/recovery.md).
 */
#include "fs_recovery.h"
#include "fs_failspec.h"

#include <math.h>

static fs_time_t wall_for(fs_time_t work, double rate)
{
    return work <= 0 ? 0 : (fs_time_t)ceil((double)work / rate);
}

static void ckpt_done(fs_jobrun_t *j)
{
    j->since_ckpt = 0;
    j->since_wall = 0;
}

/* A non-compute phase (start-up, restore or write) runs for up to *dt. */
static void step_phase(fs_jobrun_t *j, fs_time_t *dt)
{
    fs_time_t use = *dt < j->phase_left ? *dt : j->phase_left;
    j->phase_left -= use;
    *dt -= use;
    if (j->phase == FS_PHASE_RESTORE)
        j->w_recovery += use;
    else if (j->phase == FS_PHASE_STARTING)
        j->w_startup += use;
    else
        j->w_ckpt += use;
    if (j->phase_left > 0)
        return;
    if (j->phase == FS_PHASE_WRITE)
        ckpt_done(j);
    if (j->phase == FS_PHASE_STARTING && j->restore_after > 0) {
        j->phase = FS_PHASE_RESTORE;
        j->phase_left = j->restore_after;
        j->restore_after = 0;
        return;
    }
    j->phase = FS_PHASE_COMPUTE;
}

/* Whole compute+write cycles from a checkpoint, at once.  1 if any. */
static int skip_cycles(fs_jobrun_t *j, fs_time_t *dt, fs_time_t delta)
{
    fs_time_t tau = j->ckpt_every;
    if (tau <= 0 || j->since_ckpt != 0)
        return 0;
    fs_time_t wt = wall_for(tau, j->rate), cyc = wt + delta;
    fs_time_t n = *dt / cyc, k = j->remaining / tau;
    if (n > k)
        n = k;
    if (n <= 0)
        return 0;
    *dt -= n * cyc;
    j->remaining -= n * tau;
    j->w_compute += n * wt;
    j->w_ckpt += n * delta;
    return 1;
}

void fs_recov_advance(fs_jobrun_t *j, fs_time_t dt, fs_time_t delta)
{
    while (dt > 0) {
        if (j->phase != FS_PHASE_COMPUTE) {
            step_phase(j, &dt);
            continue;
        }
        if (j->remaining <= 0)
            break;
        if (skip_cycles(j, &dt, delta))
            continue;
        fs_time_t tau = j->ckpt_every;
        fs_time_t lim = j->remaining;
        if (tau > 0 && tau - j->since_ckpt < lim)
            lim = tau - j->since_ckpt;
        fs_time_t need = wall_for(lim, j->rate), w, used;
        if (dt >= need) {
            w = lim;
            used = need;
        } else {
            w = (fs_time_t)((double)dt * j->rate);
            if (w > lim)
                w = lim;
            used = dt;
        }
        dt -= used;
        j->remaining -= w;
        j->since_ckpt += w;
        j->since_wall += used;
        j->w_compute += used;
        if (tau > 0 && j->since_ckpt >= tau) {
            j->phase = FS_PHASE_WRITE;
            j->phase_left = delta;
            if (delta <= 0) {
                ckpt_done(j);
                j->phase = FS_PHASE_COMPUTE;
            }
        }
    }
}

fs_time_t fs_recov_finish_wall(const fs_jobrun_t *j, fs_time_t delta)
{
    fs_time_t t = 0, since = j->since_ckpt, rem = j->remaining, tau = j->ckpt_every;
    if (j->phase != FS_PHASE_COMPUTE) {
        t += j->phase_left;
        if (j->phase == FS_PHASE_STARTING)
            t += j->restore_after;
        if (j->phase == FS_PHASE_WRITE)
            since = 0;
    }
    if (rem <= 0)
        return t;
    if (tau <= 0)
        return t + wall_for(rem, j->rate);
    fs_time_t first = tau - since;
    if (rem < first)
        return t + wall_for(rem, j->rate);
    t += wall_for(first, j->rate) + delta;
    rem -= first;
    return t + rem / tau * (wall_for(tau, j->rate) + delta) + wall_for(rem % tau, j->rate);
}

/* ---- intervals ---------------------------------------------------------------- */

double fs_recov_young(double delta, double mttf)
{
    return sqrt(2.0 * delta * mttf);
}

double fs_recov_daly(double delta, double mttf)
{
    if (delta >= 2.0 * mttf)
        return mttf;
    double x = delta / (2.0 * mttf);
    return sqrt(2.0 * delta * mttf) * (1.0 + sqrt(x) / 3.0 + x / 9.0) - delta;
}

double fs_recov_daly_wall(double ts, double tau, double delta, double restart, double mttf)
{
    return mttf * exp(restart / mttf) * expm1((tau + delta) / mttf) * ts / tau;
}

double fs_recov_interval_s(const fs_recovery_cfg_t *c, double node_mttf_s, uint32_t nodes)
{
    double delta = fs_time_to_s(c->write_cost);
    double mttf = nodes > 0 && node_mttf_s > 0 ? node_mttf_s / nodes : 0;
    switch (c->checkpoint) {
    case FS_CKPT_FIXED:
        return fs_time_to_s(c->interval);
    case FS_CKPT_YOUNG:
        return mttf > 0 ? fs_recov_young(delta, mttf) : 0;
    case FS_CKPT_DALY:
        return mttf > 0 ? fs_recov_daly(delta, mttf) : 0;
    default:
        return 0;
    }
}

double fs_recov_node_mttf_s(const fs_config_t *cfg, const char *pool, uint32_t gpn)
{
    if (cfg->recovery.node_mttf > 0)
        return fs_time_to_s(cfg->recovery.node_mttf);
    return fs_failure_node_mttf_s(cfg, pool, gpn);
}

/* ---- retries -------------------------------------------------------------------- */

int fs_recov_retry(const fs_recovery_cfg_t *c, uint32_t failures, fs_time_t *delay)
{
    *delay = c->requeue;
    switch (c->retry) {
    case FS_RETRY_NONE:
        return 0;
    case FS_RETRY_BACKOFF: {
        uint32_t limit = c->retry_limit ? c->retry_limit : 6;
        if (failures > limit)
            return 0;
        fs_time_t b = c->retry_base;
        for (uint32_t i = 1; i < failures && b > 0 && b < c->retry_max; i++)
            b *= 2;
        if (b > c->retry_max)
            b = c->retry_max;
        *delay += b;
        return 1;
    }
    default:
        return c->retry_limit == 0 || failures <= c->retry_limit;
    }
}

/* ---- placement speed -------------------------------------------------------------- */

static const fs_span_speed_cfg_t *span_row(const fs_cluster_cfg_t *c, uint32_t job_class)
{
    for (size_t i = 0; i < c->n_span_speed; i++)
        if (c->span_speed[i].job_class == job_class)
            return &c->span_speed[i];
    return NULL;
}

int fs_recov_span_row(const fs_cluster_cfg_t *c, uint32_t job_class)
{
    return span_row(c, job_class) != NULL;
}

double fs_recov_span_factor(const fs_cluster_cfg_t *c, uint32_t job_class, const fs_span_t *sp,
                            int has_topo)
{
    const fs_span_speed_cfg_t *r = span_row(c, job_class);
    if (!r)
        return 1.0;
    const double f[5] = {r->nodes, r->domains, r->racks, r->leaves, r->spines};
    const uint32_t count[5] = {sp->nodes, sp->domains, sp->racks, sp->leaves, sp->spines};
    double out = 1.0;
    for (int l = 0; l < (has_topo ? 5 : 1); l++)
        if (count[l] > 1 && f[l] < out)
            out = f[l];
    return out;
}
