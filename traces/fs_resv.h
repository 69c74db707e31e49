/*
 * fs_resv: Slurm's `scontrol show reservation` output as an outage file
 * (cluster.outages; docs/traces.md "Outage files").  fs_resv_outages_read
 * reads a file whose first line that is not blank or a '#' comment starts
 * with "ReservationName=" this way, and any other file as the outage CSV
 * (fs_outages_read):
 *
 *   ReservationName=maint StartTime=2022-03-07T08:00:00 EndTime=2022-03-07T20:00:00
 *      Duration=12:00:00 Nodes=nid[00000-00099,00200] NodeCnt=101 Flags=MAINT,SPEC_NODES
 *      ...
 *
 * A reservation is every Key=Value token from its ReservationName= to the
 * next one (any line breaks).  StartTime and EndTime are dates (taken as
 * UTC, as fs_rdr_datetime reads them), made seconds of the run by the run's
 * origin: cluster.outages_origin, the date at the run's time 0 (a file of
 * reservations without one is refused).  A reservation that ends before the
 * origin is left out; one that starts before it starts at 0.  Nodes: ALL,
 * or a Slurm host list ("nid[00000-00099,00200],login3"): each host is the
 * fleetsim node whose index is the number its name ends in (nid00012 is
 * node 12), each bracketed range one row.  The cause is "reservation NAME"
 * ("maintenance NAME" with Flags=MAINT), cut to 31 bytes.  Errors name
 * FILE:LINE:COL of the token; nodes that do not exist and reservations of
 * one node that overlap are refused by fs_outages_resolve as for the CSV.
 */
#ifndef FS_RESV_H
#define FS_RESV_H

#include "fs_outages.h"

/* Reads path, reservations or the CSV, into *out.  origin: the date at the
 * run's time 0 (cluster.outages_origin; NULL: none given, refused for
 * reservations).  0, FS_EINVAL (FILE:LINE:COL), FS_EIO, FS_ENOMEM; on
 * failure *out is empty. */
int fs_resv_outages_read(const char *path, const char *origin, fs_outages_t *out,
                         fs_error_t *err);

#endif
