/*
 * The table of queue orders (made from fs_queues.h's rows).  The planning
 * run time that SJF/SRTF and backfill share is fs_order_plan (inline in
 * fs_order.h).
 */
#include "fs_order.h"

static const fs_order_ops_t *const orders[FS_QUEUE_COUNT] = {
#define ORDER(o) &o
#define NO_ORDER NULL
#define FS_ORDER_ROW(e, name, policy, order) [FS_QUEUE_##e] = order,
    FS_QUEUE_KINDS(FS_ORDER_ROW)
#undef FS_ORDER_ROW
#undef NO_ORDER
#undef ORDER
};

const fs_order_ops_t *fs_order_get(int queue_kind)
{
    if (queue_kind < 0 || (size_t)queue_kind >= sizeof orders / sizeof orders[0])
        return NULL;
    return orders[queue_kind];
}
