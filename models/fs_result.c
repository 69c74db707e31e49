#include "fs_result.h"

#include <stddef.h>

static const char *const state_names[] = {
    [FS_STATE_COMPLETED] = "completed", [FS_STATE_FAILED] = "failed",
    [FS_STATE_RUNNING] = "running",     [FS_STATE_QUEUED] = "queued",
    [FS_STATE_REJECTED] = "rejected",
};

const char *fs_job_state_name(int s)
{
    if (s < 0 || (size_t)s >= sizeof state_names / sizeof state_names[0])
        return "?";
    return state_names[s];
}
