/*
 * fleetsim report: an HTML report with plots of a results file or a sweep
 * index.  The plots are drawn by analysis/report.py (matplotlib, h5py) run
 * with Debian's /usr/bin/python3; this file checks the input, finds the
 * script and the interpreter, passes the warm-up and maps failures to exit
 * statuses with clear messages.
 *
 * The script is looked up, in order: $FLEETSIM_DATADIR/report.py (when set),
 * <program dir>/../share/fleetsim/report.py (an installed tree, wherever it
 * was moved), <program dir>/share/fleetsim/report.py (a build tree: CMake
 * copies it there), the configured install datadir
 * (FLEETSIM_INSTALL_DATADIR).  Never the source tree: the program holds no
 * path of it.
 */
#include "fs_cli.h"
#include "../../analysis/fs_compare.h"
#include "../../analysis/fs_h5read.h"
#include "../fs_alloc.h"
#include "../fs_out.h"
#include "fs_cliout.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef FLEETSIM_INSTALL_DATADIR
#define FLEETSIM_INSTALL_DATADIR ""
#endif

#define DEFAULT_PYTHON "/usr/bin/python3"

static int readable(const char *p)
{
    return p && *p && access(p, R_OK) == 0;
}

/* Writes the script's path into buf; 0 found, -1 not. */
static int find_script(char *buf, size_t sz)
{
    const char *env = getenv("FLEETSIM_DATADIR");
    if (env && *env) {
        snprintf(buf, sz, "%s/report.py", env);
        if (readable(buf))
            return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(buf, sz, "%s/../share/fleetsim/report.py", exe);   /* installed */
            if (readable(buf))
                return 0;
            snprintf(buf, sz, "%s/share/fleetsim/report.py", exe);      /* a build tree */
            if (readable(buf))
                return 0;
        }
    }
    if (*FLEETSIM_INSTALL_DATADIR) {
        snprintf(buf, sz, "%s/report.py", FLEETSIM_INSTALL_DATADIR);
        if (readable(buf))
            return 0;
    }
    return -1;
}

int fs_cmd_report(int argc, char **argv)
{
    const char *input = NULL, *output = "report.html", *python = DEFAULT_PYTHON;
    fs_cli_getopt_t g;
    fs_cli_getopt_init(&g, "report", argc, argv, fs_cli_find("report")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        const char *a = g.opt ? g.opt : g.arg, *v = g.arg;
        if (id == 'h') {
            fs_cli_print_usage(stdout, fs_cli_find("report"));
            return 0;
        } else if (id == 'o') {
            if (!v)
                return fs_cli_usage_error("report", "%s needs a file name", a);
            output = v;
        } else if (id == FS_OPT_PYTHON) {
            if (!v)
                return fs_cli_usage_error("report", "--python needs the interpreter's path");
            python = v;
        } else if (id == FS_CLI_BAD) {
            return g.status;
        } else if (!input) {
            input = a;
        } else {
            return fs_cli_usage_error("report", "only one results file may be given");
        }
    }
    if (!input)
        return fs_cli_usage_error("report", "give a results file or a sweep index");

    /* the output: not the input, a regular file or a new name; written
     * through a symbolic link (report.py renames its temporary over it) */
    fs_error_t err;
    fs_error_clear(&err);
    int orc = fs_cli_check_output("report", output, &input, 1);
    if (orc)
        return orc;
    fs_out_t out;
    if ((orc = fs_out_prepare(&out, output, &err)) != 0) {
        fprintf(stderr, "fleetsim report: %s\n", err.msg);
        return fs_error_exit_status(orc);
    }
    char target[PATH_MAX];
    snprintf(target, sizeof target, "%s", out.target);
    fs_out_release(&out);
    output = target;

    /* the input: a results file or a sweep index (before starting Python) */
    int is_index = 0, is_plan = 0;
    fs_h5file_t *hf;
    int rc = fs_h5read_open(input, &hf, &err);
    if (!rc) {
        is_plan = fs_h5read_has(hf, "plan") && fs_h5read_has(hf, "plan_runs");
        fs_h5read_close(hf);
    }
    if (!rc && !is_plan)
        rc = fs_compare_is_index(input, &is_index, &err);
    if (rc) {
        fprintf(stderr, "fleetsim report: %s\n", err.msg);
        return fs_error_exit_status(rc);
    }
    double warmup = 0;
    if (is_plan) {
        /* a plan (plan.h5): no jobs, no warm-up */
    } else if (!is_index) {
        if (fs_cli_results_warmup(input, &warmup, &err))
            fprintf(stderr, "fleetsim report: note: warm-up unknown (%s); using 0\n", err.msg);
    } else {
        fs_compare_side_t *s = NULL;
        size_t np = 0;
        if (fs_compare_points(input, &np, &err) == 0 && np > 0 &&
            fs_compare_side_load(input, 0, &s, &err) == 0 && s->n_reps && s->files[0] &&
            fs_cli_results_warmup(s->files[0], &warmup, &err) == 0) {
            /* warm-up of the sweep's runs */
        } else {
            fprintf(stderr, "fleetsim report: note: warm-up unknown (%s); using 0\n", err.msg);
            warmup = 0;
        }
        fs_compare_side_destroy(s);
    }

    char script[PATH_MAX + 64];
    if (find_script(script, sizeof script)) {
        fprintf(stderr,
                "fleetsim report: report.py not found (looked in $FLEETSIM_DATADIR, "
                "<program dir>/../share/fleetsim, <program dir>/share/fleetsim, %s); set "
                "FLEETSIM_DATADIR to the folder that holds it (analysis/ of the sources)\n",
                *FLEETSIM_INSTALL_DATADIR ? FLEETSIM_INSTALL_DATADIR : "-");
        return 1;
    }
    if (access(python, X_OK) != 0) {
        fprintf(stderr,
                "fleetsim report: %s not found or not executable: the report needs Debian's "
                "Python 3 with matplotlib, h5py and numpy\n"
                "(apt-get install python3 python3-matplotlib python3-h5py python3-numpy)\n",
                python);
        return 1;
    }

    char wbuf[64];
    snprintf(wbuf, sizeof wbuf, "%.17g", warmup);
    char *args[] = {(char *)python, script, (char *)input, "-o", (char *)output,
                    "--warmup", wbuf, NULL};
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "fleetsim report: cannot start %s: %s\n", python, strerror(errno));
        return 1;
    }
    if (pid == 0) {
        /* Debian's modules only: keep a pyenv or virtualenv from leaking in */
        unsetenv("PYTHONPATH");
        unsetenv("PYTHONHOME");
        setenv("MPLBACKEND", "Agg", 1);
        /* the script runs `fleetsim compare --recorded` for a replay's
         * section: this very program, not whichever one PATH finds */
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0 && !getenv("FLEETSIM_PROGRAM")) {
            exe[n] = '\0';
            setenv("FLEETSIM_PROGRAM", exe, 1);
        }
        execv(python, args);
        fprintf(stderr, "fleetsim report: cannot run %s: %s\n", python, strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "fleetsim report: waiting for %s: %s\n", python, strerror(errno));
            return 1;
        }
    }
    if (WIFEXITED(status)) {
        int code = WEXITSTATUS(status);
        if (code == 0)
            return 0;
        if (code == 2)
            return 2;   /* bad input, message printed by the script */
        if (code == 3)
            fprintf(stderr, "fleetsim report: install the missing module(s) and retry\n");
        else if (code != 1)
            fprintf(stderr, "fleetsim report: %s %s exited with status %d\n", python, script,
                    code);
        return 1;
    }
    fprintf(stderr, "fleetsim report: %s was killed by signal %d\n", python,
            WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return 1;
}
