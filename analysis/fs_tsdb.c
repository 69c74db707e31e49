#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "fs_tsdb.h"
#include "../sim/fs_alloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define SEGMENT_MAX ((uint64_t)512 * 1024 * 1024)   /* bytes per chunks segment file */
#define ENC_XOR 1
#define SPOOL_WINDOW ((size_t)4 << 20)      /* bytes of the spool read back at once */
#define STAGE_SUFFIX ".tmp-for-creation"

/* ---- small helpers ------------------------------------------------------------------- */

double fs_tsdb_stale(void)
{
    uint64_t b = FS_TSDB_STALE_NAN;
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

int fs_tsdb_is_stale(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b == FS_TSDB_STALE_NAN;
}

uint32_t fs_tsdb_crc32c(uint32_t crc, const void *p, size_t n)
{
    const uint8_t *b = p;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= b[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static uint64_t f2u(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static double u2f(uint64_t u)
{
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static size_t put_uvarint(uint8_t *p, uint64_t x)
{
    size_t n = 0;
    while (x >= 0x80) {
        p[n++] = (uint8_t)(x | 0x80);
        x >>= 7;
    }
    p[n++] = (uint8_t)x;
    return n;
}

static size_t put_varint(uint8_t *p, int64_t x)
{
    uint64_t u = (uint64_t)x << 1;
    if (x < 0)
        u = ~u;
    return put_uvarint(p, u);
}

static void put_be32(uint8_t *p, uint32_t x)
{
    p[0] = (uint8_t)(x >> 24);
    p[1] = (uint8_t)(x >> 16);
    p[2] = (uint8_t)(x >> 8);
    p[3] = (uint8_t)x;
}

static void put_be64(uint8_t *p, uint64_t x)
{
    put_be32(p, (uint32_t)(x >> 32));
    put_be32(p + 4, (uint32_t)x);
}

/* ---- XOR chunks ---------------------------------------------------------------------- */

typedef struct bw { uint8_t *p; size_t cap, bits; int over; } bw_t;

static void bw_bits(bw_t *w, uint64_t v, unsigned n)
{
    for (unsigned i = n; i-- > 0;) {
        size_t byte = w->bits >> 3;
        if (byte >= w->cap) {
            w->over = 1;
            return;
        }
        if ((w->bits & 7) == 0)
            w->p[byte] = 0;
        if ((v >> i) & 1)
            w->p[byte] |= (uint8_t)(0x80u >> (w->bits & 7));
        w->bits++;
    }
}

static void bw_bytes(bw_t *w, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        bw_bits(w, b[i], 8);
}

static unsigned clz64(uint64_t x)
{
    unsigned n = 0;
    for (uint64_t m = 1ull << 63; m && !(x & m); m >>= 1)
        n++;
    return n;
}

static unsigned ctz64(uint64_t x)
{
    unsigned n = 0;
    for (uint64_t m = 1; m && !(x & m); m <<= 1)
        n++;
    return n;
}

/* Is x in the range a dod of nbits bits holds: -(2^(n-1) - 1) .. 2^(n-1)? */
static int dod_fits(int64_t x, unsigned nbits)
{
    int64_t half = (int64_t)1 << (nbits - 1);
    return x >= -(half - 1) && x <= half;
}

size_t fs_tsdb_xor_bound(size_t n)
{
    /* header 2, ts varint 10, value 8, delta 10; then per sample 68 + 77 bits */
    return 2 + 10 + 8 + 10 + 10 + (n ? n - 1 : 0) * 19 + 1;
}

size_t fs_tsdb_xor_encode(const int64_t *t, const double *v, size_t n, uint8_t *out, size_t cap)
{
    if (n < 1 || n > 65535 || cap < 2)
        return 0;
    bw_t w = {out, cap, 0, 0};
    bw_bits(&w, n, 16);
    uint8_t tmp[10];
    bw_bytes(&w, tmp, put_varint(tmp, t[0]));
    bw_bits(&w, f2u(v[0]), 64);
    int64_t delta = 0;
    unsigned lead = 0xff, trail = 0;
    for (size_t i = 1; i < n; i++) {
        int64_t d = t[i] - t[i - 1];
        if (i == 1) {
            bw_bytes(&w, tmp, put_uvarint(tmp, (uint64_t)d));
        } else {
            int64_t dod = d - delta;
            if (dod == 0)
                bw_bits(&w, 0, 1);
            else if (dod_fits(dod, 14)) {
                bw_bits(&w, 2, 2);
                bw_bits(&w, (uint64_t)dod, 14);
            } else if (dod_fits(dod, 17)) {
                bw_bits(&w, 6, 3);
                bw_bits(&w, (uint64_t)dod, 17);
            } else if (dod_fits(dod, 20)) {
                bw_bits(&w, 14, 4);
                bw_bits(&w, (uint64_t)dod, 20);
            } else {
                bw_bits(&w, 15, 4);
                bw_bits(&w, (uint64_t)dod, 64);
            }
        }
        delta = d;
        uint64_t x = f2u(v[i]) ^ f2u(v[i - 1]);
        if (x == 0) {
            bw_bits(&w, 0, 1);
            continue;
        }
        bw_bits(&w, 1, 1);
        unsigned l = clz64(x), tr = ctz64(x);
        if (l >= 32)
            l = 31;     /* 5 bits */
        if (lead != 0xff && l >= lead && tr >= trail) {
            bw_bits(&w, 0, 1);
            bw_bits(&w, x >> trail, 64 - lead - trail);
        } else {
            lead = l;
            trail = tr;
            unsigned sig = 64 - l - tr;
            bw_bits(&w, 1, 1);
            bw_bits(&w, l, 5);
            bw_bits(&w, sig & 63, 6);   /* 64 is written as 0 */
            bw_bits(&w, x >> tr, sig);
        }
    }
    return w.over ? 0 : (w.bits + 7) >> 3;
}

typedef struct br { const uint8_t *p; size_t len, bits; int bad; } br_t;

static uint64_t br_bits(br_t *r, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) {
        size_t byte = r->bits >> 3;
        if (byte >= r->len) {
            r->bad = 1;
            return 0;
        }
        v = v << 1 | ((r->p[byte] >> (7 - (r->bits & 7))) & 1);
        r->bits++;
    }
    return v;
}

static uint64_t br_uvarint(br_t *r)
{
    uint64_t x = 0;
    for (unsigned s = 0; s < 70 && !r->bad; s += 7) {
        uint64_t b = br_bits(r, 8);
        x |= (b & 0x7f) << s;
        if (!(b & 0x80))
            return x;
    }
    r->bad = 1;
    return 0;
}

static int64_t sign_extend(uint64_t b, unsigned n)
{
    if (n < 64 && b > (1ull << (n - 1)))
        return (int64_t)b - ((int64_t)1 << n);
    return (int64_t)b;
}

int fs_tsdb_xor_decode(const uint8_t *p, size_t len, int64_t *t, double *v, size_t cap, size_t *n)
{
    br_t r = {p, len, 0, 0};
    size_t m = (size_t)br_bits(&r, 16);
    *n = 0;
    if (r.bad || m > cap)
        return FS_EINVAL;
    uint64_t val = 0;
    int64_t ts = 0, delta = 0;
    unsigned lead = 0, trail = 0;
    for (size_t i = 0; i < m; i++) {
        if (i == 0) {
            uint64_t u = br_uvarint(&r);
            ts = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
            val = br_bits(&r, 64);
        } else {
            if (i == 1) {
                delta = (int64_t)br_uvarint(&r);
            } else {
                unsigned pre = 0;
                for (int k = 0; k < 4; k++) {
                    pre = pre << 1 | (unsigned)br_bits(&r, 1);
                    if (!(pre & 1))
                        break;
                }
                unsigned nb = pre == 0 ? 0 : pre == 2 ? 14 : pre == 6 ? 17 : pre == 14 ? 20 : 64;
                if (nb)   /* wraps, as Go's int64 does in Prometheus' decoder */
                    delta = (int64_t)((uint64_t)delta + (uint64_t)sign_extend(br_bits(&r, nb), nb));
            }
            ts = (int64_t)((uint64_t)ts + (uint64_t)delta);
            if (br_bits(&r, 1)) {
                if (br_bits(&r, 1)) {
                    lead = (unsigned)br_bits(&r, 5);
                    unsigned sig = (unsigned)br_bits(&r, 6);
                    if (sig == 0)
                        sig = 64;
                    if (lead + sig > 64)
                        return FS_EINVAL;
                    trail = 64 - lead - sig;
                }
                unsigned sig = 64 - lead - trail;
                val ^= br_bits(&r, sig) << trail;
            }
        }
        if (r.bad)
            return FS_EINVAL;
        t[i] = ts;
        v[i] = u2f(val);
    }
    *n = m;
    return 0;
}

void fs_tsdb_ulid(uint64_t ms, const uint8_t entropy[10], char out[27])
{
    static const char alpha[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    uint8_t b[16];
    for (int i = 0; i < 6; i++)
        b[i] = (uint8_t)(ms >> (8 * (5 - i)));
    memcpy(b + 6, entropy, 10);
    /* 128 bits as 26 digits of 5 bits, the first holding the top 3 */
    for (int c = 0; c < 26; c++) {
        int bit = c == 0 ? 0 : 3 + (c - 1) * 5;     /* first bit of digit c */
        int nb = c == 0 ? 3 : 5;
        unsigned d = 0;
        for (int k = 0; k < nb; k++) {
            int pos = bit + k;
            d = d << 1 | ((b[pos >> 3] >> (7 - (pos & 7))) & 1u);
        }
        out[c] = alpha[d];
    }
    out[26] = '\0';
}

/* ---- directories ---------------------------------------------------------------------- */

static int is_ulid(const char *s)
{
    if (strlen(s) != 26)
        return 0;
    for (; *s; s++)
        if (!strchr("0123456789ABCDEFGHJKMNPQRSTVWXYZ", *s))
            return 0;
    return 1;
}

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = fs_malloc(n);
    if (s)
        snprintf(s, n, "%s/%s", a, b);
    return s;
}

/* rm -r path (files and directories it made; no symlinks are followed) */
static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char *c = join(path, e->d_name);
            if (c)
                remove_tree(c);
            fs_free(c);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* A staging directory fleetsim-PID.tmp-for-creation whose process is gone. */
static int stale_stage(const char *name)
{
    long pid;
    char rest[64];
    if (sscanf(name, "fleetsim-%ld%63s", &pid, rest) != 2 || strcmp(rest, STAGE_SUFFIX) != 0 ||
        pid <= 0)
        return 0;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static int check_dir(const char *dir, fs_error_t *err)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return errno == ENOENT ? 0 : fs_error_set(err, FS_EUSAGE, "%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return fs_error_set(err, FS_EUSAGE, "%s: not a directory (--tsdb writes block "
                            "directories into a directory)", dir);
    DIR *d = opendir(dir);
    if (!d)
        return fs_error_set(err, FS_EUSAGE, "%s: %s", dir, strerror(errno));
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        const char *n = e->d_name;
        size_t len = strlen(n);
        if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
            continue;
        /* Prometheus' own: blocks, its head, lock and query log, and staging directories */
        if (strcmp(n, "wal") == 0 || strcmp(n, "chunks_head") == 0 || strcmp(n, "lock") == 0 ||
            strcmp(n, "queries.active") == 0 || strcmp(n, "wbl") == 0)
            continue;
        if (len > strlen(STAGE_SUFFIX) && strcmp(n + len - strlen(STAGE_SUFFIX), STAGE_SUFFIX) == 0) {
            if (stale_stage(n)) {
                char *p = join(dir, n);
                if (p)
                    remove_tree(p);
                fs_free(p);
            }
            continue;
        }
        if (is_ulid(n)) {
            char *p = join(dir, n), *m = p ? join(p, "meta.json") : NULL;
            int ok = m && access(m, F_OK) == 0;
            fs_free(p);
            fs_free(m);
            if (ok)
                continue;
        }
        rc = fs_error_set(err, FS_EUSAGE, "%s: holds other data than Prometheus blocks ('%s'); "
                          "--tsdb needs a new or empty directory, or a Prometheus data directory",
                          dir, n);
    }
    closedir(d);
    return rc;
}

/* ---- the writer ----------------------------------------------------------------------- */

typedef struct chunk {
    int64_t mint;
    uint64_t off;       /* its record (len, encoding, data, CRC) in the spool */
    uint32_t dur;       /* maxt - mint, ms */
    uint32_t win;       /* block window: mint / range */
    uint32_t len;       /* record bytes */
    uint32_t n;         /* samples */
} chunk_t;

typedef struct series {
    uint64_t lab;       /* its (name, value) string ids in labs[lab ..] (sorted by name) */
    uint64_t first;     /* its chunks: chunks[first .. first + nc) */
    uint32_t nl, nc;
} series_t;

struct fs_tsdb {
    char *dir, *stage, *spool_path, *wal;
    int made_dir, made_wal;
    int64_t range;
    FILE *spool;
    uint64_t spool_off;
    /* interned strings: arena + hash */
    char *arena;
    size_t n_arena, cap_arena;
    uint64_t *str_off;      /* id -> offset in arena */
    size_t n_str, cap_str;
    uint32_t *hash;         /* open addressing: id + 1, 0 empty */
    size_t hash_cap;
    uint32_t *labs;
    size_t n_labs, cap_labs;
    series_t *series;
    size_t n_series, cap_series;
    chunk_t *chunks;
    size_t n_chunks, cap_chunks;
    uint8_t *buf;           /* scratch for a chunk record */
    size_t cap_buf;
    uint8_t *rbuf;          /* a window of the spool read back: [roff, roff + rlen) */
    uint64_t roff;
    size_t rlen;
    uint64_t samples;
    const volatile sig_atomic_t *interrupt;
};

void fs_tsdb_set_interrupt(fs_tsdb_t *w, const volatile sig_atomic_t *flag)
{
    w->interrupt = flag;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static int intern(fs_tsdb_t *w, const char *s, uint32_t *id)
{
    if (w->n_str * 2 >= w->hash_cap) {     /* grow and rehash */
        size_t nc = w->hash_cap ? w->hash_cap * 2 : 1024;
        uint32_t *h = fs_calloc(nc, sizeof *h);
        if (!h)
            return FS_ENOMEM;
        for (size_t i = 0; i < w->n_str; i++) {
            size_t k = hash_str(w->arena + w->str_off[i]) & (nc - 1);
            while (h[k])
                k = (k + 1) & (nc - 1);
            h[k] = (uint32_t)i + 1;
        }
        fs_free(w->hash);
        w->hash = h;
        w->hash_cap = nc;
    }
    size_t k = hash_str(s) & (w->hash_cap - 1);
    while (w->hash[k]) {
        uint32_t i = w->hash[k] - 1;
        if (strcmp(w->arena + w->str_off[i], s) == 0) {
            *id = i;
            return 0;
        }
        k = (k + 1) & (w->hash_cap - 1);
    }
    size_t len = strlen(s) + 1;
    if (w->n_str >= UINT32_MAX - 1 ||
        fs_grow((void **)&w->arena, &w->cap_arena, w->n_arena + len, 1) ||
        fs_grow((void **)&w->str_off, &w->cap_str, w->n_str + 1, sizeof *w->str_off))
        return FS_ENOMEM;
    memcpy(w->arena + w->n_arena, s, len);
    w->str_off[w->n_str] = w->n_arena;
    w->n_arena += len;
    *id = (uint32_t)w->n_str;
    w->hash[k] = (uint32_t)w->n_str + 1;
    w->n_str++;
    return 0;
}

uint64_t fs_tsdb_spooled(const fs_tsdb_t *w)
{
    return w->spool_off;
}

static void writer_free(fs_tsdb_t *w)
{
    if (w->spool)
        fclose(w->spool);
    fs_free(w->dir);
    fs_free(w->stage);
    fs_free(w->spool_path);
    fs_free(w->wal);
    fs_free(w->arena);
    fs_free(w->str_off);
    fs_free(w->hash);
    fs_free(w->labs);
    fs_free(w->series);
    fs_free(w->chunks);
    fs_free(w->buf);
    fs_free(w->rbuf);
    fs_free(w);
}

void fs_tsdb_abort(fs_tsdb_t *w)
{
    if (!w)
        return;
    if (w->spool) {
        fclose(w->spool);
        w->spool = NULL;
    }
    if (w->stage)
        remove_tree(w->stage);
    if (w->made_wal)
        rmdir(w->wal);
    if (w->made_dir)
        rmdir(w->dir);
    writer_free(w);
}

int fs_tsdb_open(fs_tsdb_t **out, const char *dir, int64_t range_ms, fs_error_t *err)
{
    *out = NULL;
    if (range_ms < FS_TSDB_RANGE_2H || range_ms % FS_TSDB_RANGE_2H)
        return fs_error_set(err, FS_EINVAL, "tsdb: the block range must be a multiple of 2 h");
    int rc = check_dir(dir, err);
    if (rc)
        return rc;
    fs_tsdb_t *w = fs_calloc(1, sizeof *w);
    if (!w)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", dir);
    w->range = range_ms;
    char name[64];
    snprintf(name, sizeof name, "fleetsim-%ld" STAGE_SUFFIX, (long)getpid());
    if (!(w->dir = join(dir, "")) || !(w->stage = join(dir, name)) ||
        !(w->spool_path = join(w->stage, "spool")) || !(w->wal = join(dir, "wal"))) {
        writer_free(w);
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", dir);
    }
    w->dir[strlen(w->dir) - 1] = '\0';  /* join added a '/' */
    if (mkdir(dir, 0777) == 0)
        w->made_dir = 1;
    else if (errno != EEXIST) {
        rc = fs_error_set(err, FS_EUSAGE, "%s: %s", dir, strerror(errno));
        writer_free(w);
        return rc;
    }
    /* an empty write-ahead log, as Prometheus keeps one (promtool tsdb dump opens it) */
    if (mkdir(w->wal, 0777) == 0)
        w->made_wal = 1;
    if (mkdir(w->stage, 0777) != 0 || !(w->spool = fopen(w->spool_path, "w+b"))) {
        int e = errno;
        rc = fs_error_set(err, fs_tsdb_io_code(e), "%s: %s", w->stage, strerror(e));
        fs_tsdb_abort(w);
        return rc;
    }
    *out = w;
    return 0;
}

/* One chunk's record (len, encoding, data, CRC) to the spool. */
static int spool_chunk(fs_tsdb_t *w, const int64_t *t, const double *v, size_t n, fs_error_t *err)
{
    size_t bound = fs_tsdb_xor_bound(n) + 16;
    if (fs_grow((void **)&w->buf, &w->cap_buf, bound * 2, 1) ||
        fs_grow((void **)&w->chunks, &w->cap_chunks, w->n_chunks + 1, sizeof *w->chunks))
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", w->dir);
    uint8_t *data = w->buf + bound;
    data[0] = ENC_XOR;
    size_t dl = fs_tsdb_xor_encode(t, v, n, data + 1, bound - 1);
    if (!dl)
        return fs_error_set(err, FS_EINTERNAL, "tsdb: a chunk did not fit its bound");
    size_t hl = put_uvarint(w->buf, dl);
    memcpy(w->buf + hl, data, dl + 1);
    put_be32(w->buf + hl + 1 + dl, fs_tsdb_crc32c(0, data, dl + 1));
    size_t rl = hl + 1 + dl + 4;
    if (fwrite(w->buf, 1, rl, w->spool) != rl)
        return fs_error_set(err, fs_tsdb_io_code(errno), "%s: %s", w->spool_path,
                            strerror(errno));
    w->chunks[w->n_chunks++] = (chunk_t){.mint = t[0], .off = w->spool_off,
                                         .dur = (uint32_t)(t[n - 1] - t[0]),
                                         .win = (uint32_t)(t[0] / w->range), .len = (uint32_t)rl,
                                         .n = (uint32_t)n};
    w->spool_off += rl;
    return 0;
}

int fs_tsdb_add(fs_tsdb_t *w, const fs_tsdb_label_t *lab, size_t nl, const int64_t *t,
                const double *v, size_t n, fs_error_t *err)
{
    if (n == 0)
        return 0;   /* a series without samples is not written */
    if (nl == 0 || nl > 64)
        return fs_error_set(err, FS_EINVAL, "tsdb: a series needs 1 to 64 labels");
    /* labels sorted by name (insertion sort: a series has a dozen) */
    const fs_tsdb_label_t *s[64];
    for (size_t i = 0; i < nl; i++) {
        size_t j = i;
        if (!lab[i].name[0] || !lab[i].value[0])
            return fs_error_set(err, FS_EINVAL, "tsdb: an empty label name or value ('%s')",
                                lab[i].name);
        while (j > 0 && strcmp(s[j - 1]->name, lab[i].name) > 0) {
            s[j] = s[j - 1];
            j--;
        }
        if (j > 0 && strcmp(s[j - 1]->name, lab[i].name) == 0)
            return fs_error_set(err, FS_EINVAL, "tsdb: label '%s' given twice", lab[i].name);
        s[j] = &lab[i];
    }
    for (size_t i = 0; i < n; i++)
        if (t[i] < 0 || (i && t[i] <= t[i - 1]))
            return fs_error_set(err, FS_EINVAL, "tsdb: timestamps must be >= 0 and increase");
    if (fs_grow((void **)&w->labs, &w->cap_labs, w->n_labs + 2 * nl, sizeof *w->labs) ||
        fs_grow((void **)&w->series, &w->cap_series, w->n_series + 1, sizeof *w->series))
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", w->dir);
    series_t se = {.lab = w->n_labs, .first = w->n_chunks, .nl = (uint32_t)nl};
    for (size_t i = 0; i < nl; i++)
        if (intern(w, s[i]->name, &w->labs[w->n_labs + 2 * i]) ||
            intern(w, s[i]->value, &w->labs[w->n_labs + 2 * i + 1]))
            return fs_error_set(err, FS_ENOMEM, "%s: out of memory", w->dir);
    w->n_labs += 2 * nl;
    /* chunks: cut at block windows and every FS_TSDB_CHUNK_SAMPLES samples */
    for (size_t a = 0; a < n;) {
        int64_t win = t[a] / w->range;
        size_t b = a + 1;
        while (b < n && b - a < FS_TSDB_CHUNK_SAMPLES && t[b] / w->range == win)
            b++;
        int rc = spool_chunk(w, t + a, v + a, b - a, err);
        if (rc)
            return rc;
        a = b;
    }
    se.nc = (uint32_t)(w->n_chunks - se.first);
    w->series[w->n_series++] = se;
    w->samples += n;
    return 0;
}

/* ---- writing blocks ------------------------------------------------------------------- */

/* An output file with its position and a growable section buffer. */
typedef struct ofile {
    FILE *f;
    uint64_t pos;
    int bad;
} ofile_t;

static void o_write(ofile_t *o, const void *p, size_t n)
{
    if (!o->bad && fwrite(p, 1, n, o->f) != n)
        o->bad = 1;
    o->pos += n;
}

static void o_pad(ofile_t *o, unsigned align)
{
    static const uint8_t zero[16];
    if (o->pos % align)
        o_write(o, zero, align - o->pos % align);
}

typedef struct buf { uint8_t *p; size_t n, cap; int oom; } buf_t;

static void b_put(buf_t *b, const void *p, size_t n)
{
    if (b->oom || fs_grow((void **)&b->p, &b->cap, b->n + n, 1)) {
        b->oom = 1;
        return;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void b_uvarint(buf_t *b, uint64_t x)
{
    uint8_t t[10];
    b_put(b, t, put_uvarint(t, x));
}

static void b_varint(buf_t *b, int64_t x)
{
    uint8_t t[10];
    b_put(b, t, put_varint(t, x));
}

static void b_be32(buf_t *b, uint32_t x)
{
    uint8_t t[4];
    put_be32(t, x);
    b_put(b, t, 4);
}

static void b_str(buf_t *b, const char *s)
{
    size_t n = strlen(s);
    b_uvarint(b, n);
    b_put(b, s, n);
}

/* A section with a 4-byte length: len, the buffer, CRC32C of the buffer. */
static void o_section4(ofile_t *o, const buf_t *b)
{
    uint8_t t[4];
    put_be32(t, (uint32_t)b->n);
    o_write(o, t, 4);
    o_write(o, b->p, b->n);
    put_be32(t, fs_tsdb_crc32c(0, b->p, b->n));
    o_write(o, t, 4);
}

/* (name, value) symbol refs of a series, for sorting series by label set */
typedef struct sref { const uint32_t *lab; uint32_t nl, id; } sref_t;

static int cmp_sref(const void *a, const void *b)
{
    const sref_t *x = a, *y = b;
    uint32_t n = x->nl < y->nl ? x->nl : y->nl;
    for (uint32_t i = 0; i < 2 * n; i++)
        if (x->lab[i] != y->lab[i])
            return x->lab[i] < y->lab[i] ? -1 : 1;
    return x->nl < y->nl ? -1 : x->nl > y->nl;
}

typedef struct sym { const char *s; uint32_t id; } sym_t;

static int cmp_sym(const void *a, const void *b)
{
    return strcmp(((const sym_t *)a)->s, ((const sym_t *)b)->s);
}

typedef struct post { uint32_t name, value, ref; } post_t;

static int cmp_post(const void *a, const void *b)
{
    const post_t *x = a, *y = b;
    if (x->name != y->name)
        return x->name < y->name ? -1 : 1;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return x->ref < y->ref ? -1 : x->ref > y->ref;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct block_ctx {
    fs_tsdb_t *w;
    const sref_t *order;
    const char *const *sym;     /* symbol index -> string */
    size_t n_sym;
    uint64_t *cur;              /* per series: its next chunk */
    fs_error_t *err;
} block_ctx_t;

int fs_tsdb_io_code(int e)
{
    return e == ENOSPC || e == EDQUOT ? FS_EUSAGE : FS_EIO;
}

static int io_fail(fs_tsdb_t *w, fs_error_t *err, const char *path)
{
    int e = errno;
    return fs_error_set(err, fs_tsdb_io_code(e), "%s: %s", path ? path : w->stage,
                        e ? strerror(e) : "write error");
}

/* One block: the window win's chunks of every series, in label order. */
static int write_block(block_ctx_t *bc, uint32_t win, char ulid[27], fs_tsdb_stats_t *st)
{
    fs_tsdb_t *w = bc->w;
    fs_error_t *err = bc->err;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t now_ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
    uint8_t ent[10];
    uint64_t h = hash_str(w->dir) ^ ((uint64_t)ts.tv_nsec << 20) ^ ((uint64_t)getpid() << 40) ^
                 ((uint64_t)win * 0x9E3779B97F4A7C15ull);
    for (int i = 0; i < 10; i++) {
        h = h * 6364136223846793005ull + 1442695040888963407ull;
        ent[i] = (uint8_t)(h >> 56);
    }
    fs_tsdb_ulid(now_ms, ent, ulid);
    char *bdir = join(w->stage, ulid), *cdir = bdir ? join(bdir, "chunks") : NULL;
    char *ipath = bdir ? join(bdir, "index") : NULL;
    char seg[32];
    char *spath = NULL;
    int rc = 0;
    if (!bdir || !cdir || !ipath)
        rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", w->dir);
    if (!rc && (mkdir(bdir, 0777) != 0 || mkdir(cdir, 0777) != 0))
        rc = io_fail(w, err, bdir);
    ofile_t ix = {0}, cf = {0};
    uint32_t seq = 0;
    buf_t b = {0};
    post_t *posts = NULL;
    size_t n_posts = 0, cap_posts = 0;
    uint32_t *refs = NULL;
    size_t n_refs = 0, cap_refs = 0;
    int64_t mint = INT64_MAX, maxt = INT64_MIN;
    uint64_t nsamples = 0, nchunks = 0;
    if (!rc && !(ix.f = fopen(ipath, "wb")))
        rc = io_fail(w, err, ipath);
    if (!rc) {
        uint8_t hdr[5];
        put_be32(hdr, 0xBAAAD700u);
        hdr[4] = 2;
        o_write(&ix, hdr, 5);
        b.n = 0;
        b_be32(&b, (uint32_t)bc->n_sym);
        for (size_t i = 0; i < bc->n_sym; i++)
            b_str(&b, bc->sym[i]);
        o_section4(&ix, &b);
    }
    uint64_t toc_series = 0;
    for (size_t k = 0; !rc && k < w->n_series; k++) {
        if ((k & 1023) == 0 && w->interrupt && *w->interrupt) {
            rc = fs_error_set(err, FS_EINTR, "interrupted by %s; nothing was kept",
                              *w->interrupt == SIGINT ? "SIGINT" : "SIGTERM");
            break;
        }
        uint32_t sid = bc->order[k].id;
        series_t *se = &w->series[sid];
        uint64_t c0 = bc->cur[sid], c1 = c0;
        while (c1 < se->first + se->nc && w->chunks[c1].win == win)
            c1++;
        if (c1 == c0)
            continue;
        bc->cur[sid] = c1;
        b.n = 0;
        b_uvarint(&b, se->nl);
        for (uint32_t i = 0; i < 2 * se->nl; i++)
            b_uvarint(&b, bc->order[k].lab[i]);
        b_uvarint(&b, c1 - c0);
        int64_t prev_maxt = 0;
        uint64_t prev_ref = 0;
        for (uint64_t c = c0; c < c1 && !rc; c++) {
            const chunk_t *ch = &w->chunks[c];
            if (fs_grow((void **)&w->buf, &w->cap_buf, ch->len, 1)) {
                rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", w->dir);
                break;
            }
            if (!cf.f || cf.pos + ch->len > SEGMENT_MAX) {
                if (cf.f && fclose(cf.f) != 0)
                    cf.bad = 1;
                cf.f = NULL;
                if (cf.bad) {
                    rc = io_fail(w, err, spath);
                    break;
                }
                snprintf(seg, sizeof seg, "%06u", (unsigned)++seq);
                fs_free(spath);
                if (!(spath = join(cdir, seg)) || !(cf.f = fopen(spath, "wb"))) {
                    rc = io_fail(w, err, spath ? spath : cdir);
                    break;
                }
                cf.pos = 0;
                uint8_t hdr[8] = {0};
                put_be32(hdr, 0x85BD40DDu);
                hdr[4] = 1;
                o_write(&cf, hdr, 8);
            }
            /* through a 4 MiB window: a series' chunks, and those of the next
             * series of its GPU, were spooled near each other */
            if (ch->off < w->roff || ch->off + ch->len > w->roff + w->rlen) {
                size_t want = ch->len > SPOOL_WINDOW ? ch->len : SPOOL_WINDOW;
                if (!w->rbuf && !(w->rbuf = fs_malloc(SPOOL_WINDOW))) {
                    rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", w->dir);
                    break;
                }
                if (want > SPOOL_WINDOW)
                    want = SPOOL_WINDOW;    /* a record is far smaller */
                ssize_t got = pread(fileno(w->spool), w->rbuf, want, (off_t)ch->off);
                if (got < (ssize_t)ch->len) {
                    rc = io_fail(w, err, w->spool_path);
                    break;
                }
                w->roff = ch->off;
                w->rlen = (size_t)got;
            }
            memcpy(w->buf, w->rbuf + (ch->off - w->roff), ch->len);
            uint64_t ref = (uint64_t)(seq - 1) << 32 | cf.pos;
            o_write(&cf, w->buf, ch->len);
            int64_t cmaxt = ch->mint + (int64_t)ch->dur;
            if (c == c0) {
                b_varint(&b, ch->mint);
                b_uvarint(&b, ch->dur);
                b_uvarint(&b, ref);
            } else {
                b_uvarint(&b, (uint64_t)(ch->mint - prev_maxt));
                b_uvarint(&b, ch->dur);
                b_varint(&b, (int64_t)(ref - prev_ref));
            }
            prev_maxt = cmaxt;
            prev_ref = ref;
            mint = ch->mint < mint ? ch->mint : mint;
            maxt = cmaxt > maxt ? cmaxt : maxt;
            nsamples += ch->n;
            nchunks++;
        }
        if (rc)
            break;
        o_pad(&ix, 16);
        if (!toc_series)
            toc_series = ix.pos;
        if (ix.pos / 16 > UINT32_MAX) {
            rc = fs_error_set(err, FS_ELIMIT, "%s: an index over 64 GiB", ipath);
            break;
        }
        uint32_t ref = (uint32_t)(ix.pos / 16);
        uint8_t t[10];
        o_write(&ix, t, put_uvarint(t, b.n));
        o_write(&ix, b.p, b.n);
        put_be32(t, fs_tsdb_crc32c(0, b.p, b.n));
        o_write(&ix, t, 4);
        if (fs_grow((void **)&posts, &cap_posts, n_posts + se->nl, sizeof *posts) ||
            fs_grow((void **)&refs, &cap_refs, n_refs + 1, sizeof *refs)) {
            rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", w->dir);
            break;
        }
        refs[n_refs++] = ref;
        for (uint32_t i = 0; i < se->nl; i++)
            posts[n_posts++] = (post_t){bc->order[k].lab[2 * i], bc->order[k].lab[2 * i + 1], ref};
    }
    if (cf.f && fclose(cf.f) != 0)
        cf.bad = 1;
    if (!rc && cf.bad)
        rc = io_fail(w, err, spath);
    /* label indices: per name, its values */
    uint64_t toc_li = 0, toc_lot = 0, toc_post = 0, toc_pot = 0;
    if (!rc) {
        qsort(posts, n_posts, sizeof *posts, cmp_post);
        buf_t lot = {0};
        uint32_t n_names = 0;
        b.n = 0;
        for (size_t i = 0; i < n_posts;) {
            size_t j = i;
            while (j < n_posts && posts[j].name == posts[i].name)
                j++;
            o_pad(&ix, 4);
            if (!toc_li)
                toc_li = ix.pos;
            uint64_t off = ix.pos;
            b.n = 0;
            b_be32(&b, 1);
            size_t at = b.n;
            b_be32(&b, 0);
            uint32_t nv = 0;
            for (size_t k = i; k < j; k++)
                if (k == i || posts[k].value != posts[k - 1].value) {
                    b_be32(&b, posts[k].value);
                    nv++;
                }
            if (!b.oom)
                put_be32(b.p + at, nv);
            o_section4(&ix, &b);
            uint8_t one = 1;
            b_put(&lot, &one, 1);
            b_str(&lot, bc->sym[posts[i].name]);
            b_uvarint(&lot, off);
            n_names++;
            i = j;
        }
        o_pad(&ix, 4);
        toc_lot = ix.pos;
        b.n = 0;
        b_be32(&b, n_names);
        b_put(&b, lot.p, lot.n);
        if (lot.oom)
            b.oom = 1;
        o_section4(&ix, &b);
        fs_free(lot.p);
        /* postings: all series first, then per (name, value) */
        buf_t pot = {0};
        uint32_t n_pot = 0;
        o_pad(&ix, 4);
        toc_post = ix.pos;
        b.n = 0;
        b_be32(&b, (uint32_t)n_refs);
        qsort(refs, n_refs, sizeof *refs, cmp_u32);
        for (size_t i = 0; i < n_refs; i++)
            b_be32(&b, refs[i]);
        uint8_t two = 2;
        b_put(&pot, &two, 1);
        b_str(&pot, "");
        b_str(&pot, "");
        b_uvarint(&pot, ix.pos);
        n_pot++;
        o_section4(&ix, &b);
        for (size_t i = 0; i < n_posts;) {
            size_t j = i;
            while (j < n_posts && posts[j].name == posts[i].name && posts[j].value == posts[i].value)
                j++;
            o_pad(&ix, 4);
            b_put(&pot, &two, 1);
            b_str(&pot, bc->sym[posts[i].name]);
            b_str(&pot, bc->sym[posts[i].value]);
            b_uvarint(&pot, ix.pos);
            n_pot++;
            b.n = 0;
            b_be32(&b, (uint32_t)(j - i));
            for (size_t k = i; k < j; k++)
                b_be32(&b, posts[k].ref);
            o_section4(&ix, &b);
            i = j;
        }
        o_pad(&ix, 4);
        toc_pot = ix.pos;
        b.n = 0;
        b_be32(&b, n_pot);
        b_put(&b, pot.p, pot.n);
        if (pot.oom)
            b.oom = 1;
        o_section4(&ix, &b);
        fs_free(pot.p);
        uint8_t toc[52];
        put_be64(toc, 5);
        put_be64(toc + 8, toc_series);
        put_be64(toc + 16, toc_li);
        put_be64(toc + 24, toc_lot);
        put_be64(toc + 32, toc_post);
        put_be64(toc + 40, toc_pot);
        put_be32(toc + 48, fs_tsdb_crc32c(0, toc, 48));
        o_write(&ix, toc, sizeof toc);
        if (b.oom)
            rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", w->dir);
    }
    if (ix.f && fclose(ix.f) != 0)
        ix.bad = 1;
    if (!rc && ix.bad)
        rc = io_fail(w, err, ipath);
    /* tombstones: none */
    if (!rc) {
        char *tp = join(bdir, "tombstones");
        FILE *f = tp ? fopen(tp, "wb") : NULL;
        uint8_t tb[9];
        put_be32(tb, 0x0130BA30u);
        tb[4] = 1;
        put_be32(tb + 5, fs_tsdb_crc32c(0, NULL, 0));
        if (!f || fwrite(tb, 1, 9, f) != 9)
            rc = io_fail(w, err, tp);
        if (f && fclose(f) != 0 && !rc)
            rc = io_fail(w, err, tp);
        fs_free(tp);
    }
    if (!rc) {
        char *mp = join(bdir, "meta.json");
        FILE *f = mp ? fopen(mp, "w") : NULL;
        if (!f)
            rc = io_fail(w, err, mp);
        else {
            fprintf(f, "{\n\t\"ulid\": \"%s\",\n\t\"minTime\": %lld,\n\t\"maxTime\": %lld,\n"
                    "\t\"stats\": {\n\t\t\"numSamples\": %llu,\n\t\t\"numSeries\": %llu,\n"
                    "\t\t\"numChunks\": %llu\n\t},\n\t\"compaction\": {\n\t\t\"level\": 1,\n"
                    "\t\t\"sources\": [\n\t\t\t\"%s\"\n\t\t]\n\t},\n\t\"version\": 1\n}\n",
                    ulid, (long long)mint, (long long)maxt + 1, (unsigned long long)nsamples,
                    (unsigned long long)n_refs, (unsigned long long)nchunks, ulid);
            if (ferror(f) | (fclose(f) != 0))
                rc = io_fail(w, err, mp);
        }
        fs_free(mp);
    }
    if (!rc) {
        st->blocks++;
        st->series += n_refs;
        st->samples += nsamples;
        st->chunks += nchunks;
    }
    fs_free(b.p);
    fs_free(posts);
    fs_free(refs);
    fs_free(spath);
    fs_free(bdir);
    fs_free(cdir);
    fs_free(ipath);
    return rc;
}

/* Bytes of every regular file under path. */
static uint64_t tree_bytes(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    if (!S_ISDIR(st.st_mode))
        return S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
    uint64_t n = 0;
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *c = join(path, e->d_name);
        if (c)
            n += tree_bytes(c);
        fs_free(c);
    }
    if (d)
        closedir(d);
    return n;
}

int fs_tsdb_close(fs_tsdb_t *w, fs_tsdb_stats_t *st, fs_error_t *err)
{
    fs_tsdb_stats_t s = {0};
    int rc = 0;
    if (fflush(w->spool) != 0)
        rc = io_fail(w, err, w->spool_path);
    /* symbols: sorted strings; labels rewritten as symbol indices */
    sym_t *sy = fs_malloc((w->n_str + 1) * sizeof *sy);
    uint32_t *rank = fs_malloc((w->n_str + 1) * sizeof *rank);
    const char **sym = fs_malloc((w->n_str + 1) * sizeof *sym);
    sref_t *order = fs_malloc((w->n_series + 1) * sizeof *order);
    uint64_t *cur = fs_malloc((w->n_series + 1) * sizeof *cur);
    uint32_t *wins = fs_malloc((w->n_chunks + 1) * sizeof *wins);
    char (*ulids)[27] = NULL;
    size_t n_win = 0;
    if (!rc && (!sy || !rank || !sym || !order || !cur || !wins))
        rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", w->dir);
    if (!rc) {
        for (size_t i = 0; i < w->n_str; i++)
            sy[i] = (sym_t){w->arena + w->str_off[i], (uint32_t)i};
        qsort(sy, w->n_str, sizeof *sy, cmp_sym);
        for (size_t i = 0; i < w->n_str; i++) {
            rank[sy[i].id] = (uint32_t)i;
            sym[i] = sy[i].s;
        }
        for (size_t i = 0; i < w->n_labs; i++)
            w->labs[i] = rank[w->labs[i]];
        for (size_t i = 0; i < w->n_series; i++) {
            order[i] = (sref_t){w->labs + w->series[i].lab, w->series[i].nl, (uint32_t)i};
            cur[i] = w->series[i].first;
        }
        qsort(order, w->n_series, sizeof *order, cmp_sref);
        for (size_t i = 1; i < w->n_series && !rc; i++)
            if (cmp_sref(&order[i - 1], &order[i]) == 0)
                rc = fs_error_set(err, FS_EINVAL, "tsdb: a series (%s=\"%s\", ...) was added "
                                  "twice", sym[order[i].lab[0]], sym[order[i].lab[1]]);
        for (size_t i = 0; i < w->n_chunks; i++)
            wins[i] = w->chunks[i].win;
        qsort(wins, w->n_chunks, sizeof *wins, cmp_u32);
        for (size_t i = 0; i < w->n_chunks; i++)
            if (i == 0 || wins[i] != wins[i - 1])
                wins[n_win++] = wins[i];
        if (!(ulids = fs_calloc(n_win + 1, sizeof *ulids)))
            rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", w->dir);
    }
    block_ctx_t bc = {w, order, sym, w->n_str, cur, err};
    for (size_t i = 0; i < n_win && !rc; i++)
        rc = write_block(&bc, wins[i], ulids[i], &s);
    if (!rc && w->spool) {
        fclose(w->spool);
        w->spool = NULL;
        unlink(w->spool_path);
    }
    /* into place */
    size_t moved = 0;
    for (; !rc && moved < n_win; moved++) {
        char *from = join(w->stage, ulids[moved]), *to = join(w->dir, ulids[moved]);
        if (!from || !to || rename(from, to) != 0)
            rc = io_fail(w, err, to);
        if (!rc)
            s.bytes += tree_bytes(to);
        fs_free(from);
        fs_free(to);
    }
    if (rc)     /* undo the blocks already moved */
        for (size_t i = 0; i + 1 < moved; i++) {
            char *to = join(w->dir, ulids[i]);
            if (to)
                remove_tree(to);
            fs_free(to);
        }
    fs_free(sy);
    fs_free(rank);
    fs_free(sym);
    fs_free(order);
    fs_free(cur);
    fs_free(wins);
    fs_free(ulids);
    if (rc) {
        fs_tsdb_abort(w);
        return rc;
    }
    remove_tree(w->stage);
    if (st)
        *st = s;
    writer_free(w);
    return 0;
}
