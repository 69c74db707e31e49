/*
 * The jobs' GPU-s accounts: each attempt at its own share, the useful work,
 * and the aggregates that give every job's held, computing, checkpoint and
 * start-up GPU-s at a /timeline sample without visiting every job.  Prefix
 * fs_acct_, state fs_accounts_t.
 */
#include "fs_model_int.h"
#include "fs_recovery.h"

/* ---- the jobs' accounts as they accrue (the /timeline held split) --------
 * Kept only with a timeline (m->acct.on).  The invariants: ac_held,
 * ac_comp, ac_ckpt, ac_startup hold every settled increment of the jobs'
 * accounts (held_gpu_s, and w_compute, w_ckpt, w_startup x the share);
 * ac_run_s / ac_run_t = sum over running jobs of share / share x start;
 * ac_pure_s / ac_pure_t the same with settled_at for the running jobs in
 * plain compute (no checkpoints, no start-up or restore), whose compute
 * since settled_at is the wall time since; m->acct.cx the other running jobs;
 * ac_rec_s / ac_rec_t = sum over recovering jobs of held GPUs / held GPUs x
 * settled_at.  Replicas are not jobs: never in them. */
#define CX_NONE UINT32_MAX

static inline double tsec(fs_time_t t) { return fs_time_to_s(t); }

/* An attempt starts (after its phases were set: fs_model_attempt.c). */
int fs_acct_run_add(fs_model_t *m, fs_jobrt_t *j, uint32_t slot)
{
    fs_jobrun_t *r = j->r;
    if (!m->acct.on || is_replica(j))
        return 0;
    double sh = gpu_share(j);
    if (r->ckpt_every != 0 || r->phase != FS_PHASE_COMPUTE) {
        if (fs_grow((void **)&m->acct.cx, &m->acct.cap_cx, m->acct.n_cx + 1, sizeof *m->acct.cx))
            return FS_ENOMEM;
        r->cx_pos = (uint32_t)m->acct.n_cx;
        m->acct.cx[m->acct.n_cx++] = slot;
    } else {
        m->acct.ac_pure_s += sh;
        m->acct.ac_pure_t += sh * tsec(r->settled_at);
    }
    r->ac_share = sh;
    m->acct.ac_run_s += sh;
    m->acct.ac_run_t += sh * tsec(r->start);
    return 0;
}

/* The attempt stops (after its last progress). */
void fs_acct_run_sub(fs_model_t *m, fs_jobrt_t *j)
{
    fs_jobrun_t *r = j->r;
    double sh = r->ac_share;
    if (sh < 0)
        return;
    m->acct.ac_run_s -= sh;
    m->acct.ac_run_t -= sh * tsec(r->start);
    if (r->cx_pos == CX_NONE) {
        m->acct.ac_pure_s -= sh;
        m->acct.ac_pure_t -= sh * tsec(r->settled_at);
    } else {
        uint32_t last = m->acct.cx[--m->acct.n_cx];
        if (r->cx_pos < m->acct.n_cx) {
            m->acct.cx[r->cx_pos] = last;
            m->js.slots[last].r->cx_pos = r->cx_pos;
        }
        r->cx_pos = CX_NONE;
    }
    r->ac_share = -1;
}

/* Useful GPU-s at each attempt's share (fs_jobrun_t.u_*): called when the
 * job goes back to the queue, after its losses and before a restart cost
 * (which is no useful work) and before unshare; the work it has kept since
 * the last call is priced at the share it ran at. */
void fs_acct_useful_mark(fs_jobrt_t *j)
{
    fs_jobrun_t *x = j->r;
    fs_time_t p = j->job.duration - x->remaining;
    p = p < 0 ? 0 : p;
    x->u_gs += gpu_share(j) * fs_time_to_s(p - x->u_p);
    x->u_p = p;
}

/* Settles a running job's progress at now (phases, checkpoints, wall
 * counters). */
void fs_acct_progress(fs_model_t *m, fs_jobrt_t *j)
{
    fs_jobrun_t *r = j->r;
    if (r->ac_share < 0) {
        fs_recov_advance(r, m->sim.now - r->settled_at, m->cfg->recovery.write_cost);
        r->settled_at = m->sim.now;
        return;
    }
    /* what settles moves from the aggregates to the settled accounts */
    fs_time_t c0 = r->w_compute, k0 = r->w_ckpt, s0 = r->w_startup, t0 = r->settled_at;
    fs_recov_advance(r, m->sim.now - r->settled_at, m->cfg->recovery.write_cost);
    r->settled_at = m->sim.now;
    double sh = r->ac_share;
    m->acct.ac_comp += sh * tsec(r->w_compute - c0);
    m->acct.ac_ckpt += sh * tsec(r->w_ckpt - k0);
    m->acct.ac_startup += sh * tsec(r->w_startup - s0);
    if (r->cx_pos == CX_NONE)
        m->acct.ac_pure_t += sh * tsec(r->settled_at) - sh * tsec(t0);
}

/* GPUs a recovering job still holds. */
static double held_gpus(const fs_jobrt_t *j)
{
    if (!j->r->holding)
        return 0;
    if (j->r->place.n <= 1)
        return gpu_share(j);
    double g = 0;
    for (uint32_t i = 0; i < j->r->place.n; i++)
        g += j->r->place.many[i].gpus;
    return g;
}

/* A recovering job's hold enters or leaves the account aggregates (around
 * every change of its holding, placement or settled_at). */
void fs_acct_hold_add(fs_model_t *m, fs_jobrt_t *j)
{
    if (!m->acct.on || is_replica(j))
        return;
    double g = held_gpus(j);
    j->r->ac_hold = g;
    m->acct.ac_rec_s += g;
    m->acct.ac_rec_t += g * tsec(j->r->settled_at);
}

void fs_acct_hold_sub(fs_model_t *m, fs_jobrt_t *j)
{
    if (!m->acct.on || is_replica(j))
        return;
    double g = j->r->ac_hold;
    m->acct.ac_rec_s -= g;
    m->acct.ac_rec_t -= g * tsec(j->r->settled_at);
    j->r->ac_hold = 0;
}

/* Counts the GPU-s a recovering job held from settled_at to at. */
void fs_acct_hold_until(fs_model_t *m, fs_jobrt_t *j, fs_time_t at)
{
    double add = held_gpus(j) * fs_time_to_s(at - j->r->settled_at);
    fs_acct_hold_sub(m, j);
    j->r->held_gpu_s += add;
    j->r->settled_at = at;
    if (m->acct.on && !is_replica(j))
        m->acct.ac_held += add;
    fs_acct_hold_add(m, j);
}

/* The jobs' accounts up to now, summed over every job (not replicas), as
 * the jobs' rows would give them now (emitted jobs' totals, and each active
 * job's account with a running attempt advanced to now on a copy of its
 * record and a recovering job's hold counted to now): O(slots).  The
 * reference the aggregates of fs_acct_now are tested against. */
void fs_model_job_accounts(const fs_model_t *m, double out[4])
{
    out[0] = m->acct.job_held_gpu_s;
    out[1] = m->acct.job_compute_gpu_s;
    out[2] = m->acct.ckpt_gpu_s;
    out[3] = m->acct.startup_gpu_s;
    fs_time_t now = m->sim.now;
    for (size_t i = 0; i < m->js.n_slots; i++) {
        const fs_jobrt_t *j = &m->js.slots[i];
        if (j->state == FS_JOBRT_FREE || !j->r || is_replica(j))
            continue;
        fs_jobrun_t c = *j->r;
        double share = gpu_share(j);
        if (j->state == FS_JOBRT_RUNNING) {
            fs_recov_advance(&c, now - c.settled_at, m->cfg->recovery.write_cost);
            c.held_gpu_s += share * fs_time_to_s(now - c.start);
        } else if (j->state == FS_JOBRT_RECOVERING && c.holding) {
            c.held_gpu_s += held_gpus(j) * fs_time_to_s(now - c.settled_at);
        }
        out[0] += c.held_gpu_s;
        out[1] += share * fs_time_to_s(c.w_compute);
        out[2] += share * fs_time_to_s(c.w_ckpt);
        out[3] += share * fs_time_to_s(c.w_startup);
    }
}

/* The same from the aggregates kept as the accounts accrue (fs_acct_*): the
 * settled increments, the unsettled holds and plain compute in closed form,
 * and only the running jobs with phases advanced on a copy.  O(those). */
void fs_acct_now(const fs_model_t *m, double out[4])
{
    double t = tsec(m->sim.now);
    out[0] = m->acct.ac_held + (t * m->acct.ac_run_s - m->acct.ac_run_t) + (t * m->acct.ac_rec_s - m->acct.ac_rec_t);
    out[1] = m->acct.ac_comp + (t * m->acct.ac_pure_s - m->acct.ac_pure_t);
    out[2] = m->acct.ac_ckpt;
    out[3] = m->acct.ac_startup;
    for (size_t i = 0; i < m->acct.n_cx; i++) {
        const fs_jobrun_t *r = m->js.slots[m->acct.cx[i]].r;
        fs_jobrun_t c = *r;
        fs_recov_advance(&c, m->sim.now - c.settled_at, m->cfg->recovery.write_cost);
        out[1] += r->ac_share * tsec(c.w_compute - r->w_compute);
        out[2] += r->ac_share * tsec(c.w_ckpt - r->w_ckpt);
        out[3] += r->ac_share * tsec(c.w_startup - r->w_startup);
    }
}
