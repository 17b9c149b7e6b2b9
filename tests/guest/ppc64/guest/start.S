/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xics-guest entry points and low-level glue.  VOF enters the image at
 * its first byte in big-endian mode, and RTAS start-cpu starts the
 * secondary CPUs big-endian too: both entries begin with a sequence that
 * is a no-op when the CPU already runs little-endian and otherwise sets
 * MSR[LE] with rfid.  Also here: the common exception entry that the
 * vectors (written by xics.c) branch to, and the hypercall wrapper.
 */

/* Frame of the exception entry: ABI header, GPRs, special registers. */
#define FR_GPR(n)   (32 + 8 * (n))
#define FR_LR       (32 + 8 * 32)
#define FR_CTR      (FR_LR + 8)
#define FR_XER      (FR_LR + 16)
#define FR_CR       (FR_LR + 24)
#define FR_SRR0     (FR_LR + 32)
#define FR_SRR1     (FR_LR + 40)
#define FR_SIZE     (FR_LR + 48)
#define REDZONE     288
#define SPRG2       274

/*
 * The first word reads as "b .+8" in big-endian mode and as a trap that
 * never traps in little-endian mode; the big-endian words after the
 * little-endian branch are, in order: mfmsr r11; ori r11,r11,1 (MSR_LE);
 * mtsrr1 r11; bcl 20,31,$+4; mflr r12; addi r12,r12,16; mtsrr0 r12;
 * rfid -- which resumes at label 1 in little-endian mode.
 */
.macro TO_LITTLE_ENDIAN
    .long 0x08000048
    b 1f
    .byte 0x7d, 0x60, 0x00, 0xa6
    .byte 0x61, 0x6b, 0x00, 0x01
    .byte 0x7d, 0x7b, 0x03, 0xa6
    .byte 0x42, 0x9f, 0x00, 0x05
    .byte 0x7d, 0x88, 0x02, 0xa6
    .byte 0x39, 0x8c, 0x00, 0x10
    .byte 0x7d, 0x9a, 0x03, 0xa6
    .byte 0x4c, 0x00, 0x00, 0x24
1:
    /* VOF starts us in 32-bit mode (MSR[SF] clear): switch to 64-bit. */
    mfmsr   11
    li      12, 1
    rldicr  12, 12, 63, 0
    or      11, 11, 12
    mtmsrd  11
    isync
.endm

.macro LOAD_TOC
    lis     2, .TOC.@ha
    addi    2, 2, .TOC.@l
.endm

    .section .text.entry, "ax"
    .globl _start
_start:
    TO_LITTLE_ENDIAN
    LOAD_TOC
    lis     13, cpus@ha
    addi    13, 13, cpus@l
    lis     1, boot_stack_top@ha
    addi    1, 1, boot_stack_top@l
    li      0, 0
    stdu    0, -32(1)
    bl      boot_main
    nop
    b       .

/* r3: the struct cpu of this CPU; its first member is its stack top. */
    .globl _secondary_start
_secondary_start:
    TO_LITTLE_ENDIAN
    LOAD_TOC
    mr      13, 3
    ld      1, 0(3)
    li      0, 0
    stdu    0, -32(1)
    bl      secondary_main
    nop
    b       .

    .text
/*
 * Vectors do "mtsprg2 r3; li r3,VECTOR; ba exc_common".  Save the
 * interrupted context below the ELFv2 red zone of its stack, call
 * exc_dispatch(vector, frame) and return with rfid.
 */
    .globl exc_common
exc_common:
    stdu    1, -(FR_SIZE + REDZONE)(1)
    std     0, FR_GPR(0)(1)
    std     2, FR_GPR(2)(1)
    mfspr   0, SPRG2
    std     0, FR_GPR(3)(1)
    .irp n, 4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    std     \n, FR_GPR(\n)(1)
    .endr
    mflr    0
    std     0, FR_LR(1)
    mfctr   0
    std     0, FR_CTR(1)
    mfxer   0
    std     0, FR_XER(1)
    mfcr    0
    std     0, FR_CR(1)
    mfsrr0  0
    std     0, FR_SRR0(1)
    mfsrr1  0
    std     0, FR_SRR1(1)
    LOAD_TOC
    addi    4, 1, FR_GPR(0)
    bl      exc_dispatch
    nop
    ld      0, FR_SRR0(1)
    mtsrr0  0
    ld      0, FR_SRR1(1)
    mtsrr1  0
    ld      0, FR_LR(1)
    mtlr    0
    ld      0, FR_CTR(1)
    mtctr   0
    ld      0, FR_XER(1)
    mtxer   0
    ld      0, FR_CR(1)
    mtcr    0
    ld      0, FR_GPR(0)(1)
    ld      2, FR_GPR(2)(1)
    .irp n, 3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    ld      \n, FR_GPR(\n)(1)
    .endr
    ld      1, 0(1)
    rfid

/*
 * long hcall(op, a1..a6, rets): "sc 1" with r3 = op and r4..r9 = args;
 * returns r3 and stores r4..r7 to rets[0..3] when rets is not NULL.
 */
    .globl hcall
hcall:
    std     10, -8(1)
    sc      1
    ld      10, -8(1)
    cmpdi   10, 0
    beqlr
    std     4, 0(10)
    std     5, 8(10)
    std     6, 16(10)
    std     7, 24(10)
    blr

    .bss
    .balign 16
    .space  32768
    .globl boot_stack_top
boot_stack_top:
