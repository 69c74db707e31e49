/*
 * fs_llmperf: the preset catalog and the roofline (fs_llmperf.h).  The
 * constants and their sources are in docs/services.md "Presets"; the
 * validation against published throughput in docs/validation.md.
 */
#include "fs_llmperf.h"
#include "fs_svprofile.h"
#include "../traces/fs_reqtrace.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/*
 * Models: the numbers of each model's config.json (Hugging Face), as
 * ../shared/docs/DOMAIN.md 6.3 quotes them for the Llama-3 family and
 * Mixtral.  The Llama-3 rows are the Llama-3.1 configs (131,072-token
 * context; Llama-3-8B and -70B have the same shapes with 8,192), which
 * are what the TensorRT-LLM table of the validation ran (Llama-3.3-70B
 * has Llama-3.1-70B's config).
 */
static const fs_llm_model_t models[] = {
    {"llama3-8b", "Llama-3.1-8B", 32, 4096, 32, 8, 128, 14336, 0, 0, 128256, 131072, 8.03, 8.03,
     "meta-llama/Llama-3.1-8B config.json; DOMAIN.md 6.3"},
    {"llama3-70b", "Llama-3.1/3.3-70B", 80, 8192, 64, 8, 128, 28672, 0, 0, 128256,
     131072, 70.6, 70.6, "meta-llama/Llama-3.1-70B config.json; DOMAIN.md 6.3"},
    {"llama3-405b", "Llama-3.1-405B", 126, 16384, 128, 8, 128, 53248, 0, 0, 128256, 131072, 405.9,
     405.9, "meta-llama/Llama-3.1-405B config.json; DOMAIN.md 6.3"},
    {"mixtral-8x7b", "Mixtral-8x7B", 32, 4096, 32, 8, 128, 14336, 8, 2, 32000, 32768, 46.7, 12.9,
     "mistralai/Mixtral-8x7B-v0.1 config.json; DOMAIN.md 6.3"},
    {"qwen3-235b-a22b", "Qwen3-235B-A22B", 94, 4096, 64, 4, 128, 1536, 128, 8, 151936, 40960, 235,
     22, "Qwen/Qwen3-235B-A22B config.json; Qwen3 technical report (arXiv 2505.09388)"},
    {"yi-34b", "Yi-34B", 60, 7168, 56, 8, 128, 20480, 0, 0, 64000, 4096, 34.4, 34.4,
     "01-ai/Yi-34B config.json (the model of Sarathi-Serve's measured steps)"},
};

/*
 * GPUs: dense peaks (the datasheets' headline H100/H200/B200/L40S figures
 * are 2:4-sparse; half of them), memory and bandwidth from DOMAIN.md 6.3;
 * the link is the NVLink bandwidth per GPU of docs/catalog.md, one
 * direction (a ring all-reduce sends and receives at once), and PCIe Gen4
 * x16 for the L40S, which has no NVLink.
 */
static const fs_llm_gpu_t gpus[] = {
    {"A100", 312e12, 0, 80e9, 2.039e12, 300e9, "A100 SXM4 80GB datasheet; NVLink3 600 GB/s"},
    {"H100", 989e12, 1979e12, 80e9, 3.35e12, 450e9, "H100 SXM5 datasheet; NVLink4 900 GB/s"},
    {"H200", 989e12, 1979e12, 141e9, 4.8e12, 450e9, "H200 SXM datasheet; NVLink4 900 GB/s"},
    {"B200", 2250e12, 4500e12, 180e9, 8e12, 900e9, "DGX B200 datasheet; NVLink5 1.8 TB/s"},
    {"L40S", 362e12, 733e12, 48e9, 864e9, 32e9, "L40S datasheet; PCIe Gen4 x16, no NVLink"},
};

static const fs_llm_eff_t eff_default = {0.6, 0.8, 0.8, 3e-3};

#define N_MODELS (sizeof models / sizeof models[0])
#define N_GPUS (sizeof gpus / sizeof gpus[0])
#define BF16_BYTES 2.0

/* ---- catalogs ------------------------------------------------------------- */

const fs_llm_model_t *fs_llm_model_find(const char *name)
{
    for (size_t i = 0; name && i < N_MODELS; i++)
        if (strcasecmp(models[i].name, name) == 0)
            return &models[i];
    return NULL;
}

const char *fs_llm_model_name_at(size_t i) { return i < N_MODELS ? models[i].name : NULL; }

const fs_llm_gpu_t *fs_llm_gpu_get(size_t i) { return i < N_GPUS ? &gpus[i] : NULL; }

const fs_llm_gpu_t *fs_llm_gpu_find(const char *name)
{
    for (size_t i = 0; name && i < N_GPUS; i++)
        if (strcasecmp(gpus[i].name, name) == 0)
            return &gpus[i];
    return NULL;
}

static const char *dtype_name(int dtype) { return dtype == FS_LLM_FP8 ? "fp8" : "bf16"; }

/* ---- sizes ---------------------------------------------------------------- */

/* Parameters of one layer's attention projections (q, k, v, o). */
static double attn_params(const fs_llm_model_t *m)
{
    double qo = (double)m->hidden * m->heads * m->head_dim;
    double kv = (double)m->hidden * m->kv_heads * m->head_dim;
    return 2 * qo + 2 * kv;
}

/* Parameters of one expert's (or the dense) SwiGLU MLP: gate, up, down. */
static double mlp_params(const fs_llm_model_t *m) { return 3.0 * m->hidden * m->mlp; }

static double n_experts(const fs_llm_model_t *m) { return m->experts ? m->experts : 1; }
static double k_experts(const fs_llm_model_t *m) { return m->experts ? m->top_k : 1; }

/* Parameters kept in BF16 in an FP8 checkpoint: the embedding, the LM
 * head and the routers. */
static double bf16_params(const fs_llm_model_t *m)
{
    return 2.0 * m->vocab * m->hidden + (double)m->layers * m->hidden * m->experts;
}

double fs_llm_params(const fs_llm_model_t *m, int active)
{
    double e = active ? k_experts(m) : n_experts(m);
    return m->layers * (attn_params(m) + e * mlp_params(m)) + bf16_params(m);
}

static double linear_bytes(int dtype) { return dtype == FS_LLM_FP8 ? 1.0 : BF16_BYTES; }

double fs_llm_weight_bytes(const fs_llm_model_t *m, int dtype)
{
    double linear = m->layers * (attn_params(m) + n_experts(m) * mlp_params(m));
    return linear * linear_bytes(dtype) + bf16_params(m) * BF16_BYTES;
}

double fs_llm_kv_bytes_gpu(const fs_llm_model_t *m, uint32_t tp)
{
    uint32_t heads = tp ? (m->kv_heads + tp - 1) / tp : m->kv_heads;   /* at least one */
    return 2.0 * m->layers * heads * m->head_dim * BF16_BYTES;
}

/* Memory one GPU of the replica offers: memory x util. */
static double usable_bytes(const fs_llm_replica_t *r) { return r->gpu->mem_bytes * r->util; }

static int tp_divides(const fs_llm_model_t *m, uint32_t tp)
{
    return tp >= 1 && tp <= FS_LLM_NODE_GPUS && m->heads % tp == 0 &&
           (m->kv_heads % tp == 0 || tp % m->kv_heads == 0);
}

int fs_llm_fits(const fs_llm_replica_t *r, char *why, size_t n)
{
    const fs_llm_model_t *m = r->model;
    const fs_llm_gpu_t *g = r->gpu;
    if (why && n)
        why[0] = '\0';
    if (!tp_divides(m, r->tp)) {
        if (why && n)
            snprintf(why, n, "tp %u does not divide %s's %u attention and %u KV heads on one node "
                     "of %u GPUs (vLLM's rule)", r->tp, m->name, m->heads, m->kv_heads,
                     FS_LLM_NODE_GPUS);
        return 0;
    }
    if (r->dtype == FS_LLM_FP8 && !(g->fp8_flops > 0)) {
        if (why && n)
            snprintf(why, n, "%s has no FP8 tensor cores", g->name);
        return 0;
    }
    double w = fs_llm_weight_bytes(m, r->dtype) / r->tp;
    double kv = (double)m->context * fs_llm_kv_bytes_gpu(m, r->tp);
    double usable = usable_bytes(r);
    if (w + kv <= usable)
        return 1;
    if (why && n)
        snprintf(why, n, "%s in %s at tp %u needs %.1f GB of weights + %.1f GB of KV (one "
                 "%u-token context) per GPU, above the %.1f GB usable of each %s (%.0f GB x %.2f)",
                 m->name, dtype_name(r->dtype), r->tp, w / 1e9, kv / 1e9, m->context,
                 usable / 1e9, g->name, g->mem_bytes / 1e9, r->util);
    return 0;
}

uint32_t fs_llm_min_tp(const fs_llm_model_t *m, const fs_llm_gpu_t *g, int dtype, double util)
{
    for (uint32_t tp = 1; tp <= FS_LLM_NODE_GPUS; tp *= 2) {
        fs_llm_replica_t r = {m, g, tp, dtype, util, NULL};
        if (fs_llm_fits(&r, NULL, 0))
            return tp;
    }
    return 0;
}

/* ---- the roofline ---------------------------------------------------------- */

double fs_llm_step_time(const fs_llm_replica_t *r, const fs_llm_batch_t *b, fs_llm_step_t *parts)
{
    const fs_llm_model_t *m = r->model;
    const fs_llm_gpu_t *g = r->gpu;
    const fs_llm_eff_t *e = r->eff ? r->eff : &eff_default;
    double tp = r->tp;
    double tokens = b->prefill_tokens + b->decode_seqs;
    fs_llm_step_t s = {0};
    if (tokens > 0) {
        double L = m->layers, E = n_experts(m), k = k_experts(m);
        double per_token = L * (attn_params(m) + k * mlp_params(m)) + L * (double)m->hidden * m->experts;
        double lm_head = (double)m->vocab * m->hidden;
        /* attention: QK^T and AV, 4 x heads x head_dim FLOPs per token and
         * context token per layer; a causal chunk of S tokens attends to
         * S(S+1)/2 of its own */
        double chunk = b->prefill_seqs > 0 ? b->prefill_tokens / b->prefill_seqs : 0;
        double attended = b->decode_seqs * b->decode_ctx + b->prefill_tokens * b->prefill_ctx +
                          b->prefill_tokens * (chunk + 1) / 2;
        double attn = 4.0 * L * m->heads * m->head_dim * attended;
        double peak = r->dtype == FS_LLM_FP8 ? g->fp8_flops : g->bf16_flops;
        double linear_flops = 2 * per_token * tokens;
        double bf16_flops = 2 * lm_head * (b->prefill_seqs + b->decode_seqs) + attn;
        s.flops = (linear_flops + bf16_flops) / tp;
        s.compute_s = linear_flops / (tp * peak * e->compute) +
                      bf16_flops / (tp * g->bf16_flops * e->compute);
        /* weights read: every expert some token of the iteration routes to
         * (each token picks k of E: E(1 - (1 - k/E)^tokens) expected), the
         * LM head and routers; the input embedding only by row */
        double touched = m->experts ? E * (1 - pow(1 - k / E, tokens)) : 1;
        double wbytes = L * (attn_params(m) + touched * mlp_params(m)) * linear_bytes(r->dtype) +
                        (lm_head + L * (double)m->hidden * m->experts) * BF16_BYTES;
        double kv = fs_llm_kv_bytes_gpu(m, r->tp) *
                    (b->decode_seqs * b->decode_ctx + b->prefill_seqs * b->prefill_ctx + tokens);
        s.bytes = wbytes / tp + kv;
        s.memory_s = s.bytes / (g->mem_bw * e->memory);
        /* two all-reduces per layer of tokens x hidden BF16 activations */
        if (r->tp > 1)
            s.comm_s = 2 * L * 2 * (tp - 1) / tp * tokens * m->hidden * BF16_BYTES / (g->link_bw * e->link);
        s.overhead_s = e->overhead_s;
        s.total_s = fmax(s.compute_s, s.memory_s) + s.comm_s + s.overhead_s;
    }
    if (parts)
        *parts = s;
    return s.total_s;
}

uint64_t fs_llm_kv_tokens(const fs_llm_replica_t *r)
{
    double free = usable_bytes(r) - fs_llm_weight_bytes(r->model, r->dtype) / r->tp;
    if (!(free > 0))
        return 0;
    double t = floor(free / fs_llm_kv_bytes_gpu(r->model, r->tp));
    return (uint64_t)t / 16 * 16;
}

static double round1(double x) { return floor(x * 10 + 0.5) / 10; }

void fs_llm_preset(const fs_llm_replica_t *r, uint32_t max_batch, uint64_t kv_tokens,
                   fs_llm_preset_t *out)
{
    out->kv_tokens = fs_llm_kv_tokens(r);
    if (!max_batch) {
        /* the sequences of FS_LLM_DECODE_CTX + 1 tokens (whole blocks of
         * 16) the cache holds, at most vLLM's max_num_seqs */
        uint64_t kv = kv_tokens ? kv_tokens : out->kv_tokens;
        uint64_t per = (FS_LLM_DECODE_CTX + 1 + 15) / 16 * 16;
        uint64_t fit = kv / per;
        max_batch = fit >= FS_LLM_MAX_BATCH ? FS_LLM_MAX_BATCH : fit ? (uint32_t)fit : 1;
    }
    out->max_batch = max_batch;
    fs_llm_batch_t pre = {FS_LLM_PREFILL_CHUNK, 1, 0, 0, 0};
    fs_llm_batch_t one = {0, 0, 0, 1, FS_LLM_DECODE_CTX};
    fs_llm_batch_t full = {0, 0, 0, max_batch, FS_LLM_DECODE_CTX};
    out->prefill_tps = round1(FS_LLM_PREFILL_CHUNK / fs_llm_step_time(r, &pre, NULL));
    out->decode1_tps = round1(1 / fs_llm_step_time(r, &one, NULL));
    out->decode_tps = round1(max_batch / fs_llm_step_time(r, &full, NULL));
    const fs_llm_eff_t *e = r->eff ? r->eff : &eff_default;
    one.decode_ctx = full.decode_ctx = 0;
    out->decode1_tps0 = round1(1 / fs_llm_step_time(r, &one, NULL));
    out->decode_tps0 = round1(max_batch / fs_llm_step_time(r, &full, NULL));
    /* rounded to the engine's unit, 1e-9 us */
    out->us_per_kv_token =
        floor(fs_llm_kv_bytes_gpu(r->model, r->tp) / (r->gpu->mem_bw * e->memory) * 1e15 + 0.5) / 1e9;
}

/* ---- performance rows ------------------------------------------------------- */

/* Sets *key to services.i.performance.j[.field] and returns FS_EINVAL with
 * the message "KEY: ..." already in err (its text after the key). */
static int row_fail(char *key, size_t keylen, size_t i, size_t j, const char *field,
                    fs_error_t *err)
{
    char k[128];
    snprintf(k, sizeof k, "services.%zu.performance.%zu%s%s", i, j, *field ? "." : "", field);
    if (key && keylen)
        snprintf(key, keylen, "%s", k);
    if (err)
        fs_error_prefix(err, "%s", k);
    return FS_EINVAL;
}

/* What would fit instead: the smallest TP in the same dtype, or the other
 * dtype, or nothing on one node. */
static void what_fits(const fs_llm_replica_t *r, char *buf, size_t n)
{
    uint32_t same = fs_llm_min_tp(r->model, r->gpu, r->dtype, r->util);
    int other = r->dtype == FS_LLM_FP8 ? FS_LLM_BF16 : FS_LLM_FP8;
    uint32_t alt = fs_llm_min_tp(r->model, r->gpu, other, r->util);
    if (same)
        snprintf(buf, n, "the smallest tp that fits is %u (gpus: %u)", same, same);
    else if (alt)
        snprintf(buf, n, "it fits in %s from tp %u", dtype_name(other), alt);
    else
        snprintf(buf, n, "it fits on no node of %u %s in bf16%s", FS_LLM_NODE_GPUS, r->gpu->name,
                 r->gpu->fp8_flops > 0 ? " or fp8" : " (which has no fp8)");
}

/* performance[].profile: read (its errors at PATH:LINE, blamed on the
 * key), and the row's numbers not written derived from it: prefill at its
 * longest prefill row, decode and decode_single at FS_LLM_DECODE_CTX tokens
 * of context per sequence (what fluid mode and plan read). */
static int fill_profile(fs_svc_perf_cfg_t *p, size_t i, size_t j, char *key, size_t keylen,
                        fs_error_t *err)
{
    fs_svprof_t *pf;
    int rc = fs_svprof_load(p->profile, &pf, err);
    if (rc == FS_ENOMEM)
        return rc;
    if (rc)
        return row_fail(key, keylen, i, j, "profile", err);
    if (p->us_per_kv_token > 0 || p->kv_context) {
        fs_svprof_free(pf);
        fs_error_set(err, FS_EINVAL, "a profile times the context itself (its context_tokens): "
                     "drop %s", p->kv_context ? "kv_context" : "us_per_kv_token");
        return row_fail(key, keylen, i, j, p->kv_context ? "kv_context" : "us_per_kv_token", err);
    }
    uint32_t mb = p->max_batch ? p->max_batch : 1;
    uint64_t last = pf->pre_p[pf->n_pre - 1];
    if (!(p->given & FS_SVP_PREFILL))
        p->prefill_tps = (double)last * 1e6 / fs_svprof_prefill(pf, last);
    if (!(p->given & FS_SVP_DECODE))
        p->decode_tps = mb * 1e6 /
                        fs_svprof_decode(pf, mb, fs_svprof_column(pf, mb, (uint64_t)mb * FS_LLM_DECODE_CTX));
    if (!(p->given & FS_SVP_DECODE1))
        p->decode1_tps = 1e6 / fs_svprof_decode(pf, 1, fs_svprof_column(pf, 1, FS_LLM_DECODE_CTX));
    fs_svprof_free(pf);
    return 0;
}

static int fill_row(fs_svc_perf_cfg_t *p, const fs_service_cfg_t *s, size_t i, size_t j, char *key,
                    size_t keylen, fs_error_t *err)
{

    if (!p->model && p->kv_context) {
        fs_error_set(err, FS_EINVAL, "kv_context takes the context term from a preset's "
                     "roofline: name a model, or write us_per_kv_token");
        return row_fail(key, keylen, i, j, "kv_context", err);
    }
    if (!p->model) {
        const char *miss = !(p->given & FS_SVP_PREFILL) && !(p->prefill_tps > 0) ? "prefill"
                           : !(p->given & FS_SVP_DECODE) && !(p->decode_tps > 0) ? "decode" : NULL;
        if (miss && !p->profile) {
            fs_error_set(err, FS_EINVAL, "missing key '%s' (tokens/s; or name a model for a preset "
                         "computed from it: docs/services.md \"Presets\")", miss);
            return row_fail(key, keylen, i, j, "", err);
        }
        return 0;
    }
    const fs_llm_model_t *m = fs_llm_model_find(p->model);
    if (!m) {   /* the key table admits only catalog names */
        fs_error_set(err, FS_EINVAL, "unknown model '%s'", p->model);
        return row_fail(key, keylen, i, j, "model", err);
    }
    if (s->mig) {
        fs_error_set(err, FS_EINVAL, "a preset is for replicas on whole GPUs; a MIG replica's "
                     "numbers are measured on its instances (service mig %s)", s->mig);
        return row_fail(key, keylen, i, j, "model", err);
    }
    const fs_llm_gpu_t *g = fs_llm_gpu_find(p->gpu);
    if (!g) {
        char list[128];
        size_t len = 0;
        for (size_t k = 0; k < N_GPUS; k++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", gpus[k].name);
        fs_error_set(err, FS_EINVAL, "no preset for GPU model %s (presets: %s); write prefill and "
                     "decode instead of model", p->gpu, list);
        return row_fail(key, keylen, i, j, "gpu", err);
    }
    uint32_t tp = p->tp ? p->tp : s->gpus;
    const char *tp_key = (p->given & FS_SVP_TP) ? "tp" : "model";
    if (tp != s->gpus) {
        fs_error_set(err, FS_EINVAL, "tp %u is not the service's gpus %u: a replica's GPUs are its "
                     "tensor-parallel degree (set gpus: %u)", tp, s->gpus, tp);
        return row_fail(key, keylen, i, j, tp_key, err);
    }
    fs_llm_replica_t r = {m, g, tp, p->dtype, p->mem_util, NULL};
    char why[320], alt[128];
    if (!tp_divides(m, tp)) {
        uint32_t t = fs_llm_min_tp(m, g, p->dtype, p->mem_util);
        fs_llm_fits(&r, why, sizeof why);
        if (t)
            snprintf(alt, sizeof alt, "the smallest tp that fits is %u", t);
        else
            what_fits(&r, alt, sizeof alt);
        fs_error_set(err, FS_EINVAL, "%s; %s", why, alt);
        return row_fail(key, keylen, i, j, tp_key, err);
    }
    if (p->dtype == FS_LLM_FP8 && !(g->fp8_flops > 0)) {
        uint32_t t = fs_llm_min_tp(m, g, FS_LLM_BF16, p->mem_util);
        if (t)
            snprintf(alt, sizeof alt, "bf16 fits from tp %u", t);
        else
            snprintf(alt, sizeof alt, "bf16 fits on no node of %u %s", FS_LLM_NODE_GPUS, g->name);
        fs_error_set(err, FS_EINVAL, "%s has no FP8 tensor cores: use dtype bf16 (%s)", g->name, alt);
        return row_fail(key, keylen, i, j, "dtype", err);
    }
    if (!fs_llm_fits(&r, why, sizeof why)) {
        what_fits(&r, alt, sizeof alt);
        fs_error_set(err, FS_EINVAL, "%s: %s", why, alt);
        return row_fail(key, keylen, i, j, tp_key, err);
    }
    fs_llm_preset_t pr;
    fs_llm_preset(&r, (p->given & FS_SVP_MAX_BATCH) ? p->max_batch : 0,
                  (p->given & FS_SVP_KV) ? p->kv_tokens : 0, &pr);
    p->tp = tp;
    /* a context term (kv_context, or us_per_kv_token written): the decode
     * rates at no context, the context's KV read added per iteration */
    int ctx = p->kv_context || p->us_per_kv_token > 0;
    if (p->kv_context && !(p->us_per_kv_token > 0))
        p->us_per_kv_token = pr.us_per_kv_token;
    if (!(p->given & FS_SVP_PREFILL))
        p->prefill_tps = pr.prefill_tps;
    if (!(p->given & FS_SVP_DECODE))
        p->decode_tps = ctx ? pr.decode_tps0 : pr.decode_tps;
    if (!(p->given & FS_SVP_DECODE1))
        p->decode1_tps = ctx ? pr.decode1_tps0 : pr.decode1_tps;
    if (!(p->given & FS_SVP_MAX_BATCH))
        p->max_batch = pr.max_batch;
    if (!(p->given & FS_SVP_KV))
        p->kv_tokens = pr.kv_tokens;
    return 0;
}

/* A row's max_model_len (0 written: the preset model's context) against
 * its KV cache, as vLLM checks at start-up: one longest sequence must fit. */
static int check_len(fs_svc_perf_cfg_t *p, size_t i, size_t j, char *key, size_t keylen,
                     fs_error_t *err)
{
    const char *len_key = p->max_model_len ? "max_model_len" : "model";
    if (!p->max_model_len && p->model)
        p->max_model_len = fs_llm_model_find(p->model)->context;
    uint64_t kv = p->kv_tokens / 16 * 16;
    if (p->max_model_len && p->kv_tokens && kv < p->max_model_len) {
        fs_error_set(err, FS_EINVAL, "max_model_len %u%s%s%s is more than the KV cache holds "
                     "(kv_tokens %llu: %llu in blocks of 16): lower max_model_len to %llu or raise "
                     "kv_tokens%s", p->max_model_len, *len_key == 'm' && p->model ? " (" : "",
                     *len_key == 'm' && p->model ? p->model : "",
                     *len_key == 'm' && p->model ? "'s context)" : "",
                     (unsigned long long)p->kv_tokens, (unsigned long long)kv,
                     (unsigned long long)kv, p->model ? " or gpu_memory_utilization" : "");
        return row_fail(key, keylen, i, j, (p->given & FS_SVP_KV) ? "kv_tokens" : len_key, err);
    }
    return 0;
}

/* A service's request trace against each row: a prompt longer than
 * max_model_len, or a request the KV cache cannot hold alone, is refused
 * now at its FILE:LINE (a run would stop at it).  A trace that cannot be
 * read is left to the loader's own check of it. */
static int check_trace(const fs_service_cfg_t *s, size_t i, char *key, size_t keylen,
                       fs_error_t *err)
{
    if (s->process != FS_SVC_TRACE || !s->trace)
        return 0;
    for (size_t j = 0; j < s->n_perf; j++) {
        const fs_svc_perf_cfg_t *p = &s->perf[j];
        if (!p->max_model_len && !p->kv_tokens)
            continue;
        char wl[96], wk[96];
        snprintf(wl, sizeof wl, "max_model_len of services.%zu.performance.%zu", i, j);
        snprintf(wk, sizeof wk, "a replica's kv_tokens (services.%zu.performance.%zu)", i, j);
        fs_error_t e;
        int rc = fs_reqtrace_check_len(s->trace, p->max_model_len, wl, p->kv_tokens, wk, &e);
        if (rc == FS_ENOMEM)
            return fs_error_set(err, FS_ENOMEM, "%s", e.msg);
        if (rc == 1) {
            fs_error_set(err, FS_EINVAL, "%s", e.msg);
            char k[96];
            snprintf(k, sizeof k, "services.%zu.requests.trace", i);
            if (key && keylen)
                snprintf(key, keylen, "%s", k);
            fs_error_prefix(err, "%s", k);
            return FS_EINVAL;
        }
    }
    return 0;
}

int fs_llm_fill_services(fs_services_cfg_t *sc, char *key, size_t keylen, fs_error_t *err)
{
    if (key && keylen)
        key[0] = '\0';
    for (size_t i = 0; i < sc->n; i++) {
        for (size_t j = 0; j < sc->list[i].n_perf; j++) {
            int rc = fill_row(&sc->list[i].perf[j], &sc->list[i], i, j, key, keylen, err);
            if (!rc && sc->list[i].perf[j].profile)  /* over the preset's numbers */
                rc = fill_profile(&sc->list[i].perf[j], i, j, key, keylen, err);
            if (!rc)
                rc = check_len(&sc->list[i].perf[j], i, j, key, keylen, err);
            if (rc)
                return rc;
        }
        int rc = check_trace(&sc->list[i], i, key, keylen, err);
        if (rc)
            return rc;
    }
    return 0;
}
