/*
 * The expansion of a sweep section (see fs_sweep.h and docs/sweeps.md).
 *
 * Why overrides rather than editing a config: a point is "the scenario with
 * these --set KEY=VALUE", so the sweep reaches every key the language
 * knows, and a swept value is parsed and checked by exactly the code that
 * checks the same value written in the file.  The only keys the sweep
 * itself must understand are those of a range (numeric), which it parses
 * with the key's own row of the key table.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "fs_sweep.h"
#include "fs_keys.h"
#include "fs_scenario.h"
#include "fs_where.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_dist.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUNS 10000000u

/* ---- key lookup ----------------------------------------------------------- */

/* The row of dotted path `key` (list items by index, distribution
 * parameters under their block).  Returns the row, or NULL when the path is
 * only a block (*block = 1) or unknown (*block = 0). */
static const fs_key_t *lookup_key(const char *key, int *block, const fs_keytab_t **tab)
{
    const fs_keytab_t *t = &fs_keys_config;
    const char *p = key;
    *block = 0;
    for (;;) {
        const fs_key_t *best = NULL;
        size_t best_len = 0;
        for (size_t i = 0; i < t->n; i++) {
            size_t l = strlen(t->rows[i].path);
            if (strncmp(p, t->rows[i].path, l) == 0 && (p[l] == '\0' || p[l] == '.') && l > best_len) {
                best = &t->rows[i];
                best_len = l;
            }
        }
        if (!best) {
            size_t l = strlen(p);
            for (size_t i = 0; i < t->n; i++)
                if (strncmp(t->rows[i].path, p, l) == 0 && t->rows[i].path[l] == '.')
                    *block = 1;
            return NULL;
        }
        *tab = t;
        if (best->type == FS_KT_CHOICE && p[best_len] == '\0') {
            *block = 1;
            return NULL;
        }
        if (best->type == FS_KT_CHOICE) { /* a choice block's row is a prefix: look deeper */
            size_t l = strlen(p);
            for (size_t i = 0; i < t->n; i++)
                if (strcmp(t->rows[i].path, p) == 0)
                    return &t->rows[i];
            for (size_t i = 0; i < t->n; i++)
                if (strncmp(t->rows[i].path, p, l) == 0 && t->rows[i].path[l] == '.')
                    *block = 1;
            return NULL;
        }
        if (p[best_len] == '\0')
            return best;
        const char *rest = p + best_len + 1;
        if (best->type == FS_KT_LIST) {
            size_t d = 0;
            while (isdigit((unsigned char)rest[d]))
                d++;
            if (d == 0 || (rest[d] != '\0' && rest[d] != '.'))
                return NULL;
            if (rest[d] == '\0') {
                *block = 1; /* a whole item */
                return NULL;
            }
            t = best->sub;
            p = rest + d + 1;
            continue;
        }
        if (best->type == FS_KT_DIST) {
            for (size_t i = 0; i < best->sub->n; i++)
                if (strcmp(best->sub->rows[i].path, rest) == 0) {
                    *tab = best->sub;
                    return &best->sub->rows[i];
                }
            return NULL;
        }
        return NULL; /* a scalar has no children */
    }
}

static int is_numeric(const fs_key_t *k)
{
    switch (k->type) {
    case FS_KT_UINT:
    case FS_KT_DOUBLE:
    case FS_KT_PROB:
    case FS_KT_DURATION:
    case FS_KT_SECONDS:
    case FS_KT_RATE:
        return 1;
    default:
        return 0;
    }
}

#define FIELD(base, off, T) ((T *)(void *)((char *)(base) + (off)))

/* The numeric value of scalar row k stored in base. */
static double get_num(const fs_key_t *k, void *base)
{
    switch (k->type) {
    case FS_KT_UINT:
        return k->size == sizeof(uint32_t) ? (double)*FIELD(base, k->off, uint32_t)
                                           : (double)*FIELD(base, k->off, uint64_t);
    case FS_KT_DURATION:
        return (double)*FIELD(base, k->off, fs_time_t);
    default:
        return *FIELD(base, k->off, double);
    }
}

static void set_num(const fs_key_t *k, void *base, double v)
{
    switch (k->type) {
    case FS_KT_UINT:
        if (k->size == sizeof(uint32_t))
            *FIELD(base, k->off, uint32_t) = (uint32_t)llround(v);
        else
            *FIELD(base, k->off, uint64_t) = (uint64_t)llround(v);
        break;
    case FS_KT_DURATION:
        *FIELD(base, k->off, fs_time_t) = (fs_time_t)llround(v);
        break;
    case FS_KT_SECONDS:
        *FIELD(base, k->off, double) = (double)llround(v * 1e6) / 1e6; /* whole microseconds */
        break;
    default:
        *FIELD(base, k->off, double) = v;
        break;
    }
}

/* ---- plan ------------------------------------------------------------------- */

void fs_sweep_overrides_free(char **ovr, size_t n)
{
    for (size_t i = 0; ovr && i < n; i++)
        fs_free(ovr[i]);
    fs_free(ovr);
}

void fs_sweep_plan_destroy(fs_sweep_plan_t *p)
{
    if (!p)
        return;
    for (size_t j = 0; j < p->n_params; j++) {
        fs_sweep_param_t *q = &p->params[j];
        fs_free(q->key);
        fs_sweep_overrides_free(q->values, q->n_values);
        fs_sweep_overrides_free(q->where, q->n_values);
        fs_free(q->inherit);
    }
    fs_free(p->params);
    fs_sweep_overrides_free(p->sets, p->n_sets);
    fs_free(p->path);
    fs_free(p->text);
    fs_free(p->warmup);
    fs_free(p->name);
    fs_free(p->label);
    fs_free(p);
}

size_t fs_sweep_value_index(const fs_sweep_plan_t *p, size_t point, size_t j)
{
    if (p->combine == FS_SWEEP_ZIP)
        return point;
    for (size_t i = p->n_params; i-- > j + 1;)
        point /= p->params[i].n_values;
    return point % p->params[j].n_values;
}

void fs_sweep_run_split(const fs_sweep_plan_t *p, size_t k, size_t *point, uint64_t *rep)
{
    *point = (size_t)(k / p->replications);
    *rep = k % p->replications;
}

size_t fs_sweep_run_index(const fs_sweep_plan_t *p, size_t point, uint64_t rep)
{
    return (size_t)(point * p->replications + rep);
}

size_t fs_sweep_shard_of(size_t k, size_t n_shards)
{
    return n_shards ? k % n_shards : 0;
}

static char *kv(const char *key, const char *value)
{
    size_t n = strlen(key) + strlen(value) + 2;
    char *s = fs_malloc(n);
    if (s)
        snprintf(s, n, "%s=%s", key, value);
    return s;
}

/* The overrides of a point (rep = -1: no replication override, for checks). */
static int point_overrides(const fs_sweep_plan_t *p, size_t point, int64_t rep, char ***out,
                           size_t *n, fs_error_t *err)
{
    size_t cap = p->n_sets + p->n_params + 3, m = 0;
    char **o = fs_calloc(cap, sizeof *o);
    if (!o)
        return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    for (size_t i = 0; i < p->n_sets; i++)
        if (!(o[m++] = fs_strdup(p->sets[i])))
            goto oom;
    for (size_t j = 0; j < p->n_params; j++) {
        size_t vi = fs_sweep_value_index(p, point, j);
        if (p->params[j].inherit && p->params[j].inherit[vi])
            continue;   /* a variant that does not set the key: the scenario's value */
        if (!(o[m++] = kv(p->params[j].key, p->params[j].values[vi])))
            goto oom;
    }
    if (p->warmup && !(o[m++] = kv("warmup", p->warmup)))
        goto oom;
    if (rep >= 0) {
        char buf[32];
        snprintf(buf, sizeof buf, "%" PRId64, rep);
        if (!(o[m++] = kv("replication", buf)))
            goto oom;
    }
    if (!(o[m++] = fs_strdup("sweep=null")))
        goto oom;
    *out = o;
    *n = m;
    return 0;
oom:
    fs_sweep_overrides_free(o, cap);
    return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
}

int fs_sweep_run_overrides(const fs_sweep_plan_t *p, size_t k, char ***out, size_t *n,
                           fs_error_t *err)
{
    size_t point;
    uint64_t rep;
    fs_sweep_run_split(p, k, &point, &rep);
    return point_overrides(p, point, (int64_t)rep, out, n, err);
}

static int load_with(const fs_sweep_plan_t *p, char **ovr, size_t n, fs_config_t *cfg, fs_error_t *err)
{
    int rc = p->path ? fs_scenario_load_file(p->path, (const char *const *)ovr, n, cfg, err)
                     : fs_scenario_load_string(p->label, p->text, (const char *const *)ovr, n, cfg, err);
    if (rc == 0 && p->path && strcmp(cfg->source_text, p->text) != 0) {
        fs_config_release(cfg);
        rc = fs_error_set(err, FS_EINVAL, "%s: the scenario file changed during the sweep", p->path);
    }
    return rc;
}

int fs_sweep_load_run(const fs_sweep_plan_t *p, size_t k, fs_config_t *cfg, fs_error_t *err)
{
    char **o = NULL;
    size_t n = 0;
    int rc = fs_sweep_run_overrides(p, k, &o, &n, err);
    if (rc) {
        fs_config_init(cfg);
        fs_config_release(cfg);
        return rc;
    }
    rc = load_with(p, o, n, cfg, err);
    fs_sweep_overrides_free(o, n);
    return rc;
}

/* ---- expansion and checks ------------------------------------------------------ */

static int dup_list(char ***out, const char *const *src, size_t n)
{
    *out = NULL;
    if (!n)
        return 0;
    char **d = fs_calloc(n, sizeof *d);
    if (!d)
        return FS_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (!(d[i] = fs_strdup(src[i]))) {
            fs_sweep_overrides_free(d, n);
            return FS_ENOMEM;
        }
    *out = d;
    return 0;
}

/* Splits "30/h" into 30 and "/h" (the unit as written). */
static int split_number(const char *text, double *x, const char **suffix)
{
    char *end;
    *x = strtod(text, &end);
    if (end == text || !isfinite(*x))
        return -1;
    *suffix = end;
    return 0;
}

/* v rounded to 12 significant digits: interpolation noise off
 * (60.00000000000001 -> 60). */
static double round12(double v)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.12g", v);
    return strtod(buf, NULL);
}

/* The values of a range parameter.  When both ends are written in the same
 * unit ("30/h" .. "90/h") the values are interpolated in that unit and
 * written in it ("45/h"); otherwise in the key's own unit (seconds, 1/s)
 * and written as the key table formats them. */
static long find_duplicate(char *const *v, size_t n, int *oom);

static int expand_range(const fs_sweep_param_cfg_t *pc, const char *disp, const fs_key_t *row,
                        const fs_keytab_t *tab, fs_sweep_param_t *q, fs_error_t *err)
{
    char exp[700];
    if (!row || !is_numeric(row))
        return fs_error_set(err, FS_EINVAL, "%s: %s.range: '%s' is not a numeric key (%s); give "
                            "values instead", pc->key.where[0], disp, pc->key.text[0],
                            row ? fs_keys_type_name(row) : "a block");
    if (pc->from.is_list || pc->to.is_list)
        return fs_error_set(err, FS_EINVAL, "%s: %s.range.%s: expected one value, not a list",
                            pc->from.is_list ? pc->from.at : pc->to.at, disp,
                            pc->from.is_list ? "from" : "to");
    size_t sz = tab->size > sizeof(fs_dist_cfg_t) ? tab->size : sizeof(fs_dist_cfg_t);
    void *scratch = fs_calloc(1, sz);
    if (!scratch)
        return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    double ends[2];
    const fs_raw_t *raw[2] = {&pc->from, &pc->to};
    int rc = 0;
    for (int e = 0; e < 2 && !rc; e++) {
        fs_error_t pe;
        if (fs_keys_parse(row, raw[e]->text[0], scratch, &pe) != 0)
            rc = fs_error_set(err, FS_EINVAL, "%s: %s.range.%s: %s", raw[e]->where[0], disp,
                              e ? "to" : "from", pe.msg);
        else
            ends[e] = get_num(row, scratch);
    }
    if (!rc && pc->scale == FS_SWEEP_LOG && !(ends[0] > 0 && ends[1] > 0))
        rc = fs_error_set(err, FS_EINVAL, "%s: %s.range: a log scale needs ends > 0 (expected %s)",
                          pc->from.where[0], disp, fs_keys_expect(row, exp, sizeof exp));
    double w[2] = {0, 0};   /* written values of the ends (when `written`) */
    const char *suf[2];
    int written = !rc && split_number(pc->from.text[0], &w[0], &suf[0]) == 0 &&
                  split_number(pc->to.text[0], &w[1], &suf[1]) == 0 && strcmp(suf[0], suf[1]) == 0 &&
                  (pc->scale != FS_SWEEP_LOG || (w[0] > 0 && w[1] > 0));
    size_t n = pc->steps;
    if (!rc && (!(q->values = fs_calloc(n, sizeof *q->values)) ||
                !(q->where = fs_calloc(n, sizeof *q->where))))
        rc = fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    for (size_t i = 0; i < n && !rc; i++) {
        double f = (double)i / (double)(n - 1), v;
        if (i == 0)
            v = ends[0];
        else if (i == n - 1)
            v = ends[1];
        else if (pc->scale == FS_SWEEP_LOG)
            v = ends[0] * pow(ends[1] / ends[0], f);
        else
            v = ends[0] + (ends[1] - ends[0]) * f;
        char buf[128];
        if (written) {
            double x = i == 0 ? w[0] : i == n - 1 ? w[1]
                     : pc->scale == FS_SWEEP_LOG ? w[0] * pow(w[1] / w[0], f)
                                                 : w[0] + (w[1] - w[0]) * f;
            if (row->type == FS_KT_UINT)
                snprintf(buf, sizeof buf, "%.0f%s", round(x), suf[0]);
            else
                snprintf(buf, sizeof buf, "%.12g%s", round12(x), suf[0]);
            fs_error_t pe;
            if (fs_keys_parse(row, buf, scratch, &pe) != 0)
                rc = fs_error_set(err, FS_EINVAL, "%s: %s.range: value %zu, %s: %s", pc->from.where[0],
                                  disp, i, buf, pe.msg);
        } else {
            set_num(row, scratch, row->type == FS_KT_UINT || row->type == FS_KT_DURATION ? v : round12(v));
            fs_keys_format(row, scratch, buf, sizeof buf);
        }
        q->n_values = i + 1;
        if (!rc && (!(q->values[i] = fs_strdup(buf)) || !(q->where[i] = fs_strdup(pc->from.where[0]))))
            rc = fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    }
    if (!rc) {   /* two steps that write the same value (sorted: O(n log n)) */
        int oom = 0;
        long d = find_duplicate(q->values, q->n_values, &oom);
        if (oom)
            rc = fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
        else if (d >= 0)
            rc = fs_error_set(err, FS_EINVAL, "%s: %s.range: the value %s comes twice (%zu steps "
                              "from %s to %s); use fewer steps", pc->from.where[0], disp,
                              q->values[d], n, pc->from.text[0], pc->to.text[0]);
    }
    fs_free(scratch);
    return rc;
}

/* The message of a failed override "--set KEY: msg" without its prefix. */
static const char *strip_set(const char *msg, const char *key)
{
    size_t kl = strlen(key);
    if (strncmp(msg, "--set ", 6) == 0 && strncmp(msg + 6, key, kl) == 0 && msg[6 + kl] == ':' &&
        msg[7 + kl] == ' ')
        return msg + 8 + kl;
    return msg;
}

/* Checks value i of parameter j alone on the base scenario. */
static int check_value(fs_sweep_plan_t *p, size_t j, size_t i, fs_error_t *err)
{
    const fs_sweep_param_t *q = &p->params[j];
    size_t n = p->n_sets + 2;
    char **o = fs_calloc(n, sizeof *o);
    int rc = 0, oom = !o;
    for (size_t m = 0; !oom && m < p->n_sets; m++)
        oom = !(o[m] = fs_strdup(p->sets[m]));
    if (oom) {
        fs_sweep_overrides_free(o, n);
        return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    }
    o[p->n_sets] = kv(q->key, q->values[i]);
    o[p->n_sets + 1] = fs_strdup("sweep=null");
    if (!o[p->n_sets] || !o[p->n_sets + 1]) {
        fs_sweep_overrides_free(o, n);
        return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    }
    fs_config_t cfg;
    fs_error_t e;
    rc = load_with(p, o, n, &cfg, &e);
    if (rc == 0)
        fs_config_release(&cfg);
    else if (rc == FS_ENOMEM)
        *err = e;
    else
        rc = fs_error_set(err, rc, "%s: sweep.params.%zu: %s=%s: %s", q->where[i], j, q->key,
                          q->values[i], strip_set(e.msg, q->key));
    fs_sweep_overrides_free(o, n);
    return rc;
}

static int check_point(fs_sweep_plan_t *p, size_t point, fs_error_t *err)
{
    char **o = NULL;
    size_t n = 0;
    int rc = point_overrides(p, point, -1, &o, &n, err);
    if (rc)
        return rc;
    fs_config_t cfg;
    fs_error_t e;
    rc = load_with(p, o, n, &cfg, &e);
    if (rc == 0) {
        fs_config_release(&cfg);
    } else if (rc == FS_ENOMEM) {
        *err = e;
    } else {
        char desc[512] = "";
        size_t len = 0;
        const char *at = p->n_params ? "" : p->warmup ? "sweep.warmup" : "";
        for (size_t j = 0; j < p->n_params && len < sizeof desc; j++) {
            size_t vi = fs_sweep_value_index(p, point, j);
            at = p->params[j].where[vi];
            if (p->params[j].inherit && p->params[j].inherit[vi])
                continue;   /* the scenario's value: not an override of the point */
            len += (size_t)snprintf(desc + len, sizeof desc - len, "%s%s=%s", len ? ", " : "",
                                    p->params[j].key, p->params[j].values[vi]);
        }
        rc = fs_error_set(err, rc, "%s: sweep point %zu (%s): %s", at, point, desc, e.msg);
    }
    fs_sweep_overrides_free(o, n);
    return rc;
}

/* The number of runs the section asks for, from the counts alone (before
 * any value is expanded or any point loaded: a sweep of 10^10 runs is
 * refused at once).  FS_ELIMIT, located at the key that goes past
 * MAX_RUNS, when there are too many. */
static int check_count(const fs_sweep_cfg_t *s, const char *file, fs_error_t *err)
{
    uint64_t points = 1, reps = s->replications ? s->replications : 1;
    for (size_t j = 0; j < s->n_params; j++) {
        const fs_sweep_param_cfg_t *pc = &s->params[j];
        uint64_t n = pc->has_range ? pc->steps : pc->values.given && pc->values.is_list ? pc->values.n : 1;
        if (n == 0)
            n = 1;
        if (s->combine == FS_SWEEP_ZIP)
            points = j == 0 ? n : points;
        else
            points = points > MAX_RUNS / n ? (uint64_t)MAX_RUNS + 1 : points * n;
        if (points > MAX_RUNS || points > MAX_RUNS / reps)
            return fs_error_set(err, FS_ELIMIT, "%s: sweep.params.%zu: the sweep has more than %u "
                                "runs (%s%llu points up to this key, %llu replications each); "
                                "use fewer values or steps", pc->key.where ? pc->key.where[0] : file,
                                j, MAX_RUNS, points > MAX_RUNS ? "more than " : "",
                                (unsigned long long)(points > MAX_RUNS ? MAX_RUNS : points),
                                (unsigned long long)reps);
    }
    if (points > MAX_RUNS / reps)
        return fs_error_set(err, FS_ELIMIT, "%s: sweep.replications: the sweep has more than %u "
                            "runs", file, MAX_RUNS);
    return 0;
}

/* Index of the first value that repeats an earlier one, or -1: sorted
 * copies of the pointers, O(n log n) (a quadratic scan took minutes on a
 * range of 10^6 steps). */
static int cmp_strp(const void *a, const void *b)
{
    int c = strcmp(**(char *const *const *)a, **(char *const *const *)b);
    /* ties by position: the later of two equal values is the duplicate */
    return c ? c : (*(char *const *const *)a > *(char *const *const *)b) -
                   (*(char *const *const *)a < *(char *const *const *)b);
}

static long find_duplicate(char *const *v, size_t n, int *oom)
{
    *oom = 0;
    if (n < 2)
        return -1;
    char *const **idx = fs_malloc(n * sizeof *idx);
    if (!idx) {
        *oom = 1;
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = &v[i];
    qsort(idx, n, sizeof *idx, cmp_strp);
    long dup = -1;
    for (size_t i = 1; i < n; i++)
        if (strcmp(*idx[i], *idx[i - 1]) == 0) {
            long at = (long)(idx[i] - v);
            if (dup < 0 || at < dup)
                dup = at;
        }
    fs_free(idx);
    return dup;
}

static int build(fs_sweep_plan_t *p, const fs_config_t *base, fs_error_t *err)
{
    const fs_sweep_cfg_t *s = &base->sweep;
    const char *file = p->label;
    if (!s->given)
        return fs_error_set(err, FS_EINVAL, "%s:1:1: no 'sweep' section (add one, see docs/sweeps.md, "
                            "or run a single scenario with 'fleetsim run')", file);
    int crc = check_count(s, file, err);
    if (crc)
        return crc;
    p->combine = s->combine;
    p->replications = s->replications;
    if (s->warmup.given) {
        if (s->warmup.is_list)
            return fs_error_set(err, FS_EINVAL, "%s: sweep.warmup: expected one duration, not a list",
                                s->warmup.at);
        if (!(p->warmup = fs_strdup(s->warmup.text[0])))
            return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    }
    if (s->n_params && !(p->params = fs_calloc(s->n_params, sizeof *p->params)))
        return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    for (size_t j = 0; j < s->n_params; j++) {
        const fs_sweep_param_cfg_t *pc = &s->params[j];
        fs_sweep_param_t *q = &p->params[j];
        char disp[64];
        snprintf(disp, sizeof disp, "sweep.params.%zu", j);
        p->n_params = j + 1;
        if (pc->key.is_list)
            return fs_error_set(err, FS_EINVAL, "%s: %s.key: expected one key, not a list", pc->key.at,
                                disp);
        const char *key = pc->key.text[0];
        int block = 0;
        const fs_keytab_t *tab = NULL;
        const fs_key_t *row = lookup_key(key, &block, &tab);
        if (!row && !block)
            return fs_error_set(err, FS_EINVAL, "%s: %s.key: unknown key '%s' (see 'fleetsim validate "
                                "--keys' for every key)", pc->key.where[0], disp, key);
        if (strcmp(key, "replication") == 0 || strcmp(key, "sweep") == 0 ||
            strncmp(key, "sweep.", 6) == 0)
            return fs_error_set(err, FS_EINVAL, "%s: %s.key: '%s' cannot be swept (%s)",
                                pc->key.where[0], disp, key,
                                key[0] == 'r' ? "the sweep sets it: replication r of every point "
                                                "uses index r; use sweep.replications"
                                              : "the sweep section itself");
        for (size_t i = 0; i < j; i++)
            if (strcmp(p->params[i].key, key) == 0)
                return fs_error_set(err, FS_EINVAL, "%s: %s.key: '%s' is already swept by "
                                    "sweep.params.%zu", pc->key.where[0], disp, key, i);
        if (!(q->key = fs_strdup(key)))
            return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
        if (pc->values.given && pc->has_range)
            return fs_error_set(err, FS_EINVAL, "%s: %s: give values or range, not both",
                                pc->values.at, disp);
        if (!pc->values.given && !pc->has_range)
            return fs_error_set(err, FS_EINVAL, "%s: %s: give values: [...] or range: {from, to, "
                                "steps} for '%s'", pc->key.where[0], disp, key);
        int rc;
        if (pc->has_range) {
            if ((rc = expand_range(pc, disp, row, tab, q, err)) != 0)
                return rc;
        } else {
            if (!pc->values.is_list)
                return fs_error_set(err, FS_EINVAL, "%s: %s.values: expected a list such as [a, b], "
                                    "found one value", pc->values.at, disp);
            q->n_values = pc->values.n; /* destroy frees whatever was copied */
            if (dup_list(&q->values, (const char *const *)pc->values.text, pc->values.n) ||
                dup_list(&q->where, (const char *const *)pc->values.where, pc->values.n))
                return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
        }
        int oom = 0;
        long d = pc->has_range ? -1 : find_duplicate(q->values, q->n_values, &oom);
        if (oom)
            return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
        if (d >= 0)
            return fs_error_set(err, FS_EINVAL, "%s: %s.values: '%s' is given twice",
                                q->where[d], disp, q->values[d]);
        if (p->combine == FS_SWEEP_ZIP && j > 0 && q->n_values != p->params[0].n_values)
            return fs_error_set(err, FS_EINVAL, "%s: %s: zip needs the same number of values for "
                                "every key: %s has %zu, %s has %zu", pc->key.where[0], disp,
                                p->params[0].key, p->params[0].n_values, key, q->n_values);
    }
    /* points */
    uint64_t points = 1;
    if (p->combine == FS_SWEEP_ZIP)
        points = p->n_params ? p->params[0].n_values : 1;
    else
        for (size_t j = 0; j < p->n_params; j++) {
            points *= p->params[j].n_values;
            if (points > MAX_RUNS)
                break;
        }
    if (points > MAX_RUNS || points * p->replications > MAX_RUNS)
    {
        char at[32];  /* the sweep section's position (the run count is its product) */
        fs_where_key(p->text, "sweep", at, sizeof at);
        return fs_error_set(err, FS_ELIMIT, "%s:%s: the sweep has more than %u runs (%" PRIu64
                            " points x %" PRIu64 " replications)", file, at, MAX_RUNS, points,
                            p->replications);
    }
    p->n_points = (size_t)points;
    p->n_runs = (size_t)(points * p->replications);
    /* every value alone, then every point */
    int rc;
    for (size_t j = 0; j < p->n_params; j++)
        for (size_t i = 0; i < p->params[j].n_values; i++)
            if ((rc = check_value(p, j, i, err)) != 0)
                return rc;
    for (size_t pt = 0; pt < p->n_points; pt++)
        if ((rc = check_point(p, pt, err)) != 0)
            return rc;
    return 0;
}

/* The sweep's name (the index's `name` attribute): the scenario's `name`
 * key; never the path (a scenario without a name gets the key's default),
 * else the file name without directory and extension. */
static char *plan_name(const fs_config_t *base, const char *label)
{
    if (base->name && *base->name)
        return fs_strdup(base->name);
    const char *slash = strrchr(label, '/'), *stem = slash ? slash + 1 : label;
    const char *dot = strrchr(stem, '.');
    return fs_strndup(stem, dot && dot != stem ? (size_t)(dot - stem) : strlen(stem));
}

static int create(const char *name, const char *path, const char *text, const char *const *sets,
                  size_t n_sets, fs_sweep_plan_t **out, fs_error_t *err)
{
    *out = NULL;
    fs_error_clear(err);
    fs_config_t base;
    int rc = path ? fs_scenario_load_file(path, sets, n_sets, &base, err)
                  : fs_scenario_load_string(name, text, sets, n_sets, &base, err);
    if (rc)
        return rc;
    fs_sweep_plan_t *p = fs_calloc(1, sizeof *p);
    if (!p || (path && !(p->path = fs_strdup(path))) ||
        !(p->name = plan_name(&base, name)) || !(p->label = fs_strdup(name)) ||
        !(p->text = fs_strdup(base.source_text)) || dup_list(&p->sets, sets, n_sets)) {
        fs_config_release(&base);
        fs_sweep_plan_destroy(p);
        return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    }
    p->n_sets = n_sets;
    rc = build(p, &base, err);
    fs_config_release(&base);
    if (rc) {
        fs_sweep_plan_destroy(p);
        return rc;
    }
    *out = p;
    return 0;
}

int fs_sweep_plan_create(const char *path, const char *const *sets, size_t n_sets,
                         fs_sweep_plan_t **out, fs_error_t *err)
{
    return create(path, path, NULL, sets, n_sets, out, err);
}

int fs_sweep_plan_from_text(const char *name, const char *text, const char *const *sets,
                            size_t n_sets, fs_sweep_plan_t **out, fs_error_t *err)
{
    return create(name ? name : "<string>", NULL, text, sets, n_sets, out, err);
}

/* ---- variants (fleetsim versus) ---------------------------------------------- */

/* The value of key in the struct at base (described by tab) as scenario
 * text, or NULL when it is not one scalar.  A key inside a list
 * ("cluster.pools.0.nodes") goes down into that element. */
static char *base_value_in(const fs_keytab_t *tab, const void *base, const char *key)
{
    for (size_t i = 0; i < tab->n; i++) {
        const fs_key_t *k = &tab->rows[i];
        size_t pl = strlen(k->path);
        if (k->type == FS_KT_LIST && k->sub && strncmp(k->path, key, pl) == 0 && key[pl] == '.') {
            char *end;
            errno = 0;
            unsigned long long idx = strtoull(key + pl + 1, &end, 10);
            if (errno || end == key + pl + 1 || *end != '.')
                return NULL;
            const char *arr = *(const char *const *)(const void *)((const char *)base + k->off);
            size_t count = *(const size_t *)(const void *)((const char *)base + k->off2);
            if (!arr || idx >= count)
                return NULL;
            return base_value_in(k->sub, arr + idx * k->sub->size, end + 1);
        }
        if (strcmp(k->path, key) != 0)
            continue;
        if (!fs_keys_is_scalar(k) || k->type == FS_KT_RAW)
            return NULL;
        if (k->type == FS_KT_STRING || k->type == FS_KT_PATH || k->type == FS_KT_NAME) {
            const char *v = *(char *const *)(const void *)((const char *)base + k->off);
            return v ? fs_strdup(v) : NULL;
        }
        char buf[64];
        return fs_strdup(fs_keys_format(k, base, buf, sizeof buf));
    }
    return NULL;
}

static char *base_value(const fs_config_t *cfg, const char *key)
{
    return base_value_in(&fs_keys_config, cfg, key);
}

/* The value variant v gives key, or NULL. */
static const char *variant_value(const fs_sweep_variant_t *v, const char *key)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->keys[i], key) == 0)
            return v->values[i];
    return NULL;
}

static int check_variants(const fs_sweep_variant_t *v, size_t n, fs_error_t *err)
{
    static const char *const banned[] = {"replication", "seed", "sweep"};
    for (size_t i = 0; i < n; i++)
        for (size_t a = 0; a < v[i].n; a++) {
            for (size_t b = 0; b < 3; b++)
                if (strcmp(v[i].keys[a], banned[b]) == 0 ||
                    strncmp(v[i].keys[a], "sweep.", 6) == 0)
                    return fs_error_set(err, FS_EINVAL, "-p %s: %s cannot differ between "
                                        "policies (common random numbers)", v[i].name,
                                        v[i].keys[a]);
            for (size_t b = 0; b < a; b++)
                if (strcmp(v[i].keys[a], v[i].keys[b]) == 0)
                    return fs_error_set(err, FS_EINVAL, "-p %s: %s is given twice", v[i].name,
                                        v[i].keys[a]);
        }
    return 0;
}

/* Parameter q (key) of n variants: its arrays, and where each value comes
 * from ("-p NAME"); the values are the caller's to fill. */
static int param_alloc(fs_sweep_param_t *q, const char *key, const fs_sweep_variant_t *v,
                       size_t n, fs_error_t *err)
{
    q->n_values = n;
    if (!(q->key = fs_strdup(key)) || !(q->values = fs_calloc(n, sizeof *q->values)) ||
        !(q->where = fs_calloc(n, sizeof *q->where)) ||
        !(q->inherit = fs_calloc(n, sizeof *q->inherit)))
        return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    for (size_t i = 0; i < n; i++) {
        size_t wn = strlen(v[i].name) + 4;
        if (!(q->where[i] = fs_malloc(wn)))
            return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
        snprintf(q->where[i], wn, "-p %s", v[i].name);
    }
    return 0;
}

/* Fills parameter q (key) with each variant's value; a variant that does
 * not set the key inherits the scenario's value (no override at its point),
 * described by the base's value when it is one scalar, else "(scenario)". */
static int fill_param(fs_sweep_param_t *q, const char *key, const fs_sweep_variant_t *v, size_t n,
                      const fs_config_t *base, fs_error_t *err)
{
    int rc = param_alloc(q, key, v, n, err);
    char *dflt = NULL;
    for (size_t i = 0; i < n && !rc; i++) {
        const char *val = variant_value(&v[i], q->key);
        if (!val && !dflt && !(dflt = base_value(base, q->key)) &&
            !(dflt = fs_strdup("(scenario)")))
            rc = fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
        else if (!(q->values[i] = fs_strdup(val ? val : dflt)))
            rc = fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
        q->inherit[i] = !val;
    }
    fs_free(dflt);
    return rc;
}

/* 1 when variant v sets key or a key under it (key "a.b": a.b, a.b.c). */
static int variant_sets_under(const fs_sweep_variant_t *v, const char *key)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i < v->n; i++)
        if (strncmp(v->keys[i], key, kl) == 0 && (v->keys[i][kl] == '\0' || v->keys[i][kl] == '.'))
            return 1;
    return 0;
}

/* 1 when variant v asks for a built-in queue: scheduler.queue and no
 * scheduler.plugin key. */
static int builtin_queue(const fs_sweep_variant_t *v)
{
    return variant_value(v, "scheduler.queue") && !variant_sets_under(v, "scheduler.plugin");
}

/* A variant that sets scheduler.queue and no scheduler.plugin key means the
 * built-in queue: when the scenario names a plugin (which would otherwise
 * run whatever the queue says), the parameter scheduler.plugin=null at
 * those points, inherited (the scenario's plugin) at the others. */
static int builtin_queue_param(fs_sweep_plan_t *p, const fs_sweep_variant_t *v, size_t n,
                               const fs_config_t *base, fs_error_t *err)
{
    size_t need = 0;
    for (size_t i = 0; i < n; i++)
        need += (size_t)builtin_queue(&v[i]);
    if (!base->scheduler.plugin_path || !need)
        return 0;
    fs_sweep_param_t *q = &p->params[p->n_params++];
    int rc = param_alloc(q, "scheduler.plugin", v, n, err);
    for (size_t i = 0; i < n && !rc; i++) {
        q->inherit[i] = (unsigned char)!builtin_queue(&v[i]);
        if (!(q->values[i] = fs_strdup(q->inherit[i] ? "(scenario)" : "null")))
            rc = fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    }
    return rc;
}

int fs_sweep_plan_set_variants(fs_sweep_plan_t *p, const fs_sweep_variant_t *v, size_t n,
                               fs_error_t *err)
{
    if (p->n_params || n == 0)
        return fs_error_set(err, FS_EINVAL, "sweep: variants need a plan without parameters");
    if ((uint64_t)n * p->replications > MAX_RUNS)
        return fs_error_set(err, FS_ELIMIT, "more than %u runs", MAX_RUNS);
    int rc = check_variants(v, n, err);
    if (rc)
        return rc;
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += v[i].n;
    if (!(p->params = fs_calloc(total + 1, sizeof *p->params)))
        return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    fs_config_t base;
    if ((rc = load_with(p, p->sets, p->n_sets, &base, err)))
        return rc;
    for (size_t i = 0; i < n && !rc; i++)
        for (size_t a = 0; a < v[i].n && !rc; a++) {
            size_t j = 0;
            while (j < p->n_params && strcmp(p->params[j].key, v[i].keys[a]) != 0)
                j++;
            if (j < p->n_params)
                continue;
            rc = fill_param(&p->params[p->n_params++], v[i].keys[a], v, n, &base, err);
        }
    if (!rc)
        rc = builtin_queue_param(p, v, n, &base, err);
    fs_config_release(&base);
    p->combine = FS_SWEEP_ZIP;
    p->n_points = n;
    p->n_runs = n * (size_t)p->replications;
    for (size_t pt = 0; pt < n && !rc; pt++)
        rc = check_point(p, pt, err);
    return rc;
}

/* ---- digest ------------------------------------------------------------------- */

static void fnv(uint64_t *h, const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++) {
        *h ^= b[i];
        *h *= UINT64_C(1099511628211);
    }
}

static void fnv_str(uint64_t *h, const char *s)
{
    if (s)
        fnv(h, s, strlen(s) + 1);
    else
        fnv(h, "\xff", 1);
}

uint64_t fs_sweep_plan_digest(const fs_sweep_plan_t *p)
{
    uint64_t h = UINT64_C(14695981039346656037);
    fnv_str(&h, p->path);
    fnv_str(&h, p->text);
    for (size_t i = 0; i < p->n_sets; i++)
        fnv_str(&h, p->sets[i]);
    fnv(&h, &p->combine, sizeof p->combine);
    fnv(&h, &p->replications, sizeof p->replications);
    fnv_str(&h, p->warmup);
    for (size_t j = 0; j < p->n_params; j++) {
        fnv_str(&h, p->params[j].key);
        for (size_t i = 0; i < p->params[j].n_values; i++) {
            fnv_str(&h, p->params[j].values[i]);
            if (p->params[j].inherit && p->params[j].inherit[i])
                fnv(&h, "\xfe", 1);    /* not an override: the scenario's value */
        }
    }
    return h;
}
