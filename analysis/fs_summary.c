/*
 * fs_summary: the copies of /summary figures from the model's totals and
 * from the cost report, expanded from fs_summary.def (the rows whose
 * `from` is totals, cost, priced or runner).  A row's source field must have the
 * row's type: checked at compile time below.
 */
#include "fs_summary.h"

#include <math.h>

/* Every row's C type is one of the two 8-byte types of /summary. */
#define IS_8_BYTE_uint64_t 1
#define IS_8_BYTE_double 1
#define FS_SUMMARY(name, ctype, unit, from, probe, desc)                                    \
    _Static_assert(IS_8_BYTE_##ctype && sizeof(((fs_summary_t *)0)->name) == 8,             \
                   "/summary." #name ": a uint64_t or double field");
#include "fs_summary.def"
#undef FS_SUMMARY

/* A source field has the type of its row: no silent conversion. */
#define SAME_TYPE(src, name, ctype)                                                         \
    _Static_assert(_Generic(((src *)0)->name, ctype: 1, default: 0),                         \
                   #src "." #name " is not " #ctype " as /summary." #name " is");
#define CHECK_totals(name, ctype) SAME_TYPE(fs_run_totals_t, name, ctype)
#define CHECK_cost(name, ctype) SAME_TYPE(fs_cost_report_t, name, ctype)
#define CHECK_stats(name, ctype)
#define CHECK_priced(name, ctype)
#define CHECK_runner(name, ctype)
#define FS_SUMMARY(name, ctype, unit, from, probe, desc) CHECK_##from(name, ctype)
#include "fs_summary.def"
#undef FS_SUMMARY

void fs_summary_from_totals(fs_summary_t *s, const fs_run_totals_t *t)
{
#define FROM_totals(name) s->name = t->name;
#define FROM_cost(name) s->name = NAN;
#define FROM_priced(name) s->name = NAN;
#define FROM_runner(name) s->name = NAN;
#define FROM_stats(name)
#define FS_SUMMARY(name, ctype, unit, from, probe, desc) FROM_##from(name)
#include "fs_summary.def"
#undef FS_SUMMARY
}

void fs_summary_copy_cost(fs_summary_t *s, const fs_cost_report_t *c)
{
#define COST_totals(name)
#define COST_cost(name) s->name = c->name;
#define COST_priced(name)
#define COST_runner(name)
#define COST_stats(name)
#define FS_SUMMARY(name, ctype, unit, from, probe, desc) COST_##from(name)
#include "fs_summary.def"
#undef FS_SUMMARY
}
