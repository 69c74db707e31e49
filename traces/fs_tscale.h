/*
 * fs_tscale: per-tenant load scaling, workload.tenant_scale {tenant: k}
 * (docs/traces.md, "Scaling one tenant's load"): each named tenant's arrival
 * rate times k, every other tenant's jobs unchanged.
 *
 *   - synthetic (fs_tscale_synth): the arrivals are one Poisson stream whose
 *     jobs draw their tenant by share, i.e. the superposition of independent
 *     Poisson streams at rate x share_i.  Tenant i's stream at k_i times its
 *     rate is the same process with rate' = rate x sum_i share_i k_i and
 *     share_i' = share_i k_i / sum_j share_j k_j (k = 1 for unnamed tenants).
 *   - trace (fs_tscale_wrap): every job of a scaled tenant is kept and
 *     floor(k) - 1 copies are added, plus one more with probability
 *     k - floor(k); k < 1 keeps each job with probability k (thinning).  A
 *     copy arrives at its job's submit + U x g, U uniform on [0, 1) and g the
 *     tenant's mean inter-arrival gap in the trace, (last - first submit) /
 *     (jobs - 1); it gets a new id (after the trace's largest) and its
 *     recorded start/end, if any, shifted alike.  The draws come from their
 *     own stream (FS_RNG_TENANT_SCALE, entity 0), in trace order.
 *
 * The trace wrapper reads the whole inner source at its first batch (the
 * gap needs the tenant's last job): memory O(jobs of the trace), 88 bytes a
 * job, unlike the streamed readers.
 */
#ifndef FS_TSCALE_H
#define FS_TSCALE_H

#include <stddef.h>
#include <stdint.h>

#include "fs_source.h"
#include "fs_synth.h"

/* Applies the scaling to sc (a shallow copy of the scenario's synthetic
 * config): sc->rate is scaled and sc->tenant_shares points at *shares, a new
 * array the caller frees after fs_synth_create (which copies it).  A name
 * that is not one of sc's tenants, or a workload without tenants: FS_EINVAL
 * naming it.  0 or FS_EINVAL/FS_ENOMEM. */
int fs_tscale_synth(fs_synth_cfg_t *sc, const char *const *names, const double *k, size_t n,
                    double **shares, fs_error_t *err);

/* Wraps *src (which it then owns; destroyed on failure and *src = NULL).
 * Names are checked against the trace's tenants at the first batch: one the
 * trace does not have, or one with fewer than 2 jobs (no gap), fails that
 * batch with FS_EINVAL naming it. */
int fs_tscale_wrap(fs_source_t **src, const char *const *names, const double *k, size_t n,
                   uint64_t seed, uint64_t replication, fs_error_t *err);

#endif
