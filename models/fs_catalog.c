#include "fs_catalog.h"

#include <strings.h>

/*
 * Figures and sources: docs/catalog.md.  Speed is dense BF16/FP16 tensor
 * throughput relative to H100 SXM (NVIDIA datasheets: V100 125, A100 312,
 * H100 989, H200 989, B200 2250 TFLOPS dense; T4 65, A10 125 FP16 tensor;
 * L40S 362 BF16 dense; H100 NVL 835),
 * a first-order stand-in for training speed; scenarios can override it.
 * host_w is server power per GPU at peak: DGX A100 6.5 kW / 8, DGX H100
 * 10.2 kW / 8 (Epoch AI energy.py), DGX B200 14.3 kW / 8 [U].
 */
static const fs_gpu_model_t catalog[] = {
    {"A100", "NVIDIA A100 SXM4 80GB", 80, 400, 812.5, 600, 312.0 / 989.0,
     "NVIDIA A100 datasheet; DGX A100 6.5 kW (Epoch AI)"},
    {"H100", "NVIDIA H100 SXM5 80GB", 80, 700, 1275, 900, 1.0,
     "NVIDIA H100 datasheet; DGX H100 10.2 kW (Epoch AI)"},
    {"H200", "NVIDIA H200 SXM 141GB", 141, 700, 1275, 900, 1.0,
     "NVIDIA H200 datasheet; host power as DGX H100 [U]"},
    {"B200", "NVIDIA B200 SXM 180GB", 180, 1000, 1787.5, 1800, 2250.0 / 989.0,
     "NVIDIA DGX B200 datasheet; 14.3 kW per DGX [U]"},
    {"V100", "NVIDIA V100 SXM2 32GB", 32, 300, 437.5, 300, 125.0 / 989.0,
     "NVIDIA V100 datasheet; DGX-1 3.5 kW"},
    {"T4", "NVIDIA T4 16GB", 16, 70, 250, 0, 65.0 / 989.0,
     "NVIDIA T4 datasheet; host share [U]"},
    {"A10", "NVIDIA A10 24GB", 24, 150, 350, 0, 125.0 / 989.0,
     "NVIDIA A10 datasheet; host share [U]"},
    {"P100", "NVIDIA P100 SXM2 16GB", 16, 300, 437.5, 160, 21.2 / 989.0,
     "NVIDIA P100 datasheet (FP16, no tensor cores)"},
    {"L40S", "NVIDIA L40S 48GB (PCIe)", 48, 350, 700, 0, 362.0 / 989.0,
     "NVIDIA L40S datasheet; host share [U]"},
    /* a MIG model (models/fs_mig.c, docs/mig.md): 835 TFLOPS BF16 dense (1,671 sparse),
     * 400 W max, NVLink bridge 600 GB/s; host share as the other PCIe cards [U] */
    {"H100-NVL", "NVIDIA H100 NVL 94GB (PCIe)", 94, 400, 800, 600, 835.0 / 989.0,
     "NVIDIA H100 NVL product brief; host share [U]"},
    /* a MIG model with 4 compute slices (models/fs_mig.c, docs/mig.md): 165 TFLOPS BF16
     * dense (330 sparse), 165 W, NVLink bridge 200 GB/s; host share as the A10 [U] */
    {"A30", "NVIDIA A30 24GB (PCIe)", 24, 165, 350, 200, 165.0 / 989.0,
     "NVIDIA A30 datasheet; host share [U]"},
};

size_t fs_catalog_count(void) { return sizeof catalog / sizeof catalog[0]; }

const fs_gpu_model_t *fs_catalog_get(size_t i)
{
    return i < fs_catalog_count() ? &catalog[i] : NULL;
}

int fs_catalog_find(const char *name)
{
    for (size_t i = 0; i < fs_catalog_count(); i++)
        if (strcasecmp(catalog[i].name, name) == 0)
            return (int)i;
    return -1;
}
