/*
 * fs_migname: MIG profile names as job records carry them.
 *
 * A pod asks a MIG profile by name ("1g.10gb", "1g.10gb+me": the NVIDIA
 * device plugin's resource nvidia.com/mig-1g.10gb), whatever the GPU model.
 * A job record (fs_job_t.mig) holds the name coded as one positive int32:
 * compute << 16 | memory_gb << 1 | media_ext, 0 meaning "no MIG profile".
 * This header is the syntax of that code (name to code and back, and the
 * compute share it stands for); which names a GPU model really has, and
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

/* The compute slices a code names (its <C>), and its compute share in
 * milli-GPUs: of the 7 compute slices every MIG GPU has (NVIDIA MIG user
 * guide), rounded down. */
#define FS_MIGNAME_COMPUTE 7
static inline uint32_t fs_migname_compute(int32_t code) { return (uint32_t)code >> 16; }
static inline uint32_t fs_migname_milli(int32_t code)
{
    return fs_migname_compute(code) * 1000u / FS_MIGNAME_COMPUTE;
}
/* The memory a code names (its <M>), GB. */
static inline uint32_t fs_migname_memory_gb(int32_t code) { return ((uint32_t)code >> 1) & 0x7fffu; }

#endif
