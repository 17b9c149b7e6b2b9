/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Names of the emulated AMD IOMMU's interrupt-delivery counters and
 * their registration with the "irq" stats provider
 * (include/system/irq-stats.h).  Hooked in amd_iommu.c's realize; the
 * device cannot be unplugged, so the group lives as long as QEMU.
 */

#include "qemu/osdep.h"
#include "system/irq-stats.h"
#include "amd_iommu.h"
#include "amd_iommu-stats.h"

static const IrqStatDef amdvi_stat_defs[AMDVI_STAT__MAX] = {
    /*
     * Interrupt requests (device MSIs, IOAPIC messages) that passed the
     * interrupt-remapping stage and were delivered: remapped through an
     * IRTE or passed through as the device table allows.
     */
    [AMDVI_STAT_REMAPPED_INTERRUPTS] = {
        "amdvi-remapped-interrupts", STATS_TYPE_CUMULATIVE },
    /* Interrupt requests that the remapping stage rejected. */
    [AMDVI_STAT_IR_FAULTS] = { "amdvi-ir-faults", STATS_TYPE_CUMULATIVE },
    /* GA mode (x-ga-vapic): GuestMode IRTEs posted into a vAPIC page, */
    [AMDVI_STAT_POSTED_INTERRUPTS] = {
        "amdvi-posted-interrupts", STATS_TYPE_CUMULATIVE },
    /* ... of which to a running vCPU (IsRun=1), */
    [AMDVI_STAT_DOORBELLS] = { "amdvi-doorbells", STATS_TYPE_CUMULATIVE },
    /* ... or logged for a vCPU that is not running, */
    [AMDVI_STAT_GA_LOG_ENTRIES] = {
        "amdvi-ga-log-entries", STATS_TYPE_CUMULATIVE },
    /* GA-log interrupts raised (GAIntEn), */
    [AMDVI_STAT_GA_LOG_INTERRUPTS] = {
        "amdvi-ga-log-interrupts", STATS_TYPE_CUMULATIVE },
    /* GA-log entries lost because the log was full. */
    [AMDVI_STAT_GA_LOG_OVERFLOWS] = {
        "amdvi-ga-log-overflows", STATS_TYPE_CUMULATIVE },
};

void amdvi_stats_register(AMDVIState *s)
{
    s->stats.group = irq_stats_register(OBJECT(s), STATS_TARGET_IRQ_DEVICE,
                                        amdvi_stat_defs, s->stats.count,
                                        AMDVI_STAT__MAX);
}
