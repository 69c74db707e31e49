/* analysis/fs_tsdb: XOR chunks, ULIDs, CRC-32C and whole blocks read back
 * with an independent reader of the documented format (Prometheus'
 * tsdb/docs/format: index v2, chunks, meta.json). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/fs_tsdb.h"

static uint64_t bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static void test_crc32c(void **state)
{
    (void)state;
    assert_int_equal(fs_tsdb_crc32c(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(fs_tsdb_crc32c(0, NULL, 0), 0);
    /* continued over two pieces: the same as at once */
    assert_int_equal(fs_tsdb_crc32c(fs_tsdb_crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);
}

static void test_ulid(void **state)
{
    (void)state;
    uint8_t zero[10] = {0}, ones[10];
    memset(ones, 0xff, sizeof ones);
    char u[27];
    fs_tsdb_ulid(0, zero, u);
    assert_string_equal(u, "00000000000000000000000000");
    fs_tsdb_ulid(1, zero, u);
    assert_string_equal(u, "00000000010000000000000000");
    fs_tsdb_ulid(0, ones, u);
    assert_string_equal(u, "0000000000ZZZZZZZZZZZZZZZZ");
    fs_tsdb_ulid((1ull << 48) - 1, ones, u);
    assert_string_equal(u, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
    /* 1469918176385 ms: the ULID specification's example time, 01ARYZ6S41 */
    fs_tsdb_ulid(1469918176385ull, zero, u);
    assert_memory_equal(u, "01ARYZ6S41", 10);
}

static void roundtrip(const int64_t *t, const double *v, size_t n)
{
    size_t cap = fs_tsdb_xor_bound(n);
    uint8_t *buf = malloc(cap);
    int64_t *t2 = malloc(n * sizeof *t2);
    double *v2 = malloc(n * sizeof *v2);
    size_t len = fs_tsdb_xor_encode(t, v, n, buf, cap), m = 0;
    assert_true(len > 0 && len <= cap);
    assert_int_equal(fs_tsdb_xor_decode(buf, len, t2, v2, n, &m), 0);
    assert_int_equal(m, n);
    for (size_t i = 0; i < n; i++) {
        assert_true(t2[i] == t[i]);
        assert_true(bits(v2[i]) == bits(v[i]));   /* bit for bit: NaNs, -0, the marker */
    }
    /* a buffer one byte short is refused, a truncated chunk does not decode */
    assert_int_equal(fs_tsdb_xor_encode(t, v, n, buf, len - 1), 0);
    if (len > 3)
        assert_int_equal(fs_tsdb_xor_decode(buf, len / 2, t2, v2, n, &m), FS_EINVAL);
    /* fewer places than samples: refused */
    if (n > 1)
        assert_int_equal(fs_tsdb_xor_decode(buf, len, t2, v2, n - 1, &m), FS_EINVAL);
    free(buf);
    free(t2);
    free(v2);
}

static void test_xor(void **state)
{
    (void)state;
    /* the documented layout, by hand: 2 samples, the same value */
    int64_t t[300];
    double v[300];
    t[0] = 1000;
    t[1] = 2000;
    v[0] = v[1] = 1.0;
    uint8_t buf[64];
    size_t len = fs_tsdb_xor_encode(t, v, 2, buf, sizeof buf);
    const uint8_t want[] = {0x00, 0x02, 0xD0, 0x0F, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0, 0xE8, 0x07, 0x00};
    assert_int_equal(len, sizeof want);
    assert_memory_equal(buf, want, sizeof want);
    /* one sample */
    roundtrip(t, v, 1);
    /* a regular series with repeated values costs about 2 bits a sample */
    for (int i = 0; i < 120; i++) {
        t[i] = 1767225600000 + 60000 * (int64_t)i;
        v[i] = i < 60 ? 0 : 100;
    }
    len = fs_tsdb_xor_encode(t, v, 120, buf, sizeof buf);
    /* 19 bytes for the count, first sample (6-byte varint time, 8-byte value)
     * and delta (3 bytes); a 0 bit for the unchanged value of the second, then
     * per sample a 0 bit for the time and 0 for the value, and the change to
     * 100 (0x4059 << 48: 1 leading zero, 48 trailing) 2 + 5 + 6 + 15 bits */
    assert_int_equal(len, 19 + (1 + 118 * 2 + 27 + 7) / 8);
    roundtrip(t, v, 120);
    /* irregular times (every dod class, negative too), odd values */
    const int64_t steps[] = {1, 60000, 59999, 8191, 8192, 65535, 65536, 524288, 524289,
                             1ll << 40, 3, 1, 1ll << 33};
    const double odd[] = {0.0, -0.0, 1.5, -1e308, 4.9e-324, INFINITY, -INFINITY, NAN,
                          fs_tsdb_stale(), 0.7 * 0.142, 1e15, 123456789.123};
    int64_t now = 0;
    for (int i = 0; i < 300; i++) {
        now += steps[(i * 7) % 13];
        t[i] = now;
        v[i] = odd[(i * 5) % 12] * (i % 3 ? 1 : 1.0000001);
    }
    roundtrip(t, v, 300);
    assert_true(fs_tsdb_is_stale(fs_tsdb_stale()));
    assert_false(fs_tsdb_is_stale(NAN));
    /* n = 0 and more than a chunk holds: refused */
    assert_int_equal(fs_tsdb_xor_encode(t, v, 0, buf, sizeof buf), 0);
}

/* ---- an independent reader of a block ----------------------------------------------- */

typedef struct rd { const uint8_t *p; size_t n, at; } rd_t;

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
    return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static uint64_t uv(rd_t *r)
{
    uint64_t x = 0;
    for (int s = 0; r->at < r->n; s += 7) {
        uint8_t b = r->p[r->at++];
        x |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80))
            return x;
    }
    fail_msg("uvarint past the end");
    return 0;
}

static int64_t sv(rd_t *r)
{
    uint64_t u = uv(r);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)len + 1);
    assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return b;
}

/* A section with a 4-byte length at off: checks its CRC, returns its body. */
static const uint8_t *section4(const uint8_t *ix, size_t n, uint64_t off, uint32_t *len)
{
    assert_true(off + 4 <= n);
    *len = be32(ix + off);
    assert_true(off + 8 + *len <= n);
    assert_int_equal(be32(ix + off + 4 + *len), fs_tsdb_crc32c(0, ix + off + 4, *len));
    return ix + off + 4;
}

typedef struct want {
    const char *lab[8][2];
    size_t nl, n;
    int64_t t0, dt;
    int found;
} want_t;

/* Reads block dir: every series (through the all-series postings list)
 * must be one of ws with its samples in [mint, maxt) of the block;
 * returns the samples read. */
static size_t read_block(const char *dir, want_t *ws, size_t nw)
{
    char path[512];
    snprintf(path, sizeof path, "%.300s/index", dir);
    size_t n;
    uint8_t *ix = slurp(path, &n);
    assert_int_equal(be32(ix), 0xBAAAD700u);
    assert_int_equal(ix[4], 2);
    const uint8_t *toc = ix + n - 52;
    assert_int_equal(be32(toc + 48), fs_tsdb_crc32c(0, toc, 48));
    uint32_t len;
    const uint8_t *sy = section4(ix, n, be64(toc), &len);
    uint32_t nsym = be32(sy);
    const char **sym = calloc(nsym + 1, sizeof *sym);
    size_t *slen = calloc(nsym + 1, sizeof *slen);
    rd_t r = {sy, len, 4};
    for (uint32_t i = 0; i < nsym; i++) {
        slen[i] = uv(&r);
        sym[i] = (const char *)sy + r.at;
        r.at += slen[i];
        if (i) {    /* sorted, unique */
            size_t m = slen[i] < slen[i - 1] ? slen[i] : slen[i - 1];
            int c = memcmp(sym[i - 1], sym[i], m);
            assert_true(c < 0 || (c == 0 && slen[i - 1] < slen[i]));
        }
    }
    /* the postings offset table: the all-series list first */
    const uint8_t *pot = section4(ix, n, be64(toc + 40), &len);
    r = (rd_t){pot, len, 4};
    assert_true(be32(pot) >= 1);
    assert_int_equal(pot[r.at++], 2);
    assert_int_equal(uv(&r), 0);
    assert_int_equal(uv(&r), 0);
    uint64_t all = uv(&r);
    const uint8_t *pl = section4(ix, n, all, &len);
    uint32_t nser = be32(pl);
    size_t samples = 0;
    snprintf(path, sizeof path, "%.300s/chunks/000001", dir);
    size_t cn;
    uint8_t *ch = slurp(path, &cn);
    assert_int_equal(be32(ch), 0x85BD40DDu);
    int64_t *t = malloc(65536 * sizeof *t);
    double *v = malloc(65536 * sizeof *v);
    for (uint32_t s = 0; s < nser; s++) {
        uint64_t off = (uint64_t)be32(pl + 4 + 4 * s) * 16;
        if (s)
            assert_true(be32(pl + 4 + 4 * s) > be32(pl + 4 * s));
        rd_t e = {ix, n, off};
        uint64_t elen = uv(&e);
        assert_int_equal(be32(ix + e.at + elen), fs_tsdb_crc32c(0, ix + e.at, elen));
        uint64_t nl = uv(&e);
        const char *nm[16][2];
        size_t nlen[16][2];
        for (uint64_t i = 0; i < nl; i++)
            for (int k = 0; k < 2; k++) {
                uint64_t id = uv(&e);
                assert_true(id < nsym);
                nm[i][k] = sym[id];
                nlen[i][k] = slen[id];
            }
        /* which added series it is */
        want_t *w = NULL;
        for (size_t q = 0; q < nw && !w; q++) {
            if (ws[q].nl + 1 != nl)
                continue;
            int same = 1;
            for (uint64_t i = 0; i < nl && same; i++) {
                int hit = 0;
                for (size_t k = 0; k < ws[q].nl && !hit; k++)
                    hit = strlen(ws[q].lab[k][0]) == nlen[i][0] &&
                          memcmp(ws[q].lab[k][0], nm[i][0], nlen[i][0]) == 0 &&
                          strlen(ws[q].lab[k][1]) == nlen[i][1] &&
                          memcmp(ws[q].lab[k][1], nm[i][1], nlen[i][1]) == 0;
                if (!hit)   /* __name__ */
                    hit = nlen[i][0] == 8 && memcmp(nm[i][0], "__name__", 8) == 0 &&
                          nlen[i][1] == 4 && memcmp(nm[i][1], "test", 4) == 0;
                same = hit;
            }
            if (same)
                w = &ws[q];
        }
        assert_non_null(w);
        w->found++;
        uint64_t nc = uv(&e);
        int64_t mint = 0, maxt = 0;
        uint64_t ref = 0;
        for (uint64_t c = 0; c < nc; c++) {
            if (c == 0) {
                mint = sv(&e);
                maxt = mint + (int64_t)uv(&e);
                ref = uv(&e);
            } else {
                mint = maxt + (int64_t)uv(&e);
                maxt = mint + (int64_t)uv(&e);
                ref += (uint64_t)sv(&e);
            }
            assert_int_equal(ref >> 32, 0);
            rd_t cr = {ch, cn, (size_t)ref};
            uint64_t dl = uv(&cr);
            assert_int_equal(ch[cr.at], 1);     /* XOR */
            assert_int_equal(be32(ch + cr.at + 1 + dl), fs_tsdb_crc32c(0, ch + cr.at, dl + 1));
            size_t m;
            assert_int_equal(fs_tsdb_xor_decode(ch + cr.at + 1, dl, t, v, 65536, &m), 0);
            assert_true(m >= 1 && m <= FS_TSDB_CHUNK_SAMPLES);
            assert_true(t[0] == mint && t[m - 1] == maxt);
            for (size_t i = 0; i < m; i++) {
                int64_t k = (t[i] - w->t0) / w->dt;
                assert_true(t[i] == w->t0 + k * w->dt && k >= 0 && (size_t)k < w->n);
                assert_true(v[i] == (double)k * 0.5);
            }
            samples += m;
        }
    }
    free(t);
    free(v);
    free(ch);
    free(sym);
    free(slen);
    free(ix);
    return samples;
}

static size_t blocks_in(const char *dir, char names[][300], size_t max)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strlen(e->d_name) == 26 && n < max)
            snprintf(names[n++], 300, "%s/%s", dir, e->d_name);
    if (d)
        closedir(d);
    return n;
}

static void test_block(void **state)
{
    (void)state;
    char dir[] = "/tmp/fs-test-tsdb-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char long_value[1200];
    memset(long_value, 'x', sizeof long_value - 1);
    long_value[sizeof long_value - 1] = '\0';
    want_t ws[] = {
        /* odd label values: quotes, backslashes, newlines, UTF-8, a long one */
        {{{"a", "say \"hi\"\\n"}, {"b", "line\nbreak"}}, 2, 10, 0, 60000, 0},
        {{{"a", "\xc3\xbc\xe2\x82\xac"}, {"zz", long_value}}, 2, 100, 7200000 - 600000, 60000, 0},
        /* one sample; a series over two 2 h blocks and more than a chunk */
        {{{"a", "one"}}, 1, 1, 3600000, 60000, 0},
        {{{"a", "two blocks"}, {"gpu", "0"}}, 2, 250, 0, 30000, 0},
        /* an empty run: not written */
        {{{"a", "empty"}}, 1, 0, 0, 60000, 0},
    };
    fs_tsdb_t *w;
    fs_error_t err;
    assert_int_equal(fs_tsdb_open(&w, dir, FS_TSDB_RANGE_2H, &err), 0);
    int64_t t[300];
    double v[300];
    size_t total = 0;
    for (size_t q = 0; q < sizeof ws / sizeof ws[0]; q++) {
        fs_tsdb_label_t lab[8] = {{"__name__", "test"}};
        for (size_t i = 0; i < ws[q].nl; i++)   /* any order: the writer sorts them */
            lab[ws[q].nl - i] = (fs_tsdb_label_t){ws[q].lab[i][0], ws[q].lab[i][1]};
        for (size_t i = 0; i < ws[q].n; i++) {
            t[i] = ws[q].t0 + (int64_t)i * ws[q].dt;
            v[i] = (double)i * 0.5;
        }
        assert_int_equal(fs_tsdb_add(w, lab, ws[q].nl + 1, t, v, ws[q].n, &err), 0);
        total += ws[q].n;
    }
    /* refused: an empty value, a name twice, times not increasing */
    fs_tsdb_label_t bad[] = {{"__name__", "test"}, {"a", ""}};
    assert_int_equal(fs_tsdb_add(w, bad, 2, t, v, 1, &err), FS_EINVAL);
    fs_tsdb_label_t twice[] = {{"a", "1"}, {"a", "2"}};
    assert_int_equal(fs_tsdb_add(w, twice, 2, t, v, 1, &err), FS_EINVAL);
    int64_t back[2] = {5, 5};
    assert_int_equal(fs_tsdb_add(w, bad, 1, back, v, 2, &err), FS_EINVAL);
    fs_tsdb_stats_t st;
    assert_int_equal(fs_tsdb_close(w, &st, &err), 0);
    assert_int_equal(st.samples, total);
    assert_int_equal(st.series, 6);     /* a series over two blocks counts in both */
    char names[8][300];
    size_t nb = blocks_in(dir, names, 8);
    assert_int_equal(nb, 2);
    assert_int_equal(st.blocks, 2);
    size_t got = 0;
    for (size_t b = 0; b < nb; b++) {
        got += read_block(names[b], ws, sizeof ws / sizeof ws[0]);
        char p[400];
        snprintf(p, sizeof p, "%.300s/tombstones", names[b]);
        size_t tn;
        uint8_t *tb = slurp(p, &tn);
        assert_int_equal(tn, 9);
        assert_int_equal(be32(tb), 0x0130BA30u);
        free(tb);
        snprintf(p, sizeof p, "%.300s/meta.json", names[b]);
        uint8_t *mj = slurp(p, &tn);
        mj[tn] = 0;
        assert_non_null(strstr((char *)mj, "\"level\": 1"));
        assert_non_null(strstr((char *)mj, names[b] + strlen(dir) + 1));   /* its ULID */
        free(mj);
    }
    assert_int_equal(got, total);
    assert_int_equal(ws[1].found, 2);   /* in both blocks */
    assert_int_equal(ws[3].found, 2);
    assert_int_equal(ws[4].found, 0);
    /* the same label set twice: refused at close, nothing new left */
    assert_int_equal(fs_tsdb_open(&w, dir, FS_TSDB_RANGE_2H, &err), 0);
    fs_tsdb_label_t one[] = {{"__name__", "dup"}};
    assert_int_equal(fs_tsdb_add(w, one, 1, t, v, 1, &err), 0);
    assert_int_equal(fs_tsdb_add(w, one, 1, t + 1, v, 1, &err), 0);
    assert_int_equal(fs_tsdb_close(w, &st, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "added twice"));
    assert_int_equal(blocks_in(dir, names, 8), 2);
    /* a directory holding other data is refused */
    char other[400];
    snprintf(other, sizeof other, "%s/notes.txt", dir);
    FILE *f = fopen(other, "w");
    fclose(f);
    assert_int_equal(fs_tsdb_open(&w, dir, FS_TSDB_RANGE_2H, &err), FS_EUSAGE);
    assert_non_null(strstr(err.msg, "notes.txt"));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c),
        cmocka_unit_test(test_ulid),
        cmocka_unit_test(test_xor),
        cmocka_unit_test(test_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
