/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * extint-reinject: 8259 interrupts (ExtINT) whose delivery exits and is
 * re-injected, while the 8259 has another one to give.  Booted as L2
 * by the nested test bed (tests/guest/kvm-nested/kvm-nested-extint.py)
 * under KVM with a split irqchip, so the 8259 is QEMU's, in L1's
 * userspace.
 *
 * The PIT (IRQ0, about 2 kHz) and the RTC's periodic interrupt (IRQ8
 * through the slave, 2 kHz) run at once.  ROUNDS times, the guest
 * waits for one interrupt with IF set on a stack page it has never
 * written (take_one_on()): the interrupt's delivery is the first write
 * to that page, so L1's KVM takes a nested page fault during the
 * delivery and re-injects the interrupt.  When IRQ8 is in flight and
 * IRQ0 comes meanwhile, the 8259 raises its output again, QEMU kicks
 * the vCPU out of KVM_RUN and asks for an interrupt window on the way
 * back in, while KVM still has IRQ8 to re-inject.  Linux 7.3's KVM with
 * AVIC then toggles its IRQ-window inhibit on every pass and never
 * enters the guest (docs/testing.md): the guest stops and the run
 * times out.
 *
 * The stack pages start at 16 MiB, one per round, in guest memory that
 * the test backs with 4 KiB pages (no transparent huge pages, so every
 * page faults on its own).  Results on the serial port: the test bed's
 * marker, "ROUND <n>" every PROGRESS rounds (a hang shows where it
 * stopped), then "EXTINT-REINJECT ROUNDS <n> IRQ0 <a> IRQ8 <b>"; exit
 * through isa-debug-exit (port 0xf4): QEMU exits with 1.
 */

#include "extint-reinject.h"
#include "../flat32.h"

#define ROUNDS          600
#define PROGRESS        100             /* a line every so many rounds */
#define STACKS          0x01000000u     /* 16 MiB: ROUNDS pages from here */
#define PAGE            4096u
#define APIC_BASE       0xfee00000u
#define APIC_SVR        0xf0
#define APIC_LVT0       0x350
#define APIC_LVT1       0x360
#define PIT_HZ          1193182u
#define PIT_RATE        2000u
#define RTC_RATE_2KHZ   5               /* 32768 >> (5 - 1) */

volatile uint32_t irq0_taken, irq8_taken, irqs_taken;
static uint64_t idt[256];

static inline uint8_t inb(uint16_t port)
{
    uint8_t v;

    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

/* The serial port: the test bed reads L2's COM1 */
#define COM1            0x3f8

static void apic_write(uint32_t reg, uint32_t v)
{
    *(volatile uint32_t *)(APIC_BASE + reg) = v;
}

static uint32_t apic_read(uint32_t reg)
{
    return *(volatile uint32_t *)(APIC_BASE + reg);
}

static void rtc_write(uint8_t reg, uint8_t v)
{
    outb(0x70, 0x80 | reg);                 /* NMI stays masked */
    outb(0x71, v);
}

static uint8_t rtc_read(uint8_t reg)
{
    outb(0x70, 0x80 | reg);
    return inb(0x71);
}

void bsp_main(void)
{
    uint32_t i, divisor = PIT_HZ / PIT_RATE;

    puts_port(COM1, "KVM-NESTED-L2-UP\n");
    for (i = 0x20; i < 0x30; i++) {
        idt[i] = flat32_interrupt_gate(i < 0x28 ? spurious_master
                                                : spurious_slave);
    }
    idt[0x20] = flat32_interrupt_gate(irq0_handler);
    idt[0x28] = flat32_interrupt_gate(irq8_handler);
    flat32_lidt(idt, 256);

    /* The 8259s at vectors 0x20 and 0x28; IRQ0, IRQ2 and IRQ8 open */
    outb(0x20, 0x11);
    outb(0xa0, 0x11);
    outb(0x21, 0x20);
    outb(0xa1, 0x28);
    outb(0x21, 0x04);
    outb(0xa1, 0x02);
    outb(0x21, 0x01);
    outb(0xa1, 0x01);
    outb(0x21, 0xfa);
    outb(0xa1, 0xfe);

    /* The 8259's output reaches the CPU through LINT0 as ExtINT */
    apic_write(APIC_SVR, apic_read(APIC_SVR) | 0x1ff);
    apic_write(APIC_LVT0, 0x700);
    apic_write(APIC_LVT1, 0x400);

    /* PIT channel 0, mode 2 (rate generator) */
    outb(0x43, 0x34);
    outb(0x40, divisor & 0xff);
    outb(0x40, divisor >> 8);

    /* RTC periodic interrupt */
    rtc_write(0x0a, (rtc_read(0x0a) & 0xf0) | RTC_RATE_2KHZ);
    rtc_write(0x0b, rtc_read(0x0b) | 0x40);
    rtc_read(0x0c);

    for (i = 0; i < ROUNDS; i++) {
        take_one_on(STACKS + (i + 1) * PAGE);
        if ((i + 1) % PROGRESS == 0) {
            puts_port(COM1, "ROUND ");
            put_dec_port(COM1, i + 1);
            puts_port(COM1, "\n");
        }
    }

    rtc_write(0x0b, rtc_read(0x0b) & ~0x40);
    outb(0x21, 0xff);
    outb(0xa1, 0xff);
    puts_port(COM1, "EXTINT-REINJECT ROUNDS ");
    put_dec_port(COM1, ROUNDS);
    puts_port(COM1, " IRQ0 ");
    put_dec_port(COM1, irq0_taken);
    puts_port(COM1, " IRQ8 ");
    put_dec_port(COM1, irq8_taken);
    puts_port(COM1, "\n");
    finish(0);
}
