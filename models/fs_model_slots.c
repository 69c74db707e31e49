/*
 * Job slots (a job holds one only while active: queued, running or
 * recovering) and run records (fs_jobrun_t, taken at a job's first start,
 * in chunks that never move).  Prefix fs_slot_, state fs_jobslots_t.
 */
#include "fs_model_int.h"

/* ---- slots ------------------------------------------------------------------- */

/* A run record for job j, as fs_slot_run_init leaves it; NULL out of memory.  The
 * stack of given-back records has room for every record there is, so
 * giving one back cannot fail. */
fs_jobrun_t *fs_slot_run_take(fs_model_t *m, const fs_jobrt_t *j)
{
    enum { CHUNK = 256 };
    fs_jobrun_t *x;
    if (m->js.n_run_free) {
        x = m->js.run_free[--m->js.n_run_free];
    } else {
        if (m->js.n_run_chunks == 0 || m->js.run_used == CHUNK) {
            if (fs_grow((void **)&m->js.run_chunks, &m->js.cap_run_chunks, m->js.n_run_chunks + 1,
                        sizeof *m->js.run_chunks) ||
                fs_grow((void **)&m->js.run_free, &m->js.cap_run_free, (m->js.n_run_chunks + 1) * CHUNK,
                        sizeof *m->js.run_free))
                return NULL;
            fs_jobrun_t *c = fs_malloc(CHUNK * sizeof *c);
            if (!c)
                return NULL;
            m->js.run_chunks[m->js.n_run_chunks++] = c;
            m->js.run_used = 0;
        }
        x = &m->js.run_chunks[m->js.n_run_chunks - 1][m->js.run_used++];
    }
    fs_slot_run_init(x, j);
    return x;
}

int fs_slot_free(fs_model_t *m, uint32_t s)
{
    fs_jobrt_t *j = &m->js.slots[s];
    int rc = m->lim ? fs_lim_gone(m, s) : 0;
    if (rc)
        return rc;
    if (j->r)
        fs_slot_run_give_back(m, j);
    m->js.slots[s].state = FS_JOBRT_FREE;
    if (fs_grow((void **)&m->js.free_slots, &m->js.cap_free, m->js.n_free + 1, sizeof *m->js.free_slots))
        return FS_ENOMEM;
    m->js.free_slots[m->js.n_free++] = s;
    return 0;
}

int fs_slot_rec_set(fs_model_t *m, uint32_t s, fs_time_t rec_start)
{
    fs_jobslots_t *js = &m->js;
    if (rec_start < 0 && s >= js->cap_rec)     /* -1 already */
        return 0;
    if (s >= js->cap_rec) {
        size_t old = js->cap_rec;
        if (fs_grow((void **)&js->rec_start, &js->cap_rec, js->cap_slots > s ? js->cap_slots : s + 1,
                    sizeof *js->rec_start))
            return FS_ENOMEM;
        for (size_t i = old; i < js->cap_rec; i++)
            js->rec_start[i] = -1;
    }
    js->rec_start[s] = rec_start;
    return 0;
}

/* Gives back the placements still held and frees the slots and records. */
void fs_slot_release(fs_model_t *m)
{
    fs_jobslots_t *js = &m->js;
    for (size_t i = 0; i < js->n_slots; i++)
        if (js->slots[i].state == FS_JOBRT_RUNNING ||
            (js->slots[i].state == FS_JOBRT_RECOVERING && js->slots[i].r->holding))
            fs_placement_release(&js->slots[i].r->place);
    fs_free(js->slots);
    fs_free(js->free_slots);
    for (size_t i = 0; i < js->n_run_chunks; i++)
        fs_free(js->run_chunks[i]);
    fs_free(js->run_chunks);
    fs_free(js->run_free);
    fs_free(js->rec_start);
}
