/*
 * Priority classes: the job's priority field (larger first; Kubernetes
 * PriorityClass, Kueue workload priority), FIFO within a class.
 */
#include "fs_order.h"

static fs_okey_t prio_key(void *state, fs_model_t *m, uint32_t slot)
{
    (void)state;
    return (fs_okey_t){-(double)fs_model_job(m, slot)->job.priority, 0};
}

const fs_order_ops_t fs_order_priority = {.name = "priority", .key = prio_key};
