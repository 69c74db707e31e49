/*
 * The /summary table (analysis/fs_summary.def):
 *  - docs/results.md's /summary rows are the table's, generated: the block
 *    between the summary-table markers equals what `test_summary
 *    --doc-table` prints (`test_summary --update-docs` rewrites it there
 *    when a row changes);
 *  - every column is written and none is silently 0: each row names a
 *    probe scenario (tests/data/summary/) in which the figure cannot be 0
 *    (or must be NaN); each probe is run to a results file, and every
 *    column is read back from /summary by name, in the table's order,
 *    equal to the run's summary and non-zero (or NaN) in its probe.  A row
 *    whose computation or copy were dropped reads 0 there and fails;
 *  - the check itself flags a column zeroed in a run's values.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/fs_index.h"
#include "analysis/fs_summary.h"
#include "fs_test_util.h"
#include "scenarios/fs_scenario.h"
#include "sim/fs_alloc.h"
#include "sim/api/fs_runner.h"

typedef struct row {
    const char *name, *type, *unit, *probe, *desc;
    size_t off;
    int is_u64;
} row_t;

#define DOC_TYPE_uint64_t "u64"
#define DOC_TYPE_double "f64"
#define IS_U64_uint64_t 1
#define IS_U64_double 0
#define FS_SUMMARY(name, ctype, unit, from, probe, desc)                                    \
    {#name, DOC_TYPE_##ctype, unit, probe, desc, offsetof(fs_summary_t, name), IS_U64_##ctype},
static const row_t rows[] = {
#include "analysis/fs_summary.def"
};
#undef FS_SUMMARY
#define N_ROWS (sizeof rows / sizeof rows[0])

/* ---- docs/results.md -------------------------------------------------- */

#define DOC_BEGIN "<!-- summary-table: generated from analysis/fs_summary.def by " \
                  "`build/tests/test_summary --doc-table`; tests/test_summary.c checks it -->\n"
#define DOC_END "<!-- end of summary-table -->\n"

/* The table as docs/results.md shows it, markers included. */
static void doc_table(FILE *out)
{
    fputs(DOC_BEGIN, out);
    fprintf(out, "| %-26s | type | %-11s | meaning |\n", "column", "unit");
    fprintf(out, "|----------------------------|------|-------------|---------|\n");
    for (size_t i = 0; i < N_ROWS; i++) {
        char cell[64];
        snprintf(cell, sizeof cell, "`%s`", rows[i].name);
        fprintf(out, "| %-26s | %-4s | %-11s | %s |\n", cell, rows[i].type, rows[i].unit,
                rows[i].desc);
    }
    fputs(DOC_END, out);
}

static void test_doc_rows(void **state)
{
    (void)state;
    char *want = NULL;
    size_t wlen = 0;
    FILE *m = open_memstream(&want, &wlen);
    assert_non_null(m);
    doc_table(m);
    assert_int_equal(fclose(m), 0);

    size_t len;
    char *doc = fs_test_read(FS_SOURCE_DIR "/docs/results.md", &len);
    assert_non_null(doc);
    char *b = strstr(doc, DOC_BEGIN), *e = b ? strstr(b, DOC_END) : NULL;
    if (!b || !e)
        fail_msg("docs/results.md: no summary-table markers (%s)", DOC_BEGIN);
    size_t glen = (size_t)(e - b) + strlen(DOC_END);
    if (glen != wlen || memcmp(b, want, wlen) != 0) {
        /* the first line that differs, to say what is stale */
        const char *p = b, *q = want;
        while (*p && *p == *q && (size_t)(p - b) < glen)
            p++, q++;
        while (p > b && p[-1] != '\n')
            p--, q--;
        fail_msg("docs/results.md's /summary rows differ from analysis/fs_summary.def at:\n"
                 "  docs: %.*s\n  want: %.*s\n"
                 "regenerate them with build/tests/test_summary --update-docs",
                 (int)strcspn(p, "\n"), p, (int)strcspn(q, "\n"), q);
    }
    free(doc);
    free(want);
}

/* ---- every column written, none silently 0 ---------------------------- */

/* The probe scenario of row i ("S" or "S:nan"): its name in buf; 1 if the
 * figure must be NaN there. */
static int probe_of(size_t i, char *buf, size_t cap)
{
    const char *p = rows[i].probe, *colon = strchr(p, ':');
    size_t n = colon ? (size_t)(colon - p) : strlen(p);
    assert_true(n > 0 && n < cap);
    memcpy(buf, p, n);
    buf[n] = '\0';
    if (colon)
        assert_string_equal(colon + 1, "nan");
    return colon != NULL;
}

/* The columns of the table whose probe is `scenario` and whose value in
 * v (the file's /summary, in the table's order) breaks it: their count,
 * the first one's name in *first; each printed unless quiet. */
static size_t check_probe(const char *scenario, const double *v, const char **first, int quiet)
{
    size_t bad = 0;
    for (size_t i = 0; i < N_ROWS; i++) {
        char s[64];
        int want_nan = probe_of(i, s, sizeof s);
        if (strcmp(s, scenario) != 0)
            continue;
        int ok = want_nan ? isnan(v[i]) : isfinite(v[i]) && v[i] != 0;
        if (!ok) {
            if (!bad && first)
                *first = rows[i].name;
            bad++;
            if (!quiet)
                print_message("/summary.%s = %g in tests/data/summary/%s.yaml, where it %s\n",
                              rows[i].name, v[i], scenario,
                              want_nan ? "must be NaN" : "cannot be 0");
        }
    }
    return bad;
}

/* The value of row i in a summary, as the file stores it (u64 as double). */
static double field(const fs_summary_t *s, size_t i)
{
    const char *p = (const char *)s + rows[i].off;
    if (rows[i].is_u64) {
        uint64_t u;
        memcpy(&u, p, sizeof u);
        return (double)u;
    }
    double d;
    memcpy(&d, p, sizeof d);
    return d;
}

/* Runs tests/data/summary/NAME.yaml to dir/NAME.h5 and returns its
 * /summary row as the file holds it (N_ROWS values; fs_free). */
static double *run_probe(const char *dir, const char *name)
{
    char yaml[512], out[512];
    snprintf(yaml, sizeof yaml, "%s/tests/data/summary/%s.yaml", FS_SOURCE_DIR, name);
    snprintf(out, sizeof out, "%s/%s.h5", dir, name);
    fs_config_t cfg;
    fs_error_t err;
    if (fs_scenario_load_file(yaml, NULL, 0, &cfg, &err) != 0)
        fail_msg("%s", err.msg);
    fs_run_opts_t o;
    fs_run_opts_init(&o);
    o.output = out;
    fs_run_report_t rep;
    if (fs_run_config(&cfg, &o, &rep, &err) != 0)
        fail_msg("%s: %s", yaml, err.msg);
    fs_config_release(&cfg);

    char **names = NULL;
    double *v = NULL;
    size_t n = 0;
    if (fs_index_read_summary(out, &names, &v, &n, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(n, N_ROWS);   /* a column per row, in the table's order */
    for (size_t i = 0; i < N_ROWS; i++) {
        assert_string_equal(names[i], rows[i].name);
        double want = field(&rep.summary, i);   /* written as computed */
        if (!(v[i] == want || (isnan(v[i]) && isnan(want))))
            fail_msg("%s: /summary.%s = %.17g, the run's summary %.17g", name, rows[i].name,
                     v[i], want);
    }
    fs_index_free_summary(names, NULL, n);
    return v;
}

/* Every probe run once (the group's state). */
#define MAX_PROBES 16
typedef struct probes {
    char name[MAX_PROBES][64];
    double *v[MAX_PROBES];
    size_t n;
} probes_t;

static int run_probes(void **state)
{
    probes_t *p = calloc(1, sizeof *p);
    assert_non_null(p);
    for (size_t i = 0; i < N_ROWS; i++) {
        char s[64];
        probe_of(i, s, sizeof s);
        size_t k = 0;
        while (k < p->n && strcmp(p->name[k], s) != 0)
            k++;
        if (k == p->n) {
            assert_true(p->n < MAX_PROBES);
            snprintf(p->name[p->n++], 64, "%s", s);
        }
    }
    char *dir = fs_test_tmpdir();
    for (size_t k = 0; k < p->n; k++)
        p->v[k] = run_probe(dir, p->name[k]);
    fs_test_rmtree(dir);
    free(dir);
    *state = p;
    return 0;
}

static int free_probes(void **state)
{
    probes_t *p = *state;
    for (size_t k = 0; p && k < p->n; k++)
        fs_free(p->v[k]);
    free(p);
    return 0;
}

static void test_no_silent_zero(void **state)
{
    const probes_t *p = *state;
    size_t bad = 0;
    for (size_t k = 0; k < p->n; k++)
        bad += check_probe(p->name[k], p->v[k], NULL, 0);
    assert_int_equal(bad, 0);
}

/* The check catches a dropped figure: in each probe's real values, every
 * one of its columns set to 0 in turn (a computation or copy forgotten)
 * is flagged, and only that one; every row has a probe. */
static void test_check_catches_zero(void **state)
{
    probes_t *p = *state;
    size_t tried = 0;
    for (size_t k = 0; k < p->n; k++) {
        double *v = p->v[k];
        for (size_t i = 0; i < N_ROWS; i++) {
            char s[64];
            probe_of(i, s, sizeof s);
            if (strcmp(s, p->name[k]) != 0)
                continue;
            double keep = v[i];
            v[i] = 0;
            const char *first = NULL;
            assert_int_equal(check_probe(p->name[k], v, &first, 1), 1);
            assert_string_equal(first, rows[i].name);
            v[i] = keep;
            tried++;
        }
    }
    assert_int_equal(tried, N_ROWS);
}

/* Replaces the table between the markers in docs/results.md by the
 * generated one (a temporary renamed over it).  0, or 1 with a message. */
static int update_docs(void)
{
    const char *path = FS_SOURCE_DIR "/docs/results.md", *tmp = FS_SOURCE_DIR "/docs/results.md.tmp";
    size_t len;
    char *doc = fs_test_read(path, &len);
    char *b = doc ? strstr(doc, DOC_BEGIN) : NULL, *e = b ? strstr(b, DOC_END) : NULL;
    if (!b || !e) {
        fprintf(stderr, "%s: %s\n", path, doc ? "no summary-table markers" : "cannot read");
        free(doc);
        return 1;
    }
    FILE *f = fopen(tmp, "w");
    int bad = !f;
    if (f) {
        fwrite(doc, 1, (size_t)(b - doc), f);
        doc_table(f);
        e += strlen(DOC_END);
        fwrite(e, 1, len - (size_t)(e - doc), f);
        bad = ferror(f) | (fclose(f) != 0) || rename(tmp, path) != 0;
    }
    if (bad) {
        fprintf(stderr, "%s: cannot write it\n", tmp);
        remove(tmp);
    }
    free(doc);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--doc-table") == 0) {
        doc_table(stdout);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--update-docs") == 0)
        return update_docs();
    const struct CMUnitTest docs[] = {
        cmocka_unit_test(test_doc_rows),
    };
    const struct CMUnitTest runs[] = {
        cmocka_unit_test(test_no_silent_zero),
        cmocka_unit_test(test_check_catches_zero),
    };
    int rc = cmocka_run_group_tests_name("docs", docs, NULL, NULL);
    return rc + cmocka_run_group_tests_name("probes", runs, run_probes, free_probes);
}
