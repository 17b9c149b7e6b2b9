/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Names of the emulated local APIC's interrupt-delivery counters and
 * their registration, per vCPU, with the "irq" stats provider
 * (include/system/irq-stats.h).  Hooked in hw/intc/apic.c's realize and
 * unrealize, so CPU hotplug and unplug add and remove them.
 */

#include "qemu/osdep.h"
#include "system/irq-stats.h"
#include "hw/i386/apic_internal.h"
#include "hw/intc/apic-stats.h"

static const IrqStatDef apic_stat_defs[APIC_STAT__MAX] = {
    /*
     * Interrupts set in the local APIC's IRR: fixed and lowest-priority
     * deliveries from devices, the IOAPIC, MSIs and IPIs.
     */
    [APIC_STAT_INTERRUPT_REQUESTS] = {
        "apic-interrupt-requests", STATS_TYPE_CUMULATIVE },
};

void apic_stats_register(APICCommonState *s)
{
    s->stats.group = irq_stats_register(OBJECT(s->cpu), STATS_TARGET_IRQ_VCPU,
                                        apic_stat_defs, s->stats.count,
                                        APIC_STAT__MAX);
}

void apic_stats_unregister(APICCommonState *s)
{
    irq_stats_unregister(s->stats.group);
    s->stats.group = NULL;
}
