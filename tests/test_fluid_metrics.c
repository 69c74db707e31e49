/*
 * Fluid mode's figures from its components (models/fs_service_metrics.c,
 * docs/performance.md "The fluid year after the edge-spread TTFT slices"):
 * the fast paths give exactly what the plain computations give.
 *
 * - fs_svmet_comp_quantile brackets the root by Newton's method and then
 *   replays the bisection, summing only inside the bracket: its answer must
 *   be the plain bisection's, to the bit, on random mixtures of uniform
 *   pieces, points and exponential tails over many scales.
 * - fs_svmet_comps_to_hist finds an exponential sample's bin from a table of
 *   log(1 - u_j) and a libm-free log10 estimate: every bin must hold exactly
 *   what a logarithm per sample and GSL's own bin search put there.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_histogram.h>
#include <math.h>
#include <string.h>

#include "models/fs_service_int.h"

/* a small deterministic generator (splitmix64) for the cases */
static double unif(uint64_t *st)
{
    uint64_t z = (*st += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

/* a random mixture of n components at scale sc (s) */
static void mixture(uint64_t *st, comp_t *c, size_t n, double sc)
{
    for (size_t i = 0; i < n; i++) {
        double u = unif(st), a = sc * 5 * unif(st), w = 0.01 + unif(st);
        if (unif(st) < 0.2)
            a = 0;
        if (u < 0.35)           /* uniform */
            c[i] = (comp_t){.w = w, .a = a, .b = a + sc * pow(10, -6 + 7 * unif(st)), .theta = -1};
        else if (u < 0.45)      /* a point */
            c[i] = (comp_t){.w = w, .a = a, .b = a, .theta = -1};
        else if (u < 0.5)       /* an atom: theta 0 */
            c[i] = (comp_t){.w = w, .a = a, .pw = unif(st), .theta = 0};
        else                    /* an atom and an exponential tail */
            c[i] = (comp_t){.w = w, .a = a, .pw = unif(st) < 0.3 ? 1 : unif(st),
                            .theta = sc * pow(10, -4 + 5 * unif(st))};
    }
}

/* The plain bisection on the mixture's CDF, from [0, 1.01 x the top] to its
 * fixed point (at most 100 steps): what fs_svmet_comp_quantile must give. */
static double plain_quantile(const comp_t *c, size_t n, double q)
{
    double tot = 0, hi = 0;
    for (size_t i = 0; i < n; i++) {
        tot += c[i].w;
        double top = c[i].theta >= 0 ? c[i].a + 50 * c[i].theta : c[i].b;
        if (top > hi)
            hi = top;
    }
    if (!(tot > 0))
        return NAN;
    double lo = 0;
    hi = hi * 1.01 + 1e-9;
    for (int it = 0; it < 100; it++) {
        double x = 0.5 * (lo + hi), f = 0, lo0 = lo, hi0 = hi;
        for (size_t i = 0; i < n; i++) {
            const comp_t *k = &c[i];
            double p;
            if (k->theta >= 0)
                p = x < k->a ? 0 : 1 - k->pw * (k->theta > 0 ? exp(-(x - k->a) / k->theta) : 0);
            else
                p = x >= k->b ? 1 : x < k->a ? 0 : (x - k->a) / (k->b - k->a);
            f += k->w * p;
        }
        if (f / tot >= q)
            hi = x;
        else
            lo = x;
        if (lo == lo0 && hi == hi0)
            break;
    }
    return hi;
}

static void test_quantile_same_as_bisection(void **state)
{
    (void)state;
    uint64_t st = 35;
    comp_t c[300];
    static const double qs[] = {0.5, 0.95, 0.99, 0.0001, 0.9999};
    int cases = 0;
    for (int rep = 0; rep < 400; rep++) {
        size_t n = 1 + (size_t)(unif(&st) * 299);
        double sc = pow(10, -3 + 5 * unif(&st));
        mixture(&st, c, n, sc);
        for (size_t k = 0; k < sizeof qs / sizeof qs[0] + 1; k++) {
            double q = k < sizeof qs / sizeof qs[0] ? qs[k] : unif(&st);
            double want = plain_quantile(c, n, q), got = fs_svmet_comp_quantile(c, n, q);
            if (memcmp(&want, &got, sizeof want) != 0)
                fail_msg("case %d (n %zu, scale %g, q %.17g): %.17g, the bisection %.17g", rep,
                         n, sc, q, got, want);
            cases++;
        }
    }
    /* a point at 0 alone (the bisection's hundred steps end near 0), and no weight */
    comp_t z = {.w = 1, .a = 0, .b = 0, .theta = -1};
    assert_true(fs_svmet_comp_quantile(&z, 1, 0.5) == plain_quantile(&z, 1, 0.5));
    z.w = 0;
    assert_true(isnan(fs_svmet_comp_quantile(&z, 1, 0.5)));
    print_message("%d quantiles equal to the bisection's, bit for bit\n", cases);
}

/* The bin GSL's search gives, clamped to the end bins as the run's
 * histogram is. */
static size_t gsl_bin(const gsl_histogram *h, double x)
{
    size_t i;
    if (!(x >= h->range[0]))
        return 0;
    if (!(x < h->range[h->n]))
        return h->n - 1;
    assert_int_equal(gsl_histogram_find(h, x, &i), 0);
    return i;
}

static void test_hist_same_as_log_per_sample(void **state)
{
    (void)state;
    uint64_t st = 7;
    comp_t c[200];
    gsl_histogram *h = fs_svmet_loghist(), *g = fs_svmet_loghist();
    assert_non_null(h);
    assert_non_null(g);
    long samples = 0;
    for (int rep = 0; rep < 200; rep++) {
        size_t n = 1 + (size_t)(unif(&st) * 199);
        mixture(&st, c, n, pow(10, -4 + 8 * unif(&st)));
        int per = unif(&st) < 0.8 ? 64 : 4;
        fs_svmet_comps_to_hist(h, c, n, per);
        for (size_t i = 0; i < n; i++) {   /* as before: a logarithm a sample */
            const comp_t *k = &c[i];
            if (k->theta < 0 && k->a == k->b) {
                g->bin[gsl_bin(g, k->a)] += k->w;
                continue;
            }
            for (int j = 0; j < per; j++) {
                double u = (j + 0.5) / per, x;
                if (k->theta >= 0)
                    x = u <= 1 - k->pw || !(k->theta > 0) ? k->a
                                                          : k->a - k->theta * log((1 - u) / k->pw);
                else
                    x = k->a + u * (k->b - k->a);
                g->bin[gsl_bin(g, x)] += k->w / per;
                samples++;
            }
        }
    }
    /* samples on bin edges, where the estimate must defer to the ranges */
    for (size_t i = 0; i < h->n; i += 97) {
        double e = h->range[i];
        comp_t p[3] = {{.w = 1, .a = e, .b = e, .theta = -1},
                       {.w = 1, .a = nextafter(e, 0), .b = nextafter(e, 0), .theta = -1},
                       {.w = 1, .a = e * 0.5, .pw = 1, .theta = e / (2 * log(64.0 / 63))}};
        fs_svmet_comps_to_hist(h, p, 3, 64);
        g->bin[gsl_bin(g, e)] += 1;
        g->bin[gsl_bin(g, nextafter(e, 0))] += 1;
        for (int j = 0; j < 64; j++)
            g->bin[gsl_bin(g, p[2].a - p[2].theta * log((1 - (j + 0.5) / 64) / p[2].pw))] += 1.0 / 64;
        /* tails whose last sample falls on the edge to a few ulps: there the
         * table's sum and the sample's own logarithm round differently */
        for (int v = 0; v < 16; v++) {
            double pw = 0.5 + 0.5 * unif(&st), lg = log((1 - 63.5 / 64) / pw);
            comp_t t = {.w = 1, .a = 0, .pw = pw, .theta = -e / lg};
            fs_svmet_comps_to_hist(h, &t, 1, 64);
            for (int j = 0; j < 64; j++) {
                double u = (j + 0.5) / 64;
                g->bin[gsl_bin(g, u <= 1 - pw ? 0 : -t.theta * log((1 - u) / pw))] += 1.0 / 64;
            }
        }
    }
    for (size_t i = 0; i < h->n; i++)
        if (memcmp(&h->bin[i], &g->bin[i], sizeof(double)) != 0)
            fail_msg("bin %zu [%.17g, %.17g): %.17g, a logarithm a sample %.17g", i,
                     h->range[i], h->range[i + 1], h->bin[i], g->bin[i]);
    print_message("%ld samples, every bin equal\n", samples);
    gsl_histogram_free(h);
    gsl_histogram_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantile_same_as_bisection),
        cmocka_unit_test(test_hist_same_as_log_per_sample),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
