/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Interrupt-delivery counters of the emulated local APIC (TCG and
 * qtest; the in-kernel APIC of KVM is not counted here), reported per
 * vCPU by the "irq" stats provider (target "irq-vcpu").  hw/intc/apic.c
 * bumps them; hw/intc/apic-stats.c names and registers them.
 */

#ifndef HW_INTC_APIC_STATS_H
#define HW_INTC_APIC_STATS_H

#include "qemu/stats64.h"

typedef enum APICStat {
    APIC_STAT_INTERRUPT_REQUESTS,
    APIC_STAT__MAX
} APICStat;

typedef struct APICStats {
    Stat64 count[APIC_STAT__MAX];
    struct IrqStatsGroup *group;
} APICStats;

struct APICCommonState;
void apic_stats_register(struct APICCommonState *s);
void apic_stats_unregister(struct APICCommonState *s);

static inline void apic_stats_inc(APICStats *st, APICStat stat)
{
    stat64_add(&st->count[stat], 1);
}

#endif
