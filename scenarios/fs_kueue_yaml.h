/*
 * fs_kueue_yaml: the scheduler.kueue part of the scenario language --
 * the key tables of one ClusterQueue, one flavor quota and one flavor
 * (declared in fs_subkeys.h: rows of scenarios/fs_keys.c refer to them), Kueue's own YAML manifests
 * (scheduler.kueue.manifests), and the cross-checks of the whole block.
 *
 * Manifests: a multi-document YAML file of Kueue objects (kinds
 * ResourceFlavor, ClusterQueue, Cohort, LocalQueue; other kinds are
 * skipped).  Only the fields that matter are read (docs/policies.md,
 * "Kueue manifests"); errors name FILE:LINE:COL.  Objects become config:
 * ClusterQueues and ResourceFlavors are appended to cfg->cqs and
 * cfg->flavors, a LocalQueue adds its namespace and name to its
 * ClusterQueue's tenants, and a Cohort's own quota becomes a ClusterQueue
 * "cohort:NAME" of that cohort that has no tenants (it only lends).
 */
#ifndef FS_KUEUE_YAML_H
#define FS_KUEUE_YAML_H

#include <stddef.h>
#include <stdint.h>

#include "../models/fs_config.h"
#include "../sim/fs_error.h"
#include "fs_keys.h"

/* Parses manifest text (name: the file name for messages) and appends its
 * objects to k.  Names defined twice are errors (also against what k
 * holds); with a cluster (cl non-NULL) so is a quota whose flavor is
 * neither a ResourceFlavor nor a pool or GPU model.  0, FS_EINVAL
 * ("NAME:LINE:COL: ...") or FS_ENOMEM. */
int fs_kueue_manifest_parse_for(const char *name, const char *text, size_t len,
                                const fs_cluster_cfg_t *cl, fs_kueue_cfg_t *k, fs_error_t *err);
/* The same without a cluster. */
int fs_kueue_manifest_parse(const char *name, const char *text, size_t len, fs_kueue_cfg_t *k,
                            fs_error_t *err);

/* A manifest's LocalQueue: metadata.name, metadata.namespace ("default"
 * when not given), spec.clusterQueue; a WorkloadPriorityClass: its name
 * and value. */
typedef struct fs_kueue_lq {
    char *name, *ns, *cq;
} fs_kueue_lq_t;
typedef struct fs_kueue_wpc {
    char *name;
    int32_t value;
} fs_kueue_wpc_t;
typedef struct fs_kueue_objs {
    fs_kueue_lq_t *lq;
    size_t n_lq;
    fs_kueue_wpc_t *wpc;
    size_t n_wpc;
} fs_kueue_objs_t;
/* The LocalQueues and WorkloadPriorityClasses of manifest file path, in
 * document order (the file read and parsed as fs_kueue_manifest_parse
 * does, and its WorkloadPriorityClasses' values checked; fleetsim metrics
 * labels the Kueue series with them).  0, FS_EIO, FS_EINVAL
 * ("PATH:LINE:COL: ..."), FS_ENOMEM; free with fs_kueue_objs_free. */
int fs_kueue_manifest_objs(const char *path, fs_kueue_objs_t *out, fs_error_t *err);
void fs_kueue_objs_free(fs_kueue_objs_t *o);

/* For scheduler.queue kueue: loads k->manifests (if any) and checks the
 * block against the cluster (at least one ClusterQueue; unique names;
 * every flavor stands for at least one pool; quotas name known flavors;
 * limits as Kueue validates them).  On an error in a key-given item,
 * kpath receives its dotted key ("scheduler.kueue.cluster_queues.1.name")
 * so that the caller can name its position; else kpath is "" and the
 * message carries the manifest position.  0, FS_EINVAL, FS_EIO, FS_ENOMEM. */
int fs_kueue_cfg_resolve(fs_kueue_cfg_t *k, const fs_cluster_cfg_t *cl, char *kpath, size_t n,
                         fs_error_t *err);

#endif
