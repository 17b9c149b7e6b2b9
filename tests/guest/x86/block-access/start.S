/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * block-access: multiboot entry, GDT and stack; the checks are in
 * block-access.c.
 */

#include "../flat32.inc"

    FLAT32_MULTIBOOT_START stack_top, main

    .data
    FLAT32_GDT

    .bss
    .align 16
    .space 8192
stack_top:

    .section .note.GNU-stack, "", @progbits
