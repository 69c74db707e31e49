/*
 * fs_carbon: the hourly grid carbon-intensity series of cost.carbon_series
 * (docs/cost.md, "Carbon"), read once by the scenario loader.
 *
 * The one format (plain or gzip; '#' lines and blank lines are skipped):
 *   hour_start_s,gco2e_per_kwh
 *   0,412.5
 *   3600,398
 *   ...
 * The header is exactly those two names.  Row k (k = 0, 1, ...) is hour k
 * of the run: its hour_start_s is 3600 k, whole seconds since the run's
 * start (no gaps, no repeats, in order); gco2e_per_kwh is the location-based
 * intensity of the grid over that hour, g CO2e per kWh, a finite number
 * >= 0.  The model reads hour h of the run as row h mod n: a series shorter
 * than the run repeats from its first row.
 *
 * Errors name the place: FS_EINVAL "FILE:LINE:COL: ... expected ..." (COL
 * is the 1-based byte column of the field at fault, or of the end of the
 * line when a field is missing), FS_EIO (cannot open or read: "FILE:
 * ..."), FS_ENOMEM.
 */
#ifndef FS_CARBON_H
#define FS_CARBON_H

#include <stddef.h>

#include "../sim/fs_error.h"

#define FS_CARBON_COL_HOUR "hour_start_s"
#define FS_CARBON_COL_G "gco2e_per_kwh"

/* Reads the series at path: *out = n intensities (g CO2e / kWh of hour k),
 * allocated with fs_alloc and owned by the caller; *n >= 1.  On error
 * *out is NULL and *n 0. */
int fs_carbon_load(const char *path, double **out, size_t *n, fs_error_t *err);

#endif
