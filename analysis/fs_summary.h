/*
 * fs_summary: the headline figures of one run, the /summary row.  Every
 * figure is one row of fs_summary.def (name, C type, unit, where it comes
 * from, the test scenario that exercises it, its description); the struct
 * below, the copies, the HDF5 columns (fs_results_cols.c) and the rows of
 * docs/results.md are expanded from it.
 */
#ifndef FS_SUMMARY_H
#define FS_SUMMARY_H

#include <stdint.h>

#include "../models/fs_cost.h"
#include "../models/fs_result.h"

/* One field per row of fs_summary.def, in its order (the /summary column
 * order); every field is 8 bytes wide (uint64_t or double). */
typedef struct fs_summary {
#define FS_SUMMARY(name, ctype, unit, from, probe, desc) ctype name;
#include "fs_summary.def"
#undef FS_SUMMARY
} fs_summary_t;

/* The figures the model counts (fs_summary.def rows from `totals`): copied
 * from t's fields of the same names; the cost figures (from `cost` and
 * `priced`) are set to NaN until the run is priced.  Other fields are left
 * as they are. */
void fs_summary_from_totals(fs_summary_t *s, const fs_run_totals_t *t);

/* The cost figures of the cost report (fs_summary.def rows from `cost`):
 * copied from c's fields of the same names. */
void fs_summary_copy_cost(fs_summary_t *s, const fs_cost_report_t *c);

#endif
