/*
 * fs_remap: team map and load scale over any source (fs_remap.h).
 *
 * The user -> team table is read whole at open (one entry per listed user:
 * O(users) memory); an inner tenant index is mapped once, at its first job,
 * and remembered in a dense array (O(1) per job after that).
 */
#include "fs_remap.h"
#include "fs_csv.h"
#include "fs_strtab.h"
#include "../sim/fs_alloc.h"

#include <math.h>
#include <string.h>

typedef struct remap {
    fs_source_t *in;
    double scale;           /* submit /= scale (1: untouched) */
    int has_teams;
    int from_inline;        /* the inline map was given (error messages) */
    fs_strtab_t users;      /* listed users */
    int32_t *user_team;     /* listed user -> index in team_names */
    size_t cap_user_team;
    fs_strtab_t team_names; /* team names of the file */
    fs_strtab_t out;        /* the wrapper's tenant table */
    int32_t *map;           /* inner tenant -> out index; -1 not seen yet */
    size_t n_map, cap_map;
    uint64_t unmapped;
} remap_t;

static const fs_source_ops_t remap_ops;

static void remap_free(remap_t *r)
{
    if (r->in)
        fs_source_destroy(r->in);
    fs_strtab_release(&r->users);
    fs_strtab_release(&r->team_names);
    fs_strtab_release(&r->out);
    fs_free(r->user_team);
    fs_free(r->map);
    fs_free(r);
}

static void remap_destroy(void *state) { remap_free(state); }

/* Adds user -> team (len bytes each).  0; FS_EINVAL when the user is
 * already mapped to another team (*prev then names it); FS_ENOMEM. */
static int add_user(remap_t *r, const char *user, size_t ulen, const char *team, size_t tlen,
                    const char **prev)
{
    int32_t ti, ui, before = fs_strtab_count(&r->users);
    if (fs_strtab_intern(&r->team_names, team, tlen, &ti) ||
        fs_strtab_intern(&r->users, user, ulen, &ui))
        return FS_ENOMEM;
    if (ui < before) {   /* listed before */
        if (r->user_team[ui] != ti) {
            *prev = fs_strtab_name(&r->team_names, r->user_team[ui]);
            return FS_EINVAL;
        }
        return 0;
    }
    if (fs_grow((void **)&r->user_team, &r->cap_user_team, (size_t)ui + 1, sizeof *r->user_team))
        return FS_ENOMEM;
    r->user_team[ui] = ti;
    return 0;
}

/* Reads the user,team file. */
static int read_teams(remap_t *r, const char *path, fs_error_t *err)
{
    fs_csv_t c;
    int rc = fs_csv_open(&c, path, 0, err);
    if (rc)
        return fs_error_set(err, rc, "%s: cannot read the team file (workload.trace.teams)", path);
    size_t cu = 0, ct = 0;
    int header = 0;
    while ((rc = fs_csv_next_line(&c, err)) == 1) {
        const char *l = c.line;
        while (*l == ' ' || *l == '\t')
            l++;
        if (*l == '\0' || *l == '#')
            continue;
        if ((rc = fs_csv_split(&c, ',', err)) != 0)
            break;
        if (!header) {
            header = 1;
            cu = ct = SIZE_MAX;
            for (size_t i = 0; i < c.n_fields; i++) {
                if (strcmp(c.fields[i].s, "user") == 0 && cu == SIZE_MAX)
                    cu = i;
                else if (strcmp(c.fields[i].s, "team") == 0 && ct == SIZE_MAX)
                    ct = i;
            }
            if (cu == SIZE_MAX || ct == SIZE_MAX) {
                rc = fs_error_set(err, FS_EINVAL,
                                  "%s:%llu: expected a header naming the columns 'user' and 'team' "
                                  "(got '%s')", path, (unsigned long long)c.line_no, c.line);
                break;
            }
            continue;
        }
        size_t need = (cu > ct ? cu : ct) + 1;
        if (c.n_fields < need) {
            rc = fs_error_set(err, FS_EINVAL, "%s:%llu: expected %zu fields (user and team), got %zu",
                              path, (unsigned long long)c.line_no, need, c.n_fields);
            break;
        }
        const fs_csv_field_t *u = &c.fields[cu], *t = &c.fields[ct];
        if (u->len == 0 || t->len == 0) {
            rc = fs_error_set(err, FS_EINVAL, "%s:%llu: field %s: expected a name, got an empty field",
                              path, (unsigned long long)c.line_no, u->len == 0 ? "user" : "team");
            break;
        }
        const char *prev = NULL;
        if ((rc = add_user(r, u->s, u->len, t->s, t->len, &prev)) == FS_EINVAL) {
            rc = fs_error_set(err, FS_EINVAL,
                              "%s:%llu: user '%s' is mapped twice, to '%s' and to '%s'%s", path,
                              (unsigned long long)c.line_no, u->s, prev, t->s,
                              r->from_inline ? " (the first in workload.trace.team_map)" : "");
            break;
        }
        if (rc) {
            rc = fs_error_set(err, rc, "%s: out of memory reading the team file", path);
            break;
        }
    }
    if (rc == 0 && !header)
        rc = fs_error_set(err, FS_EINVAL,
                          "%s: empty team file (expected a header 'user,team' and one row per user)",
                          path);
    fs_csv_close(&c);
    return rc < 0 ? FS_EINVAL : rc;
}

int fs_remap_wrap(fs_source_t **src, const char *teams, const char *const *users,
                  const char *const *team_of, size_t n_map, double load_scale, fs_error_t *err)
{
    if (!isfinite(load_scale) || load_scale <= 0) {
        fs_source_destroy(*src);
        *src = NULL;
        return fs_error_set(err, FS_EINVAL,
                            "workload.trace.load_scale: expected a finite number > 0 (got %g)",
                            load_scale);
    }
    remap_t *r = fs_calloc(1, sizeof *r);
    fs_source_t *w = fs_calloc(1, sizeof *w);
    if (!r || !w) {
        fs_free(r);
        fs_free(w);
        fs_source_destroy(*src);
        *src = NULL;
        return fs_error_set(err, FS_ENOMEM, "trace: out of memory");
    }
    r->in = *src;
    *src = NULL;
    r->scale = load_scale;
    fs_strtab_init(&r->users);
    fs_strtab_init(&r->team_names);
    fs_strtab_init(&r->out);
    for (size_t i = 0; i < n_map; i++) {   /* keys of a YAML map: no user twice */
        const char *prev = NULL;
        int rc = add_user(r, users[i], strlen(users[i]), team_of[i], strlen(team_of[i]), &prev);
        if (rc) {
            remap_free(r);
            fs_free(w);
            return fs_error_set(err, rc, "workload.trace.team_map: out of memory");
        }
        r->has_teams = r->from_inline = 1;
    }
    if (teams) {
        r->has_teams = 1;
        int rc = read_teams(r, teams, err);
        if (rc) {
            remap_free(r);
            fs_free(w);
            return rc;
        }
    }
    w->ops = &remap_ops;
    w->state = r;
    *src = w;
    return 0;
}

/* The wrapper's tenant index for inner tenant t. */
static int map_tenant(remap_t *r, int32_t t, int32_t *out, fs_error_t *err)
{
    if ((size_t)t >= r->n_map) {
        if (fs_grow((void **)&r->map, &r->cap_map, (size_t)t + 1, sizeof *r->map))
            return fs_error_set(err, FS_ENOMEM, "trace: out of memory mapping tenants to teams");
        for (size_t i = r->n_map; i <= (size_t)t; i++)
            r->map[i] = -1;
        r->n_map = (size_t)t + 1;
    }
    if (r->map[t] < 0) {
        const char *name = fs_source_tenant_name(r->in, t);
        if (!name)
            name = "";
        const char *team = name;
        if (r->has_teams) {
            int32_t u = fs_strtab_find(&r->users, name, strlen(name));
            if (u >= 0)
                team = fs_strtab_name(&r->team_names, r->user_team[u]);
            else
                r->unmapped++;
        }
        int32_t idx;
        int rc = fs_strtab_intern(&r->out, team, strlen(team), &idx);
        if (rc)
            return fs_error_set(err, rc, "trace: out of memory mapping tenants to teams");
        r->map[t] = idx;
    }
    *out = r->map[t];
    return 0;
}

static int remap_next(void *state, fs_job_t *buf, size_t cap, size_t *n, fs_error_t *err)
{
    remap_t *r = state;
    int rc = fs_source_next(r->in, buf, cap, n, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < *n; i++) {
        fs_job_t *j = &buf[i];
        if (r->scale != 1.0)   /* floor of a monotone map: the order is kept */
            j->submit = (fs_time_t)floor((double)j->submit / r->scale);
        if (j->tenant >= 0 && (rc = map_tenant(r, j->tenant, &j->tenant, err)) != 0)
            return rc;
    }
    return 0;
}

static const char *remap_tenant_name(void *state, int32_t i)
{
    return fs_strtab_name(&((remap_t *)state)->out, i);
}

static int32_t remap_tenant_count(void *state) { return fs_strtab_count(&((remap_t *)state)->out); }

static const char *remap_gpu_type_name(void *state, int32_t i)
{
    return fs_source_gpu_type_name(((remap_t *)state)->in, i);
}

static int32_t remap_gpu_type_count(void *state)
{
    return fs_source_gpu_type_count(((remap_t *)state)->in);
}

static uint64_t remap_skipped(void *state) { return fs_source_skipped(((remap_t *)state)->in); }

static const char *remap_skip_reason(void *state, size_t i, uint64_t *count)
{
    return fs_source_skip_reason(((remap_t *)state)->in, i, count);
}

static const fs_source_ops_t remap_ops = {
    .name = "remap",
    .next = remap_next,
    .tenant_name = remap_tenant_name,
    .tenant_count = remap_tenant_count,
    .gpu_type_name = remap_gpu_type_name,
    .gpu_type_count = remap_gpu_type_count,
    .skipped = remap_skipped,
    .destroy = remap_destroy,
    .skip_reason = remap_skip_reason,
};

uint64_t fs_remap_unmapped(const fs_source_t *src)
{
    return src && src->ops == &remap_ops ? ((const remap_t *)src->state)->unmapped : 0;
}
