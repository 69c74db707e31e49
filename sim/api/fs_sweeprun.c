/*
 * Running a sweep (see fs_sweeprun.h and docs/sweeps.md).
 *
 * Work distribution: the runs this process must do (its shard, minus runs
 * already complete when resuming) form a list; worker threads take the
 * next entry under a mutex.  Under MPI the list lives on rank 0: rank 0's
 * main thread serves requests (a probe + a 2 ms nap, so it does not
 * spin a core away from the workers) while its own worker threads take
 * from the same list; workers on other ranks ask rank 0 for one run at a
 * time (MPI calls serialized by a mutex).  Dynamic distribution keeps the
 * ranks busy whatever the runs cost; which rank runs what never changes
 * the bytes written.
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS */
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "fs_sweeprun.h"
#include "fs_runner.h"
#include "../../analysis/fs_fmt.h"
#include "../../scenarios/fs_scenario.h"
#include "../fs_alloc.h"
#include "../fs_out.h"
#include "../fs_clock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fs_mpi.h"

void fs_sweep_opts_init(fs_sweep_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->threads = 1;
}

/* ---- the plan as the index sees it ------------------------------------------------ */

/* The fs_index_sweep_t view of a plan; values (n_points * n_params) and
 * keys are arrays owned by the caller (fs_free each), strings borrowed. */
static int fs_sweep_index_view(const fs_sweep_plan_t *p, fs_index_sweep_t *s, fs_error_t *err)
{
    memset(s, 0, sizeof *s);
    const char **keys = fs_calloc(p->n_params ? p->n_params : 1, sizeof *keys);
    size_t nv = p->n_points * p->n_params;
    const char **vals = fs_calloc(nv ? nv : 1, sizeof *vals);
    if (!keys || !vals) {
        fs_free(keys);
        fs_free(vals);
        return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    }
    for (size_t j = 0; j < p->n_params; j++)
        keys[j] = p->params[j].key;
    for (size_t pt = 0; pt < p->n_points; pt++)
        for (size_t j = 0; j < p->n_params; j++)
            vals[pt * p->n_params + j] = p->params[j].values[fs_sweep_value_index(p, pt, j)];
    s->name = p->name;
    s->scenario_path = p->path;
    s->scenario_text = p->text;
    s->sets = (const char *const *)p->sets;
    s->n_sets = p->n_sets;
    s->combine = p->combine == FS_SWEEP_ZIP ? "zip" : "grid";
    s->warmup = p->warmup;
    s->replications = p->replications;
    s->n_params = p->n_params;
    s->keys = keys;
    s->n_points = p->n_points;
    s->values = vals;
    s->digest = fs_sweep_plan_digest(p);
    return 0;
}

static void fs_sweep_index_view_free(fs_index_sweep_t *s)
{
    fs_free((void *)s->keys);
    fs_free((void *)s->values);
    s->keys = s->values = NULL;
}

/* ---- shared state of one execution ------------------------------------------------- */

typedef struct exec {
    const fs_sweep_plan_t *plan;
    const fs_sweep_opts_t *o;
    pthread_mutex_t lock;       /* the work list, counters, stderr */
    pthread_mutex_t h5;         /* every HDF5 call of the process */
    double h5_since;            /* when the holder of h5 took it (monotonic s) */
    double h5_held, h5_wait;    /* s held, s waited for it (under h5) */
    double run_s;               /* s inside fs_run_config, all workers (under lock) */
    pthread_mutex_t mpi;        /* MPI calls of the worker threads */
    size_t *todo;               /* run indices (rank 0 / single process) */
    size_t n_todo, next;
    size_t done, failed, total_todo;
    double t0, last_print;      /* wall clock at the start and at the last progress line */
    int use_mpi, rank, size;
    const fs_mpi_ops_t *mpi_ops;   /* the MPI module's calls (use_mpi) */
    int first_rc;
    fs_error_t first_err;
    int lock_fd[2];             /* DIR/.lock and the shard's lock (-1: none) */
    struct shared *sh;          /* worker processes: what they share, or NULL */
    fs_alloc_ctx_t *mem;        /* the caller's allocation context, bound by every worker */
} exec_t;

/* Worker processes (fs_sweep_opts_t.processes): the run counter and each
 * process's tallies, in one anonymous shared mapping.  A process writes
 * only its own slot; the parent reads them after waitpid. */
typedef struct proc_slot {
    size_t done, failed;
    double run_s, h5_held, h5_wait;
    int first_rc;
    int finished;               /* the process got to its end (else it died) */
    fs_error_t first_err;
} proc_slot_t;

typedef struct shared {
    atomic_size_t next;         /* the next entry of todo */
    atomic_size_t done;         /* runs done, all processes (progress) */
    proc_slot_t slot[];         /* one per worker process */
} shared_t;

static void h5_lock(void *ud, int lock)
{
    exec_t *x = ud;
    if (lock) {
        double t0 = fs_clock_wall();
        pthread_mutex_lock(&x->h5);
        x->h5_since = fs_clock_wall();
        x->h5_wait += x->h5_since - t0;
    } else {
        x->h5_held += fs_clock_wall() - x->h5_since;
        pthread_mutex_unlock(&x->h5);
    }
}

static int interrupted(const exec_t *x)
{
    return x->o->interrupt && *x->o->interrupt;
}

/* The next run from the local list, or -1. */
static long long take_local(exec_t *x)
{
    long long k = -1;
    if (x->sh) {   /* worker processes: one thread each */
        size_t i = interrupted(x) ? x->n_todo : atomic_fetch_add(&x->sh->next, 1);
        return i < x->n_todo ? (long long)x->todo[i] : -1;
    }
    pthread_mutex_lock(&x->lock);
    if (!interrupted(x) && x->next < x->n_todo)
        k = (long long)x->todo[x->next++];
    pthread_mutex_unlock(&x->lock);
    return k;
}

static long long take(exec_t *x)
{
    if (x->use_mpi && x->rank != 0) {
        long long k = -1;
        pthread_mutex_lock(&x->mpi);
        x->mpi_ops->request(&k);
        pthread_mutex_unlock(&x->mpi);
        return k;
    }
    return take_local(x);
}

static char *run_path(const exec_t *x, size_t k)
{
    size_t point;
    uint64_t rep;
    char rel[64];
    fs_sweep_run_split(x->plan, k, &point, &rep);
    fs_index_run_file(point, rep, rel, sizeof rel);
    size_t n = strlen(x->o->dir) + strlen(rel) + 2;
    char *p = fs_malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", x->o->dir, rel);
    return p;
}

static void record_failure(exec_t *x, size_t k, int rc, const fs_error_t *e)
{
    size_t point;
    uint64_t rep;
    fs_sweep_run_split(x->plan, k, &point, &rep);
    pthread_mutex_lock(&x->lock);
    x->failed++;
    if (!x->first_rc) {
        x->first_rc = rc;
        x->first_err = *e;
    }
    if (rc != FS_EINTR && x->o->on_failure)
        x->o->on_failure(x->o->on_failure_ud, point, rep, rc, e);
    else if (rc != FS_EINTR)
        fprintf(stderr, "%sfleetsim sweep: run %zu (point %zu, replication %" PRIu64 ") failed: %s\n",
                x->o->progress && x->o->progress_every <= 0 ? "\r\033[K" : "", k, point, rep, e->msg);
    pthread_mutex_unlock(&x->lock);
}

/* Runs done, elapsed and the time left at the rate so far (runs of a sweep take
 * about equally long).  On a terminal one line redrawn in place after every
 * run; otherwise one whole line every progress_every seconds, so that a log
 * or a batch job's output shows the sweep's progress at a low rate.  Called
 * with the lock held. */
static void progress_line(exec_t *x)
{
    double now = fs_clock_wall(), el = now - x->t0;
    int in_place = x->o->progress_every <= 0;
    if (!in_place && now - x->last_print < x->o->progress_every)
        return;
    x->last_print = now;
    char elapsed[32], left[32];
    fs_fmt_duration(elapsed, sizeof elapsed, el);
    if (x->done < x->total_todo)
        fs_fmt_duration(left, sizeof left, el / (double)x->done * (double)(x->total_todo - x->done));
    else
        snprintf(left, sizeof left, "0 s");
    fprintf(stderr, "%sfleetsim sweep: %zu of %zu runs done (%.0f%%), %s elapsed, ETA %s%s",
            in_place ? "\r\033[K" : "", x->done, x->total_todo,
            100.0 * (double)x->done / (double)x->total_todo, elapsed, left, in_place ? "" : "\n");
    fflush(stderr);
}

static void *worker(void *ud)
{
    exec_t *x = ud;
    fs_alloc_bind(x->mem);     /* a new thread: nothing to restore */
    for (;;) {
        long long kk = take(x);
        if (kk < 0)
            break;
        size_t k = (size_t)kk;
        fs_error_t e;
        fs_error_clear(&e);
        fs_config_t cfg;
        char *path = run_path(x, k);
        int rc = path ? fs_sweep_load_run(x->plan, k, &cfg, &e)
                      : fs_error_set(&e, FS_ENOMEM, "sweep: out of memory");
        if (rc == 0) {
            fs_run_opts_t ro;
            fs_run_opts_init(&ro);
            ro.output = path;
            ro.interrupt = x->o->interrupt;
            ro.io_lock = h5_lock;
            ro.io_lock_ud = x;
            size_t point;
            uint64_t rep;
            fs_sweep_run_split(x->plan, k, &point, &rep);
            ro.in_sweep = 1;
            ro.sweep_digest = fs_sweep_plan_digest(x->plan);
            ro.sweep_point = point;
            fs_run_report_t rr;
            double t0 = fs_clock_wall();
            rc = fs_run_config(&cfg, &ro, &rr, &e);
            double dt = fs_clock_wall() - t0;
            fs_config_release(&cfg);
            pthread_mutex_lock(&x->lock);
            x->run_s += dt;
            pthread_mutex_unlock(&x->lock);
        }
        fs_free(path);
        if (rc) {
            record_failure(x, k, rc, &e);
            continue;
        }
        pthread_mutex_lock(&x->lock);
        x->done++;
        if (x->o->progress && x->rank == 0) {
            size_t mine = x->done;
            if (x->sh)   /* the line counts every process's runs */
                x->done = atomic_fetch_add(&x->sh->done, 1) + 1;
            progress_line(x);
            x->done = mine;
        }
        pthread_mutex_unlock(&x->lock);
    }
    return NULL;
}

/* ---- preparing the directory ---------------------------------------------------------- */

static int make_dir(const char *path, fs_error_t *err)
{
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return fs_error_set(err, FS_EIO, "%s: cannot create the directory: %s", path, strerror(errno));
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return fs_error_set(err, FS_EIO, "%s: not a directory", path);
    return 0;
}

/* The manifest: written when absent; when present it must describe the
 * same plan. */
static int check_manifest(const fs_sweep_plan_t *plan, const char *dir, fs_error_t *err)
{
    char *path = fs_out_join(dir, "sweep.h5");
    if (!path)
        return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    struct stat st;
    int rc = 0;
    if (stat(path, &st) == 0) {
        fs_index_manifest_t *m = NULL;
        if ((rc = fs_index_read_manifest(path, &m, err)) == 0) {
            if (m->s.digest != fs_sweep_plan_digest(plan))
                rc = fs_error_set(err, FS_EINVAL, "%s holds another sweep (%s, from %s): a different "
                                  "scenario, --set list or set of points; use another -o directory",
                                  dir, m->s.name ? m->s.name : "?",
                                  m->s.scenario_path ? m->s.scenario_path : "?");
            fs_index_manifest_free(m);
        }
    } else {
        fs_index_sweep_t s;
        if ((rc = fs_sweep_index_view(plan, &s, err)) == 0) {
            rc = fs_index_write_manifest(path, &s, err);
            fs_sweep_index_view_free(&s);
        }
    }
    fs_free(path);
    return rc;
}

/* Removes DIR/runs/<run file>.tmp.* of the runs in mine[] (stale files of
 * killed runs; other shards' files are left alone). */
static void remove_temps(const exec_t *x, const unsigned char *mine)
{
    char *runs = fs_out_join(x->o->dir, "runs");
    DIR *d = runs ? opendir(runs) : NULL;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        unsigned long long p, r;
        int used = 0;
        if (sscanf(de->d_name, "p%llu-r%llu.h5.tmp.%*d%n", &p, &r, &used) < 2 || !used ||
            de->d_name[used] != '\0' || p >= x->plan->n_points || r >= x->plan->replications)
            continue;
        if (!mine[fs_sweep_run_index(x->plan, (size_t)p, r)])
            continue;
        char *f = fs_out_join(runs, de->d_name);
        if (f)
            unlink(f);
        fs_free(f);
    }
    if (d)
        closedir(d);
    fs_free(runs);
}

/* Refuses an output directory whose files (index, manifest, run files)
 * include an input of the sweep: its scenario, and the trace, machine list
 * and manifests of its first points (a sweep may vary a path: the first
 * MAX_CHECKED_POINTS are checked; the loads are cheap next to one run). */
#define MAX_CHECKED_POINTS 64
static int check_inputs(const fs_sweep_plan_t *plan, const char *dir, fs_error_t *err)
{
    static const char *const names[] = {"index.h5", "sweep.h5"};
    const char *in[FS_SCENARIO_MAX_INPUTS];
    size_t n = 0;
    in[n++] = plan->path;
    int rc = fs_out_check_dir_inputs("sweep", dir, names, 2, in, n, err);
    for (size_t pt = 0; !rc && pt < plan->n_points && pt < MAX_CHECKED_POINTS; pt++) {
        fs_config_t cfg;
        fs_error_t e;
        if (fs_sweep_load_run(plan, fs_sweep_run_index(plan, pt, 0), &cfg, &e) != 0)
            continue;   /* the run reports it */
        n = 0;
        fs_scenario_inputs(&cfg, in, &n, FS_SCENARIO_MAX_INPUTS);
        rc = fs_out_check_dir_inputs("sweep", dir, names, 2, in, n, err);
        fs_config_release(&cfg);
    }
    return rc;
}

/* Names the holder of a lock file (its text: "pid PID on HOST"). */
static void holder_of(int fd, char *buf, size_t n)
{
    ssize_t k = pread(fd, buf, n - 1, 0);
    buf[k > 0 ? k : 0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    if (!buf[0])
        snprintf(buf, n, "another process");
}

/* Takes lock file DIR/NAME (flock: released by the kernel when the process
 * ends, however it ends) exclusive or shared, without waiting; writes "pid
 * PID on HOST" into it when exclusive.  FS_EUSAGE naming the holder when
 * another process holds it. */
static int take_lock(const char *dir, const char *name, int exclusive, int *fd_out,
                     fs_error_t *err)
{
    char *path = fs_out_join(dir, name);
    if (!path)
        return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        int rc = fs_error_set(err, FS_EIO, "%s: cannot create the lock file: %s", path,
                              strerror(errno));
        fs_free(path);
        return rc;
    }
    if (flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
        int e = errno;
        char who[200];
        holder_of(fd, who, sizeof who);
        close(fd);
        int rc = e == EWOULDBLOCK
                     ? fs_error_set(err, FS_EUSAGE, "%s is in use by another fleetsim (%s, lock "
                                    "%s): two processes on one sweep directory would delete each "
                                    "other's runs; wait for it, or use another -o directory",
                                    dir, who, path)
                     : fs_error_set(err, FS_EIO, "%s: cannot lock: %s", path, strerror(e));
        fs_free(path);
        return rc;
    }
    if (exclusive) {
        char host[256] = "?", text[320];
        if (gethostname(host, sizeof host) != 0)
            snprintf(host, sizeof host, "?");
        host[sizeof host - 1] = '\0';
        int len = snprintf(text, sizeof text, "pid %ld on %s\n", (long)getpid(), host);
        if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)len, 0) != len) {
            /* the lock holds without the note; only the message is poorer */
        }
    }
    fs_free(path);
    *fd_out = fd;
    return 0;
}

/* One sweep per directory: a whole sweep holds DIR/.lock exclusive; a
 * shard holds it shared (shards of one sweep run side by side) and its own
 * DIR/.lock-shard-I-of-N exclusive (the same shard twice is refused). */
static int lock_dir(exec_t *x, fs_error_t *err)
{
    const fs_sweep_opts_t *o = x->o;
    if (o->n_shards <= 1)
        return take_lock(o->dir, ".lock", 1, &x->lock_fd[0], err);
    char name[96];
    snprintf(name, sizeof name, ".lock-shard-%zu-of-%zu", o->shard, o->n_shards);
    int rc = take_lock(o->dir, name, 1, &x->lock_fd[1], err);
    if (!rc)
        rc = take_lock(o->dir, ".lock", 0, &x->lock_fd[0], err);
    return rc;
}

static void unlock_dir(exec_t *x)
{
    for (int i = 0; i < 2; i++)
        if (x->lock_fd[i] >= 0) {
            close(x->lock_fd[i]);   /* releases the flock */
            x->lock_fd[i] = -1;
        }
}

/* Rank 0 / single process: the directory, the manifest and the list of
 * runs to do. */
static int prepare(exec_t *x, fs_sweep_report_t *rep, fs_error_t *err)
{
    const fs_sweep_plan_t *plan = x->plan;
    const fs_sweep_opts_t *o = x->o;
    char *runs = fs_out_join(o->dir, "runs");
    int rc;
    if (!runs)
        return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    if ((rc = check_inputs(plan, o->dir, err)) != 0 || (rc = make_dir(o->dir, err)) != 0 ||
        (rc = lock_dir(x, err)) != 0 || (rc = make_dir(runs, err)) != 0 ||
        (rc = check_manifest(plan, o->dir, err)) != 0) {
        fs_free(runs);
        return rc;
    }
    fs_free(runs);
    unsigned char *mine = fs_calloc(plan->n_runs ? plan->n_runs : 1, 1);
    x->todo = fs_calloc(plan->n_runs ? plan->n_runs : 1, sizeof *x->todo);
    if (!mine || !x->todo) {
        fs_free(mine);
        return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    }
    size_t first_done = (size_t)-1;
    for (size_t k = 0; k < plan->n_runs; k++) {
        if (o->n_shards > 1 && fs_sweep_shard_of(k, o->n_shards) != o->shard)
            continue;
        mine[k] = 1;
        rep->runs_mine++;
        char *path = run_path(x, k);
        if (!path) {
            fs_free(mine);
            return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
        }
        size_t point;
        uint64_t r;
        char why[160];
        fs_sweep_run_split(plan, k, &point, &r);
        int st = fs_index_run_state_of(path, fs_sweep_plan_digest(plan), point, r, why,
                                       sizeof why);
        if (st == FS_RUN_FOREIGN) {
            fs_error_set(err, FS_EINVAL, "%s is not run %zu (point %zu, replication %" PRIu64
                         ") of this sweep: it is %s; remove it (or use another -o directory)",
                         path, k, point, r, why);
            fs_free(path);
            fs_free(mine);
            return FS_EINVAL;
        }
        fs_free(path);
        if (st == FS_RUN_COMPLETE) {
            rep->runs_skipped++;
            if (first_done == (size_t)-1)
                first_done = k;
            continue;
        }
        x->todo[x->n_todo++] = k;
    }
    if (rep->runs_skipped && !o->resume) {
        size_t point;
        uint64_t r;
        char rel[64];
        fs_sweep_run_split(plan, first_done, &point, &r);
        fs_free(mine);
        return fs_error_set(err, FS_EINVAL, "%s already holds %zu finished run%s of this sweep (%s, "
                            "...); add --resume to continue it, or use another -o directory", o->dir,
                            rep->runs_skipped, rep->runs_skipped == 1 ? "" : "s",
                            fs_index_run_file(point, r, rel, sizeof rel));
    }
    remove_temps(x, mine);
    fs_free(mine);
    x->total_todo = x->n_todo;
    x->t0 = x->last_print = fs_clock_wall();
    return 0;
}

/* ---- threads ------------------------------------------------------------------------------ */

static int start_workers(exec_t *x, pthread_t *th, unsigned n, unsigned *started, fs_error_t *err)
{
    *started = 0;
    for (unsigned i = 0; i < n; i++) {
        int e = pthread_create(&th[i], NULL, worker, x);
        if (e) {
            return fs_error_set(err, FS_EIO, "cannot start worker thread %u: %s", i, strerror(e));
        }
        (*started)++;
    }
    return 0;
}

static void join_workers(pthread_t *th, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        pthread_join(th[i], NULL);
}

/* ---- worker processes (fs_sweep_opts_t.processes) ------------------------------------------ */

/* Why processes: every HDF5 call of a process runs under one lock, and for
 * the small runs sweeps are made of, opening, laying out and closing a
 * results file is most of a run (docs/performance.md "Sweeps"), so threads
 * queue on the lock.  A process has its own HDF5: nothing is serialized.
 * Each process writes only its runs' files (named by run), so the files are
 * the same whichever process ran what. */

static void slot_save(const exec_t *x, proc_slot_t *s)
{
    s->done = x->done;
    s->failed = x->failed;
    s->run_s = x->run_s;
    s->h5_held = x->h5_held;
    s->h5_wait = x->h5_wait;
    s->first_rc = x->first_rc;
    s->first_err = x->first_err;
    s->finished = 1;
}

/* Runs the work list on n processes: this one and n - 1 children.  The
 * tallies of all end up in x; a child that could not start is no error
 * (the others take its runs), one that died is a failure. */
static int run_processes(exec_t *x, unsigned n, unsigned *started, fs_error_t *err)
{
    size_t bytes = sizeof(shared_t) + n * sizeof(proc_slot_t);
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return fs_error_set(err, FS_EIO, "sweep: cannot map memory for worker processes: %s",
                            strerror(errno));
    shared_t *sh = mem;
    memset(sh, 0, bytes);
    atomic_init(&sh->next, 0);
    atomic_init(&sh->done, 0);
    x->sh = sh;
    pid_t *pid = fs_calloc(n, sizeof *pid);
    if (!pid) {
        munmap(mem, bytes);
        x->sh = NULL;
        return fs_error_set(err, FS_ENOMEM, "sweep: out of memory");
    }
    fflush(NULL);   /* nothing buffered is written twice */
    for (unsigned i = 1; i < n; i++) {
        pid[i] = fork();
        if (pid[i] == 0) {
            worker(x);
            slot_save(x, &sh->slot[i]);
            fflush(NULL);
            _exit(0);
        }
    }
    worker(x);
    slot_save(x, &sh->slot[0]);
    *started = 1;
    for (unsigned i = 1; i < n; i++) {
        if (pid[i] <= 0)
            continue;
        if (interrupted(x))
            kill(pid[i], SIGINT);   /* it stops after its current run */
        int st = 0;
        while (waitpid(pid[i], &st, 0) < 0 && errno == EINTR)
            ;
        (*started)++;
        if (!sh->slot[i].finished) {   /* its run, if it had one, did not finish */
            fs_error_t e;
            fs_error_set(&e, FS_EIO, "worker process %u ended abnormally (%s %d)", i,
                         WIFSIGNALED(st) ? "signal" : "status",
                         WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
            sh->slot[i].failed++;
            sh->slot[i].first_rc = FS_EIO;
            sh->slot[i].first_err = e;
            fprintf(stderr, "fleetsim sweep: %s\n", e.msg);
        }
    }
    x->done = x->failed = 0;
    x->run_s = x->h5_held = x->h5_wait = 0;
    for (unsigned i = 0; i < n; i++) {
        const proc_slot_t *s = &sh->slot[i];
        x->done += s->done;
        x->failed += s->failed;
        x->run_s += s->run_s;
        x->h5_held += s->h5_held;
        x->h5_wait += s->h5_wait;
        if (!x->first_rc && s->first_rc) {
            x->first_rc = s->first_rc;
            x->first_err = s->first_err;
        }
    }
    fs_free(pid);
    x->sh = NULL;
    munmap(mem, bytes);
    return 0;
}

/* Rank 0's main thread: hands out runs until every remote worker has been
 * told there is nothing left. */
static void serve(exec_t *x, unsigned remote_workers)
{
    unsigned finished = 0;
    struct timespec nap = {0, 2000000};   /* 2 ms: a request per run, runs take far longer */
    while (finished < remote_workers) {
        int src;
        if (!x->mpi_ops->poll(&src)) {
            nanosleep(&nap, NULL);
            continue;
        }
        long long k = take_local(x);
        if (k < 0)
            finished++;
        x->mpi_ops->reply(src, k);
    }
}

/* ---- the whole execution -------------------------------------------------------------------- */

static int write_index(const fs_sweep_plan_t *plan, const char *dir, fs_error_t *err)
{
    fs_index_sweep_t s;
    int rc = fs_sweep_index_view(plan, &s, err);
    if (rc)
        return rc;
    rc = fs_index_write(dir, &s, err);
    fs_sweep_index_view_free(&s);
    return rc;
}

int fs_sweep_execute(const fs_sweep_plan_t *plan, const fs_sweep_opts_t *o, fs_sweep_report_t *rep,
                     fs_error_t *err)
{
    exec_t x;
    memset(&x, 0, sizeof x);
    memset(rep, 0, sizeof *rep);
    fs_error_clear(err);
    x.plan = plan;
    x.o = o;
    x.mem = fs_alloc_bound();
    x.size = 1;
    x.lock_fd[0] = x.lock_fd[1] = -1;
    rep->runs_total = plan->n_runs;
    if (o->mpi) {
        if (!fs_sweep_mpi_available())
            return fs_error_set(err, FS_EUSAGE, "this fleetsim was built without MPI");
        int rc = fs_mpi_load(&x.mpi_ops, err);
        if (rc)
            return rc;
        x.use_mpi = 1;
        x.mpi_ops->world(&x.rank, &x.size);
    }
    rep->rank = x.rank;
    rep->ranks = x.size;
    pthread_mutex_init(&x.lock, NULL);
    pthread_mutex_init(&x.h5, NULL);
    pthread_mutex_init(&x.mpi, NULL);
    unsigned nt = o->threads ? o->threads : 1, started = 0;
    pthread_t *th = fs_calloc(nt, sizeof *th);
    int rc = th ? 0 : fs_error_set(err, FS_ENOMEM, "sweep: out of memory");

    if (!rc && x.rank == 0)
        rc = prepare(&x, rep, err);
    if (x.use_mpi) { /* everyone learns whether rank 0 could start */
        int ok = rc == 0;
        x.mpi_ops->bcast_int(&ok);
        if (!ok && x.rank != 0)
            rc = fs_error_set(err, FS_EIO, "rank 0 could not start the sweep");
    }
    int procs = o->processes && !x.use_mpi && !o->on_failure && nt > 1;
    if (!rc && procs)
        rc = run_processes(&x, nt, &started, err);
    else if (!rc)
        rc = start_workers(&x, th, nt, &started, err);
    rep->started = started > 0;
    if (x.use_mpi && x.rank == 0 && (rc == 0 || started)) /* serve even if our threads failed */
        serve(&x, (unsigned)(x.size - 1) * nt);
    if (!procs)
        join_workers(th, started);
    fs_free(th);
    rep->run_s = x.run_s;
    rep->h5_held_s = x.h5_held;
    rep->h5_wait_s = x.h5_wait;

    unsigned long long counts[3] = {x.done, x.failed, (unsigned long long)interrupted(&x)};
    if (x.use_mpi) {
        unsigned long long sum[3] = {0, 0, 0};
        x.mpi_ops->sum_u64(counts, sum, 3);
        unsigned long long mine = counts[0], *by = x.rank == 0 ? fs_calloc((size_t)x.size, sizeof *by) : NULL;
        x.mpi_ops->gather_u64(mine, by);
        for (int r = 0; by && r < x.size && r < 64; r++)
            rep->runs_by_rank[r] = (size_t)by[r];
        fs_free(by);
        memcpy(counts, sum, sizeof sum);
    }
    rep->runs_done = (size_t)counts[0];
    rep->runs_failed = (size_t)counts[1];
    rep->interrupted = counts[2] != 0;
    if (o->progress && o->progress_every <= 0 && x.rank == 0 && x.total_todo)
        fputs("\r\033[K", stderr);
    if (!rc && rep->interrupted)
        rc = fs_error_set(err, FS_EINTR, "interrupted: %zu run%s finished; continue with --resume",
                          rep->runs_done, rep->runs_done == 1 ? "" : "s");
    else if (!rc && rep->runs_failed)
        rc = fs_error_set(err, x.first_rc == FS_EINVAL ? FS_EINVAL : FS_EIO,
                          "%zu run%s failed%s%s", rep->runs_failed, rep->runs_failed == 1 ? "" : "s",
                          x.first_rc ? "; first: " : "", x.first_rc ? x.first_err.msg : "");
    if (!rc && x.rank == 0 && o->n_shards <= 1) {
        rc = write_index(plan, o->dir, err);
        rep->index_written = rc == 0;
    }
    unlock_dir(&x);
    fs_free(x.todo);
    pthread_mutex_destroy(&x.lock);
    pthread_mutex_destroy(&x.h5);
    pthread_mutex_destroy(&x.mpi);
    return rc;
}

int fs_sweep_merge(const char *dir, fs_error_t *err)
{
    fs_error_clear(err);
    char *path = fs_out_join(dir, "sweep.h5");
    if (!path)
        return fs_error_set(err, FS_ENOMEM, "merge: out of memory");
    fs_index_manifest_t *m = NULL;
    int rc = fs_index_read_manifest(path, &m, err);
    fs_free(path);
    if (rc)
        return rc;
    rc = fs_index_write(dir, &m->s, err);
    fs_index_manifest_free(m);
    return rc;
}

/* ---- MPI ---------------------------------------------------------------------------------------- */

int fs_sweep_mpi_launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
                                       "MPI_LOCALNRANKS", "SLURM_NTASKS_MPI"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

int fs_sweep_mpi_available(void)
{
#ifdef FLEETSIM_HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

int fs_sweep_mpi_init(int *argc, char ***argv, int *rank, int *size, fs_error_t *err)
{
    *rank = 0;
    *size = 1;
    if (!fs_sweep_mpi_available())
        return fs_error_set(err, FS_EUSAGE, "this fleetsim was built without MPI (rebuild with "
                            "libopenmpi-dev installed, or -DFLEETSIM_MPI=ON)");
    const fs_mpi_ops_t *ops;
    int rc = fs_mpi_load(&ops, err);
    if (rc)
        return rc;
    char msg[256] = "";
    if (ops->init(argc, argv, rank, size, msg, sizeof msg))
        return fs_error_set(err, FS_EIO, "%s", msg);
    return 0;
}

int fs_sweep_mpi_finish(int status)
{
    const fs_mpi_ops_t *ops;
    fs_error_t err;
    if (!fs_sweep_mpi_available() || fs_mpi_load(&ops, &err))
        return status;
    return ops->finish(status);
}
