/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * block-access: instructions whose operand TCG prepares as one block
 * (target/i386/tcg/access.c: FNSAVE, FRSTOR, FXSAVE, FXRSTOR) placed
 * across the end of RAM, so that the block's first page is RAM and its
 * second is not (unassigned: writes dropped, reads all ones).  The
 * part in RAM must be accessed and the rest go through the slow path;
 * QEMU 10.0 wrote the second part through a null host pointer and
 * crashed.  Flat 32-bit protected mode without paging, with 128 MiB of
 * RAM (QEMU's default): RAM ends at 0x8000000.  Then task switches,
 * whose TSSes are such blocks too: a CALL from a 32-bit task into a
 * 16-bit one and its IRET back.
 *
 * Results on the debug console (port 0xe9): "OK ..." or "FAIL ..."
 * per check, then "DONE <failures>"; isa-debug-exit (port 0xf4) ends
 * QEMU with status 1 when all passed, 3 otherwise.
 */

#include <stdint.h>
#include "block-access.h"
#include "../flat32.h"

#define RAM_END 0x8000000u

static int failures;

static void check(const char *what, uint32_t got, uint32_t want)
{
    puts_dbg(got == want ? "OK " : "FAIL ");
    puts_dbg(what);
    if (got != want) {
        puts_dbg(": got ");
        put_hex(got);
        puts_dbg(" want ");
        put_hex(want);
        failures++;
    }
    puts_dbg("\n");
}

/*
 * Task switches (patch 0075 prepares only the TSS fields each one
 * accesses): a CALL from a 32-bit TSS to a 16-bit one, whose code
 * returns by IRET (NT set: back through the link).  A 16-bit task's IP
 * is 16 bits, so its code segment's base is the code's 64 KiB block.
 */
static uint64_t gdt[6] __attribute__((aligned(8)));
static uint32_t tss32[26];
static uint16_t tss16[22];
volatile uint32_t task16_ran;   /* volatile: written by the other task */
static struct {
    uint16_t limit;
    uint32_t base;
} __attribute__((packed)) gdtr;

static void task_switches(void)
{
    uint32_t block = (uint32_t)task16_code & 0xffff0000u;

    gdt[1] = FLAT32_CODE_DESC;                                  /* 0x08 */
    gdt[2] = FLAT32_DATA_DESC;                                  /* 0x10 */
    gdt[3] = flat32_system_desc((uint32_t)tss32, 0x67, 0x9);    /* 0x18 */
    gdt[4] = flat32_system_desc((uint32_t)tss16, 0x2b, 0x1);    /* 0x20 */
    gdt[5] = FLAT32_CODE_DESC |                                 /* 0x28 */
             (uint64_t)(block & 0xffffff) << 16 | (uint64_t)(block >> 24) << 56;
    gdtr.limit = sizeof(gdt) - 1;
    gdtr.base = (uint32_t)gdt;
    tss16[0x0e / 2] = (uint32_t)task16_code - block;    /* IP */
    tss16[0x10 / 2] = 2;                                /* FLAGS */
    tss16[0x22 / 2] = 0x10;                             /* ES */
    tss16[0x24 / 2] = 0x28;                             /* CS */
    tss16[0x26 / 2] = 0x10;                             /* SS */
    tss16[0x28 / 2] = 0x10;                             /* DS */
    __asm__ volatile("lgdt %0; mov $0x18, %%ax; ltr %%ax; lcall $0x20, $0"
                     : : "m"(gdtr) : "eax", "memory");
    check("a CALL to a 16-bit task ran it", task16_ran, 1);
    check("its IRET came back: the 16-bit TSS's link", tss16[0], 0x18);
    check("the 16-bit TSS's IP saved at its IRET", tss16[0x0e / 2],
          (uint32_t)task16_iret + 1 - block);
    check("the 16-bit TSS not busy after the IRET", (gdt[4] >> 41) & 1, 0);
    check("the 32-bit TSS busy again", (gdt[3] >> 41) & 1, 1);
}

void main(void)
{
    /* FNSAVE: 108 bytes, 0x40 of them in RAM */
    volatile uint16_t *fnsave = (volatile uint16_t *)(RAM_END - 0x40);
    /* FXSAVE: 512 bytes, 16-aligned, 0x100 of them in RAM */
    volatile uint16_t *fxsave = (volatile uint16_t *)(RAM_END - 0x100);
    uint16_t cw = 0x027f, got;

    fnsave[0] = 0xdead;
    __asm__ volatile("fninit; fldcw %0; fnsave (%1)"
                     : : "m"(cw), "r"(fnsave) : "memory");
    check("FNSAVE across the end of RAM: FCW in RAM", fnsave[0], 0x027f);

    fnsave[0] = 0x037f;
    __asm__ volatile("frstor (%1); fnstcw %0"
                     : "=m"(got) : "r"(fnsave) : "memory");
    check("FRSTOR across the end of RAM: FCW from RAM", got, 0x037f);

    fxsave[0] = 0xdead;
    __asm__ volatile("fninit; fldcw %0; fxsave (%1)"
                     : : "m"(cw), "r"(fxsave) : "memory");
    check("FXSAVE across the end of RAM: FCW in RAM", fxsave[0], 0x027f);

    fxsave[0] = 0x037f;
    fxsave[12] = 0x1f80;                /* MXCSR, all but reserved bits */
    fxsave[13] = 0;
    __asm__ volatile("fxrstor (%1); fnstcw %0"
                     : "=m"(got) : "r"(fxsave) : "memory");
    check("FXRSTOR across the end of RAM: FCW from RAM", got, 0x037f);

    task_switches();

    puts_dbg(failures ? "DONE failures\n" : "DONE 0\n");
    finish(failures ? 1 : 0);
}
