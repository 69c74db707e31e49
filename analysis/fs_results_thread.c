/*
 * fs_results_thread: the results file's writer thread
 * (fs_results_meta_t.writer_thread).
 *
 * Why: compressing /jobs was about half of a large run's CPU (1 M jobs:
 * libdeflate 43%, packing and shuffling 7%; with igzip and the transposing
 * pack, a quarter), and it does not depend on the simulation.  With a writer thread the caller hands over each full chunk
 * of rows (CHUNK_ROWS) and goes on simulating; the thread packs, shuffles
 * and compresses it, and every FS_RESULTS_BATCH rows of a table writes the
 * batch's chunks with the same HDF5 calls, in the same order, as the
 * caller's thread would have (a batch is written when its last chunk, the
 * one handed over at the add that finds a full batch without a thread, is
 * taken from the ring): the file is byte for byte the same.  When the ring
 * is full, or at the commit, the caller compresses queued chunks itself
 * (newest first) instead of waiting, so that both cores compress when the
 * simulation is done or is waiting.
 *
 * Only the thread calls HDF5 while items are in flight: every public call
 * that calls HDF5 itself first waits until the ring is empty (drain).  A
 * failure on the thread (a write, or memory for a compressed chunk) is
 * kept and returned by the next add, drain or commit; the file is then
 * discarded as after any failure.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "fs_results_int.h"

#include <string.h>

#include "../sim/fs_alloc.h"

/* Compresses item x (the lock not held). */
static void writer_build(const fs_results_t *r, zctx_t *zx, witem_t *x)
{
    const table_spec_t *t = fs_rs_streamed[x->k].spec;
    layout_t lay;
    fs_rs_layout_of(t, &lay);
    fs_error_clear(&x->err);
    x->rc = fs_rs_build_chunk(zx, &lay, (size_t)t->chunk, x->rows, fs_rs_streamed[x->k].row_size, CHUNK_ROWS,
                        &x->z, r->tmp, t->name, &x->err);
}

/* The caller compresses the newest queued item, if any (lock held; it is
 * released while compressing).  1 if it did. */
static int writer_help(fs_results_t *r)
{
    writer_t *w = r->w;
    if (w->rc || w->cancel)
        return 0;
    for (size_t i = w->n; i-- > 0;) {
        witem_t *x = &w->it[(w->head + i) % WQ_CHUNKS];
        if (x->state != W_QUEUED)
            continue;
        x->state = W_CLAIMED;
        pthread_mutex_unlock(&w->mu);
        writer_build(r, &w->zm, x);
        pthread_mutex_lock(&w->mu);
        x->state = W_DONE;
        pthread_cond_broadcast(&w->cv);
        return 1;
    }
    return 0;
}

/* The thread: writes a table's batch of chunks (lock not held). */
static int writer_write(fs_results_t *r, int k, fs_error_t *err)
{
    wacc_t *a = &r->w->acc[k];
    const table_spec_t *t = fs_rs_streamed[k].spec;
    struct pending *p = &r->pend[k];
    size_t rows = a->n * (size_t)t->chunk;
    h5call_t c;
    h5lock_t l = lock_of(r);
    h5_enter(l, &c, r->tmp);
    int rc = fs_rs_write_chunks(r->fid, &c, t, p->written, rows, a->z, a->n, err);
    h5_leave(l, &c);
    for (size_t i = 0; i < a->n; i++)
        fs_free(a->z[i].data);
    a->n = 0;
    if (rc == 0)
        p->written += (hsize_t)rows;
    return rc;
}

static void *writer_main(void *arg)
{
    fs_results_t *r = arg;
    writer_t *w = r->w;
    fs_alloc_bind(w->mem);     /* a new thread: nothing to restore */
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (w->n == 0 && !w->stop)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->n == 0)
            break;
        witem_t *x = &w->it[w->head];
        int live = !w->rc && !w->cancel;
        if (live && x->state == W_QUEUED) {
            x->state = W_CLAIMED;
            pthread_mutex_unlock(&w->mu);
            writer_build(r, &w->zw, x);
            pthread_mutex_lock(&w->mu);
            x->state = W_DONE;
        }
        while (x->state == W_CLAIMED)   /* the caller is compressing it */
            pthread_cond_wait(&w->cv, &w->mu);
        live = !w->rc && !w->cancel;
        int rc = 0;
        fs_error_t e;
        fs_error_clear(&e);
        if (live && x->rc) {
            rc = x->rc;
            e = x->err;
        } else if (live) {
            wacc_t *a = &w->acc[x->k];
            if (fs_grow((void **)&a->z, &a->cap, a->n + 1, sizeof *a->z)) {
                rc = fs_error_set(&e, FS_ENOMEM, "%s: out of memory writing /%s", r->tmp,
                                  fs_rs_streamed[x->k].spec->name);
            } else {
                a->z[a->n++] = x->z;
                x->z.data = NULL;
                if (a->n == BATCH_CHUNKS) {
                    pthread_mutex_unlock(&w->mu);
                    rc = writer_write(r, x->k, &e);
                    pthread_mutex_lock(&w->mu);
                }
            }
        }
        if (rc && !w->rc) {
            w->rc = rc;
            w->err = e;
        }
        fs_free(x->z.data);
        x->z.data = NULL;
        if (w->n_spare < N_OF(w->spare)) {
            w->spare[w->n_spare].p = x->rows;
            w->spare[w->n_spare++].cap = x->cap;
        } else {
            fs_free(x->rows);
        }
        x->rows = NULL;
        w->head = (w->head + 1) % WQ_CHUNKS;
        w->n--;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Starts the thread; no thread (and no error) when it cannot be had: the
 * caller's thread then writes, as without the option. */
void fs_rs_writer_start(fs_results_t *r)
{
    writer_t *w = fs_calloc(1, sizeof *w);
    if (!w)
        return;
    if (pthread_mutex_init(&w->mu, NULL) != 0) {
        fs_free(w);
        return;
    }
    if (pthread_cond_init(&w->cv, NULL) != 0) {
        pthread_mutex_destroy(&w->mu);
        fs_free(w);
        return;
    }
    r->w = w;
    w->mem = fs_alloc_bound();
    if (pthread_create(&w->th, NULL, writer_main, r) != 0) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        fs_free(w);
        r->w = NULL;
    }
}

/* Waits until the ring is empty, compressing queued chunks meanwhile; the
 * thread's failure if any.  The thread then calls no HDF5 until the next
 * hand-over. */
int fs_rs_writer_drain(fs_results_t *r, fs_error_t *err)
{
    writer_t *w = r->w;
    if (!w)
        return 0;
    pthread_mutex_lock(&w->mu);
    while (w->n > 0)
        if (!writer_help(r))
            pthread_cond_wait(&w->cv, &w->mu);
    int rc = w->rc;
    if (rc)
        *err = w->err;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

/* Ends the thread (cancel: dropping what is queued) and frees it, with
 * the chunks it compressed and did not write. */
void fs_rs_writer_end(fs_results_t *r, int cancel)
{
    writer_t *w = r->w;
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    w->cancel |= cancel;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    for (size_t k = 0; k < N_STREAMED; k++)
        fs_rs_free_chunks(w->acc[k].z, w->acc[k].n);
    for (size_t i = 0; i < w->n_spare; i++)
        fs_free(w->spare[i].p);
    fs_rs_zctx_release(&w->zw);
    fs_rs_zctx_release(&w->zm);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    fs_free(w);
    r->w = NULL;
}

/* Hands over table k's full chunk of rows.  A buffer for the rows to come
 * is had first: FS_ENOMEM leaves everything as it was. */
int fs_rs_writer_submit(fs_results_t *r, enum streamed_table k, fs_error_t *err)
{
    writer_t *w = r->w;
    struct pending *p = &r->pend[k];
    size_t sz = fs_rs_streamed[k].row_size, need = (size_t)CHUNK_ROWS * sz;
    int rc = 0;
    pthread_mutex_lock(&w->mu);
    while (!w->rc && w->n == WQ_CHUNKS)
        if (!writer_help(r))
            pthread_cond_wait(&w->cv, &w->mu);
    if ((rc = w->rc) != 0) {
        *err = w->err;
        goto out;
    }
    void *next = NULL;
    size_t next_cap = 0;
    for (size_t i = 0; i < w->n_spare && !next; i++)
        if (w->spare[i].cap >= need) {
            next = w->spare[i].p;
            next_cap = w->spare[i].cap;
            w->spare[i] = w->spare[--w->n_spare];
        }
    if (!next) {
        if (!(next = fs_malloc(need))) {
            rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory buffering /%s", r->path,
                              fs_rs_streamed[k].spec->name);
            goto out;
        }
        next_cap = need;
    }
    witem_t *x = &w->it[(w->head + w->n) % WQ_CHUNKS];
    memset(x, 0, sizeof *x);
    x->k = (int)k;
    x->rows = p->rows;
    x->cap = p->cap * sz;
    x->state = W_QUEUED;
    w->n++;
    p->rows = next;
    p->cap = next_cap / sz;
    p->n = 0;
    pthread_cond_broadcast(&w->cv);
out:
    pthread_mutex_unlock(&w->mu);
    return rc;
}

