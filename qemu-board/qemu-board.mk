# The ivshmem-doorbell server of the QEMU NICs (qemu-board/ivshmem_server.c;
# docs/host-interface.md "Doorbells and interrupts"; included by the
# Makefile).  A host tool whatever BOARD is:
#   make ivshmem-server   build/host/qemu-board/mnic-ivshmem-server and its
#                         ASan+UBSan build under build/host-asan/
IVSH_SERVER_CFLAGS := $(WARN) -O2 -g

.PHONY: ivshmem-server
ivshmem-server: build/host/qemu-board/mnic-ivshmem-server build/host-asan/qemu-board/mnic-ivshmem-server

build/host/qemu-board/mnic-ivshmem-server: qemu-board/ivshmem_server.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC  host $@")
	$(Q)gcc $(IVSH_SERVER_CFLAGS) $(INC_qemu-board) $< -o $@
build/host-asan/qemu-board/mnic-ivshmem-server: qemu-board/ivshmem_server.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC  host-asan $@")
	$(Q)gcc $(IVSH_SERVER_CFLAGS) $(SAN_FLAGS) $(INC_qemu-board) $< -o $@
