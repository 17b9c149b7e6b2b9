/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * ipi-halt: multiboot entry of CPU 0, CPU 1's start (FLAT32_AP_START)
 * and the interrupt handlers, which count and EOI through the APIC's
 * mode (x2APIC MSR 0x80b or the APIC page's 0xb0).  The checks are in
 * ipi-halt.c.
 */

#include "../flat32.inc"

#define APIC 0xfee00000

    FLAT32_MULTIBOOT_START bsp_stack_top, bsp_main

    FLAT32_AP_START

/* EOI in the APIC's mode; keeps every register */
eoi:
    cmpl $0, x2apic_mode
    je 4f
    push %eax
    push %ecx
    push %edx
    mov $0x80b, %ecx
    xor %eax, %eax
    xor %edx, %edx
    wrmsr
    pop %edx
    pop %ecx
    pop %eax
    ret
4:  movl $0, APIC + 0xb0
    ret

/* CPU 1: the IPI CPU 0 waits for */
    .globl call_handler
call_handler:
    lock incl calls_taken
    call eoi
    iret

/* CPU 1: its periodic LAPIC timer */
    .globl timer_handler
timer_handler:
    lock incl timer_ticks
    call eoi
    iret

/* CPU 0: the IPIs CPU 1 sends it meanwhile */
    .globl noise_handler
noise_handler:
    lock incl noise_taken
    call eoi
    iret


    .data
    FLAT32_GDT

    .bss
    .align 16
    .space 8192
bsp_stack_top:
    .space 8192
ap_stack_top:

    .section .note.GNU-stack, "", @progbits
