/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Interrupt-delivery counters of the emulated AMD IOMMU, reported by
 * the "irq" stats provider (target "irq-device", qom-path of the
 * amd-iommu device).  amd_iommu.c bumps them; amd_iommu-stats.c names
 * them and registers them when the device is realized.
 */

#ifndef HW_I386_AMD_IOMMU_STATS_H
#define HW_I386_AMD_IOMMU_STATS_H

#include "qemu/stats64.h"

typedef enum AMDVIStat {
    AMDVI_STAT_REMAPPED_INTERRUPTS,
    AMDVI_STAT_IR_FAULTS,
    AMDVI_STAT_POSTED_INTERRUPTS,
    AMDVI_STAT_DOORBELLS,
    AMDVI_STAT_GA_LOG_ENTRIES,
    AMDVI_STAT_GA_LOG_INTERRUPTS,
    AMDVI_STAT_GA_LOG_OVERFLOWS,
    AMDVI_STAT__MAX
} AMDVIStat;

typedef struct AMDVIStats {
    Stat64 count[AMDVI_STAT__MAX];
    struct IrqStatsGroup *group;
} AMDVIStats;

struct AMDVIState;
void amdvi_stats_register(struct AMDVIState *s);

static inline void amdvi_stats_inc(AMDVIStats *st, AMDVIStat stat)
{
    stat64_add(&st->count[stat], 1);
}

#endif
