#include "fs_job.h"

/* Indexed by enum fs_job_rec_state; these are also the spellings of the
 * native format's rec_state column (traces/fs_native.c parses them back). */
static const char *const rec_state_names[] = {
    [FS_JOB_REC_UNKNOWN] = "unknown",
    [FS_JOB_REC_COMPLETED] = "completed",
    [FS_JOB_REC_FAILED] = "failed",
    [FS_JOB_REC_KILLED] = "killed",
    [FS_JOB_REC_TIMEOUT] = "timeout",
    [FS_JOB_REC_NODE_FAIL] = "node_fail",
    [FS_JOB_REC_RUNNING] = "running",
};

/* The name of a recorded state; "?" for a value outside the enum (like
 * fs_dist_kind_name), so that callers can always print the result. */
const char *fs_job_rec_state_name(int32_t s)
{
    if (s < FS_JOB_REC_UNKNOWN || s > FS_JOB_REC_RUNNING)
        return "?";
    return rec_state_names[s];
}
