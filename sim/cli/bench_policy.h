/*
 * bench_policy: the scheduling-policy section of `fleetsim bench` --
 * exact EASY backfill with a ~10,000-deep queue on 10,000 GPUs, and Slurm
 * multifactor priority recomputed every PriorityCalcPeriod, in simulated
 * jobs per wall-clock and per CPU second (docs/performance.md, "Policies").
 * The environment variable FS_BENCH_ONLY=easy|slurm|volcano|kueue runs one of them
 * (for profiling).
 */
#ifndef FS_BENCH_POLICY_H
#define FS_BENCH_POLICY_H

/* Runs and prints the section; jobs per benchmark (0: the default, 1 M).
 * Returns 0 or an exit status. */
int fs_bench_policy(unsigned long long jobs);

#endif
