/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * inject-race: multiboot entry (the L1 hypervisor), VMRUN, and L2:
 * its code and its two interrupt handlers.  The checks are in
 * inject-race.c.
 */

#include "../flat32.inc"

/* the injected handler's time with IF clear, in loop iterations */
#define HANDLER_SPIN 20000

    FLAT32_MULTIBOOT_START bsp_stack_top, bsp_main

/* void svm_run(uint32_t vmcb): host GPRs are not kept by VMRUN */
    .globl svm_run
svm_run:
    push %ebp
    push %ebx
    push %esi
    push %edi
    mov 20(%esp), %eax
    vmrun
    pop %edi
    pop %esi
    pop %ebx
    pop %ebp
    ret

/* L2: interrupts (IF set) are taken here, then back to L1 */
    .globl l2_entry
l2_entry:
    nop
    vmmcall
4:  jmp 4b

/*
 * L2's handler of the vector VMRUN injects: an interrupt gate, so IF is
 * clear until its IRET.  Entered again before that IRET: the
 * injection was delivered twice (counted, then the outer one goes on).
 * The spin is plain arithmetic: an instruction that ends the
 * translation block through the CPU loop (PAUSE) would hide the race.
 */
    .globl l2_injected
l2_injected:
    cmpl $0, in_injected
    jne 6f
    movl $1, in_injected
    lock incl injected_count
    push %eax
    push %ecx
    call pic_irr0
    mov %eax, %ecx
    push %ecx
    mov $HANDLER_SPIN, %ecx
5:  dec %ecx
    jnz 5b
    pop %ecx
    call pic_irr0
    /* a tick raised while IF was clear: the kick the race needs */
    cmp %eax, %ecx
    jae 7f
    lock incl window_ticks
7:  pop %ecx
    pop %eax
    movl $0, in_injected
    iret
6:  lock incl injected_nested
    iret

/* %eax := the 8259's IRR bit of IRQ 0 (OCW3: read IRR) */
pic_irr0:
    mov $0x0a, %al
    outb %al, $0x20
    inb $0x20, %al
    and $1, %eax
    ret

/* L2's handler of the PIT's ticks: count, EOI to the 8259 */
    .globl l2_tick
l2_tick:
    lock incl tick_count
    push %eax
    mov $0x20, %al
    outb %al, $0x20
    pop %eax
    iret

    .data
    FLAT32_GDT
    .align 4
    .globl injected_count, injected_nested, tick_count, window_ticks
injected_count:  .long 0
injected_nested: .long 0
tick_count:      .long 0
window_ticks:    .long 0
in_injected:     .long 0

    .bss
    .align 16
    .space 8192
bsp_stack_top:
    .space 8192
    .globl l2_stack_top
l2_stack_top:

    .section .note.GNU-stack, "", @progbits
