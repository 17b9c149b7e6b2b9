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
 * RAM (QEMU's default): RAM ends at 0x8000000.
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

    puts_dbg(failures ? "DONE failures\n" : "DONE 0\n");
    finish(failures ? 1 : 0);
}
