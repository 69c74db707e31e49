/*
 * fs_where: the position (LINE:COL) of a key in a scenario's YAML text, for
 * messages about values that are checked after loading (the plan section,
 * the sweep's size): "s.yaml:12:17: plan.slo.0.max: ...".  The text is
 * parsed again with libyaml (no state kept); list items are addressed by
 * index ("plan.slo.0.max").
 */
#ifndef FS_WHERE_H
#define FS_WHERE_H

#include <stddef.h>

/* Writes "LINE:COL" (1-based) of the value at the dotted path into buf.
 * When the path is not in the text (a default, or given with --set), the
 * position of its deepest ancestor that is; "1:1" when none is (or the
 * text does not parse).  Returns 1 when the path itself was found, else 0. */
int fs_where_key(const char *text, const char *path, char *buf, size_t n);

#endif
