/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * block-access: multiboot entry, GDT and stack; the checks are in
 * block-access.c.
 */

#include "../flat32.inc"

    FLAT32_MULTIBOOT_START stack_top, main

/*
 * The 16-bit task's code (its CS, selector 0x28, is based at this
 * code's 64 KiB block): count the run, IRET back through the link
 */
    .globl task16_code, task16_iret
task16_code:
    lock incl task16_ran
task16_iret:
    iret

    .data
    FLAT32_GDT

    .bss
    .align 16
    .space 8192
stack_top:

    .section .note.GNU-stack, "", @progbits
