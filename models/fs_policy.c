#include "fs_policy.h"

/* The policy table: one row per scheduler.queue value (enum fs_queue_kind). */
static const fs_policy_ops_t *const policies[] = {
    [FS_QUEUE_FIFO] = &fs_policy_fifo,
};

const fs_policy_ops_t *fs_policy_get(int queue_kind)
{
    if (queue_kind < 0 || (size_t)queue_kind >= sizeof policies / sizeof policies[0])
        return NULL;
    return policies[queue_kind];
}
