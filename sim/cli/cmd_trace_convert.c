/*
 * fleetsim trace convert: any trace format to the native CSV (cmd_trace.c parses the command line).
 */
#include "cmd_trace_int.h"

/* ---- convert ------------------------------------------------------------------------ */


int trc_do_convert(const topts_t *o, input_t *in, fs_error_t *err)
{
    fs_native_writer_t *w = NULL;
    int rc = fs_native_writer_open(o->output, &w, err);
    if (rc)
        return rc;
    fs_job_t *buf = fs_malloc(BATCH * sizeof *buf);
    if (!buf) {
        fs_native_writer_abort(w);
        return fs_error_set(err, FS_ENOMEM, "out of memory");
    }
    uint64_t total = 0;
    for (;;) {
        size_t n = 0;
        if (fs_cli_stop) {
            rc = trc_interrupted_error(err);
            break;
        }
        if ((rc = fs_source_next(in->src, buf, BATCH, &n, err)) != 0 || n == 0) {
            if (rc && fs_cli_stop)   /* a read cut short by the signal */
                rc = trc_interrupted_error(err);
            break;
        }
        for (size_t i = 0; i < n && !rc; i++)
            rc = fs_native_writer_put(w, &buf[i], fs_source_tenant_name(in->src, buf[i].tenant),
                                      fs_source_gpu_type_name(in->src, buf[i].gpu_type), err);
        if (rc)
            break;
        total += n;
    }
    fs_free(buf);
    if (rc) {
        fs_native_writer_abort(w);
        return rc;
    }
    if ((rc = fs_native_writer_close(w, err)) != 0)
        return rc;
    fprintf(stderr, "fleetsim trace convert: %llu jobs written to %s", (unsigned long long)total,
            o->output);
    if (fs_source_skipped(in->src))
        fprintf(stderr, " (%llu rows skipped)", (unsigned long long)fs_source_skipped(in->src));
    fprintf(stderr, "\n");
    return 0;
}
