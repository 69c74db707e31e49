#!/usr/bin/env bash
# Every allocation of fleetsim's own code goes through the hook
# (sim/fs_alloc.h): no file of sim/, sim/cli/, sim/api/, traces/, models/,
# scenarios/ or analysis/ calls malloc, calloc, realloc, strdup, strndup or
# free directly, except sim/fs_alloc.c itself and a line that frees a
# buffer the C library allocated (open_memstream), marked "libc's".
# usage: alloc_hook.sh FLEETSIM SOURCE_DIR
src=${2:?usage: alloc_hook.sh FLEETSIM SOURCE_DIR}
cd "$src" || exit 1
bad=$(grep -nE '(^|[^_a-zA-Z0-9.>])(malloc|calloc|realloc|strdup|strndup|free)\(' \
        sim/*.[ch] sim/cli/*.[ch] sim/api/*.[ch] traces/*.[ch] models/*.[ch] scenarios/*.[ch] \
        analysis/*.[ch] |
      grep -v '^sim/fs_alloc\.c:' | grep -v "libc's" |
      grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)')
if [ -n "$bad" ]; then
    echo "allocations past the hook (use fs_malloc & co., sim/fs_alloc.h):" >&2
    echo "$bad" >&2
    exit 1
fi
echo "alloc_hook: ok"
