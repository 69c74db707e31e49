/*
 * fs_limits: per-user limits (fs_limits.h).  Prefix fs_lim_, state
 * fs_limits_t (m->lim, NULL when scheduler.limits sets none).
 */
#include "fs_limits.h"
#include "fs_model_int.h"

#include <string.h>

enum { LIM_NONE = 0, LIM_ACTIVE = 1, LIM_HELD = 2 };
#define NO_NEXT UINT32_MAX

typedef struct user {
    uint32_t jobs;          /* active: handed to the policy, not yet ended */
    uint64_t gpus;          /* ... their GPUs */
    uint32_t head, tail;    /* held jobs (slots) in submission order, NO_NEXT none */
} user_t;

struct fs_limits {
    uint32_t max_jobs;      /* 0: none */
    uint64_t max_gpus;      /* 0: none */
    user_t *u;
    size_t n_u, cap_u;
    uint8_t *st;            /* st[slot]: LIM_* */
    uint32_t *next;         /* next[slot]: the next held job of its user */
    size_t cap_st, cap_next;
};

static int fits(const fs_limits_t *l, const user_t *u, uint32_t gpus)
{
    if (l->max_jobs && u->jobs >= l->max_jobs)
        return 0;
    if (l->max_gpus && u->gpus + gpus > l->max_gpus)
        return u->jobs == 0;    /* larger than the cap: alone */
    return 1;
}

/* Room for slot; a slot never admitted here (a job rejected at admission
 * frees its slot too) reads LIM_NONE. */
static int slot_room(fs_limits_t *l, uint32_t slot)
{
    size_t n = (size_t)slot + 1, old = l->cap_st;
    if (fs_grow((void **)&l->st, &l->cap_st, n, sizeof *l->st) ||
        fs_grow((void **)&l->next, &l->cap_next, n, sizeof *l->next))
        return FS_ENOMEM;
    if (l->cap_st > old)
        memset(l->st + old, LIM_NONE, l->cap_st - old);
    return 0;
}

static int hand_over(fs_model_t *m, user_t *u, uint32_t slot)
{
    fs_limits_t *l = m->lim;
    l->st[slot] = LIM_ACTIVE;
    u->jobs++;
    u->gpus += m->js.slots[slot].job.gpus;
    return m->pol->enqueue(m->pol_state, m, slot);
}

int fs_lim_admit(fs_model_t *m, uint32_t slot)
{
    fs_limits_t *l = m->lim;
    const fs_jobrt_t *j = &m->js.slots[slot];
    if (slot_room(l, slot))
        return FS_ENOMEM;
    l->st[slot] = LIM_NONE;
    if (j->job.tenant < 0 || is_replica(j))
        return m->pol->enqueue(m->pol_state, m, slot);
    size_t t = (size_t)j->job.tenant;
    if (t >= l->n_u) {
        if (fs_grow((void **)&l->u, &l->cap_u, t + 1, sizeof *l->u))
            return FS_ENOMEM;
        for (size_t i = l->n_u; i <= t; i++)
            l->u[i] = (user_t){.head = NO_NEXT, .tail = NO_NEXT};
        l->n_u = t + 1;
    }
    user_t *u = &l->u[t];
    if (u->head == NO_NEXT && fits(l, u, j->job.gpus))
        return hand_over(m, u, slot);
    l->st[slot] = LIM_HELD;
    l->next[slot] = NO_NEXT;
    if (u->tail == NO_NEXT)
        u->head = slot;
    else
        l->next[u->tail] = slot;
    u->tail = slot;
    return 0;
}

/* The user's held jobs handed over in submission order while the limits
 * allow; the first that does not fit stops the release.  0 or an error. */
static int release_held(fs_model_t *m, user_t *u)
{
    fs_limits_t *l = m->lim;
    int rc = 0;
    while (!rc && u->head != NO_NEXT && fits(l, u, m->js.slots[u->head].job.gpus)) {
        uint32_t x = u->head;
        u->head = l->next[x];
        if (u->head == NO_NEXT)
            u->tail = NO_NEXT;
        m->pass_wanted = 1;
        rc = hand_over(m, u, x);
    }
    return rc;
}

int fs_lim_gone(fs_model_t *m, uint32_t slot)
{
    fs_limits_t *l = m->lim;
    if (slot >= l->cap_st || l->st[slot] != LIM_ACTIVE)
        return 0;
    l->st[slot] = LIM_NONE;
    const fs_jobrt_t *j = &m->js.slots[slot];
    user_t *u = &l->u[j->job.tenant];
    u->jobs--;
    u->gpus -= j->job.gpus;
    return release_held(m, u);
}

int fs_lim_unhold(fs_model_t *m, uint32_t slot)
{
    fs_limits_t *l = m->lim;
    if (slot >= l->cap_st || l->st[slot] != LIM_HELD)
        return 0;
    user_t *u = &l->u[m->js.slots[slot].job.tenant];
    uint32_t prev = NO_NEXT, x = u->head;
    while (x != NO_NEXT && x != slot) {
        prev = x;
        x = l->next[x];
    }
    if (x == NO_NEXT)
        return 0;
    if (prev == NO_NEXT)
        u->head = l->next[slot];
    else
        l->next[prev] = l->next[slot];
    if (u->tail == slot)
        u->tail = prev;
    l->st[slot] = LIM_NONE;
    /* it was the first held: the jobs behind it that fit go now */
    int rc = prev == NO_NEXT ? release_held(m, u) : 0;
    return rc ? rc : 1;
}

static int on_event(void *ud, fs_model_t *m, uint64_t data)
{
    (void)ud;
    (void)m;
    (void)data;
    return FS_EINVAL;   /* the module schedules no event */
}

static void destroy(void *ud)
{
    fs_limits_t *l = ud;
    fs_free(l->u);
    fs_free(l->st);
    fs_free(l->next);
    fs_free(l);
}

static const fs_module_ops_t ops = {
    .name = "user limits",
    .on_event = on_event,
    .destroy = destroy,
    .quiet = 1,
};

int fs_limits_attach(fs_model_t *m, fs_error_t *err)
{
    const fs_limits_cfg_t *c = &fs_model_config(m)->scheduler.limits;
    if (c->max_jobs_per_user == 0 && c->max_gpus_per_user == 0)
        return 0;
    fs_limits_t *l = fs_calloc(1, sizeof *l);
    if (!l)
        return fs_error_set(err, FS_ENOMEM, "scheduler.limits: out of memory");
    l->max_jobs = c->max_jobs_per_user;
    l->max_gpus = c->max_gpus_per_user;
    uint32_t id;
    if (fs_model_add_module(m, &ops, l, &id)) {
        destroy(l);
        return fs_error_set(err, FS_ENOMEM, "scheduler.limits: out of memory");
    }
    m->lim = l;     /* the model owns l from here */
    return 0;
}
