/*
 * fs_service: inference services sharing the fleet with training
 * (services:; docs/services.md).
 *
 * A service's replicas are jobs of the model (fs_model_submit, flag
 * FS_JOB_SERVICE) at the service's priority: they wait in the policy's
 * queue, preempt training as that policy does, pay pod start-up
 * (models/fs_startup.h, by their job class) and node provisioning (the
 * cluster autoscaler sees them as pending pods), are interrupted by
 * failures (recovery puts them back in the queue at once), and hold their
 * GPUs until the service retires them.  Requests never enter the job
 * queue; the service owns them (a module of the model):
 *
 *   request mode: every request is an event.  A request waits in the
 *     service's FIFO queue until a batch slot of a ready replica is free
 *     (the router sends it to the ready replica with the fewest requests in
 *     flight); it then runs its prefill (prompt tokens / prefill tokens/s:
 *     the first token comes at its end) and decodes its other output tokens
 *     one decode step each.  The step is fixed when the request starts, by
 *     the replica's batch then (it included): max_batch / decode tokens/s at
 *     a full batch, and 1 / decode_single at a batch of one, linear between
 *     (constant when decode_single is not given).  A replica that stops
 *     (failure, preemption) sends its requests back to the head of the
 *     queue (retried).  A retired replica drains: no new requests, its GPUs
 *     go back when its last request ends.
 *   fluid mode: no request events.  Between changes of the arrival rate
 *     (the profile's hours) and of the ready replicas, the service is an
 *     M/G/c queue (c = batch slots of the ready replicas): Erlang C with the
 *     Allen-Cunneen correction gives P(wait) and the exponential tail of
 *     the wait; an overload (rate >= capacity) builds a fluid backlog that
 *     later capacity drains.  Buckets integrate these exactly in time.
 *
 * Autoscaling is the Kubernetes HPA algorithm (replica_calculator and
 * normalizeDesiredReplicasWithBehaviors: tolerance, unready pods counted
 * as 0 when scaling up, stabilisation windows, the default scale-up limit
 * max(+100%, +4 pods) per sync period), every sync period; with
 * min_replicas 0 a request arriving at no replica brings one up at once
 * (the activator of Knative/KEDA).
 */
#ifndef FS_SERVICE_H
#define FS_SERVICE_H

#include "fs_model.h"

/* Registers the services of fs_model_config(m) (nothing when there are
 * none).  0, FS_EINVAL (err names the key: a service with no pool it can
 * use, a request trace that does not open) or FS_ENOMEM. */
int fs_service_attach(fs_model_t *m, fs_error_t *err);

/* The configuration rules that need no model (scenario loader, validate):
 * 0 or FS_EINVAL with *key (keylen bytes) the dotted key to blame. */
int fs_service_cfg_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err);

/* Every service has a pool of cluster cl (built from cfg->cluster) to run
 * on: a pool of a GPU model of its performance table whose nodes hold a
 * replica (a MIG layout with its instances on one node, when it asks for
 * MIG).  0, or FS_EINVAL with key "services.N.performance" (what the run
 * refuses when it builds the service; the loader calls it through
 * fs_model_cfg_check), FS_ENOMEM. */
int fs_service_pools_check(const fs_config_t *cfg, const fs_cluster_t *cl, char *key,
                           size_t keylen, fs_error_t *err);

/* Erlang C: the probability that a request waits in an M/M/c queue with
 * offered load a = lambda / mu (Erlangs) and c servers; 1 when a >= c.
 * Exposed for the fluid mode's tests. */
double fs_erlang_c(double a, unsigned c);

#endif
