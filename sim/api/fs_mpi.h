/*
 * fs_mpi: the MPI calls of a distributed sweep or plan, behind a table of
 * functions that a separate module (sim/mpi/fs_mpi_module.c, built as
 * fleetsim-mpi.so and linked with the MPI library) provides.
 *
 * Why a module: linking libmpi into the program makes every command load
 * Open MPI's dozen libraries at start-up, `fleetsim version` included
 * (docs/performance.md, "Start-up").  The program loads the module only
 * when it is started by an MPI launcher (fs_sweep_mpi_init).
 *
 * The table speaks plain C types only, so that nothing outside the module
 * includes mpi.h.  Every call is collective or point-to-point on
 * MPI_COMM_WORLD; the worker threads serialize theirs with a mutex
 * (MPI_THREAD_SERIALIZED).
 */
#ifndef FS_MPI_H
#define FS_MPI_H

#include <stddef.h>

#include "../fs_error.h"

#define FS_MPI_ABI 1
#define FS_MPI_MODULE_FILE "fleetsim-mpi.so"
#define FS_MPI_MODULE_SYMBOL "fs_mpi_module"

typedef struct fs_mpi_ops {
    int abi;    /* FS_MPI_ABI */
    /* MPI_Init_thread asking MPI_THREAD_SERIALIZED, then this process's
     * rank and the world's size: 0, or -1 with a message in msg. */
    int (*init)(int *argc, char ***argv, int *rank, int *size, char *msg, size_t msglen);
    /* This process's rank and the world's size (after init). */
    void (*world)(int *rank, int *size);
    /* The largest status over the ranks, then MPI_Finalize. */
    int (*finish)(int status);
    /* A worker rank asks rank 0 for its next run: *k, or -1 when none is left. */
    void (*request)(long long *k);
    /* Rank 0: 1 and the asking rank in *src when a request is pending (it is
     * received), else 0 at once. */
    int (*poll)(int *src);
    /* Rank 0: the answer to src's request. */
    void (*reply)(int src, long long k);
    /* *v from rank 0 to every rank. */
    void (*bcast_int)(int *v);
    /* out[i] = the sum over ranks of in[i], on every rank. */
    void (*sum_u64)(const unsigned long long *in, unsigned long long *out, int n);
    /* Rank 0 gets every rank's value in by[rank] (by: world size entries;
     * NULL on the other ranks). */
    void (*gather_u64)(unsigned long long mine, unsigned long long *by);
} fs_mpi_ops_t;

/* The module's one export (FS_MPI_MODULE_SYMBOL). */
typedef const fs_mpi_ops_t *(*fs_mpi_module_fn)(void);

/* Loads the module (sim/api/fs_mpiload.c says where it looks): 0 and *ops,
 * or FS_EIO naming the places tried or why the module found is unusable. */
int fs_mpi_load(const fs_mpi_ops_t **ops, fs_error_t *err);

#endif
