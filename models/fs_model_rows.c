/*
 * The model's rows: a job's /jobs row as it ends (or at the end of the
 * run), and the /gpu_intervals rows of each of its holds.  Prefix fs_row_.
 */
#include "fs_model_int.h"
#include "fs_catalog.h"
#include "fs_fabric_mod.h"

/* The activity profile of a job class (telemetry:). */
static const fs_activity_cfg_t *activity_of(const fs_model_t *m, int32_t job_class)
{
    const fs_telemetry_cfg_t *tc = &m->cfg->telemetry;
    for (size_t i = 0; i < tc->n_activity; i++)
        if ((int64_t)tc->activity[i].job_class == job_class)
            return &tc->activity[i];
    return &tc->dflt;
}

/* A job's activity: its class's profile, or, when its trace recorded its GPU
 * utilization (fs_job_t.rec_util: PAI's sensor table), the class's with duty
 * set to it and sm, tensor and dram scaled with it (a job that runs kernels
 * half the time is half as active; an assumption, docs/observability.md
 * "Recorded utilization"), each at most 1. */
fs_activity_cfg_t fs_row_job_activity(const fs_model_t *m, const fs_jobq_t *job)
{
    fs_activity_cfg_t a = *activity_of(m, job->job_class);
    double u = fs_job_util(job->rec_util);
    if (u >= 0) {
        double k = a.duty > 0 ? u / a.duty : 0;
        a.sm = fmin(1, a.sm * k);
        a.tensor = fmin(1, a.tensor * k);
        a.dram = fmin(1, a.dram * k);
        a.duty = u;
    }
    return a;
}

/* ckpt_s, recovery_s, ettr, goodput of a row (docs/recovery.md): useful
 * compute = wall computing minus wall computing work later lost. */
static void recovery_cols(const fs_model_t *m, const fs_jobrt_t *j, const fs_jobrun_t *x,
                          fs_job_row_t *r)
{
    fs_time_t at = m->finishing ? m->end_at : m->sim.now;
    double useful = fs_time_to_s(x->w_compute - x->w_lost);
    r->ckpt_s = fs_time_to_s(x->w_ckpt);
    r->recovery_s = fs_time_to_s(x->w_recovery);
    r->ettr = x->first_start >= 0 && at > x->first_start ? useful / fs_time_to_s(at - x->first_start)
                                                         : NAN;
    /* a job whose share changed between attempts (sh_var): each attempt's
     * computing at its own share, less what was lost (lost_gpu_s is priced
     * at the share of the attempt that lost it) */
    double useful_gs = !x->sh_var ? gpu_share(j) * useful
                     : x->gs_comp + (x->sh_open ? gpu_share(j) * fs_time_to_s(x->w_compute) : 0) -
                           x->lost_gpu_s;
    r->goodput = x->held_gpu_s > 0 ? useful_gs / x->held_gpu_s : NAN;
    /* Google's ML Productivity Goodput = scheduling x runtime x program
     * (docs/recovery.md "Goodput") */
    double span = gpu_share(j) * fs_time_to_s(at - j->job.submit);  /* at: its row's end */
    r->sched_goodput = x->held_gpu_s > 0 && span > 0 ? x->held_gpu_s / span : NAN;
    r->program_goodput = x->held_gpu_s > 0 ? activity_of(m, j->job.job_class)->mfu : NAN;
}

int fs_row_emit(fs_model_t *m, const fs_jobrt_t *j, int state)
{
    if (is_replica(j))  /* replicas are rows of /services, not /jobs */
        return 0;
    fs_jobrun_t blank;
    const fs_jobrun_t *x = j->r;
    if (!x) {   /* never ran */
        fs_slot_run_init(&blank, j);
        x = &blank;
    }
    fs_job_row_t r;
    memset(&r, 0, sizeof r);    /* padding too: rows are compared and copied whole */
    r.id = j->job.id;
    r.tenant = j->job.tenant;
    r.pool = x->first_start >= 0 ? (int32_t)x->place.pool : -1;
    r.gpus = j->job.gpus;
    r.gpu_milli = j->job.gpu_milli;
    r.nodes = x->first_start >= 0 ? x->place.n : 0;
    r.restarts = x->restarts;
    r.submit = fs_time_to_s(j->job.submit);
    r.start = x->first_start >= 0 ? fs_time_to_s(x->first_start) : NAN;
    r.end = (state == FS_STATE_COMPLETED || state == FS_STATE_FAILED || state == FS_STATE_WITHDRAWN)
                ? fs_time_to_s(m->sim.now) : NAN;
    r.wait = x->first_start >= 0 ? fs_time_to_s(x->first_start - j->job.submit) : NAN;
    r.run = x->run_s;
    r.lost_gpu_s = x->lost_gpu_s;
    r.state = state;
    r.preemptions = x->preemptions;
    r.preempt_lost_gpu_s = x->preempt_lost_gpu_s;
    r.startup_s = fs_time_to_s(x->w_startup);
    size_t s = (size_t)(j - m->js.slots);
    fs_time_t rs = s < m->js.cap_rec ? m->js.rec_start[s] : -1;
    r.rec_start = rs >= 0 ? fs_time_to_s(rs) : NAN;
    r.held_gpu_s = x->held_gpu_s;
    r.compute_s = fs_time_to_s(x->w_compute);
    /* /summary's split: each job's accounts at its share (fs_acct_shares_open) */
    double sh = gpu_share(j), g_comp = sh * r.compute_s, g_start = sh * r.startup_s, g_ckpt;
    if (x->sh_var) {
        g_comp = x->gs_comp + (x->sh_open ? g_comp : 0);
        g_start = x->gs_start + (x->sh_open ? g_start : 0);
    }
    m->acct.startup_gpu_s += g_start;
    /* a job still queued at the end counts its time queued up to the end */
    fs_time_t at = m->finishing ? m->end_at : m->sim.now;
    fs_time_t q = x->queued_us + (j->state == FS_JOBRT_QUEUED && state != FS_STATE_REJECTED
                                      ? at - x->queued_since : 0);
    r.queued_s = fs_time_to_s(q);
    recovery_cols(m, j, x, &r);
    g_ckpt = sh * r.ckpt_s;
    if (x->sh_var)
        g_ckpt = x->gs_ckpt + (x->sh_open ? g_ckpt : 0);
    m->acct.ckpt_gpu_s += g_ckpt;
    m->acct.job_held_gpu_s += x->held_gpu_s;
    m->acct.job_compute_gpu_s += g_comp;
    if (j->job.rec_util ? j->job.rec_util == 1 : activity_of(m, j->job.job_class)->duty == 0)
        m->acct.job_idle_gpu_s += g_comp;
    m->acct.job_lost_gpu_s += x->lost_gpu_s;
    fs_usage_job(m->usage, &r);
    if (m->fab && fs_fabric_job_row(m, (uint32_t)(j - m->js.slots))) {
        fs_mdl_fail(m, FS_ENOMEM, "a job's network row");
        return FS_ENOMEM;
    }
    int rc = m->sink.job ? m->sink.job(m->sink.ud, &r) : 0;
    if (rc)
        fs_mdl_fail_sink(m, rc, "writing a job row");
    return rc;
}

/* A recorded GPU memory use (fs_job_t.rec_fb, GB per whole GPU) as the
 * share of the memory of what the job holds: a MIG instance's (its
 * profile's), else the pool's GPU model's (80 GB when the catalog does not
 * know it, as the exporter assumes); at most 1. */
static double recorded_fb(const fs_model_t *m, const fs_jobrt_t *j)
{
    double gb = fs_job_fb_gb(j->job.rec_fb), mem = 80;
    if (j->r->place.mig) {
        mem = fs_migname_memory_gb(j->r->place.mig);
    } else {
        int cat = m->cluster.pools[j->r->place.pool].catalog;
        if (cat >= 0)
            mem = fs_catalog_get((size_t)cat)->memory_gb;
    }
    return mem > 0 && gb < mem ? gb / mem : 1;
}

/* When a hold ending at `end` computes from: after its attempt's pod
 * start-up; never (`end`) for the hold of a recovering job, which keeps
 * GPUs only until its failure is noticed. */
fs_time_t fs_row_hold_ready(const fs_jobrt_t *j, fs_time_t end)
{
    if (j->state == FS_JOBRT_RECOVERING)
        return end;
    return j->r->start + j->r->att_startup < end ? j->r->start + j->r->att_startup : end;
}

/* The /gpu_intervals rows of a job's current hold, ending at `end`
 * (output.gpu_intervals: the sink asks for them); with cost.energy: power,
 * the hold's draw into the usage (fs_energy_hold), from the same figures. */
void fs_row_intervals(fs_model_t *m, const fs_jobrt_t *j, fs_time_t end)
{
    if (__builtin_expect(m->energy.pool != NULL, 0) && !m->err.code)
        fs_energy_hold(m, j, end);
    if (!m->sink.interval || m->err.code)
        return;
    const fs_slice_t *sl = fs_placement_slices(&j->r->place);
    fs_time_t ready = fs_row_hold_ready(j, end);
    const fs_activity_cfg_t act = fs_row_job_activity(m, &j->job), *a = &act;
    fs_interval_row_t r = {.job = j->job.id, .tenant = j->job.tenant,
                           .job_class = j->job.job_class, .gpu_milli = j->r->place.milli,
                           .start = fs_time_to_s(j->r->start), .ready = fs_time_to_s(ready),
                           .end = fs_time_to_s(end), .duty = a->duty, .sm = a->sm,
                           .tensor = a->tensor, .dram = a->dram, .fb = a->fb, .gpu_instance = -1};
    if (j->job.rec_fb)  /* the trace's memory use (PAI avg_gpu_wrk_mem), not the class's */
        r.fb = recorded_fb(m, j);
    if (j->r->place.mig) {  /* one row per instance: bit 8 g + i = instance i of GPU g */
        r.node = sl[0].node;
        r.gpus = 1;
        for (uint64_t bits = j->r->place.mig_bits; bits; bits &= bits - 1) {
            unsigned b = (unsigned)__builtin_ctzll(bits);
            r.gpu = b / 8;
            r.gpu_instance = (int32_t)(b % 8);
            int rc = m->sink.interval(m->sink.ud, &r);
            if (rc) {
                fs_mdl_fail_sink(m, rc, "writing a GPU interval");
                return;
            }
        }
        return;
    }
    for (uint32_t k = 0; k < j->r->place.n; k++) {
        if (sl[k].gpus == 0)
            continue;   /* a failed node's slice, given back at the failure (drop_node) */
        r.node = sl[k].node;
        r.gpus = sl[k].gpus;
        r.gpu = j->r->place.milli < 1000 ? j->r->place.gpu : 0;
        int rc = m->sink.interval(m->sink.ud, &r);
        if (rc) {
            fs_mdl_fail_sink(m, rc, "writing a GPU interval");
            return;
        }
    }
}
