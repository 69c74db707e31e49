#include "fs_csv.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "../sim/fs_alloc.h"
#include "../sim/fs_io.h"

/* Bytes asked of one read.  What was inflated in a call that ends in
 * corrupt data is dropped (as gzread does), so smaller calls keep the reported line close to
 * the damage; 256 KiB is still large enough to cost nothing. */
#define CSV_READ_CHUNK ((size_t)256 * 1024)

static int is_blank(char ch) { return ch == ' ' || ch == '\t'; }

/* ---- the byte stream: plain or gzip ------------------------------------------
 *
 * Why not zlib's gzread: after a complete gzip member it takes any bytes
 * that do not start another member for "trailing garbage" and ends the
 * file there, so a damaged second member read as a shorter trace with no
 * error.  Here inflate (zlib, gzip wrapper) runs member after member, and
 * what follows a member must be another member or nothing. */

#define ZIN_BUF ((size_t)64 * 1024)

struct fs_zin {
    FILE *f;
    z_stream zs;
    int gzip;               /* -1 undecided, 0 plain, 1 gzip */
    int zinit;              /* inflateInit2 done */
    int in_member;          /* inside a gzip member (its end not seen) */
    int done;               /* the end of the input was reached cleanly */
    int feof;               /* the file has no more bytes */
    uint64_t members;       /* complete members */
    unsigned char in[];     /* ZIN_BUF bytes of input (one block with the state) */
};

/* Reads more input after the unread bytes; 0, or -1 on a read error. */
static int zin_fill(fs_zin_t *z)
{
    if (z->feof)
        return 0;
    if (z->zs.avail_in && z->zs.next_in != z->in)
        memmove(z->in, z->zs.next_in, z->zs.avail_in);
    z->zs.next_in = z->in;
    long k = fs_io_fread(z->in + z->zs.avail_in, ZIN_BUF - z->zs.avail_in, z->f);
    if (k < 0)
        return -1;
    if ((size_t)k < ZIN_BUF - z->zs.avail_in)
        z->feof = 1;
    z->zs.avail_in += (uInt)k;
    return 0;
}

__attribute__((format(printf, 3, 4)))
static void zin_error(fs_csv_t *c, int code, const char *fmt, ...)
{
    if (c->pending)
        return;
    c->pending = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->pending_what, sizeof c->pending_what, fmt, ap);
    va_end(ap);
}

long fs_csv_read(fs_csv_t *c, void *buf, size_t n)
{
    fs_zin_t *z = c->gz;
    if (!z || c->pending || z->done || n == 0)
        return c->pending ? -1 : 0;
    if (n > UINT_MAX)
        n = UINT_MAX;
    if (z->gzip < 0) {      /* the magic bytes decide, as gzopen does */
        if (zin_fill(z) || (z->zs.avail_in < 2 && !z->feof && zin_fill(z)))
            goto read_error;
        z->gzip = z->zs.avail_in >= 2 && z->in[0] == 0x1f && z->in[1] == 0x8b;
        if (z->gzip) {
            if (inflateInit2(&z->zs, 15 + 16) != Z_OK) {
                zin_error(c, FS_ENOMEM, "%s", "out of memory in zlib");
                return -1;
            }
            z->zinit = 1;
        }
    }
    unsigned char *out = buf;
    if (!z->gzip) {         /* buffered bytes first, then straight from the file */
        size_t k = z->zs.avail_in < n ? z->zs.avail_in : n;
        memcpy(out, z->zs.next_in, k);
        z->zs.next_in += k;
        z->zs.avail_in -= (uInt)k;
        if (k < n && !z->feof) {
            long m = fs_io_fread(out + k, n - k, z->f);
            if (m < 0) {
                if (k)
                    z->feof = 1;    /* keep the bytes; the error comes next */
                goto read_error;
            }
            if ((size_t)m < n - k)
                z->feof = 1;
            k += (size_t)m;
        }
        if (k == 0 && z->feof)
            z->done = 1;
        return (long)k;
    }
    z->zs.next_out = out;
    z->zs.avail_out = (uInt)n;
    while (z->zs.avail_out > 0) {
        if (z->zs.avail_in == 0) {
            if (zin_fill(z))
                goto read_error;
            if (z->zs.avail_in == 0) {          /* the end of the file */
                if (z->in_member)
                    zin_error(c, FS_EINVAL, "truncated gzip data (%s)", "unexpected end of file");
                else
                    z->done = 1;
                break;
            }
        }
        if (!z->in_member) {    /* between members: another one, or nothing */
            if (z->zs.avail_in < 2 && zin_fill(z))
                goto read_error;
            const unsigned char *m = z->zs.next_in;
            if (z->zs.avail_in < 2 || m[0] != 0x1f || m[1] != 0x8b) {
                if (z->zs.avail_in < 2 && m[0] == 0x1f) {
                    zin_error(c, FS_EINVAL, "truncated gzip data (%s)", "unexpected end of file");
                } else {
                    char what[96];
                    snprintf(what, sizeof what, "bytes after gzip member %llu are not a gzip member",
                             (unsigned long long)z->members);
                    zin_error(c, FS_EINVAL, "corrupt gzip data (%s)", what);
                }
                break;
            }
            if (z->members && inflateReset(&z->zs) != Z_OK) {
                zin_error(c, FS_EINVAL, "corrupt gzip data (%s)", "inflateReset failed");
                break;
            }
            z->in_member = 1;
        }
        int ret = inflate(&z->zs, Z_NO_FLUSH);
        if (ret == Z_STREAM_END) {
            z->in_member = 0;
            z->members++;
        } else if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT) {
            zin_error(c, FS_EINVAL, "corrupt gzip data (%s)",
                      z->zs.msg ? z->zs.msg : "invalid data");
            return -1;  /* as gzread: the output of the failing read is dropped */
        } else if (ret == Z_MEM_ERROR) {
            zin_error(c, FS_ENOMEM, "%s", "out of memory in zlib");
            return -1;
        } else if (ret != Z_OK && ret != Z_BUF_ERROR) {
            zin_error(c, FS_EIO, "read error: zlib error %s", ret == Z_STREAM_ERROR ? "-2" : "?");
            return -1;
        }
        if (ret == Z_BUF_ERROR && z->zs.avail_in != 0)
            break;      /* no progress with input and room: cannot happen; never loop */
    }
    return (long)(n - z->zs.avail_out);
read_error:
    zin_error(c, FS_EIO, "read error: %s", strerror(errno));
    return -1;
}

static int zin_open(fs_csv_t *c, const char *path)
{
    fs_zin_t *z = fs_calloc(1, sizeof *z + ZIN_BUF);
    if (!z) {
        errno = 0;
        return -1;
    }
    errno = 0;
    z->f = fs_io_fopen(path, "rb");
    if (!z->f) {
        int e = errno;
        fs_free(z);
        errno = e ? e : EIO;
        return -1;
    }
    setvbuf(z->f, NULL, _IONBF, 0);     /* our own buffer is the only one */
    z->gzip = -1;
    z->zs.next_in = z->in;
    c->gz = z;
    return 0;
}

static void zin_close(fs_zin_t *z)
{
    if (!z)
        return;
    if (z->zinit)
        inflateEnd(&z->zs);
    if (z->f)
        fclose(z->f);
    fs_free(z);
}

int fs_csv_open(fs_csv_t *c, const char *path, size_t buf_size, fs_error_t *err)
{
    memset(c, 0, sizeof *c);
    if (buf_size == 0)
        buf_size = FS_CSV_BUF_DEFAULT;
    if (buf_size < FS_CSV_BUF_MIN)
        buf_size = FS_CSV_BUF_MIN;
    c->path = fs_strdup(path);
    c->buf = fs_malloc(buf_size);
    if (!c->path || !c->buf) {
        fs_csv_close(c);
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
    }
    c->cap = buf_size;
    if (zin_open(c, path) != 0) {
        int e = errno;
        fs_csv_close(c);
        if (e == 0)
            return fs_error_set(err, FS_ENOMEM, "%s: out of memory opening the file", path);
        return fs_error_set(err, FS_EIO, "cannot open %s: %s", path, strerror(e));
    }
    return 0;
}

int fs_csv_take(fs_csv_t *c, fs_csv_t *from, const char *path, fs_error_t *err)
{
    if (!from || !from->gz || !from->path || strcmp(from->path, path) != 0)
        return fs_csv_open(c, path, 0, err);
    *c = *from;
    memset(from, 0, sizeof *from);
    return 0;
}

void fs_csv_close(fs_csv_t *c)
{
    zin_close(c->gz);
    fs_free(c->path);
    fs_free(c->buf);
    fs_free(c->fields);
    memset(c, 0, sizeof *c);
}

/* Moves the unread bytes to the front and reads more after them.  One byte
 * is always kept free after the data, for the NUL that ends a last line
 * without '\n'.  A read error ends the input (c->eof) and is kept pending. */
static int refill(fs_csv_t *c, fs_error_t *err)
{
    if (c->pos > 0) {
        memmove(c->buf, c->buf + c->pos, c->len - c->pos);
        c->len -= c->pos;
        c->pos = 0;
    }
    size_t room = c->cap - 1 - c->len;
    if (room == 0)
        return fs_error_set(err, FS_EINVAL, "%s:%llu: line longer than %zu bytes", c->path,
                            (unsigned long long)c->line_no + 1, c->cap - 2);
    if (room > CSV_READ_CHUNK)
        room = CSV_READ_CHUNK;
    long k = fs_csv_read(c, c->buf + c->len, room);
    if (k > 0)
        c->len += (size_t)k;
    if (c->pending || k <= 0)
        c->eof = 1;
    return 0;
}

int fs_csv_prefetch(fs_csv_t *c, fs_error_t *err)
{
    if (c->len != 0 || c->pos != 0 || c->eof)
        return 0;
    int rc = refill(c, err);
    /* a short first read was the whole file (gzread waits for the bytes
     * asked, or the end): one more read says so (c->eof) */
    if (!rc && !c->eof && c->len < CSV_READ_CHUNK && c->len + 1 < c->cap)
        rc = refill(c, err);
    return rc;
}

int fs_csv_next_line(fs_csv_t *c, fs_error_t *err)
{
    size_t scanned = 0;     /* bytes after pos known to hold no '\n' */
    char *line;
    size_t len;
    for (;;) {
        char *start = c->buf + c->pos;
        size_t avail = c->len - c->pos;
        char *nl = avail > scanned ? memchr(start + scanned, '\n', avail - scanned) : NULL;
        if (nl) {
            line = start;
            len = (size_t)(nl - start);
            c->pos += len + 1;
            break;
        }
        if (c->eof) {
            if (c->pending)
                return fs_error_set(err, c->pending, "%s:%llu: %s", c->path,
                                    (unsigned long long)c->line_no + 1, c->pending_what);
            if (avail == 0) {
                c->line = NULL;
                c->line_len = 0;
                c->n_fields = 0;
                return 0;
            }
            line = start;
            len = avail;
            c->pos = c->len;
            break;
        }
        scanned = avail;
        int rc = refill(c, err);
        if (rc)
            return rc;
    }
    c->line_no++;
    if (len && line[len - 1] == '\r')
        len--;
    line[len] = '\0';
    if (c->line_no == 1 && len >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) {
        line += 3;
        len -= 3;
    }
    c->line = line;
    c->line_len = len;
    c->n_fields = 0;
    return 1;
}

static int push_field(fs_csv_t *c, char *s, size_t len, fs_error_t *err)
{
    if (c->n_fields == c->fields_cap &&
        fs_grow((void **)&c->fields, &c->fields_cap, c->n_fields + 1, sizeof *c->fields))
        return fs_error_set(err, FS_ENOMEM, "%s:%llu: out of memory", c->path,
                            (unsigned long long)c->line_no);
    c->fields[c->n_fields].s = s;
    c->fields[c->n_fields].len = len;
    c->n_fields++;
    return 0;
}

int fs_csv_split(fs_csv_t *c, char sep, fs_error_t *err)
{
    char *p = c->line;
    char *end = c->line + c->line_len;
    c->n_fields = 0;
    for (;;) {
        while (p < end && is_blank(*p))
            p++;
        char *fs = p, *fe, *next;
        if (p < end && *p == '"') {
            /* Quoted: unescape in place ("" -> "); the text only shrinks. */
            char *out = p;
            char *q = p + 1;
            for (;;) {
                if (q >= end)
                    return fs_error_set(err, FS_EINVAL,
                                        "%s:%llu: field %zu: unterminated quoted field",
                                        c->path, (unsigned long long)c->line_no,
                                        c->n_fields + 1);
                if (*q == '"') {
                    if (q + 1 < end && q[1] == '"') {
                        *out++ = '"';
                        q += 2;
                        continue;
                    }
                    q++;
                    break;
                }
                *out++ = *q++;
            }
            fe = out;
            while (q < end && is_blank(*q))
                q++;
            if (q < end && *q != sep)
                return fs_error_set(err, FS_EINVAL,
                                    "%s:%llu: field %zu: expected a separator after the "
                                    "closing quote (got '%c')",
                                    c->path, (unsigned long long)c->line_no, c->n_fields + 1,
                                    (unsigned char)*q >= 0x20 && (unsigned char)*q < 0x7f
                                        ? *q : '?');
            next = q < end ? q + 1 : NULL;
        } else {
            size_t rem = end > p ? (size_t)(end - p) : 0;
            char *s = rem ? memchr(p, sep, rem) : NULL;
            fe = s ? s : end;
            while (fe > fs && is_blank(fe[-1]))
                fe--;
            next = s ? s + 1 : NULL;
        }
        *fe = '\0';
        int rc = push_field(c, fs, (size_t)(fe - fs), err);
        if (rc)
            return rc;
        if (!next)
            return 0;
        p = next;
    }
}

int fs_csv_split_blank(fs_csv_t *c, fs_error_t *err)
{
    char *p = c->line;
    char *end = c->line + c->line_len;
    c->n_fields = 0;
    for (;;) {
        while (p < end && is_blank(*p))
            p++;
        if (p >= end)
            return 0;
        char *fs = p;
        while (p < end && !is_blank(*p))
            p++;
        int last = p >= end;
        *p = '\0';
        int rc = push_field(c, fs, (size_t)(p - fs), err);
        if (rc)
            return rc;
        if (last)
            return 0;
        p++;
    }
}
