#include "fs_mig.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/*
 * The profile tables.  Sources (docs/mig.md):
 *  - names, compute and memory fractions, instance counts: NVIDIA MIG user
 *    guide (r580), "Supported MIG Profiles", tables for A100, H100, H200 and
 *    B200;
 *  - H100 NVL (94 GB): the guide's H100 table with its note on the 94 GB
 *    parts (1g.12gb .. 7g.94gb), and NVIDIA/mig-parted config-default.yaml's
 *    `all-*` configs for "H100 NVL, H800 NVL" (counts 7, 1, 4, 3, 2, 1, 1);
 *  - valid starts and sizes in memory slices: the guide's
 *    `nvidia-smi mig -lgipp` listing for A100 ({0..6}:1 for 1g and 1g+me,
 *    {0,2,4,6}:2 for the two-slice 1g, {0,2,4}:2 for 2g, {0,4}:4 for 3g,
 *    {0}:4 for 4g, {0}:8 for 7g), the same listing reported on H100 80GB and
 *    H100 NVL, and for H200 and B200 inferred from their tables, which give
 *    the same memory fractions and instance counts profile by profile.
 *  - A30-24GB: the guide's A30 table (4 compute and 4 memory slices:
 *    1g.6gb x4, 1g.6gb+me x1, 2g.12gb x2, 2g.12gb+me x1, 4g.24gb x1, at
 *    1/4, 1/4, 2/4, 2/4 and full memory), mig-parted config-default.yaml's
 *    A30-24GB `all-*` configs (counts 4, 1, 2, 1, 1); placements {0,1,2,3}:1,
 *    {0,2}:2 and {0}:4 follow from the fractions and counts (a 2/4 profile
 *    twice, a full one once), as go-nvml's A30 mock lists them.
 * Slot masks: S_1 = starts 0..6, S_1W = 0,2,4,6, S_2 = 0,2,4, S_3 = 0,4,
 * S_0 = 0; A30: A_1 = 0..3, A_2 = 0,2.
 */
enum { S_1 = 0x7f, S_1W = 0x55, S_2 = 0x15, S_3 = 0x11, S_0 = 0x01, A_1 = 0x0f, A_2 = 0x05 };

/* A profile of a model with `sl` compute slices. */
#define PROFN(nm, c, ms, st, mx, gb, me, sl) {nm, c, ms, st, mx, gb, me, (uint16_t)((c) * 1000 / (sl)), sl}
#define PROF(nm, c, ms, st, mx, gb, me) PROFN(nm, c, ms, st, mx, gb, me, FS_MIG_COMPUTE)

/* The seven profiles every 7-slice model has, in the guide's order. */
#define SEVEN(g1, g1w, g2, g3, g4, g7)                                            \
    {PROF("1g." #g1 "gb", 1, 1, S_1, 7, g1, false),                             \
     PROF("1g." #g1 "gb+me", 1, 1, S_1, 1, g1, true),                           \
     PROF("1g." #g1w "gb", 1, 2, S_1W, 4, g1w, false),                          \
     PROF("2g." #g2 "gb", 2, 2, S_2, 3, g2, false),                             \
     PROF("3g." #g3 "gb", 3, 4, S_3, 2, g3, false),                             \
     PROF("4g." #g4 "gb", 4, 4, S_0, 1, g4, false),                             \
     PROF("7g." #g7 "gb", 7, 8, S_0, 1, g7, false)},                            \
    {6, 5, 4, 3, 2, 0, 1}, FS_MIG_SLOTS, FS_MIG_COMPUTE

static const fs_mig_model_t models[FS_MIG_GPU_COUNT] = {
    [FS_MIG_A100_40GB] = {"A100-40GB", NULL, 40, 7, SEVEN(5, 10, 10, 20, 20, 40)},
    [FS_MIG_A100_80GB] = {"A100-80GB", "A100", 80, 7, SEVEN(10, 20, 20, 40, 40, 80)},
    [FS_MIG_H100_80GB] = {"H100-80GB", "H100", 80, 7, SEVEN(10, 20, 20, 40, 40, 80)},
    [FS_MIG_H200_141GB] = {"H200-141GB", "H200", 141, 7, SEVEN(18, 35, 35, 71, 71, 141)},
    [FS_MIG_B200_180GB] = {"B200-180GB", "B200", 180, 7, SEVEN(23, 45, 45, 90, 90, 180)},
    [FS_MIG_H100_94GB] = {"H100-94GB", "H100-NVL", 94, 7, SEVEN(12, 24, 24, 47, 47, 94)},
    [FS_MIG_A30_24GB] = {"A30-24GB", "A30", 24, 5,
                         {PROFN("1g.6gb", 1, 1, A_1, 4, 6, false, FS_MIGNAME_COMPUTE_A30),
                          PROFN("1g.6gb+me", 1, 1, A_1, 1, 6, true, FS_MIGNAME_COMPUTE_A30),
                          PROFN("2g.12gb", 2, 2, A_2, 2, 12, false, FS_MIGNAME_COMPUTE_A30),
                          PROFN("2g.12gb+me", 2, 2, A_2, 1, 12, true, FS_MIGNAME_COMPUTE_A30),
                          PROFN("4g.24gb", 4, 4, S_0, 1, 24, false, FS_MIGNAME_COMPUTE_A30)},
                         {4, 2, 3, 0, 1}, 4, FS_MIGNAME_COMPUTE_A30},
};

const fs_mig_model_t *fs_mig_model(fs_mig_gpu_t gpu)
{
    return (unsigned)gpu < FS_MIG_GPU_COUNT ? &models[gpu] : NULL;
}

int fs_mig_model_find(const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < FS_MIG_GPU_COUNT; i++)
        if (!strcasecmp(name, models[i].name) || (models[i].catalog && !strcasecmp(name, models[i].catalog)))
            return i;
    return -1;
}

const fs_mig_model_t *fs_mig_model_lookup(const char *name, fs_error_t *err)
{
    int g = fs_mig_model_find(name);
    if (g >= 0)
        return &models[g];
    char list[256];
    size_t len = 0;
    list[0] = '\0';
    for (int i = 0; i < FS_MIG_GPU_COUNT && len < sizeof list; i++) {
        int w = models[i].catalog
                    ? snprintf(list + len, sizeof list - len, "%s%s (%s)", i ? ", " : "", models[i].name,
                               models[i].catalog)
                    : snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", models[i].name);
        if (w > 0)
            len += (size_t)w;
    }
    fs_error_set(err, FS_EINVAL, "GPU model '%s' has no MIG geometry (expected one of %s)", name ? name : "",
                 list);
    return NULL;
}

int fs_mig_profile_find(const fs_mig_model_t *m, const char *name, size_t len)
{
    for (unsigned p = 0; p < m->nprofiles; p++)
        if (strlen(m->profile[p].name) == len && !memcmp(m->profile[p].name, name, len))
            return (int)p;
    return -1;
}

int32_t fs_mig_code_find(const char *name, size_t len)
{
    for (int g = 0; g < FS_MIG_GPU_COUNT; g++) {
        int p = fs_mig_profile_find(&models[g], name, len);
        if (p >= 0)
            return fs_mig_code(&models[g].profile[p]);   /* == fs_migname_parse(name, len) */
    }
    return 0;
}

int fs_mig_profile_of_code(const fs_mig_model_t *m, int32_t code)
{
    for (unsigned p = 0; p < m->nprofiles; p++)
        if (fs_mig_code(&m->profile[p]) == code)
            return (int)p;
    return -1;
}

void fs_mig_layout_clear(fs_mig_layout_t *l) { memset(l, 0, sizeof *l); }

static inline uint8_t sm_mask(const fs_mig_profile_t *p, unsigned start)
{
    return (uint8_t)(((1u << p->compute) - 1u) << start);
}

bool fs_mig_can_place_at(const fs_mig_model_t *m, const fs_mig_layout_t *l, unsigned p, unsigned start)
{
    if (p >= m->nprofiles || start >= FS_MIG_SLOTS)
        return false;
    const fs_mig_profile_t *pr = &m->profile[p];
    return (pr->starts >> start & 1u) && !(l->mem & fs_mig_slots(pr, start)) && l->count[p] < pr->max_count;
}

int fs_mig_find(const fs_mig_model_t *m, const fs_mig_layout_t *l, unsigned p)
{
    if (p >= m->nprofiles || l->count[p] >= m->profile[p].max_count)
        return -1;
    const fs_mig_profile_t *pr = &m->profile[p];
    for (unsigned s = 0; s < FS_MIG_SLOTS; s++)
        if ((pr->starts >> s & 1u) && !(l->mem & fs_mig_slots(pr, s)))
            return (int)s;
    return -1;
}

/* Inserts (p, start) keeping inst[] in ascending start; caller checked it fits. */
static void insert(const fs_mig_model_t *m, fs_mig_layout_t *l, unsigned p, unsigned start)
{
    const fs_mig_profile_t *pr = &m->profile[p];
    unsigned i = l->ninst;
    while (i > 0 && l->inst[i - 1].start > start) {
        l->inst[i] = l->inst[i - 1];
        i--;
    }
    l->inst[i] = (fs_mig_inst_t){(uint8_t)p, (uint8_t)start};
    l->ninst++;
    l->mem |= fs_mig_slots(pr, start);
    l->sm |= sm_mask(pr, start);
    l->count[p]++;
}

int fs_mig_place(const fs_mig_model_t *m, fs_mig_layout_t *l, unsigned p, int start)
{
    if (start < 0)
        start = fs_mig_find(m, l, p);
    if (start < 0 || !fs_mig_can_place_at(m, l, p, (unsigned)start) || l->ninst >= m->compute)
        return FS_EINVAL;
    insert(m, l, p, (unsigned)start);
    return start;
}

int fs_mig_remove(const fs_mig_model_t *m, fs_mig_layout_t *l, unsigned start)
{
    for (unsigned i = 0; i < l->ninst; i++) {
        if (l->inst[i].start != start)
            continue;
        unsigned p = l->inst[i].profile;
        const fs_mig_profile_t *pr = &m->profile[p];
        for (unsigned j = i + 1; j < l->ninst; j++)
            l->inst[j - 1] = l->inst[j];
        l->ninst--;
        l->inst[l->ninst] = (fs_mig_inst_t){0, 0};
        l->mem &= (uint8_t)~fs_mig_slots(pr, start);
        l->sm &= (uint8_t)~sm_mask(pr, start);
        l->count[p]--;
        return (int)p;
    }
    return FS_EINVAL;
}

unsigned fs_mig_fits(const fs_mig_model_t *m, const fs_mig_layout_t *l, unsigned p)
{
    if (p >= m->nprofiles)
        return 0;
    const fs_mig_profile_t *pr = &m->profile[p];
    unsigned room = pr->max_count > l->count[p] ? pr->max_count - l->count[p] : 0;
    unsigned n = 0;
    uint8_t mem = l->mem;
    for (unsigned s = 0; s < FS_MIG_SLOTS && n < room; s++) {
        uint8_t sl = fs_mig_slots(pr, s);
        if ((pr->starts >> s & 1u) && !(mem & sl)) {
            mem |= sl;
            n++;
        }
    }
    return n;
}

int fs_mig_find_best(const fs_mig_model_t *m, const fs_mig_layout_t *l, unsigned p)
{
    if (p >= m->nprofiles || l->count[p] >= m->profile[p].max_count)
        return -1;
    const uint8_t *order = m->by_size;   /* largest footprint first */
    unsigned n = m->nprofiles;
    const fs_mig_profile_t *pr = &m->profile[p];
    int best = -1;
    unsigned best_fits[FS_MIG_MAX_PROFILES] = {0};
    for (unsigned s = 0; s < FS_MIG_SLOTS; s++) {
        if (!(pr->starts >> s & 1u) || (l->mem & fs_mig_slots(pr, s)))
            continue;
        fs_mig_layout_t after = *l;   /* only mem and count matter to fs_mig_fits */
        after.mem |= fs_mig_slots(pr, s);
        after.count[p]++;
        /* compare with the best so far, largest profile first; stop at
         * the first difference */
        unsigned fits[FS_MIG_MAX_PROFILES], k = 0;
        int cmp = best < 0 ? 1 : 0;
        for (; k < n && cmp == 0; k++) {
            fits[k] = fs_mig_fits(m, &after, order[k]);
            cmp = (fits[k] > best_fits[k]) - (fits[k] < best_fits[k]);
        }
        if (cmp > 0) {
            for (; k < n; k++)
                fits[k] = fs_mig_fits(m, &after, order[k]);
            best = (int)s;
            memcpy(best_fits, fits, sizeof fits);
        }
    }
    return best;
}

int fs_mig_layout_check(const fs_mig_model_t *m, const fs_mig_layout_t *l, fs_error_t *err)
{
    uint8_t mem = 0, sm = 0, count[FS_MIG_MAX_PROFILES] = {0};
    if (l->ninst > m->compute)
        return fs_error_set(err, FS_EINTERNAL, "MIG layout: %u instances (at most %u)", l->ninst, m->compute);
    for (unsigned i = 0; i < l->ninst; i++) {
        unsigned p = l->inst[i].profile, s = l->inst[i].start;
        if (p >= m->nprofiles)
            return fs_error_set(err, FS_EINTERNAL, "MIG layout: instance %u has profile %u of %u", i, p,
                                m->nprofiles);
        const fs_mig_profile_t *pr = &m->profile[p];
        if (s >= FS_MIG_SLOTS || !(pr->starts >> s & 1u))
            return fs_error_set(err, FS_EINTERNAL, "MIG layout: %s at slot %u is not a valid start", pr->name, s);
        if (i > 0 && l->inst[i - 1].start >= s)
            return fs_error_set(err, FS_EINTERNAL, "MIG layout: instances not in ascending start order");
        if (mem & fs_mig_slots(pr, s))
            return fs_error_set(err, FS_EINTERNAL, "MIG layout: %s at slot %u overlaps another instance",
                                pr->name, s);
        mem |= fs_mig_slots(pr, s);
        sm |= sm_mask(pr, s);
        count[p]++;
    }
    if (mem != l->mem || sm != l->sm)
        return fs_error_set(err, FS_EINTERNAL, "MIG layout: slot masks 0x%02x/0x%02x, instances give 0x%02x/0x%02x",
                            l->mem, l->sm, mem, sm);
    for (unsigned p = 0; p < FS_MIG_MAX_PROFILES; p++) {
        if (count[p] != l->count[p])
            return fs_error_set(err, FS_EINTERNAL, "MIG layout: count of profile %u is %u, instances give %u", p,
                                l->count[p], count[p]);
        if (p < m->nprofiles && count[p] > m->profile[p].max_count)
            return fs_error_set(err, FS_EINTERNAL, "MIG layout: %u x %s (at most %u)", count[p],
                                m->profile[p].name, m->profile[p].max_count);
    }
    return 0;
}

/* ---- whole layouts ---- */

/* Depth-first search for starts of items[k..n-1] given the occupied slots.
 * Equal consecutive items take ascending starts (no permutation is tried
 * twice).  At most 7 levels of at most 7 starts. */
static bool search(const fs_mig_model_t *m, const uint8_t *items, unsigned n, unsigned k, uint8_t mem,
                   uint8_t *starts)
{
    if (k == n)
        return true;
    const fs_mig_profile_t *pr = &m->profile[items[k]];
    unsigned lo = (k > 0 && items[k - 1] == items[k]) ? starts[k - 1] + 1u : 0u;
    for (unsigned s = lo; s < FS_MIG_SLOTS; s++) {
        uint8_t sl = fs_mig_slots(pr, s);
        if (!(pr->starts >> s & 1u) || (mem & sl))
            continue;
        starts[k] = (uint8_t)s;
        if (search(m, items, n, k + 1, (uint8_t)(mem | sl), starts))
            return true;
    }
    return false;
}

/* 0: fits, starts[] filled for items[] (largest first); FS_ELIMIT: a count
 * over the cap or over 7 instances (*bad = the profile, or -1);
 * FS_EINVAL: no placement. */
static int solve(const fs_mig_model_t *m, const fs_mig_spec_t *spec, uint8_t items[FS_MIG_MAX_INSTANCES],
                 uint8_t starts[FS_MIG_MAX_INSTANCES], unsigned *n_out, int *bad)
{
    unsigned n = 0, total = 0;
    *bad = -1;
    for (unsigned p = 0; p < FS_MIG_MAX_PROFILES; p++) {
        total += spec->count[p];
        if (spec->count[p] && (p >= m->nprofiles || spec->count[p] > m->profile[p].max_count)) {
            *bad = (int)p;
            return FS_ELIMIT;
        }
    }
    if (total > m->compute)
        return FS_ELIMIT;
    /* largest memory footprint first, then table order */
    for (unsigned size = FS_MIG_SLOTS; size >= 1; size--)
        for (unsigned p = 0; p < m->nprofiles; p++)
            if (m->profile[p].mem_slices == size)
                for (unsigned c = 0; c < spec->count[p]; c++)
                    items[n++] = (uint8_t)p;
    *n_out = n;
    return search(m, items, n, 0, 0, starts) ? 0 : FS_EINVAL;
}

bool fs_mig_spec_valid(const fs_mig_model_t *m, const fs_mig_spec_t *spec)
{
    uint8_t items[FS_MIG_MAX_INSTANCES], starts[FS_MIG_MAX_INSTANCES];
    unsigned n;
    int bad;
    return !spec->enabled || solve(m, spec, items, starts, &n, &bad) == 0;
}

/* "1g.10gb x2, 3g.40gb" for messages. */
static void spec_text(const fs_mig_model_t *m, const fs_mig_spec_t *spec, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (unsigned p = 0; p < m->nprofiles && len < cap; p++) {
        if (!spec->count[p])
            continue;
        int w = snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", m->profile[p].name);
        if (w > 0)
            len += (size_t)w;
        if (spec->count[p] > 1 && len < cap) {
            w = snprintf(buf + len, cap - len, " x%u", spec->count[p]);
            if (w > 0)
                len += (size_t)w;
        }
    }
}

/* "4g.40gb {0}:4, 3g.40gb {0,4}:4" for messages: the placements of the
 * profiles a spec names, as nvidia-smi mig -lgipp prints them. */
static void placements_text(const fs_mig_model_t *m, const fs_mig_spec_t *spec, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (unsigned p = 0; p < m->nprofiles && len < cap; p++) {
        if (!spec->count[p])
            continue;
        const fs_mig_profile_t *pr = &m->profile[p];
        int w = snprintf(buf + len, cap - len, "%s%s {", len ? ", " : "", pr->name);
        if (w > 0)
            len += (size_t)w;
        const char *sep = "";
        for (unsigned s = 0; s < FS_MIG_SLOTS && len < cap; s++)
            if (pr->starts >> s & 1u) {
                w = snprintf(buf + len, cap - len, "%s%u", sep, s);
                if (w > 0)
                    len += (size_t)w;
                sep = ",";
            }
        if (len < cap) {
            w = snprintf(buf + len, cap - len, "}:%u", pr->mem_slices);
            if (w > 0)
                len += (size_t)w;
        }
    }
}

int fs_mig_layout_build(const fs_mig_model_t *m, const fs_mig_spec_t *spec, fs_mig_layout_t *out,
                        fs_error_t *err)
{
    uint8_t items[FS_MIG_MAX_INSTANCES], starts[FS_MIG_MAX_INSTANCES];
    unsigned n = 0;
    int bad;
    fs_mig_layout_clear(out);
    if (!spec->enabled)
        return 0;
    int rc = solve(m, spec, items, starts, &n, &bad);
    if (rc == 0) {
        for (unsigned k = 0; k < n; k++)
            insert(m, out, items[k], starts[k]);
        return 0;
    }
    char what[256], where[320];
    spec_text(m, spec, what, sizeof what);
    if (rc == FS_ELIMIT && bad >= (int)m->nprofiles)
        return fs_error_set(err, FS_EINVAL, "MIG layout for %s names profile %d of %u", m->name, bad,
                            m->nprofiles);
    if (rc == FS_ELIMIT && bad >= 0)
        return fs_error_set(err, FS_EINVAL,
                            "MIG layout '%s' does not fit on one %s: %u x %s (expected at most %u per GPU)", what,
                            m->name, spec->count[bad], m->profile[bad].name, m->profile[bad].max_count);
    if (rc == FS_ELIMIT)
        return fs_error_set(err, FS_EINVAL,
                            "MIG layout '%s' does not fit on one %s (expected at most %u instances per GPU)", what,
                            m->name, m->compute);
    placements_text(m, spec, where, sizeof where);
    return fs_error_set(err, FS_EINVAL,
                        "MIG layout '%s' does not fit on one %s: no placement keeps the instances' memory slices "
                        "apart (expected non-overlapping {starts}:size of %u slices: %s)",
                        what, m->name, m->slots, where);
}

/* ---- parsing ---- */

static void names_text(const fs_mig_model_t *m, bool dotted, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (unsigned p = 0; p < m->nprofiles && len < cap; p++) {
        int w = snprintf(buf + len, cap - len, "%s%s", p ? ", " : "", m->profile[p].name);
        if (w <= 0)
            continue;
        if (dotted)
            for (size_t i = len; i < len + (size_t)w && i < cap; i++)
                if (buf[i] == '+')
                    buf[i] = '.';
        len += (size_t)w;
    }
}

/* A profile name with '+' spelled '.', as mig-parted names its configs
 * (all-1g.10gb.me for 1g.10gb+me). */
static int profile_find_dotted(const fs_mig_model_t *m, const char *s, size_t len)
{
    for (unsigned p = 0; p < m->nprofiles; p++) {
        const char *nm = m->profile[p].name;
        if (strlen(nm) != len)
            continue;
        size_t i = 0;
        while (i < len && (nm[i] == s[i] || (nm[i] == '+' && s[i] == '.')))
            i++;
        if (i == len)
            return (int)p;
    }
    return -1;
}

static int parse_fail(size_t *err_off, size_t off, fs_error_t *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int parse_fail(size_t *err_off, size_t off, fs_error_t *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fs_error_vset(err, FS_EINVAL, fmt, ap);
    va_end(ap);
    if (err_off)
        *err_off = off;
    return FS_EINVAL;
}

/* The base (not +me) profile of g compute slices with the most instances (mig-parted's
 * balanced builder keeps the highest MaxCount per G among base profiles). */
static int balanced_profile(const fs_mig_model_t *m, unsigned g)
{
    int best = -1;
    for (unsigned p = 0; p < m->nprofiles; p++) {
        const fs_mig_profile_t *pr = &m->profile[p];
        if (pr->compute == g && !pr->media_ext && (best < 0 || pr->max_count > m->profile[best].max_count))
            best = (int)p;
    }
    return best;
}

static int parse_named(const fs_mig_model_t *m, const char *s, size_t len, size_t off, fs_mig_spec_t *out,
                       size_t *err_off, fs_error_t *err)
{
    if (len == 8 && !memcmp(s, "disabled", 8)) {
        out->enabled = false;
        return 0;
    }
    if (len == 7 && !memcmp(s, "enabled", 7))
        return 0;
    if (len == 8 && !memcmp(s, "balanced", 8)) {
        /* mig-parted pkg/mig/builder/balanced.go: 7 slots -> 2 x 1g, 1 x 2g, 1 x 3g;
         * 4 slots (A30) -> 2 x 1g, 1 x 2g */
        static const uint8_t formula[][2] = {{1, 2}, {2, 1}, {3, 1}};
        size_t nf = m->compute == FS_MIG_COMPUTE ? 3 : 2;
        for (size_t i = 0; i < nf; i++) {
            int p = balanced_profile(m, formula[i][0]);
            if (p < 0)
                return parse_fail(err_off, off, err, "all-balanced: %s has no %ug profile", m->name, formula[i][0]);
            out->count[p] = formula[i][1];
        }
        return 0;
    }
    int p = profile_find_dotted(m, s, len);
    if (p < 0) {
        char names[320];
        names_text(m, true, names, sizeof names);
        return parse_fail(err_off, off, err,
                          "unknown MIG layout 'all-%.*s' for %s (expected all-disabled, all-enabled, all-balanced "
                          "or all-<profile> with a profile of %s: %s)",
                          (int)(len > 64 ? 64 : len), s, m->name, m->name, names);
    }
    fs_mig_layout_t empty;
    fs_mig_layout_clear(&empty);
    out->count[p] = (uint8_t)fs_mig_fits(m, &empty, (unsigned)p);
    return 0;
}

/* Characters of a profile name token ("1g.10gb+me"; a glued count "x2"). */
static bool is_name(int c) { return isalnum(c) || c == '.' || c == '+' || c == '-'; }

int fs_mig_layout_parse(const fs_mig_model_t *m, const char *text, fs_mig_spec_t *out, size_t *err_off,
                        fs_error_t *err)
{
    memset(out, 0, sizeof *out);
    out->enabled = true;
    if (err_off)
        *err_off = 0;
    size_t n = strlen(text), i = 0;
    while (i < n && isspace((unsigned char)text[i]))
        i++;
    size_t end = n;
    while (end > i && isspace((unsigned char)text[end - 1]))
        end--;
    if (i == end)
        return parse_fail(err_off, i, err,
                          "empty MIG layout (expected a mig-parted name such as all-balanced or a list of %s "
                          "profiles such as '%s x2, %s')",
                          m->name, m->profile[0].name, m->profile[4].name);
    int rc;
    if (end - i > 4 && !memcmp(text + i, "all-", 4)) {
        rc = parse_named(m, text + i + 4, end - i - 4, i + 4, out, err_off, err);
    } else {
        rc = 0;
        while (i < end) {
            while (i < end && isspace((unsigned char)text[i]))
                i++;
            size_t tok = i;
            while (i < end && is_name((unsigned char)text[i]))
                i++;
            size_t tlen = i - tok;
            if (tlen == 0)
                return parse_fail(err_off, tok, err, "expected a MIG profile name of %s, found '%c'", m->name,
                                  tok < end ? text[tok] : ' ');
            int p = fs_mig_profile_find(m, text + tok, tlen);
            unsigned count = 1;
            bool have_count = false;
            if (p < 0) {
                /* "1g.10gbx2": a known name glued to its count */
                size_t x = tlen;
                while (x > 0 && isdigit((unsigned char)text[tok + x - 1]))
                    x--;
                if (x > 1 && x < tlen && text[tok + x - 1] == 'x' &&
                    (p = fs_mig_profile_find(m, text + tok, x - 1)) >= 0) {
                    count = 0;
                    for (size_t d = tok + x; d < i; d++)
                        count = count > 100 ? count : count * 10 + (unsigned)(text[d] - '0');
                    have_count = true;
                }
            }
            if (p < 0) {
                char names[320];
                names_text(m, false, names, sizeof names);
                return parse_fail(err_off, tok, err, "unknown MIG profile '%.*s' for %s (expected one of %s)",
                                  (int)(tlen > 64 ? 64 : tlen), text + tok, m->name, names);
            }
            while (i < end && isspace((unsigned char)text[i]))
                i++;
            if (!have_count && i < end && (text[i] == 'x' || text[i] == '*' || text[i] == ':')) {
                i++;
                while (i < end && isspace((unsigned char)text[i]))
                    i++;
                size_t num = i;
                count = 0;
                while (i < end && isdigit((unsigned char)text[i])) {
                    count = count > 100 ? count : count * 10 + (unsigned)(text[i] - '0');
                    i++;
                }
                if (i == num)
                    return parse_fail(err_off, num, err, "expected a count after '%s' (0 to %u)",
                                      m->profile[p].name, m->profile[p].max_count);
                have_count = true;
                tok = num;
            }
            if (count > FS_MIG_MAX_INSTANCES || out->count[p] + count > FS_MIG_MAX_INSTANCES)
                return parse_fail(err_off, tok, err, "%u x %s: expected at most %u per GPU", out->count[p] + count,
                                  m->profile[p].name, m->profile[p].max_count);
            out->count[p] = (uint8_t)(out->count[p] + count);
            while (i < end && isspace((unsigned char)text[i]))
                i++;
            if (i < end) {
                if (text[i] != ',')
                    return parse_fail(err_off, i, err,
                                      "expected ',' or a count (x2) after '%s', found '%c'", m->profile[p].name,
                                      text[i]);
                i++;
                size_t after = i;
                while (after < end && isspace((unsigned char)text[after]))
                    after++;
                if (after == end)
                    return parse_fail(err_off, after, err, "expected a MIG profile name after ','");
            }
        }
    }
    if (rc)
        return rc;
    fs_mig_layout_t scratch;
    size_t first = 0;
    while (first < n && isspace((unsigned char)text[first]))
        first++;
    if (fs_mig_layout_build(m, out, &scratch, err) != 0) {
        if (err_off)
            *err_off = first;
        return FS_EINVAL;
    }
    return 0;
}

/* ---- re-partitioning: the planning step ---- */

unsigned fs_mig_recut(const fs_mig_model_t *m, const fs_mig_layout_t *cur, uint8_t keep, unsigned p,
                      fs_mig_layout_t *out)
{
    fs_mig_layout_t l;
    fs_mig_layout_clear(&l);
    for (unsigned i = 0; i < cur->ninst; i++)
        if (keep >> i & 1u)
            insert(m, &l, cur->inst[i].profile, cur->inst[i].start);
    if (p < m->nprofiles) {
        int s;
        while (l.ninst < m->compute && (s = fs_mig_find(m, &l, p)) >= 0)
            insert(m, &l, p, (unsigned)s);
    }
    *out = l;
    return p < m->nprofiles ? l.count[p] : 0;
}

void fs_mig_spec_of(const fs_mig_layout_t *l, fs_mig_spec_t *out)
{
    out->enabled = true;
    memcpy(out->count, l->count, sizeof out->count);
}

size_t fs_mig_spec_format(const fs_mig_model_t *m, const fs_mig_spec_t *spec, char *buf, size_t n)
{
    char tmp[160];
    unsigned any = 0;
    for (unsigned p = 0; p < m->nprofiles; p++)
        any += spec->count[p];
    if (!spec->enabled)
        snprintf(tmp, sizeof tmp, "all-disabled");
    else if (!any)
        snprintf(tmp, sizeof tmp, "all-enabled");
    else
        spec_text(m, spec, tmp, sizeof tmp);
    size_t len = strlen(tmp);
    if (n) {
        size_t w = len < n - 1 ? len : n - 1;
        memcpy(buf, tmp, w);
        buf[w] = '\0';
    }
    return len;
}
