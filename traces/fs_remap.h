/*
 * fs_remap: a source wrapped with the trace-replay options that act on the
 * whole stream (workload.trace.teams, workload.trace.load_scale;
 * docs/traces.md "Teams and load scale"):
 *   - teams: a CSV file with a header naming the columns `user` and `team`
 *     (any order, more columns ignored), and/or the same map inline
 *     (workload.trace.team_map: n_map pairs users[i] -> team_of[i]); a job
 *     whose tenant (the trace's user or tenant name) is listed gets the
 *     team as its tenant, one that is not listed keeps its own name
 *     (counted: fs_remap_unmapped); a user both list maps to one team;
 *   - load_scale: arrival compression, submit times divided by it (2: the
 *     same jobs arrive twice as fast); run times are unchanged.
 * The wrapped source's tenant table is the table of teams (and unlisted
 * users), in order of first appearance in the stream.
 *
 * Errors of the team file: "FILE:LINE: ..." (FS_EINVAL), FS_EIO, FS_ENOMEM.
 * Ownership: the wrapper owns the inner source from the call on (it is
 * destroyed on failure too).
 */
#ifndef FS_REMAP_H
#define FS_REMAP_H

#include "fs_source.h"

/* Wraps *src (replaced by the wrapper on success, destroyed on failure).
 * teams: path of the user,team CSV, or NULL; users/team_of: the inline map
 * (n_map pairs, may be 0); load_scale > 0 (1: none). */
int fs_remap_wrap(fs_source_t **src, const char *teams, const char *const *users,
                  const char *const *team_of, size_t n_map, double load_scale, fs_error_t *err);

/* Tenants of the stream so far that the team file does not list (0 when the
 * source is not a wrapper or has no team file). */
uint64_t fs_remap_unmapped(const fs_source_t *src);

#endif
