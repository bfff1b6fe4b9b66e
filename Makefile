# Migratable RoCEv2 SmartNIC firmware: one Makefile for every board.
#
#   make [BOARD=qemu-virt-a15|qemu-virt-a72|posix] [SAN=1]   build the firmware
#   make test     install deps, build everything, run the whole suite
#   make demo     install deps, boot NICs on the switch and show them talking
#   make install  the host tools and the man pages (PREFIX=/usr/local, DESTDIR=)
#   make bench    figures, one "name: value unit" line each
#   make fuzz     coverage-guided fuzzing of the input parsers (clang/libFuzzer)
#   make clean
#
# Out-of-tree: everything lands in build/<board>[-asan]/.

BOARDS := qemu-virt-a15 qemu-virt-a72 posix
BOARD ?= qemu-virt-a15
ifeq ($(filter $(BOARD),$(BOARDS)),)
$(error unknown BOARD=$(BOARD); choose one of: $(BOARDS))
endif

V ?= 0
Q := $(if $(filter 1,$(V)),,@)
PYTHON ?= python3

BUILD := build/$(BOARD)$(if $(filter 1,$(SAN)),-asan)
GEN := $(BUILD)/gen
BOARD_FILE := qemu-board/boards/$(BOARD).board

WARN := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# ---- layers: who may include whom (docs/ARCHITECTURE.md, "Layers") -------
# Each module compiles with the include folders of the modules it may see
# and no others, so the compiler itself refuses a header across a
# forbidden boundary; a module's own folder needs no -I (quoted includes
# look next to the including file first).  `make check-layering`
# (scripts/check-layering.py) resolves every include with these lists and
# checks it against the module graph, relative paths included.
INC_lib := -Ilib/include -Ihal/include
INC_hal := -Ilib/include -Ihal/include
INC_hal-common := $(INC_hal)
INC_hal-posix := $(INC_hal) -Iabi/include -I$(GEN)
INC_hal-qemu-virt := $(INC_hal) -I$(GEN)
INC_abi := -Iabi/include
INC_rocev2 := -Ilib/include -Ihal/include -Iabi/include -Irocev2/include
INC_boot := -Ilib/include -Ihal/include -Iabi/include -Iboot/include
INC_mgmt := $(INC_rocev2) -Iboot/include -Imgmt/include
INC_firmware := $(INC_mgmt)
INC_loader := $(INC_boot) -Ihal/qemu-virt -I$(GEN)
INC_libmnic-api := -Iabi/include -Ihostdrv/include
INC_libmnic := -Ilib/include $(INC_libmnic-api)
INC_tools := $(INC_libmnic) -Ihal/include -Iboot/include
INC_kernel := -Iabi/include
# The rdma-core provider (hostdrv/provider/): the ABI, libmnic's public
# types and its pure ring code (hostdrv/lib/wqe.h only: check-layering).
INC_provider := -Iabi/include -Ihostdrv/include -Ihostdrv/lib
# The CRIU plugin (hostdrv/criu/): the ABI only (CRIU's criu-plugin.h is the system's).
INC_criu := -Iabi/include
# The test fabric's switch links the POSIX NIC's impairment (fabric/fabric.mk).
INC_fabric := -Ilib/include -Ihal/include -Ihal/posix
# mnic-ivshmem-server speaks QEMU's protocol and includes nothing of ours.
INC_qemu-board :=
# bench/ sees everything, as tests do (not a layer: make check-layering skips it).
INC_bench := $(INC_mgmt) -Irocev2 -Itests/unit/rocev2
LAYER_MODULES := lib hal hal-common hal-posix hal-qemu-virt abi rocev2 boot mgmt firmware loader \
	libmnic-api libmnic tools kernel provider criu fabric qemu-board
# The module of an object: the folder of its source, most specific first.
layer_of = $(firstword $(foreach p,boot/loader:loader hal/common:hal-common hal/posix:hal-posix \
	hal/qemu-virt:hal-qemu-virt lib:lib abi:abi rocev2:rocev2 boot:boot mgmt:mgmt \
	firmware:firmware hostdrv/lib:libmnic hostdrv/tools:tools hostdrv/provider:provider \
	hostdrv/criu:criu fabric:fabric bench:bench,$(if $(filter \
	$(word 1,$(subst :, ,$(p)))/%,$(1)),$(word 2,$(subst :, ,$(p))))))

# Primitives below every module (lib/: CRCs, hashes): firmware, loader, libmnic, tools.
LIB_SRCS := $(wildcard lib/*.c)
# The lab's modes (firmware/modes.h): the traffic generators and the driver
# self-test, linked into the POSIX NIC and the boards' mnic-fw-lab.elf, never
# into the product image mnic-fw.elf (the boot self-test that confirms a
# slot, firmware/fwflash_boot.c, is the product's).
LAB_SRCS := firmware/rawx.c firmware/rcx.c firmware/selftest.c firmware/lab_modes.c
FW_SRCS := $(filter-out $(LAB_SRCS) firmware/lab_none.c,$(wildcard firmware/*.c)) \
	$(wildcard mgmt/*.c) $(wildcard rocev2/*.c) hal/common/dma_window.c \
	$(LIB_SRCS) abi/cmd_names.c
# The boards compile for size (-Os, and Thumb-2 on the A15: COLD_ISA; the
# text budget, docs/ARCHITECTURE.md "Footprint") except the per-packet
# path, which keeps -O2 (and A32).
HOT_SRCS := rocev2/resp.c rocev2/req.c rocev2/comp.c rocev2/recv.c rocev2/net.c \
	rocev2/opcode.c rocev2/icrc.c rocev2/mtt.c rocev2/queue.c rocev2/srq.c rocev2/cq.c \
	lib/crc32.c firmware/loop.c hal/common/dma_window.c hal/qemu-virt/virtio_net.c
# Firmware images and A/B boot (boot/, docs/firmware-images.md)
BOOT_LIB_SRCS := boot/fwimage.c boot/fwsig.c boot/bootrec.c
FW_SRCS += $(BOOT_LIB_SRCS)
# FW_SELFTEST_FAIL=1: a firmware whose boot self-test fails (it never
# confirms its slot: the loader reverts it), built apart in build/<board>-stfail/.
ifeq ($(FW_SELFTEST_FAIL),1)
BUILD := $(BUILD)-stfail
endif

ifeq ($(BOARD),qemu-virt-a15)
CROSS := arm-none-eabi-
ARCH_FLAGS := -mcpu=cortex-a15 -marm -mfpu=neon-vfpv4 -mfloat-abi=hard -mno-unaligned-access
LIBS := -lc -lgcc
LDFLAGS := -nostartfiles --specs=nosys.specs -T $(GEN)/board.ld -Wl,--gc-sections
START := hal/qemu-virt/start_a32.S
# The A15's cold code is Thumb-2 (-mthumb: 16/32-bit encodings, about a
# fifth smaller than A32 here) and calls the hot path's A32 code through
# BLX, which costs what BL does (ARM ARM A4.1 interworking).  A32 stay: the
# per-packet helpers outside HOT_SRCS (WARM_SRCS: timers, scheduling,
# lookups, DCQCN, events, the host Ethernet dispatch on every frame (ethq.c),
# the migration checks on every ACK and response,
# the stopped-context check on every host access, the board's poll/wait
# and interrupt drivers),
# the lab modes (their speed is in the lab's figures) and the semihosting
# call (the A32 trap is SVC 0x123456; semihosting spec 2.1).
COLD_ISA := -mthumb
WARM_SRCS := lib/timer.c rocev2/rocev2.c rocev2/qp.c rocev2/mr.c rocev2/pd.c rocev2/eq.c \
	rocev2/cc.c rocev2/migrate.c rocev2/query.c rocev2/ethq.c hal/qemu-virt/board.c hal/qemu-virt/gic.c hal/qemu-virt/gtimer.c \
	hal/qemu-virt/ivshmem.c mgmt/doorbell.c firmware/engine.c
A32_SRCS := $(WARM_SRCS) $(LAB_SRCS) hal/qemu-virt/semihost.c
endif
ifeq ($(BOARD),qemu-virt-a72)
CROSS := aarch64-linux-gnu-
PICOLIBC := /usr/lib/picolibc/aarch64-linux-gnu
ARCH_FLAGS := -mcpu=cortex-a72 -mstrict-align -fno-pie -isystem $(PICOLIBC)/include
LIBS := -Wl,--start-group -lc -lgcc -Wl,--end-group
LDFLAGS := -nostdlib -static -no-pie -L$(PICOLIBC)/lib -T $(GEN)/board.ld -Wl,--gc-sections \
	-Wl,--build-id=none -Wl,--no-warn-rwx-segments
START := hal/qemu-virt/start_a64.S
endif

# The ICRC on x86-64 hosts runs ISA-L's crc32_gzip_refl (rocev2/icrc.c):
# whatever links rocev2/icrc.c there links this too.
ICRC_LIBS := -lisal

ifeq ($(BOARD),posix)
CC := gcc
CFLAGS := $(WARN) -O2 -g -D_GNU_SOURCE
FW_OPT :=
ifeq ($(SAN),1)
CFLAGS += -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS := -fsanitize=address,undefined
endif
LIBS := -lvdeplug $(ICRC_LIBS)
SRCS := $(FW_SRCS) $(LAB_SRCS) $(wildcard hal/posix/*.c)
IMAGE := $(BUILD)/mnic-fw
else
CC := $(CROSS)gcc
SIZE := $(CROSS)size
CFLAGS := $(WARN) -g -ffreestanding -fno-stack-protector -ffunction-sections \
	-fdata-sections $(ARCH_FLAGS)
FW_OPT = $(if $(filter $(HOT_SRCS),$<),-O2,-Os $(if $(filter $(A32_SRCS),$<),,$(COLD_ISA)))
BOARD_HAL_SRCS := $(addprefix hal/qemu-virt/,board.c gic.c gtimer.c semihost.c pl011.c \
	pcie_ecam.c ivshmem.c virtio_net.c pflash.c psci.c) $(START)
SRCS := $(FW_SRCS) $(BOARD_HAL_SRCS) firmware/lab_none.c
ifeq ($(FW_SELFTEST_FAIL),1)
CFLAGS += -DFW_SELFTEST_FAIL=1
endif
IMAGE := $(BUILD)/mnic-fw.elf
LAB_IMAGE := $(BUILD)/mnic-fw-lab.elf
LAB_OBJS := $(patsubst %,$(BUILD)/obj/%.o,$(FW_SRCS) $(BOARD_HAL_SRCS) $(LAB_SRCS))
endif

OBJS := $(patsubst %,$(BUILD)/obj/%.o,$(SRCS))

.PHONY: all image test demo bench fuzz clean deps unit-tests images
.DEFAULT_GOAL := all

all: image provider criu-plugin
image: $(IMAGE) $(LAB_IMAGE)

$(GEN)/board.h: $(BOARD_FILE) qemu-board/gen-board.py
	@mkdir -p $(GEN)
	$(Q)$(PYTHON) qemu-board/gen-board.py $(BOARD_FILE) $(GEN)
	@touch $@

# The Makefile is a prerequisite: it holds the flags (FW_OPT, COLD_ISA,
# HOT_SRCS, WARM_SRCS), and an object built with other flags would measure
# the wrong footprint (tests/system/text_budget.sh).
$(BUILD)/obj/%.c.o: %.c $(GEN)/board.h Makefile
	@mkdir -p $(dir $@)
	@command -v $(CC) >/dev/null || { echo "error: $(CC) not found; run scripts/deps.sh (as root) to install the toolchain" >&2; exit 1; }
	$(if $(Q),@echo "  CC  $(BOARD) $<")
	$(Q)$(CC) $(CFLAGS) $(FW_OPT) $(INC_$(call layer_of,$<)) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.S.o: %.S $(GEN)/board.h
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  AS  $(BOARD) $<")
	$(Q)$(CC) $(ARCH_FLAGS) -c $< -o $@

$(IMAGE): $(OBJS)
	$(if $(Q),@echo "  LD  $@")
	$(Q)$(CC) $(CFLAGS) $(OBJS) $(LDFLAGS) $(LIBS) -o $@
ifneq ($(BOARD),posix)
	$(Q)$(SIZE) $@ > $(BUILD)/size.txt

$(LAB_IMAGE): $(LAB_OBJS)
	$(if $(Q),@echo "  LD  $@")
	$(Q)$(CC) $(CFLAGS) $(LAB_OBJS) $(LDFLAGS) $(LIBS) -o $@
endif

-include $(sort $(OBJS:.o=.d) $(LAB_OBJS:.o=.d))

# ---- first-stage loader in flash0 (boot/loader, docs/firmware-images.md) ----
# XIP from flash0, stack/bss at the board's loader_ram; no libc.  flash0.bin
# is the whole 64 MiB bank QEMU wants for -drive if=pflash,unit=0.
comma := ,
ifneq ($(BOARD),posix)
LOADER_DIR := $(BUILD)/loader
LOADER_SRCS := boot/loader/loader.c $(BOOT_LIB_SRCS) lib/sha256.c lib/sha512.c lib/ed25519.c lib/crc32.c hal/qemu-virt/pflash.c hal/qemu-virt/semihost.c
LOADER_START := boot/loader/start_$(if $(filter qemu-virt-a15,$(BOARD)),a32,a64).S
LOADER_ARCH := $(if $(filter qemu-virt-a15,$(BOARD)),-mcpu=cortex-a15 -marm -mfloat-abi=soft \
	-mno-unaligned-access,-mcpu=cortex-a72 -mgeneral-regs-only -mstrict-align -fno-pie \
	-isystem $(PICOLIBC)/include)
LOADER_CFLAGS := $(WARN) -Os -g -ffreestanding -fno-builtin -fno-tree-loop-distribute-patterns \
	-fno-stack-protector -ffunction-sections -fdata-sections $(LOADER_ARCH)
LOADER_LDEXTRA := $(if $(filter qemu-virt-a72,$(BOARD)),-no-pie -Wl$(comma)--build-id=none)
LOADER_OBJS := $(patsubst %,$(LOADER_DIR)/obj/%.o,$(LOADER_SRCS) $(LOADER_START))
$(GEN)/loader.ld: $(GEN)/board.h
$(LOADER_DIR)/obj/%.c.o: %.c $(GEN)/board.h
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC  $(BOARD) loader $<")
	$(Q)$(CC) $(LOADER_CFLAGS) $(INC_$(call layer_of,$<)) -MMD -MP -c $< -o $@
$(LOADER_DIR)/obj/%.S.o: %.S
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LOADER_ARCH) -c $< -o $@
$(LOADER_DIR)/loader.elf: $(LOADER_OBJS) $(GEN)/loader.ld
	$(if $(Q),@echo "  LD  $@")
	$(Q)$(CC) $(LOADER_CFLAGS) -nostdlib -static -T $(GEN)/loader.ld -Wl,--gc-sections \
		$(LOADER_LDEXTRA) $(LOADER_OBJS) -lgcc -o $@
	$(Q)$(SIZE) $@ > $(LOADER_DIR)/size.txt
# The loader must end before the key slot (MNIC_BOOTROM_KEYSLOT, 256 KiB
# into flash0: mnic/fwimage.h); the slot is left zero: no key provisioned
# (`mnicctl image keyslot` provisions a copy).
$(LOADER_DIR)/flash0.bin: $(LOADER_DIR)/loader.elf
	$(Q)$(CROSS)objcopy -O binary $< $@.tmp && \
	{ [ $$(stat -c %s $@.tmp) -le 262144 ] || { echo "error: loader larger than the 256 KiB before the key slot" >&2; exit 1; }; } && \
	truncate -s 64M $@.tmp && mv $@.tmp $@
image: $(LOADER_DIR)/flash0.bin
-include $(LOADER_OBJS:.o=.d)
endif

# ---- the ICRC engines on the board's CPU (bench/icrc_board.c) -------------
# A program of its own on the board's HAL, beside the firmware (which does
# not carry it): make bench's icrc_gbps_<board> figures and
# tests/system/icrc_boards.sh's cross-check on the emulated CPU.
.PHONY: icrc-bench
ifneq ($(BOARD),posix)
ICRC_BENCH_OBJS := $(patsubst %,$(BUILD)/obj/%.o,bench/icrc_board.c rocev2/icrc.c lib/crc32.c \
	hal/common/dma_window.c $(BOARD_HAL_SRCS))
icrc-bench: $(BUILD)/icrc-bench.elf
$(BUILD)/icrc-bench.elf: $(ICRC_BENCH_OBJS)
	$(if $(Q),@echo "  LD  $@")
	$(Q)$(CC) $(CFLAGS) $(ICRC_BENCH_OBJS) $(LDFLAGS) $(LIBS) -o $@
-include $(BUILD)/obj/bench/icrc_board.c.d
else
icrc-bench:
	$(error icrc-bench runs on a QEMU board: BOARD=qemu-virt-a15 or qemu-virt-a72)
endif

# ---- host unit tests (CMocka), plain and ASan+UBSan ----------------------
include tests/unit/unit.mk

# Tests see every module, privates included.
UNIT_CFLAGS := -std=c11 -Wall -Wextra -Werror -g -D_GNU_SOURCE \
	-Ilib/include -Ihal/include -Ihal/qemu-virt -Ihal/posix -Ifirmware -Iabi/include \
	-Irocev2/include -Imgmt/include -Iboot/include -Imgmt -I. \
	-Itests/unit -Itests/unit/hal -Ibuild/host/gen
SAN_FLAGS := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

define unit_rule
build/host/unit/$(1): $$($(1)_SRCS) $$(wildcard hal/include/hal/*.h) | build/host/gen/board.h
	@mkdir -p $$(dir $$@)
	$$(if $$(Q),@echo "  CC  host $(1)")
	$$(Q)gcc $$(UNIT_CFLAGS) -O2 $$($(1)_CFLAGS) $$($(1)_SRCS) -lcmocka $$($(1)_LIBS) \
		$$(if $$(filter rocev2/icrc.c,$$($(1)_SRCS)),$$(ICRC_LIBS)) -o $$@
build/host-asan/unit/$(1): $$($(1)_SRCS) $$(wildcard hal/include/hal/*.h) | build/host/gen/board.h
	@mkdir -p $$(dir $$@)
	$$(if $$(Q),@echo "  CC  host-asan $(1)")
	$$(Q)gcc $$(UNIT_CFLAGS) $$(SAN_FLAGS) $$($(1)_CFLAGS) $$($(1)_SRCS) -lcmocka $$($(1)_LIBS) \
		$$(if $$(filter rocev2/icrc.c,$$($(1)_SRCS)),$$(ICRC_LIBS)) -o $$@
endef
$(foreach t,$(UNIT_TESTS),$(eval $(call unit_rule,$(t))))

build/host/gen/board.h: qemu-board/boards/posix.board qemu-board/gen-board.py
	@mkdir -p $(dir $@)
	$(Q)$(PYTHON) qemu-board/gen-board.py $< $(dir $@)

unit-tests: $(addprefix build/host/unit/,$(UNIT_TESTS)) $(addprefix build/host-asan/unit/,$(UNIT_TESTS))

# ---- host driver side: libmnic, mnicctl, apps (hostdrv/hostdrv.mk) ------
include hostdrv/hostdrv.mk

# ---- the test fabric's switch (fabric/fabric.mk) --------------------------
include fabric/fabric.mk

# ---- the QEMU NICs' ivshmem-doorbell server (qemu-board/qemu-board.mk) ----
include qemu-board/qemu-board.mk

# ---- Linux kernel module (hostdrv/kernel/, docs/kernel-driver.md) -------
# Out of tree against the installed Debian kernel's headers, chosen by
# tests/vm/kver.sh (never `uname -r`: this machine may run another kernel);
# KVER=... to pick one.  Kbuild writes next to its sources, so the build
# runs in build/kmod/ on links to hostdrv/kernel/.
KMOD_SRCS := $(notdir $(wildcard hostdrv/kernel/*.c hostdrv/kernel/*.h)) Kbuild
.PHONY: kmod
kmod: build/kmod/mnic.ko build/kmod/mnic-ioctl-check build/kmod/mnic-tenancy-check \
      build/kmod/mnic-mem-check build/kmod/mnic-ib-check build/kmod/mnic-rw-kmod \
      build/kmod/mnic-verbs-check provider ibv-traffic criu-plugin
# The provider through unmodified libibverbs, run in the test VM (dynamic:
# libibverbs dlopens the provider; the initramfs gets the libraries ldd names).
build/kmod/mnic-verbs-check: tests/tools/mnic-verbs-check.c hostdrv/kernel/test/check_result.h
	@mkdir -p $(dir $@)
	$(Q)gcc -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
		-O2 $< -libverbs -o $@
# The verified verbs workload (tests/tools/ibv-traffic.c): libibverbs and
# lib/crc32 only, no libmnic and no mnic header, so that the one binary runs
# on rxe and on mnic (the VMs get it with the libraries ldd names).
.PHONY: ibv-traffic
ibv-traffic: build/host/tools/ibv-traffic
IBV_TRAFFIC_SRCS := tests/tools/ibv-traffic.c tests/tools/ibv_traffic_msg.c lib/crc32.c
build/host/tools/ibv-traffic: $(IBV_TRAFFIC_SRCS) tests/tools/ibv_traffic_msg.h lib/include/lib/crc32.h
	@mkdir -p $(dir $@)
	$(Q)gcc -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
		-O2 -Ilib/include $(IBV_TRAFFIC_SRCS) -libverbs -o $@
# Hostile-caller, tenancy and host-memory checks of /dev/mnicN, run in the test VM
# (static: any libc).
build/kmod/mnic-%-check: hostdrv/kernel/test/mnic_%_check.c $(wildcard abi/include/mnic/*.h) \
			hostdrv/kernel/test/check_counter.h hostdrv/kernel/test/check_result.h
	@mkdir -p $(dir $@)
	$(Q)gcc -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
		-O2 $(INC_kernel) -static -pthread $< -o $@
# The passive RDMA WRITE/READ peer on /dev/mnicN (rw_proto.h, mnic-rw's peer).
build/kmod/mnic-rw-kmod: tests/interop/mnic_rw_kmod.c tests/interop/rw_proto.h $(wildcard abi/include/mnic/*.h)
	@mkdir -p $(dir $@)
	$(Q)gcc -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
		-O2 $(INC_kernel) -Itests/interop -static $< -o $@
build/kmod/mnic.ko: $(addprefix hostdrv/kernel/,$(KMOD_SRCS)) $(wildcard abi/include/mnic/*.h)
	@mkdir -p build/kmod
	$(Q)kver=$(or $(KVER),$$(tests/vm/kver.sh --headers)) && \
	for f in $(KMOD_SRCS); do ln -sfn $(CURDIR)/hostdrv/kernel/$$f build/kmod/$$f; done && \
	$(MAKE) --no-print-directory -C /lib/modules/$$kver/build M=$(CURDIR)/build/kmod \
		MNIC_ROOT=$(CURDIR) W=1 $(if $(Q),-s) modules

# ---- interop with Linux SoftRoCE (tests/interop/, docs/interop.md) --------
# rdma_rw runs inside the rxe VM (libibverbs); mnic-rw drives our NIC (libmnic).
.PHONY: interop-tools
interop-tools: build/interop/rdma_rw build/interop/mnic-rw
build/interop/rdma_rw: tests/interop/rdma_rw.c tests/interop/rw_proto.h
	@mkdir -p $(dir $@)
	$(Q)gcc $(HOSTDRV_CFLAGS) $(INC_tools) $< -libverbs -o $@
build/interop/mnic-rw: tests/interop/mnic-rw.c tests/interop/rw_proto.h $(HOSTDRV_OUT)/libmnic.a
	@mkdir -p $(dir $@)
	$(Q)gcc $(HOSTDRV_CFLAGS) $(INC_tools) $< $(HOSTDRV_OUT)/libmnic.a -pthread -o $@

# ---- whole-project targets (every board) ---------------------------------
images:
	$(Q)$(MAKE) --no-print-directory BOARD=qemu-virt-a15 all icrc-bench
	$(Q)$(MAKE) --no-print-directory BOARD=qemu-virt-a72 all icrc-bench
	$(Q)$(MAKE) --no-print-directory BOARD=qemu-virt-a15 FW_SELFTEST_FAIL=1 all
	$(Q)$(MAKE) --no-print-directory BOARD=qemu-virt-a72 FW_SELFTEST_FAIL=1 all
	$(Q)$(MAKE) --no-print-directory BOARD=posix all
	$(Q)$(MAKE) --no-print-directory BOARD=posix SAN=1 all
	$(Q)$(MAKE) --no-print-directory hostdrv mnic-switch ivshmem-server

deps:
	$(Q)bash scripts/deps.sh

test: deps
	$(Q)$(MAKE) --no-print-directory images unit-tests kmod
	$(Q)bash scripts/run-tests.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory images
	$(Q)bash scripts/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory images >&2
	$(Q)bash bench/bench.sh

fuzz: deps
	$(Q)bash scripts/fuzz.sh

# ---- layering: the module graph, checked (scripts/check-layering.py) -----
.PHONY: check-layering print-includes
print-includes:
	@$(foreach m,$(LAYER_MODULES),echo "$(m): $(INC_$(m))";)
check-layering:
	$(Q)$(PYTHON) scripts/check-layering.py --selftest
	$(Q)$(PYTHON) scripts/check-layering.py --graph

clean:
	rm -rf build
