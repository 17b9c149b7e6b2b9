/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * gif-race: multiboot entry of the bootstrap CPU, the real-mode
 * trampoline that brings CPU 1 into flat 32-bit protected mode (copied
 * to 0x8000, SIPI vector 0x08), and the self-IPI handler.  The checks
 * are in gif-race.c.
 */

#include "../flat32.inc"

#define APIC 0xfee00000

    FLAT32_MULTIBOOT_START bsp_stack_top, bsp_main

    FLAT32_AP_START

/* vector 0x40: count it, EOI, return */
    .globl ipi_handler
ipi_handler:
    lock incl ipi_count
    movl $0, APIC + 0xb0
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
