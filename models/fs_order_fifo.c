/*
 * FIFO order: admission order (every key equal; the scheduler's tie-break
 * is the admission sequence).  With backfill or preemption this order runs
 * in fs_sched.c; plain FIFO uses the class-based fast path of fs_fifo.c,
 * and tests prove both start the same jobs at the same times.
 */
#include "fs_order.h"

static fs_okey_t fifo_key(void *state, fs_model_t *m, uint32_t slot)
{
    (void)state;
    (void)m;
    (void)slot;
    return (fs_okey_t){0, 0};
}

const fs_order_ops_t fs_order_fifo = {.name = "fifo", .key = fifo_key};
