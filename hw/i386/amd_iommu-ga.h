/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Guest virtual APIC (GA) mode of the emulated AMD IOMMU, behind the
 * property x-ga-vapic (off by default: EFR, IVRS and behaviour are then
 * those of upstream QEMU).
 *
 * With it on, the IOMMU advertises GAMSup = vAPIC mode, and a 128-bit
 * IRTE with GuestMode=1 posts its vector into the vAPIC backing page
 * (GA root pointer) instead of interrupting a CPU: IsRun=1 counts a
 * doorbell; IsRun=0 with GALogIntr=1 appends a GA-log entry (GATag,
 * DeviceID, type GUEST_NR) and raises the GA-log interrupt.  Register
 * layouts follow the AMD I/O Virtualization Technology specification.
 * amd_iommu.c calls in from its MMIO, control, reset and interrupt
 * remapping paths (hw/i386/amd_iommu-ga.c).
 */

#ifndef HW_I386_AMD_IOMMU_GA_H
#define HW_I386_AMD_IOMMU_GA_H

/* MMIO registers */
#define AMDVI_MMIO_GA_LOG_BASE        0x00e0
#define AMDVI_MMIO_GA_LOG_TAIL_ADDR   0x00e8
#define AMDVI_MMIO_GA_HEAD            0x2040
#define AMDVI_MMIO_GA_TAIL            0x2048

/* Extended feature register: GAMSup (bits 23:21) = 1, vAPIC mode. */
#define AMDVI_FEATURE_GAM_VAPIC       (1ULL << 21)

/* Control register */
#define AMDVI_CONTROL_GAM_SHIFT       25          /* GAMEn, 3 bits */
#define AMDVI_CONTROL_GAM_VAPIC       1
#define AMDVI_CONTROL_GALOG_EN        (1ULL << 28)
#define AMDVI_CONTROL_GAINT_EN        (1ULL << 29)

/* Status register */
#define AMDVI_STATUS_GALOG_RUN        (1ULL << 8)
#define AMDVI_STATUS_GALOG_OVERFLOW   (1ULL << 9)
#define AMDVI_STATUS_GA_INT           (1ULL << 10)

/* GA log */
#define AMDVI_GA_LOG_BASE_MASK        0x000ffffffffff000ULL  /* 51:12 */
#define AMDVI_GA_LOG_LEN_SHIFT        56                     /* 59:56 */
#define AMDVI_GA_LOG_LEN_MIN          8           /* 1000b: 512 entries */
#define AMDVI_GA_LOG_TAIL_ADDR_MASK   0x000ffffffffffff8ULL  /* 51:3 */
#define AMDVI_GA_ENTRY_SIZE           8
#define AMDVI_GA_GUEST_NR             1ULL        /* entry type, 63:60 */

/* Returned by remapping when the interrupt was posted, not delivered. */
#define AMDVI_IR_POSTED               1

typedef struct AMDVIGAState {
    hwaddr log_base;            /* 0: no valid GA log programmed */
    uint32_t log_entries;
    hwaddr tail_addr;
    uint32_t head;              /* byte offsets into the log */
    uint32_t tail;
} AMDVIGAState;

struct AMDVIState;

uint64_t amdvi_ga_efr(struct AMDVIState *s);
void amdvi_ga_reset(struct AMDVIState *s);
/* After migration: derive the GA log's state from its registers. */
void amdvi_ga_post_load(struct AMDVIState *s);
void amdvi_ga_control_write(struct AMDVIState *s, uint64_t control);
/* True when @addr is a GA register, which is then written. */
bool amdvi_ga_mmio_write(struct AMDVIState *s, hwaddr addr, uint64_t val,
                         unsigned size);
/*
 * Post a GuestMode IRTE (@lo, @hi: its two quadwords) from @devid.
 * Returns AMDVI_IR_POSTED, or a negative AMDVI_IR_* error: -AMDVI_IR_ERR
 * for an invalid IRTE (the caller logs the IO page fault), or
 * -AMDVI_IR_LOGGED when the event was logged here.
 */
/*
 * Read a 128-bit IRTE at guest physical @addr in one atomic load, as
 * Linux updates it with cmpxchg16b (a vCPU thread may do so while this
 * one reads it); false if it is not in guest RAM (then read it as DMA).
 */
bool amdvi_ga_read_irte(hwaddr addr, uint64_t *lo, uint64_t *hi);

int amdvi_ga_post(struct AMDVIState *s, uint64_t lo, uint64_t hi,
                  uint16_t devid);

#endif
