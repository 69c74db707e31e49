/*
 * fs_metrics_queues: the export's series of what serves and queues, under
 * the names of the exporters that report them in a real cluster
 * (docs/observability.md "Services, queues, cost and carbon"):
 *   - vLLM's (vllm/v1/metrics/loggers.py, PrometheusStatLogger) per service
 *     replica, from /requests (output.requests: true): vllm:num_requests_running
 *     and _waiting, the time-to-first-token, per-request time-per-output-token,
 *     end-to-end and queue-time histograms with vLLM's buckets, the prompt and
 *     generation token counters; vllm:kv_cache_usage_perc per service from
 *     /service_buckets;
 *   - Kueue's (pkg/metrics/metrics.go) per ClusterQueue, from /jobs (the
 *     run's own CQs under scheduler.queue kueue, from its stored scenario;
 *     else one per tenant): kueue_pending_workloads,
 *     kueue_admitted_workloads_total, kueue_admission_wait_time_seconds; and
 *     per LocalQueue (the manifest's LocalQueue a tenant maps to, else one
 *     named after the tenant): the same as kueue_local_queue_*; labels as
 *     Kueue v0.19.2 writes them, priority_class (the manifest's
 *     WorkloadPriorityClass of the job's priority, "" for none) on the
 *     admitted and wait families;
 *   - fleetsim's cost and carbon rates per pool, from /cost.
 */
#ifndef FS_METRICS_QUEUES_H
#define FS_METRICS_QUEUES_H

#include <stddef.h>
#include <stdint.h>

#include "fs_metrics_sink.h"

size_t fs_mqueue_n_families(void);
const char *fs_mqueue_family_name(size_t i);

/* Writes the families i with fam_on[fam_base + i] set that the results
 * file has the tables for (a family without its table is left out).
 * FS_EINVAL: a Kueue run's ClusterQueues asked for and its stored scenario
 * not loadable (its manifests gone). */
int fs_mqueue_emit(fs_msink_t *s, const uint8_t *fam_on, size_t fam_base);

#endif
