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

    .section .multiboot, "a"
    .align 4
    .long 0x1badb002, 0, -0x1badb002

    .text
    .code32
    .globl _start
_start:
    lgdt gdt_desc
    ljmp $FLAT32_CODE, $1f
1:  LOAD_FLAT32_DATA_SEGMENTS
    mov $bsp_stack_top, %esp
    call bsp_main
2:  cli
    hlt
    jmp 2b

    .globl ap_entry32
ap_entry32:
    LOAD_FLAT32_DATA_SEGMENTS
    mov $ap_stack_top, %esp
    call ap_main
3:  cli
    hlt
    jmp 3b

/* vector 0x40: count it, EOI, return */
    .globl ipi_handler
ipi_handler:
    lock incl ipi_count
    movl $0, APIC + 0xb0
    iret

/* CPU 1 starts here in real mode at 0x8000 */
    .globl tramp_start, tramp_end
    .code16
tramp_start:
    cli
    xor %ax, %ax
    mov %ax, %ds
    lgdtl 0x8000 + (tramp_gdt_desc - tramp_start)
    mov %cr0, %eax
    or $1, %eax
    mov %eax, %cr0
    ljmpl $FLAT32_CODE, $ap_entry32
tramp_gdt_desc:
    .word gdt_end - gdt - 1
    .long gdt
tramp_end:
    .code32

    .data
    FLAT32_GDT

    .bss
    .align 16
    .space 8192
bsp_stack_top:
    .space 8192
ap_stack_top:

    .section .note.GNU-stack, "", @progbits
