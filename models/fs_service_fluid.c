/*
 * fs_service_fluid: fluid mode of the services (fs_service_int.h): the
 * queue as a fluid, stationary M/G/c (Erlang C with the Allen-Cunneen
 * correction) while it keeps up, a backlog of arrival cohorts drained at
 * capacity while it does not; TTFT and TPOT as mixtures of components.
 */
#include "fs_service_int.h"

#include <math.h>
#include <string.h>

/* Appends a component, or adds its weight to the last one when they are
 * the same distribution (the state did not change between two advances). */
static int push_comp(comp_t **v, size_t *n, size_t *cap, comp_t c)
{
    if (c.w <= 0)
        return 0;
    for (size_t i = *n, lo = *n > 2 * PQ ? *n - 2 * PQ : 0; i-- > lo;) {
        comp_t *l = &(*v)[i];
        if (l->a == c.a && l->b == c.b && l->pw == c.pw && l->theta == c.theta) {
            l->w += c.w;
            return 0;
        }
    }
    if (fs_grow((void **)v, cap, *n + 1, sizeof **v))
        return FS_ENOMEM;
    (*v)[(*n)++] = c;
    return 0;
}



/* The ready replicas' batch slots (*slots) and their mean service rate. */
static double fluid_mu(const svc_t *s, double *slots)
{
    *slots = s->slots_ready;
    return s->slots_ready > 0 ? s->agg_rate / s->slots_ready : 0;
}

static double fluid_prefill(const svc_t *s)
{
    return s->slots_ready > 0 ? s->agg_pre / s->slots_ready : 0;
}

static double fluid_step(const svc_t *s)
{
    return s->slots_ready > 0 ? s->agg_step / s->slots_ready : NAN;
}

/* A request's TTFT at the current load, less the slots' wait: its prefill,
 * from the mean prompt's, and the wait of the replica's prefill queue. */
typedef struct ttft {
    double in_s;    /* the mean prompt's prefill time, s (slots: its own TTFT) */
    double chunks;  /* v1: the mean prompt's chunks, in / (T - b) (0: v0, slots) */
    double step;    /* v1: the decode step each chunk's iteration adds, s (0: v0, slots) */
    double fix;     /* half an iteration in progress at the arrival, s */
    double pw;      /* the prefill queue: P(wait > 0) ... */
    double ew;      /* ... and E[wait], s */
} ttft_t;

/* The TTFT less the waits of a prompt of x times the mean prompt's tokens:
 * its prefill, v1 a decode step for each of its ceil(n / (T - b)) chunks
 * (their mean: n / (T - b) + 1/2, at least one), and the half iteration.
 * Only the prefill and the chunks grow with the prompt. */
static double ttft_prefill(const ttft_t *p, double x)
{
    double c = p->chunks * x + 0.5;
    return p->in_s * x + (p->step > 0 ? (c > 1 ? c : 1) * p->step : 0) + p->fix;
}

/* The prefill queue (engines v1 and v0).  Each replica's prompts form an
 * M/G/1 queue, FCFS: a prompt of n tokens is prefilled in the iterations'
 * leftover budget, T - b tokens an iteration that also decodes b sequences
 * (v1), so it holds the prefill for S = n (1/prefill + step / (T - b))
 * seconds (v0, no chunking: S = n / prefill, decode paused); rho = l E[S]
 * per replica, R = E[S^2] / (2 E[S]) the residual of the prompt in service.
 * With Poisson arrivals split at random (round_robin is taken as that too)
 * it is Pollaczek-Khinchine: P(wait > 0) = rho, E[W] = rho R / (1 - rho);
 * gamma gaps (ca^2 = 1 / shape) scale E[W] by (ca^2 + cs^2) / (1 + cs^2),
 * Kingman's GI/G/1 approximation (the queue length below with it).
 *
 * least_loaded sends a prompt to the replica with the fewest requests,
 * decoding ones included.  Mean-field (the queues independent, as in the
 * analyses of join-the-shortest-queue and power-of-d routing): replica i
 * holds D_i ~ Poisson(b) decoding sequences (an infinite-server stage,
 * b = its mean batch) and Q_i prompts in its prefill queue, Q_i = 0 with
 * probability 1 - rho, else geometric on 1, 2, ... with the M/G/1 mean
 * L = rho + l E[W] (Little), ratio sig = 1 - rho / L.  The router takes the
 * least D_i + Q_i over the N replicas (ties at random); a prompt that lands
 * on a replica with Q = j waits R + (j - 1) E[S].  With C the count's law
 * and c = P(C = x), g = P(C > x), the chosen replica has count x with
 * probability ((c + g)^N - g^N) / (N c) for each replica, so
 *   P(wait) = N sum_x T(x) rho G(x),
 *   E[W]    = N sum_x T(x) rho (R G(x) + E[S] H(x)),
 * G(x) = P(D + Q = x | Q >= 1) and H(x) = E[(Q - 1); D + Q = x | Q >= 1]
 * by the recursions G(x) = sig G(x - 1) + (1 - sig) p(x - 1) and
 * H(x) = sig (H(x - 1) + G(x - 1)), p the Poisson(b) law.  N = 1 gives
 * Pollaczek-Khinchine back exactly.  The wait beyond 0 is taken as
 * exponential of the conditional mean (exact for M/M/1).  At rho >= 1 the
 * fluid backlog holds the queue instead (none here). */
static void prefill_queue(const svc_t *s, double l, double in, double ip, double st,
                          double room, double b, double reps, ttft_t *q)
{
    double u = ip;      /* seconds of prefill per prompt token */
    if (s->cfg->engine_sched == FS_SVC_V1)
        u += st / (room > 1 ? room : 1);
    double rho = l * in * u, es = in * u, es2 = s->in2 * u * u;
    if (!(l > 0) || !(rho < 1) || !(es > 0))
        return;
    double r = es2 / (2 * es), w1 = rho * r / (1 - rho);
    if (s->cfg->process == FS_SVC_GAMMA) {
        /* renewal arrivals of gamma gaps, ca^2 = 1 / shape: Kingman's GI/G/1
         * wait, P-K's times (ca^2 + cs^2) / (1 + cs^2) */
        double cs2 = es2 / (es * es) - 1;
        w1 *= (1.0 / s->cfg->shape + cs2) / (1 + cs2);
    }
    int nr = reps > 1.5 && s->cfg->router != FS_ROUTE_RR ? (int)llround(reps) : 1;
    if (nr == 1 || !(b >= 0)) {
        q->pw = rho;
        q->ew = w1;
        return;
    }
    double sig = 1 - rho / (rho + l * w1);
    /* the counts up to where both laws have left less than 1e-12 */
    double xmax = b + 12 * sqrt(b + 1) + 12 + (sig > 0 ? 28 / -log(sig) : 0);
    long nx = xmax < 20000 ? (long)xmax : 20000;
    double pd = exp(-b), g = 0, h = 0, ge = 1, gen = 1, pw = 0, ew = 0;
    /* gen = P(C >= x)^N, the chance that no replica has fewer: past
     * where it is negligible no prompt lands */
    for (long x = 0; x <= nx && gen > 1e-16; x++) {
        if (x > 0) {            /* G(x), H(x) from x - 1; then p(x) */
            h = sig * (h + g);
            g = sig * g + (1 - sig) * pd;
            pd *= b / (double)x;
        }
        double c = (1 - rho) * pd + rho * g, gt = ge - c;
        if (gt < 0)
            gt = 0;
        double gtn = pow(gt, nr);
        if (c > 0) {
            double t = (gen - gtn) / c;     /* N T(x) */
            pw += t * rho * g;
            ew += t * rho * (r * g + es * h);
        }
        ge = gt;
        gen = gtn;
    }
    q->pw = pw < 1 ? pw : 1;
    q->ew = ew;
}

/* engine v1 / v0 at the current arrival rate: mean values of a replica's
 * iterations (arrivals spread evenly over the ready replicas, lambda each).
 * In steady state b sequences decode in an iteration on average; every
 * request's prompt is prefilled in the iterations (lambda in / prefill of
 * each second) and each decoding sequence emits a token per iteration, so
 * an iteration takes t = b in / ((out - 1) prefill) + step(b) (the prefill
 * shared out over the decode tokens), and by Little's law b = lambda
 * (out - 1) t; with step(b) = s1 + k (b - 1) linear that solves to
 * b = lambda (out - 1) (s1 - k) / (1 - lambda in / prefill - lambda (out - 1) k).
 * TPOT = t.  A prompt of n tokens takes n / prefill plus, v1, a decode
 * step for each of its about n / (T - b) + 1/2 chunks (at least one: even a
 * short prompt is prefilled in an iteration with the decodes), plus half an
 * iteration in progress when it comes; the wait behind other prompts'
 * prefill is *q (prefill_queue).  Saturated (no positive solution, or b above the saturated
 * batch): the saturated iteration.  slots: its own prefill and the
 * full-batch step. */
static void fluid_at_load(const svc_t *s, double lam, double tp[TP_N], ttft_t *q)
{
    *q = (ttft_t){.in_s = fluid_prefill(s)};
    tp[TP_T] = tp[TP_ST] = fluid_step(s);
    tp[TP_R] = tp[TP_EY] = tp[TP_EY2] = 0;
    double *tpot = &tp[TP_T];
    double n = s->slots_ready;
    if (s->cfg->engine_sched == FS_SVC_SLOTS || !(n > 0) || s->mean_out <= 1)
        return;
    double s1 = s->agg_s1 / n, sb = s->agg_sb / n, bm = s->agg_bm / n, bs = s->agg_bs / n;
    double ip = s->agg_ip / n, in = s->mean_in, out = s->mean_out;
    double reps = bm > 0 ? n / bm : 0, l = reps > 0 ? lam / reps : 0;
    double k = bm > 1 ? (sb - s1) / (bm - 1) : 0;
    double den = 1 - l * in * ip - l * (out - 1) * k;
    double b = den > 0 ? l * (out - 1) * (s1 - k) / den : bs;
    if (!(b >= 0) || b > bs)
        b = bs;
    double st = bm > 1 ? s1 + k * (b > 1 ? b - 1 : 0) : sb;
    double t = b * in * ip / (out - 1) + st;
    if (t > *tpot)
        t = *tpot;
    double T = (double)s->cfg->max_tokens;
    q->in_s = in * ip;
    q->fix = t / 2;
    if (s->cfg->engine_sched == FS_SVC_V1) {
        q->chunks = T - b > 1 ? in / (T - b) : 0;
        q->step = st;
    }
    *tpot = t;
    prefill_queue(s, l, in, ip, st, T - b, b, reps, q);
    /* The spread of a request's TPOT: over its m decode iterations (m t
     * seconds) its replica prefills the prompts that arrive meanwhile, a
     * compound Poisson sum X of their prefill times Y = tokens / prefill
     * (lambda t arrivals per iteration), so TPOT = st + X / m, of mean t
     * (tpot_spread, per output slice). */
    tp[TP_ST] = st < t ? st : t;
    tp[TP_R] = l * t;
    tp[TP_EY] = in * ip;
    tp[TP_EY2] = s->in2 * ip * ip;
}

/* The TPOT pieces of the state tp (fluid_at_load): per output slice of
 * m = out - 1 decode iterations, the prompts arriving at the replica in
 * them are N ~ Poisson(L = r m).  With probability exp(-L) none: TPOT =
 * st, a point.  Else the excess X / m, given N >= 1, as a gamma law of the
 * conditional compound-Poisson mean and variance, cut at the GQ quantile
 * edges into uniform pieces (exact at the edges).  Remembered: the state
 * changes far less often than the fluid queue advances. */
static const comp_t *tpot_spread(svc_t *s, const double tp[TP_N], int *n)
{
    static const double edge[GQ + 1] = {0, 0.5, 0.8, 0.95, 0.99, 0.999, 0.9999};
    /* the standard normal quantiles of the edges (gsl_cdf_ugaussian_Pinv),
     * for the Wilson-Hilferty gamma quantile: x_p = k theta (1 - 1/(9k) +
     * z_p / (3 sqrt k))^3, within a few percent from shape 0.5 up (4% at
     * the median of shape 0.5, 0.6% at its p99); a GSL inversion at every
     * state change cost the fluid year a quarter of its time */
    static const double z[GQ + 1] = {0, 0, 0.8416212335729143, 1.6448536269514722,
                                     2.3263478740408408, 3.0902323061678132, 3.7190164854556804};
    if (s->n_tp_comp && !memcmp(s->tp_key, tp, sizeof s->tp_key)) {
        *n = s->n_tp_comp;
        return s->tp_comp;
    }
    double t = tp[TP_T], st = tp[TP_ST], r = tp[TP_R], ey = tp[TP_EY], ey2 = tp[TP_EY2];
    int k = 0;
    if (!(t - st > 1e-12) || !(r > 0) || !(ey > 0)) {
        s->tp_comp[k++] = (comp_t){.w = 1, .a = t, .b = t, .theta = -1};
    } else {
        for (int j = 0; j < OQ; j++) {
            double m = s->oq[j] - 1 < 1 ? 1 : s->oq[j] - 1, L = r * m, p0 = exp(-L);
            double mean = L * ey / (1 - p0), ex2 = (L * ey2 + L * L * ey * ey) / (1 - p0);
            double var = (ex2 - mean * mean) / (m * m);
            mean /= m;
            if (p0 > 0)
                s->tp_comp[k++] = (comp_t){.w = s->oqw[j] * p0, .a = st, .b = st, .theta = -1};
            double lo = st;
            for (int e = 1; e <= GQ; e++) {
                double hi = st + mean;
                if (var > 0) {
                    double k9 = 9 * mean * mean / var;      /* 9 x the shape */
                    double c = 1 - 1 / k9 + z[e] / sqrt(k9);
                    hi = st + (c > 0 ? mean * c * c * c : 0);
                }
                if (!isfinite(hi) || hi < lo)
                    hi = lo;
                double w = s->oqw[j] * (1 - p0) * (edge[e] - edge[e - 1]) / edge[GQ];
                s->tp_comp[k++] = (comp_t){.w = w, .a = lo, .b = hi, .theta = -1};
                lo = hi;
            }
        }
    }
    memcpy(s->tp_key, tp, sizeof s->tp_key);
    s->n_tp_comp = k;
    *n = k;
    return s->tp_comp;
}

/* fs_erlang_c, remembered: it is O(servers) and asked at every sync. */
static double erlang_c_memo(svc_t *s, double a, unsigned c)
{
    if (a != s->ec_a || c != s->ec_c) {
        s->ec_a = a;
        s->ec_c = c;
        s->ec_p = fs_erlang_c(a, c);
    }
    return s->ec_p;
}

/* The CDF of component c at x. */
static double comp_cdf(const comp_t *c, double x)
{
    if (c->theta >= 0)
        return x < c->a ? 0 : 1 - c->pw * (c->theta > 0 ? exp(-(x - c->a) / c->theta) : 0);
    return x >= c->b ? 1 : x < c->a ? 0 : (x - c->a) / (c->b - c->a);
}

/* The TTFT of one prompt slice (weight n): the wait `wait` plus a prefill
 * spread uniformly on [lo, hi], the TTFTs less the waits of the slice's
 * edge quantiles, as up to two components into out[] (the count
 * returned).  A uniform wait on [a, b]: the sum on its support [a + lo,
 * b + hi] (its mean kept, exact when either is a point).  An atom at a
 * with an exponential tail (P(wait > a + y) = pw exp(-y / theta)): beyond
 * a + hi the sum's tail is exactly an exponential,
 *   P(TTFT > a + hi + y) = pw f exp(-y / theta),
 *   f = E[exp(-(hi - U) / theta)] = theta (1 - exp(-(hi - lo) / theta)) / (hi - lo),
 * so an exponential of weight pw f from a + hi, and the rest, 1 - pw f,
 * uniform on [a + lo, a + hi] (the CDF exact at both ends, linear
 * between).  A point slice (lo = hi) gives f = 1: the wait shifted. */
static int slice_ttft(comp_t wait, double n, double lo, double hi, comp_t out[2])
{
    if (wait.theta < 0) {
        out[0] = (comp_t){.w = n, .a = wait.a + lo, .b = wait.b + hi, .theta = -1};
        return 1;
    }
    double pt = 0;
    if (wait.theta > 0 && wait.pw > 0) {
        double d = hi - lo;
        pt = wait.pw * (d > 0 ? -expm1(-d / wait.theta) * wait.theta / d : 1);
    }
    out[0] = (comp_t){.w = n * (1 - pt), .a = wait.a + lo, .b = wait.a + hi, .theta = -1};
    out[1] = (comp_t){.w = n * pt, .a = wait.a + hi, .pw = 1, .theta = wait.theta};
    return 2;
}

/* n requests completed with waits distributed as `wait` (offsets from 0)
 * and the prefill of `pre`: TTFT = wait + prefill, the prefill spread as
 * the prompt tokens are (PQ quantile slices, s->pq; each spread between
 * its edges, s->pqe: slice_ttft).  The mean from the slices' midpoints. */
static int fluid_done(svc_t *s, double n, comp_t wait, const double tp[TP_N], const ttft_t *pre)
{
    double tpot = tp[TP_T];
    if (!(n > 0))
        return 0;
    s->f_completed += n;
    s->bk.f_completed += n;
    s->tokens += n * s->mean_out;
    s->bk.tokens += n * s->mean_out;
    double slo = fs_time_to_s(s->cfg->slo_ttft);
    int tpot_bad = s->cfg->slo_tpot > 0 && !isnan(tpot) &&
                   tpot > fs_time_to_s(s->cfg->slo_tpot) + 1e-12;
    double ok = 0, mean = wait.theta >= 0 ? wait.a + wait.pw * wait.theta
                                          : 0.5 * (wait.a + wait.b);
    if (pre->step > 0) {
        for (int k = 0; k < PQ; k++)
            mean += s->pqw[k] * ttft_prefill(pre, s->pq[k]);
    } else {
        mean += pre->in_s + pre->fix;      /* the pq have mean 1 */
    }
    double lo = ttft_prefill(pre, s->pqe[0]);
    for (int k = 0; k < PQ; k++) {
        double hi = ttft_prefill(pre, s->pqe[k + 1]);
        comp_t c[2];
        int nc = slice_ttft(wait, n * s->pqw[k], lo, hi, c);
        lo = hi;
        for (int j = 0; j < nc; j++) {
            /* SLO: the share of the slice with TTFT <= slo */
            ok += c[j].w / n * comp_cdf(&c[j], slo);
            if (push_comp(&s->bk.cttft, &s->bk.n_cttft, &s->bk.cap_cttft, c[j]))
                return FS_ENOMEM;
        }
    }
    ok = tpot_bad ? 0 : ok;
    s->bk.f_met += n * ok;
    if (s->bk.start >= s->warmup) {    /* the run's figures: after the warm-up */
        s->win_n += n;
        s->win_met += n * ok;
        s->ttft_sum += n * mean;
    }
    if (isnan(tpot))
        return 0;
    int nc;
    const comp_t *pc = tpot_spread(s, tp, &nc);
    for (int k = 0; k < nc; k++) {
        comp_t c = pc[k];
        c.w *= n;
        if (push_comp(&s->bk.ctpot, &s->bk.n_ctpot, &s->bk.cap_ctpot, c))
            return FS_ENOMEM;
    }
    return 0;
}

static int co_push(svc_t *s, double t0, double t1, double rate)
{
    if (!(t1 > t0) || !(rate > 0))
        return 0;
    if (s->co_n) {
        cohort_t *l = &s->co[(s->co_head + s->co_n - 1) % s->co_cap];
        if (l->t1 == t0 && l->rate == rate) {
            l->t1 = t1;
            return 0;
        }
    }
    if (s->co_n == s->co_cap &&
        fs_svc_ring_grow((void **)&s->co, &s->co_cap, s->co_head, s->co_n, sizeof *s->co))
        return FS_ENOMEM;
    s->co[(s->co_head + s->co_n) % s->co_cap] = (cohort_t){t0, t1, rate};
    s->co_n++;
    return 0;
}

/* Drains `mass` requests from the backlog's head, departing at rate cap
 * from time d0: each cohort's requests leave with waits spread uniformly. */
static int co_drain(svc_t *s, double mass, double d0, double cap, const ttft_t *pre,
                    const double tp[TP_N])
{
    while (mass > 1e-12 && s->co_n) {
        cohort_t *h = &s->co[s->co_head];
        double m = h->rate * (h->t1 - h->t0);
        double take = m <= mass ? m : mass;
        double a1 = m <= mass ? h->t1 : h->t0 + take / h->rate;
        double d1 = d0 + take / cap;
        double w0 = d0 - h->t0, w1 = d1 - a1;
        if (w0 < 0)
            w0 = 0;
        if (w1 < 0)
            w1 = 0;
        comp_t c = {.a = w0 < w1 ? w0 : w1, .b = w0 < w1 ? w1 : w0, .theta = -1};
        int rc = fluid_done(s, take, c, tp, pre);
        if (rc)
            return rc;
        s->backlog -= take;
        mass -= take;
        d0 = d1;
        if (m <= take + 1e-12) {
            s->co_head = (s->co_head + 1) % s->co_cap;
            s->co_n--;
        } else {
            h->t0 = a1;
        }
    }
    if (!s->co_n || s->backlog < 1e-9)
        s->backlog = s->co_n ? s->backlog : 0;
    return 0;
}

/* Integrates the fluid queue from s->f_at to `to` at the current rate and
 * ready replicas. */
int fs_svfluid_advance_to(svc_t *s, fs_time_t to)
{
    if (s->cfg->mode != FS_SVC_FLUID || to <= s->f_at)
        return 0;
    double t = fs_time_to_s(s->f_at), t1 = fs_time_to_s(to);
    s->f_at = to;
    double slots, mu = fluid_mu(s, &slots), cap = slots * mu, lam = s->lam;
    double tp[TP_N];
    ttft_t pre;
    fluid_at_load(s, lam, tp, &pre);
    if (s->mean_out <= 1)
        tp[TP_T] = NAN;
    s->f_requests += lam * (t1 - t);
    s->bk.f_arrivals += lam * (t1 - t);
    while (t1 - t > 1e-12) {
        if (s->backlog <= 1e-9 && lam < cap) {     /* stationary M/G/c */
            double n = lam * (t1 - t);
            double pw = erlang_c_memo(s, lam / mu, (unsigned)llround(slots));
            double ca2 = s->cfg->process == FS_SVC_GAMMA ? 1.0 / s->cfg->shape : 1.0;
            double ew = pw / (cap - lam) * (ca2 + s->cs2) / 2.0;
            /* the batch slots' wait, then the prefill queue's: an atom at 0
             * and an exponential tail of the sum's mean */
            double p0 = 1 - (1 - pw) * (1 - pre.pw), ez = ew + pre.ew;
            comp_t c = {.a = 0, .pw = p0, .theta = p0 > 0 ? ez / p0 : 0};
            int rc = fluid_done(s, n, c, tp, &pre);
            if (rc)
                return rc;
            s->bk.wait_s += lam * ew * (t1 - t);    /* Little: waiting = lambda W */
            t = t1;
            break;
        }
        double end = t1;
        if (cap > lam && s->backlog > 0) {
            double te = t + s->backlog / (cap - lam);
            if (te < end)
                end = te;
        }
        int rc = co_push(s, t, end, lam);
        if (rc)
            return rc;
        s->backlog += lam * (end - t);
        s->bk.wait_s += (s->backlog - 0.5 * (lam - cap) * (end - t)) * (end - t);
        if (cap > 0 && (rc = co_drain(s, cap * (end - t), t, cap, &pre, tp)))
            return rc;
        if (end < t1 && s->backlog < 1e-6) {
            s->backlog = 0;
            s->co_n = 0;
        }
        t = end;
    }
    return 0;
}

/* The HPA's view in fluid mode: requests in the service and waiting. */
void fs_svfluid_load(svc_t *s, double *in_service, double *waiting)
{
    double slots, mu = fluid_mu(s, &slots), cap = slots * mu, lam = s->lam;
    if (slots <= 0 || lam >= cap || s->backlog > 0) {
        *in_service = slots;
        *waiting = s->backlog;
        return;
    }
    double pw = erlang_c_memo(s, lam / mu, (unsigned)llround(slots));
    double ca2 = s->cfg->process == FS_SVC_GAMMA ? 1.0 / s->cfg->shape : 1.0;
    double ew = pw / (cap - lam) * (ca2 + s->cs2) / 2.0;
    *in_service = lam / mu;
    *waiting = lam * ew;
}

