/* ARMv7-A (cortex-a15) entry.  QEMU enters here in SVC mode with the MMU and
 * caches off and IRQ/FIQ masked (see qemu-virt-notes.md).
 *
 * We stay in SVC mode with IRQs masked for the whole run: devices still wake
 * WFI through the GIC, and the event loop acknowledges interrupts itself
 * (hal/qemu-virt/board.c), so no protocol code ever runs in interrupt
 * context.  The vectors below therefore only catch faults. */
	.syntax unified
	.arm
	.section .text.boot, "ax"
	.global _start
_start:
	cpsid	if
	/* Exception stacks for the modes a fault can enter. */
	cps	#0x17			/* ABT */
	ldr	sp, =__exc_stack_top
	cps	#0x1b			/* UND */
	ldr	sp, =__exc_stack_top
	cps	#0x12			/* IRQ */
	ldr	sp, =__exc_stack_top
	cps	#0x13			/* SVC: where we run */
	ldr	sp, =__stack_top

	/* Vectors at VBAR: SCTLR.V (bit 13) must be 0 for VBAR to apply. */
	ldr	r0, =vectors
	mcr	p15, 0, r0, c12, c0, 0
	mrc	p15, 0, r0, c1, c0, 0
	bic	r0, r0, #(1 << 13)
	mcr	p15, 0, r0, c1, c0, 0

	/* VFP/NEON: CPACR cp10+cp11 full access, then FPEXC.EN.  The ISB makes
	 * the CPACR write visible before the first VFP instruction (ARM ARM
	 * B4.1.40). */
	mrc	p15, 0, r0, c1, c0, 2
	orr	r0, r0, #(0xf << 20)
	mcr	p15, 0, r0, c1, c0, 2
	isb
	mov	r0, #0x40000000
	vmsr	fpexc, r0

	/* Zero .bss. */
	ldr	r0, =__bss_start
	ldr	r1, =__bss_end
	mov	r2, #0
1:	cmp	r0, r1
	strlo	r2, [r0], #4
	blo	1b

	bl	board_start
2:	wfi
	b	2b

	.balign	32
vectors:
	b	_start			/* reset */
	b	vec_und
	b	vec_svc
	b	vec_pabt
	b	vec_dabt
	b	vec_unused
	b	vec_irq
	b	vec_fiq

/* Each fault hands (kind, faulting pc) to board_fault(), which reports it
 * and exits through semihosting with a distinct code. */
vec_und:	mov r0, #1; sub r1, lr, #4; b board_fault
vec_svc:	mov r0, #2; sub r1, lr, #4; b board_fault
vec_pabt:	mov r0, #3; sub r1, lr, #4; b board_fault
vec_dabt:	mov r0, #4; sub r1, lr, #8; b board_fault
vec_unused:	mov r0, #5; mov r1, lr; b board_fault
vec_irq:	mov r0, #6; sub r1, lr, #4; b board_fault
vec_fiq:	mov r0, #7; sub r1, lr, #4; b board_fault
