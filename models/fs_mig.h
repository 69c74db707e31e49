/*
 * fs_mig: MIG (Multi-Instance GPU) partition geometry, per GPU model.
 *
 * What it owns: a read-only profile table per MIG-capable GPU model (A100
 * 40 GB, A100 80 GB, H100 80 GB, H200 141 GB, B200 180 GB, H100 NVL 94 GB,
 * A30 24 GB) and the layout
 * state of one GPU under MIG (fs_mig_layout_t, a value the caller embeds).
 * Sources of every number: docs/mig.md (NVIDIA MIG user guide, NVML, and
 * NVIDIA/mig-parted's config-default.yaml).
 *
 * Geometry.  A MIG GPU has 8 memory slices, which are also the placement
 * slots (NVML's nvmlGpuInstancePlacement_t: "index of first occupied memory
 * slice" and "number of memory slices occupied"), and 7 compute (SM)
 * slices; the A30 has 4 of each (fs_mig_model_t.slots and .compute, the
 * A30's starts all below 4).  A profile occupies `mem_slices` consecutive slots starting at one
 * of its valid start slots (`starts`, a bitmask; `nvidia-smi mig -lgipp`
 * prints them as {starts}:size).  A GPU instance can be created iff its slots
 * overlap no existing instance (NVML) and the profile's instance cap is not
 * reached (the "+me" media-extension profile: one per GPU).  The compute
 * slices an instance holds are numbered from its start slot (compute slices
 * start .. start+compute-1): a derived view for reporting stranded compute;
 * feasibility is decided by the memory slots alone, and because compute <=
 * mem_slices an overlap in compute implies one in memory.
 *
 * Invariants of a layout (checked by fs_mig_layout_check):
 *   mem   == OR of the slot masks of the instances, and no two overlap;
 *   sm    == OR of their compute masks;
 *   count[p] == number of instances of profile p <= profile cap;
 *   ninst <= the model's compute slices (7, A30 4: each instance >= 1).
 * An instance is named by its start slot, which is unique on a GPU.
 *
 * Cost: fs_mig_find, _place, _remove and _fits are O(slots) = O(8) with no
 * allocation (the state is a 25-byte value); fs_mig_layout_build
 * (a whole layout) is a bounded backtracking search over at most 7 instances
 * with at most 7 starts each.  Nothing in this module allocates.
 */
#ifndef FS_MIG_H
#define FS_MIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_error.h"
#include "../traces/fs_migname.h"

#define FS_MIG_SLOTS 8          /* memory slices = placement slots per GPU, at most (A30: 4) */
#define FS_MIG_COMPUTE 7        /* compute (SM) slices per GPU, at most (A30: 4) */
#define FS_MIG_MAX_PROFILES 8   /* profiles per model (6 models have 7, A30 5) */
#define FS_MIG_MAX_INSTANCES 7  /* GPU instances per GPU */

typedef enum fs_mig_gpu {
    FS_MIG_A100_40GB,
    FS_MIG_A100_80GB,
    FS_MIG_H100_80GB,
    FS_MIG_H200_141GB,
    FS_MIG_B200_180GB,
    FS_MIG_H100_94GB,       /* H100 NVL */
    FS_MIG_A30_24GB,        /* 4 compute and 4 memory slices */
    FS_MIG_GPU_COUNT
} fs_mig_gpu_t;

typedef struct fs_mig_profile {
    const char *name;       /* "1g.10gb", "1g.10gb+me": as mig-parted and the device plugin spell it */
    uint8_t compute;        /* compute slices, of the model's (7; A30 4) */
    uint8_t mem_slices;     /* memory slices = placement size, of the model's (8; A30 4) */
    uint8_t starts;         /* bit s set: slot s is a valid start (nvidia-smi mig -lgipp) */
    uint8_t max_count;      /* instances per GPU ("Number of Instances Available") */
    uint16_t memory_gb;     /* nominal memory in the name, GB */
    bool media_ext;         /* "+me": holds the GPU's media engines; max_count 1 */
    uint16_t gpu_milli;     /* compute share for accounting: compute * 1000 / slices, rounded down */
    uint8_t slices;         /* the model's compute slices (7; A30 4): compute's whole */
} fs_mig_profile_t;

typedef struct fs_mig_model {
    const char *name;       /* "H100-80GB" (mig-parted's naming) */
    const char *catalog;    /* fs_catalog name this model maps to ("H100"), or NULL */
    uint16_t memory_gb;     /* whole-GPU memory as the 7g profile (A30: 4g) names it */
    uint8_t nprofiles;
    fs_mig_profile_t profile[FS_MIG_MAX_PROFILES];  /* guide's table order: 1g, 1g+me, 1g (2 slices), 2g, 3g, 4g, 7g
                                                       (A30: 1g, 1g+me, 2g, 2g+me, 4g) */
    uint8_t by_size[FS_MIG_MAX_PROFILES];  /* profile indexes by memory slices, then compute, descending; then index */
    uint8_t slots;          /* memory slices = placement slots (8; A30 4) */
    uint8_t compute;        /* compute slices (7; A30 4): also the most instances */
} fs_mig_model_t;

typedef struct fs_mig_inst {
    uint8_t profile;        /* index into the model's profile table */
    uint8_t start;          /* first slot; names the instance */
} fs_mig_inst_t;

/* The layout of one GPU under MIG.  Zero-initialised = MIG enabled, no
 * instances (fs_mig_layout_clear).  Instances are kept in ascending start. */
typedef struct fs_mig_layout {
    uint8_t mem;                            /* occupied memory slots, bit s = slot s */
    uint8_t sm;                             /* occupied compute slices, bit c = slice c */
    uint8_t ninst;
    uint8_t count[FS_MIG_MAX_PROFILES];     /* instances per profile */
    fs_mig_inst_t inst[FS_MIG_MAX_INSTANCES];
} fs_mig_layout_t;

/* A layout as configured: instances per profile (a mig-parted "mig-devices"
 * map), or MIG disabled (the GPU is used whole). */
typedef struct fs_mig_spec {
    bool enabled;                           /* false: all-disabled */
    uint8_t count[FS_MIG_MAX_PROFILES];
} fs_mig_spec_t;

/* ---- the tables ---- */
const fs_mig_model_t *fs_mig_model(fs_mig_gpu_t gpu);      /* NULL when out of range */
/* Case-insensitive: "H100-80GB", or the catalog name "H100" (the catalog's
 * A100 is the 80 GB part).  Returns the model or -1. */
int fs_mig_model_find(const char *name);
/* fs_mig_model_find for the scenario loader: the model, or NULL and
 * FS_EINVAL in err naming the models that have MIG. */
const fs_mig_model_t *fs_mig_model_lookup(const char *name, fs_error_t *err);
/* Exact profile name ("1g.10gb+me"); returns the index or -1. */
int fs_mig_profile_find(const fs_mig_model_t *m, const char *name, size_t len);

/* ---- profiles across models (what a pod asks) ----
 * A pod asks a profile by name ("1g.10gb"), the device plugin's resource
 * nvidia.com/mig-1g.10gb, whatever the GPU model.  The name is coded as one
 * positive int32 (traces/fs_migname.h: compute << 16 | memory_gb << 1 |
 * media_ext), so jobs carry it without a name table; 0 means "no MIG
 * profile".  A pool's profile matches a code when its name does. */
static inline int32_t fs_mig_code(const fs_mig_profile_t *p)
{
    return (int32_t)((uint32_t)p->compute << 16 | (uint32_t)p->memory_gb << 1 | (p->media_ext ? 1u : 0u));
}
/* The code of a profile name some MIG model has, or 0 (an unknown name).
 * The scenario loader gives it to the trace readers as
 * fs_trace_opts_t.mig_profile. */
int32_t fs_mig_code_find(const char *name, size_t len);
/* The profile of model m with this code, or -1. */
int fs_mig_profile_of_code(const fs_mig_model_t *m, int32_t code);
/* A code's compute share in milli-GPUs (compute * 1000 / its GPU's compute
 * slices, rounded down: traces/fs_migname.h fs_migname_slices). */
_Static_assert(FS_MIG_COMPUTE == FS_MIGNAME_COMPUTE, "one count of compute slices");
static inline uint32_t fs_mig_code_milli(int32_t code) { return fs_migname_milli(code); }
/* The code's name into buf ("1g.10gb+me"); returns buf. */
static inline const char *fs_mig_code_name(int32_t code, char *buf, size_t n)
{
    return fs_migname_of(code, buf, n);
}

/* ---- one GPU ---- */
void fs_mig_layout_clear(fs_mig_layout_t *l);
/* Slot mask a profile placed at `start` occupies. */
static inline uint8_t fs_mig_slots(const fs_mig_profile_t *p, unsigned start)
{
    return (uint8_t)(((1u << p->mem_slices) - 1u) << start);
}
/* Lowest valid start slot at which profile p can be created now, or -1.
 * The rule: among the profile's valid starts (ascending), the first whose
 * slots are all free, provided the profile's cap is not reached.  O(8). */
int fs_mig_find(const fs_mig_model_t *m, const fs_mig_layout_t *l, unsigned p);
/* The start that keeps the most room: among the free valid starts, the one
 * after which the most instances of the largest profiles still fit
 * (fs_mig_fits compared profile by profile from the largest footprint down:
 * memory slices, then compute), ties to the lowest start; -1 when none.
 * The guide's worked examples of nvidia-smi creating instances without a
 * placement (a 3-2-1-1 and a 2-1-1-1-1-1 geometry on A100) land exactly
 * where this rule puts them (tests/test_mig.c); the driver's own rule is not
 * documented.  O(8 x profiles x 8). */
int fs_mig_find_best(const fs_mig_model_t *m, const fs_mig_layout_t *l, unsigned p);
/* Can profile p be created at `start`? */
bool fs_mig_can_place_at(const fs_mig_model_t *m, const fs_mig_layout_t *l, unsigned p, unsigned start);
/* Creates an instance of profile p at `start`, or at fs_mig_find's slot when
 * start < 0.  Returns the start slot used, or FS_EINVAL (layout unchanged)
 * when it cannot be placed there. */
int fs_mig_place(const fs_mig_model_t *m, fs_mig_layout_t *l, unsigned p, int start);
/* Destroys the instance that starts at `start`.  Returns its profile index,
 * or FS_EINVAL (layout unchanged) when no instance starts there. */
int fs_mig_remove(const fs_mig_model_t *m, fs_mig_layout_t *l, unsigned start);
/* How many more instances of profile p fit, given the instances in place
 * (none moved): the greedy lowest-start count, capped by the profile's cap.
 * Greedy is optimal here because all placements of one profile have the
 * same length (interval scheduling).  O(8). */
unsigned fs_mig_fits(const fs_mig_model_t *m, const fs_mig_layout_t *l, unsigned p);
/* Compute slices that are free but unusable: their memory slot is taken
 * (e.g. slice 3 beside a 3g instance at slot 0). */
static inline uint8_t fs_mig_stranded_sm(const fs_mig_layout_t *l)
{
    return (uint8_t)(~l->sm & l->mem & ((1u << FS_MIG_COMPUTE) - 1u));
}
/* Checks the invariants above; 0 or FS_EINTERNAL with the broken one named. */
int fs_mig_layout_check(const fs_mig_model_t *m, const fs_mig_layout_t *l, fs_error_t *err);

/* ---- whole layouts ---- */
/* Builds the layout of `spec` on an empty GPU: finds non-overlapping starts
 * for every requested instance (largest profiles first, each at its lowest
 * start that leaves the rest placeable; backtracking, so a layout is
 * accepted iff some placement exists).  0 and *out set, or FS_EINVAL naming
 * the layout (out cleared).  A disabled spec builds an empty layout. */
int fs_mig_layout_build(const fs_mig_model_t *m, const fs_mig_spec_t *spec, fs_mig_layout_t *out,
                        fs_error_t *err);
/* Does the spec fit (fs_mig_layout_build without the output)? */
bool fs_mig_spec_valid(const fs_mig_model_t *m, const fs_mig_spec_t *spec);

/*
 * Parses a layout for one GPU model, as a scenario writes it:
 *   a mig-parted config name: all-disabled, all-enabled, all-balanced, or
 *     all-<profile> with '+' written '.' (all-1g.10gb, all-1g.10gb.me), which
 *     means as many instances of that profile as fit on one GPU;
 *   or a list of profiles: "3g.40gb, 2g.20gb, 1g.10gb x2" (items separated
 *     by ','; an optional count after the name as "xN", "*N" or ":N",
 *     default 1; a name repeated adds up).
 * all-balanced is mig-parted's formula (2 x the 1g profile with the most
 * instances, 1 x 2g, 1 x 3g).  The result must fit on the GPU.
 * On error: FS_EINVAL, a message naming the token and what was expected,
 * and *err_off (when not NULL) the 0-based offset in `text` of the token, so
 * the scenario loader can report FILE:LINE:COL+off.
 */
int fs_mig_layout_parse(const fs_mig_model_t *m, const char *text, fs_mig_spec_t *out, size_t *err_off,
                        fs_error_t *err);

/* ---- re-partitioning: the planning step (docs/mig.md "Re-partitioning") ----
 * What mig-manager would apply to one GPU so that it offers profile p: the
 * instances in `keep` (bit i = instance i of `cur`, the ones a pod holds)
 * stay where they are (a GPU instance cannot move while a process uses it),
 * every other instance is destroyed, and profile p is created at every free
 * valid start, lowest first, up to the profile's cap.  Lowest-first is
 * optimal for one profile (all its placements have the same length:
 * interval scheduling), so no other re-cut that keeps `keep` in place holds
 * more instances of p.  With keep == 0 and an idle GPU this is mig-parted's
 * `all-<profile>` config.  Slots p cannot use stay empty (no other profile
 * is added: the re-cut is for the pods of p that wait).  *out is a valid
 * layout (fs_mig_layout_check) and its spec (fs_mig_spec_of) is one
 * fs_mig_layout_parse accepts in the text fs_mig_spec_format writes.
 * Returns the instances of p in *out, kept ones included.  O(8). */
unsigned fs_mig_recut(const fs_mig_model_t *m, const fs_mig_layout_t *cur, uint8_t keep, unsigned p,
                      fs_mig_layout_t *out);
/* The spec (instances per profile) of a built layout; enabled. */
void fs_mig_spec_of(const fs_mig_layout_t *l, fs_mig_spec_t *out);
/* A spec as fs_mig_layout_parse reads it back: "all-disabled",
 * "all-enabled" (MIG on, no instance) or the list "3g.40gb, 1g.10gb x2"
 * (profiles in table order).  Returns the length written (truncated to
 * n - 1 like snprintf; 128 bytes always suffice). */
size_t fs_mig_spec_format(const fs_mig_model_t *m, const fs_mig_spec_t *spec, char *buf, size_t n);

#endif
