/*
 * fs_migname: MIG profile names as job records carry them.
 *
 * A pod asks a MIG profile by name ("1g.10gb", "1g.10gb+me": the NVIDIA
 * device plugin's resource nvidia.com/mig-1g.10gb), whatever the GPU model.
 * A job record (fs_job_t.mig) holds the name coded as one positive int32:
 * compute << 16 | memory_gb << 1 | media_ext, 0 meaning "no MIG profile".
 * This header is the syntax of that code (name to code and back, and the
 * compute share it stands for, which needs the slice count of the name's
 * GPU: 4 on A30, 7 elsewhere); which names a GPU model really has, and
 * where its instances can go, is the model's (models/fs_mig.h), which
 * readers reach only through fs_trace_opts_t.mig_profile.
 */
#ifndef FS_MIGNAME_H
#define FS_MIGNAME_H

#include <stddef.h>
#include <stdint.h>

#define FS_MIGNAME_MAX 32   /* "32767g.32767gb+me" and its NUL fit */

/* The code of a name of the form <C>g.<M>gb or <C>g.<M>gb+me (C and M
 * decimal without leading zeros, 1 to 32767), or 0 for any other text. */
int32_t fs_migname_parse(const char *name, size_t len);

/* The name of a code into buf (FS_MIGNAME_MAX bytes suffice); returns buf. */
const char *fs_migname_of(int32_t code, char *buf, size_t n);

/* The code of a name from its parts (what fs_migname_parse returns). */
#define FS_MIGNAME_CODE(compute, memory_gb, media_ext) \
    ((int32_t)((uint32_t)(compute) << 16 | (uint32_t)(memory_gb) << 1 | ((media_ext) ? 1u : 0u)))

/* The compute slices a code names (its <C>). */
static inline uint32_t fs_migname_compute(int32_t code) { return (uint32_t)code >> 16; }

/* The compute slices of the GPU a name belongs to, the whole its <C> is a
 * share of.  NVIDIA MIG user guide, "Supported MIG Profiles": the A30-24GB
 * has 4 compute slices (1g.6gb, 1g.6gb+me, 2g.12gb, 2g.12gb+me, 4g.24gb:
 * 1/4, 1/4, 2/4, 2/4, 4/4 of the SMs); every other MIG GPU (A100, H100,
 * H100 NVL, H200, B200) has 7.  A name tells its GPU apart: no 7-slice
 * model has an A30 name (tests/test_mig.c checks this against every table
 * of models/fs_mig.c).  FS_MIGNAME_COMPUTE is the 7. */
#define FS_MIGNAME_COMPUTE 7
#define FS_MIGNAME_COMPUTE_A30 4
static inline uint32_t fs_migname_slices(int32_t code)
{
    switch (code) {
    case FS_MIGNAME_CODE(1, 6, 0):
    case FS_MIGNAME_CODE(1, 6, 1):
    case FS_MIGNAME_CODE(2, 12, 0):
    case FS_MIGNAME_CODE(2, 12, 1):
    case FS_MIGNAME_CODE(4, 24, 0):
        return FS_MIGNAME_COMPUTE_A30;
    default:
        return FS_MIGNAME_COMPUTE;
    }
}

/* A code's compute share in milli-GPUs: its <C> of its GPU's compute slices
 * (fs_migname_slices), rounded down (142 for a 1g of 7, 250 for an A30 1g). */
static inline uint32_t fs_migname_milli(int32_t code)
{
    return fs_migname_compute(code) * 1000u / fs_migname_slices(code);
}
/* The memory a code names (its <M>), GB. */
static inline uint32_t fs_migname_memory_gb(int32_t code) { return ((uint32_t)code >> 1) & 0x7fffu; }

#endif
