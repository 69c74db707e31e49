/*
 * fs_taint: taints and tolerations (fs_taint.h).
 */
#include "fs_taint.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

typedef struct tok {
    const char *key, *val, *eff;   /* val NULL: no value */
    size_t nkey, nval, neff;
} tok_t;

static int key_char(int c) { return isalnum(c) || c == '.' || c == '-' || c == '_' || c == '/'; }
static int val_char(int c) { return isalnum(c) || c == '.' || c == '-' || c == '_'; }

/* The token at s (up to a comma or the end), blanks around it skipped;
 * *next after its comma.  0, or -1 with why. */
static int token(const char *s, tok_t *t, const char **next, char *why, size_t whylen)
{
    while (*s == ' ')
        s++;
    const char *end = strchr(s, ',');
    if (!end)
        end = s + strlen(s);
    *next = *end ? end + 1 : end;
    while (end > s && end[-1] == ' ')
        end--;
    const char *colon = memchr(s, ':', (size_t)(end - s));
    if (!colon) {
        snprintf(why, whylen, "'%.*s' has no effect (expected key=value:NoSchedule or "
                 "key:NoSchedule)", (int)(end - s), s);
        return -1;
    }
    const char *eq = memchr(s, '=', (size_t)(colon - s));
    t->key = s;
    t->nkey = (size_t)((eq ? eq : colon) - s);
    t->val = eq ? eq + 1 : NULL;
    t->nval = eq ? (size_t)(colon - eq - 1) : 0;
    t->eff = colon + 1;
    t->neff = (size_t)(end - colon - 1);
    if (t->nkey == 0 || t->nkey > 253) {
        snprintf(why, whylen, "'%.*s': a taint key is 1 to 253 characters", (int)(end - s), s);
        return -1;
    }
    for (size_t i = 0; i < t->nkey; i++)
        if (!key_char((unsigned char)t->key[i])) {
            snprintf(why, whylen, "'%.*s': '%c' cannot be in a taint key (letters, digits, "
                     "'.', '-', '_', '/')", (int)(end - s), s, t->key[i]);
            return -1;
        }
    if (t->val && (t->nval == 0 || t->nval > 63)) {
        snprintf(why, whylen, "'%.*s': a taint value is 1 to 63 characters (or leave out "
                 "'=value')", (int)(end - s), s);
        return -1;
    }
    for (size_t i = 0; t->val && i < t->nval; i++)
        if (!val_char((unsigned char)t->val[i])) {
            snprintf(why, whylen, "'%.*s': '%c' cannot be in a taint value (letters, digits, "
                     "'.', '-', '_')", (int)(end - s), s, t->val[i]);
            return -1;
        }
    if (t->neff != 10 || strncmp(t->eff, "NoSchedule", 10) != 0) {
        int known = (t->neff == 16 && strncmp(t->eff, "PreferNoSchedule", 16) == 0) ||
                    (t->neff == 9 && strncmp(t->eff, "NoExecute", 9) == 0);
        snprintf(why, whylen, "'%.*s': effect '%.*s' %s (expected NoSchedule)", (int)(end - s), s,
                 (int)t->neff, t->eff, known ? "is not modelled" : "is not a taint effect");
        return -1;
    }
    return 0;
}

int fs_taint_check(const char *list, size_t *off, char *why, size_t whylen)
{
    const char *s = list;
    tok_t t;
    do {
        const char *at = s, *next;
        while (*at == ' ')
            at++;
        if (token(s, &t, &next, why, whylen)) {
            *off = (size_t)(at - list);
            return -1;
        }
        s = next;
    } while (*s);
    return 0;
}

static int tolerates(const tok_t *tl, const tok_t *ta)
{
    if (tl->nkey != ta->nkey || memcmp(tl->key, ta->key, ta->nkey) != 0 || tl->neff != ta->neff ||
        memcmp(tl->eff, ta->eff, ta->neff) != 0)
        return 0;
    return !tl->val || (ta->val && tl->nval == ta->nval && memcmp(tl->val, ta->val, ta->nval) == 0);
}

int fs_taint_tolerated(const char *taints, const char *tolerations)
{
    char why[8];
    for (const char *s = taints; s && *s;) {
        tok_t ta;
        const char *next;
        if (token(s, &ta, &next, why, sizeof why))
            return 0;   /* not a checked list: tolerate nothing */
        int ok = 0;
        for (const char *u = tolerations; u && *u && !ok;) {
            tok_t tl;
            const char *un;
            if (token(u, &tl, &un, why, sizeof why))
                return 0;
            ok = tolerates(&tl, &ta);
            u = un;
        }
        if (!ok)
            return 0;
        s = next;
    }
    return 1;
}
