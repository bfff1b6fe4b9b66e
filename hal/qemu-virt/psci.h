/* PSCI (Arm DEN0022) calls the firmware needs.  QEMU virt implements PSCI
 * itself with the HVC conduit when neither EL3 nor EL2 is emulated (our
 * case: -M virt without secure=on/virtualization=on), also when booting
 * from flash. */
#ifndef HAL_QEMU_PSCI_H
#define HAL_QEMU_PSCI_H

/* SYSTEM_RESET (DEN0022 5.1.10): does not return on success. */
void psci_system_reset(void);

#endif
