/*
 * fs_taint: Kubernetes taints of node pools and the tenants' tolerations
 * (docs/pods.md "Taints and tolerations").  A pool's `taints` and a
 * tenant's entry of `scheduler.tolerations` are comma-separated lists of
 * `key=value:NoSchedule` or `key:NoSchedule`; a tenant's jobs may use a
 * pool only if each of its taints is tolerated: a toleration with a value
 * matches the taint with that key, value and effect (operator Equal), one
 * without a value every taint with that key and effect (operator Exists).
 * Only the NoSchedule effect is modelled: nothing running is evicted.
 */
#ifndef FS_TAINT_H
#define FS_TAINT_H

#include <stddef.h>

/* Checks a list; 0, or -1 with *off the byte offset of the bad token and
 * why[] the reason. */
int fs_taint_check(const char *list, size_t *off, char *why, size_t whylen);

/* 1 when every taint of `taints` (a checked list; NULL or "" none) is
 * tolerated by `tolerations` (a checked list; NULL none), else 0. */
int fs_taint_tolerated(const char *taints, const char *tolerations);

#endif
