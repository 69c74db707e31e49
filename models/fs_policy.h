/*
 * fs_policy: which scheduling policy a configuration runs.
 *
 * A policy is a function table (fs_policy_ops_t, fs_policy_ops.h: what the
 * model calls) plus a void * state.  This header selects one for a
 * scheduler block (fs_policy_select) and checks a configuration against it
 * without a model; whoever creates a model picks the policy here and passes
 * it to fs_model_create (sim/api/fs_runner.c for a run).  Adding a policy is
 * one new file and one row in fs_queues.h.
 */
#ifndef FS_POLICY_H
#define FS_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_error.h"
#include "fs_model.h"
#include "fs_policy_ops.h"

/* The policy for enum fs_queue_kind q, or NULL. */
const fs_policy_ops_t *fs_policy_get(int queue_kind);
/* The policy for a whole scheduler block: the class-based FIFO fast path
 * (fs_fifo.c) for plain FIFO, else the composable scheduler (fs_sched.c). */
const fs_policy_ops_t *fs_policy_select(const fs_sched_cfg_t *cfg);
/* The check hook of the policy cfg->scheduler selects (see check above):
 * 0, or FS_EINVAL with *key set (never empty), or FS_ENOMEM. */
int fs_policy_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err);

/* Whether cfg's policy preempts running jobs and a preempted job then loses
 * the work of its attempt (scheduler.checkpoint_interval 0 and no recovery
 * checkpoints).  Returns 1 with a one-line message in msg (n bytes) naming
 * the keys that change it, else 0. */
int fs_policy_work_loss(const fs_config_t *cfg, char *msg, size_t n);
/* Which part of cfg's policy preempts running jobs, as a phrase for
 * messages ("srtf", "Volcano reclaim/preempt", ...), or NULL: none. */
const char *fs_policy_preemptor(const fs_config_t *cfg);

/* The policies of fs_queues.h's rows (fs_fifo.c, fs_sched.c, fs_kueue.c,
 * fs_volcano.c), and scheduler.plugin's (fs_plugin.c). */
#define FS_POLICY_DECL(e, name, policy, order) extern const fs_policy_ops_t policy;
FS_QUEUE_KINDS(FS_POLICY_DECL)
#undef FS_POLICY_DECL
extern const fs_policy_ops_t fs_policy_plugin;

#endif
