#include "fs_strtab.h"

#include <string.h>

#include "../sim/fs_alloc.h"
#include "../sim/fs_error.h"

#define STRTAB_MIN_SLOTS 16

static uint32_t fnv1a(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

void fs_strtab_init(fs_strtab_t *t)
{
    t->ents = NULL;
    t->n = t->cap = 0;
    t->slots = NULL;
    t->n_slots = 0;
}

void fs_strtab_release(fs_strtab_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        fs_free(t->ents[i].s);
    fs_free(t->ents);
    fs_free(t->slots);
    fs_strtab_init(t);
}

/* Slot holding the entry equal to s, or the empty slot where it would go. */
static size_t probe(const fs_strtab_t *t, const char *s, size_t len, uint32_t h)
{
    size_t mask = t->n_slots - 1;
    size_t i = h & mask;
    for (;;) {
        int32_t e = t->slots[i];
        if (e < 0)
            return i;
        const fs_strtab_ent_t *ent = &t->ents[e];
        if (ent->hash == h && ent->len == len && memcmp(ent->s, s, len) == 0)
            return i;
        i = (i + 1) & mask;
    }
}

/* Rebuilds the slots with n_slots entries (a power of 2 > 2 * t->n). */
static int rehash(fs_strtab_t *t, size_t n_slots)
{
    int32_t *slots = fs_malloc(n_slots * sizeof *slots);
    if (!slots)
        return FS_ENOMEM;
    for (size_t i = 0; i < n_slots; i++)
        slots[i] = -1;
    size_t mask = n_slots - 1;
    for (size_t e = 0; e < t->n; e++) {
        size_t i = t->ents[e].hash & mask;
        while (slots[i] >= 0)
            i = (i + 1) & mask;
        slots[i] = (int32_t)e;
    }
    fs_free(t->slots);
    t->slots = slots;
    t->n_slots = n_slots;
    return 0;
}

int32_t fs_strtab_find(const fs_strtab_t *t, const char *s, size_t len)
{
    if (t->n_slots == 0)
        return -1;
    return t->slots[probe(t, s, len, fnv1a(s, len))];
}

int fs_strtab_intern(fs_strtab_t *t, const char *s, size_t len, int32_t *idx)
{
    if (len > UINT32_MAX)
        return FS_ELIMIT;
    uint32_t h = fnv1a(s, len);
    if (t->n_slots) {
        int32_t e = t->slots[probe(t, s, len, h)];
        if (e >= 0) {
            *idx = e;
            return 0;
        }
    }
    if (t->n >= (size_t)INT32_MAX)
        return FS_ELIMIT;
    /* Keep the load factor <= 1/2 after adding one name. */
    if (2 * (t->n + 1) > t->n_slots) {
        size_t ns = t->n_slots ? t->n_slots * 2 : STRTAB_MIN_SLOTS;
        int rc = rehash(t, ns);
        if (rc)
            return rc;
    }
    if (fs_grow((void **)&t->ents, &t->cap, t->n + 1, sizeof *t->ents))
        return FS_ENOMEM;
    char *copy = fs_strndup(s, len);
    if (!copy)
        return FS_ENOMEM;
    fs_strtab_ent_t *ent = &t->ents[t->n];
    ent->s = copy;
    ent->len = (uint32_t)len;
    ent->hash = h;
    t->slots[probe(t, s, len, h)] = (int32_t)t->n;
    *idx = (int32_t)t->n;
    t->n++;
    return 0;
}

const char *fs_strtab_name(const fs_strtab_t *t, int32_t i)
{
    if (i < 0 || (size_t)i >= t->n)
        return NULL;
    return t->ents[i].s;
}
