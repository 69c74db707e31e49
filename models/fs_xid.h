/*
 * fs_xid: the NVIDIA Xid codes fleetsim knows, each with the remediation
 * NVIDIA's Xid catalog assigns it ("Resolution Bucket (Immediate Action)",
 * docs.nvidia.com/deploy/xid-errors; ../shared/docs/DOMAIN.md 1.5), and the
 * repair path of the failure model that action stands for
 * (docs/failures.md "Xid codes"):
 *   RESTART_APP -> none (the GPU is back at once; its jobs were hit),
 *   RESET_GPU and RESTART_BM (reboot) -> soft, CONTACT_SUPPORT -> hard,
 *   IGNORE (informational) -> none.
 * A failure cause may name an Xid (failures.causes[].xid); its repair path
 * then defaults to this table's, and /failures records the code.
 */
#ifndef FS_XID_H
#define FS_XID_H

#include <stddef.h>
#include <stdint.h>

enum fs_xid_action {
    FS_XID_IGNORE = 0,      /* informational: nothing to do */
    FS_XID_RESTART_APP = 1, /* restart the application */
    FS_XID_RESET_GPU = 2,   /* drain, reset the GPU */
    FS_XID_RESTART_BM = 3,  /* drain, reboot the node (bare metal) */
    FS_XID_CONTACT_SUPPORT = 4 /* drain and replace (RMA) */
};

typedef struct fs_xid {
    uint32_t code;
    const char *meaning;
    int action;             /* enum fs_xid_action: the immediate action */
} fs_xid_t;

/* The catalog row of code, or NULL when fleetsim does not know it. */
const fs_xid_t *fs_xid_find(uint32_t code);
/* Row i (0 .. fs_xid_count() - 1), in code order. */
const fs_xid_t *fs_xid_at(size_t i);
size_t fs_xid_count(void);
/* The repair path (enum fs_repair_path of models/fs_failcfg.h) of an action. */
int fs_xid_repair_path(int action);

/* The Xids the driver logs on a GPU after `code` from the same fault (a
 * burst, docs/failures.md "Xid bursts"): after an uncorrectable memory
 * error (48 double-bit ECC, 94 contained, 95 uncontained) Xid 63, the row
 * remapping it leaves pending until the GPU is reset; then, when a process
 * had the GPU (held != 0) and the fault ends applications (any action but
 * IGNORE), Xid 45, the preemptive cleanup of its channels.  Writes the
 * follow-on codes in order to out (room for 2); returns how many. */
size_t fs_xid_burst(uint32_t code, int held, uint32_t out[2]);
/* Whether code is an uncorrectable (double-bit) memory error, which DCGM
 * counts in DCGM_FI_DEV_ECC_DBE_VOL_TOTAL: 48, 94, 95. */
int fs_xid_is_dbe(uint32_t code);

#endif
