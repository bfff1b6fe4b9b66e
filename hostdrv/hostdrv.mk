# Host side: libmnic, mnicctl and the small apps (included by the Makefile).
#   make hostdrv   build/host/hostdrv/{libmnic.a,mnicctl,mnic-pingpong,mnic-traffic,mnicctl-static}
#                  and the ASan+UBSan build in build/host-asan/hostdrv/ (with
#                  the test tool mnic-tenant); mnic-mr-bench (bench/mr_reg_bench.c) and
#                  mnic-db-bench (bench/doorbell_bench.c) in both
#   make install [PREFIX=/usr/local] [DESTDIR=]   mnicctl (sbin), mnic-pingpong and
#                  mnic-traffic (bin), the man pages mnicctl(8) and mnic(4)
#                  (docs/man/)
# Plain C11 for a Linux host, whatever BOARD is.

# Include folders per module (INC_libmnic, INC_tools, ...: the Makefile's
# "layers"): libmnic sees the ABI and lib/, the tools also the image codec.
HOSTDRV_CFLAGS := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -O2 -g -pthread
HOSTDRV_SAN := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
HOSTDRV_LIB_SRCS := $(wildcard hostdrv/lib/*.c)
HOSTDRV_HDRS := $(wildcard hostdrv/include/mnic/*.h hostdrv/lib/*.h abi/include/mnic/*.h)
HOSTDRV_TOOLS := mnicctl mnic-pingpong mnic-traffic
# Firmware images (issue #8): mnicctl links the portable image/boot-record
# library and libsodium (Ed25519 signing).
HOSTDRV_BOOT_SRCS := lib/sha256.c lib/sha512.c lib/ed25519.c boot/fwimage.c boot/fwsig.c boot/bootrec.c
HOSTDRV_LIBS := -lsodium
HOSTDRV_OUT := build/host/hostdrv
HOSTDRV_ASAN := build/host-asan/hostdrv

.PHONY: hostdrv
hostdrv: $(addprefix $(HOSTDRV_OUT)/,libmnic.a $(HOSTDRV_TOOLS) mnicctl-static) \
	$(addprefix $(HOSTDRV_ASAN)/,libmnic.a $(HOSTDRV_TOOLS) mnic-tenant) \
	$(addprefix $(HOSTDRV_OUT)/,mnic-mr-bench mnic-db-bench) \
	$(addprefix $(HOSTDRV_ASAN)/,mnic-mr-bench mnic-db-bench)

$(HOSTDRV_OUT)/obj/%.o: hostdrv/%.c $(HOSTDRV_HDRS)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC  host $<")
	$(Q)gcc $(HOSTDRV_CFLAGS) $(INC_$(call layer_of,$<)) -c $< -o $@

$(HOSTDRV_ASAN)/obj/%.o: hostdrv/%.c $(HOSTDRV_HDRS)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC  host-asan $<")
	$(Q)gcc $(HOSTDRV_CFLAGS) $(INC_$(call layer_of,$<)) $(HOSTDRV_SAN) -c $< -o $@

define hostdrv_variant
$(1)/libmnic.a: $$(patsubst hostdrv/%.c,$(1)/obj/%.o,$$(HOSTDRV_LIB_SRCS)) \
	$(1)/obj/abi/cmd_names.o $(1)/obj/lib/crc32.o $(1)/obj/lib/mac.o
	$$(Q)rm -f $$@ && ar rcs $$@ $$^
$(1)/%: $(1)/obj/tools/%.o $(1)/libmnic.a
	$$(if $$(Q),@echo "  LD  $$@")
	$$(Q)gcc $$(HOSTDRV_CFLAGS) $(2) $$(filter %.o,$$^) $(1)/libmnic.a -pthread $$(HOSTDRV_LIBS) -o $$@
# a test tool of the tenancy tests (tests/integration/tenancy_posix.sh)
$(1)/mnic-tenant: tests/tools/mnic-tenant.c $(1)/libmnic.a
	$$(Q)gcc $$(HOSTDRV_CFLAGS) $$(INC_tools) $(2) $$< $(1)/libmnic.a -pthread -o $$@
# make bench's MR registration figures (bench/mr_reg.sh), the plain build
# timed, the ASan+UBSan one checked (tests/integration/mr_reg_bench_posix.sh)
$(1)/mnic-mr-bench: bench/mr_reg_bench.c $(1)/libmnic.a
	$$(Q)gcc $$(HOSTDRV_CFLAGS) $$(INC_libmnic-api) $(2) $$< $(1)/libmnic.a -pthread -o $$@
# make bench's doorbell figures (bench/doorbell.sh), the plain build timed,
# the ASan+UBSan one checked (tests/integration/doorbell_irq_posix.sh)
$(1)/mnic-db-bench: bench/doorbell_bench.c $(1)/libmnic.a
	$$(Q)gcc $$(HOSTDRV_CFLAGS) $$(INC_libmnic-api) $(2) $$< $(1)/libmnic.a -pthread -o $$@
$(1)/mnicctl: $(1)/obj/tools/mnicctl_args.o $(1)/obj/tools/mnicctl_fw.o \
	$$(patsubst %.c,$(1)/obj/%.o,$$(HOSTDRV_BOOT_SRCS))
$(1)/obj/abi/cmd_names.o: abi/cmd_names.c abi/include/mnic/cmd_names.h abi/include/mnic/cmd.h
	@mkdir -p $$(dir $$@)
	$$(Q)gcc $$(HOSTDRV_CFLAGS) $$(INC_abi) $(2) -c $$< -o $$@
$(1)/obj/lib/%.o: lib/%.c $$(wildcard lib/include/lib/*.h)
	@mkdir -p $$(dir $$@)
	$$(Q)gcc $$(HOSTDRV_CFLAGS) $$(INC_lib) $(2) -c $$< -o $$@
$(1)/obj/boot/%.o: boot/%.c $$(wildcard boot/include/boot/*.h) abi/include/mnic/fwimage.h
	@mkdir -p $$(dir $$@)
	$$(Q)gcc $$(HOSTDRV_CFLAGS) $$(INC_boot) $(2) -c $$< -o $$@
endef
$(eval $(call hostdrv_variant,$(HOSTDRV_OUT),))
$(eval $(call hostdrv_variant,$(HOSTDRV_ASAN),$(HOSTDRV_SAN)))

# For a VM without a matching libc: one static binary.
$(HOSTDRV_OUT)/mnicctl-static: $(HOSTDRV_OUT)/obj/tools/mnicctl.o \
		$(HOSTDRV_OUT)/obj/tools/mnicctl_args.o $(HOSTDRV_OUT)/obj/tools/mnicctl_fw.o \
		$(patsubst %.c,$(HOSTDRV_OUT)/obj/%.o,$(HOSTDRV_BOOT_SRCS)) $(HOSTDRV_OUT)/libmnic.a
	$(if $(Q),@echo "  LD  $@")
	$(Q)gcc $(HOSTDRV_CFLAGS) -static $^ -pthread $(HOSTDRV_LIBS) -o $@
.PRECIOUS: $(HOSTDRV_OUT)/obj/%.o $(HOSTDRV_ASAN)/obj/%.o

# ---- install: the tools and their man pages ------------------------------
PREFIX ?= /usr/local
MAN_PAGES := docs/man/mnicctl.8 docs/man/mnic.4
.PHONY: install
install: $(addprefix $(HOSTDRV_OUT)/,$(HOSTDRV_TOOLS)) $(MAN_PAGES)
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/bin \
		$(DESTDIR)$(PREFIX)/share/man/man8 $(DESTDIR)$(PREFIX)/share/man/man4
	install -m 755 $(HOSTDRV_OUT)/mnicctl $(DESTDIR)$(PREFIX)/sbin/mnicctl
	install -m 755 $(HOSTDRV_OUT)/mnic-pingpong $(HOSTDRV_OUT)/mnic-traffic $(DESTDIR)$(PREFIX)/bin/
	install -m 644 docs/man/mnicctl.8 $(DESTDIR)$(PREFIX)/share/man/man8/mnicctl.8
	install -m 644 docs/man/mnic.4 $(DESTDIR)$(PREFIX)/share/man/man4/mnic.4

# ---- the rdma-core provider (hostdrv/provider/, docs/kernel-driver.md
# "Provider"): libmnic-rdmav34.so for Debian 12's libibverbs 44 (private
# ABI IBVERBS_PRIVATE_34) and its libibverbs.d file.  It compiles libmnic's
# ring code (hostdrv/lib/wqe.c) into itself: one copy of the ring format.
PROVIDER_OUT := build/host/provider
PROVIDER_SRCS := hostdrv/provider/mnic_provider.c hostdrv/lib/wqe.c
.PHONY: provider
provider: $(PROVIDER_OUT)/libmnic-rdmav34.so $(PROVIDER_OUT)/mnic.driver
$(PROVIDER_OUT)/libmnic-rdmav34.so: $(PROVIDER_SRCS) $(wildcard hostdrv/provider/*.h) $(HOSTDRV_HDRS)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD  $@")
	$(Q)gcc $(HOSTDRV_CFLAGS) -fPIC -shared -fvisibility=hidden $(INC_provider) \
		-Wl,-z,defs -Wl,-soname,libmnic-rdmav34.so $(PROVIDER_SRCS) -libverbs -pthread -o $@
# ---- the CRIU plugin (hostdrv/criu/, docs/migration-howto.md "CRIU"):
# mnic_criu_plugin.so for Debian 12's criu 3.17 (its criu-plugin.h; the
# plugin's criu_get_image_dir comes from the criu binary that dlopens it).
CRIU_OUT := build/host/criu
.PHONY: criu-plugin
criu-plugin: $(CRIU_OUT)/mnic_criu_plugin.so $(CRIU_OUT)/mnic-criu
$(CRIU_OUT)/mnic-criu: hostdrv/criu/mnic-criu.c $(wildcard hostdrv/criu/*.h) $(HOSTDRV_HDRS)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD  $@")
	$(Q)gcc $(HOSTDRV_CFLAGS) $(INC_criu) $< -o $@
$(CRIU_OUT)/mnic_criu_plugin.so: hostdrv/criu/mnic_criu_plugin.c $(wildcard hostdrv/criu/*.h) $(HOSTDRV_HDRS)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD  $@")
	$(Q)gcc $(HOSTDRV_CFLAGS) -fPIC -shared $(INC_criu) \
		-Wl,-soname,mnic_criu_plugin.so $< -o $@
	$(Q)nm -D --defined-only $@ | grep -q ' CR_PLUGIN_DESC$$' || \
		{ echo "criu-plugin: CR_PLUGIN_DESC not exported" >&2; rm -f $@; exit 1; }
$(PROVIDER_OUT)/mnic.driver:
	@mkdir -p $(dir $@)
	$(Q)echo "driver mnic" > $@
