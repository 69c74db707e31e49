/*
 * fs_fabric: the engine of the network model (fs_fabric.h): links, flows,
 * max-min fair rates by progressive filling over the flows connected to a
 * change, and the ring model.
 */
#include "fs_fabric.h"
#include "../sim/fs_alloc.h"

#include <math.h>
#include <string.h>

/* ---- the ring model ------------------------------------------------------------ */

double fs_fabric_edge_bytes(const fs_fabric_ring_t *r)
{
    return r->domains < 2 ? 0.0 : r->edge;
}

double fs_fabric_comm_s(const fs_fabric_ring_t *r, double x)
{
    if (r->domains < 2)
        return r->nvl_s;
    double net = r->edge / ((r->eff > 0 ? r->eff : 1.0) * x);
    return (net > r->nvl_s ? net : r->nvl_s) + 2.0 * (r->domains - 1.0) * r->alpha_s;
}

double fs_fabric_iter_s(const fs_fabric_ring_t *r, double x)
{
    double c = fs_fabric_comm_s(r, x);
    double hid = r->overlap * c;
    return (r->compute_s > hid ? r->compute_s : hid) + (1.0 - r->overlap) * c;
}

/* ---- links and flows ------------------------------------------------------------- */

typedef struct link {
    double cap;
    uint32_t *flow;         /* ids of the flows on it, in arrival order */
    double *fcoef;          /* their coefficients on it */
    size_t n, capn, capc;
    int act;                /* it can bind: two flows or more, and their loads at their
                               idle rates above its capacity (else it never fills) */
    uint64_t mark;          /* the recomputation that last visited it */
    /* progressive filling */
    double frozen_load;     /* sum coef x x of its frozen flows */
    double ucoef;           /* sum coef of its unfrozen flows */
    uint32_t ucount;        /* its unfrozen flows */
} link_t;

typedef struct flow {
    int active;
    uint32_t n;
    uint32_t *links;
    double *coef;
    fs_fabric_ring_t ring;
    double x, x_idle, t_idle, factor;
    /* cached while no link of it changes between used by it alone and
     * shared (dirty: recompute them): the least capacity/coef of its links
     * no other flow uses, and the positions in links[] of the others */
    double cap_priv;
    uint32_t *spos;
    uint32_t sp_n;
    int dirty;
    uint64_t mark;
    int frozen;
} flow_t;

struct fs_fabric {
    link_t *link;
    uint32_t n_links;
    flow_t *flow;
    size_t n_flows, cap_flows;
    uint64_t epoch;
    /* a recomputation's component, and the changed flows */
    uint32_t *cl, *cf, *changed;
    struct capid { double cap; uint32_t id; } *ord;  /* the component by private cap */
    size_t cap_cl, cap_cf, cap_changed, n_changed, cap_ord;
    fs_fabric_stats_t st;
};

fs_fabric_t *fs_fabric_new(uint32_t n_links, const double *cap)
{
    fs_fabric_t *f = fs_calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->link = fs_calloc(n_links ? n_links : 1, sizeof *f->link);
    if (!f->link) {
        fs_free(f);
        return NULL;
    }
    f->n_links = n_links;
    for (uint32_t i = 0; i < n_links; i++)
        f->link[i].cap = cap[i];
    return f;
}

void fs_fabric_free(fs_fabric_t *f)
{
    if (!f)
        return;
    for (uint32_t i = 0; i < f->n_links; i++) {
        fs_free(f->link[i].flow);
        fs_free(f->link[i].fcoef);
    }
    for (size_t i = 0; i < f->n_flows; i++) {
        fs_free(f->flow[i].links);
        fs_free(f->flow[i].coef);
        fs_free(f->flow[i].spos);
    }
    fs_free(f->link);
    fs_free(f->flow);
    fs_free(f->cl);
    fs_free(f->cf);
    fs_free(f->changed);
    fs_free(f->ord);
    fs_free(f);
}

static double factor_of(const flow_t *w)
{
    if (!(w->x < w->x_idle))
        return 1.0;
    double t = fs_fabric_iter_s(&w->ring, w->x);
    return t > w->t_idle ? w->t_idle / t : 1.0;
}

/* Fixes flow id at rate x (at most its idle rate): its load on its shared
 * links, its factor (listed in f->changed when it moves). */
static int freeze(fs_fabric_t *f, uint32_t id, double x)
{
    flow_t *w = &f->flow[id];
    w->frozen = 1;
    double was = w->factor;
    w->x = x < w->x_idle ? x : w->x_idle;
    w->factor = factor_of(w);
    if (w->factor != was) {
        if (fs_grow((void **)&f->changed, &f->cap_changed, f->n_changed + 1, sizeof *f->changed))
            return FS_ENOMEM;
        f->changed[f->n_changed++] = id;
    }
    for (uint32_t q = 0; q < w->sp_n; q++) {
        uint32_t j = w->spos[q];
        link_t *l = &f->link[w->links[j]];
        l->frozen_load += w->coef[j] * w->x;
        if (--l->ucount == 0)
            l->ucoef = 0;
        else
            l->ucoef -= w->coef[j];
    }
    return 0;
}

static int capid_less(const struct capid *x, const struct capid *y)
{
    return x->cap < y->cap || (x->cap == y->cap && x->id < y->id);
}

/* Sorts a[0..n) by (cap, id): insertion sort for the small components
 * most recomputations see, heapsort beyond (no allocation, no calls
 * through a pointer: qsort's cost dominated the recomputation). */
static void sort_capid(struct capid *a, size_t n)
{
    if (n <= 48) {
        for (size_t i = 1; i < n; i++) {
            struct capid v = a[i];
            size_t j = i;
            for (; j > 0 && capid_less(&v, &a[j - 1]); j--)
                a[j] = a[j - 1];
            a[j] = v;
        }
        return;
    }
    for (size_t k = n / 2; k-- > 0;) {         /* a max-heap */
        for (size_t r = k;;) {
            size_t c = 2 * r + 1;
            if (c >= n)
                break;
            if (c + 1 < n && capid_less(&a[c], &a[c + 1]))
                c++;
            if (!capid_less(&a[r], &a[c]))
                break;
            struct capid t = a[r];
            a[r] = a[c];
            a[c] = t;
            r = c;
        }
    }
    for (size_t e = n; e-- > 1;) {
        struct capid t = a[0];
        a[0] = a[e];
        a[e] = t;
        for (size_t r = 0;;) {
            size_t c = 2 * r + 1;
            if (c >= e)
                break;
            if (c + 1 < e && capid_less(&a[c], &a[c + 1]))
                c++;
            if (!capid_less(&a[r], &a[c]))
                break;
            struct capid u = a[r];
            a[r] = a[c];
            a[c] = u;
            r = c;
        }
    }
}

/* Progressive filling over the flows connected to links seed[0..n_seed).
 * A link that only one flow uses cannot share: it caps that flow (cap_priv,
 * the least capacity/coef of its private links) and stays out of the
 * rounds, which see only the shared links (uplinks, the NICs of nodes that
 * hold several communicating jobs).  Flows whose factor changes are listed
 * in f->changed. */
/* Whether link lk can bind (act): shared, and its flows at their idle
 * rates would load it above its capacity (each flow's rate is at most its
 * idle rate, so a link that passes this never fills).  When that changes,
 * its flows' caches are stale. */
static void relink(fs_fabric_t *f, uint32_t lk)
{
    link_t *l = &f->link[lk];
    int act = 0;
    if (l->n >= 2) {
        double pot = 0;
        for (size_t k = 0; k < l->n; k++)
            pot += l->fcoef[k] * f->flow[l->flow[k]].x_idle;
        act = pot > l->cap * (1.0 + 1e-12);
    }
    if (act != l->act)
        for (size_t k = 0; k < l->n; k++)
            f->flow[l->flow[k]].dirty = 1;
    l->act = act;
}

/* A binding link enters the component: marked, its filling state reset. */
static int visit_link(fs_fabric_t *f, uint32_t lk, uint64_t ep, size_t *nl)
{
    link_t *l = &f->link[lk];
    l->mark = ep;
    l->frozen_load = 0;
    l->ucoef = 0;
    l->ucount = 0;
    f->cl[(*nl)++] = lk;
    return 0;
}

/* A flow enters the component: its cache refreshed if dirty, its shared
 * links visited and given its coefficients. */
static int visit_flow(fs_fabric_t *f, uint32_t id, uint64_t ep, size_t *nl, size_t *nf)
{
    flow_t *w = &f->flow[id];
    w->mark = ep;
    w->frozen = 0;
    if (fs_grow((void **)&f->cf, &f->cap_cf, *nf + 1, sizeof *f->cf))
        return FS_ENOMEM;
    f->cf[(*nf)++] = id;
    if (w->dirty) {
        w->cap_priv = INFINITY;
        w->sp_n = 0;
        for (uint32_t j = 0; j < w->n; j++) {
            const link_t *l2 = &f->link[w->links[j]];
            if (l2->act)
                w->spos[w->sp_n++] = j;
            else if (l2->cap / w->coef[j] < w->cap_priv)
                w->cap_priv = l2->cap / w->coef[j];
        }
        w->dirty = 0;
    }
    if (fs_grow((void **)&f->cl, &f->cap_cl, *nl + w->sp_n, sizeof *f->cl))
        return FS_ENOMEM;
    for (uint32_t q = 0; q < w->sp_n; q++) {
        uint32_t j = w->spos[q];
        link_t *l2 = &f->link[w->links[j]];
        if (l2->mark != ep)
            visit_link(f, w->links[j], ep, nl);
        l2->ucoef += w->coef[j];
        l2->ucount++;
    }
    return 0;
}

/* Progressive filling over the flows connected to links seed[0..n_seed).
 * A link that only one flow uses cannot share: it caps that flow (cap_priv,
 * the least capacity/coef of its private links) and stays out of the
 * rounds, which see only the shared links (uplinks, the NICs of nodes that
 * hold several communicating jobs).  Flows whose factor changes are listed
 * in f->changed. */
static int recompute(fs_fabric_t *f, const uint32_t *seed, size_t n_seed)
{
    uint64_t ep = ++f->epoch;
    size_t nl = 0, nf = 0;
    f->n_changed = 0;
    /* the component, breadth first from the seeds over shared links (the
     * list cl holds the shared links only) */
    if (fs_grow((void **)&f->cl, &f->cap_cl, n_seed + 1, sizeof *f->cl))
        return FS_ENOMEM;
    for (size_t i = 0; i < n_seed; i++) {
        link_t *l = &f->link[seed[i]];
        if (l->act) {
            if (l->mark != ep)
                visit_link(f, seed[i], ep, &nl);
            continue;
        }
        for (size_t k = 0; k < l->n; k++)  /* a link that cannot bind: its flows */
            if (f->flow[l->flow[k]].mark != ep && visit_flow(f, l->flow[k], ep, &nl, &nf))
                return FS_ENOMEM;
    }
    for (size_t li = 0; li < nl; li++) {
        const link_t *l = &f->link[f->cl[li]];
        for (size_t k = 0; k < l->n; k++)
            if (f->flow[l->flow[k]].mark != ep && visit_flow(f, l->flow[k], ep, &nl, &nf))
                return FS_ENOMEM;
    }
    f->st.recomputes++;
    f->st.flows_touched += nf;
    f->st.links_touched += nl;
    size_t ns = nl;
    if (fs_grow((void **)&f->ord, &f->cap_ord, nf ? nf : 1, sizeof *f->ord))
        return FS_ENOMEM;
    for (size_t i = 0; i < nf; i++)
        f->ord[i] = (struct capid){f->flow[f->cf[i]].cap_priv, f->cf[i]};
    sort_capid(f->ord, nf);
    /* Rounds.  A link's fill level only rises as flows freeze below it
     * (freezing c at x <= level L leaves (room - c x) / (u - c) >= L), so
     * the least level of a scan stays a lower bound: the flows whose
     * private cap is below it freeze at their cap without a new scan. */
    size_t left = nf, po = 0;
    while (left > 0) {
        double lmin = INFINITY;
        for (size_t i = 0; i < ns; i++) {
            const link_t *l = &f->link[f->cl[i]];
            if (l->ucount == 0)
                continue;
            double room = l->cap - l->frozen_load;
            double lam = (room > 0 ? room : 0) / l->ucoef;
            if (lam < lmin)
                lmin = lam;
        }
        int batch = 0;
        for (; po < nf && f->ord[po].cap <= lmin; po++)
            if (!f->flow[f->ord[po].id].frozen) {
                left--;
                batch = 1;
                if (freeze(f, f->ord[po].id, f->ord[po].cap))
                    return FS_ENOMEM;
            }
        if (batch || left == 0)
            continue;       /* the levels rose: scan again */
        /* the first link to fill: its flows (and any flow whose cap is
         * there, to rounding) fix at its level */
        double best = lmin, lim = best * (1.0 + 1e-12);
        for (size_t q = po; q < nf && f->ord[q].cap <= lim; q++)
            if (!f->flow[f->ord[q].id].frozen) {
                left--;
                if (freeze(f, f->ord[q].id, best))
                    return FS_ENOMEM;
            }
        for (size_t i = 0; i < ns; i++) {
            link_t *l = &f->link[f->cl[i]];
            if (l->ucount == 0)
                continue;
            double room = l->cap - l->frozen_load;
            double lam = (room > 0 ? room : 0) / l->ucoef;
            if (lam > lim)
                continue;
            for (size_t k = 0; k < l->n; k++) {
                if (f->flow[l->flow[k]].frozen)
                    continue;
                left--;
                if (freeze(f, l->flow[k], best))
                    return FS_ENOMEM;
            }
        }
    }
    return 0;
}

int fs_fabric_add(fs_fabric_t *f, uint32_t id, const uint32_t *links, const double *coef,
                  uint32_t n, const fs_fabric_ring_t *r)
{
    if (id >= f->n_flows) {
        size_t old = f->n_flows;
        if (fs_grow((void **)&f->flow, &f->cap_flows, (size_t)id + 1, sizeof *f->flow))
            return FS_ENOMEM;
        memset(f->flow + old, 0, ((size_t)id + 1 - old) * sizeof *f->flow);
        f->n_flows = (size_t)id + 1;
    }
    flow_t *w = &f->flow[id];
    if (w->active)
        return FS_EINVAL;
    fs_free(w->links);
    fs_free(w->coef);
    fs_free(w->spos);
    w->links = fs_malloc((n ? n : 1) * sizeof *w->links);
    w->coef = fs_malloc((n ? n : 1) * sizeof *w->coef);
    w->spos = fs_malloc((n ? n : 1) * sizeof *w->spos);
    if (!w->links || !w->coef || !w->spos)
        return FS_ENOMEM;
    w->dirty = 1;
    w->n = n;
    w->ring = *r;
    w->x_idle = INFINITY;
    for (uint32_t i = 0; i < n; i++) {
        w->links[i] = links[i];
        w->coef[i] = coef[i];
        double c = f->link[links[i]].cap / coef[i];
        if (c < w->x_idle)
            w->x_idle = c;
    }
    w->t_idle = fs_fabric_iter_s(r, w->x_idle);
    w->x = w->x_idle;
    w->factor = 1.0;
    for (uint32_t i = 0; i < n; i++) {
        link_t *l = &f->link[links[i]];
        if (fs_grow((void **)&l->flow, &l->capn, l->n + 1, sizeof *l->flow) ||
            fs_grow((void **)&l->fcoef, &l->capc, l->n + 1, sizeof *l->fcoef))
            return FS_ENOMEM;
        l->fcoef[l->n] = coef[i];
        l->flow[l->n++] = id;
        relink(f, links[i]);
    }
    w->active = 1;
    int rc = recompute(f, links, n);
    /* the added flow is not "changed": its caller sets its rate */
    size_t k = 0;
    for (size_t i = 0; i < f->n_changed; i++)
        if (f->changed[i] != id)
            f->changed[k++] = f->changed[i];
    f->n_changed = k;
    return rc;
}

int fs_fabric_remove(fs_fabric_t *f, uint32_t id)
{
    if (id >= f->n_flows || !f->flow[id].active) {
        f->n_changed = 0;
        return 0;
    }
    flow_t *w = &f->flow[id];
    for (uint32_t i = 0; i < w->n; i++) {
        link_t *l = &f->link[w->links[i]];
        size_t k = 0;
        for (size_t j = 0; j < l->n; j++)     /* keeps the arrival order */
            if (l->flow[j] != id) {
                l->fcoef[k] = l->fcoef[j];
                l->flow[k++] = l->flow[j];
            }
        l->n = k;
        relink(f, w->links[i]);
    }
    w->active = 0;
    w->factor = 1.0;
    w->x = 0;
    return recompute(f, w->links, w->n);
}

int fs_fabric_set_cap(fs_fabric_t *f, uint32_t link, double cap)
{
    /* the flows keep their idle rate (their trace's run time was measured
     * on the fabric as built): a degraded link slows them */
    f->link[link].cap = cap;
    for (size_t k = 0; k < f->link[link].n; k++)
        f->flow[f->link[link].flow[k]].dirty = 1;
    relink(f, link);
    return recompute(f, &link, 1);
}

int fs_fabric_active(const fs_fabric_t *f, uint32_t id)
{
    return id < f->n_flows && f->flow[id].active;
}

double fs_fabric_x(const fs_fabric_t *f, uint32_t id)
{
    return fs_fabric_active(f, id) ? f->flow[id].x : 0.0;
}

double fs_fabric_x_idle(const fs_fabric_t *f, uint32_t id)
{
    return fs_fabric_active(f, id) ? f->flow[id].x_idle : 0.0;
}

double fs_fabric_factor(const fs_fabric_t *f, uint32_t id)
{
    return fs_fabric_active(f, id) ? f->flow[id].factor : 1.0;
}

const uint32_t *fs_fabric_changed(const fs_fabric_t *f, size_t *n)
{
    *n = f->n_changed;
    return f->changed;
}

const uint32_t *fs_fabric_flow_links(const fs_fabric_t *f, uint32_t id, const double **coef,
                                     uint32_t *n)
{
    if (id >= f->n_flows) {
        *n = 0;
        *coef = NULL;
        return NULL;
    }
    *n = f->flow[id].n;
    *coef = f->flow[id].coef;
    return f->flow[id].links;
}

double fs_fabric_cap(const fs_fabric_t *f, uint32_t link)
{
    return f->link[link].cap;
}

double fs_fabric_load(const fs_fabric_t *f, uint32_t link)
{
    const link_t *l = &f->link[link];
    double s = 0;
    for (size_t k = 0; k < l->n; k++) {
        const flow_t *w = &f->flow[l->flow[k]];
        for (uint32_t i = 0; i < w->n; i++)
            if (w->links[i] == link)
                s += w->coef[i] * w->x;
    }
    return s;
}

uint32_t fs_fabric_n_links(const fs_fabric_t *f)
{
    return f->n_links;
}

fs_fabric_stats_t fs_fabric_stats(const fs_fabric_t *f)
{
    return f->st;
}
