/*
 * fs_results_cols: the columns of the results file's tables (names, kinds,
 * units, memory offsets; docs/results.md) and the specs of the tables
 * written during the run.  /summary's columns are the rows of
 * fs_summary.def.
 */
#include "fs_results_int.h"

#include <string.h>

#define JOB_COL(name, kind, unit) {#name, kind, offsetof(fs_job_row_t, name), unit}
static const col_t job_cols[] = {
    JOB_COL(id, K_U64, "-"),
    JOB_COL(tenant, K_I32, "-"),
    JOB_COL(pool, K_I32, "-"),
    JOB_COL(gpus, K_U32, "GPU"),
    JOB_COL(gpu_milli, K_U32, "milliGPU"),
    JOB_COL(nodes, K_U32, "node"),
    JOB_COL(restarts, K_U32, "count"),
    JOB_COL(submit, K_F64, "s"),
    JOB_COL(start, K_F64, "s"),
    JOB_COL(end, K_F64, "s"),
    JOB_COL(wait, K_F64, "s"),
    JOB_COL(run, K_F64, "s"),
    JOB_COL(lost_gpu_s, K_F64, "GPU-s"),
    JOB_COL(state, K_STATE, "job_state"),
    JOB_COL(ckpt_s, K_F64, "s"),
    JOB_COL(recovery_s, K_F64, "s"),
    JOB_COL(ettr, K_F64, "fraction"),
    JOB_COL(goodput, K_F64, "fraction"),
    JOB_COL(queued_s, K_F64, "s"),
    JOB_COL(preemptions, K_U32, "count"),
    JOB_COL(preempt_lost_gpu_s, K_F64, "GPU-s"),
    JOB_COL(startup_s, K_F64, "s"),
    JOB_COL(sched_goodput, K_F64, "fraction"),
    JOB_COL(program_goodput, K_F64, "fraction"),
    JOB_COL(rec_start, K_F64, "s"),
};

#define SAMPLE_COL(name, kind, unit) {#name, kind, offsetof(fs_sample_row_t, name), unit}
static const col_t sample_cols[] = {
    SAMPLE_COL(time, K_F64, "s"),
    SAMPLE_COL(gpus_total, K_U32, "GPU"),
    SAMPLE_COL(gpus_up, K_U32, "GPU"),
    SAMPLE_COL(gpus_busy, K_U32, "GPU"),
    SAMPLE_COL(jobs_running, K_U32, "job"),
    SAMPLE_COL(jobs_queued, K_U32, "job"),
    SAMPLE_COL(gpus_queued, K_U64, "GPU"),
    SAMPLE_COL(nodes_down, K_U32, "node"),
    SAMPLE_COL(repair_queue, K_U32, "count"),
    SAMPLE_COL(nodes_provisioning, K_U32, "node"),
    SAMPLE_COL(nodes_autoscaled, K_U32, "node"),
    SAMPLE_COL(gpus_serving, K_U32, "GPU"),
    SAMPLE_COL(replicas, K_U32, "replica"),
    SAMPLE_COL(mig_instances, K_U32, "instance"),
    SAMPLE_COL(mig_busy, K_U32, "instance"),
    SAMPLE_COL(mig_serving, K_U32, "instance"),
    SAMPLE_COL(gpu_s_busy, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_down, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_waiting, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_idle, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_allocated, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_share_idle, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_held, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_computing, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_ckpt, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_startup, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_recovering, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_serving, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_frag, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_quota, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_reserved, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_blocked, K_F64, "GPU-s"),
};

#define FAIL_COL(name, kind, unit) {#name, kind, offsetof(fs_failure_row_t, name), unit}
static const col_t failure_cols[] = {
    FAIL_COL(time, K_F64, "s"),
    FAIL_COL(component, K_COMPONENT, "component"),
    FAIL_COL(unit, K_U32, "-"),
    FAIL_COL(nodes, K_U32, "node"),
    FAIL_COL(cause, K_STR, "-"),
    FAIL_COL(repair, K_REPAIR, "repair"),
    FAIL_COL(repair_time, K_F64, "s"),
    FAIL_COL(jobs_hit, K_U32, "job"),
    FAIL_COL(xid, K_U32, "-"),
};

#define IVAL_COL(name, kind, unit) {#name, kind, offsetof(fs_interval_row_t, name), unit}
static const col_t interval_cols[] = {
    IVAL_COL(job, K_U64, "-"),         IVAL_COL(tenant, K_I32, "-"),
    IVAL_COL(job_class, K_U32, "-"),   IVAL_COL(node, K_U32, "-"),
    IVAL_COL(gpus, K_U32, "GPU"),      IVAL_COL(gpu_milli, K_U32, "milliGPU"),
    IVAL_COL(gpu, K_U32, "-"),         IVAL_COL(start, K_F64, "s"),
    IVAL_COL(ready, K_F64, "s"),       IVAL_COL(end, K_F64, "s"),
    IVAL_COL(duty, K_F64, "fraction"), IVAL_COL(sm, K_F64, "fraction"),
    IVAL_COL(tensor, K_F64, "fraction"), IVAL_COL(dram, K_F64, "fraction"),
    IVAL_COL(fb, K_F64, "fraction"),   IVAL_COL(gpu_instance, K_I32, "-"),
};

#define NG_COL(name, kind, unit) {#name, kind, offsetof(fs_nodegroup_row_t, name), unit}
static const col_t nodegroup_cols[] = {
    NG_COL(time, K_F64, "s"),                 NG_COL(group, K_U32, "-"),
    NG_COL(pool, K_U32, "-"),                 NG_COL(nodes_provisioning, K_U32, "node"),
    NG_COL(nodes_ready, K_U32, "node"),       NG_COL(nodes_added, K_U64, "node"),
    NG_COL(nodes_removed, K_U64, "node"),     NG_COL(node_s_provisioning, K_F64, "node-s"),
    NG_COL(node_s_ready, K_F64, "node-s"),
};

#define ML_COL(name, kind, unit) {#name, kind, offsetof(fs_mig_layout_row_t, name), unit}
static const col_t mig_layout_cols[] = {
    ML_COL(time, K_F64, "s"),   ML_COL(ready, K_F64, "s"), ML_COL(pool, K_U32, "-"),
    ML_COL(node, K_U32, "-"),   ML_COL(gpu, K_U32, "-"),   ML_COL(layout, K_STR, "-"),
    ML_COL(cordoned, K_F64, "s"),
};

#define SVC_COL(name, kind, unit) {#name, kind, offsetof(fs_service_row_t, name), unit}
static const col_t service_cols[] = {
    SVC_COL(name, K_STR, "-"),          SVC_COL(mode, K_U32, "-"),
    SVC_COL(requests, K_U64, "count"),  SVC_COL(completed, K_U64, "count"),
    SVC_COL(retried, K_U64, "count"),   SVC_COL(ttft_p50, K_F64, "s"),
    SVC_COL(ttft_p95, K_F64, "s"),      SVC_COL(ttft_p99, K_F64, "s"),
    SVC_COL(ttft_mean, K_F64, "s"),     SVC_COL(tpot_p50, K_F64, "s"),
    SVC_COL(tpot_p95, K_F64, "s"),      SVC_COL(tpot_p99, K_F64, "s"),
    SVC_COL(slo_attainment, K_F64, "fraction"), SVC_COL(buckets_met, K_F64, "fraction"),
    SVC_COL(replica_hours, K_F64, "replica-h"), SVC_COL(ready_hours, K_F64, "replica-h"),
    SVC_COL(gpu_hours, K_F64, "GPU-h"), SVC_COL(cold_starts, K_U64, "count"),
    SVC_COL(startup_gpu_hours, K_F64, "GPU-h"), SVC_COL(tokens_out, K_F64, "tokens"),
    SVC_COL(tokens_per_gpu_s, K_F64, "tokens/GPU-s"), SVC_COL(cost_per_mtok, K_F64, "USD/Mtoken"),
    SVC_COL(prefix_hits, K_U64, "count"), SVC_COL(prefix_tokens, K_U64, "tokens"),
};

#define BKT_COL(name, kind, unit) {#name, kind, offsetof(fs_svc_bucket_row_t, name), unit}
static const col_t bucket_cols[] = {
    BKT_COL(service, K_U32, "-"),       BKT_COL(start, K_F64, "s"),
    BKT_COL(end, K_F64, "s"),           BKT_COL(requests, K_U64, "count"),
    BKT_COL(completed, K_U64, "count"), BKT_COL(ttft_p50, K_F64, "s"),
    BKT_COL(ttft_p95, K_F64, "s"),      BKT_COL(ttft_p99, K_F64, "s"),
    BKT_COL(tpot_p50, K_F64, "s"),      BKT_COL(tpot_p95, K_F64, "s"),
    BKT_COL(tpot_p99, K_F64, "s"),      BKT_COL(slo_attainment, K_F64, "fraction"),
    BKT_COL(replicas, K_F64, "replica"), BKT_COL(ready, K_F64, "replica"),
    BKT_COL(gpus, K_F64, "GPU"),        BKT_COL(cold_starts, K_U32, "count"),
    BKT_COL(tokens_per_s, K_F64, "tokens/s"), BKT_COL(waiting, K_F64, "request"),
    BKT_COL(running, K_F64, "request"), BKT_COL(kv_usage, K_F64, "fraction"),
    BKT_COL(preemptions, K_U32, "count"), BKT_COL(tokens_in_per_s, K_F64, "tokens/s"),
    BKT_COL(goodput, K_F64, "1/s"),     BKT_COL(prefix_hits, K_U32, "count"),
    BKT_COL(prefix_tokens, K_U64, "tokens"),
    BKT_COL(prefill_replicas, K_F64, "replica"), BKT_COL(prefill_busy, K_F64, "replica"),
    BKT_COL(prefill_running, K_F64, "request"), BKT_COL(prefill_waiting, K_F64, "request"),
    BKT_COL(prefill_kv_usage, K_F64, "fraction"), BKT_COL(decode_replicas, K_F64, "replica"),
    BKT_COL(decode_busy, K_F64, "replica"), BKT_COL(decode_running, K_F64, "request"),
    BKT_COL(decode_waiting, K_F64, "request"), BKT_COL(decode_kv_usage, K_F64, "fraction"),
    BKT_COL(kv_transfers, K_F64, "transfer"),
};

#define REQ_COL(name, kind, unit) {#name, kind, offsetof(fs_request_row_t, name), unit}
static const col_t request_cols[] = {
    REQ_COL(service, K_U32, "-"),   REQ_COL(input, K_U32, "tokens"),
    REQ_COL(output, K_U32, "tokens"), REQ_COL(retries, K_U32, "count"),
    REQ_COL(replica, K_U32, "-"),   REQ_COL(preemptions, K_U32, "count"),
    REQ_COL(prefix, K_U32, "-"),    REQ_COL(prefix_len, K_U32, "tokens"),
    REQ_COL(prefix_hit, K_U32, "tokens"), REQ_COL(decode_replica, K_U32, "-"),
    REQ_COL(arrival, K_F64, "s"),   REQ_COL(admitted, K_F64, "s"), REQ_COL(ttft, K_F64, "s"),
    REQ_COL(tpot, K_F64, "s"),      REQ_COL(end, K_F64, "s"), REQ_COL(kv_transfer, K_F64, "s"),
};

/* Every field of fs_summary_t, in declaration order: one per row of
 * fs_summary.def (u64 columns for uint64_t, f64 for double). */
#define SUMMARY_KIND_uint64_t K_U64
#define SUMMARY_KIND_double K_F64
#define FS_SUMMARY(name, ctype, unit, from, probe, desc)                                    \
    {#name, SUMMARY_KIND_##ctype, offsetof(fs_summary_t, name), unit},
static const col_t fs_rs_summary_cols[] = {
#include "fs_summary.def"
};
#undef FS_SUMMARY
_Static_assert(sizeof fs_rs_summary_cols / sizeof fs_rs_summary_cols[0] <= MAX_COLS, "MAX_COLS too small");
_Static_assert(sizeof fs_rs_summary_cols / sizeof fs_rs_summary_cols[0] * 8 == sizeof(fs_summary_t),
               "every fs_summary_t field (all 8 bytes wide) has a /summary column");

const table_spec_t fs_rs_jobs_spec = {"jobs", "fleetsim jobs", job_cols, N_OF(job_cols),
                                       NULL, NULL, CHUNK_ROWS};
const table_spec_t fs_rs_timeline_spec = {"timeline", "fleetsim timeline", sample_cols,
                                           N_OF(sample_cols), NULL, NULL, CHUNK_ROWS};
static const size_t failure_strsz[N_OF(failure_cols)] = {[4] = FS_FAILURE_CAUSE_MAX};
const table_spec_t fs_rs_failures_spec = {"failures", "fleetsim failures", failure_cols,
                                           N_OF(failure_cols), failure_strsz, NULL, CHUNK_ROWS};
const table_spec_t fs_rs_intervals_spec = {"gpu_intervals", "fleetsim GPU intervals",
                                            interval_cols, N_OF(interval_cols), NULL, NULL,
                                            CHUNK_ROWS};
static const size_t service_strsz[N_OF(service_cols)] = {[0] = FS_SERVICE_NAME_MAX};
const table_spec_t fs_rs_services_spec = {"services", "fleetsim services", service_cols,
                                           N_OF(service_cols), service_strsz, NULL, CHUNK_ROWS};
const table_spec_t fs_rs_buckets_spec = {"service_buckets", "fleetsim service buckets",
                                          bucket_cols, N_OF(bucket_cols), NULL, NULL, CHUNK_ROWS};
const table_spec_t fs_rs_requests_spec = {"requests", "fleetsim requests", request_cols,
                                           N_OF(request_cols), NULL, NULL, CHUNK_ROWS};
const table_spec_t fs_rs_nodegroups_spec = {"nodegroups", "fleetsim node groups", nodegroup_cols,
                                             N_OF(nodegroup_cols), NULL, NULL, CHUNK_ROWS};
static const size_t mig_layout_strsz[N_OF(mig_layout_cols)] = {[5] = FS_MIG_LAYOUT_TEXT};
const table_spec_t fs_rs_mig_layouts_spec = {"mig_layouts", "fleetsim MIG layouts",
                                              mig_layout_cols, N_OF(mig_layout_cols),
                                              mig_layout_strsz, NULL, CHUNK_ROWS};
const table_spec_t fs_rs_summary_spec = {"summary", "fleetsim summary", fs_rs_summary_cols,
                                          N_OF(fs_rs_summary_cols), NULL, NULL, 1};

const fs_rs_streamed_t fs_rs_streamed[N_STREAMED] = {
    [T_JOBS] = {&fs_rs_jobs_spec, sizeof(fs_job_row_t)},
    [T_TIMELINE] = {&fs_rs_timeline_spec, sizeof(fs_sample_row_t)},
    [T_FAILURES] = {&fs_rs_failures_spec, sizeof(fs_failure_row_t)},
    [T_INTERVALS] = {&fs_rs_intervals_spec, sizeof(fs_interval_row_t)},
    [T_SERVICES] = {&fs_rs_services_spec, sizeof(fs_service_row_t)},
    [T_BUCKETS] = {&fs_rs_buckets_spec, sizeof(fs_svc_bucket_row_t)},
    [T_REQUESTS] = {&fs_rs_requests_spec, sizeof(fs_request_row_t)},
    [T_NODEGROUPS] = {&fs_rs_nodegroups_spec, sizeof(fs_nodegroup_row_t)},
    [T_MIG_LAYOUTS] = {&fs_rs_mig_layouts_spec, sizeof(fs_mig_layout_row_t)},
};

const char *fs_results_summary_field(size_t i, const fs_summary_t *sum, double *value,
                                     int *is_count, const char **unit)
{
    if (i >= N_OF(fs_rs_summary_cols))
        return NULL;
    const col_t *c = &fs_rs_summary_cols[i];
    const char *p = (const char *)sum + c->off;
    *is_count = c->kind == K_U64;
    if (c->kind == K_U64) {
        uint64_t u;
        memcpy(&u, p, sizeof u);
        *value = (double)u;
    } else {
        memcpy(value, p, sizeof *value);
    }
    if (unit)
        *unit = c->unit;
    return c->name;
}

