/* AArch64 (cortex-a72) entry.  QEMU enters at EL1 with the MMU and caches off
 * and DAIF masked.  As on A32, interrupts stay masked: WFI still wakes on a
 * pending GIC interrupt and the event loop acknowledges it, so the vectors
 * only catch faults. */
	.section .text.boot, "ax"
	.global _start
_start:
	msr	daifset, #0xf
	ldr	x0, =__stack_top
	mov	sp, x0
	ldr	x0, =vectors
	msr	vbar_el1, x0
	/* CPACR_EL1.FPEN = 0b11: GCC uses SIMD registers for copies; the ISB
	 * makes the enable take effect before any of them (ARM ARM D13.2.30). */
	mov	x0, #(3 << 20)
	msr	cpacr_el1, x0
	isb

	ldr	x0, =__bss_start
	ldr	x1, =__bss_end
1:	cmp	x0, x1
	b.hs	2f
	str	xzr, [x0], #8
	b	1b
2:	bl	board_start
3:	wfi
	b	3b

/* 16 entries of 0x80 bytes, table aligned to 2 KiB (VBAR_EL1 low bits RES0).
 * Each passes (entry index, ELR, ESR, FAR) to board_fault64(). */
	.macro	vent idx
	.balign	0x80
	ldr	x4, =__exc_stack_top
	mov	sp, x4
	mov	x0, #\idx
	mrs	x1, elr_el1
	mrs	x2, esr_el1
	mrs	x3, far_el1
	b	board_fault64
	.endm

	.balign	2048
vectors:
	vent 0
	vent 1
	vent 2
	vent 3
	vent 4
	vent 5
	vent 6
	vent 7
	vent 8
	vent 9
	vent 10
	vent 11
	vent 12
	vent 13
	vent 14
	vent 15
	.ltorg
