/* Register access for memory-mapped devices.
 *
 * Every driver touches its registers only through these accessors, so that
 * unit tests can compile the same driver with HAL_MMIO_HOOKS and route each
 * access to a fake register file (a small behavioural model of the device).
 */
#ifndef HAL_MMIO_H
#define HAL_MMIO_H

#include <stdint.h>

#ifdef HAL_MMIO_HOOKS
uint32_t mmio_read32(uintptr_t addr);
void mmio_write32(uintptr_t addr, uint32_t val);
uint16_t mmio_read16(uintptr_t addr);
void mmio_write16(uintptr_t addr, uint16_t val);
uint8_t mmio_read8(uintptr_t addr);
void mmio_write8(uintptr_t addr, uint8_t val);
#else
static inline uint32_t mmio_read32(uintptr_t addr)
{
	return *(volatile const uint32_t *)addr;
}
static inline void mmio_write32(uintptr_t addr, uint32_t val)
{
	*(volatile uint32_t *)addr = val;
}
static inline uint16_t mmio_read16(uintptr_t addr)
{
	return *(volatile const uint16_t *)addr;
}
static inline void mmio_write16(uintptr_t addr, uint16_t val)
{
	*(volatile uint16_t *)addr = val;
}
static inline uint8_t mmio_read8(uintptr_t addr)
{
	return *(volatile const uint8_t *)addr;
}
static inline void mmio_write8(uintptr_t addr, uint8_t val)
{
	*(volatile uint8_t *)addr = val;
}
#endif

/* Memory barriers between normal-memory updates (descriptor rings) and the
 * device that reads them.  On the boards the device sees memory through the
 * same coherent interconnect, so a data memory barrier orders the CPU's own
 * accesses; on the host (tests, POSIX) a compiler+CPU fence is the same. */
#if defined(__aarch64__)
#define hal_mb()  __asm__ volatile("dmb sy" ::: "memory")
#define hal_wmb() __asm__ volatile("dmb st" ::: "memory")
#define hal_rmb() __asm__ volatile("dmb ld" ::: "memory")
#elif defined(__arm__)
#define hal_mb()  __asm__ volatile("dmb sy" ::: "memory")
#define hal_wmb() __asm__ volatile("dmb st" ::: "memory")
#define hal_rmb() __asm__ volatile("dmb sy" ::: "memory")
#else
#define hal_mb()  __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define hal_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)
#define hal_rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#endif

#endif
