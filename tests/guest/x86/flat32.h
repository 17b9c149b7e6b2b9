/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * flat32.h: what the C side of our freestanding 32-bit x86 guests
 * (avic-l1, avic-smp, gif-race, inject-race, ipi-halt) shares: port and
 * MSR access, the debug console (port 0xe9), isa-debug-exit (port
 * 0xf4), IDT gates and LIDT, and the VMCB offsets their L1 hypervisors
 * use.
 */
#ifndef FLAT32_H
#define FLAT32_H

#include <stdint.h>

/* VMCB offsets (control area, then the save area at 0x400) */
#define VMCB_INTERCEPT  0x00c
#define VMCB_ASID       0x058
#define VMCB_INT_CTL    0x060
#define VMCB_EXIT_CODE  0x070
#define VMCB_EXIT_INFO1 0x078
#define VMCB_EXIT_INFO2 0x080
#define VMCB_NESTED_CTL 0x090
#define VMCB_AVIC_BAR   0x098
#define VMCB_EVENT_INJ  0x0a8
#define VMCB_AVIC_BACKING 0x0e0
#define VMCB_AVIC_LOGICAL 0x0f0
#define VMCB_AVIC_PHYSICAL 0x0f8
#define VMCB_ES         0x400
#define VMCB_CS         0x410
#define VMCB_SS         0x420
#define VMCB_DS         0x430
#define VMCB_GDTR       0x460
#define VMCB_IDTR       0x480
#define VMCB_EFER       0x4d0
#define VMCB_CR0        0x558
#define VMCB_DR7        0x560
#define VMCB_DR6        0x568
#define VMCB_RFLAGS     0x570
#define VMCB_RIP        0x578
#define VMCB_RSP        0x5d8
#define VMCB_RAX        0x5f8

static inline void outb(uint16_t port, uint8_t v)
{
    __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

/* @s to the byte port @port (0xe9: the debug console; 0x3f8: COM1) */
static inline void puts_port(uint16_t port, const char *s)
{
    while (*s) {
        outb(port, *s++);
    }
}

static inline void put_dec_port(uint16_t port, uint32_t v)
{
    char buf[11];
    int i = 10;

    buf[i] = 0;
    do {
        buf[--i] = '0' + v % 10;
        v /= 10;
    } while (v);
    puts_port(port, buf + i);
}

static inline void puts_dbg(const char *s)
{
    puts_port(0xe9, s);
}

static inline void put_dec(uint32_t v)
{
    put_dec_port(0xe9, v);
}

static inline void put_hex(uint64_t v)
{
    char buf[19] = "0x";

    for (int i = 0; i < 16; i++) {
        buf[2 + i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 0xf];
    }
    buf[18] = 0;
    puts_dbg(buf);
}

/* isa-debug-exit: QEMU exits with 2 * code + 1 */
static inline void __attribute__((noreturn)) finish(uint8_t code)
{
    outb(0xf4, code);
    for (;;) {
        __asm__ volatile("cli; hlt");
    }
}

static inline uint64_t rdmsr(uint32_t msr)
{
    uint32_t lo, hi;

    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return lo | ((uint64_t)hi << 32);
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
    __asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v),
                     "d"((uint32_t)(v >> 32)) : "memory");
}

/* A 32-bit interrupt gate (present, DPL 0) to @handler in FLAT32_CODE */
static inline uint64_t flat32_interrupt_gate(const void *handler)
{
    uint32_t a = (uint32_t)handler;

    return (a & 0xffff) | (0x08u << 16) |
           ((uint64_t)(0x8e00 | (a & 0xffff0000u)) << 32);
}

/* GDT descriptors: flat 4 GiB 32-bit code and data (flat32.inc's) */
#define FLAT32_CODE_DESC 0x00cf9b000000ffffull
#define FLAT32_DATA_DESC 0x00cf93000000ffffull

/*
 * A system descriptor (present, DPL 0, byte granularity): @type 0x9 an
 * available 32-bit TSS (@limit at least 0x67), 0x1 a 16-bit one (0x2b)
 */
static inline uint64_t flat32_system_desc(uint32_t base, uint32_t limit,
                                          uint32_t type)
{
    return (limit & 0xffff) | (uint64_t)(base & 0xffffff) << 16 |
           (uint64_t)(0x80 | type) << 40 | (uint64_t)(base >> 24) << 56;
}

/* This CPU's IDT := @idt, @entries gates */
static inline void flat32_lidt(const uint64_t *idt, unsigned entries)
{
    struct {
        uint16_t limit;
        uint32_t base;
    } __attribute__((packed)) desc = { entries * 8 - 1, (uint32_t)idt };

    __asm__ volatile("lidt %0" : : "m"(desc));
}

#endif
