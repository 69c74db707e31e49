/*
 * fs_fuzz: the fuzzing entry points of fleetsim, shared by the libFuzzer
 * targets (fuzz/fuzz_*.c, built with -DFLEETSIM_FUZZ=ON and clang) and by the
 * regression replay (fuzz/fuzz_replay.c, a normal CTest test built with any
 * compiler), so that a saved crashing input goes through exactly the code
 * that found it.
 *
 * Each entry takes arbitrary bytes, never fails on bad input (bad input is
 * the point), and abort()s when an invariant breaks: live fs_alloc blocks
 * after the call (a leak), a dump that does not load back to the same dump,
 * a formatted value that does not parse back to itself, a source that yields
 * jobs out of order or outside the documented ranges.  Memory errors and UB
 * are caught by ASan/UBSan around it.
 *
 * Target names (also the folders of tests/data/fuzz-regressions/ and of
 * the corpora): "scenario", "units", "reqtrace" (request traces), "kueue"
 * (Kueue manifests), "tsdb" (metrics --tsdb's block writer), and "trace-FORMAT" for every format in
 * traces/fs_trace.c's table (fs_fuzz_run dispatches on the name, so a new
 * reader is fuzzed and replayed without any code here).
 */
#ifndef FS_FUZZ_H
#define FS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Scenario text; an optional NUL byte separates the YAML from "--set"
 * overrides, one per line ("KEY=VALUE"). */
int fs_fuzz_scenario(const uint8_t *data, size_t size);

/* The units parsers: the input (up to its first NUL) as a duration, a
 * rate and a number, and a formatted round trip of what parsed. */
int fs_fuzz_units(const uint8_t *data, size_t size);

/* A trace file of the named format: the bytes are written to an anonymous
 * file and read to the end in strict and in lenient mode.  pai: an input
 * with NUL bytes is a directory instead: task, job and instance tables
 * separated by the first two NULs (traces/fs_pai.h). */
int fs_fuzz_trace(const char *format, const uint8_t *data, size_t size);

/* A request trace (traces/fs_reqtrace.h: Azure LLM or BurstGPT CSV): read to
 * the end, then, when it has rows, with repeat for two periods; times never
 * go back, every request generates a token. */
int fs_fuzz_reqtrace(const uint8_t *data, size_t size);

/* Kueue manifests (scenarios/fs_kueue_yaml.h): parsed without and with a
 * cluster of two pools (A100, H100), then the block's checks; every object
 * freed by the config's release. */
int fs_fuzz_kueue(const uint8_t *data, size_t size);

/* The TSDB block writer (analysis/fs_tsdb.h): the bytes through the XOR
 * decoder, then as series (odd label values, empty runs, one-sample series,
 * arbitrary time steps and value bits) whose chunks must round-trip bit for
 * bit and that the writer must write, or refuse (an empty label value)
 * leaving nothing behind. */
int fs_fuzz_tsdb(const uint8_t *data, size_t size);

/* Dispatch by target name ("scenario", "units", "trace-native", ...);
 * returns -1 for an unknown name. */
int fs_fuzz_run(const char *target, const uint8_t *data, size_t size);

#endif
