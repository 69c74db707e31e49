/*
 * fs_metrics_links: the fabric's link counters in the export, under the
 * names SREs query (docs/observability.md "Network links"), from /links
 * and /link_bytes (a run with cluster.fabric and a sampled /timeline):
 *   - a node's NIC ports as node_exporter's InfiniBand collector writes
 *     them (collector/infiniband_linux.go): node_infiniband_port_data_
 *     transmitted_bytes_total and ..._received_bytes_total, labels device
 *     and port, one series per NIC (HCA mlx5_<i>, port 1);
 *   - a leaf group's uplink ports as snmp_exporter's if_mib module names
 *     the IF-MIB counters (generator/generator.yml, snmp.yml): ifHCOutOctets
 *     and ifHCInOctets, labels switch and port (also ifName and ifIndex).
 * A bundle's bytes are split evenly over its ports (the fabric splits its
 * traffic so); a ring receives on every link what it sends, so the
 * receive counters equal the transmit ones.
 */
#ifndef FS_METRICS_LINKS_H
#define FS_METRICS_LINKS_H

#include <stddef.h>
#include <stdint.h>

#include "fs_metrics_sink.h"

size_t fs_mlinks_n_families(void);
const char *fs_mlinks_family_name(size_t i);

/* Writes the families i with fam_on[fam_base + i] set, when the results
 * file has /links and /link_bytes (else nothing: a run without the fabric,
 * or without /timeline). */
int fs_mlinks_emit(fs_msink_t *s, const uint8_t *fam_on, size_t fam_base);

#endif
