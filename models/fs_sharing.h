/*
 * fs_sharing: GPU time-slicing and MPS (cluster.pools[].sharing), the
 * sharing modes of NVIDIA's Kubernetes device plugin (its README, "Shared
 * Access to GPUs"), and the slowdown of the jobs that share a GPU.
 *
 * A pool with sharing advertises N replicas per GPU.  In the cluster a
 * replica is a share of FS_SHARING_MILLI(N) = floor(1000 / N) milli-GPUs on
 * the fractional-GPU machinery (fs_cluster.h): exactly N replicas fit on a
 * GPU for N <= 35 ((N + 1) * floor(1000 / N) > 1000), so the key is bounded
 * to 2..FS_SHARING_MAX.  gpu_milli stays the accounting unit: a replica is
 * FS_SHARING_MILLI(N) / 1000 of a GPU in GPU-hours.
 *
 * The speed of a job on a GPU that k jobs share (k >= 1, itself included):
 *   time-slicing   1 / k: the GPU's time slices go round-robin to the
 *                  contexts that have work (processor sharing; no
 *                  context-switch overhead is charged: no sourced figure);
 *   MPS            min(1, (1 / N) / demand) with the job's SM demand 1 (a
 *                  job alone fills the GPU): 1 / N whatever its neighbours
 *                  do, since each client is limited to 1/N of the SMs.
 * Stateless: the model (fs_model.c) asks it when a job starts and when a
 * neighbour on its GPU starts or ends, and settles the work done at the
 * old speed (docs/models.md "GPU sharing").
 */
#ifndef FS_SHARING_H
#define FS_SHARING_H

#include <stdint.h>

enum fs_sharing_kind { FS_SHARING_NONE = 0, FS_SHARING_TIME_SLICING = 1, FS_SHARING_MPS = 2 };

#define FS_SHARING_MAX 32u
#define FS_SHARING_MILLI(n) (1000u / (n))

/* Speed factor in (0, 1] of a job on a GPU of a pool with sharing `kind`
 * and N replicas that k jobs share (k is clamped to 1..N). */
double fs_sharing_speed(int kind, uint32_t n, uint32_t k);

/* The jobs on a shared GPU that holds `used_milli` of replicas of
 * FS_SHARING_MILLI(n) each. */
static inline uint32_t fs_sharing_count(uint32_t n, uint32_t used_milli)
{
    return used_milli / FS_SHARING_MILLI(n);
}

#endif
