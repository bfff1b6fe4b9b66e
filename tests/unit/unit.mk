# Host unit tests: one CMocka binary per name, mirroring the tree.
# <name>_SRCS lists the test and the real sources it drives;
# <name>_CFLAGS/_LIBS are extras.  Built plainly and with ASan+UBSan.

UNIT_TESTS += test_timer
test_timer_SRCS := tests/unit/lib/test_timer.c lib/timer.c

UNIT_TESTS += test_fmt
test_fmt_SRCS := tests/unit/firmware/test_fmt.c firmware/fmt.c

UNIT_TESTS += test_args
test_args_SRCS := tests/unit/firmware/test_args.c firmware/args.c firmware/log.c firmware/fmt.c lib/mac.c

UNIT_TESTS += test_loop
test_loop_SRCS := tests/unit/firmware/test_loop.c firmware/loop.c lib/timer.c

# lib/: the primitives below everything, each against known answers.
UNIT_TESTS += test_crc32
test_crc32_SRCS := tests/unit/lib/test_crc32.c
test_crc32_LIBS := -lz
build/host/unit/test_crc32 build/host-asan/unit/test_crc32: lib/crc32.c lib/include/lib/crc32.h
UNIT_TESTS += test_sha256
test_sha256_SRCS := tests/unit/lib/test_sha256.c lib/sha256.c
UNIT_TESTS += test_ed25519
test_ed25519_SRCS := tests/unit/lib/test_ed25519.c lib/sha512.c lib/ed25519.c
test_ed25519_LIBS := -lsodium
UNIT_TESTS += test_siphash
test_siphash_SRCS := tests/unit/lib/test_siphash.c lib/siphash.c
UNIT_TESTS += test_mac
test_mac_SRCS := tests/unit/lib/test_mac.c lib/mac.c

UNIT_TESTS += test_virtio_net
test_virtio_net_SRCS := tests/unit/hal/test_virtio_net.c tests/unit/hal/fake_virtio_mmio.c hal/qemu-virt/virtio_net.c
test_virtio_net_CFLAGS := -DHAL_MMIO_HOOKS

UNIT_TESTS += test_pcie_ecam
test_pcie_ecam_SRCS := tests/unit/hal/test_pcie_ecam.c tests/unit/hal/fake_ecam.c hal/qemu-virt/pcie_ecam.c hal/qemu-virt/ivshmem.c
test_pcie_ecam_CFLAGS := -DHAL_MMIO_HOOKS

UNIT_TESTS += test_pl011
test_pl011_SRCS := tests/unit/hal/test_pl011.c tests/unit/hal/fake_pl011.c hal/qemu-virt/pl011.c
test_pl011_CFLAGS := -DHAL_MMIO_HOOKS

UNIT_TESTS += test_impair
test_impair_SRCS := tests/unit/hal/test_impair.c hal/posix/impair.c

UNIT_TESTS += test_flash
test_flash_SRCS := tests/unit/hal/test_flash.c tests/unit/hal/ram_flash.c

UNIT_TESTS += test_dma_window
test_dma_window_SRCS := tests/unit/hal/test_dma_window.c hal/common/dma_window.c

UNIT_TESTS += test_posix_eth
test_posix_eth_SRCS := tests/unit/hal/test_posix_eth.c hal/posix/eth_vde.c hal/posix/impair.c \
	hal/posix/bar_shm.c hal/posix/platform.c hal/posix/pcap.c hal/posix/doorbell.c \
	hal/posix/ivsh_peer.c lib/mac.c
test_posix_eth_LIBS := -lvdeplug

# The POSIX NIC as a peer of an ivshmem server (a host VM's doorbells).
UNIT_TESTS += test_posix_ivsh_peer
test_posix_ivsh_peer_SRCS := tests/unit/hal/test_posix_ivsh_peer.c hal/posix/ivsh_peer.c \
	hal/posix/doorbell.c
test_posix_ivsh_peer_CFLAGS := -pthread

# The POSIX NIC's doorbell channel with libmnic's end of it (issue 15).
UNIT_TESTS += test_posix_doorbell_irq
test_posix_doorbell_irq_SRCS := tests/unit/hal/test_posix_doorbell_irq.c hal/posix/doorbell.c \
	hostdrv/lib/dbch.c hostdrv/lib/fdpass.c hostdrv/lib/ivsh.c
test_posix_doorbell_irq_CFLAGS := -pthread -Ihostdrv/include -Ihostdrv/lib

# A BAR file that shrinks under the POSIX NIC: size check, SIGBUS report.
UNIT_TESTS += test_bar_shm
test_bar_shm_SRCS := tests/unit/hal/test_bar_shm.c hal/posix/bar_shm.c

# rocev2 engine: each test links the real engine (all stages) unless it
# tests a stage in isolation with the doubles named in its SRCS.
ROCEV2_TEST_CFLAGS := -Irocev2 -Itests/unit/rocev2 -DROCEV2_MAX_QP=16 -DROCEV2_MAX_MR=64 \
	-DROCEV2_MAX_PD=16 -DROCEV2_MAX_CQ=16 -DROCEV2_MAX_SRQ=8
ROCEV2_ENGINE_SRCS := $(wildcard rocev2/*.c) lib/crc32.c lib/siphash.c \
	lib/timer.c hal/common/dma_window.c

define rocev2_test
UNIT_TESTS += $(1)
$(1)_SRCS := tests/unit/rocev2/$(1).c $(ROCEV2_ENGINE_SRCS)
$(1)_CFLAGS := $(ROCEV2_TEST_CFLAGS)
endef
$(foreach t,test_objects test_qp test_queue test_resp test_req test_comp,$(eval $(call rocev2_test,$(t))))

# Completion events (issue 15 item 4): CQ arm, event queues, the re-arm race.
$(eval $(call rocev2_test,test_cq_event))
# DCQCN congestion control (issue 18): CNPs, rate cuts, recovery, pacer.
$(eval $(call rocev2_test,test_dcqcn))

# Host Ethernet queues (issue 16): RX dispatch, TX, hostile descriptors.
$(eval $(call rocev2_test,test_ethq))

# Memory translation (issue 14): MTTs, page lists, traffic and migration on
# non-contiguous host pages.
$(eval $(call rocev2_test,test_translation))

# Wire stages in isolation: test_icrc checks icrc.c against a bitwise
# reference; test_recv tests the demux with doubles for the stages it feeds.
UNIT_TESTS += test_icrc
test_icrc_SRCS := tests/unit/rocev2/test_icrc.c rocev2/icrc.c lib/crc32.c
test_icrc_CFLAGS := $(ROCEV2_TEST_CFLAGS)
test_icrc_LIBS := -lz
build/host/unit/test_icrc build/host-asan/unit/test_icrc: tests/unit/rocev2/rxe_frames.h

UNIT_TESTS += test_net
test_net_SRCS := tests/unit/rocev2/test_net.c rocev2/net.c rocev2/gid.c rocev2/icrc.c rocev2/opcode.c lib/crc32.c \
	lib/timer.c hal/common/dma_window.c
test_net_CFLAGS := $(ROCEV2_TEST_CFLAGS)

UNIT_TESTS += test_recv
test_recv_SRCS := tests/unit/rocev2/test_recv.c tests/unit/rocev2/recv_doubles.c rocev2/recv.c \
	rocev2/net.c rocev2/gid.c rocev2/icrc.c rocev2/opcode.c lib/crc32.c lib/timer.c hal/common/dma_window.c
test_recv_CFLAGS := $(ROCEV2_TEST_CFLAGS)

# RoCEv2 over IPv6 (issue 19): GID table, template, receive checks, ICRC.
UNIT_TESTS += test_ipv6
test_ipv6_SRCS := tests/unit/rocev2/test_ipv6.c tests/unit/rocev2/recv_doubles.c rocev2/recv.c \
	rocev2/net.c rocev2/gid.c rocev2/icrc.c rocev2/opcode.c lib/crc32.c lib/timer.c hal/common/dma_window.c
test_ipv6_CFLAGS := $(ROCEV2_TEST_CFLAGS)
test_ipv6_LIBS := -lz

UNIT_TESTS += test_pcap
test_pcap_SRCS := tests/unit/hal/test_pcap.c hal/posix/pcap.c

# Live migration (issue #4): the image, the protocol, end to end.
$(foreach t,test_dump test_image test_migration_e2e,$(eval $(call rocev2_test,$(t))))
# test_dump also runs libmnic's image parser (hostdrv/lib/image.c) on the
# engine's images: the two readers of the format must agree.
test_dump_SRCS += hostdrv/lib/image.c
test_dump_CFLAGS += -Ihostdrv/include -Ihostdrv/lib

# test_migrate compiles rocev2/migrate.c itself (to reach its static
# SipHash and MAC layout), so it links the engine without it.
UNIT_TESTS += test_migrate
test_migrate_SRCS := tests/unit/rocev2/test_migrate.c \
	$(filter-out rocev2/migrate.c,$(ROCEV2_ENGINE_SRCS))
test_migrate_CFLAGS := $(ROCEV2_TEST_CFLAGS)
build/host/unit/test_migrate build/host-asan/unit/test_migrate: rocev2/migrate.c

# Host interface (issue #5): the command queue transport and the
# dispatcher with the real engine behind it (tests/unit/mgmt/fake_host.h).
MGMT_SRCS := mgmt/cmdq.c mgmt/cmd.c mgmt/cmd_device.c mgmt/cmd_objects.c mgmt/cmd_mtt.c mgmt/cmd_migrate.c mgmt/cmd_context.c mgmt/doorbell.c abi/cmd_names.c mgmt/fwflash.c \
	lib/sha256.c lib/sha512.c lib/ed25519.c boot/fwimage.c boot/fwsig.c boot/bootrec.c
define mgmt_test
UNIT_TESTS += $(1)
$(1)_SRCS := tests/unit/mgmt/$(1).c $(MGMT_SRCS) $(ROCEV2_ENGINE_SRCS)
$(1)_CFLAGS := $(ROCEV2_TEST_CFLAGS) -Itests/unit/mgmt
endef
$(foreach t,test_cmdq test_cmd test_tenancy test_mtt,$(eval $(call mgmt_test,$(t))))

# Host library (issue #5): libmnic's pure parts and mnicctl's argument parsing.
UNIT_TESTS += test_libmnic
# libmnic as linked into the tools: its sources and the shared names.
LIBMNIC_SRCS := $(wildcard hostdrv/lib/*.c) abi/cmd_names.c lib/crc32.c lib/mac.c
test_libmnic_SRCS := tests/unit/hostdrv/test_libmnic.c $(LIBMNIC_SRCS) \
	hostdrv/tools/mnicctl_args.c
test_libmnic_CFLAGS := -pthread -Ihostdrv/include -Ihostdrv/lib -Ihostdrv/tools

# The pure ring code libmnic and the rdma-core provider share (hostdrv/lib/wqe.c).
UNIT_TESTS += test_wqe
test_wqe_SRCS := tests/unit/hostdrv/test_wqe.c hostdrv/lib/wqe.c
test_wqe_CFLAGS := -Ihostdrv/include -Ihostdrv/lib

# The CRIU plugin's image header: sizes and fields checked before belief.
UNIT_TESTS += test_criu_img
test_criu_img_SRCS := tests/unit/hostdrv/test_criu_img.c
test_criu_img_CFLAGS := -Ihostdrv/criu -Iabi/include

# libmnic's migration sequence: order of calls, overrides, failure reports.
UNIT_TESTS += test_libmnic_mig
test_libmnic_mig_SRCS := tests/unit/hostdrv/test_libmnic_mig.c $(LIBMNIC_SRCS)
test_libmnic_mig_CFLAGS := -pthread -Ihostdrv/include -Ihostdrv/lib

# Firmware images and A/B boot (issue #8): SHA-256, the image parser, the
# boot record with power loss after every flash step.
BOOT_LIB_SRCS := lib/sha256.c lib/sha512.c lib/ed25519.c lib/crc32.c boot/fwimage.c boot/fwsig.c boot/bootrec.c
UNIT_TESTS += test_fwimage
test_fwimage_SRCS := tests/unit/boot/test_fwimage.c $(BOOT_LIB_SRCS)
UNIT_TESTS += test_fwsig
test_fwsig_SRCS := tests/unit/boot/test_fwsig.c $(BOOT_LIB_SRCS)
test_fwsig_LIBS := -lsodium
UNIT_TESTS += test_bootrec
test_bootrec_SRCS := tests/unit/boot/test_bootrec.c $(BOOT_LIB_SRCS)
UNIT_TESTS += test_fwflash
test_fwflash_SRCS := tests/unit/boot/test_fwflash.c tests/unit/hal/ram_flash.c mgmt/fwflash.c \
	$(BOOT_LIB_SRCS)
test_fwflash_LIBS := -lsodium
UNIT_TESTS += test_mnicctl_fw
test_mnicctl_fw_SRCS := tests/unit/boot/test_mnicctl_fw.c hostdrv/tools/mnicctl_fw.c \
	hostdrv/tools/mnicctl_args.c $(sort $(LIBMNIC_SRCS) $(BOOT_LIB_SRCS))
test_mnicctl_fw_CFLAGS := -pthread -Ihostdrv/include -Ihostdrv/lib -Ihostdrv/tools
test_mnicctl_fw_LIBS := -lsodium

# fabric/: mnic-switch's MAC table, queue, ECN marking and impairment rules.
UNIT_TESTS += test_switch_core
test_switch_core_SRCS := tests/unit/fabric/test_switch_core.c fabric/switch_core.c hal/posix/impair.c lib/mac.c
test_switch_core_CFLAGS := -Ifabric

# tests/tools/: ibv-traffic's message format, CRC32C and receive checks.
UNIT_TESTS += test_ibv_traffic_msg
test_ibv_traffic_msg_SRCS := tests/unit/tools/test_ibv_traffic_msg.c tests/tools/ibv_traffic_msg.c lib/crc32.c
build/host/unit/test_ibv_traffic_msg build/host-asan/unit/test_ibv_traffic_msg: tests/tools/ibv_traffic_msg.h
