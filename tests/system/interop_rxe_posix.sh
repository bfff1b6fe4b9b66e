#!/usr/bin/env bash
# Linux SoftRoCE (rdma_rxe, rdma-core's ibv_rc_pingpong) against a POSIX
# NIC: pingpong both roles at 1 B / 4 KiB / 64 KiB and MTU 1024 / 4096,
# RDMA WRITE/READ into an rxe MR, counters and capture (tests/interop/against-nic.sh).
# Iterations per run: 1 B x 500, 4 KiB x 250, 64 KiB x 50.
exec "$(dirname "$0")/../interop/against-nic.sh" posix posix 17300 500 250 50
