/*
 * fs_llmperf: serving presets from a model's architecture and the GPU
 * (docs/services.md "Presets"; issue 35).
 *
 * A catalog of LLMs (layers, hidden size, heads, KV heads, head dim, MLP,
 * experts, vocabulary, context) and of GPUs (dense BF16/FP8 peak FLOP/s,
 * HBM bytes and bandwidth, the per-direction link a TP all-reduce uses),
 * and a roofline that times one engine iteration:
 *
 *   step = max(compute, memory) + all-reduce + overhead
 *   compute = (2 x active linear params x tokens + attention FLOPs) / (TP x peak x eff.compute)
 *   memory  = (weights read / TP + KV bytes read and written per GPU) / (bandwidth x eff.memory)
 *   all-reduce = 2 x layers x 2(TP-1)/TP x tokens x hidden x 2 B / (link x eff.link)
 *
 * From it a preset fills a performance row (fs_svc_perf_cfg_t): prefill
 * (tokens/s of one FS_LLM_PREFILL_CHUNK-token chunk), decode_single (1 /
 * step of one sequence) and decode (max_batch / step of max_batch
 * sequences), both at FS_LLM_DECODE_CTX tokens of context per sequence,
 * and kv_tokens (the memory left after the weights, in blocks of 16).
 *
 * Everything here is a pure function of its arguments: the catalogs are
 * const tables, nothing is allocated, no state is kept.  Sizes are in
 * bytes (GB = 1e9 in messages), times in seconds, rates per second.
 */
#ifndef FS_LLMPERF_H
#define FS_LLMPERF_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_error.h"
#include "fs_config.h"    /* fs_svccfg.h, which needs fs_dist_cfg_t from here */

enum fs_llm_dtype { FS_LLM_BF16 = 0, FS_LLM_FP8 = 1 };    /* weights of the linear layers */

#define FS_LLM_PREFILL_CHUNK 2048   /* tokens of the prefill chunk that `prefill` is timed on */
#define FS_LLM_DECODE_CTX 1024      /* context tokens per sequence that `decode` is timed at */
#define FS_LLM_MAX_BATCH 256        /* max_batch of a preset (vLLM's max_num_seqs) unless written */
#define FS_LLM_NODE_GPUS 8          /* a replica is one node: TP <= 8 */
#define FS_LLM_UTIL_DEFAULT 0.9     /* vLLM's gpu_memory_utilization */

/* One model: the numbers of its Hugging Face config.json. */
typedef struct fs_llm_model {
    const char *name;           /* "llama3-70b": the scenario's performance[].model */
    const char *long_name;      /* "Llama-3.1-70B (= Llama-3.3-70B)" */
    uint32_t layers, hidden;
    uint32_t heads, kv_heads, head_dim;
    uint32_t mlp;               /* intermediate size (of one expert for a MoE) */
    uint32_t experts, top_k;    /* 0, 0: dense */
    uint32_t vocab;             /* untied input embedding and LM head */
    uint32_t context;           /* max_position_embeddings: vLLM's default max_model_len */
    double params_b;            /* published total parameters, billions (the test checks ours) */
    double active_b;            /* published active parameters per token, billions */
    const char *source;
} fs_llm_model_t;

/* One GPU model of the catalog (models/fs_catalog.c names). */
typedef struct fs_llm_gpu {
    const char *name;           /* "H100" */
    double bf16_flops;          /* dense peak, FLOP/s */
    double fp8_flops;           /* dense peak, FLOP/s; 0: no FP8 tensor cores */
    double mem_bytes;           /* memory, bytes */
    double mem_bw;              /* memory bandwidth, bytes/s */
    double link_bw;             /* GPU-to-GPU bandwidth per direction, bytes/s */
    const char *source;
} fs_llm_gpu_t;

/* The roofline's stated efficiencies (docs/services.md "Presets"). */
typedef struct fs_llm_eff {
    double compute;             /* fraction of peak FLOP/s the GEMMs and attention reach */
    double memory;              /* fraction of HBM bandwidth */
    double link;                /* fraction of the link's bandwidth an all-reduce reaches */
    double overhead_s;          /* fixed time per iteration (scheduling, launch, sampling), s */
} fs_llm_eff_t;


/* A replica: what a preset is computed for. */
typedef struct fs_llm_replica {
    const fs_llm_model_t *model;
    const fs_llm_gpu_t *gpu;
    uint32_t tp;                /* GPUs of the replica, tensor-parallel */
    int dtype;                  /* enum fs_llm_dtype */
    double util;                /* gpu_memory_utilization, (0, 1] */
    const fs_llm_eff_t *eff;    /* NULL: the defaults 0.6, 0.8, 0.8, 3 ms */
} fs_llm_replica_t;

/* What one iteration holds. */
typedef struct fs_llm_batch {
    double prefill_tokens;      /* prompt tokens of the iteration's prefill chunks */
    double prefill_seqs;        /* sequences those chunks belong to */
    double prefill_ctx;         /* tokens already in the KV cache of each such sequence */
    double decode_seqs;         /* sequences decoding one token each */
    double decode_ctx;          /* context tokens of each decoding sequence */
} fs_llm_batch_t;

/* The parts of a step (fs_llm_step_time), for tests and docs. */
typedef struct fs_llm_step {
    double flops;               /* per GPU */
    double bytes;               /* HBM bytes per GPU */
    double compute_s, memory_s, comm_s, overhead_s;
    double total_s;             /* max(compute, memory) + comm + overhead */
} fs_llm_step_t;

/* The numbers a preset gives a performance row. */
typedef struct fs_llm_preset {
    double prefill_tps;
    double decode_tps;          /* at max_batch sequences */
    double decode1_tps;
    uint32_t max_batch;
    uint64_t kv_tokens;
    /* the step time's context term (kv_context): the roofline's memory time of one
     * context token's KV read, and the decode rates timed with no context */
    double us_per_kv_token;
    double decode_tps0, decode1_tps0;
} fs_llm_preset_t;

/* ---- catalogs ------------------------------------------------------------- */

const fs_llm_model_t *fs_llm_model_find(const char *name);    /* ignoring case; NULL */
const char *fs_llm_model_name_at(size_t i);              /* NULL past the end (key table) */
const fs_llm_gpu_t *fs_llm_gpu_get(size_t i);            /* NULL past the end */
const fs_llm_gpu_t *fs_llm_gpu_find(const char *name);      /* ignoring case; NULL */

/* ---- sizes ---------------------------------------------------------------- */

/* Parameters from the architecture: all of them, or those one token uses
 * (the top_k experts of a MoE). */
double fs_llm_params(const fs_llm_model_t *m, int active);
/* Bytes of the weights of the whole model: linear layers in dtype, the
 * embedding, LM head and router in BF16 (as FP8 checkpoints keep them). */
double fs_llm_weight_bytes(const fs_llm_model_t *m, int dtype);
/* KV cache bytes one token takes on each GPU of a TP group (BF16; KV heads
 * split over TP, replicated when TP exceeds them, as vLLM does). */
double fs_llm_kv_bytes_gpu(const fs_llm_model_t *m, uint32_t tp);

/* Does the replica fit: TP divides the heads (vLLM's rule), FP8 only on a
 * GPU with it, weights / TP plus one full context of KV within memory x
 * util?  1, or 0 with a one-line reason in why (sizes per GPU). */
int fs_llm_fits(const fs_llm_replica_t *r, char *why, size_t n);
/* The smallest TP (1, 2, 4, 8) at which the model fits, 0 for none. */
uint32_t fs_llm_min_tp(const fs_llm_model_t *m, const fs_llm_gpu_t *g, int dtype, double util);

/* ---- the roofline ---------------------------------------------------------- */

/* Seconds of one iteration; parts (may be NULL) gets its terms. */
double fs_llm_step_time(const fs_llm_replica_t *r, const fs_llm_batch_t *b, fs_llm_step_t *parts);
/* KV tokens a replica holds: (memory x util - weights / TP) per GPU over
 * the KV bytes per token per GPU, rounded down to a multiple of 16; 0 when
 * the weights leave nothing. */
uint64_t fs_llm_kv_tokens(const fs_llm_replica_t *r);
/* The preset of a replica that fits; max_batch 0: FS_LLM_MAX_BATCH, lowered
 * to the sequences of FS_LLM_DECODE_CTX + 1 tokens the KV cache holds
 * (kv_tokens: the cache to size that by, 0 for the preset's own).  Its
 * context term: us_per_kv_token = KV bytes per token per GPU / (bandwidth x
 * eff.memory), with decode_tps0 and decode1_tps0 at no context, so that a
 * memory-bound decode step at C context tokens is step(b) + C x that. */
void fs_llm_preset(const fs_llm_replica_t *r, uint32_t max_batch, uint64_t kv_tokens,
                   fs_llm_preset_t *out);

/* ---- performance rows ------------------------------------------------------- */

/* Fills the preset rows of every service (rows with `model`): the numbers
 * not written (row->given) from fs_llm_preset, tp resolved to the
 * service's gpus.  A row without a model must have prefill and decode
 * written.  0, or FS_EINVAL with *key (keylen bytes) the dotted key to
 * blame ("services.0.performance.1.tp"; the row itself for a key not
 * written) and err's message starting with that key. */
int fs_llm_fill_services(fs_services_cfg_t *sc, char *key, size_t keylen, fs_error_t *err);

#endif
