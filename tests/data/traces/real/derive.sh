#!/bin/sh
# Derives the real-trace fixtures of tests/test_{tiresias,openb,swf,fleet}.c
# from /work/shared/data (never edit the outputs by hand; re-run this):
#   sh tests/data/traces/real/derive.sh /work/shared/data
set -e
D="$1"
O="$(dirname "$0")"
# Tiresias (Apache-2.0): whole files
chmod -f u+w "$O"/*.csv "$O"/*.swf "$O"/*.gz "$O"/LICENSE* "$O"/cluster_machine_list 2>/dev/null || true
cp "$D/tiresias/60_job.csv" "$D/tiresias/cluster_spec.csv" "$O/"
cp "$D/tiresias/LICENSE-Apache-2.0" "$O/LICENSE-Apache-2.0"
# openb (Apache-2.0, same license text): header + the first 300 pods of the
# gpuspec33 variant; the multigpu50 variant's first 100 pods; the GPU node list whole
head -n 301 "$D/alibaba-openb-2023/openb_pod_list_gpuspec33.csv" > "$O/openb_pods_gpuspec33_300.csv"
head -n 101 "$D/alibaba-openb-2023/openb_pod_list_multigpu50.csv" > "$O/openb_pods_multigpu50_100.csv"
cp "$D/alibaba-openb-2023/openb_node_list_gpu_node.csv" "$O/"
gzip -n -9 -c "$O/openb_pods_gpuspec33_300.csv" > "$O/openb_pods_gpuspec33_300.csv.gz"
# PAI machine spec (CC BY 4.0): whole
cp "$D/alibaba-pai-2020/pai_machine_spec.csv" "$O/"
cp "$D/alibaba-pai-2020/LICENSE" "$O/LICENSE-CC-BY-4.0"
# Philly machine lists (CC BY 4.0)
cp "$D/philly/revised_machine_list.csv" "$D/philly/cluster_machine_list" "$O/"
# SWF (Parallel Workloads Archive): the header and first 200 jobs of the HPC2N
# excerpt; the header and first 200 jobs of NASA iPSC, gzip
head -n 223 "$D/swf/alea-hpc2n-excerpt.swf" > "$O/hpc2n_200.swf"
zcat "$D/swf/NASA-iPSC-1993-3.1-cln.swf.gz" | awk '/^;/ {print; next} {n++; if (n <= 200) print}' \
    | gzip -n -9 > "$O/nasa_ipsc_200.swf.gz"
chmod 644 "$O"/*.csv "$O"/*.swf "$O"/*.gz "$O"/LICENSE* "$O"/cluster_machine_list
