/*
 * Validation against queueing theory, with numbers nobody here chose:
 * an M/M/c queue is a fleet of c one-GPU nodes, Poisson arrivals of
 * one-GPU jobs and exponential run times under FIFO.  The mean wait and the
 * probability of waiting must agree with Erlang C (computed with GSL's
 * Poisson CDF and PDF) inside the 99% t-interval of R independent
 * replications; Little's law must hold exactly (to rounding) on every run.
 * docs/validation.md records the figures this test prints.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_statistics_double.h>

#include "fs_test_util.h"
#include "scenarios/fs_scenario.h"
#include "sim/api/fs_runner.h"
#include "sim/fs_alloc.h"

/* Erlang C: probability that an arrival waits in M/M/c with offered load
 * a = lambda/mu (a < c).  sum_{k<c} a^k/k! e^-a = P(Poisson(a) <= c-1). */
static double erlang_c(unsigned c, double a)
{
    double top = gsl_ran_poisson_pdf(c, a) * c / (c - a);
    return top / (gsl_cdf_poisson_P(c - 1, a) + top);
}

static int run_mmc(unsigned c, double rho, double mean_s, unsigned jobs, unsigned rep,
                   double warmup_frac, fs_summary_t *out)
{
    double lambda_h = rho * c * 3600.0 / mean_s;
    double horizon_h = jobs / lambda_h;
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "name: mmc\nseed: 2024\nreplication: %u\nhorizon: %.6fh\nwarmup: %.6fh\n"
             "cluster: {pools: [{name: q, gpu: H100, nodes: %u, gpus_per_node: 1}]}\n"
             "workload:\n  synthetic:\n    arrivals: {process: poisson, rate: %.9f/h}\n"
             "    gpus: {1: 1.0}\n    duration: {dist: exponential, mean: %.3fs}\n"
             "scheduler: {queue: fifo, mode: strict, placement: first_fit}\n"
             "output: {timeline_interval: 0s}\n",
             rep, horizon_h, horizon_h * warmup_frac, c, lambda_h, mean_s);
    fs_config_t cfg;
    fs_error_t err;
    int rc = fs_scenario_load_string("<mmc>", yaml, NULL, 0, &cfg, &err);
    if (rc) {
        fprintf(stderr, "%s\n", err.msg);
        return rc;
    }
    fs_run_opts_t opts;
    fs_run_opts_init(&opts);
    fs_run_report_t rep_out;
    rc = fs_run_config(&cfg, &opts, &rep_out, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    *out = rep_out.summary;
    fs_config_release(&cfg);
    return rc;
}

typedef struct mmc_case {
    unsigned c;
    double rho;
} mmc_case_t;

static void check_case(const mmc_case_t *k)
{
    enum { R = 10 };
    const unsigned jobs = 40000;
    const double mean_s = 3600;
    double waits[R], probs[R];
    for (unsigned r = 0; r < R; r++) {
        fs_summary_t s;
        assert_int_equal(run_mmc(k->c, k->rho, mean_s, jobs, r, 0.05, &s), 0);
        waits[r] = s.wait_mean;
        probs[r] = s.wait_prob;
        /* Little's law on every run (drain: every job left the system) */
        assert_true(s.little_rel_err < 1e-9);
    }
    double a = k->rho * k->c;
    double pw = erlang_c(k->c, a);
    double wq = pw * mean_s / (k->c - a);     /* C / (c mu - lambda) */
    double t = gsl_cdf_tdist_Pinv(0.995, R - 1);
    double mw = gsl_stats_mean(waits, 1, R), hw = t * gsl_stats_sd(waits, 1, R) / sqrt(R);
    double mp = gsl_stats_mean(probs, 1, R), hp = t * gsl_stats_sd(probs, 1, R) / sqrt(R);
    printf("M/M/%u rho=%.2f: Wq theory %.1f s, sim %.1f +- %.1f s (%.2f%%); "
           "P(wait) theory %.4f, sim %.4f +- %.4f (%.2f%%)\n",
           k->c, k->rho, wq, mw, hw, 100 * (mw - wq) / wq, pw, mp, hp, 100 * (mp - pw) / pw);
    assert_true(fabs(mw - wq) <= hw);
    assert_true(fabs(mp - pw) <= hp);
}

static void test_mm1(void **s) { (void)s; mmc_case_t k = {1, 0.7}; check_case(&k); }
static void test_mm4(void **s) { (void)s; mmc_case_t k = {4, 0.8}; check_case(&k); }
static void test_mm16(void **s) { (void)s; mmc_case_t k = {16, 0.85}; check_case(&k); }

/* Erlang C itself against a published table value: c = 2, a = 1 (rho 0.5)
 * gives P(wait) = 1/3; c = 1 reduces to rho. */
static void test_erlang_c_formula(void **s)
{
    (void)s;
    assert_double_equal(erlang_c(2, 1.0), 1.0 / 3.0, 1e-12);
    assert_double_equal(erlang_c(1, 0.7), 0.7, 1e-12);
}

/* Little's law for the queue alone, with no warm-up: the time integral of
 * jobs waiting equals the sum of waits (L_q T = sum W_q). */
static void test_little_queue(void **s)
{
    (void)s;
    fs_summary_t sum;
    assert_int_equal(run_mmc(3, 0.9, 600, 20000, 0, 0.0, &sum), 0);
    double lq_t = sum.queue_len_mean * sum.end_time;
    double w_n = sum.wait_mean * (double)sum.jobs_in_stats;
    printf("Little (queue): L_q*T = %.6f job-s, sum of waits = %.6f s\n", lq_t, w_n);
    assert_double_equal(lq_t, w_n, 1e-9 * w_n);
    assert_int_equal(sum.jobs_in_stats, sum.jobs_submitted);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_erlang_c_formula),
        cmocka_unit_test(test_little_queue),
        cmocka_unit_test(test_mm1),
        cmocka_unit_test(test_mm4),
        cmocka_unit_test(test_mm16),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
