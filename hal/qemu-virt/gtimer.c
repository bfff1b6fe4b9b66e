#include "gtimer.h"

#define CNTV_CTL_ENABLE  (1u << 0)
#define CNTV_CTL_IMASK   (1u << 1)
#define CNTV_CTL_ISTATUS (1u << 2)
#define NS_PER_S 1000000000ull

static uint64_t freq_hz;

/* Register access (ARM ARM B4.1.21 for A32 CP15 encodings, D13.8 for A64). */
#if defined(__aarch64__)
static uint64_t read_cntfrq(void) { uint64_t v; __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(v)); return v; }
/* The ISB keeps the counter read from being hoisted above earlier code
 * (the counter is not ordered by data barriers, ARM ARM D11.2.2). */
uint64_t gtimer_count(void) { uint64_t v; __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) :: "memory"); return v; }
static void write_cval(uint64_t v) { __asm__ volatile("msr cntv_cval_el0, %0" :: "r"(v)); }
static void write_ctl(uint32_t v) { __asm__ volatile("msr cntv_ctl_el0, %0; isb" :: "r"((uint64_t)v) : "memory"); }
static uint32_t read_ctl(void) { uint64_t v; __asm__ volatile("mrs %0, cntv_ctl_el0" : "=r"(v)); return (uint32_t)v; }
#elif defined(__arm__)
static uint64_t read_cntfrq(void) { uint32_t v; __asm__ volatile("mrc p15, 0, %0, c14, c0, 0" : "=r"(v)); return v; }
uint64_t gtimer_count(void)
{
	uint32_t lo, hi;
	__asm__ volatile("isb; mrrc p15, 1, %0, %1, c14" : "=r"(lo), "=r"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}
static void write_cval(uint64_t v)
{
	__asm__ volatile("mcrr p15, 3, %0, %1, c14" :: "r"((uint32_t)v), "r"((uint32_t)(v >> 32)));
}
static void write_ctl(uint32_t v) { __asm__ volatile("mcr p15, 0, %0, c14, c3, 1; isb" :: "r"(v) : "memory"); }
static uint32_t read_ctl(void) { uint32_t v; __asm__ volatile("mrc p15, 0, %0, c14, c3, 1" : "=r"(v)); return v; }
#else
#error "generic timer needs an Arm target"
#endif

uint64_t gtimer_ticks_to_ns(uint64_t ticks, uint64_t freq)
{
	/* Split to avoid overflowing 64 bits: (t % f) * 1e9 < f * 1e9 < 2^63. */
	return (ticks / freq) * NS_PER_S + ((ticks % freq) * NS_PER_S) / freq;
}

uint64_t gtimer_ns_to_ticks(uint64_t ns, uint64_t freq)
{
	return (ns / NS_PER_S) * freq + ((ns % NS_PER_S) * freq + NS_PER_S - 1) / NS_PER_S;
}

void gtimer_init(void)
{
	freq_hz = read_cntfrq();
	if (freq_hz == 0)
		freq_hz = 62500000u;  /* QEMU virt's documented rate, if firmware left it 0 */
	write_ctl(0);
}

static uint64_t gtimer_now_ns(void)
{
	return gtimer_ticks_to_ns(gtimer_count(), freq_hz);
}

static void gtimer_set_deadline(uint64_t deadline_ns)
{
	if (deadline_ns == HAL_TIMER_NEVER) {
		write_ctl(0);
		return;
	}
	/* The output is a level while CVAL <= count and the timer is enabled:
	 * a deadline already in the past fires at once, and moving CVAL forward
	 * drops the level (ARM ARM D11.2.4). */
	write_cval(gtimer_ns_to_ticks(deadline_ns, freq_hz));
	write_ctl(CNTV_CTL_ENABLE);
}

static int gtimer_expired(void)
{
	uint32_t ctl = read_ctl();

	return (ctl & CNTV_CTL_ENABLE) && (ctl & CNTV_CTL_ISTATUS);
}

const struct hal_timer_ops gtimer_ops = {
	.now_ns = gtimer_now_ns,
	.set_deadline = gtimer_set_deadline,
	.expired = gtimer_expired,
};
