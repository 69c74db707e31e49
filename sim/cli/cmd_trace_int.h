/*
 * cmd_trace_int.h: what the files of `fleetsim trace` share (cmd_trace.c:
 * options, the streaming statistics, the input, formatting helpers and the
 * command; cmd_trace_info.c, cmd_trace_convert.c, cmd_trace_fit.c,
 * cmd_trace_outages.c: one subcommand each).
 */
#ifndef CMD_TRACE_INT_H
#define CMD_TRACE_INT_H

#include "fs_cli.h"
#include "fs_cliout.h"
#include "../../analysis/fs_fit.h"
#include "../../models/fs_mig.h"
#include "../../scenarios/fs_scenario.h"
#include "../../scenarios/fs_units.h"
#include "../../traces/fs_synth.h"
#include "../../traces/fs_reqtrace.h"
#include "../../traces/fs_trace.h"
#include "../fs_alloc.h"
#include "../fs_out.h"
#include "../../traces/fs_native.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_statistics_float.h>

#define HOURS_PER_WEEK (FS_SYNTH_HOURS * FS_SYNTH_DAYS)
#define BATCH 4096
/* At most this many size classes (--classes). */
#define MAX_CLASSES 32
/* A size class needs this many jobs to get its own duration model. */
#define MIN_CLASS_JOBS 30
/* The largest GPU count (as in the scenario language). */
#define MAX_GPUS 2147483648.0

/* ---- options ------------------------------------------------------------ */

typedef struct topts {
    const char *sub;            /* info, convert, fit */
    const char *file;           /* the trace (or NULL with --scenario) */
    const char *scenario;       /* --scenario: the workload of a scenario */
    const char *format;         /* --format (NULL: auto when the table has it, else native) */
    const char *output;         /* -o */
    const char *classes;        /* --classes */
    int lenient, json, keep_origin;
    int requests;               /* fit --requests: FILE is a request trace */
    double threshold;           /* outages --threshold: busy share under which an hour is out */
    double capacity;            /* outages --capacity: the cluster's GPUs */
    unsigned gpus_per_node;     /* outages --gpus-per-node (default 1) */
} topts_t;

typedef struct sclass {
    uint32_t lo, hi;
} sclass_t;

typedef struct tstat {
    uint64_t jobs, fractional, no_tenant;
    double first, last;             /* submit, s */
    double gpu_hours;
    double dur_sum;                 /* s */
    uint32_t *sizes;                /* GPU-count histogram, ascending sizes */
    uint64_t *size_n;
    size_t n_sizes, cap_sizes;
    float *dur;                     /* run time of each job, s */
    uint8_t *cls;                   /* fit: size class of each job (n_cls = none) */
    size_t n_dur, cap_dur, cap_cls;
    float *wait;                    /* recorded waits, s */
    size_t n_wait, cap_wait;
    uint64_t week[HOURS_PER_WEEK];  /* arrivals per hour of the week */
    uint64_t states[8];             /* by enum fs_job_rec_state */
    uint64_t *t_jobs;               /* per tenant */
    double *t_gpuh;
    size_t cap_t;
    int32_t n_t;
    const sclass_t *classes;        /* fit only */
    size_t n_cls;
    /* recorded over time, per day from day0 (the first submission's day):
     * waits of the jobs submitted that day, GPU-seconds of recorded runs */
    double day0;
    double *day_wait;               /* sum of recorded waits, s */
    uint64_t *day_waits;            /* jobs with a recorded wait */
    double *day_busy;               /* GPU-s of [rec_start, rec_end) */
    size_t n_days, cap_dw, cap_dn, cap_db;
    int have_busy;                  /* a job recorded its start and end */
} tstat_t;

typedef struct input {
    fs_config_t cfg;
    int have_cfg;
    fs_source_t *src;
    const char *format;
    const char *name;
} input_t;

/* cmd_trace.c */
void trc_tstat_release(tstat_t *s);
void trc_exposure(double a, double b, double out[HOURS_PER_WEEK]);
void trc_rate_profile(const tstat_t *s, double hourly[24], double daily[7]);
int trc_cmp_float(const void *a, const void *b);
double trc_quantile_f(const float *sorted, size_t n, double p);
int trc_read_all(input_t *in, tstat_t *s, fs_error_t *err);
const char *trc_human_s(double s, char *buf, size_t n);
void trc_put_yaml_str(FILE *f, const char *s);
void trc_put_json_str(FILE *f, const char *s);
void trc_put_json_num(FILE *f, double x);
void trc_round_shares(double *p, size_t n);
int trc_interrupted_error(fs_error_t *err);
int trc_write_out(const char *output, int (*fn)(FILE *f, void *ud, fs_error_t *err), void *ud,
                  fs_error_t *err);

/* the subcommands */
int trc_do_info(const topts_t *o, input_t *in, fs_error_t *err);          /* cmd_trace_info.c */
int trc_do_convert(const topts_t *o, input_t *in, fs_error_t *err);       /* cmd_trace_convert.c */
int trc_do_fit(const topts_t *o, input_t *in, fs_error_t *err);           /* cmd_trace_fit.c */
int trc_parse_classes(const char *text, sclass_t *out, size_t *n, fs_error_t *err);
int trc_do_fit_requests(const topts_t *o, fs_error_t *err);
int trc_do_outages(const topts_t *o, input_t *in, fs_error_t *err);       /* cmd_trace_outages.c */
/* A job's recorded run, for outage inference (also fleetsim calibrate). */
typedef struct trc_orec {
    uint64_t id;
    double submit, start, end, gpus;    /* s, s, s, GPUs */
    int32_t tenant;                     /* fs_job_t.tenant (-1: none) */
} trc_orec_t;
/* The jobs of src that record a start and an end (*no_rec: those that do
 * not); FS_EINVAL when none does. */
int trc_outage_records(fs_source_t *src, const char *name, trc_orec_t **out, size_t *n,
                       size_t *no_rec, fs_error_t *err);
/* Writes the outage file the rule infers (cmd_trace_outages.c's comment). */
int trc_outages_write(const char *name, const trc_orec_t *r, size_t n, double capacity,
                      double threshold, unsigned gpn, const char *output, size_t *n_out,
                      size_t *h_out, size_t *hours, fs_error_t *err);

#endif
