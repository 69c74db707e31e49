/* MIG geometry (models/fs_mig): the module's tables against the MIG user
 * guide's placement listings, every layout of NVIDIA/mig-parted's default
 * config accepted for the GPU models it names (with the instance counts it
 * names) and rejected for the others, an exhaustive enumeration that the
 * accepted multisets are exactly those the hardware rules allow, the free
 * count against brute force, place/remove round trips, the parser's
 * located errors, and the re-partitioning plans (fs_mig_recut) against the
 * brute-force oracle and hand counts.  Sources: docs/mig.md. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "models/fs_catalog.h"
#include "models/fs_mig.h"

/* ---- the oracle: the hardware rules, transcribed independently ---- */

/* Per profile, as the MIG user guide (r580) states it: the placement list
 * `nvidia-smi mig -lgipp` prints ({starts}:size in memory slices; the guide's
 * A100 listing, also reported on H100 80GB), compute slices (the "g" of the
 * name) and "Number of Instances Available". */
typedef struct oracle_prof {
    const char *name;
    const char *lgipp;
    unsigned compute, available;
} oracle_prof_t;

#define ORACLE7(a, b, c, d, e, f, g)                                              \
    7, 7, {{a, "{0,1,2,3,4,5,6}:1", 1, 7}, {b, "{0,1,2,3,4,5,6}:1", 1, 1}, {c, "{0,2,4,6}:2", 1, 4}, \
     {d, "{0,2,4}:2", 2, 3},         {e, "{0,4}:4", 3, 2},           {f, "{0}:4", 4, 1},        \
     {g, "{0}:8", 7, 1}}

/* The A30-24GB (the guide's A30 table: 4 compute and 4 memory slices;
 * placements as go-nvml's A30 mock lists them, which the fractions and
 * counts force: a 1/4 profile at each quarter, a 2/4 one at either half,
 * the full one at 0). */
static const struct {
    const char *model;
    unsigned nprof, slices;     /* profiles; the GPU's compute slices */
    oracle_prof_t prof[7];
} oracle[FS_MIG_GPU_COUNT] = {
    {"A100-40GB", ORACLE7("1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")},
    {"A100-80GB", ORACLE7("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")},
    {"H100-80GB", ORACLE7("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")},
    {"H200-141GB", ORACLE7("1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb")},
    {"B200-180GB", ORACLE7("1g.23gb", "1g.23gb+me", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb")},
    {"H100-94GB", ORACLE7("1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb")},
    {"A30-24GB", 5, 4,
     {{"1g.6gb", "{0,1,2,3}:1", 1, 4}, {"1g.6gb+me", "{0,1,2,3}:1", 1, 1}, {"2g.12gb", "{0,2}:2", 2, 2},
      {"2g.12gb+me", "{0,2}:2", 2, 1}, {"4g.24gb", "{0}:4", 4, 1}}},
};

/* "{0,2,4}:2" -> start list and size. */
static unsigned parse_lgipp(const char *s, unsigned starts[8], unsigned *size)
{
    unsigned n = 0;
    assert_true(*s == '{');
    s++;
    while (*s != '}') {
        char *e;
        starts[n++] = (unsigned)strtoul(s, &e, 10);
        s = *e == ',' ? e + 1 : e;
    }
    assert_true(s[1] == ':');
    *size = (unsigned)strtoul(s + 2, NULL, 10);
    return n;
}

typedef struct cand { unsigned prof, start, size, compute; } cand_t;

typedef struct orc {
    cand_t cand[32];
    unsigned ncand, available[7];
    unsigned slices;         /* the GPU's compute slices (7; A30 4) */
    uint8_t *valid;          /* multiset code -> 1 when some placement set realises it */
    unsigned sets;           /* placement sets enumerated */
    const fs_mig_model_t *m;
    unsigned fits_checked;
    unsigned recut_checked;  /* (layout, kept subset, profile) re-cuts checked */
    uint8_t *parsed;         /* multiset code -> 1 once its re-cut text went through the parser */
    unsigned recut_parsed;
} orc_t;

/* Multiset code: mixed radix, digit p in 0 .. available[p] + 1. */
static unsigned code_of(const unsigned available[7], const unsigned count[7])
{
    unsigned c = 0;
    for (unsigned p = 7; p-- > 0;)
        c = c * (available[p] + 2) + count[p];
    return c;
}

static unsigned range_mask(unsigned start, unsigned size) { return ((1u << size) - 1u) << start; }

/* Largest number of extra instances of profile p given occupied slots, by
 * trying every subset of p's placements. */
static unsigned brute_fits(const orc_t *o, unsigned mem, unsigned p, unsigned have)
{
    unsigned best = 0;
    cand_t pc[8];
    unsigned n = 0;
    for (unsigned i = 0; i < o->ncand; i++)
        if (o->cand[i].prof == p)
            pc[n++] = o->cand[i];
    for (unsigned sub = 0; sub < (1u << n); sub++) {
        unsigned used = mem, k = 0, ok = 1;
        for (unsigned i = 0; i < n && ok; i++)
            if (sub >> i & 1u) {
                unsigned r = range_mask(pc[i].start, pc[i].size);
                ok = !(used & r);
                used |= r;
                k++;
            }
        if (ok && have + k <= o->available[p] && k > best)
            best = k;
    }
    return best;
}

/* Re-partitioning (fs_mig_recut) at one reachable layout: for every subset
 * of its instances kept in use (all, none, all but one) and every profile p, the re-cut keeps those
 * instances where they are, adds only instances of p, holds as many of p as
 * the brute-force maximum over p's placements beside the kept slots allows,
 * is a valid layout, and its spec survives fs_mig_spec_format ->
 * fs_mig_layout_parse unchanged (a layout mig-parted's format accepts). */
static void check_recut(orc_t *o, const fs_mig_layout_t *l)
{
    /* Every subset of a reachable set is itself reachable and enumerated,
     * so keeping all instances covers every kept set; keeping none and
     * keeping all but one check that the others are destroyed. */
    unsigned full = (1u << l->ninst) - 1u;
    for (unsigned v = 0; v <= l->ninst + 1u; v++) {
        unsigned keep = v == 0 ? full : v == 1 ? 0 : full & ~(1u << (v - 2));
        if (v >= 1 && full == 0)
            break;
        unsigned kmem = 0, kcount[7] = {0};
        for (unsigned i = 0; i < l->ninst; i++)
            if (keep >> i & 1u) {
                const fs_mig_profile_t *pr = &o->m->profile[l->inst[i].profile];
                kmem |= range_mask(l->inst[i].start, pr->mem_slices);
                kcount[l->inst[i].profile]++;
            }
        for (unsigned p = 0; p < 7; p++) {
            fs_mig_layout_t r;
            unsigned n = fs_mig_recut(o->m, l, (uint8_t)keep, p, &r);
            assert_int_equal(fs_mig_layout_check(o->m, &r, NULL), 0);
            assert_int_equal(n, r.count[p]);
            assert_int_equal(n, kcount[p] + brute_fits(o, kmem, p, kcount[p]));
            unsigned kept = 0;
            for (unsigned i = 0; i < l->ninst; i++) {
                if (!(keep >> i & 1u))
                    continue;
                bool found = false;
                for (unsigned j = 0; j < r.ninst; j++)
                    found |= r.inst[j].start == l->inst[i].start && r.inst[j].profile == l->inst[i].profile;
                assert_true(found);
                kept++;
            }
            for (unsigned q = 0; q < 7; q++)
                if (q != p)
                    assert_int_equal(r.count[q], kcount[q]);
            assert_int_equal(r.ninst, kept + n - kcount[p]);
            o->recut_checked++;
            unsigned cnt[7];
            for (unsigned q = 0; q < 7; q++)
                cnt[q] = r.count[q];
            unsigned code = code_of(o->available, cnt);
            if (o->parsed[code])
                continue;  /* this multiset's text went through the parser already */
            o->parsed[code] = 1;
            o->recut_parsed++;
            fs_mig_spec_t spec, back;
            fs_mig_spec_of(&r, &spec);
            char text[128];
            assert_true(fs_mig_spec_format(o->m, &spec, text, sizeof text) < sizeof text);
            fs_error_t err;
            if (fs_mig_layout_parse(o->m, text, &back, NULL, &err) != 0)
                fail_msg("%s: re-cut '%s' refused by the parser: %s", o->m->name, text, err.msg);
            assert_true(back.enabled);
            assert_memory_equal(back.count, spec.count, sizeof spec.count);
            assert_true(fs_mig_spec_valid(o->m, &back));
        }
    }
}

/* Every set of placements that obeys the hardware rules: memory slices
 * disjoint, at most the GPU's compute slices in all (7; A30 4), at most "available" instances
 * of each profile.  Each set is visited once (candidates in index order). */
static void enumerate(orc_t *o, unsigned from, unsigned mem, unsigned compute, unsigned count[7], fs_mig_layout_t *l)
{
    o->sets++;
    o->valid[code_of(o->available, count)] = 1;
    /* the state reached by placing these instances: the module agrees on
     * what still fits and on its invariants */
    assert_int_equal(fs_mig_layout_check(o->m, l, NULL), 0);
    assert_int_equal(l->mem, mem);
    for (unsigned p = 0; p < 7; p++) {
        assert_int_equal(fs_mig_fits(o->m, l, p), brute_fits(o, mem, p, count[p]));
        int f = fs_mig_find(o->m, l, p);
        int lowest = -1;
        for (unsigned i = 0; i < o->ncand && lowest < 0; i++)
            if (o->cand[i].prof == p && !(mem & range_mask(o->cand[i].start, o->cand[i].size)) &&
                count[p] < o->available[p])
                lowest = (int)o->cand[i].start;
        assert_int_equal(f, lowest);
        int b = fs_mig_find_best(o->m, l, p);
        assert_int_equal(b < 0, f < 0);
        if (b >= 0)
            assert_true(fs_mig_can_place_at(o->m, l, p, (unsigned)b));
        o->fits_checked++;
    }
    check_recut(o, l);
    for (unsigned i = from; i < o->ncand; i++) {
        const cand_t *c = &o->cand[i];
        unsigned r = range_mask(c->start, c->size);
        if ((mem & r) || compute + c->compute > o->slices || count[c->prof] + 1 > o->available[c->prof])
            continue;
        fs_mig_layout_t save = *l;
        assert_int_equal(fs_mig_place(o->m, l, c->prof, (int)c->start), (int)c->start);
        count[c->prof]++;
        enumerate(o, i + 1, mem | r, compute + c->compute, count, l);
        count[c->prof]--;
        assert_int_equal(fs_mig_remove(o->m, l, c->start), (int)c->prof);
        assert_memory_equal(&save, l, sizeof save);
    }
}

/* The module's tables equal the guide's listings. */
static void test_tables_match_guide(void **s)
{
    (void)s;
    for (int g = 0; g < FS_MIG_GPU_COUNT; g++) {
        const fs_mig_model_t *m = fs_mig_model((fs_mig_gpu_t)g);
        assert_non_null(m);
        assert_string_equal(m->name, oracle[g].model);
        assert_int_equal(m->nprofiles, oracle[g].nprof);
        assert_int_equal(m->compute, oracle[g].slices);
        assert_int_equal(m->slots, oracle[g].slices == 7 ? 8 : 4);
        for (unsigned p = 0; p < oracle[g].nprof; p++) {
            const oracle_prof_t *op = &oracle[g].prof[p];
            const fs_mig_profile_t *pr = &m->profile[p];
            unsigned st[8], size, n = parse_lgipp(op->lgipp, st, &size), mask = 0;
            for (unsigned i = 0; i < n; i++)
                mask |= 1u << st[i];
            assert_string_equal(pr->name, op->name);
            assert_int_equal(pr->starts, mask);
            assert_int_equal(pr->mem_slices, size);
            assert_int_equal(pr->compute, op->compute);
            assert_int_equal(pr->max_count, op->available);
            assert_int_equal(pr->gpu_milli, op->compute * 1000 / oracle[g].slices);
            assert_int_equal(pr->slices, oracle[g].slices);
            assert_true((pr->starts >> (m->slots - pr->mem_slices + 1u)) == 0);  /* within the GPU's slots */
            assert_int_equal(fs_mig_profile_find(m, op->name, strlen(op->name)), (int)p);
        }
        if (m->catalog)
            assert_true(fs_catalog_find(m->catalog) >= 0);
        /* by_size: a permutation, largest footprint (memory, then compute) first */
        unsigned seen = 0;
        for (unsigned k = 0; k < m->nprofiles; k++) {
            seen |= 1u << m->by_size[k];
            if (k > 0) {
                const fs_mig_profile_t *a = &m->profile[m->by_size[k - 1]], *b = &m->profile[m->by_size[k]];
                assert_true(a->mem_slices > b->mem_slices ||
                            (a->mem_slices == b->mem_slices &&
                             (a->compute > b->compute ||
                              (a->compute == b->compute && m->by_size[k - 1] < m->by_size[k]))));
            }
        }
        assert_int_equal(seen, (1u << m->nprofiles) - 1u);
    }
    assert_null(fs_mig_model(FS_MIG_GPU_COUNT));
    assert_int_equal(fs_mig_model_find("H100"), FS_MIG_H100_80GB);
    assert_int_equal(fs_mig_model_find("a100"), FS_MIG_A100_80GB);   /* the catalog's A100 is 80 GB */
    assert_int_equal(fs_mig_model_find("A100-40GB"), FS_MIG_A100_40GB);
    assert_int_equal(fs_mig_model_find("b200-180gb"), FS_MIG_B200_180GB);
    assert_int_equal(fs_mig_model_find("V100"), -1);
    assert_int_equal(fs_mig_model_find(NULL), -1);
    fs_error_t err;
    assert_ptr_equal(fs_mig_model_lookup("h200", &err), fs_mig_model(FS_MIG_H200_141GB));
    assert_null(fs_mig_model_lookup("V100", &err));
    assert_int_equal(err.code, FS_EINVAL);
    assert_string_equal(err.msg, "GPU model 'V100' has no MIG geometry (expected one of A100-40GB, A100-80GB "
                                 "(A100), H100-80GB (H100), H200-141GB (H200), B200-180GB (B200), "
                                 "H100-94GB (H100-NVL), A30-24GB (A30))");
    /* H100 NVL: by its catalog name and mig-parted's; 3g.47gb takes 3/7 of the compute */
    assert_int_equal(fs_mig_model_find("H100-NVL"), FS_MIG_H100_94GB);
    assert_int_equal(fs_mig_model_find("h100-94gb"), FS_MIG_H100_94GB);
    const fs_mig_model_t *nvl = fs_mig_model(FS_MIG_H100_94GB);
    assert_int_equal(nvl->memory_gb, 94);
    assert_string_equal(nvl->profile[4].name, "3g.47gb");
    assert_int_equal(nvl->profile[4].gpu_milli, 428);
    assert_int_equal(nvl->profile[2].max_count, 4);   /* 1g.24gb x4 */
    /* accounting share of a MIG pod (docs/shapes.md): 1g = 1000/7 rounded down */
    const fs_mig_model_t *h = fs_mig_model(FS_MIG_H100_80GB);
    assert_int_equal(h->profile[0].gpu_milli, 142);
    assert_int_equal(h->profile[4].gpu_milli, 428);
    assert_int_equal(h->profile[6].gpu_milli, 1000);
    /* A30: 4 compute slices, so a 1g is a quarter of the GPU (250), not 1/7 */
    assert_int_equal(fs_mig_model_find("a30-24gb"), FS_MIG_A30_24GB);
    assert_int_equal(fs_mig_model_find("A30"), FS_MIG_A30_24GB);   /* the catalog's A30 */
    const fs_mig_model_t *a30 = fs_mig_model(FS_MIG_A30_24GB);
    assert_int_equal(a30->memory_gb, 24);
    assert_int_equal(a30->profile[0].gpu_milli, 250);
    assert_int_equal(a30->profile[2].gpu_milli, 500);
    assert_int_equal(a30->profile[4].gpu_milli, 1000);
}

/* Every multiset with up to one more instance than each profile allows:
 * accepted by the module iff some placement set obeying the hardware rules
 * realises it.  Every reachable state: fits and find agree with brute force. */
static void test_exhaustive_against_hardware_rules(void **s)
{
    (void)s;
    for (int g = 0; g < FS_MIG_GPU_COUNT; g++) {
        orc_t o;
        memset(&o, 0, sizeof o);
        o.m = fs_mig_model((fs_mig_gpu_t)g);
        o.slices = oracle[g].slices;
        size_t codes = 1;
        for (unsigned p = 0; p < 7; p++)
            codes *= oracle[g].prof[p].available + 2;
        o.valid = calloc(codes, 1);
        o.parsed = calloc(codes, 1);
        assert_non_null(o.valid);
        assert_non_null(o.parsed);
        for (unsigned p = 0; p < oracle[g].nprof; p++) {
            unsigned st[8], size, n = parse_lgipp(oracle[g].prof[p].lgipp, st, &size);
            o.available[p] = oracle[g].prof[p].available;
            for (unsigned i = 0; i < n; i++)
                o.cand[o.ncand++] = (cand_t){p, st[i], size, oracle[g].prof[p].compute};
        }
        unsigned count[7] = {0};
        fs_mig_layout_t l;
        fs_mig_layout_clear(&l);
        enumerate(&o, 0, 0, 0, count, &l);

        unsigned accepted = 0, rejected = 0, total = 0, c[7];
        for (c[0] = 0; c[0] <= o.available[0] + 1; c[0]++)
        for (c[1] = 0; c[1] <= o.available[1] + 1; c[1]++)
        for (c[2] = 0; c[2] <= o.available[2] + 1; c[2]++)
        for (c[3] = 0; c[3] <= o.available[3] + 1; c[3]++)
        for (c[4] = 0; c[4] <= o.available[4] + 1; c[4]++)
        for (c[5] = 0; c[5] <= o.available[5] + 1; c[5]++)
        for (c[6] = 0; c[6] <= o.available[6] + 1; c[6]++) {
            fs_mig_spec_t spec = {.enabled = true};
            for (unsigned p = 0; p < 7; p++)
                spec.count[p] = (uint8_t)c[p];
            bool want = o.valid[code_of(o.available, c)] != 0;
            bool got = fs_mig_spec_valid(o.m, &spec);
            if (want != got)
                fail_msg("%s: multiset %u %u %u %u %u %u %u: module %d, hardware rules %d", o.m->name, c[0], c[1],
                         c[2], c[3], c[4], c[5], c[6], got, want);
            fs_mig_layout_t built;
            fs_error_t err;
            assert_int_equal(fs_mig_layout_build(o.m, &spec, &built, &err), want ? 0 : FS_EINVAL);
            if (want) {
                assert_int_equal(fs_mig_layout_check(o.m, &built, NULL), 0);
                assert_memory_equal(built.count, spec.count, sizeof spec.count);
                accepted++;
            } else {
                assert_int_equal(built.ninst, 0);
                rejected++;
            }
            total++;
        }
        printf("%s: %u placement sets; %u multisets: %u accepted, %u rejected; %u fits/find checks; %u re-cuts (%u distinct, parsed back)\n",
               o.m->name, o.sets, total, accepted, rejected, o.fits_checked, o.recut_checked, o.recut_parsed);
        free(o.valid);
        free(o.parsed);
    }
}

/* Named cases from the guide. */
static bool fits_text(fs_mig_gpu_t g, const char *text)
{
    fs_mig_spec_t spec;
    return fs_mig_layout_parse(fs_mig_model(g), text, &spec, NULL, NULL) == 0;
}

static void test_guide_cases(void **s)
{
    (void)s;
    /* R510+: a (4 memory, 4 compute) with a (4 memory, 3 compute) profile */
    assert_true(fits_text(FS_MIG_H100_80GB, "4g.40gb, 3g.40gb"));
    assert_true(fits_text(FS_MIG_A100_40GB, "4g.20gb, 3g.20gb"));
    assert_false(fits_text(FS_MIG_H100_80GB, "4g.40gb x2"));
    /* 3g takes 4 of the 8 memory slices ({0,4}:4): two of them fill the GPU,
     * so no 1g fits beside them ("two instances of type 3g.20gb ... or seven
     * of 1g.5gb") */
    assert_true(fits_text(FS_MIG_A100_40GB, "3g.20gb x2"));
    assert_false(fits_text(FS_MIG_A100_40GB, "3g.20gb x2, 1g.5gb"));
    assert_false(fits_text(FS_MIG_H100_80GB, "3g.40gb x2, 1g.10gb"));
    /* the guide's examples: a 3-2-1-1 and a 2-1-1-1-1-1 geometry */
    assert_true(fits_text(FS_MIG_A100_40GB, "3g.20gb, 2g.10gb, 1g.5gb x2"));
    assert_true(fits_text(FS_MIG_A100_40GB, "2g.10gb, 1g.5gb x5"));
    assert_true(fits_text(FS_MIG_H100_80GB, "4g.40gb, 2g.20gb, 1g.10gb"));
    assert_true(fits_text(FS_MIG_H100_80GB, "4g.40gb, 1g.10gb x3"));
    assert_true(fits_text(FS_MIG_H100_80GB, "4g.40gb, 1g.20gb x2"));
    assert_true(fits_text(FS_MIG_H100_80GB, "2g.20gb x3, 1g.10gb"));
    assert_true(fits_text(FS_MIG_H100_80GB, "1g.20gb x3, 1g.10gb"));
    assert_false(fits_text(FS_MIG_H100_80GB, "1g.20gb x4, 1g.10gb"));
    assert_false(fits_text(FS_MIG_H100_80GB, "1g.20gb x5"));
    assert_false(fits_text(FS_MIG_H100_80GB, "7g.80gb, 1g.10gb"));
    assert_false(fits_text(FS_MIG_H100_80GB, "1g.10gb x8"));
    /* one media-extension instance per GPU, beside six plain 1g */
    assert_true(fits_text(FS_MIG_H100_80GB, "1g.10gb+me, 1g.10gb x6"));
    assert_false(fits_text(FS_MIG_H100_80GB, "1g.10gb+me x2"));
    /* the 8th memory slice: usable only by profiles with a 2-slice
     * placement at slot 6 (or 4g/3g/7g), never by a 1-slice 1g */
    fs_mig_layout_t l;
    const fs_mig_model_t *m = fs_mig_model(FS_MIG_H100_80GB);
    fs_mig_layout_clear(&l);
    for (int i = 0; i < 7; i++)
        assert_int_equal(fs_mig_place(m, &l, 0, -1), i);
    assert_int_equal(l.mem, 0x7f);
    assert_int_equal(l.sm, 0x7f);
    for (unsigned p = 0; p < 7; p++)
        assert_int_equal(fs_mig_fits(m, &l, p), 0);
    /* stranded compute: a 3g at slot 0 holds 4 memory slices, 3 compute */
    fs_mig_layout_clear(&l);
    assert_int_equal(fs_mig_place(m, &l, 4, -1), 0);
    assert_int_equal(fs_mig_stranded_sm(&l), 0x08);
    assert_int_equal(fs_mig_place(m, &l, 4, -1), 4);
    assert_int_equal(fs_mig_stranded_sm(&l), 0x08);
    assert_int_equal(fs_mig_place(m, &l, 0, -1), FS_EINVAL);
}

/* The guide's worked examples of `nvidia-smi mig -cgi` without placements
 * on an A100-40GB, and where the driver put each instance (from the
 * `nvidia-smi mig -lgi` listings that follow them): fs_mig_find_best puts
 * them at the same slots; fs_mig_find (lowest start) does not. */
static void test_driver_examples(void **s)
{
    (void)s;
    const fs_mig_model_t *m = fs_mig_model(FS_MIG_A100_40GB);
    static const struct { const char *cgi; int start[6]; } ex[] = {
        /* Example 2, "3-2-1-1": -cgi 9,19,14,19 -> 3g 4:4, 1g 0:1, 2g 2:2, 1g 1:1 */
        {"3g.20gb,1g.5gb,2g.10gb,1g.5gb", {4, 0, 2, 1, -2}},
        /* Example 3, "2-1-1-1-1-1": -cgi 14,19,19,19,19,19 -> 2g 4:2, then 1g at 6, 0, 1, 2, 3 */
        {"2g.10gb,1g.5gb,1g.5gb,1g.5gb,1g.5gb,1g.5gb", {4, 6, 0, 1, 2, 3}},
        /* Example 2's failing order: -cgi 19,19,14,9 creates the first three
         * (where, the guide does not show: -3 = any) and then fails the 3g
         * with "Insufficient Resources"; lowest-first would have fitted it */
        {"1g.5gb,1g.5gb,2g.10gb,3g.20gb", {-3, -3, -3, -1, -2}},
    };
    for (size_t e = 0; e < sizeof ex / sizeof ex[0]; e++) {
        fs_mig_layout_t best, low;
        fs_mig_layout_clear(&best);
        fs_mig_layout_clear(&low);
        const char *c = ex[e].cgi;
        bool lowest_differs = false;
        for (unsigned k = 0; k < 6 && ex[e].start[k] != -2; k++) {
            size_t len = strcspn(c, ",");
            int p = fs_mig_profile_find(m, c, len);
            assert_true(p >= 0);
            c += len + (c[len] == ',');
            int b = fs_mig_find_best(m, &best, (unsigned)p);
            if (ex[e].start[k] == -3 ? b < 0 : b != ex[e].start[k])
                fail_msg("example %zu, instance %u: best fit %d, driver %d", e, k, b, ex[e].start[k]);
            if (b >= 0)
                assert_int_equal(fs_mig_place(m, &best, (unsigned)p, b), b);
            int lo = fs_mig_place(m, &low, (unsigned)p, -1);
            lowest_differs |= ex[e].start[k] == -3 ? lo < 0 : lo != ex[e].start[k];
        }
        assert_true(lowest_differs);
        assert_int_equal(fs_mig_layout_check(m, &best, NULL), 0);
    }
    /* on a full GPU, or past the cap, nothing */
    fs_mig_layout_t l;
    fs_mig_layout_clear(&l);
    assert_int_equal(fs_mig_place(m, &l, 6, -1), 0);
    assert_int_equal(fs_mig_find_best(m, &l, 0), -1);
    fs_mig_layout_clear(&l);
    assert_int_equal(fs_mig_place(m, &l, 1, -1), 0);
    assert_int_equal(fs_mig_find_best(m, &l, 1), -1);
    assert_int_equal(fs_mig_find_best(m, &l, 9), -1);
}

/* mig-parted's default config (deployments/systemd/config-default.yaml at
 * NVIDIA/mig-parted bd7160f4, 2026-08-21): each layout for the models our
 * tables cover, with the instances it names.  For configs without a device
 * filter the models are those whose profiles the config uses (the file's
 * comments name them); all-1g.10gb and all-1g.35gb have per-model entries. */
typedef struct pc { const char *prof; unsigned n; } pc_t;
typedef struct cfg_row {
    const char *config;
    fs_mig_gpu_t gpu;
    pc_t want[3];
} cfg_row_t;

static const cfg_row_t migparted[] = {
    {"all-1g.5gb", FS_MIG_A100_40GB, {{"1g.5gb", 7}}},
    {"all-1g.5gb.me", FS_MIG_A100_40GB, {{"1g.5gb+me", 1}}},
    {"all-2g.10gb", FS_MIG_A100_40GB, {{"2g.10gb", 3}}},
    {"all-3g.20gb", FS_MIG_A100_40GB, {{"3g.20gb", 2}}},
    {"all-4g.20gb", FS_MIG_A100_40GB, {{"4g.20gb", 1}}},
    {"all-7g.40gb", FS_MIG_A100_40GB, {{"7g.40gb", 1}}},
    {"all-1g.10gb", FS_MIG_A100_40GB, {{"1g.10gb", 4}}},
    {"all-balanced", FS_MIG_A100_40GB, {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}}},
#define H80(g)                                                                         \
    {"all-1g.10gb", g, {{"1g.10gb", 7}}}, {"all-1g.10gb.me", g, {{"1g.10gb+me", 1}}},  \
    {"all-1g.20gb", g, {{"1g.20gb", 4}}}, {"all-2g.20gb", g, {{"2g.20gb", 3}}},        \
    {"all-3g.40gb", g, {{"3g.40gb", 2}}}, {"all-4g.40gb", g, {{"4g.40gb", 1}}},        \
    {"all-7g.80gb", g, {{"7g.80gb", 1}}},                                              \
    {"all-balanced", g, {{"1g.10gb", 2}, {"2g.20gb", 1}, {"3g.40gb", 1}}}
    H80(FS_MIG_A100_80GB),
    H80(FS_MIG_H100_80GB),
    {"all-1g.18gb", FS_MIG_H200_141GB, {{"1g.18gb", 7}}},
    {"all-1g.18gb.me", FS_MIG_H200_141GB, {{"1g.18gb+me", 1}}},
    {"all-1g.35gb", FS_MIG_H200_141GB, {{"1g.35gb", 4}}},
    {"all-2g.35gb", FS_MIG_H200_141GB, {{"2g.35gb", 3}}},
    {"all-3g.71gb", FS_MIG_H200_141GB, {{"3g.71gb", 2}}},
    {"all-4g.71gb", FS_MIG_H200_141GB, {{"4g.71gb", 1}}},
    {"all-7g.141gb", FS_MIG_H200_141GB, {{"7g.141gb", 1}}},
    {"all-balanced", FS_MIG_H200_141GB, {{"1g.18gb", 2}, {"2g.35gb", 1}, {"3g.71gb", 1}}},
    {"all-1g.23gb", FS_MIG_B200_180GB, {{"1g.23gb", 7}}},
    {"all-1g.23gb.me", FS_MIG_B200_180GB, {{"1g.23gb+me", 1}}},
    {"all-1g.45gb", FS_MIG_B200_180GB, {{"1g.45gb", 4}}},
    {"all-2g.45gb", FS_MIG_B200_180GB, {{"2g.45gb", 3}}},
    {"all-3g.90gb", FS_MIG_B200_180GB, {{"3g.90gb", 2}}},
    {"all-4g.90gb", FS_MIG_B200_180GB, {{"4g.90gb", 1}}},
    {"all-7g.180gb", FS_MIG_B200_180GB, {{"7g.180gb", 1}}},
    {"all-balanced", FS_MIG_B200_180GB, {{"1g.23gb", 2}, {"2g.45gb", 1}, {"3g.90gb", 1}}},
    /* "H100 NVL, H800 NVL" (all-1g.24gb.me's 1g.24gb+me is not modelled: refused) */
    {"all-1g.12gb", FS_MIG_H100_94GB, {{"1g.12gb", 7}}},
    {"all-1g.12gb.me", FS_MIG_H100_94GB, {{"1g.12gb+me", 1}}},
    {"all-1g.24gb", FS_MIG_H100_94GB, {{"1g.24gb", 4}}},
    {"all-2g.24gb", FS_MIG_H100_94GB, {{"2g.24gb", 3}}},
    {"all-3g.47gb", FS_MIG_H100_94GB, {{"3g.47gb", 2}}},
    {"all-4g.47gb", FS_MIG_H100_94GB, {{"4g.47gb", 1}}},
    {"all-7g.94gb", FS_MIG_H100_94GB, {{"7g.94gb", 1}}},
    {"all-balanced", FS_MIG_H100_94GB, {{"1g.12gb", 2}, {"2g.24gb", 1}, {"3g.47gb", 1}}},
    /* "A30-24GB"; all-balanced device filter 0x20B710DE: 2 x 1g.6gb, 1 x 2g.12gb */
    {"all-1g.6gb", FS_MIG_A30_24GB, {{"1g.6gb", 4}}},
    {"all-1g.6gb.me", FS_MIG_A30_24GB, {{"1g.6gb+me", 1}}},
    {"all-2g.12gb", FS_MIG_A30_24GB, {{"2g.12gb", 2}}},
    {"all-2g.12gb.me", FS_MIG_A30_24GB, {{"2g.12gb+me", 1}}},
    {"all-4g.24gb", FS_MIG_A30_24GB, {{"4g.24gb", 1}}},
    {"all-balanced", FS_MIG_A30_24GB, {{"1g.6gb", 2}, {"2g.12gb", 1}}},
#undef H80
};

/* Every config name in that file (81). */
static const char *const migparted_names[] = {
    "all-disabled", "all-enabled", "all-1g.5gb", "all-1g.5gb.me", "all-2g.10gb", "all-3g.20gb", "all-4g.20gb",
    "all-7g.40gb", "all-1g.24gb.gfx", "all-1g.24gb.me.all", "all-1g.24gb-me", "all-2g.48gb", "all-2g.48gb.gfx",
    "all-2g.48gb.me.all", "all-2g.48gb-me", "all-4g.96gb", "all-4g.96gb.gfx", "all-1g.10gb", "all-1g.10gb.me",
    "all-1g.20gb", "all-2g.20gb", "all-3g.40gb", "all-4g.40gb", "all-7g.80gb", "all-1g.6gb", "all-1g.6gb.me",
    "all-2g.12gb", "all-2g.12gb.me", "all-4g.24gb", "all-1g.12gb", "all-1g.12gb.me", "all-1g.24gb", "all-2g.24gb",
    "all-1g.24gb.me", "all-1g.47gb", "all-2g.47gb", "all-3g.93gb", "all-4g.93gb", "all-7g.186gb", "all-3g.47gb",
    "all-4g.47gb", "all-7g.94gb", "all-3g.48gb", "all-4g.48gb", "all-7g.96gb", "all-balanced", "all-1g.18gb",
    "all-1g.18gb.me", "all-1g.23gb", "all-1g.23gb.me", "all-1g.35gb", "all-2g.35gb", "all-3g.71gb", "all-4g.71gb",
    "all-7g.141gb", "all-1g.34gb", "all-1g.34gb.me", "all-1g.35gb.me", "all-1g.36gb", "all-1g.45gb", "all-1g.67gb",
    "all-1g.70gb", "all-2g.36gb", "all-2g.45gb", "all-2g.67gb", "all-2g.70gb", "all-3g.72gb", "all-3g.90gb",
    "all-3g.95gb", "all-3g.135gb", "all-3g.139gb", "all-4g.72gb", "all-4g.90gb", "all-4g.95gb", "all-4g.135gb",
    "all-4g.139gb", "all-7g.144gb", "all-7g.180gb", "all-7g.189gb", "all-7g.269gb", "all-7g.278gb",
};

static void test_migparted_default_config(void **s)
{
    (void)s;
    size_t nrows = sizeof migparted / sizeof migparted[0];
    assert_int_equal(sizeof migparted_names / sizeof migparted_names[0], 81);
    for (size_t r = 0; r < nrows; r++) {
        const cfg_row_t *row = &migparted[r];
        const fs_mig_model_t *m = fs_mig_model(row->gpu);
        fs_mig_spec_t spec, want = {.enabled = true};
        fs_error_t err;
        for (unsigned k = 0; k < 3 && row->want[k].prof; k++) {
            int p = fs_mig_profile_find(m, row->want[k].prof, strlen(row->want[k].prof));
            assert_true(p >= 0);
            want.count[p] = (uint8_t)row->want[k].n;
        }
        if (fs_mig_layout_parse(m, row->config, &spec, NULL, &err) != 0)
            fail_msg("%s on %s: %s", row->config, m->name, err.msg);
        assert_true(spec.enabled);
        if (memcmp(spec.count, want.count, sizeof want.count))
            fail_msg("%s on %s: counts differ from mig-parted's", row->config, m->name);
        fs_mig_layout_t l;
        assert_int_equal(fs_mig_layout_build(m, &spec, &l, &err), 0);
        assert_int_equal(fs_mig_layout_check(m, &l, NULL), 0);
        /* a full mig-parted layout leaves no room for its own profiles */
        for (unsigned k = 0; k < 3 && row->want[k].prof; k++)
            assert_int_equal(fs_mig_fits(m, &l, (unsigned)fs_mig_profile_find(m, row->want[k].prof,
                                                                                 strlen(row->want[k].prof))), 0);
    }
    /* every other (config, model) pair is refused, naming what was expected;
     * all-disabled and all-enabled apply to every model */
    unsigned refused = 0;
    for (size_t i = 0; i < sizeof migparted_names / sizeof migparted_names[0]; i++)
        for (int g = 0; g < FS_MIG_GPU_COUNT; g++) {
            const fs_mig_model_t *m = fs_mig_model((fs_mig_gpu_t)g);
            bool named = !strcmp(migparted_names[i], "all-disabled") || !strcmp(migparted_names[i], "all-enabled");
            for (size_t r = 0; r < nrows; r++)
                named |= migparted[r].gpu == (fs_mig_gpu_t)g && !strcmp(migparted[r].config, migparted_names[i]);
            fs_mig_spec_t spec;
            fs_error_t err;
            size_t off = 99;
            int rc = fs_mig_layout_parse(m, migparted_names[i], &spec, &off, &err);
            if (named && rc != 0)
                fail_msg("%s on %s refused: %s", migparted_names[i], m->name, err.msg);
            if (!named) {
                if (rc == 0)
                    fail_msg("%s accepted on %s, which mig-parted does not name", migparted_names[i], m->name);
                assert_int_equal(rc, FS_EINVAL);
                assert_int_equal(off, 4);
                assert_non_null(strstr(err.msg, "expected all-disabled, all-enabled, all-balanced"));
                refused++;
            }
        }
    printf("mig-parted: %zu (layout, model) pairs accepted with mig-parted's counts, %u refused\n", nrows, refused);
    fs_mig_spec_t spec;
    assert_int_equal(fs_mig_layout_parse(fs_mig_model(FS_MIG_B200_180GB), "all-disabled", &spec, NULL, NULL), 0);
    assert_false(spec.enabled);
    assert_int_equal(fs_mig_layout_parse(fs_mig_model(FS_MIG_B200_180GB), " all-enabled ", &spec, NULL, NULL), 0);
    assert_true(spec.enabled);
    for (unsigned p = 0; p < FS_MIG_MAX_PROFILES; p++)
        assert_int_equal(spec.count[p], 0);
}

/* Random place/remove sequences keep the invariants; placing then removing
 * restores the state byte for byte; removing every instance empties it. */
static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

static void test_place_remove_round_trips(void **s)
{
    (void)s;
    uint64_t x = 14;
    unsigned placed = 0, refused = 0, removed = 0;
    for (int g = 0; g < FS_MIG_GPU_COUNT; g++) {
        const fs_mig_model_t *m = fs_mig_model((fs_mig_gpu_t)g);
        fs_mig_layout_t l, empty;
        fs_mig_layout_clear(&l);
        fs_mig_layout_clear(&empty);
        for (int step = 0; step < 20000; step++) {
            unsigned op = (unsigned)(lcg(&x) % 3), p = (unsigned)(lcg(&x) % m->nprofiles);
            if (op < 2) {
                int start = op == 0 ? -1 : (int)(lcg(&x) % FS_MIG_SLOTS);
                bool can = start < 0 ? fs_mig_find(m, &l, p) >= 0 : fs_mig_can_place_at(m, &l, p, (unsigned)start);
                fs_mig_layout_t before = l;
                int rc = fs_mig_place(m, &l, p, start);
                if (!can) {
                    assert_int_equal(rc, FS_EINVAL);
                    assert_memory_equal(&before, &l, sizeof l);
                    refused++;
                    continue;
                }
                assert_true(rc >= 0);
                if (start >= 0)
                    assert_int_equal(rc, start);
                assert_int_equal(fs_mig_layout_check(m, &l, NULL), 0);
                if (lcg(&x) % 2) {   /* round trip */
                    assert_int_equal(fs_mig_remove(m, &l, (unsigned)rc), (int)p);
                    assert_memory_equal(&before, &l, sizeof l);
                    assert_int_equal(fs_mig_place(m, &l, p, rc), rc);
                }
                placed++;
            } else if (l.ninst) {
                unsigned i = (unsigned)(lcg(&x) % l.ninst);
                unsigned st = l.inst[i].start, pr = l.inst[i].profile;
                assert_int_equal(fs_mig_remove(m, &l, st), (int)pr);
                assert_int_equal(fs_mig_layout_check(m, &l, NULL), 0);
                removed++;
            } else {
                assert_int_equal(fs_mig_remove(m, &l, (unsigned)(lcg(&x) % 8)), FS_EINVAL);
            }
        }
        while (l.ninst)
            fs_mig_remove(m, &l, l.inst[l.ninst - 1].start);
        assert_memory_equal(&l, &empty, sizeof l);
    }
    printf("round trips: %u placed, %u refused, %u removed\n", placed, refused, removed);
    /* a broken layout is reported */
    const fs_mig_model_t *m = fs_mig_model(FS_MIG_A100_80GB);
    fs_mig_layout_t l;
    fs_error_t err;
    fs_mig_layout_clear(&l);
    assert_int_equal(fs_mig_place(m, &l, 3, -1), 0);
    l.mem = 0x01;
    assert_int_equal(fs_mig_layout_check(m, &l, &err), FS_EINTERNAL);
    assert_non_null(strstr(err.msg, "slot masks"));
    fs_mig_layout_clear(&l);
    assert_int_equal(fs_mig_place(m, &l, 3, 1), FS_EINVAL);   /* 2g starts at 0, 2 or 4 */
    assert_int_equal(fs_mig_place(m, &l, 9, -1), FS_EINVAL);
    assert_int_equal(fs_mig_fits(m, &l, 9), 0);
}

/* The scenario-facing parser: list forms, and located errors that name what
 * was expected. */
static void test_parse(void **s)
{
    (void)s;
    const fs_mig_model_t *m = fs_mig_model(FS_MIG_H100_80GB);
    fs_mig_spec_t spec;
    fs_error_t err;
    size_t off;
    assert_int_equal(fs_mig_layout_parse(m, "3g.40gb, 2g.20gb, 1g.10gb x2", &spec, &off, &err), 0);
    assert_int_equal(spec.count[4], 1);
    assert_int_equal(spec.count[3], 1);
    assert_int_equal(spec.count[0], 2);
    assert_int_equal(fs_mig_layout_parse(m, "1g.10gb:2,1g.10gb*3, 1g.10gbx2", &spec, &off, &err), 0);
    assert_int_equal(spec.count[0], 7);
    assert_int_equal(fs_mig_layout_parse(m, "1g.10gb+me, 1g.20gb x 3", &spec, &off, &err), 0);
    assert_int_equal(spec.count[1], 1);
    assert_int_equal(spec.count[2], 3);

    /* unknown profile: located at the token, the valid names listed */
    assert_int_equal(fs_mig_layout_parse(m, "3g.40gb, 2g.25gb", &spec, &off, &err), FS_EINVAL);
    assert_int_equal(off, 9);
    assert_string_equal(err.msg, "unknown MIG profile '2g.25gb' for H100-80GB (expected one of 1g.10gb, "
                                 "1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)");
    /* another model's profile */
    assert_int_equal(fs_mig_layout_parse(m, "  1g.5gb", &spec, &off, &err), FS_EINVAL);
    assert_int_equal(off, 2);
    assert_non_null(strstr(err.msg, "'1g.5gb'"));
    /* unknown mig-parted name */
    assert_int_equal(fs_mig_layout_parse(m, "all-1g.5gb", &spec, &off, &err), FS_EINVAL);
    assert_int_equal(off, 4);
    assert_non_null(strstr(err.msg, "all-<profile>"));
    assert_non_null(strstr(err.msg, "1g.10gb.me"));
    /* punctuation and counts */
    assert_int_equal(fs_mig_layout_parse(m, "1g.10gb;2g.20gb", &spec, &off, &err), FS_EINVAL);
    assert_int_equal(off, 7);
    assert_non_null(strstr(err.msg, "expected ','"));
    assert_int_equal(fs_mig_layout_parse(m, "1g.10gb x", &spec, &off, &err), FS_EINVAL);
    assert_int_equal(off, 9);
    assert_non_null(strstr(err.msg, "expected a count"));
    assert_int_equal(fs_mig_layout_parse(m, "1g.10gb x 12", &spec, &off, &err), FS_EINVAL);
    assert_int_equal(off, 10);
    assert_non_null(strstr(err.msg, "at most 7"));
    assert_int_equal(fs_mig_layout_parse(m, "1g.10gb x99999999999", &spec, &off, &err), FS_EINVAL);
    assert_int_equal(fs_mig_layout_parse(m, "1g.10gb,", &spec, &off, &err), FS_EINVAL);
    assert_int_equal(off, 8);
    assert_int_equal(fs_mig_layout_parse(m, ", 1g.10gb", &spec, &off, &err), FS_EINVAL);
    assert_int_equal(off, 0);
    assert_int_equal(fs_mig_layout_parse(m, "   ", &spec, &off, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "empty MIG layout"));
    /* well formed but does not fit: the whole layout, with the placements */
    assert_int_equal(fs_mig_layout_parse(m, " 4g.40gb, 4g.40gb", &spec, &off, &err), FS_EINVAL);
    assert_int_equal(off, 1);
    assert_string_equal(err.msg, "MIG layout '4g.40gb x2' does not fit on one H100-80GB: 2 x 4g.40gb (expected "
                                 "at most 1 per GPU)");
    assert_int_equal(fs_mig_layout_parse(m, "3g.40gb x2, 1g.10gb", &spec, &off, &err), FS_EINVAL);
    assert_string_equal(err.msg, "MIG layout '1g.10gb, 3g.40gb x2' does not fit on one H100-80GB: no placement "
                                 "keeps the instances' memory slices apart (expected non-overlapping {starts}:size "
                                 "of 8 slices: 1g.10gb {0,1,2,3,4,5,6}:1, 3g.40gb {0,4}:4)");
    /* NULL err and err_off are allowed */
    assert_int_equal(fs_mig_layout_parse(m, "bogus", &spec, NULL, NULL), FS_EINVAL);
}

/* Random texts built from the parser's vocabulary and junk: the parser
 * never reads outside the text, returns 0 or FS_EINVAL, on success gives a
 * spec that fits, and on failure a one-line message and an offset inside
 * the text. */
static void test_parse_random(void **s)
{
    (void)s;
    static const char *const pieces[] = {
        "1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", "1g.5gb", "1g.18gb",
        "all-", "all-balanced", "all-1g.10gb.me", "balanced", "disabled", ",", ", ", " ", "x", "x2", " x 3",
        "*4", ":1", ":", "9", "0", "+", ".", "-", "\t", "gb", ";", "\xff", "MIG ", "1g.10gbx7",
    };
    uint64_t x = 2718;
    unsigned ok = 0, bad = 0;
    char text[256];
    for (int g = 0; g < FS_MIG_GPU_COUNT; g++) {
        const fs_mig_model_t *m = fs_mig_model((fs_mig_gpu_t)g);
        for (int t = 0; t < 8000; t++) {
            size_t len = 0;
            unsigned npieces = 1 + (unsigned)(lcg(&x) % 6);
            for (unsigned k = 0; k < npieces; k++) {
                const char *pc = pieces[lcg(&x) % (sizeof pieces / sizeof pieces[0])];
                size_t pl = strlen(pc);
                if (len + pl >= sizeof text)
                    break;
                memcpy(text + len, pc, pl);
                len += pl;
            }
            /* exactly len bytes on the heap, so ASan sees any overread */
            char *heap = malloc(len + 1);
            assert_non_null(heap);
            memcpy(heap, text, len);
            heap[len] = '\0';
            fs_mig_spec_t spec;
            fs_error_t err;
            size_t off = (size_t)-1;
            int rc = fs_mig_layout_parse(m, heap, &spec, &off, &err);
            if (rc == 0) {
                assert_true(fs_mig_spec_valid(m, &spec));
                ok++;
            } else {
                assert_int_equal(rc, FS_EINVAL);
                assert_true(off <= len);
                assert_true(err.msg[0] != '\0');
                assert_null(strchr(err.msg, '\n'));
                bad++;
            }
            free(heap);
        }
    }
    printf("random layouts: %u accepted, %u refused\n", ok, bad);
    assert_true(ok > 1000 && bad > 1000);
}

/* The job record's profile code (traces/fs_migname.h, the readers' syntax)
 * is the model's: every profile of every model parses to its fs_mig_code
 * and prints back to its name; fs_mig_code_find (the scenario's hook into
 * the readers) accepts exactly the tables' names; malformed text is 0. */
static void test_migname_syntax(void **st)
{
    (void)st;
    size_t n = 0;
    for (int g = 0; g < FS_MIG_GPU_COUNT; g++) {
        const fs_mig_model_t *m = fs_mig_model((fs_mig_gpu_t)g);
        for (unsigned p = 0; p < m->nprofiles; p++, n++) {
            const char *name = m->profile[p].name;
            int32_t code = fs_migname_parse(name, strlen(name));
            char buf[FS_MIGNAME_MAX];
            assert_int_equal(code, fs_mig_code(&m->profile[p]));
            assert_int_equal(fs_mig_code_find(name, strlen(name)), code);
            assert_string_equal(fs_migname_of(code, buf, sizeof buf), name);
            assert_int_equal(fs_migname_milli(code), m->profile[p].gpu_milli);
        }
    }
    assert_true(n >= 47);
    /* the GPU a name belongs to: the A30's five names are shares of 4 slices, every other of 7 */
    static const char *const a30[] = {"1g.6gb", "1g.6gb+me", "2g.12gb", "2g.12gb+me", "4g.24gb"};
    for (size_t i = 0; i < sizeof a30 / sizeof a30[0]; i++)
        assert_int_equal(fs_migname_slices(fs_migname_parse(a30[i], strlen(a30[i]))), 4);
    assert_int_equal(fs_migname_milli(fs_migname_parse("1g.6gb", 6)), 250);
    assert_int_equal(fs_migname_milli(fs_migname_parse("4g.24gb", 7)), 1000);
    assert_int_equal(fs_migname_slices(fs_migname_parse("1g.10gb", 7)), 7);
    assert_int_equal(fs_migname_slices(fs_migname_parse("2g.24gb", 7)), 7);   /* H100 NVL, not A30 */
    assert_int_equal(fs_migname_milli(fs_migname_parse("4g.40gb", 7)), 571);
    /* well formed, but no GPU model has it: the syntax takes it, the model not */
    assert_int_equal(fs_migname_parse("2g.25gb", 7), 2 << 16 | 25 << 1);
    assert_int_equal(fs_mig_code_find("2g.25gb", 7), 0);
    assert_int_equal(fs_migname_parse("32767g.32767gb+me", 17), (int32_t)(32767u << 16 | 32767u << 1 | 1u));
    static const char *const bad[] = {"", "1g", "1g.", "1g.10", "1g.10g", "1g.10GB", "01g.10gb",
                                      "1g.010gb", "0g.10gb", "1g.0gb", "1g.10gb+m", "1g.10gb+mee",
                                      "1g.10gb ", " 1g.10gb", "32768g.10gb", "1g.32768gb",
                                      "1g.10gb-me", "g.10gb", "1x.10gb", "99999999999g.1gb"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(fs_migname_parse(bad[i], strlen(bad[i])), 0);
    /* a prefix of a good name is read only as far as len says */
    assert_int_equal(fs_migname_parse("1g.10gb+me", 7), fs_mig_code_find("1g.10gb", 7));
}

/* Re-partitioning hand cases, counted from the guide's placement listings
 * by hand (not by the module): an H100 cut all-7g.80gb re-cut for 1g.10gb
 * pods holds 7 (mig-parted's all-1g.10gb); with a 3g.40gb in use at slot 4
 * it holds 4 more 1g.10gb at 0..3 (slots 0-3 free; slot 7 is taken by the
 * 3g); a 2g.20gb in use at slot 2 leaves 1g.20gb (two-slice, starts
 * 0,2,4,6) room at 0, 4 and 6 = 3; a 7g in use leaves no room for anything.
 * Every model's all-<profile> count on an idle GPU equals the guide's
 * "Number of Instances Available" (mig-parted's default config lists the
 * same counts). */
static void test_recut_hand_cases(void **s)
{
    (void)s;
    const fs_mig_model_t *m = fs_mig_model(FS_MIG_H100_80GB);
    fs_mig_spec_t spec;
    fs_mig_layout_t cur, r;
    fs_error_t err;
    char text[128];
    assert_int_equal(fs_mig_layout_parse(m, "all-7g.80gb", &spec, NULL, &err), 0);
    assert_int_equal(fs_mig_layout_build(m, &spec, &cur, &err), 0);
    int p1 = fs_mig_profile_find(m, "1g.10gb", 7), p7 = fs_mig_profile_find(m, "7g.80gb", 7);
    int p12 = fs_mig_profile_find(m, "1g.20gb", 7);
    assert_int_equal(fs_mig_recut(m, &cur, 0, (unsigned)p1, &r), 7);
    assert_int_equal(r.ninst, 7);
    assert_int_equal(r.mem, 0x7f);
    fs_mig_spec_of(&r, &spec);
    fs_mig_spec_format(m, &spec, text, sizeof text);
    assert_string_equal(text, "1g.10gb x7");
    /* the 7g in use: nothing else fits, the 7g stays */
    assert_int_equal(fs_mig_recut(m, &cur, 1, (unsigned)p1, &r), 0);
    assert_int_equal(r.ninst, 1);
    assert_int_equal(r.inst[0].profile, p7);

    assert_int_equal(fs_mig_layout_parse(m, "3g.40gb, 2g.20gb, 1g.10gb x2", &spec, NULL, &err), 0);
    assert_int_equal(fs_mig_layout_build(m, &spec, &cur, &err), 0);
    uint8_t keep3 = 0;
    for (unsigned i = 0; i < cur.ninst; i++)
        if (!strcmp(m->profile[cur.inst[i].profile].name, "3g.40gb"))
            keep3 = (uint8_t)(1u << i);
    /* where the build put it decides the room; the hand count assumes the
     * 3g at slot 4 (asserted) */
    assert_true(keep3 != 0);
    for (unsigned i = 0; i < cur.ninst; i++)
        if (keep3 >> i & 1u)
            assert_int_equal(cur.inst[i].start, 4);
    assert_int_equal(fs_mig_recut(m, &cur, keep3, (unsigned)p1, &r), 4);
    assert_int_equal(r.mem, 0xff);
    fs_mig_spec_of(&r, &spec);
    fs_mig_spec_format(m, &spec, text, sizeof text);
    assert_string_equal(text, "1g.10gb x4, 3g.40gb");
    fs_mig_layout_clear(&cur);
    assert_int_equal(fs_mig_place(m, &cur, (unsigned)fs_mig_profile_find(m, "2g.20gb", 7), 2), 2);
    assert_int_equal(fs_mig_recut(m, &cur, 1, (unsigned)p12, &r), 3);

    /* all-<profile> on an idle GPU, every model and profile */
    for (int g = 0; g < FS_MIG_GPU_COUNT; g++) {
        const fs_mig_model_t *mg = fs_mig_model((fs_mig_gpu_t)g);
        fs_mig_layout_clear(&cur);
        for (unsigned p = 0; p < oracle[g].nprof; p++) {
            int q = fs_mig_profile_find(mg, oracle[g].prof[p].name, strlen(oracle[g].prof[p].name));
            assert_true(q >= 0);
            assert_int_equal(fs_mig_recut(mg, &cur, 0, (unsigned)q, &r), oracle[g].prof[p].available);
        }
    }
    /* formats: disabled and enabled-empty round trip */
    fs_mig_spec_t off = {.enabled = false}, on = {.enabled = true};
    fs_mig_spec_format(m, &off, text, sizeof text);
    assert_string_equal(text, "all-disabled");
    fs_mig_spec_format(m, &on, text, sizeof text);
    assert_string_equal(text, "all-enabled");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables_match_guide),
        cmocka_unit_test(test_migname_syntax),
        cmocka_unit_test(test_exhaustive_against_hardware_rules),
        cmocka_unit_test(test_guide_cases),
        cmocka_unit_test(test_driver_examples),
        cmocka_unit_test(test_migparted_default_config),
        cmocka_unit_test(test_place_remove_round_trips),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_random),
        cmocka_unit_test(test_recut_hand_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
