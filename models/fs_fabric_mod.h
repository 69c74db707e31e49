/*
 * fs_fabric_mod: the fabric in a run (models/fs_fabric_mod.c).  INTERNAL TO
 * models/: the attempts call it; m->fab is NULL without cluster.fabric.
 */
#ifndef FS_FABRIC_MOD_H
#define FS_FABRIC_MOD_H

#include "fs_model_int.h"
#include "fs_fabric.h"

/* The module's attach (a row of fs_modules.c). */
int fs_fabric_attach(fs_model_t *m, fs_error_t *err);
/* A job was placed (before its completion is scheduled): its flow added
 * when its class has traffic and it spans NVLink domains; *factor its
 * speed factor now.  0 or FS_ENOMEM. */
int fs_fabric_job_start(fs_model_t *m, uint32_t slot, double *factor);
/* After the job's completion is scheduled: the other jobs whose factor
 * its start changed are re-rated.  0 or an FS_E* error. */
int fs_fabric_after_start(fs_model_t *m, uint32_t slot);
/* A running job stops (completion, preemption, failure): its flow goes,
 * the jobs that shared a link with it are re-rated.  0 or an FS_E* error. */
int fs_fabric_job_stop(fs_model_t *m, uint32_t slot);
/* The job of slot ends (its /jobs row is written): its /jobs_network row,
 * when its ring crossed the network.  0 or FS_ENOMEM. */
int fs_fabric_job_row(fs_model_t *m, uint32_t slot);
/* A running job's factor now (1: not communicating). */
double fs_fabric_slot_factor(const fs_model_t *m, uint32_t slot);

#endif
