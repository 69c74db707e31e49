/*
 * fs_csv: a streaming line and field splitter for trace readers.
 *
 * Reads a text file, plain or gzip (detected by the magic bytes 1f 8b,
 * inflated with zlib member after member), in large chunks into one
 * buffer, and hands out one line at a time, NUL-terminated in place, with its
 * 1-based physical line number.  fs_csv_split then cuts the current line
 * into fields in place (comma- or any-separator-delimited, with optional
 * RFC 4180 double quotes; or runs of blanks with fs_csv_split_blank).
 *
 * Memory is bounded by the buffer (a line longer than the buffer is an
 * error) and by the field array (bounded by the line length); it never
 * depends on the number of lines.
 *
 * Line rules: '\n' ends a line and one '\r' before it is dropped; the last
 * line needs no '\n'; a UTF-8 byte-order mark at the start of the file is
 * dropped.  Field rules: blanks (space, tab) around a field are trimmed; a
 * field that starts with '"' is quoted: it ends at the next lone '"', "" in
 * it stands for one '"', and only blanks may follow it before the
 * separator (quoted fields cannot span lines).
 *
 * A truncated or corrupt gzip stream is an error (FS_EINVAL,
 * "FILE:LINE: truncated gzip data (unexpected end of file)"), never a
 * silently shorter file, and so is anything after a complete member that is
 * not another gzip member ("corrupt gzip data (N bytes after member M are
 * not a gzip member)": zlib's gzread ignores such bytes); read errors are
 * FS_EIO.  Such an error is reported
 * in its place: the complete lines before it are handed out first, and LINE
 * is the line that the data ended in.
 *
 * Splitting writes into the line (NULs at separators, unescaped quotes):
 * split each line once, and read c->line before splitting it.
 *
 * Ownership: fs_csv_t is embedded by its user (fs_csv_open / fs_csv_close).
 * Pointers to the line and the fields stay valid until the next
 * fs_csv_next_line.  Errors name the file as given to fs_csv_open.
 */
#ifndef FS_CSV_H
#define FS_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "../sim/fs_error.h"

#define FS_CSV_BUF_DEFAULT ((size_t)1 << 20)  /* 1 MiB: also the longest line + 1 */
#define FS_CSV_BUF_MIN ((size_t)64)

typedef struct fs_csv_field {
    char *s;            /* NUL-terminated, inside the line buffer */
    size_t len;         /* bytes */
} fs_csv_field_t;

typedef struct fs_zin fs_zin_t;   /* the byte stream (fs_csv.c) */

typedef struct fs_csv {
    fs_zin_t *gz;           /* the open stream (NULL: closed) */
    char *path;             /* owned copy, for messages */
    char *buf;              /* read buffer, owned */
    size_t cap;             /* bytes allocated */
    size_t len;             /* bytes of buf holding data */
    size_t pos;             /* start of the next unread line */
    int eof;                /* nothing more to read (buf may still hold data) */
    int pending;            /* FS_E* met when reading, reported after the buffered lines */
    char pending_what[160]; /* its description (zlib's message without the path) */
    uint64_t line_no;       /* number of the current line, 1-based; 0 before the first */
    char *line;             /* current line, NUL-terminated, without "\r\n" */
    size_t line_len;
    fs_csv_field_t *fields; /* fields of the current line after a split */
    size_t n_fields, fields_cap;
} fs_csv_t;

/* Opens path for reading with a buffer of buf_size bytes (0 = default,
 * at least FS_CSV_BUF_MIN).  Returns 0, FS_EIO (cannot open) or FS_ENOMEM;
 * on failure nothing is left to close. */
int fs_csv_open(fs_csv_t *c, const char *path, size_t buf_size, fs_error_t *err);
void fs_csv_close(fs_csv_t *c);

/* fs_csv_open, or, when from is an fs_csv_t open on the same path, moves
 * it into c (from is left zeroed: nothing to close). */
int fs_csv_take(fs_csv_t *c, fs_csv_t *from, const char *path, fs_error_t *err);

/* Reads the first chunk of the file into the buffer (up to 256 KiB, or the
 * whole file) without consuming anything: format detection looks at it
 * (fs_detect.c) and the reader then starts from line 1 of the same stream,
 * so a FIFO or a pipe is read once.  Read errors stay pending, as in
 * fs_csv_next_line.  Returns 0 or FS_ENOMEM. */
int fs_csv_prefetch(fs_csv_t *c, fs_error_t *err);

/* Reads up to n raw (inflated) bytes of the stream, bypassing the line
 * buffer (the Philly JSON reader): the count (0 at the end), or -1.  An
 * error is left in c->pending / c->pending_what (and reading stops); the
 * bytes read before a truncation are returned first. */
long fs_csv_read(fs_csv_t *c, void *buf, size_t n);

/* Advances to the next line.  Returns 1 (c->line is set), 0 at the end of
 * the file, or an error: FS_EINVAL (line too long, truncated/corrupt gzip),
 * FS_EIO (read error), FS_ENOMEM. */
int fs_csv_next_line(fs_csv_t *c, fs_error_t *err);

/* Splits the current line at sep (see the field rules above) into
 * c->fields / c->n_fields.  An empty line gives one empty field.  Returns 0,
 * FS_EINVAL (bad quoting, "FILE:LINE: field K: ...") or FS_ENOMEM. */
int fs_csv_split(fs_csv_t *c, char sep, fs_error_t *err);

/* Splits the current line at runs of blanks (SWF-style); no quoting.  A
 * blank line gives zero fields.  Returns 0 or FS_ENOMEM. */
int fs_csv_split_blank(fs_csv_t *c, fs_error_t *err);

static inline const char *fs_csv_path(const fs_csv_t *c) { return c->path; }

#endif
