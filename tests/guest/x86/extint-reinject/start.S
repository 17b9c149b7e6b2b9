/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * extint-reinject: multiboot entry, the 8259 interrupt handlers, and
 * take_one_on(), which waits for one interrupt on a stack page the
 * guest has never touched.  The rest is in extint-reinject.c.
 */

#include "../flat32.inc"

    FLAT32_MULTIBOOT_START bsp_stack_top, bsp_main

/* IRQ0, the PIT: count, EOI the master */
    .globl irq0_handler
irq0_handler:
    push %eax
    lock incl irq0_taken
    lock incl irqs_taken
    mov $0x20, %al
    outb %al, $0x20
    pop %eax
    iret

/* IRQ8, the RTC's periodic interrupt: count, read register C, EOI both */
    .globl irq8_handler
irq8_handler:
    push %eax
    lock incl irq8_taken
    lock incl irqs_taken
    mov $0x0c, %al
    outb %al, $0x70
    inb $0x71, %al
    mov $0x20, %al
    outb %al, $0xa0
    outb %al, $0x20
    pop %eax
    iret

/* IRQ7 and IRQ15 when spurious: no EOI (the slave's: the master's) */
    .globl spurious_master
spurious_master:
    iret
    .globl spurious_slave
spurious_slave:
    push %eax
    mov $0x20, %al
    outb %al, $0x20
    pop %eax
    iret

/*
 * void take_one_on(uint32_t esp): switch to the stack at @esp, whose
 * page nothing has written yet, set IF and spin until a handler has
 * counted an interrupt, then clear IF and switch back.  The first
 * write to that page is the interrupt's own delivery (EFLAGS, CS, EIP),
 * so under a hypervisor that maps guest memory on first touch the
 * delivery itself exits (a nested page fault) and is re-injected.
 * Nothing is pushed on the new stack before STI.
 */
    .globl take_one_on
take_one_on:
    mov 4(%esp), %eax
    mov %esp, saved_esp
    mov irqs_taken, %ecx
    mov %eax, %esp
    sti
1:  cmp irqs_taken, %ecx
    je 1b
    cli
    mov saved_esp, %esp
    ret

    .data
    FLAT32_GDT
saved_esp:
    .long 0

    .bss
    .align 16
    .space 8192
bsp_stack_top:

    .section .note.GNU-stack, "", @progbits
