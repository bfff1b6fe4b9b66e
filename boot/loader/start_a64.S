/* Loader entry, AArch64: QEMU virt starts the CPU at EL1 at flash0 address
 * 0, MMU and caches off, when no -kernel is given.  Vectors report faults
 * through loader_fault(). */
	.section .text.boot, "ax"
	.global _start
_start:
	msr	daifset, #0xf
	ldr	x0, =__stack_top
	mov	sp, x0
	adr	x0, vectors
	msr	vbar_el1, x0
	isb
	ldr	x0, =__bss_start
	ldr	x1, =__bss_end
1:	cmp	x0, x1
	b.hs	2f
	str	xzr, [x0], #8
	b	1b
2:	bl	loader_main
3:	wfi
	b	3b

	.macro	vent idx
	.balign	0x80
	ldr	x4, =__stack_top
	mov	sp, x4
	mov	x0, #\idx
	mrs	x1, elr_el1
	b	loader_fault
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
