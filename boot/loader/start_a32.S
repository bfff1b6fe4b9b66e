/* Loader entry, ARMv7-A: QEMU virt starts the CPU here (flash0 address 0)
 * in SVC mode, MMU and caches off, when no -kernel is given.  The vector
 * table is at 0 too (SCTLR.V = 0, VBAR = 0 at reset), so a fault lands in
 * the branches below rather than re-running the loader. */
	.syntax unified
	.arm
	.section .text.boot, "ax"
	.global _start
_start:
	b	reset
	b	und
	b	svc
	b	pabt
	b	dabt
	b	unused
	b	irq
	b	fiq
reset:
	cpsid	if
	ldr	sp, =__stack_top
	ldr	r0, =__bss_start
	ldr	r1, =__bss_end
	mov	r2, #0
1:	cmp	r0, r1
	strlo	r2, [r0], #4
	blo	1b
	bl	loader_main
2:	wfi
	b	2b

und:	mov r0, #1; b fault
svc:	mov r0, #2; b fault
pabt:	mov r0, #3; b fault
dabt:	mov r0, #4; b fault
unused:	mov r0, #5; b fault
irq:	mov r0, #6; b fault
fiq:	mov r0, #7; b fault
fault:
	mov	r1, lr
	cps	#0x13
	ldr	sp, =__stack_top
	b	loader_fault
	.ltorg
