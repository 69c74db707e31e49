#include "fs_result.h"

#include <stddef.h>

static const char *const state_names[] = {
    [FS_STATE_COMPLETED] = "completed", [FS_STATE_FAILED] = "failed",
    [FS_STATE_RUNNING] = "running",     [FS_STATE_QUEUED] = "queued",
    [FS_STATE_REJECTED] = "rejected", [FS_STATE_WITHDRAWN] = "withdrawn",
};

const char *fs_job_state_name(int s)
{
    if (s < 0 || (size_t)s >= sizeof state_names / sizeof state_names[0])
        return "?";
    return state_names[s];
}

static const char *const component_names[] = {
    "gpu", "node", "link", "domain", "rack", "power", "leaf", "spine",
};

const char *fs_failure_component_name(int kind)
{
    if (kind < 0 || (size_t)kind >= sizeof component_names / sizeof component_names[0])
        return "?";
    return component_names[kind];
}

static const char *const repair_names[] = {"soft", "hard", "none", "removed", "planned"};

const char *fs_repair_path_name(int path)
{
    if (path < 0 || (size_t)path >= sizeof repair_names / sizeof repair_names[0])
        return "?";
    return repair_names[path];
}
