/* The conservative-backfill profile (models/fs_profile.h): hand-checked
 * answers on both implementations; the blocked one equal to the flat one
 * (every earliest() answer and the whole step list) over thousands of
 * random builds, takes and give-backs, including empty and one-step builds,
 * saturation at FS_TIME_NEVER and sizes that split many blocks; and every
 * allocation failure reported as FS_ENOMEM with nothing leaked. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "fs_test_util.h"
#include "models/fs_profile.h"
#include "sim/fs_alloc.h"
#include "sim/fs_error.h"

static uint64_t next(uint64_t *s)     /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static int64_t below(uint64_t *s, int64_t n) { return (int64_t)(next(s) % (uint64_t)n); }

static void hand_checked(int blocked)
{
    int64_t live0 = fs_alloc_live();
    fs_profile_t p = {0};
    fs_time_t t[8];
    int64_t f[8];
    assert_int_equal(fs_prof_reset(&p, blocked, 0, 4), 0);
    assert_int_equal(fs_prof_append(&p, 10, 2), 0);
    assert_int_equal(fs_prof_append(&p, 10, 1), 0);    /* summed */
    assert_int_equal(fs_prof_append(&p, 20, 3), 0);
    assert_int_equal(fs_prof_steps(&p, t, f), 3);
    assert_int_equal(t[1], 10);
    assert_int_equal(f[1], 7);
    assert_int_equal(f[2], 10);
    assert_int_equal(fs_prof_earliest(&p, 5, 5), 10);
    assert_int_equal(fs_prof_earliest(&p, 4, 100), 0);
    assert_int_equal(fs_prof_earliest(&p, 11, 1), FS_TIME_NEVER);
    /* [5, 15): points 5 and 15 inserted, counts of the step before */
    assert_int_equal(fs_prof_take(&p, 5, 10, 4), 0);
    assert_int_equal(fs_prof_steps(&p, t, f), 5);
    fs_time_t et[] = {0, 5, 10, 15, 20};
    int64_t ef[] = {4, 0, 3, 7, 10};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(t[i], et[i]);
        assert_int_equal(f[i], ef[i]);
    }
    assert_int_equal(fs_prof_earliest(&p, 4, 10), 15);
    assert_int_equal(fs_prof_dip(&p, 1, 5), 0);           /* 4 free over [0, 5) */
    assert_int_equal(fs_prof_dip(&p, 1, 6), 1);           /* 0 at 5 */
    assert_int_equal(fs_prof_dip(&p, 0, FS_TIME_NEVER), 0);
    assert_int_equal(fs_prof_earliest(&p, 4, 5), 0);      /* [0, 5) holds 4 */
    /* saturation: [30, NEVER) */
    assert_int_equal(fs_prof_take(&p, 30, FS_TIME_NEVER - 1, 1), 0);
    assert_int_equal(fs_prof_steps(&p, t, f), 7);
    assert_int_equal(t[6], FS_TIME_NEVER);
    assert_int_equal(f[5], 9);
    assert_int_equal(f[6], 10);
    assert_int_equal(fs_prof_earliest(&p, 10, 1), 20);
    assert_int_equal(fs_prof_earliest(&p, 10, 100), FS_TIME_NEVER);
    /* give back */
    assert_int_equal(fs_prof_take(&p, 5, 10, -4), 0);
    assert_int_equal(fs_prof_steps(&p, t, f), 7);
    assert_int_equal(f[1], 4);
    assert_int_equal(f[3], 7);
    /* a take before the first step reads 0 there */
    assert_int_equal(fs_prof_reset(&p, blocked, 100, 5), 0);
    assert_int_equal(fs_prof_take(&p, 50, 10, 1), 0);
    assert_int_equal(fs_prof_steps(&p, t, f), 3);
    assert_int_equal(t[0], 50);
    assert_int_equal(f[0], -1);
    assert_int_equal(t[1], 60);
    assert_int_equal(f[1], 0);
    assert_int_equal(f[2], 5);
    assert_int_equal(fs_prof_earliest(&p, 0, 1000), 60);
    assert_int_equal(fs_prof_earliest(&p, 1, 0), 100);
    fs_prof_release(&p);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_hand_checked(void **st)
{
    (void)st;
    hand_checked(0);
    hand_checked(1);
}

typedef struct pair {
    fs_profile_t a, b;      /* flat, blocked */
    fs_time_t *t, *u;       /* step lists */
    int64_t *f, *v;
    size_t cap;
} pair_t;

/* Both step lists equal; returns the count (lists in q->t, q->f). */
static size_t same_steps(pair_t *q)
{
    size_t n = fs_prof_steps(&q->a, NULL, NULL);
    assert_int_equal(fs_prof_steps(&q->b, NULL, NULL), n);
    if (n > q->cap) {
        q->cap = 2 * n;
        q->t = realloc(q->t, q->cap * sizeof *q->t);
        q->u = realloc(q->u, q->cap * sizeof *q->u);
        q->f = realloc(q->f, q->cap * sizeof *q->f);
        q->v = realloc(q->v, q->cap * sizeof *q->v);
        assert_non_null(q->t && q->u && q->f && q->v);
    }
    fs_prof_steps(&q->a, q->t, q->f);
    fs_prof_steps(&q->b, q->u, q->v);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(q->t[i], q->u[i]);
        assert_int_equal(q->f[i], q->v[i]);
        if (i > 0)
            assert_true(q->t[i - 1] < q->t[i]);
    }
    return n;
}

static fs_time_t rand_d(uint64_t *s)
{
    switch (below(s, 12)) {
    case 0: return 0;
    case 1: return FS_TIME_NEVER;
    case 2: return FS_TIME_NEVER - below(s, 1000);   /* saturates */
    case 3: return below(s, 5000);
    default: return 1 + below(s, 60);
    }
}

/* g near the counts of the profile (the answers change there). */
static int64_t rand_g(uint64_t *s, const pair_t *q, size_t n)
{
    if (below(s, 8) == 0)
        return below(s, 40) - 5;
    return q->f[below(s, (int64_t)n)] + below(s, 3) - 1;
}

static void one_sequence(pair_t *q, uint64_t seed)
{
    uint64_t s = seed;
    fs_time_t now = below(&s, 1000);
    int64_t free0 = below(&s, 30);
    size_t build;
    switch (seed % 5) {
    case 0: build = 0; break;
    case 1: build = 1; break;
    case 2: build = (size_t)below(&s, 40); break;
    case 3: build = (size_t)below(&s, 400); break;
    default: build = 64 + (size_t)below(&s, 1500); break;  /* many blocks */
    }
    assert_int_equal(fs_prof_reset(&q->a, 0, now, free0), 0);
    assert_int_equal(fs_prof_reset(&q->b, 1, now, free0), 0);
    fs_time_t last = now;
    int64_t step = 1 + below(&s, 20);
    static fs_time_t eg[2 * 1600];
    for (size_t i = 0; i < build; i++) {
        last += below(&s, 4) == 0 ? 0 : below(&s, step) + 1;  /* equal times sometimes */
        eg[2 * i] = last;
        eg[2 * i + 1] = below(&s, 10) == 0 ? -below(&s, 3) : below(&s, 9);
    }
    /* one by one or all at once (the blocked one either way against the
     * flat one one by one) */
    int batch = (int)(seed / 5 % 3);
    if (batch == 2)
        assert_int_equal(fs_prof_append_n(&q->a, eg, build), 0);
    else
        for (size_t i = 0; i < build; i++)
            assert_int_equal(fs_prof_append(&q->a, eg[2 * i], eg[2 * i + 1]), 0);
    if (batch >= 1)
        assert_int_equal(fs_prof_append_n(&q->b, eg, build), 0);
    else
        for (size_t i = 0; i < build; i++)
            assert_int_equal(fs_prof_append(&q->b, eg[2 * i], eg[2 * i + 1]), 0);
    size_t n = same_steps(q);
    size_t ops = build > 200 ? 150 + (size_t)below(&s, 300) : 20 + (size_t)below(&s, 120);
    fs_time_t taken_t[16], taken_d[16];
    int64_t taken_g[16];
    size_t n_taken = 0;
    for (size_t o = 0; o < ops; o++) {
        for (int k = 0; k < 3; k++) {
            int64_t g = rand_g(&s, q, n);
            fs_time_t d = rand_d(&s);
            fs_time_t x = fs_prof_earliest(&q->a, g, d);
            assert_int_equal(fs_prof_earliest(&q->b, g, d), x);
            fs_time_t at = q->t[below(&s, (int64_t)n)];
            fs_time_t until = below(&s, 3) != 0            ? now + below(&s, last - now + 100)
                              : at < FS_TIME_NEVER ? at + below(&s, 2)
                                                   : at;
            if (below(&s, 20) == 0)
                until = FS_TIME_NEVER;
            assert_int_equal(fs_prof_dip(&q->b, g, until), fs_prof_dip(&q->a, g, until));
        }
        int kind = (int)below(&s, 10);
        fs_time_t t, d;
        int64_t g;
        if (kind == 0 && n_taken > 0) {             /* give one back */
            size_t k = (size_t)below(&s, (int64_t)n_taken);
            t = taken_t[k];
            d = taken_d[k];
            g = -taken_g[k];
            taken_t[k] = taken_t[--n_taken];
            taken_d[k] = taken_d[n_taken];
            taken_g[k] = taken_g[n_taken];
        } else {
            d = rand_d(&s);
            g = below(&s, 12) - 2;
            if (kind <= 4)                          /* at an existing step */
                t = q->t[below(&s, (int64_t)n)];
            else if (kind <= 8)                     /* a new time, mostly inside */
                t = now + below(&s, last - now + 200);
            else
                t = below(&s, now + 1);             /* before the first step too */
            if (t == FS_TIME_NEVER || below(&s, 4) == 0) {  /* the planner's way */
                fs_time_t e = fs_prof_earliest(&q->a, g, d);
                if (e != FS_TIME_NEVER)
                    t = e;
            }
            if (n_taken < 16) {
                taken_t[n_taken] = t;
                taken_d[n_taken] = d;
                taken_g[n_taken++] = g;
            }
        }
        assert_int_equal(fs_prof_take(&q->a, t, d, g), 0);
        assert_int_equal(fs_prof_take(&q->b, t, d, g), 0);
        n = same_steps(q);
    }
}

static void test_blocked_equals_flat(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    pair_t q = {0};
    for (uint64_t seed = 1; seed <= 3000; seed++)
        one_sequence(&q, seed * 7919);
    fs_prof_release(&q.a);
    fs_prof_release(&q.b);
    free(q.t);
    free(q.u);
    free(q.f);
    free(q.v);
    assert_int_equal(fs_alloc_live(), live0);
}

/* One fixed build-and-plan sequence; the first error or 0. */
static int plan(fs_profile_t *p, int blocked)
{
    uint64_t s = 42;
    int rc = fs_prof_reset(p, blocked, 0, 10);
    fs_time_t eg[2 * 150];
    for (int i = 0; i < 150; i++) {
        eg[2 * i] = 3000 + 10 * (i / 2);
        eg[2 * i + 1] = below(&s, 4);
    }
    for (int i = 1; !rc && i < 300; i++)
        rc = fs_prof_append(p, 10 * i, below(&s, 4));
    if (!rc)
        rc = fs_prof_append_n(p, eg, 150);
    for (int i = 0; !rc && i < 200; i++) {
        int64_t g = 1 + below(&s, 20);
        fs_time_t d = 1 + below(&s, 500);
        fs_time_t t = fs_prof_earliest(p, g, d);
        if (t != FS_TIME_NEVER)
            rc = fs_prof_take(p, t, d, g);
    }
    return rc;
}

static void test_alloc_failures(void **st)
{
    (void)st;
    for (int blocked = 0; blocked <= 1; blocked++) {
        int failed = 0;
        for (uint64_t k = 1;; k++) {
            int64_t live0 = fs_alloc_live();
            fs_profile_t p = {0};
            fs_alloc_fail_after(k);
            int rc = plan(&p, blocked);
            fs_alloc_fail_after(0);
            fs_prof_release(&p);
            assert_int_equal(fs_alloc_live(), live0);
            if (rc == 0)
                break;
            assert_int_equal(rc, FS_ENOMEM);
            failed++;
        }
        assert_true(failed >= 3);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_checked),
        cmocka_unit_test(test_blocked_equals_flat),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
