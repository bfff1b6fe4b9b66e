#!/usr/bin/env bash
# Linux SoftRoCE (rdma_rxe, rdma-core's ibv_rc_pingpong) against a QEMU
# Cortex-A15 NIC: the same matrix as interop_rxe_posix.sh
# (tests/interop/against-nic.sh), fewer iterations (the NIC is emulated too).
# Iterations per run: 1 B x 300, 4 KiB x 150, 64 KiB x 30.
exec "$(dirname "$0")/../interop/against-nic.sh" qemu-virt-a15 a15 17310 300 150 30
