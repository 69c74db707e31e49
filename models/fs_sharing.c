/* fs_sharing: the slowdown of jobs sharing a GPU (fs_sharing.h). */
#include "fs_sharing.h"

double fs_sharing_speed(int kind, uint32_t n, uint32_t k)
{
    if (n < 1)
        return 1.0;
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    switch (kind) {
    case FS_SHARING_TIME_SLICING:
        return 1.0 / (double)k;     /* round-robin among the k contexts */
    case FS_SHARING_MPS: {
        const double demand = 1.0;  /* SMs a job alone would use, as a share of the GPU */
        double s = (1.0 / (double)n) / demand;
        return s < 1.0 ? s : 1.0;
    }
    default:
        return 1.0;
    }
}
