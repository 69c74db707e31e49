/*
 * fs_mpiload: finds and loads fleetsim-mpi.so (sim/api/fs_mpi.h) the first
 * time a process needs MPI.  dlopen keeps one copy per process however
 * often it is asked, so nothing is cached here.
 *
 * Where it looks, in order: $FLEETSIM_MPI_MODULE (a path); beside the
 * object that holds this code and in its fleetsim/ folder (libfleetsim.so
 * in a build tree or an installed libdir); beside the program and at the
 * installed layout's place relative to it (bin/ -> lib/fleetsim/, so a
 * moved prefix still works); the configured install libdir.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include "fs_mpi.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FLEETSIM_MPI_BIN_TO_MODULE
#define FLEETSIM_MPI_BIN_TO_MODULE "../lib/fleetsim"
#endif
#ifndef FLEETSIM_MPI_MODULE_DIR
#define FLEETSIM_MPI_MODULE_DIR ""
#endif

/* An object of this file, for dladdr (a function's address may not be
 * converted to a data pointer in ISO C). */
static const char here = 0;

typedef struct tried {
    char text[768];     /* "PATH (reason); ..." for the error */
    size_t len;
} tried_t;

static void note(tried_t *t, const char *path, const char *why)
{
    if (t->len < sizeof t->text - 1) {
        int n = snprintf(t->text + t->len, sizeof t->text - t->len, "%s%s (%s)", t->len ? "; " : "",
                         path, why);
        if (n > 0)
            t->len += (size_t)n;
        if (t->len > sizeof t->text - 1)
            t->len = sizeof t->text - 1;
    }
}

/* 1 loaded (*ops set), 0 not there, -1 there but unusable (error set). */
static int try_path(const char *path, const fs_mpi_ops_t **ops, tried_t *t, fs_error_t *err)
{
    if (access(path, F_OK) != 0) {
        note(t, path, "absent");
        return 0;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return fs_error_set(err, FS_EIO, "the MPI module %s could not be loaded: %s", path,
                            dlerror()), -1;
    fs_mpi_module_fn fn;
    *(void **)&fn = dlsym(h, FS_MPI_MODULE_SYMBOL);
    const fs_mpi_ops_t *o = fn ? fn() : NULL;
    if (!o || o->abi != FS_MPI_ABI) {
        dlclose(h);
        return fs_error_set(err, FS_EIO, "the MPI module %s is not one of this fleetsim (%s)", path,
                            !o ? "no " FS_MPI_MODULE_SYMBOL : "another module version"), -1;
    }
    *ops = o;
    return 1;
}

/* Tries DIR/REL/fleetsim-mpi.so (REL may be ""). */
static int try_dir(const char *dir, const char *rel, const fs_mpi_ops_t **ops, tried_t *t,
                   fs_error_t *err)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s%s%s/" FS_MPI_MODULE_FILE, dir, *rel ? "/" : "", rel);
    if (n < 0 || (size_t)n >= sizeof path)
        return 0;
    return try_path(path, ops, t, err);
}

/* The folder of a path, in place; 0, or -1 when it has none. */
static int dirname_inplace(char *p)
{
    char *slash = strrchr(p, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return 0;
}

int fs_mpi_load(const fs_mpi_ops_t **ops, fs_error_t *err)
{
    tried_t t = {{0}, 0};
    int rc;
    const char *env = getenv("FLEETSIM_MPI_MODULE");
    if (env && *env) {
        if ((rc = try_path(env, ops, &t, err)) != 0)
            return rc < 0 ? FS_EIO : 0;
        return fs_error_set(err, FS_EIO, "FLEETSIM_MPI_MODULE names %s, which does not exist", env);
    }
    char dir[PATH_MAX];
    Dl_info info;
    if (dladdr(&here, &info) && info.dli_fname && info.dli_fname[0] == '/' &&
        strlen(info.dli_fname) < sizeof dir) {
        strcpy(dir, info.dli_fname);
        if (dirname_inplace(dir) == 0 &&
            ((rc = try_dir(dir, "", ops, &t, err)) != 0 || (rc = try_dir(dir, "fleetsim", ops, &t, err)) != 0))
            return rc < 0 ? FS_EIO : 0;
    }
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n > 0) {
        dir[n] = '\0';
        if (dirname_inplace(dir) == 0 &&
            ((rc = try_dir(dir, "", ops, &t, err)) != 0 ||
             (rc = try_dir(dir, FLEETSIM_MPI_BIN_TO_MODULE, ops, &t, err)) != 0))
            return rc < 0 ? FS_EIO : 0;
    }
    if (*FLEETSIM_MPI_MODULE_DIR && (rc = try_dir(FLEETSIM_MPI_MODULE_DIR, "", ops, &t, err)) != 0)
        return rc < 0 ? FS_EIO : 0;
    return fs_error_set(err, FS_EIO, "this fleetsim's MPI module " FS_MPI_MODULE_FILE
                        " was not found (set FLEETSIM_MPI_MODULE to its path); tried: %.*s",
                        (int)t.len, t.text);
}
