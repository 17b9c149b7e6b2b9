/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * IntCapXT interrupts of the emulated AMD IOMMU: see
 * hw/i386/amd_iommu-intcapxt.c.
 */

#ifndef HW_I386_AMD_IOMMU_INTCAPXT_H
#define HW_I386_AMD_IOMMU_INTCAPXT_H

/* MMIO: one IntCapXT register per interrupt source */
#define AMDVI_MMIO_INTCAPXT_EVT       0x0170
#define AMDVI_MMIO_INTCAPXT_PPR       0x0178
#define AMDVI_MMIO_INTCAPXT_GA        0x0180

typedef enum AMDVIInterruptSource {
    AMDVI_INTR_EVENT_LOG,       /* event log, completion wait */
    AMDVI_INTR_PPR_LOG,
    AMDVI_INTR_GA_LOG,
} AMDVIInterruptSource;

struct AMDVIState;

/*
 * Signal @src: through its IntCapXT register when IntCapXTEn is set,
 * else through the IOMMU's MSI.  True if an interrupt was sent.
 */
bool amdvi_raise_interrupt(struct AMDVIState *s, AMDVIInterruptSource src);

/* MMIO write hook: true if @addr was an IntCapXT register (handled). */
bool amdvi_intcapxt_mmio_write(struct AMDVIState *s, hwaddr addr,
                               uint64_t val, unsigned size);

#endif
