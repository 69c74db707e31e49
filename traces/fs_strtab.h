/*
 * fs_strtab: a string interning table, name -> dense int32 index.
 *
 * Trace readers keep tenant and GPU-type names here: the first distinct name
 * interned gets index 0, the next 1, and so on (order of first appearance),
 * and a job stores only the index.  Names are byte strings of a given length
 * (not necessarily NUL-terminated on input; stored with a terminating NUL).
 *
 * Implementation: the names live in an array of entries (owned copies), and
 * an open-addressing hash table (linear probing, power-of-two size, load
 * factor <= 1/2) maps a name's FNV-1a hash to its index.
 * Complexity: intern and find O(1) expected, O(len) hashing; growth doubles
 * the table (amortised O(1)).  Memory: O(number and length of distinct
 * names), never of the number of lookups.
 *
 * Ownership: the table owns every name; fs_strtab_name pointers stay valid
 * until fs_strtab_release.  Invariant: index i < count names entry i, and no
 * two entries are equal.
 */
#ifndef FS_STRTAB_H
#define FS_STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct fs_strtab_ent {
    char *s;            /* owned, NUL-terminated */
    uint32_t len;       /* bytes, without the NUL */
    uint32_t hash;      /* FNV-1a of the bytes */
} fs_strtab_ent_t;

typedef struct fs_strtab {
    fs_strtab_ent_t *ents;  /* names in order of first appearance */
    size_t n, cap;          /* entries used, allocated */
    int32_t *slots;         /* hash slots: entry index or -1; n_slots a power of 2 */
    size_t n_slots;
} fs_strtab_t;

void fs_strtab_init(fs_strtab_t *t);
void fs_strtab_release(fs_strtab_t *t);

/* Index of the name s[0..len), adding it if new.  Returns 0 with *idx set,
 * FS_ENOMEM (table unchanged), or FS_ELIMIT (more than INT32_MAX names or a
 * name longer than UINT32_MAX bytes). */
int fs_strtab_intern(fs_strtab_t *t, const char *s, size_t len, int32_t *idx);

/* Index of s[0..len), or -1 if absent. */
int32_t fs_strtab_find(const fs_strtab_t *t, const char *s, size_t len);

/* Name i, or NULL when i is not an index of the table. */
const char *fs_strtab_name(const fs_strtab_t *t, int32_t i);

static inline int32_t fs_strtab_count(const fs_strtab_t *t) { return (int32_t)t->n; }

#endif
