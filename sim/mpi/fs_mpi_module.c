/*
 * fleetsim-mpi.so: the MPI side of fs_mpi_ops_t (sim/api/fs_mpi.h), the
 * one place that includes mpi.h.  Built only with FLEETSIM_MPI, linked
 * with the MPI library, loaded by the program on first use.
 */
#include "../api/fs_mpi.h"

#include <mpi.h>
#include <stdio.h>

#define TAG_REQ 101
#define TAG_WORK 102

/* The one exported symbol (the module is built with hidden visibility). */
__attribute__((visibility("default"))) const fs_mpi_ops_t *fs_mpi_module(void);

static int mod_init(int *argc, char ***argv, int *rank, int *size, char *msg, size_t msglen)
{
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
        snprintf(msg, msglen, "MPI_Init_thread failed");
        return -1;
    }
    if (provided < MPI_THREAD_SERIALIZED) {
        MPI_Finalize();
        snprintf(msg, msglen, "the MPI library does not allow calls from several threads "
                 "(MPI_THREAD_SERIALIZED)");
        return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return 0;
}

static void mod_world(int *rank, int *size)
{
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
}

static int mod_finish(int status)
{
    int all = status;
    MPI_Allreduce(&status, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return all;
}

static void mod_request(long long *k)
{
    long long req = 0;
    *k = -1;
    MPI_Send(&req, 1, MPI_LONG_LONG, 0, TAG_REQ, MPI_COMM_WORLD);
    MPI_Recv(k, 1, MPI_LONG_LONG, 0, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static int mod_poll(int *src)
{
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQ, MPI_COMM_WORLD, &flag, &st);
    if (!flag)
        return 0;
    long long req;
    MPI_Recv(&req, 1, MPI_LONG_LONG, st.MPI_SOURCE, TAG_REQ, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    *src = st.MPI_SOURCE;
    return 1;
}

static void mod_reply(int src, long long k)
{
    MPI_Send(&k, 1, MPI_LONG_LONG, src, TAG_WORK, MPI_COMM_WORLD);
}

static void mod_bcast_int(int *v)
{
    MPI_Bcast(v, 1, MPI_INT, 0, MPI_COMM_WORLD);
}

static void mod_sum_u64(const unsigned long long *in, unsigned long long *out, int n)
{
    MPI_Allreduce(in, out, n, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
}

static void mod_gather_u64(unsigned long long mine, unsigned long long *by)
{
    MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, by, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
}

const fs_mpi_ops_t *fs_mpi_module(void)
{
    static const fs_mpi_ops_t ops = {
        .abi = FS_MPI_ABI,
        .init = mod_init,
        .world = mod_world,
        .finish = mod_finish,
        .request = mod_request,
        .poll = mod_poll,
        .reply = mod_reply,
        .bcast_int = mod_bcast_int,
        .sum_u64 = mod_sum_u64,
        .gather_u64 = mod_gather_u64,
    };
    return &ops;
}
