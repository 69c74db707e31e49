/*
 * Tests of the keyed random streams (sim/fs_rng): the generator against the
 * published xoshiro256** reference output, the documented key derivation
 * (golden values), stream identity and independence (common random numbers:
 * no shared state), and the statistical quality of the custom GSL type.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>

#include "fs_test_util.h"
#include "sim/fs_alloc.h"
#include "sim/fs_rng.h"

/* ---- the generator itself ---- */

static void test_type_description(void **st)
{
    (void)st;
    const gsl_rng_type *t = fs_rng_type();
    assert_string_equal(t->name, "fs_xoshiro256starstar");
    assert_int_equal(t->min, 0);
    assert_int_equal(t->max, 0xffffffffUL);
    assert_int_equal(t->size, 4 * sizeof(uint64_t));
}

/* xoshiro256** from the state {1, 2, 3, 4}: the first ten 64-bit outputs of
 * the reference implementation (Blackman and Vigna, xoshiro256starstar.c),
 * as also used by the test suites of other ports. */
static const uint64_t xoshiro_ref[10] = {
    UINT64_C(11520),
    UINT64_C(0),
    UINT64_C(1509978240),
    UINT64_C(1215971899390074240),
    UINT64_C(1216172134540287360),
    UINT64_C(607988272756665600),
    UINT64_C(16172922978634559625),
    UINT64_C(8476171486693032832),
    UINT64_C(10595114339597558777),
    UINT64_C(2904607092377533576),
};

static void set_state_1234(gsl_rng *g)
{
    uint64_t s[4] = {1, 2, 3, 4};
    memcpy(g->state, s, sizeof s);
}

static void test_reference_output(void **st)
{
    (void)st;
    gsl_rng *g = gsl_rng_alloc(fs_rng_type());
    assert_non_null(g);
    /* get: the upper 32 bits of each output */
    set_state_1234(g);
    for (int i = 0; i < 10; i++)
        assert_int_equal(gsl_rng_get(g), xoshiro_ref[i] >> 32);
    /* get_double: the upper 53 bits, scaled to [0,1) exactly */
    set_state_1234(g);
    for (int i = 0; i < 10; i++) {
        double u = gsl_rng_uniform(g);
        assert_true(u >= 0 && u < 1);
        assert_int_equal((uint64_t)ldexp(u, 53), xoshiro_ref[i] >> 11);
    }
    gsl_rng_free(g);
}

/* The documented derivation: SplitMix64 chained over seed, replication,
 * purpose and entity.  Golden values computed independently (a Python
 * transcription of fs_rng.h's description); if they change, every stream
 * of every scenario changes. */
static void test_key_golden_values(void **st)
{
    (void)st;
    assert_int_equal(fs_rng_key(0, 0, 0, 0), UINT64_C(0x2130748aaac80268));
    assert_int_equal(fs_rng_key(7, 1, 1, 42), UINT64_C(0xce0f9a6caddfa1f3));
    /* and the stream (1, 0, FS_RNG_ARRIVAL, 0) begins with these draws */
    static const unsigned long first[4] = {4018909996UL, 3980454038UL, 2238350836UL,
                                           3858123985UL};
    fs_rng_t r;
    assert_int_equal(fs_rng_init(&r, 1, 0, FS_RNG_ARRIVAL, 0), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(gsl_rng_get(fs_rng_gsl(&r)), first[i]);
    fs_rng_release(&r);
    fs_rng_release(&r); /* twice is harmless */
    assert_null(r.g);
}

/* ---- keys and streams ---- */

static void draw(fs_rng_t *r, unsigned long *out, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = gsl_rng_get(fs_rng_gsl(r));
}

static void test_same_key_same_stream(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    enum { N = 1000 };
    unsigned long a[N], b[N];
    fs_rng_t r1, r2;
    assert_int_equal(fs_rng_init(&r1, 42, 3, FS_RNG_FAILURE, 12345), 0);
    assert_int_equal(fs_rng_init(&r2, 42, 3, FS_RNG_FAILURE, 12345), 0);
    draw(&r1, a, N);
    draw(&r2, b, N);
    assert_memory_equal(a, b, sizeof a);
    /* and re-seeding through GSL restarts the same stream */
    gsl_rng_set(fs_rng_gsl(&r1), (unsigned long)fs_rng_key(42, 3, FS_RNG_FAILURE, 12345));
    draw(&r1, b, N);
    assert_memory_equal(a, b, sizeof a);
    fs_rng_release(&r1);
    fs_rng_release(&r2);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_different_keys_different_streams(void **st)
{
    (void)st;
    /* base key and one change in each part (and swapped parts) */
    static const struct { uint64_t seed, rep; uint32_t purpose; uint64_t entity; } keys[] = {
        {1, 0, FS_RNG_ARRIVAL, 0},
        {2, 0, FS_RNG_ARRIVAL, 0},          /* seed */
        {1, 1, FS_RNG_ARRIVAL, 0},          /* replication */
        {1, 0, FS_RNG_DURATION, 0},         /* purpose */
        {1, 0, FS_RNG_ARRIVAL, 1},          /* entity */
        {0, 1, FS_RNG_ARRIVAL, 0},          /* seed and replication swapped */
        {1, 0, 0, FS_RNG_ARRIVAL},          /* purpose and entity swapped */
        {1, 0, FS_RNG_ARRIVAL, UINT64_C(1) << 40},
    };
    enum { K = sizeof keys / sizeof keys[0], N = 8 };
    unsigned long d[K][N];
    uint64_t h[K];
    for (int i = 0; i < K; i++) {
        fs_rng_t r;
        assert_int_equal(fs_rng_init(&r, keys[i].seed, keys[i].rep, keys[i].purpose,
                                     keys[i].entity), 0);
        draw(&r, d[i], N);
        h[i] = fs_rng_key(keys[i].seed, keys[i].rep, keys[i].purpose, keys[i].entity);
        fs_rng_release(&r);
    }
    for (int i = 0; i < K; i++)
        for (int j = i + 1; j < K; j++) {
            assert_int_not_equal(h[i], h[j]);
            int same = 0;
            for (int k = 0; k < N; k++)
                same += d[i][k] == d[j][k];
            assert_true(same <= 1); /* 8 draws of 32 bits: equal only by chance */
        }
    /* 100,000 entity streams of one purpose: no two keys collide */
    enum { E = 100000 };
    static uint64_t ks[E];
    for (uint64_t e = 0; e < E; e++)
        ks[e] = fs_rng_key(7, 0, FS_RNG_FAILURE, e);
    /* shell sort, then neighbours differ */
    for (size_t gap = E / 2; gap > 0; gap /= 2)
        for (size_t i = gap; i < E; i++)
            for (size_t j = i; j >= gap && ks[j - gap] > ks[j]; j -= gap) {
                uint64_t t = ks[j];
                ks[j] = ks[j - gap];
                ks[j - gap] = t;
            }
    for (size_t i = 1; i < E; i++)
        assert_true(ks[i] != ks[i - 1]);
}

/* Common random numbers: the arrival stream's draws do not depend on any
 * other stream being created or drawn from in between. */
static void test_streams_share_no_state(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    enum { N = 200 };
    unsigned long alone[N], mixed[N];
    fs_rng_t a;
    assert_int_equal(fs_rng_init(&a, 9, 2, FS_RNG_ARRIVAL, 0), 0);
    draw(&a, alone, N);
    fs_rng_release(&a);

    fs_rng_t others[4];
    assert_int_equal(fs_rng_init(&others[0], 9, 2, FS_RNG_DURATION, 0), 0);
    assert_int_equal(fs_rng_init(&a, 9, 2, FS_RNG_ARRIVAL, 0), 0);
    assert_int_equal(fs_rng_init(&others[1], 9, 2, FS_RNG_GPUS, 0), 0);
    for (int k = 0; k < 50; k++)
        gsl_rng_uniform(fs_rng_gsl(&others[0]));
    for (int i = 0; i < N; i++) {
        if (i == 17)
            assert_int_equal(fs_rng_init(&others[2], 9, 2, FS_RNG_PURPOSE_USER, 5), 0);
        if (i == 90)
            assert_int_equal(fs_rng_init(&others[3], 9, 2, FS_RNG_ARRIVAL, 1), 0);
        mixed[i] = gsl_rng_get(fs_rng_gsl(&a));
        for (int k = 0; k < i % 3; k++) {
            gsl_rng_uniform(fs_rng_gsl(&others[1]));
            if (i >= 17)
                gsl_rng_get(fs_rng_gsl(&others[2]));
            if (i >= 90)
                gsl_rng_uniform_pos(fs_rng_gsl(&others[3]));
        }
    }
    assert_memory_equal(alone, mixed, sizeof alone);
    fs_rng_release(&a);
    for (int k = 0; k < 4; k++)
        fs_rng_release(&others[k]);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- statistical quality of the GSL type ---- */

static void test_uniform_chi_square_and_mean(void **st)
{
    (void)st;
    enum { BINS = 64, N = 1000000 };
    fs_rng_t r;
    assert_int_equal(fs_rng_init(&r, 2024, 0, FS_RNG_PURPOSE_USER, 0), 0);
    gsl_rng *g = fs_rng_gsl(&r);
    unsigned long count[BINS] = {0};
    double sum = 0, lo = 1, hi = 0;
    for (int i = 0; i < N; i++) {
        double u = gsl_rng_uniform(g);
        sum += u;
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
        count[(int)(u * BINS)]++;
    }
    double expect = (double)N / BINS, chi2 = 0;
    for (int b = 0; b < BINS; b++)
        chi2 += (count[b] - expect) * (count[b] - expect) / expect;
    double p = gsl_cdf_chisq_Q(chi2, BINS - 1);
    assert_true(p > 1e-4);
    /* mean 1/2, standard error sqrt(1/12 / N) */
    double mean = sum / N, se = sqrt(1.0 / 12.0 / N);
    assert_true(fabs(mean - 0.5) < 5 * se);
    assert_true(lo >= 0 && lo < 1e-4 && hi < 1 && hi > 1 - 1e-4);
    /* uniform_pos never returns 0 */
    for (int i = 0; i < 1000; i++)
        assert_true(gsl_rng_uniform_pos(g) > 0);
    fs_rng_release(&r);
}

static void test_uniform_int(void **st)
{
    (void)st;
    fs_rng_t r;
    assert_int_equal(fs_rng_init(&r, 5, 0, FS_RNG_PLACE, 0), 0);
    gsl_rng *g = fs_rng_gsl(&r);
    enum { K = 10, N = 200000 };
    unsigned long count[K] = {0};
    for (int i = 0; i < N; i++) {
        unsigned long k = gsl_rng_uniform_int(g, K);
        assert_true(k < K);
        count[k]++;
    }
    /* each count is Binomial(N, 1/K): within 5 standard deviations */
    double mu = (double)N / K, sd = sqrt(N * 0.1 * 0.9);
    for (int k = 0; k < K; k++)
        assert_true(fabs((double)count[k] - mu) < 5 * sd);
    /* the extremes of n */
    for (int i = 0; i < 100; i++)
        assert_int_equal(gsl_rng_uniform_int(g, 1), 0);
    int high = 0;
    for (int i = 0; i < 1000; i++)
        high += gsl_rng_uniform_int(g, 0xffffffffUL) >= 0x80000000UL;
    assert_true(high > 400 && high < 600);
    fs_rng_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_description),
        cmocka_unit_test(test_reference_output),
        cmocka_unit_test(test_key_golden_values),
        cmocka_unit_test(test_same_key_same_stream),
        cmocka_unit_test(test_different_keys_different_streams),
        cmocka_unit_test(test_streams_share_no_state),
        cmocka_unit_test(test_uniform_chi_square_and_mean),
        cmocka_unit_test(test_uniform_int),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
