#include "fs_cost.h"
#include "fs_catalog.h"
#include "fs_power.h"
#include "../sim/fs_alloc.h"

#include <math.h>
#include <string.h>
#include <strings.h>

/*
 * Default prices per GPU type: docs/cost.md (from shared/docs/DOMAIN.md
 * sections 4.1 and 4.4).  GPU prices are the GPU alone; the server and the
 * network are added by cost.server_multiplier and cost.network_share.
 */
static const fs_cost_price_t prices[] = {
    {"H100", 25000, 6.88,
     "GPU: Raymond James est. $25k-30k via Epoch AI (low end); cloud: AWS p5.48xlarge "
     "after the June 2025 cut, $55.04/8"},
    {"H200", 32000, 7.91,
     "GPU: ~$32k 'MSRP', HF hardware page [U]; cloud: AWS p5en.48xlarge $63.296/8 "
     "(dstack catalog, 2025/26)"},
    {"A100", 12500, 4.10,
     "GPU: $12.5k (2022), Epoch AI hardware data; cloud: AWS p4d.24xlarge $32.77/8 (2021)"},
    {"B200", 35000, 0,
     "GPU: $30k-40k, Jensen Huang / Morgan Stanley, secondary [U] (midpoint); no cloud price"},
};

/* Case-insensitive; NULL if the type has no price row. */
static const fs_cost_price_t *fs_cost_price_find(const char *gpu)
{
    for (size_t i = 0; gpu && i < sizeof prices / sizeof prices[0]; i++)
        if (strcasecmp(prices[i].gpu, gpu) == 0)
            return &prices[i];
    return NULL;
}

int fs_cost_carbon_modelled(const fs_cost_cfg_t *cc)
{
    int any = cc->carbon_intensity > 0 || cc->n_carbon_hours > 0;
    for (size_t i = 0; !any && i < cc->n_pools; i++)
        any = cc->pools[i].embodied_kgco2e > 0;
    return any;
}

void fs_cost_rate_owned(const fs_cost_cfg_t *cc, double gpu_price, double peak_w,
                        fs_cost_rate_t *out)
{
    memset(out, 0, sizeof *out);
    out->billing = FS_BILL_OWNED;
    double k = gpu_price * cc->server_multiplier / (1.0 - cc->network_share);
    double dep_s = fs_time_to_s(cc->depreciation);
    out->capex_per_gpu = k;
    out->peak_kw = peak_w / 1000.0;
    out->dep_per_s = dep_s > 0 ? k * (1.0 - cc->residual) / dep_s : 0.0;
    out->ops_per_s = k * cc->ops_share / (FS_COST_HOURS_PER_YEAR * 3600.0);
    out->colo_per_s = out->peak_kw * cc->colocation / (FS_COST_HOURS_PER_MONTH * 3600.0);
    out->busy_kw = out->peak_kw * cc->busy_fraction;
    out->idle_kw = out->peak_kw * cc->idle_fraction;
    out->pue = cc->pue;
    out->kwh_price = cc->electricity;
    out->carbon_hourly = cc->n_carbon_hours > 0;
    out->g_per_kwh = out->carbon_hourly ? 0.0 : cc->carbon_intensity;
}

/* cost.energy: power: the rates' energy from the power model for a GPU of
 * TDP tdp_w (> 0, at most the peak; docs/cost.md). */
static void fs_cost_rate_power(const fs_cost_cfg_t *cc, double tdp_w, fs_cost_rate_t *out)
{
    double host_kw = out->peak_kw - tdp_w / 1000.0;
    out->power = 1;
    out->gpu_idle_kw = fs_power_w(tdp_w, 0, 0) / 1000.0;
    out->host_busy_kw = host_kw * cc->busy_fraction;
    out->host_idle_kw = host_kw * cc->idle_fraction;
}

void fs_cost_rate_cloud(int billing, double price_per_hour, fs_cost_rate_t *out)
{
    memset(out, 0, sizeof *out);
    out->billing = billing;
    out->cloud_per_s = price_per_hour / 3600.0;
    out->per_busy = billing == FS_BILL_ON_DEMAND || billing == FS_BILL_SPOT;
}

/* The cost.pools row of pool `name`, or NULL. */
static const fs_cost_pool_cfg_t *pool_row(const fs_cost_cfg_t *cc, const char *name)
{
    for (size_t i = 0; i < cc->n_pools; i++)
        if (cc->pools[i].pool && strcmp(cc->pools[i].pool, name) == 0)
            return &cc->pools[i];
    return NULL;
}

static int pool_known(const fs_cluster_cfg_t *cl, const char *name)
{
    for (size_t i = 0; i < cl->n_pools; i++)
        if (cl->pools[i].name && name && strcmp(cl->pools[i].name, name) == 0)
            return 1;
    return 0;
}

/* Every pool named in cost.pools / cost.purchases exists, each at most
 * once in cost.pools. */
static int check_names(const fs_config_t *cfg, fs_error_t *err)
{
    const fs_cost_cfg_t *cc = &cfg->cost;
    for (size_t i = 0; i < cc->n_pools; i++) {
        if (!pool_known(&cfg->cluster, cc->pools[i].pool))
            return fs_error_set(err, FS_EINVAL, "cost.pools.%zu.pool: no cluster pool named '%s'",
                                i, cc->pools[i].pool ? cc->pools[i].pool : "");
        if (pool_row(cc, cc->pools[i].pool) != &cc->pools[i])
            return fs_error_set(err, FS_EINVAL, "cost.pools.%zu.pool: pool '%s' is listed twice",
                                i, cc->pools[i].pool);
    }
    for (size_t i = 0; i < cc->n_purchases; i++)
        if (!pool_known(&cfg->cluster, cc->purchases[i].pool))
            return fs_error_set(err, FS_EINVAL,
                                "cost.purchases.%zu.pool: no cluster pool named '%s'", i,
                                cc->purchases[i].pool ? cc->purchases[i].pool : "");
    return 0;
}

/* Cloud price of billing b from the type's on-demand price. */
static double cloud_price(const fs_cost_cfg_t *cc, int b, double on_demand)
{
    switch (b) {
    case FS_BILL_RESERVED_1Y: return on_demand * (1.0 - cc->reserved_1y_discount);
    case FS_BILL_RESERVED_3Y: return on_demand * (1.0 - cc->reserved_3y_discount);
    case FS_BILL_SPOT: return on_demand * cc->spot_multiplier;
    default: return on_demand;
    }
}

/* Resolves pool i.  0, 1 (a price is missing: *what says which key), 2
 * (cost.energy: power and the peak is below the TDP), 3 (cost.energy: power
 * and the GPU has no TDP in the catalog). */
static int resolve(const fs_config_t *cfg, size_t i, fs_cost_rate_t *out, const char **what)
{
    const fs_cost_cfg_t *cc = &cfg->cost;
    const fs_pool_cfg_t *pc = &cfg->cluster.pools[i];
    const fs_cost_pool_cfg_t *row = pool_row(cc, pc->name);
    const fs_cost_price_t *def = fs_cost_price_find(pc->gpu);
    int billing = row ? row->billing : FS_BILL_OWNED;
    if (billing == FS_BILL_LEASE) { /* the monthly rate per GPU, billed per GPU-s in the fleet */
        *what = "lease_rate";
        if (!(row->lease_rate > 0))
            return 1;
        fs_cost_rate_cloud(billing, row->lease_rate / FS_COST_HOURS_PER_MONTH, out);
        return 0;
    }
    if (billing != FS_BILL_OWNED) {
        double price = row->price > 0 ? row->price
                       : def && def->on_demand > 0 ? cloud_price(cc, billing, def->on_demand) : 0;
        *what = "price";
        if (!(price > 0))
            return 1;
        fs_cost_rate_cloud(billing, price, out);
        return 0;
    }
    double gp = row && row->gpu_price > 0 ? row->gpu_price : def ? def->gpu_price : 0;
    int ci = pc->gpu ? fs_catalog_find(pc->gpu) : -1;
    double pw = row && row->power_w > 0 ? row->power_w : ci >= 0 ? fs_catalog_get((size_t)ci)->host_w : 0;
    *what = !(gp > 0) ? "gpu_price" : "power_w";
    if (!(gp > 0) || !(pw > 0))
        return 1;
    fs_cost_rate_owned(cc, gp, pw, out);
    if (cc->energy == FS_ENERGY_POWER) {
        double tdp = ci >= 0 ? fs_catalog_get((size_t)ci)->tdp_w : 0;
        if (!(tdp > 0))
            return 3;
        if (pw < tdp)
            return 2;
        fs_cost_rate_power(cc, tdp, out);
    }
    /* embodied carbon: straight line over the depreciation period, per GPU */
    double dep_s = fs_time_to_s(cc->depreciation);
    if (row && row->embodied_kgco2e > 0 && dep_s > 0 && pc->gpus_per_node > 0)
        out->embodied_per_s = row->embodied_kgco2e / pc->gpus_per_node / dep_s;
    return 0;
}

int fs_cost_rates(const fs_config_t *cfg, fs_cost_rate_t *out, fs_error_t *err)
{
    int rc = check_names(cfg, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < cfg->cluster.n_pools; i++) {
        const char *what = "";
        int r = resolve(cfg, i, &out[i], &what);
        if (!r)
            continue;
        const fs_pool_cfg_t *pc = &cfg->cluster.pools[i];
        if (r == 3)
            return fs_error_set(err, FS_EINVAL, "cost.energy: power: pool '%s': GPU '%s' has no "
                                "TDP in the catalog (docs/catalog.md)", pc->name,
                                pc->gpu ? pc->gpu : "?");
        if (r == 2)     /* the host part would be negative */
            return fs_error_set(err, FS_EINVAL,
                                "cost.energy: power: pool '%s': peak power per GPU %.6g W is below "
                                "the GPU's TDP (%.6g W); give cost.pools ({pool: %s, power_w: ...}) "
                                "at least the TDP", pc->name, out[i].peak_kw * 1000.0,
                                fs_catalog_get((size_t)fs_catalog_find(pc->gpu))->tdp_w, pc->name);
        if (!cfg->cost.given)
            return 1;
        return fs_error_set(err, FS_EINVAL,
                            "cost: pool '%s' (GPU %s) has no default %s; give it in cost.pools "
                            "({pool: %s, %s: ...})", pc->name, pc->gpu ? pc->gpu : "?", what,
                            pc->name, what);
    }
    return 0;
}

void fs_cost_cell(const fs_cost_rate_t *r, const fs_usage_cell_t *u, fs_cost_cell_t *out)
{
    memset(out, 0, sizeof *out);
    out->gpu_s_owned = u->owned;
    out->gpu_s_busy = u->busy;
    if (r->billing == FS_BILL_OWNED) {
        out->capex = r->dep_per_s * u->owned;
        out->ops = r->ops_per_s * u->owned;
        out->colocation = r->colo_per_s * u->owned;
        /* carbon: the energy's kWh, each at its hour's intensity (g), in kg */
        double busy_g = r->carbon_hourly ? u->busy_g : u->busy * r->g_per_kwh;
        double idle_g = r->carbon_hourly ? u->idle_g : u->idle * r->g_per_kwh;
        out->carbon_embodied_kg = r->embodied_per_s * u->owned;
        double idle_kwh, op_kg;
        if (!r->power) {
            idle_kwh = u->idle * r->idle_kw / 3600.0 * r->pue;
            out->energy_kwh = u->busy * r->busy_kw / 3600.0 * r->pue + idle_kwh;
            op_kg = (busy_g * r->busy_kw + idle_g * r->idle_kw) / 3600.0 * r->pue / 1000.0;
        } else {
            /* the power model (docs/cost.md "Energy from the power model"):
             * every busy or idle GPU at its idle draw, the jobs' draw above
             * it (gpu_j, J), the host part at its busy / idle fraction */
            double busy_kw = r->gpu_idle_kw + r->host_busy_kw;
            double idle_kw = r->gpu_idle_kw + r->host_idle_kw;
            double gpu_jg = r->carbon_hourly ? u->gpu_jg : u->gpu_j * r->g_per_kwh;
            idle_kwh = u->idle * idle_kw / 3600.0 * r->pue;
            out->energy_kwh = (u->busy * busy_kw / 3600.0 + u->gpu_j / 3.6e6) * r->pue + idle_kwh;
            op_kg = ((busy_g * busy_kw + idle_g * idle_kw) / 3600.0 + gpu_jg / 3.6e6) * r->pue /
                    1000.0;
        }
        out->energy = out->energy_kwh * r->kwh_price;
        double fixed = out->capex + out->ops + out->colocation;
        out->idle = (u->owned > 0 ? fixed * u->idle / u->owned : 0.0) + idle_kwh * r->kwh_price;
        out->carbon_kg = op_kg + out->carbon_embodied_kg;
    } else if (r->per_busy) {
        out->cloud = r->cloud_per_s * u->busy;
    } else {
        out->cloud = r->cloud_per_s * u->owned;
        out->idle = r->cloud_per_s * u->idle;
    }
    out->total = out->capex + out->energy + out->colocation + out->ops + out->cloud;
}

/* a += b (field by field). */
static void fs_cost_cell_add(fs_cost_cell_t *a, const fs_cost_cell_t *b)
{
    a->capex += b->capex;
    a->energy += b->energy;
    a->colocation += b->colocation;
    a->ops += b->ops;
    a->cloud += b->cloud;
    a->total += b->total;
    a->energy_kwh += b->energy_kwh;
    a->carbon_kg += b->carbon_kg;
    a->carbon_embodied_kg += b->carbon_embodied_kg;
    a->idle += b->idle;
    a->gpu_s_owned += b->gpu_s_owned;
    a->gpu_s_busy += b->gpu_s_busy;
}

void fs_cost_report_release(fs_cost_report_t *r)
{
    fs_free(r->cells);
    fs_free(r->pools);
    fs_free(r->unit);
    fs_free(r->lost_gpu_hours);
    fs_free(r->preempt_lost_gpu_hours);
    fs_free(r->tenants);
    memset(r, 0, sizeof *r);
}

static double ratio(double a, double b) { return b > 0 ? a / b : NAN; }

/* Cells, per-pool totals, the grand total and the pools' unit costs. */
static void price_cells(const fs_cost_rate_t *rates, const fs_usage_t *u, fs_cost_report_t *r)
{
    for (size_t d = 0; d < r->n_days; d++)
        for (uint32_t p = 0; p < r->n_pools; p++) {
            fs_cost_cell_t *c = &r->cells[d * r->n_pools + p];
            fs_cost_cell(&rates[p], fs_usage_cell(u, d, p), c);
            fs_cost_cell_add(&r->pools[p], c);
            fs_cost_cell_add(&r->total, c);
        }
    for (uint32_t p = 0; p < r->n_pools; p++) {
        const fs_cost_cell_t *t = &r->pools[p];
        double billed = rates[p].per_busy ? t->gpu_s_busy : t->gpu_s_owned;
        r->unit[p] = ratio(t->total, billed / 3600.0);
    }
}

/* Tenant rows, lost GPU-hours per pool, the cost of failures. */
static int split_tenants(const fs_usage_t *u, fs_cost_report_t *r)
{
    size_t slots = fs_usage_tenant_slots(u);
    double *held_all = fs_calloc(r->n_pools ? r->n_pools : 1, sizeof *held_all);
    r->tenants = fs_calloc(slots ? slots : 1, sizeof *r->tenants);
    if (!held_all || !r->tenants) {
        fs_free(held_all);
        return FS_ENOMEM;
    }
    for (size_t s = 0; s < slots; s++)
        for (uint32_t p = 0; p < r->n_pools; p++) {
            const fs_usage_held_t *h = fs_usage_held(u, s, p);
            if (h) {
                held_all[p] += h->gpu_s;
                r->lost_gpu_hours[p] += h->lost_gpu_s / 3600.0;
                r->preempt_lost_gpu_hours[p] += h->preempt_lost_gpu_s / 3600.0;
            }
        }
    for (size_t s = 0; s < slots; s++) {
        fs_cost_tenant_t t = {.tenant = (int32_t)s - 1};
        int any = 0;
        for (uint32_t p = 0; p < r->n_pools; p++) {
            const fs_usage_held_t *h = fs_usage_held(u, s, p);
            if (!h)
                continue;
            any = 1;
            t.gpu_hours += h->gpu_s / 3600.0;
            t.lost_gpu_hours += h->lost_gpu_s / 3600.0;
            t.preempt_lost_gpu_hours += h->preempt_lost_gpu_s / 3600.0;
            if (h->gpu_s > 0) {
                t.showback += h->gpu_s / 3600.0 * r->unit[p];
                t.chargeback += r->pools[p].total * h->gpu_s / held_all[p];
                t.carbon_kg += r->pools[p].carbon_kg * h->gpu_s / held_all[p];
            }
        }
        if (any)
            r->tenants[r->n_tenants++] = t;
    }
    /* preemption is not failure: the work a policy's preemptions destroyed
     * is priced on its own */
    r->cost_failures = r->cost_preemptions = 0;
    for (uint32_t p = 0; p < r->n_pools; p++) {
        /* (a difference of sums: rounding below 1e-9 of the total is no failure) */
        double pre = r->preempt_lost_gpu_hours[p], fail = r->lost_gpu_hours[p] - pre;
        if (fail > 1e-9 * r->lost_gpu_hours[p])
            r->cost_failures += fail * r->unit[p];
        if (pre > 0)
            r->cost_preemptions += pre * r->unit[p];
    }
    fs_free(held_all);
    return 0;
}

int fs_cost_report(const fs_cost_rate_t *rates, const fs_usage_t *u, uint64_t jobs_completed,
                   fs_cost_report_t *out)
{
    memset(out, 0, sizeof *out);
    if (fs_usage_error(u))
        return fs_usage_error(u);
    out->n_days = fs_usage_days(u);
    out->n_pools = fs_usage_pools(u);
    size_t np = out->n_pools ? out->n_pools : 1;
    out->cells = fs_calloc(out->n_days ? out->n_days * np : 1, sizeof *out->cells);
    out->pools = fs_calloc(np, sizeof *out->pools);
    out->unit = fs_calloc(np, sizeof *out->unit);
    out->lost_gpu_hours = fs_calloc(np, sizeof *out->lost_gpu_hours);
    out->preempt_lost_gpu_hours = fs_calloc(np, sizeof *out->preempt_lost_gpu_hours);
    if (!out->cells || !out->pools || !out->unit || !out->lost_gpu_hours ||
        !out->preempt_lost_gpu_hours) {
        fs_cost_report_release(out);
        return FS_ENOMEM;
    }
    price_cells(rates, u, out);
    if (split_tenants(u, out)) {
        fs_cost_report_release(out);
        return FS_ENOMEM;
    }
    out->cost_total = out->total.total;
    out->cost_per_gpu_hour = ratio(out->total.total, out->total.gpu_s_busy / 3600.0);
    out->cost_per_job = ratio(out->total.total, (double)jobs_completed);
    out->cost_idle = out->total.idle;
    out->energy_kwh = out->total.energy_kwh;
    out->carbon_kg = out->total.carbon_kg;
    out->carbon_embodied_kg = out->total.carbon_embodied_kg;
    out->carbon_per_gpu_hour_g = ratio(out->total.carbon_kg * 1000.0,
                                       out->total.gpu_s_busy / 3600.0);
    out->carbon_per_job_kg = ratio(out->total.carbon_kg, (double)jobs_completed);
    return 0;
}

void fs_cost_window(const fs_cost_rate_t *rates, const fs_usage_t *u, fs_cost_cell_t *out)
{
    memset(out, 0, sizeof *out);
    for (uint32_t p = 0; p < fs_usage_pools(u); p++) {
        fs_cost_cell_t c;
        fs_usage_cell_t w;
        fs_usage_window(u, p, &w);
        fs_cost_cell(&rates[p], &w, &c);
        fs_cost_cell_add(out, &c);
    }
}
