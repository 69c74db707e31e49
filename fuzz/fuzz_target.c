/*
 * One libFuzzer target: fuzz/CMakeLists.txt compiles this file once per
 * target name (FS_FUZZ_TARGET: "scenario", "units", "trace-FORMAT"), all
 * going through fs_fuzz_run, the entry the regression replay uses too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fs_fuzz.h"

#ifndef FS_FUZZ_TARGET
#error "FS_FUZZ_TARGET must name the target"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (fs_fuzz_run(FS_FUZZ_TARGET, (const uint8_t *)"", 0) < 0) {
        fprintf(stderr, "fuzz target '%s' is unknown to fs_fuzz_run\n", FS_FUZZ_TARGET);
        exit(2);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fs_fuzz_run(FS_FUZZ_TARGET, data, size);
    return 0;
}
