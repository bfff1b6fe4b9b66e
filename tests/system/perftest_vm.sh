#!/usr/bin/env bash
# Unmodified perftest (ib_write_bw, ib_read_bw, ib_send_bw, ib_send_lat,
# ib_write_lat, ib_read_lat) on the mnic RDMA device against Linux SoftRoCE,
# both in x86_64 Debian VMs: the set-up of tests/system/ibv_rc_pingpong_vm.sh
# (a mnic VM on a POSIX NIC whose aperture is its RAM, an rxe VM on the same
# switch), each test completing its iterations on both ends; the capture
# decodes in tshark, no warning in the mnic VM's dmesg.
IBV_VM_MODE=perftest exec "$(dirname "$0")/ibv_rc_pingpong_vm.sh" "$@"
