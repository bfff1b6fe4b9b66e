# The test fabric's switch (fabric/, docs/ARCHITECTURE.md "Test fabric";
# included by the Makefile).  A host tool whatever BOARD is:
#   make mnic-switch   build/host/fabric/mnic-switch and its ASan+UBSan build
#                      build/host-asan/fabric/mnic-switch
# It links the POSIX NIC's seeded impairment (hal/posix/impair.c), so both
# impairment points read the same spec and draw the same decisions.
FABRIC_SRCS := fabric/mnic_switch.c fabric/switch_core.c hal/posix/impair.c lib/mac.c
FABRIC_HDRS := fabric/switch_core.h hal/posix/impair.h $(wildcard hal/include/hal/*.h) lib/include/lib/mac.h
FABRIC_CFLAGS := $(WARN) -O2 -g

.PHONY: mnic-switch
mnic-switch: build/host/fabric/mnic-switch build/host-asan/fabric/mnic-switch

build/host/fabric/mnic-switch: $(FABRIC_SRCS) $(FABRIC_HDRS)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC  host $@")
	$(Q)gcc $(FABRIC_CFLAGS) $(INC_fabric) $(FABRIC_SRCS) -o $@
build/host-asan/fabric/mnic-switch: $(FABRIC_SRCS) $(FABRIC_HDRS)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC  host-asan $@")
	$(Q)gcc $(FABRIC_CFLAGS) $(SAN_FLAGS) $(INC_fabric) $(FABRIC_SRCS) -o $@
