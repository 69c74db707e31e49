/*
 * Disaggregated serving (models/fs_service_engine.c, fs_service_disagg.c;
 * docs/services.md "Disaggregated serving"), cases computed by hand: the
 * first token at the end of the prefill, the KV transfer, decode steps
 * after it; a decode replica with no slot or no KV room makes transfers
 * wait; the prefill replica holds a sequence's blocks until its transfer
 * ends; a decode preemption is recomputed on a prefill replica and moved
 * again; a one-token request never leaves its prefill replica; bad input.
 */
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
#include "models/fs_service.h"
#include "sim/fs_alloc.h"

typedef struct reqs {
    fs_request_row_t r[64];
    size_t n;
    fs_service_row_t s;
    fs_svc_bucket_row_t b;  /* the last bucket */
    size_t nb;
    fs_run_totals_t t;
} reqs_t;

static int on_request(void *ud, const fs_request_row_t *row)
{
    reqs_t *q = ud;
    if (q->n < 64)
        q->r[q->n++] = *row;
    return 0;
}

static int on_service(void *ud, const fs_service_row_t *row)
{
    ((reqs_t *)ud)->s = *row;
    return 0;
}

static int on_bucket(void *ud, const fs_svc_bucket_row_t *row)
{
    reqs_t *q = ud;
    q->b = *row;
    q->nb++;
    return 0;
}

static int on_job(void *ud, const fs_job_row_t *row)
{
    (void)ud;
    (void)row;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    assert_int_equal(fs_alloc_live(), 0);
    return 0;
}

/* Two pools (H100 for prefill, A100 for decode), a light training workload. */
#define BASE                                                                         \
    "name: t\nseed: 9\nuntil: horizon\nhorizon: 10s\nwarmup: 0s\n"                  \
    "cluster: {pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 8}, "          \
    "{name: d, gpu: A100, nodes: 1, gpus_per_node: 8}]}\n"                          \
    "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {1: 1.0}, "                \
    "duration: {dist: constant, value: 1m}}}\n"                                      \
    "scheduler: {queue: priority, preemption: order, checkpoint_interval: 1h}\n"    \
    "output: {timeline_interval: 0, requests: true}\n"

/* The service on `trace`: prefill 10,000 tokens/s on H100 (kv_tokens kvp),
 * decode on A100 with a step of 10 ms (max_batch b, kv_tokens kvd), KV of
 * 131,072 bytes a token at 1 GB/s (1,000 tokens: 0.131072 s). */
static void run(const char *trace, uint32_t b, unsigned kvp, unsigned kvd, const char *sched,
                reqs_t *q)
{
    char y[4096];
    snprintf(y, sizeof y,
             BASE "services:\n  - name: pd\n"
             "    requests: {process: trace, trace: '%s'}\n"
             "    performance:\n"
             "      - {gpu: H100, prefill: 10000, decode: 1000, max_batch: 4, kv_tokens: %u}\n"
             "      - {gpu: A100, prefill: 5000, decode: %u, max_batch: %u, "
             "decode_single: 100, kv_tokens: %u}\n"
             "    engine: {scheduler: %s}\n"
             "    disaggregated:\n"
             "      prefill: {replicas: 1, gpu: H100}\n"
             "      decode: {replicas: 1, gpu: A100}\n"
             "      kv_transfer: {bandwidth: 1e9, bytes_per_token: 131072}\n",
             trace, kvp, 100 * b, b, kvd, sched);
    memset(q, 0, sizeof *q);
    fs_sink_t sink = {.job = on_job, .ud = q, .request = on_request, .service = on_service,
                      .svc_bucket = on_bucket};
    fs_test_run_yaml(y, NULL, 0, &sink, &q->t);
}

static const fs_request_row_t *by_arrival(const reqs_t *q, double at)
{
    for (size_t i = 0; i < q->n; i++)
        if (fabs(q->r[i].arrival - at) < 1e-9)
            return &q->r[i];
    fail_msg("no request arrived at %g", at);
    return NULL;
}

static void done_trace(char *p, char *dir)
{
    free(p);
    fs_test_rmtree(dir);
    free(dir);
}

/* One request, 1,000 prompt and 11 output tokens: its first token after its
 * prefill, 0.1 s (TTFT); its KV moves in 0.131072 s; 10 decode steps of
 * 10 ms on the decode replica (index 1): end 0.331072.  Both schedulers. */
static void test_one_request(void **state)
{
    (void)state;
    char *dir, *p = fs_test_request_trace(&dir, "2023-11-16 18:00:00.0000000,1000,11\n");
    const char *sched[2] = {"v1", "v0"};
    for (int k = 0; k < 2; k++) {
        reqs_t q;
        run(p, 4, 0, 0, sched[k], &q);
        assert_int_equal(q.n, 1);
        const fs_request_row_t *r = &q.r[0];
        assert_double_equal(r->ttft, 0.1, 1e-9);
        assert_double_equal(r->kv_transfer, 0.131072, 1e-9);
        assert_double_equal(r->end, 0.1 + 0.131072 + 10 * 0.01, 1e-9);
        assert_double_equal(r->tpot, (0.131072 + 0.1) / 10, 1e-9);
        assert_int_equal(r->replica, 0);
        assert_int_equal(r->decode_replica, 1);
        assert_int_equal(r->preemptions, 0);
    }
    done_trace(p, dir);
}

/* A one-token request is done at the end of its prefill: no transfer, its
 * last token from the prefill replica. */
static void test_one_token_stays(void **state)
{
    (void)state;
    char *dir, *p = fs_test_request_trace(&dir, "2023-11-16 18:00:00.0000000,500,1\n");
    reqs_t q;
    run(p, 4, 0, 0, "v1", &q);
    assert_int_equal(q.n, 1);
    assert_double_equal(q.r[0].end, 0.05, 1e-9);
    assert_double_equal(q.r[0].kv_transfer, 0, 0);
    assert_int_equal(q.r[0].decode_replica, 0);
    assert_true(isnan(q.r[0].tpot));
    done_trace(p, dir);
}

/* The per-group bucket columns of test_full_decode_waits' run (one bucket,
 * 0-10 s), by hand: one replica in each group; the prefill replica runs A
 * and B from 0 to 0.2 s (busy 0.2 s, 0.4 request-s running); the decode
 * replica has them from 0.2 (busy to B's end, 0.502144); A's transfer
 * 0.2-0.331072 and B's 0.351072-0.482144 (k = 0: its one slot; k = 1: A's
 * blocks) are in flight 0.262144 s; B waits for it 0.151072 s; each decodes
 * 0.02 s.  The groups add up to the service's columns. */
static void group_columns(const reqs_t *q, int k)
{
    const fs_svc_bucket_row_t *b = &q->b;
    assert_int_equal(q->nb, 1);
    assert_double_equal(b->end - b->start, 10, 0);
    assert_double_equal(b->prefill_replicas, 1, 1e-12);
    assert_double_equal(b->decode_replicas, 1, 1e-12);
    assert_double_equal(b->prefill_busy, 0.2 / 10, 1e-12);
    assert_double_equal(b->decode_busy, (0.502144 - 0.2) / 10, 1e-12);
    assert_double_equal(b->prefill_running, 0.4 / 10, 1e-12);
    assert_double_equal(b->decode_running, 0.04 / 10, 1e-12);
    assert_double_equal(b->prefill_waiting, 0, 0);
    assert_double_equal(b->decode_waiting, 0.151072 / 10, 1e-12);
    assert_double_equal(b->kv_transfers, 0.262144 / 10, 1e-12);
    assert_double_equal(b->prefill_replicas + b->decode_replicas, b->replicas, 1e-12);
    assert_double_equal(b->prefill_running + b->decode_running, b->running, 1e-12);
    assert_double_equal(b->prefill_waiting + b->decode_waiting, b->waiting, 1e-12);
    assert_true(isnan(b->prefill_kv_usage));   /* unlimited */
    if (k == 0) {
        assert_true(isnan(b->decode_kv_usage));
    } else {
        /* only the decode replica's cache is limited: the service's figure is its own */
        assert_true(b->decode_kv_usage > 0);
        assert_double_equal(b->decode_kv_usage, b->kv_usage, 1e-12);
    }
}

/* A and B (1,000 tokens, 3 out) arrive together; one prefill iteration of
 * 2,000 tokens (0.2 s) gives both their first token.  A decode replica of
 * one slot: A's KV moves at 0.2 (arrives 0.331072), 2 steps: end 0.351072;
 * B's transfer waits for the slot and starts then: arrives 0.482144, end
 * 0.502144.  The same with two slots and a KV cache of 1,024 tokens (64
 * blocks): B's 63 blocks are not free until A finishes. */
static void test_full_decode_waits(void **state)
{
    (void)state;
    char *dir, *p = fs_test_request_trace(&dir, "2023-11-16 18:00:00.0000000,1000,3\n"
                                      "2023-11-16 18:00:00.0000000,1000,3\n");
    for (int k = 0; k < 2; k++) {
        reqs_t q;
        if (k == 0)
            run(p, 1, 0, 0, "v1", &q);
        else
            run(p, 2, 0, 1024, "v1", &q);
        assert_int_equal(q.n, 2);
        double e0 = q.r[0].end < q.r[1].end ? q.r[0].end : q.r[1].end;
        double e1 = q.r[0].end < q.r[1].end ? q.r[1].end : q.r[0].end;
        /* step at batch 1: k = 0: max_batch 1 / decode 100 = 10 ms; k = 1:
         * decode_single 100: 10 ms */
        assert_double_equal(e0, 0.2 + 0.131072 + 0.02, 1e-9);
        assert_double_equal(e1, 0.2 + 0.131072 + 0.02 + 0.131072 + 0.02, 1e-9);
        for (int i = 0; i < 2; i++) {
            assert_double_equal(q.r[i].ttft, 0.2, 1e-9);
            assert_double_equal(q.r[i].kv_transfer, 0.131072, 1e-9);  /* the wait is not in it */
        }
        group_columns(&q, k);
    }
    done_trace(p, dir);
}

/* The prefill replica keeps a sequence's blocks until its transfer ends: a
 * cache of 1,024 tokens (64 blocks) holds A's 63 blocks from 0.1 to
 * 0.231072, so B (0.05 s, 1,000 tokens) is admitted then: TTFT 0.281072. */
static void test_prefill_holds_blocks(void **state)
{
    (void)state;
    char *dir, *p = fs_test_request_trace(&dir, "2023-11-16 18:00:00.0000000,1000,2\n"
                                      "2023-11-16 18:00:00.0500000,1000,2\n");
    reqs_t q;
    run(p, 4, 1024, 0, "v1", &q);
    assert_int_equal(q.n, 2);
    assert_double_equal(by_arrival(&q, 0)->ttft, 0.1, 1e-9);
    assert_double_equal(by_arrival(&q, 0.05)->ttft, 0.231072 + 0.1 - 0.05, 1e-9);
    done_trace(p, dir);
}

/* Decode preemption: A and B (16 tokens, 9 out) are prefilled together
 * (3.2 ms), both move (16 tokens: 2,097 us) into a decode replica of 32
 * KV tokens (2 blocks: 1 each).  Their first decode step needs a second
 * block each: B, the newest, is preempted and prefilled again on the
 * prefill replica (16 + 1 tokens), then moved again (17 tokens: 2,228 us).
 * A is never preempted. */
static void test_decode_preemption_reprefills(void **state)
{
    (void)state;
    char *dir, *p = fs_test_request_trace(&dir, "2023-11-16 18:00:00.0000000,16,9\n"
                                      "2023-11-16 18:00:00.0000000,16,9\n");
    reqs_t q;
    run(p, 2, 0, 32, "v1", &q);
    assert_int_equal(q.n, 2);
    const fs_request_row_t *a = q.r[0].preemptions ? &q.r[1] : &q.r[0];
    const fs_request_row_t *b = q.r[0].preemptions ? &q.r[0] : &q.r[1];
    assert_int_equal(a->preemptions, 0);
    assert_true(b->preemptions >= 1);
    assert_double_equal(a->ttft, 0.0032, 1e-9);
    assert_double_equal(b->ttft, 0.0032, 1e-9);     /* its first token stays */
    assert_double_equal(a->kv_transfer, 0.002097, 1e-9);
    /* each preemption costs a prefill of in + gen tokens and a move of them */
    assert_true(b->kv_transfer >= 0.002097 + 0.002228 - 1e-9);
    assert_int_equal(q.s.completed, 2);
    done_trace(p, dir);
}

/* Node failures stop prefill and decode replicas (8 GPUs: a node each): the
 * requests on a stopped replica (queued, prefilling, waiting for KV room,
 * in transfer or decoding) are retried, and the run ends with every
 * request but those in flight completed and no memory leaked (the
 * allocator's count in the teardown): 46 of 86,275 requests retried in the
 * seed-5 run, 29 replica starts. */
static void test_failures_retry(void **state)
{
    (void)state;
    const char *y =
        "name: t\nseed: 5\nuntil: horizon\nhorizon: 2d\nwarmup: 0s\n"
        "cluster: {pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}, "
        "{name: d, gpu: A100, nodes: 2, gpus_per_node: 8}]}\n"
        "workload: {synthetic: {arrivals: {rate: 1/d}, gpus: {1: 1.0}, "
        "duration: {dist: constant, value: 1m}}}\n"
        "output: {timeline_interval: 0, requests: true}\n"
        "failures: {components: [{kind: node, tbf: {dist: exponential, mean: 4h}}], "
        "repair: {soft: {dist: constant, value: 10m}, default: soft}}\n"
        "services:\n  - name: pd\n    gpus: 8\n"
        "    requests: {rate: 0.5/s, input: {dist: constant, value: 2000}, "
        "output: {dist: constant, value: 300}}\n"
        "    performance:\n"
        "      - {gpu: H100, prefill: 4000, decode: 1000, max_batch: 8, kv_tokens: 32768}\n"
        "      - {gpu: A100, prefill: 2000, decode: 400, max_batch: 16, decode_single: 50, "
        "kv_tokens: 40960}\n"
        "    disaggregated:\n"
        "      prefill: {replicas: 1, gpu: H100}\n"
        "      decode: {replicas: 1, gpu: A100}\n"
        "      kv_transfer: {bandwidth: 2e9, bytes_per_token: 131072}\n";
    reqs_t q;
    memset(&q, 0, sizeof q);
    fs_sink_t sink = {.job = on_job, .ud = &q, .request = on_request, .service = on_service};
    fs_test_run_yaml(y, NULL, 0, &sink, &q.t);
    assert_true(q.s.retried > 0);
    assert_true(q.s.cold_starts > 2);
    assert_true(q.s.completed > 0);
    assert_true(q.s.requests - q.s.completed < 40);
}

/* ---- bad input ----------------------------------------------------------------- */

static void expect_error(const char *svc_tail, const char *want)
{
    char y[4096];
    snprintf(y, sizeof y,
             BASE "services:\n  - name: pd\n"
             "    requests: {rate: 1/s, input: {dist: constant, value: 2000}, "
             "output: {dist: constant, value: 100}}\n"
             "    performance:\n"
             "      - {gpu: H100, prefill: 10000, decode: 1000, max_batch: 4}\n"
             "      - {gpu: A100, prefill: 5000, decode: 500, max_batch: 4, kv_tokens: 1024}\n"
             "%s", svc_tail);
    fs_error_t err;
    int rc = fs_test_create(y, &err);
    assert_int_equal(rc, FS_EINVAL);
    if (!strstr(err.msg, want))
        fail_msg("error '%s' lacks '%s'", err.msg, want);
}

static void test_config_errors(void **state)
{
    (void)state;
    expect_error("    disaggregated: {prefill: {replicas: 2}, kv_transfer: {bandwidth: 1e9, "
                 "bytes_per_token: 1000}}\n", "needs a decode group");
    expect_error("    disaggregated: {decode: {replicas: 2}, kv_transfer: {bandwidth: 1e9, "
                 "bytes_per_token: 1000}}\n", "needs a prefill group");
    expect_error("    disaggregated: {prefill: {replicas: 1}, decode: {replicas: 1}, "
                 "kv_transfer: {bytes_per_token: 1000}}\n", "kv_transfer.bandwidth");
    expect_error("    disaggregated: {prefill: {replicas: 1}, decode: {replicas: 1}, "
                 "kv_transfer: {bandwidth: 0, bytes_per_token: 1000}}\n", "bandwidth");
    expect_error("    disaggregated: {prefill: {replicas: 1}, decode: {replicas: 1}, "
                 "kv_transfer: {bandwidth: 1e9}}\n", "bytes_per_token");
    /* 2,100 tokens need 132 blocks; the A100 row holds 64 */
    expect_error("    disaggregated: {prefill: {replicas: 1, gpu: H100}, decode: {replicas: 1, "
                 "gpu: A100}, kv_transfer: {bandwidth: 1e9, bytes_per_token: 1000}}\n",
                 "needs 132 blocks");
    expect_error("    disaggregated: {prefill: {replicas: 1, gpu: H100}, decode: {replicas: 1, "
                 "gpu: L40S}, kv_transfer: {bandwidth: 1e9, bytes_per_token: 1000}}\n",
                 "no row for GPU model L40S");
    expect_error("    autoscale: {metric: concurrency, target: 4}\n"
                 "    disaggregated: {prefill: {replicas: 1}, decode: {replicas: 1, gpu: H100}, "
                 "kv_transfer: {bandwidth: 1e9, bytes_per_token: 1000}}\n", "autoscale.metric");
    expect_error("    disaggregated: {prefill: {replicas: 1}, decode: {replicas: 1, gpu: H100}, "
                 "kv_transfer: {bandwidth: 1e9, bytes_per_token: 1000, links: [{prefill_pool: p, "
                 "decode_pool: nowhere, bandwidth: 1e9}]}}\n", "no pool named 'nowhere'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_one_request, teardown),
        cmocka_unit_test_teardown(test_one_token_stays, teardown),
        cmocka_unit_test_teardown(test_full_decode_waits, teardown),
        cmocka_unit_test_teardown(test_prefill_holds_blocks, teardown),
        cmocka_unit_test_teardown(test_decode_preemption_reprefills, teardown),
        cmocka_unit_test_teardown(test_failures_retry, teardown),
        cmocka_unit_test_teardown(test_config_errors, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
