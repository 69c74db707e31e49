#include "fs_csv.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../sim/fs_alloc.h"
#include "../sim/fs_io.h"

/* zlib's own buffer: large enough that our big reads bypass it (zlib reads
 * or inflates straight into the caller's buffer when asked for at least
 * twice its size). */
#define CSV_GZBUF ((unsigned)(64 * 1024))
/* Bytes asked of one gzread.  zlib drops what it inflated in a call that
 * ends in corrupt data, so smaller calls keep the reported line close to
 * the damage; 256 KiB is still large enough to cost nothing. */
#define CSV_READ_CHUNK ((size_t)256 * 1024)

static int is_blank(char ch) { return ch == ' ' || ch == '\t'; }

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
    errno = 0;
    c->gz = fs_io_gzopen(path, "rb");
    if (!c->gz) {
        int e = errno;
        fs_csv_close(c);
        if (e == 0)
            return fs_error_set(err, FS_ENOMEM, "%s: out of memory opening the file", path);
        return fs_error_set(err, FS_EIO, "cannot open %s: %s", path, strerror(e));
    }
    gzbuffer(c->gz, CSV_GZBUF);
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
    if (c->gz)
        gzclose_r(c->gz);
    fs_free(c->path);
    fs_free(c->buf);
    fs_free(c->fields);
    memset(c, 0, sizeof *c);
}

/* Records zlib's error state after a read as the pending error (reported
 * once the complete lines read before it are consumed); 0 if none. */
static int check_gz(fs_csv_t *c)
{
    int zerr = Z_OK;
    const char *zmsg = gzerror(c->gz, &zerr);
    if (zerr == Z_OK)
        return 0;
    /* zlib prefixes its messages with the path: drop it (we add FILE:LINE). */
    size_t pl = strlen(c->path);
    if (strncmp(zmsg, c->path, pl) == 0 && strncmp(zmsg + pl, ": ", 2) == 0)
        zmsg += pl + 2;
    switch (zerr) {
    case Z_BUF_ERROR:   /* zlib: "unexpected end of file" inside a gzip stream */
        c->pending = FS_EINVAL;
        snprintf(c->pending_what, sizeof c->pending_what, "truncated gzip data (%s)", zmsg);
        break;
    case Z_DATA_ERROR:
        c->pending = FS_EINVAL;
        snprintf(c->pending_what, sizeof c->pending_what, "corrupt gzip data (%s)", zmsg);
        break;
    case Z_MEM_ERROR:
        c->pending = FS_ENOMEM;
        snprintf(c->pending_what, sizeof c->pending_what, "out of memory in zlib");
        break;
    case Z_ERRNO:
        c->pending = FS_EIO;
        snprintf(c->pending_what, sizeof c->pending_what, "read error: %s", strerror(errno));
        break;
    default:
        c->pending = FS_EIO;
        snprintf(c->pending_what, sizeof c->pending_what, "read error: %s", zmsg);
        break;
    }
    return c->pending;
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
    int k = fs_io_gzread(c->gz, c->buf + c->len, (unsigned)room);
    int read_errno = errno;
    if (k > 0)
        c->len += (size_t)k;
    if (check_gz(c) || k <= 0) {
        if (k < 0 && !c->pending) {
            c->pending = FS_EIO;
            snprintf(c->pending_what, sizeof c->pending_what, "read error: %s", strerror(read_errno));
        }
        c->eof = 1;
    }
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
