/*
 * fs_sweeprun: runs a sweep plan (scenarios/fs_sweep.h) into a directory:
 * threads, shards, MPI ranks, resume, and the index (analysis/fs_index.h).
 * Used by `fleetsim sweep` and `fleetsim merge`; layout in docs/sweeps.md.
 *
 * Each (point, replication) is one single-threaded run (fs_run_config)
 * writing DIR/runs/p<P>-r<R>.h5.  Workers share nothing mutable but a work
 * counter and one process-wide lock around every HDF5 call (Debian's HDF5 is
 * built without thread safety; GSL and libyaml are reentrant and every run
 * has its own config, source, model, statistics and results writer).  So
 * the bytes of a run file depend only on the plan and the run's index,
 * never on the thread, rank or shard that ran it.
 *
 * Ownership: fs_sweep_execute owns its threads and MPI requests for the
 * duration of the call; MPI itself is initialised and finalised by the
 * caller (fs_sweep_mpi_init / fs_sweep_mpi_finish), once per process.
 */
#ifndef FS_SWEEPRUN_H
#define FS_SWEEPRUN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "../../scenarios/fs_sweep.h"
#include "../../analysis/fs_index.h"
#include "../fs_error.h"

typedef struct fs_sweep_opts {
    const char *dir;        /* output directory (created) */
    unsigned threads;       /* worker threads per process (>= 1) */
    size_t shard, n_shards; /* run k belongs to shard k mod n_shards; n_shards 0 or 1: all */
    int resume;             /* skip runs whose file is complete */
    int progress;           /* progress line on stderr */
    double progress_every;  /* 0: one line redrawn in place (a terminal); > 0: one whole
                               line every this many wall seconds (a log, a batch job) */
    const volatile sig_atomic_t *interrupt; /* optional stop flag */
    int mpi;                /* distribute over MPI ranks (after fs_sweep_mpi_init) */
    /* threads > 1 without MPI: the workers are processes (fork) instead of
     * threads, each with its own HDF5 and no lock between them; they take
     * runs from one counter in shared memory.  Ignored with mpi or
     * on_failure (which must run in the caller's process). */
    int processes;
    /* optional: told of each failed run of this process (on its worker thread, one call at a
       time); when set, the failure is the caller's to report (no line on stderr) */
    void (*on_failure)(void *ud, size_t point, uint64_t rep, int rc, const fs_error_t *err);
    void *on_failure_ud;
} fs_sweep_opts_t;

typedef struct fs_sweep_report {
    size_t runs_total;      /* runs of the plan */
    size_t runs_mine;       /* runs of this shard */
    size_t runs_skipped;    /* already complete (resume) */
    size_t runs_done;       /* run now, all processes */
    size_t runs_failed;     /* failed now, all processes */
    int interrupted;
    int started;            /* the directory was prepared and runs started (0: refused
                               before any run, the counts mean nothing) */
    int index_written;      /* DIR/index.h5 written */
    int rank;               /* MPI rank (0 without MPI) */
    int ranks;              /* MPI ranks (1 without MPI) */
    size_t runs_by_rank[64];/* rank 0: runs done by each of the first 64 ranks */
    /* This process's runs, wall-clock seconds summed over its worker
     * threads: inside fs_run_config, holding the HDF5 lock (every HDF5 call
     * of the process is under it), and waiting for it.  held / run is the
     * serial share s that bounds -j N at 1 / (s + (1 - s) / N)
     * (docs/performance.md "Sweeps"). */
    double run_s, h5_held_s, h5_wait_s;
} fs_sweep_report_t;

void fs_sweep_opts_init(fs_sweep_opts_t *o);

/* Runs the plan's share of runs into o->dir and writes the index when the
 * sweep is not sharded and every run is complete.  Returns 0, FS_EINVAL
 * (the directory holds another sweep, or finished runs without resume),
 * FS_EIO, FS_EINTR (interrupted), or FS_EIO when runs failed (counted in
 * rep->runs_failed; each failure is printed on stderr, or handed to
 * o->on_failure).  The index is written only when every run is complete. */
int fs_sweep_execute(const fs_sweep_plan_t *plan, const fs_sweep_opts_t *o, fs_sweep_report_t *rep,
                     fs_error_t *err);

/* Builds DIR/index.h5 from DIR/sweep.h5 and the run files (fleetsim merge):
 * FS_EINVAL naming the missing runs when some are not complete. */
int fs_sweep_merge(const char *dir, fs_error_t *err);

/* MPI: the number of processes an MPI launcher (mpirun, srun) started, read
 * from its environment (0 when not launched by one). */
int fs_sweep_mpi_launched(void);
/* 1 when this fleetsim was built with MPI. */
int fs_sweep_mpi_available(void);
/* MPI_Init_thread (serialized); *rank and *size set.  0 or FS_EIO. */
int fs_sweep_mpi_init(int *argc, char ***argv, int *rank, int *size, fs_error_t *err);
/* Combines an exit status over the ranks (the largest wins) and finalises. */
int fs_sweep_mpi_finish(int status);

#endif
