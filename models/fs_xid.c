#include "fs_xid.h"
#include "fs_failcfg.h"

/* In code order (fs_xid_find bisects).  Meanings paraphrase the catalog's
 * descriptions; actions are its immediate Resolution Buckets as
 * ../shared/docs/DOMAIN.md 1.5 records them (rows 46, 48, 63, 64, 74, 79,
 * 94 and 95 checked against NVIDIA's catalog there; the others from the
 * catalog's common-Xid notes). */
static const fs_xid_t xids[] = {
    {8, "GPU stopped processing (channel idle timeout)", FS_XID_RESTART_APP},
    {13, "graphics engine exception", FS_XID_RESTART_APP},
    {31, "GPU memory page fault (MMU)", FS_XID_RESTART_APP},
    {43, "GPU stopped processing (reset channel)", FS_XID_RESTART_APP},
    {45, "preemptive cleanup after other errors", FS_XID_IGNORE},
    {46, "GPU stopped processing", FS_XID_RESET_GPU},
    {48, "double-bit ECC error", FS_XID_RESET_GPU},
    {61, "internal micro-controller breakpoint", FS_XID_RESET_GPU},
    {62, "internal micro-controller halt", FS_XID_RESET_GPU},
    {63, "ECC page retirement or row remapping pending", FS_XID_RESET_GPU},
    {64, "ECC page retirement or row remapping failure", FS_XID_CONTACT_SUPPORT},
    {74, "NVLink error", FS_XID_RESET_GPU},
    {79, "GPU has fallen off the bus", FS_XID_RESTART_BM},
    {92, "high single-bit ECC error rate", FS_XID_IGNORE},
    {94, "contained ECC error", FS_XID_RESTART_APP},
    {95, "uncontained ECC error", FS_XID_RESET_GPU},
    {119, "GSP RPC timeout", FS_XID_RESET_GPU},
    {120, "GSP error", FS_XID_RESET_GPU},
};

const fs_xid_t *fs_xid_find(uint32_t code)
{
    size_t lo = 0, hi = sizeof xids / sizeof xids[0];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (xids[mid].code < code)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < sizeof xids / sizeof xids[0] && xids[lo].code == code ? &xids[lo] : NULL;
}

size_t fs_xid_count(void) { return sizeof xids / sizeof xids[0]; }

const fs_xid_t *fs_xid_at(size_t i) { return i < fs_xid_count() ? &xids[i] : NULL; }

int fs_xid_is_dbe(uint32_t code) { return code == 48 || code == 94 || code == 95; }

size_t fs_xid_burst(uint32_t code, int held, uint32_t out[2])
{
    const fs_xid_t *x = fs_xid_find(code);
    size_t n = 0;
    if (!x)
        return 0;
    if (fs_xid_is_dbe(code))
        out[n++] = 63;
    if (held && x->action != FS_XID_IGNORE)
        out[n++] = 45;
    return n;
}

int fs_xid_repair_path(int action)
{
    switch (action) {
    case FS_XID_RESET_GPU:
    case FS_XID_RESTART_BM:
        return FS_REPAIR_SOFT;
    case FS_XID_CONTACT_SUPPORT:
        return FS_REPAIR_HARD;
    default:
        return FS_REPAIR_NONE;
    }
}
