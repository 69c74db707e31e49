/*
 * fs_out: where an output file may go, and the temporary it is written to
 * (docs/robustness.md "Output files").
 *
 * Every command that writes a file writes it to a temporary beside the
 * target and renames it into place when it is complete.  This module owns
 * the rules for that, so that every writer (results, native traces, fitted
 * models, plans, sweep manifests and indexes, CSV and HTML reports) follows
 * the same ones:
 *   - an output that is the same file (device and inode) as an input of the
 *     command is refused, before anything is written (fs_out_check_inputs);
 *   - a symbolic link is followed: its final target is the file replaced;
 *   - the target must be a regular file or not exist: a device, a FIFO, a
 *     socket or a directory is refused (a rename over it would replace the
 *     node itself); a read-only regular file is refused too; a writable one
 *     keeps its permission bits;
 *   - the temporary is TARGET.tmp.PID when that name fits NAME_MAX, else the
 *     target's name shortened and tagged with a hash of the whole name
 *     (NAME~HASH.tmp.PID), so that every valid target name can be written;
 *   - temporaries of the same target left by processes that no longer exist
 *     (a SIGKILL, a power cut) are removed when the next writer prepares;
 *     a temporary whose process is alive (or whose name does not match the
 *     pattern exactly) is never touched.
 * Refusals are FS_EUSAGE (exit status 2) naming the path.
 *
 * No state: every function works on the arguments it is given.
 */
#ifndef FS_OUT_H
#define FS_OUT_H

#include <stddef.h>

#include "fs_error.h"

/* A prepared output.  Owned by the caller; fs_out_release frees it. */
typedef struct fs_out {
    char *target;       /* the file to replace: path, or its symlinks' final target */
    char *tmp;          /* the temporary beside target (same directory) */
    int exists;         /* target exists (then a writable regular file) */
    unsigned mode;      /* its permission bits, given to the new file */
} fs_out_t;

/* Checks path as an output (rules above), fills o, and removes stale
 * temporaries of its target.  On failure o holds nothing to release. */
int fs_out_prepare(fs_out_t *o, const char *path, fs_error_t *err);

/* Gives tmp the mode of the file it replaces (when there was one), then
 * renames it over target; on failure tmp is removed and err names target
 * with the real errno text.  rename_fn: the rename to use (NULL: rename(3);
 * the writers pass fs_io_rename so that tests can inject failures). */
int fs_out_commit(const fs_out_t *o, int (*rename_fn)(const char *, const char *),
                  fs_error_t *err);

void fs_out_release(fs_out_t *o);

/* The temporary name for target written by process pid (malloc'd, or NULL
 * when out of memory).  Its last component fits NAME_MAX. */
char *fs_out_tmp_name(const char *target, long pid);

/* Removes temporaries of target whose process no longer exists; returns how
 * many were removed. */
size_t fs_out_remove_stale(const char *target);

/* 1 when path names the null device (/dev/null, through any name or link). */
int fs_out_is_null(const char *path);

/* DIR/NAME in a new fs_malloc'd string (fs_free it); NULL when out of memory. */
char *fs_out_join(const char *dir, const char *name);

/* Refuses (FS_EUSAGE, exit 2) an output path that is the same file as one
 * of the n inputs (NULL entries and inputs that do not exist are skipped).
 * what: the command, for out-of-memory messages.  An output that does not
 * exist yet names no input. */
int fs_out_check_inputs(const char *what, const char *out, const char *const *inputs, size_t n,
                        fs_error_t *err);

/* For a directory output (sweep, versus, plan): refuses when one of the
 * inputs is a file the command writes there: DIR/NAME for each of the
 * n_names names (e.g. "index.h5"), or a run file DIR/runs/pP-rR.h5. */
int fs_out_check_dir_inputs(const char *what, const char *dir, const char *const *names,
                            size_t n_names, const char *const *inputs, size_t n,
                            fs_error_t *err);

#endif
