/*
 * Tests of the serving presets (models/fs_llmperf.c): the catalog against
 * its published parameter counts and KV sizes, the roofline against hand
 * arithmetic, the fit rule and its refusals, the loader's filling of
 * performance rows (written numbers win, errors at FILE:LINE:COL), and
 * the validation against TensorRT-LLM's published offline throughput and
 * Sarathi-Serve's measured steps within a stated band, which a broken
 * roofline leaves.  The pairs table of docs/services.md and the validation
 * table of docs/validation.md are generated here and must be up to date
 * (FS_UPDATE_DOCS=1 rewrites them).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs_test_util.h"
#include "models/fs_config.h"
#include "models/fs_llmperf.h"
#include "scenarios/fs_scenario.h"
#include "sim/fs_alloc.h"

static int64_t live0;

static int setup(void **state)
{
    (void)state;
    live0 = fs_alloc_live();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    assert_int_equal(fs_alloc_live(), live0);
    return 0;
}

static const fs_llm_model_t *model(const char *name)
{
    const fs_llm_model_t *m = fs_llm_model_find(name);
    if (!m)
        fail_msg("no model %s", name);
    return m;
}

static const fs_llm_gpu_t *gpu(const char *name)
{
    const fs_llm_gpu_t *g = fs_llm_gpu_find(name);
    if (!g)
        fail_msg("no GPU %s", name);
    return g;
}

static fs_llm_replica_t replica(const char *m, const char *g, uint32_t tp, int dtype)
{
    return (fs_llm_replica_t){model(m), gpu(g), tp, dtype, FS_LLM_UTIL_DEFAULT, NULL};
}

/* ---- the catalog ------------------------------------------------------------ */

/* Parameters counted from the architecture match the published totals
 * (1%) and active counts (2%); KV bytes per token match DOMAIN.md 6.3
 * (128, 320, 504, 128 KiB) exactly. */
static void test_catalog(void **state)
{
    (void)state;
    const char *name;
    size_t n = 0;
    for (size_t i = 0; (name = fs_llm_model_name_at(i)) != NULL; i++, n++) {
        const fs_llm_model_t *m = model(name);
        double all = fs_llm_params(m, 0) / 1e9, act = fs_llm_params(m, 1) / 1e9;
        if (fabs(all / m->params_b - 1) > 0.01 || fabs(act / m->active_b - 1) > 0.02)
            fail_msg("%s: %.2f B parameters, %.2f B active (published %.2f, %.2f)", name, all, act,
                     m->params_b, m->active_b);
        assert_true(m->heads * m->head_dim == m->hidden || m->experts);  /* Qwen3: 64 x 128 > 4096 */
    }
    assert_int_equal(n, 6);
    assert_double_equal(fs_llm_kv_bytes_gpu(model("llama3-8b"), 1), 128 * 1024, 0);
    assert_double_equal(fs_llm_kv_bytes_gpu(model("llama3-70b"), 1), 320 * 1024, 0);
    assert_double_equal(fs_llm_kv_bytes_gpu(model("llama3-405b"), 1), 504 * 1024, 0);
    assert_double_equal(fs_llm_kv_bytes_gpu(model("mixtral-8x7b"), 1), 128 * 1024, 0);
    /* split over TP, replicated past the KV heads (Qwen3 has 4): vLLM */
    assert_double_equal(fs_llm_kv_bytes_gpu(model("llama3-70b"), 8), 40 * 1024, 0);
    assert_double_equal(fs_llm_kv_bytes_gpu(model("qwen3-235b-a22b"), 8),
                        fs_llm_kv_bytes_gpu(model("qwen3-235b-a22b"), 4), 0);
    /* weights: linear layers in the dtype, embedding and LM head in BF16 */
    const fs_llm_model_t *m8 = model("llama3-8b");
    double emb = 2.0 * 128256 * 4096;
    assert_double_equal(fs_llm_weight_bytes(m8, FS_LLM_BF16), 2 * fs_llm_params(m8, 0), 1);
    assert_double_equal(fs_llm_weight_bytes(m8, FS_LLM_FP8), fs_llm_params(m8, 0) - emb + 2 * emb, 1);
    /* the GPUs of DOMAIN.md 6.3; A100 has no FP8 */
    assert_double_equal(gpu("h100")->fp8_flops, 1979e12, 0);
    assert_double_equal(gpu("A100")->fp8_flops, 0, 0);
    assert_double_equal(gpu("L40S")->mem_bw, 864e9, 0);
    assert_null(fs_llm_gpu_find("V100"));
    assert_null(fs_llm_gpu_get(5));
}

/* ---- the roofline -------------------------------------------------------------- */

/* Llama-3-8B, BF16, one H100.  One sequence decoding at 1,024 tokens of
 * context is memory-bound: it reads the linear layers and the LM head
 * (32 x 218,103,808 + 525,336,576 parameters, 2 bytes each) and 1,024
 * tokens of KV and writes one (131,072 bytes each), at 0.8 x 3.35 TB/s,
 * plus 3 ms.  A 2,048-token prefill is compute-bound: 2 x 6,979,321,856
 * x 2,048 + 2 x 525,336,576 (one sequence's logits) + attention 4 x 32 x
 * 32 x 128 x 2,048 x 2,049 / 2 FLOPs at 0.6 x 989 TFLOP/s. */
static void test_step_by_hand(void **state)
{
    (void)state;
    fs_llm_replica_t r = replica("llama3-8b", "H100", 1, FS_LLM_BF16);
    fs_llm_step_t s;
    fs_llm_batch_t one = {0, 0, 0, 1, 1024};
    double bytes = (32.0 * 218103808 + 525336576) * 2 + 1025.0 * 131072;
    double want = bytes / (3.35e12 * 0.8) + 3e-3;
    assert_double_equal(fs_llm_step_time(&r, &one, &s), want, want * 1e-12);
    assert_true(s.memory_s > s.compute_s);
    assert_double_equal(s.comm_s, 0, 0);

    fs_llm_batch_t pre = {2048, 1, 0, 0, 0};
    double flops = 2.0 * 32 * 218103808 * 2048 + 2.0 * 525336576 + 4.0 * 32 * 32 * 128 * 2048 * 2049 / 2;
    want = flops / (989e12 * 0.6) + 3e-3;
    assert_double_equal(fs_llm_step_time(&r, &pre, &s), want, want * 1e-12);
    assert_true(s.compute_s > s.memory_s);

    /* Sarathi-Serve's observation: 3 decodes added to a compute-bound
     * prefill of the same size cost almost nothing (217.2 vs 217.6 ms) */
    fs_llm_batch_t mixed = {2045, 1, 0, 3, 1024};
    double tm = fs_llm_step_time(&r, &mixed, NULL), tp = fs_llm_step_time(&r, &pre, NULL);
    assert_true(fabs(tm / tp - 1) < 0.01);

    /* TP: compute and weights divide by 4, an all-reduce appears */
    fs_llm_replica_t r4 = replica("llama3-70b", "H100", 4, FS_LLM_BF16), r1 = r4;
    r1.tp = 1;
    fs_llm_step_t s4, s1;
    fs_llm_step_time(&r4, &pre, &s4);
    fs_llm_step_time(&r1, &pre, &s1);
    assert_double_equal(s4.compute_s * 4, s1.compute_s, s1.compute_s * 1e-12);
    double comm = 2.0 * 80 * 2 * 3 / 4 * 2048 * 8192 * 2 / (450e9 * 0.8);
    assert_double_equal(s4.comm_s, comm, comm * 1e-12);

    /* FP8 halves the linear layers' bytes and doubles their FLOP/s */
    fs_llm_replica_t f = replica("llama3-8b", "H100", 1, FS_LLM_FP8);
    fs_llm_step_t sf;
    fs_llm_step_time(&f, &one, &sf);
    double fbytes = 32.0 * 218103808 + 525336576.0 * 2 + 1025.0 * 131072;
    assert_double_equal(sf.bytes, fbytes, 1);

    /* a MoE reads the experts its tokens route to: one token, 2 of 8 */
    fs_llm_replica_t x = replica("mixtral-8x7b", "H100", 2, FS_LLM_BF16);
    fs_llm_step_t sx1, sxp;
    fs_llm_step_time(&x, &one, &sx1);
    fs_llm_step_time(&x, &pre, &sxp);
    const fs_llm_model_t *mx = model("mixtral-8x7b");
    double router = 32.0 * 4096 * 8, lm = 32000.0 * 4096;
    double active = (fs_llm_params(mx, 1) - 2 * lm - router) * 2 + (lm + router) * 2;
    assert_double_equal(sx1.bytes, active / 2 + 1025 * fs_llm_kv_bytes_gpu(mx, 2), 1e3);
    assert_true(sxp.bytes > 3 * sx1.bytes);   /* all 8 experts for 2,048 tokens */

    /* nothing to do takes no time */
    fs_llm_batch_t none = {0};
    assert_double_equal(fs_llm_step_time(&r, &none, NULL), 0, 0);
}

/* ---- fitting on a node ------------------------------------------------------------ */

static void test_fit(void **state)
{
    (void)state;
    const fs_llm_model_t *m405 = model("llama3-405b");
    /* 812 GB of BF16 weights: 101.5 GB per H100 at tp 8, above 72 GB */
    assert_int_equal(fs_llm_min_tp(m405, gpu("H100"), FS_LLM_BF16, 0.9), 0);
    assert_int_equal(fs_llm_min_tp(m405, gpu("H100"), FS_LLM_FP8, 0.9), 8);
    assert_int_equal(fs_llm_min_tp(m405, gpu("H200"), FS_LLM_BF16, 0.9), 8);
    assert_int_equal(fs_llm_min_tp(m405, gpu("B200"), FS_LLM_FP8, 0.9), 4);
    assert_int_equal(fs_llm_min_tp(m405, gpu("A100"), FS_LLM_FP8, 0.9), 0);   /* no FP8 */
    assert_int_equal(fs_llm_min_tp(m405, gpu("L40S"), FS_LLM_FP8, 0.9), 0);
    assert_int_equal(fs_llm_min_tp(model("llama3-8b"), gpu("L40S"), FS_LLM_BF16, 0.9), 1);
    assert_int_equal(fs_llm_min_tp(model("llama3-70b"), gpu("H100"), FS_LLM_BF16, 0.9), 4);
    assert_int_equal(fs_llm_min_tp(model("llama3-70b"), gpu("H100"), FS_LLM_FP8, 0.9), 2);
    assert_int_equal(fs_llm_min_tp(model("qwen3-235b-a22b"), gpu("H100"), FS_LLM_BF16, 0.9), 8);
    /* one full context of KV counts: 70B BF16 on 4 L40S leaves 7.9 GB per
     * GPU after 35.3 GB of weights, less than the 10.7 GB one 131,072-token
     * context takes per GPU */
    fs_llm_replica_t r = replica("llama3-70b", "L40S", 4, FS_LLM_BF16);
    char why[320];
    assert_int_equal(fs_llm_fits(&r, why, sizeof why), 0);
    assert_string_equal(why, "llama3-70b in bf16 at tp 4 needs 35.3 GB of weights + 10.7 GB of KV "
                             "(one 131072-token context) per GPU, above the 43.2 GB usable of each "
                             "L40S (48 GB x 0.90)");
    r.tp = 3;
    assert_int_equal(fs_llm_fits(&r, why, sizeof why), 0);
    assert_non_null(strstr(why, "tp 3 does not divide"));
    /* kv_tokens: (80 GB x 0.9 - 16.06 GB) / 128 KiB, down to a multiple of 16 */
    fs_llm_replica_t k = replica("llama3-8b", "H100", 1, FS_LLM_BF16);
    double free = 72e9 - fs_llm_weight_bytes(model("llama3-8b"), FS_LLM_BF16);
    uint64_t want = (uint64_t)floor(free / 131072) / 16 * 16;
    assert_int_equal(fs_llm_kv_tokens(&k), want);
    assert_int_equal(fs_llm_kv_tokens(&k) % 16, 0);
}

/* ---- offline throughput under the engine's step model ------------------------------ */

/*
 * All requests at once, fixed lengths: every iteration runs B sequences,
 * B = max_batch or, if fewer, the sequences the KV cache holds at their
 * mean length in + out/2.  Under the engine's step model (docs/services.md
 * "The engine": p/prefill + step(b), step linear from 1/decode_single to
 * max_batch/decode) a request costs in/prefill of prefill time and
 * out - 1 decode iterations shared by B sequences, so the output
 * throughput is out / (in/prefill + (out - 1) step(B) / B).
 */
static double offline_tps(const fs_llm_preset_t *p, double in, double out, uint32_t *batch)
{
    double fit = floor((double)p->kv_tokens / (in + out / 2));
    uint32_t b = fit < p->max_batch ? (uint32_t)(fit > 1 ? fit : 1) : p->max_batch;
    double s1 = 1 / p->decode1_tps, sf = p->max_batch / p->decode_tps;
    double step = p->max_batch > 1 ? s1 + (sf - s1) * (b - 1) / (p->max_batch - 1) : sf;
    if (batch)
        *batch = b;
    return out / (in / p->prefill_tps + (out - 1) * step / b);
}

typedef struct {
    const char *model, *gpu;
    uint32_t tp;
    double in, out, published;
    int band;   /* 0: the DOMAIN.md 6.2 cases, band 0.6-1.5; 1: the others, 0.5-2 */
} trt_case_t;

/* TensorRT-LLM, docs/source/performance/perf-overview.md (FP8, output
 * tokens/s, all requests at once); DOMAIN.md 6.2 quotes the first seven. */
static const trt_case_t trt_cases[] = {
    {"llama3-8b", "H100", 1, 1000, 1000, 15220, 0},
    {"llama3-8b", "H100", 1, 2048, 128, 3450, 0},
    {"llama3-70b", "H100", 2, 1000, 1000, 4205, 0},
    {"llama3-70b", "H100", 2, 2048, 128, 762, 0},
    {"llama3-405b", "H100", 8, 1000, 1000, 2919, 0},
    {"llama3-405b", "H100", 8, 2048, 128, 453, 0},
    {"llama3-8b", "H200", 1, 1000, 1000, 17744, 0},
    {"llama3-8b", "H200", 1, 2048, 128, 3538, 1},
    {"llama3-70b", "H200", 1, 1000, 1000, 2909, 1},
    {"llama3-70b", "H200", 1, 2048, 128, 442, 1},
    {"llama3-405b", "H200", 8, 1000, 1000, 3330, 1},
    {"llama3-405b", "H200", 8, 2048, 128, 456, 1},
    {"qwen3-235b-a22b", "H100", 8, 1000, 1000, 14898, 1},
    {"qwen3-235b-a22b", "H200", 8, 1000, 1000, 23789, 1},
    {"qwen3-235b-a22b", "H200", 8, 2048, 128, 3331, 1},
};
#define N_TRT (sizeof trt_cases / sizeof trt_cases[0])

static const double band_lo[2] = {0.6, 0.5}, band_hi[2] = {1.5, 2.0};

/* The ratio of case c with efficiencies eff (NULL: the default); *pr and
 * *b get the preset and the batch. */
static double trt_ratio(const trt_case_t *c, const fs_llm_eff_t *eff, fs_llm_preset_t *pr,
                        uint32_t *b)
{
    fs_llm_replica_t r = replica(c->model, c->gpu, c->tp, FS_LLM_FP8);
    r.eff = eff;
    fs_llm_preset(&r, 0, 0, pr);
    return offline_tps(pr, c->in, c->out, b) / c->published;
}

/* Every case within its band. */
static void test_trtllm(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_TRT; i++) {
        const trt_case_t *c = &trt_cases[i];
        fs_llm_preset_t pr;
        double q = trt_ratio(c, NULL, &pr, NULL);
        if (q < band_lo[c->band] || q > band_hi[c->band])
            fail_msg("%s on %s TP%u %g/%g: ratio %.2f outside %.1f-%.1f", c->model, c->gpu, c->tp,
                     c->in, c->out, q, band_lo[c->band], band_hi[c->band]);
    }
}

/* The band has teeth: a roofline with half the bandwidth, a 30 ms
 * overhead, or FP8 timed at the BF16 peak with BF16 bytes (a preset that
 * ignored dtype) leaves it. */
static void test_trtllm_band_fails(void **state)
{
    (void)state;
    const fs_llm_eff_t broken[] = {{0.6, 0.4, 0.8, 3e-3}, {0.6, 0.8, 0.8, 30e-3}, {0.3, 0.4, 0.8, 3e-3}};
    for (size_t k = 0; k < sizeof broken / sizeof broken[0]; k++) {
        size_t out = 0;
        for (size_t i = 0; i < N_TRT; i++) {
            fs_llm_preset_t pr;
            double q = trt_ratio(&trt_cases[i], &broken[k], &pr, NULL);
            out += trt_cases[i].band == 0 && (q < band_lo[0] || q > band_hi[0]);
        }
        if (out == 0)
            fail_msg("broken roofline %zu stays within the band", k);
    }
}

/* Sarathi-Serve's measured steps: Yi-34B, TP2 on two A100 80GB PCIe
 * (1.935 TB/s; NVLink bridge 600 GB/s), microsoft/sarathi-serve
 * osdi-experiments/table-2/results.csv. */
static const fs_llm_gpu_t a100_pcie = {"A100-PCIe", 312e12, 0, 80e9, 1.935e12, 300e9, "test"};

static const struct {
    const char *what;
    fs_llm_batch_t b;
    double ms;
    int asserted;
} sarathi[] = {
    {"1,024-token prefill", {1024, 1, 0, 0, 0}, 217.2, 1},
    {"1,021 prefill + 3 decodes", {1021, 1, 0, 3, 1024}, 217.6, 1},
    {"4 decodes", {0, 0, 0, 4, 1024}, 68.1, 0},
};
#define N_SARATHI (sizeof sarathi / sizeof sarathi[0])

static void test_sarathi(void **state)
{
    (void)state;
    fs_llm_replica_t r = {model("yi-34b"), &a100_pcie, 2, FS_LLM_BF16, 0.9, NULL};
    for (size_t i = 0; i < N_SARATHI; i++) {
        double q = fs_llm_step_time(&r, &sarathi[i].b, NULL) * 1e3 / sarathi[i].ms;
        if (sarathi[i].asserted && (q < band_lo[0] || q > band_hi[0]))
            fail_msg("Sarathi %s: ratio %.2f", sarathi[i].what, q);
    }
}

/* ---- the docs' generated tables ------------------------------------------------------ */

/* 1234567 -> "1,234,567" */
static const char *grouped(double x, char *buf, size_t n)
{
    char raw[32];
    snprintf(raw, sizeof raw, "%.0f", x);
    size_t len = strlen(raw), o = 0;
    for (size_t i = 0; i < len && o + 2 < n; i++) {
        buf[o++] = raw[i];
        if ((len - i - 1) % 3 == 0 && i + 1 < len)
            buf[o++] = ',';
    }
    buf[o] = '\0';
    return buf;
}

static char *presets_tables(void)
{
    char *gen = NULL;
    size_t glen = 0;
    FILE *f = open_memstream(&gen, &glen);
    assert_non_null(f);
    fprintf(f, "| model | layers | hidden | heads / KV heads x dim | MLP | experts (top-k) | vocab | "
               "context | parameters: counted (published) | active | KV per token | source |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    const char *name;
    for (size_t i = 0; (name = fs_llm_model_name_at(i)) != NULL; i++) {
        const fs_llm_model_t *m = model(name);
        char ex[32] = "-", v[32], ctx[32];
        if (m->experts)
            snprintf(ex, sizeof ex, "%u (%u)", m->experts, m->top_k);
        fprintf(f, "| %s (%s) | %u | %u | %u / %u x %u | %u | %s | %s | %s | %.4g B (%.4g B) "
                "| %.4g B (%.4g B) | %.0f KiB | %s |\n", name, m->long_name, m->layers, m->hidden,
                m->heads, m->kv_heads, m->head_dim, m->mlp, ex, grouped(m->vocab, v, sizeof v),
                grouped(m->context, ctx, sizeof ctx),
                fs_llm_params(m, 0) / 1e9, m->params_b, fs_llm_params(m, 1) / 1e9, m->active_b,
                fs_llm_kv_bytes_gpu(m, 1) / 1024, m->source);
    }
    fprintf(f, "\n| GPU | dense BF16 | dense FP8 | memory | bandwidth | link per direction (all-reduce) "
               "| source |\n|---|---|---|---|---|---|---|\n");
    const fs_llm_gpu_t *gg;
    for (size_t j = 0; (gg = fs_llm_gpu_get(j)) != NULL; j++) {
        char f8[32] = "none";
        if (gg->fp8_flops > 0)
            snprintf(f8, sizeof f8, "%.0f TFLOP/s", gg->fp8_flops / 1e12);
        fprintf(f, "| %s | %.0f TFLOP/s | %s | %.0f GB | %.3g TB/s | %.0f GB/s | %s |\n", gg->name,
                gg->bf16_flops / 1e12, f8, gg->mem_bytes / 1e9, gg->mem_bw / 1e12, gg->link_bw / 1e9,
                gg->source);
    }
    fprintf(f, "\n| model | GPU | dtype | smallest tp | weights per GPU | KV tokens | max_batch | prefill "
               "(tokens/s) | decode at max_batch | decode_single |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; (name = fs_llm_model_name_at(i)) != NULL; i++) {
        const fs_llm_model_t *m = model(name);
        const fs_llm_gpu_t *g;
        for (size_t j = 0; (g = fs_llm_gpu_get(j)) != NULL; j++)
            for (int dt = FS_LLM_BF16; dt <= FS_LLM_FP8; dt++) {
                const char *dn = dt == FS_LLM_FP8 ? "fp8" : "bf16";
                uint32_t tp = fs_llm_min_tp(m, g, dt, FS_LLM_UTIL_DEFAULT);
                fs_llm_replica_t r = {m, g, tp ? tp : FS_LLM_NODE_GPUS, dt, FS_LLM_UTIL_DEFAULT, NULL};
                if (!tp) {
                    char why[320];
                    if (dt == FS_LLM_FP8 && !(g->fp8_flops > 0))
                        snprintf(why, sizeof why, "%s has no FP8", g->name);
                    else
                        snprintf(why, sizeof why, "%.1f + %.1f GB per GPU at tp 8 > %.1f GB",
                                 fs_llm_weight_bytes(m, dt) / 8 / 1e9,
                                 m->context * fs_llm_kv_bytes_gpu(m, 8) / 1e9, g->mem_bytes * 0.9 / 1e9);
                    fprintf(f, "| %s | %s | %s | refused: %s | | | | | | |\n", name, g->name, dn, why);
                    continue;
                }
                fs_llm_preset_t p;
                fs_llm_preset(&r, 0, 0, &p);
                char a[32], b[32], c[32];
                fprintf(f, "| %s | %s | %s | %u | %.1f GB | %s | %u | %s | %s | %.1f |\n", name, g->name,
                        dn, tp, fs_llm_weight_bytes(m, dt) / tp / 1e9,
                        grouped((double)p.kv_tokens, a, sizeof a),
                        p.max_batch, grouped(p.prefill_tps, b, sizeof b), grouped(p.decode_tps, c, sizeof c),
                        p.decode1_tps);
            }
    }
    fclose(f);
    return gen;
}

static char *validation_table(void)
{
    char *gen = NULL;
    size_t glen = 0;
    FILE *f = open_memstream(&gen, &glen);
    assert_non_null(f);
    fprintf(f, "| case (FP8) | in / out | TensorRT-LLM | preset: prefill, decode at max_batch, "
               "decode_single, kv_tokens | B | preset offline | ratio | band | max_batch = what the "
               "cache holds: B, offline, ratio |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < N_TRT; i++) {
        const trt_case_t *c = &trt_cases[i];
        fs_llm_preset_t p;
        uint32_t b;
        double q = trt_ratio(c, NULL, &p, &b);
        /* the same replica with max_batch written as the sequences its
         * cache holds at the case's mean length (as trtllm-bench sizes
         * its batch from memory) */
        fs_llm_replica_t r = replica(c->model, c->gpu, c->tp, FS_LLM_FP8);
        fs_llm_preset_t big;
        uint32_t bb;
        fs_llm_preset(&r, (uint32_t)floor((double)p.kv_tokens / (c->in + c->out / 2)), 0, &big);
        double tb = offline_tps(&big, c->in, c->out, &bb);
        char s1[32], s2[32], s3[32], s4[32], s5[32], s6[32];
        fprintf(f, "| %s %s TP%u | %.0f / %.0f | %s | %s, %s at %u, %.1f, %s | %u | %s | %.2f | %.1f-%.1f "
                "| %u, %s, %.2f |\n",
                c->model, c->gpu, c->tp, c->in, c->out, grouped(c->published, s1, sizeof s1),
                grouped(p.prefill_tps, s2, sizeof s2), grouped(p.decode_tps, s3, sizeof s3), p.max_batch,
                p.decode1_tps, grouped((double)p.kv_tokens, s4, sizeof s4), b,
                grouped(q * c->published, s5, sizeof s5), q, band_lo[c->band], band_hi[c->band], bb,
                grouped(tb, s6, sizeof s6), tb / c->published);
    }
    fprintf(f, "\n| Sarathi-Serve step (Yi-34B, TP2, 2 A100 80GB PCIe, BF16) | measured | roofline "
               "| ratio |\n");
    fprintf(f, "|---|---|---|---|\n");
    fs_llm_replica_t r = {model("yi-34b"), &a100_pcie, 2, FS_LLM_BF16, 0.9, NULL};
    for (size_t i = 0; i < N_SARATHI; i++) {
        double t = fs_llm_step_time(&r, &sarathi[i].b, NULL) * 1e3;
        fprintf(f, "| %s | %.1f ms | %.1f ms | %.2f%s |\n", sarathi[i].what, sarathi[i].ms, t,
                t / sarathi[i].ms, sarathi[i].asserted ? "" : " (not asserted)");
    }
    fclose(f);
    return gen;
}

/* Compares the text between "<!-- BEGIN -->\n" and "<!-- END -->" of
 * docs/FILE with gen; FS_UPDATE_DOCS=1 rewrites it. */
static void check_block(const char *file, const char *begin, const char *end, const char *gen)
{
    char path[512];
    snprintf(path, sizeof path, "%s/docs/%s", FS_SOURCE_DIR, file);
    char *doc = fs_test_read(path, NULL);
    assert_non_null(doc);
    char *b = strstr(doc, begin);
    if (!b)
        fail_msg("docs/%s has no marker %s", file, begin);
    b += strlen(begin);
    char *e = strstr(b, end);
    assert_non_null(e);
    if ((size_t)(e - b) != strlen(gen) || strncmp(b, gen, (size_t)(e - b)) != 0) {
        const char *upd = getenv("FS_UPDATE_DOCS");
        if (!(upd && *upd))
            fail_msg("docs/%s is out of date: run the test with FS_UPDATE_DOCS=1", file);
        FILE *o = fopen(path, "w");
        assert_non_null(o);
        fwrite(doc, 1, (size_t)(b - doc), o);
        fputs(gen, o);
        fputs(e, o);
        fclose(o);
    }
    free(doc);
}

static void test_docs_up_to_date(void **state)
{
    (void)state;
    char *p = presets_tables(), *v = validation_table();
    check_block("services.md", "<!-- generated by tests/test_llmperf.c: presets -->\n",
                "<!-- end of generated presets -->", p);
    check_block("validation.md", "<!-- generated by tests/test_llmperf.c: validation -->\n",
                "<!-- end of generated validation -->", v);
    free(p);
    free(v);
}

/* ---- the loader ----------------------------------------------------------------------- */

#define HEAD "horizon: 1h\nuntil: horizon\ncluster:\n  pools:\n" \
             "    - {name: main, gpu: H100, nodes: 2, gpus_per_node: 8}\n" \
             "    - {name: old, gpu: A100, nodes: 2, gpus_per_node: 8}\n" \
             "workload:\n  synthetic:\n    arrivals: {rate: 1/h}\n    gpus: {1: 1.0}\n" \
             "    duration: {dist: constant, value: 1h}\n"
#define SVC "services:\n  - name: chat\n    gpus: 4\n" \
            "    requests: {rate: 1/s, input: {dist: constant, value: 100},\n" \
            "               output: {dist: constant, value: 10}}\n" \
            "    performance:\n"

static void load_ok(const char *text, const char *const *ovr, size_t n, fs_config_t *cfg)
{
    fs_error_t err;
    if (fs_scenario_load_string("t.yaml", text, ovr, n, cfg, &err))
        fail_msg("load failed: %s", err.msg);
}

static void expect_error(const char *text, const char *const *ovr, size_t n, const char *want)
{
    fs_config_t cfg;
    fs_error_t err;
    int rc = fs_scenario_load_string("t.yaml", text, ovr, n, &cfg, &err);
    if (rc != FS_EINVAL)
        fail_msg("rc %d (%s)", rc, rc ? err.msg : "loaded");
    if (strcmp(err.msg, want) != 0)
        fail_msg("message\n  %s\nis not\n  %s", err.msg, want);
}

/* A row naming a model gets the preset's numbers; what it writes stays. */
static void test_loader_fills(void **state)
{
    (void)state;
    fs_config_t cfg;
    load_ok(HEAD SVC "      - {gpu: H100, model: llama3-70b, tp: 4, dtype: fp8}\n"
                     "      - {gpu: A100, model: LLAMA3-70B, prefill: 1234, max_batch: 32, kv_tokens: 0}\n",
            NULL, 0, &cfg);
    const fs_svc_perf_cfg_t *p = cfg.services.list[0].perf;
    fs_llm_replica_t r = replica("llama3-70b", "H100", 4, FS_LLM_FP8);
    fs_llm_preset_t want;
    fs_llm_preset(&r, 0, 0, &want);
    assert_double_equal(p[0].prefill_tps, want.prefill_tps, 0);
    assert_double_equal(p[0].decode_tps, want.decode_tps, 0);
    assert_double_equal(p[0].decode1_tps, want.decode1_tps, 0);
    assert_int_equal(p[0].max_batch, 256);
    assert_int_equal(p[0].kv_tokens, want.kv_tokens);
    assert_true(p[0].kv_tokens > 500000 && p[0].prefill_tps > 10000);
    /* the written numbers win; decode is timed at the written max_batch;
     * tp is the service's gpus; kv_tokens 0 (unlimited) as written */
    assert_string_equal(p[1].model, "llama3-70b");
    assert_int_equal(p[1].tp, 4);
    assert_double_equal(p[1].prefill_tps, 1234, 0);
    assert_int_equal(p[1].max_batch, 32);
    assert_int_equal(p[1].kv_tokens, 0);
    fs_llm_replica_t a = replica("llama3-70b", "A100", 4, FS_LLM_BF16);
    fs_llm_preset(&a, 32, 0, &want);
    assert_double_equal(p[1].decode_tps, want.decode_tps, 0);
    /* the dump round trip keeps the numbers (all written then) */
    char *d = fs_scenario_dump(&cfg);
    assert_non_null(d);
    fs_config_t back;
    load_ok(d, NULL, 0, &back);
    assert_double_equal(back.services.list[0].perf[0].decode_tps, p[0].decode_tps, 0);
    assert_int_equal(back.services.list[0].perf[0].kv_tokens, p[0].kv_tokens);
    fs_free(d);
    fs_config_release(&back);
    fs_config_release(&cfg);
    /* a --set value counts as written */
    const char *ovr[] = {"services.0.performance.0.decode=999"};
    load_ok(HEAD SVC "      - {gpu: H100, model: llama3-70b}\n", ovr, 1, &cfg);
    assert_double_equal(cfg.services.list[0].perf[0].decode_tps, 999, 0);
    assert_int_equal(cfg.services.list[0].perf[0].tp, 4);
    fs_config_release(&cfg);
    /* a row without a model is as written */
    load_ok(HEAD SVC "      - {gpu: H100, prefill: 5000, decode: 800}\n", NULL, 0, &cfg);
    p = cfg.services.list[0].perf;
    assert_null(p[0].model);
    assert_int_equal(p[0].max_batch, 1);
    assert_double_equal(p[0].decode1_tps, 0, 0);
    assert_int_equal(p[0].kv_tokens, 0);
    fs_config_release(&cfg);
}

static void test_loader_errors(void **state)
{
    (void)state;
    expect_error(HEAD SVC "      - {gpu: H100, model: llama3-405b, dtype: fp8}\n", NULL, 0,
                 "t.yaml:18:28: services.0.performance.0.model: llama3-405b in fp8 at tp 4 needs "
                 "102.5 GB of weights + 16.9 GB of KV (one 131072-token context) per GPU, above the "
                 "72.0 GB usable of each H100 (80 GB x 0.90): the smallest tp that fits is 8 (gpus: 8)");
    expect_error(HEAD SVC "      - {gpu: H100, model: llama3-405b, tp: 4}\n", NULL, 0,
                 "t.yaml:18:45: services.0.performance.0.tp: llama3-405b in bf16 at tp 4 needs "
                 "202.9 GB of weights + 16.9 GB of KV (one 131072-token context) per GPU, above the "
                 "72.0 GB usable of each H100 (80 GB x 0.90): it fits in fp8 from tp 8");
    expect_error(HEAD SVC "      - {gpu: A100, model: llama3-8b, dtype: fp8}\n", NULL, 0,
                 "t.yaml:18:46: services.0.performance.0.dtype: A100 has no FP8 tensor cores: use "
                 "dtype bf16 (bf16 fits from tp 1)");
    expect_error(HEAD SVC "      - {gpu: H100, model: llama3-8b, tp: 2}\n", NULL, 0,
                 "t.yaml:18:43: services.0.performance.0.tp: tp 2 is not the service's gpus 4: a "
                 "replica's GPUs are its tensor-parallel degree (set gpus: 2)");
    expect_error(HEAD SVC "      - {gpu: V100, model: llama3-8b}\n", NULL, 0,
                 "t.yaml:18:15: services.0.performance.0.gpu: no preset for GPU model V100 (presets: "
                 "A100, H100, H200, B200, L40S); write prefill and decode instead of model");
    expect_error(HEAD SVC "      - {gpu: H100, model: llama3-9b}\n", NULL, 0,
                 "t.yaml:18:28: services.0.performance.0.model: 'llama3-9b' is not one of: llama3-8b, "
                 "llama3-70b, llama3-405b, mixtral-8x7b, qwen3-235b-a22b, yi-34b");
    expect_error(HEAD SVC "      - {gpu: H100, decode: 100}\n", NULL, 0,
                 "t.yaml:18:9: services.0.performance.0: missing key 'prefill' (tokens/s; or name a "
                 "model for a preset computed from it: docs/services.md \"Presets\")");
    const char *ovr[] = {"services.0.gpus=3"};
    expect_error(HEAD SVC "      - {gpu: H100, model: mixtral-8x7b}\n", ovr, 1,
                 "t.yaml:18:28: services.0.performance.0.model: tp 3 does not divide mixtral-8x7b's "
                 "32 attention and 8 KV heads on one node of 8 GPUs (vLLM's rule); the smallest tp "
                 "that fits is 2");
}

/* kv_context: the preset's context term is the roofline's KV read per
 * token, so that (decode memory-bound) step(b) + C x us_per_kv_token gives
 * the roofline's step at every context; the loader fills it (and the decode
 * rates at no context); without a model it is refused. */
static void test_kv_context(void **state)
{
    (void)state;
    fs_llm_replica_t r = replica("llama3-8b", "H100", 1, FS_LLM_BF16);
    fs_llm_preset_t p;
    fs_llm_preset(&r, 0, 0, &p);
    /* 131,072 B per token / (3.35 TB/s x 0.8) = 48.907 ns */
    assert_double_equal(p.us_per_kv_token, 0.048907463, 1e-9);
    /* the roofline's growth with the context is the term while decode is
     * memory-bound (every batch but max_batch with no context, which is
     * compute-bound: there the term overcharges, docs/services.md) */
    for (uint32_t b = 1; b <= p.max_batch; b *= 4) {
        fs_llm_batch_t b0 = {0, 0, 0, b, 0};
        fs_llm_step_t p0;
        double t0 = fs_llm_step_time(&r, &b0, &p0) * 1e6;
        if (p0.compute_s >= p0.memory_s) {  /* 256 sequences, no context: compute-bound */
            assert_int_equal(b, p.max_batch);
            continue;
        }
        for (double ctx = 1024; ctx <= 32768; ctx *= 2) {
            fs_llm_batch_t bt = {0, 0, 0, b, ctx};
            fs_llm_step_t parts;
            double t = fs_llm_step_time(&r, &bt, &parts) * 1e6;
            double grow = p.us_per_kv_token * b * ctx;
            if (b * ctx > (double)p.kv_tokens)
                break;
            assert_true(parts.memory_s > parts.compute_s);
            if (fabs(t - t0 - grow) > 0.001 * t)
                fail_msg("b %u ctx %.0f: roofline %.1f us, no context %.1f us, term %.1f us", b, ctx,
                         t, t0, grow);
        }
    }
    /* at FS_LLM_DECODE_CTX the two forms agree on the decode rates */
    double at1024 = 1e6 / p.decode1_tps0 + p.us_per_kv_token * FS_LLM_DECODE_CTX;
    assert_double_equal(at1024, 1e6 / p.decode1_tps, 0.01 * at1024);

    fs_config_t cfg;
    load_ok(HEAD SVC "      - {gpu: H100, model: llama3-70b, kv_context: true}\n"
                     "      - {gpu: H200, model: llama3-70b, us_per_kv_token: 0.001}\n"
                     "      - {gpu: B200, model: llama3-70b}\n",
            NULL, 0, &cfg);
    const fs_svc_perf_cfg_t *q = cfg.services.list[0].perf;
    const char *g[] = {"H100", "H200", "B200"};
    fs_llm_preset_t pp[3];
    for (int k = 0; k < 3; k++) {
        fs_llm_replica_t rk = replica("llama3-70b", g[k], 4, FS_LLM_BF16);
        fs_llm_preset(&rk, 0, 0, &pp[k]);
    }
    assert_double_equal(q[0].us_per_kv_token, pp[0].us_per_kv_token, 0);
    assert_double_equal(q[0].decode_tps, pp[0].decode_tps0, 0);
    assert_double_equal(q[0].decode1_tps, pp[0].decode1_tps0, 0);
    assert_true(pp[0].decode1_tps0 > pp[0].decode1_tps);
    assert_double_equal(q[1].us_per_kv_token, 0.001, 0);    /* written: kept */
    assert_double_equal(q[1].decode_tps, pp[1].decode_tps0, 0);
    assert_double_equal(q[2].us_per_kv_token, 0, 0);        /* default: no context term */
    assert_double_equal(q[2].decode_tps, pp[2].decode_tps, 0);
    fs_config_release(&cfg);
    expect_error(HEAD SVC "      - {gpu: H100, prefill: 5000, decode: 800, kv_context: true}\n",
                 NULL, 0,
                 "t.yaml:18:61: services.0.performance.0.kv_context: kv_context takes the context "
                 "term from a preset's roofline: name a model, or write us_per_kv_token");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_catalog, setup, teardown),
        cmocka_unit_test_setup_teardown(test_step_by_hand, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trtllm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trtllm_band_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sarathi, setup, teardown),
        cmocka_unit_test_setup_teardown(test_docs_up_to_date, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_fills, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kv_context, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
