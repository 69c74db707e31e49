/*
 * fleetsim compare: the /summary metrics of run files or sweep points side
 * by side, with differences and (sweeps) paired intervals; the statistics
 * are analysis/fs_compare.c and analysis/fs_waits.c, this file parses the
 * command line, picks the pairs to compare and prints.
 */
#include "fs_cli.h"
#include "fs_json.h"
#include "../../analysis/fs_compare.h"
#include "../../analysis/fs_compare_rec.h"
#include "../../analysis/fs_fmt.h"
#include "../../analysis/fs_h5read.h"
#include "../../analysis/fs_waits.h"
#include "../../scenarios/fs_scenario.h"
#include "../fs_alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int fs_cli_results_warmup(const char *path, double *warmup_s, fs_error_t *err)
{
    *warmup_s = 0;
    fs_h5file_t *f;
    int rc = fs_h5read_open(path, &f, err);
    if (rc)
        return rc;
    char *text = NULL;
    rc = fs_h5read_attr_str(f, "scenario", &text, err);
    fs_h5read_close(f);
    if (rc)
        return rc;
    fs_config_t cfg;
    rc = fs_scenario_load_string(path, text, NULL, 0, &cfg, err);
    fs_free(text);
    if (rc)
        return rc;
    *warmup_s = fs_time_to_s(cfg.warmup);
    fs_config_release(&cfg);
    return 0;
}

static const double wait_probs[] = {0.50, 0.90, 0.95, 0.99};
#define N_WAIT_PROBS (sizeof wait_probs / sizeof wait_probs[0])

/* Pooled and per-replication wait percentiles of a sweep side (from the
 * /jobs of its run files).  Returns 0, or nonzero (message in err) when a
 * run file cannot be read. */
static int side_waits(const fs_compare_side_t *s, fs_wait_pct_t *out, fs_error_t *err)
{
    double **w = fs_calloc(s->n_reps + 1, sizeof *w);
    size_t *n = fs_calloc(s->n_reps + 1, sizeof *n);
    double warmup = 0;
    int rc = 0;
    if (!w || !n) {
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t r = 0; r < s->n_reps && !rc; r++) {
        if (!s->files[r]) {
            rc = fs_error_set(err, FS_EINVAL, "%s: /runs names no run file", s->path);
            break;
        }
        if (r == 0 && (rc = fs_cli_results_warmup(s->files[r], &warmup, err)))
            break;
        rc = fs_waits_read(s->files[r], warmup, &w[r], &n[r], err);
    }
    if (!rc && (rc = fs_waits_summarize((const double *const *)w, n, s->n_reps, wait_probs,
                                        N_WAIT_PROBS, 0.95, out)))
        fs_error_set(err, rc, "out of memory");
out:
    for (size_t r = 0; w && r < s->n_reps; r++)
        fs_free(w[r]);
    fs_free(w);
    fs_free(n);
    return rc;
}

static void print_waits(FILE *out, const fs_wait_pct_t *a, const fs_wait_pct_t *b, size_t ra,
                        size_t rb)
{
    fprintf(out, "\nWait percentiles from /jobs: pooled over the replications (A %zu, B %zu), "
                 "and the mean +- 95%% half-width of the per-replication percentiles:\n",
            ra, rb);
    fprintf(out, "%-6s %14s %14s %14s %26s %26s\n", "p", "A pooled", "B pooled", "B - A",
            "A per replication", "B per replication");
    for (size_t j = 0; j < N_WAIT_PROBS; j++) {
        char pa[64], pb[64], va[32], vb[32], vd[32];
        fs_fmt_interval(pa, sizeof pa, FS_FMT_DURATION, a[j].per_rep.mean, a[j].per_rep.half);
        fs_fmt_interval(pb, sizeof pb, FS_FMT_DURATION, b[j].per_rep.mean, b[j].per_rep.half);
        fs_fmt_duration(va, sizeof va, a[j].pooled);
        fs_fmt_duration(vb, sizeof vb, b[j].pooled);
        fs_fmt_diff(vd, sizeof vd, FS_FMT_DURATION, b[j].pooled - a[j].pooled);
        fprintf(out, "p%-5g %14s %14s %14s %26s %26s\n", wait_probs[j] * 100, va, vb, vd, pa, pb);
    }
}

static void json_side(fs_json_t *j, const fs_compare_side_t *s)
{
    fs_json_begin_object(j);
    fs_json_key(j, "path");
    fs_json_str(j, s->path);
    fs_json_key(j, "point");
    if (s->point >= 0)
        fs_json_uint(j, (uint64_t)s->point);
    else
        fs_json_null(j);
    fs_json_key(j, "label");
    fs_json_str(j, s->label);
    fs_json_key(j, "replications");
    fs_json_uint(j, s->n_reps);
    fs_json_end_object(j);
}

/* One pair of the --json document (docs/cli.md). */
static void json_pair(fs_json_t *j, const fs_compare_side_t *a, const fs_compare_side_t *b,
                      const fs_compare_t *c, const fs_wait_pct_t *wa, const fs_wait_pct_t *wb)
{
    fs_json_begin_object(j);
    fs_json_key(j, "a");
    json_side(j, a);
    fs_json_key(j, "b");
    json_side(j, b);
    fs_json_key(j, "paired");
    fs_json_bool(j, c->paired);
    fs_json_key(j, "pairs");
    fs_json_uint(j, c->n_pairs);
    fs_json_key(j, "level");
    fs_json_num(j, c->level);
    fs_json_key(j, "identical_replications");
    fs_json_bool(j, c->identical_reps);
    fs_json_key(j, "metrics");
    fs_json_begin_object(j);
    for (size_t i = 0; i < c->n_rows; i++) {
        const fs_compare_row_t *r = &c->rows[i];
        int interval = c->paired && !r->constant && !c->identical_reps && r->ci.n >= 2;
        fs_json_key(j, r->metric);
        fs_json_begin_object(j);
        fs_json_key(j, "a");
        fs_json_num(j, r->a);
        fs_json_key(j, "b");
        fs_json_num(j, r->b);
        fs_json_key(j, "diff");
        fs_json_num(j, r->diff);
        fs_json_key(j, "rel_diff");
        fs_json_num(j, r->rel);
        fs_json_key(j, "lo");
        fs_json_num(j, interval ? r->ci.lo : NAN);
        fs_json_key(j, "hi");
        fs_json_num(j, interval ? r->ci.hi : NAN);
        fs_json_key(j, "significant");
        if (interval && r->significant >= 0)
            fs_json_bool(j, r->significant == 1);
        else
            fs_json_null(j);
        fs_json_key(j, "constant");
        fs_json_bool(j, r->constant);
        fs_json_end_object(j);
    }
    fs_json_end_object(j);
    if (wa && wb) {
        fs_json_key(j, "wait_pooled");
        fs_json_begin_array(j);
        for (size_t k = 0; k < N_WAIT_PROBS; k++) {
            fs_json_begin_object(j);
            fs_json_key(j, "p");
            fs_json_num(j, wait_probs[k]);
            fs_json_key(j, "a");
            fs_json_num(j, wa[k].pooled);
            fs_json_key(j, "b");
            fs_json_num(j, wb[k].pooled);
            fs_json_end_object(j);
        }
        fs_json_end_array(j);
    }
    fs_json_end_object(j);
}

static void csv_field_num(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, ",%.17g", v);
    else
        fputc(',', out);
}

/* CSV rows wait_pooled_pNN in the columns of fs_compare_print_csv; no interval. */
static void csv_waits(FILE *out, const fs_compare_side_t *sa, const fs_compare_side_t *sb,
                      const fs_wait_pct_t *a, const fs_wait_pct_t *b)
{
    for (size_t j = 0; j < N_WAIT_PROBS; j++) {
        fprintf(out, "%s,%s,%ld,%ld,wait_pooled_p%g", sa->path, sb->path, sa->point, sb->point,
                wait_probs[j] * 100);
        double d = b[j].pooled - a[j].pooled;
        csv_field_num(out, a[j].pooled);
        csv_field_num(out, b[j].pooled);
        csv_field_num(out, d);
        csv_field_num(out, a[j].pooled != 0 ? d / fabs(a[j].pooled) : NAN);
        fprintf(out, ",0,0.95,,,\n");
    }
}

typedef struct opts {
    int csv;
    fs_json_t *json;    /* --json: pairs go into this document's "pairs" array */
    int waits;
    double level;
    int header_done;
} opts_t;

/* Compares one pair; returns an exit status. */
static int compare_pair(const char *pa, long pta, const char *pb, long ptb, opts_t *o, int first)
{
    fs_error_t err;
    fs_error_clear(&err);
    fs_compare_side_t *a = NULL, *b = NULL;
    fs_compare_t c;
    memset(&c, 0, sizeof c);
    int rc = fs_compare_side_load(pa, pta, &a, &err);
    if (!rc)
        rc = fs_compare_side_load(pb, ptb, &b, &err);
    if (!rc)
        rc = fs_compare_sides(a, b, o->level, &c, &err);
    if (rc) {
        fprintf(stderr, "fleetsim compare: %s\n", err.msg);
        fs_compare_side_destroy(a);
        fs_compare_side_destroy(b);
        return fs_error_exit_status(rc);
    }
    fs_wait_pct_t wa[N_WAIT_PROBS], wb[N_WAIT_PROBS];
    int have_waits = 0;
    if (c.paired && o->waits) {
        fs_error_t werr;
        fs_error_clear(&werr);
        if (side_waits(a, wa, &werr) == 0 && side_waits(b, wb, &werr) == 0)
            have_waits = 1;
        else
            fprintf(stderr, "fleetsim compare: note: no pooled wait percentiles: %s\n", werr.msg);
    }
    if (o->json) {
        json_pair(o->json, a, b, &c, have_waits ? wa : NULL, have_waits ? wb : NULL);
    } else if (o->csv) {
        fs_compare_print_csv(stdout, a, b, &c, !o->header_done);
        o->header_done = 1;
        if (have_waits)
            csv_waits(stdout, a, b, wa, wb);
    } else {
        if (!first)
            fputc('\n', stdout);
        fs_compare_print(stdout, a, b, &c);
        if (have_waits)
            print_waits(stdout, wa, wb, a->n_reps, b->n_reps);
    }
    fs_compare_release(&c);
    fs_compare_side_destroy(a);
    fs_compare_side_destroy(b);
    return 0;
}

static int parse_point(const char *s, long *out)
{
    unsigned long long v;
    if (fs_cli_parse_u64(s, &v) || v > 1000000000ULL)
        return -1;
    *out = (long)v;
    return 0;
}

static int compare_all(const char **files, size_t nf, opts_t *o);

static void json_waits(fs_json_t *j, const char *key, const fs_rec_waits_t *w)
{
    fs_json_key(j, key);
    fs_json_begin_object(j);
    fs_json_key(j, "mean");
    fs_json_num(j, w->mean);
    fs_json_key(j, "p50");
    fs_json_num(j, w->p50);
    fs_json_key(j, "p90");
    fs_json_num(j, w->p90);
    fs_json_key(j, "p99");
    fs_json_num(j, w->p99);
    fs_json_key(j, "share_waited");
    fs_json_num(j, w->share_waited);
    fs_json_end_object(j);
}

/* --recorded: one run file against its trace's recorded waits. */
static int compare_recorded(const char *path, int json)
{
    fs_error_t err;
    fs_error_clear(&err);
    fs_rec_cmp_t c;
    int is_index = 0;
    int rc = fs_compare_is_index(path, &is_index, &err);
    if (!rc && is_index)
        rc = fs_error_set(&err, FS_EINVAL, "%s: a sweep index: --recorded compares one run file "
                          "(a run of the sweep)", path);
    if (!rc)
        rc = fs_rec_compare(path, -INFINITY, INFINITY, &c, &err);
    if (rc) {
        fprintf(stderr, "fleetsim compare: %s\n", err.msg);
        return fs_error_exit_status(rc);
    }
    if (!json) {
        fs_rec_print(stdout, path, &c);
    } else {
        fs_json_t j;
        fs_json_init(&j, stdout);
        fs_json_begin_object(&j);
        fs_json_key(&j, "command");
        fs_json_str(&j, "compare");
        fs_json_key(&j, "recorded");
        fs_json_begin_object(&j);
        fs_json_key(&j, "path");
        fs_json_str(&j, path);
        fs_json_key(&j, "jobs");
        fs_json_uint(&j, c.n_jobs);
        fs_json_key(&j, "compared");
        fs_json_uint(&j, c.n_matched);
        fs_json_key(&j, "no_recorded_start");
        fs_json_uint(&j, c.n_no_rec);
        fs_json_key(&j, "never_started");
        fs_json_uint(&j, c.n_not_started);
        fs_json_key(&j, "not_in_trace");
        fs_json_uint(&j, c.n_not_in_trace);
        fs_json_key(&j, "withdrawn");
        fs_json_uint(&j, c.n_withdrawn);
        fs_json_key(&j, "waited_threshold_s");
        fs_json_num(&j, FS_REC_WAITED_S);
        json_waits(&j, "simulated", &c.sim);
        json_waits(&j, "recorded", &c.rec);
        fs_json_key(&j, "ks");
        fs_json_num(&j, c.ks);
        fs_json_key(&j, "spearman");
        fs_json_num(&j, c.spearman);
        fs_json_key(&j, "capacity_gpus");
        fs_json_num(&j, c.capacity);
        fs_json_num_array(&j, "util_day_simulated", c.util_sim, c.n_days);
        fs_json_num_array(&j, "util_day_recorded", c.util_rec, c.n_days);
        fs_json_num_array(&j, "wait_simulated_s", c.wait_sim, c.n_matched);
        fs_json_num_array(&j, "wait_recorded_s", c.wait_rec, c.n_matched);
        fs_json_end_object(&j);
        fs_json_end_object(&j);
        fs_json_finish(&j);
    }
    fs_rec_cmp_release(&c);
    return 0;
}

int fs_cmd_compare(int argc, char **argv)
{
    const char **files = fs_calloc((size_t)argc + 1, sizeof *files);
    size_t nf = 0;
    long pts[2] = {-1, -1};
    int have_points = 0, json = 0, recorded = 0;
    opts_t o = {.csv = 0, .json = NULL, .waits = 1, .level = 0.95, .header_done = 0};
    int rc = 0;
    if (!files)
        return 1;
    fs_cli_getopt_t g;
    fs_cli_getopt_init(&g, "compare", argc, argv, fs_cli_find("compare")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        const char *a = g.opt ? g.opt : g.arg, *v = g.arg;
        if (id == 'h') {
            fs_cli_print_usage(stdout, fs_cli_find("compare"));
            fs_free(files);
            return 0;
        } else if (id == FS_OPT_CSV) {
            o.csv = 1;
        } else if (id == FS_OPT_JSON) {
            json = 1;
        } else if (id == FS_OPT_RECORDED) {
            recorded = 1;
        } else if (id == FS_OPT_NO_WAITS) {
            o.waits = 0;
        } else if (id == FS_OPT_LEVEL) {
            char *end;
            if (!v || (o.level = strtod(v, &end), *end) ||
                !(o.level > 0 && o.level < 1)) {
                fs_free(files);
                return fs_cli_usage_error("compare", "--level needs a number in (0, 1), e.g. 0.95");
            }
        } else if (id == FS_OPT_POINTS) {
            /* --points P Q, or --points=P,Q */
            char pbuf[64];
            const char *q = NULL;
            if (v && strchr(v, ',') && strlen(v) < sizeof pbuf) {
                snprintf(pbuf, sizeof pbuf, "%s", v);
                *strchr(pbuf, ',') = '\0';
                q = strchr(v, ',') + 1;
                v = pbuf;
            } else if (v) {
                q = fs_cli_getopt_take(&g);
            }
            if (!v || !q || parse_point(v, &pts[0]) || parse_point(q, &pts[1])) {
                fs_free(files);
                return fs_cli_usage_error("compare", "--points needs two point numbers, e.g. "
                                                     "--points 0 1");
            }
            have_points = 1;
        } else if (id == FS_CLI_BAD) {
            fs_free(files);
            return g.status;
        } else {
            files[nf++] = a;
        }
    }
    if (recorded) {
        rc = nf != 1 || have_points || o.csv
                 ? fs_cli_usage_error("compare", "--recorded takes one results file (and "
                                                 "optionally --json)")
                 : compare_recorded(files[0], json);
        fs_free(files);
        return rc;
    }
    if (nf == 0 || (nf == 1 && !have_points)) {
        fs_free(files);
        return fs_cli_usage_error("compare", "give two results files, or one sweep index with "
                                             "--points P Q");
    }
    if (have_points && nf > 2) {
        fs_free(files);
        return fs_cli_usage_error("compare", "--points takes one sweep index, or two");
    }
    /* --json: the pairs are gathered in memory and printed only when every
     * pair succeeded (one whole document, or none) */
    char *jbuf = NULL;
    size_t jlen = 0;
    FILE *jf = NULL;
    fs_json_t jw;
    if (json) {
        if (!(jf = open_memstream(&jbuf, &jlen))) {
            fs_free(files);
            fprintf(stderr, "fleetsim compare: out of memory\n");
            return 1;
        }
        fs_json_init(&jw, jf);
        fs_json_begin_object(&jw);
        fs_json_key(&jw, "command");
        fs_json_str(&jw, "compare");
        fs_json_key(&jw, "pairs");
        fs_json_begin_array(&jw);
        o.json = &jw;
    }
    if (have_points)
        rc = compare_pair(files[0], pts[0], files[nf - 1], pts[1], &o, 1);
    else
        rc = compare_all(files, nf, &o);
    if (json) {
        fs_json_end_array(&jw);
        fs_json_end_object(&jw);
        fs_json_finish(&jw);
        fclose(jf);
        if (rc == 0)
            fwrite(jbuf, 1, jlen, stdout);
        free(jbuf); /* libc's (open_memstream): not a block of fs_alloc */
    }
    fs_free(files);
    return rc;
}

/* Every later file against the first (the baseline). */
static int compare_all(const char **files, size_t nf, opts_t *o)
{
    int rc = 0;
    int first = 1;
    for (size_t k = 1; k < nf && !rc; k++) {
        fs_error_t err;
        fs_error_clear(&err);
        int ia = 0, ib = 0;
        if ((rc = fs_compare_is_index(files[0], &ia, &err)) ||
            (rc = fs_compare_is_index(files[k], &ib, &err))) {
            fprintf(stderr, "fleetsim compare: %s\n", err.msg);
            rc = fs_error_exit_status(rc);
            break;
        }
        if (ia != ib) {
            fprintf(stderr,
                    "fleetsim compare: cannot compare a run file with a sweep point (%s, %s): "
                    "compare two run files, or two sweep points\n",
                    ia ? files[k] : files[0], ia ? files[0] : files[k]);
            rc = 2;
            break;
        }
        if (!ia) {
            rc = compare_pair(files[0], -1, files[k], -1, o, first);
            first = 0;
            continue;
        }
        size_t na = 0, nb = 0;
        if ((rc = fs_compare_points(files[0], &na, &err)) ||
            (rc = fs_compare_points(files[k], &nb, &err))) {
            fprintf(stderr, "fleetsim compare: %s\n", err.msg);
            rc = fs_error_exit_status(rc);
            break;
        }
        if (na != nb) {
            fprintf(stderr,
                    "fleetsim compare: %s has %zu points and %s has %zu: choose two with "
                    "--points P Q\n",
                    files[0], na, files[k], nb);
            rc = 2;
            break;
        }
        for (size_t p = 0; p < na && !rc; p++) {
            rc = compare_pair(files[0], (long)p, files[k], (long)p, o, first);
            first = 0;
        }
    }
    return rc;
}
