/*
 * fs_service_arrive: request arrivals of the services (fs_service_int.h):
 * a Poisson or gamma process over the week's rate profile, or a request
 * trace; in fluid mode, the rate of each hour.
 */
#include "fs_service_int.h"

#include <gsl/gsl_randist.h>
#include <math.h>

/* The arrival time after `from` for a unit of operational time x: the
 * integral of the week's rate profile from `from` reaches x.  NEVER when
 * the profile is all zero. */
static fs_time_t advance_rate(const svc_t *s, fs_time_t from, double x)
{
    const fs_time_t hour = 3600 * FS_US_PER_S;
    double tot = s->week_rate;
    if (!(tot > 0))
        return FS_TIME_NEVER;
    fs_time_t t = from;
    /* whole weeks first */
    double week = tot * 3600.0;
    if (x > week) {
        double w = floor(x / week);
        t += (fs_time_t)w * 168 * hour;
        x -= w * week;
    }
    for (;;) {
        size_t k = (size_t)((t / hour) % (FS_SYNTH_HOURS * FS_SYNTH_DAYS));
        fs_time_t end = (t / hour + 1) * hour;
        double r = s->mult[k];
        double cap = r * fs_time_to_s(end - t);
        if (r > 0 && x <= cap) {
            fs_time_t d = (fs_time_t)llround(x / r * 1e6);
            return t + (d > 0 ? d : 0);
        }
        x -= cap;
        t = end;
    }
}

static uint32_t draw_tokens(const fs_dist_t *d, gsl_rng *g)
{
    double v = fs_dist_sample(d, g);
    if (!(v >= 1))
        return 1;
    return v > 4e9 ? 4000000000u : (uint32_t)llround(v);
}

/* The next request after the one at `prev` (synthetic) or from the trace;
 * 0, or 1 when there are no more, or an error. */
static int next_request(svc_t *s, fs_time_t prev, fs_request_t *r, fs_error_t *err)
{
    const fs_service_cfg_t *c = s->cfg;
    if (c->process == FS_SVC_TRACE) {
        int rc = fs_reqtrace_next(s->trace, r, err);
        if (c->prefix_ids == 0)     /* prefix columns drive the cache with requests.prefix.ids */
            r->prefix = r->prefix_len = 0;
        return rc == 1 ? 0 : rc == 0 ? 1 : rc;
    }
    gsl_rng *g = fs_rng_gsl(&s->rng_arr);
    double x = c->process == FS_SVC_GAMMA ? gsl_ran_gamma(g, c->shape, 1.0 / c->shape)
                                          : gsl_ran_exponential(g, 1.0);
    fs_time_t at = advance_rate(s, prev, x);
    if (at == FS_TIME_NEVER)
        return 1;
    if (at == prev && prev > 0)
        at = prev + 1;      /* one per microsecond at most */
    r->at = at;
    r->input = draw_tokens(&c->input, fs_rng_gsl(&s->rng_tok));
    r->output = draw_tokens(&c->output, fs_rng_gsl(&s->rng_tok));
    r->prefix = r->prefix_len = 0;
    if (c->prefix_ids > 0) {    /* its own stream: the draws above do not move */
        double u = fs_rng_uniform(&s->rng_pre);
        uint32_t lo = 0, hi = c->prefix_ids - 1;    /* the first k with cdf[k] > u */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (s->pre_cdf[mid] > u)
                hi = mid;
            else
                lo = mid + 1;
        }
        r->prefix = lo + 1;
        r->prefix_len = s->pre_len[lo + 1] < r->input ? s->pre_len[lo + 1] : r->input;
    }
    return 0;
}


int fs_svarr_schedule(services_t *a, svc_t *s, fs_model_t *m, fs_time_t prev,
                            fs_error_t *err)
{
    int rc = next_request(s, prev, &s->next, err);
    if (rc == 1) {
        s->have_next = 0;
        return 0;
    }
    if (rc)
        return rc;
    s->have_next = 1;
    fs_time_t at = s->next.at < fs_model_now(m) ? fs_model_now(m) : s->next.at;
    if (at >= fs_model_horizon(m))
        return 0;
    return fs_model_module_event(m, a->id, at, FS_PRIO_ARRIVAL, EVD(EV_ARRIVAL, s->idx, 0, 0),
                                 NULL);
}

int fs_svarr_arrival(services_t *a, svc_t *s, fs_model_t *m)
{
    fs_time_t now = fs_model_now(m);
    fs_svc_settle(s, now);
    req_t q = {.arrival = now, .in = s->next.input, .out = s->next.output,
               .pid = s->next.prefix, .plen = s->next.prefix_len};
    s->requests++;
    s->bk.arrivals++;
    int rc = fs_sveng_push(s, &q, 0);
    if (!rc && s->live == 0 && s->cfg->min_replicas == 0 &&
        (s->cfg->max_replicas > 0))      /* the activator: one replica from zero */
        rc = fs_svhpa_scale_to(a, s, m, 1);
    if (!rc)
        rc = fs_sveng_dispatch(a, s, m);
    if (rc)
        return rc;
    fs_error_t err;
    fs_error_clear(&err);
    rc = fs_svarr_schedule(a, s, m, now, &err);
    if (rc)
        fs_model_error(m, &err);
    return rc;
}

/* The fluid rate of the hour of the week that starts now, and the next. */
int fs_svarr_rate_change(services_t *a, svc_t *s, fs_model_t *m)
{
    int rc = fs_svfluid_advance_to(s, fs_model_now(m));
    if (rc)
        return rc;
    const fs_time_t hour = 3600 * FS_US_PER_S;
    fs_time_t now = fs_model_now(m);
    s->lam = s->mult[(size_t)((now / hour) % (FS_SYNTH_HOURS * FS_SYNTH_DAYS))];
    if (s->live == 0 && s->cfg->min_replicas == 0 && s->cfg->max_replicas > 0 && s->lam > 0 &&
        (rc = fs_svhpa_scale_to(a, s, m, 1)))
        return rc;
    fs_time_t next = (now / hour + 1) * hour;
    if (next >= fs_model_horizon(m))
        return 0;
    return fs_model_module_event(m, a->id, next, FS_PRIO_TIMER, EVD(EV_RATE, s->idx, 0, 0), NULL);
}

