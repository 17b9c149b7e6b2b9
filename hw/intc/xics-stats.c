/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Names of the XICS counters and their registration with the "irq"
 * stats provider (include/system/irq-stats.h).  Presenters register on
 * realize and unregister on unrealize (vCPU hotplug); the source
 * controller registers on realize and lives as long as the machine.
 * Hooked in hw/intc/xics.c; the counters are not migrated.
 */

#include "qemu/osdep.h"
#include "system/irq-stats.h"
#include "hw/ppc/xics.h"
#include "hw/intc/xics-stats.h"

static const IrqStatDef xics_icp_stat_defs[XICS_ICP_STAT__MAX] = {
    [XICS_ICP_STAT_PRESENTED] = { "xics-icp-presented",
                                  STATS_TYPE_CUMULATIVE },
    [XICS_ICP_STAT_ACCEPTED] = { "xics-icp-accepted", STATS_TYPE_CUMULATIVE },
    [XICS_ICP_STAT_EOIS] = { "xics-icp-eois", STATS_TYPE_CUMULATIVE },
    [XICS_ICP_STAT_IPIS] = { "xics-icp-ipis", STATS_TYPE_CUMULATIVE },
    [XICS_ICP_STAT_REJECTS] = { "xics-icp-rejects", STATS_TYPE_CUMULATIVE },
};

static const IrqStatDef xics_ics_stat_defs[XICS_ICS_STAT__MAX] = {
    [XICS_ICS_STAT_MSI_EVENTS] = { "xics-ics-msi-events",
                                   STATS_TYPE_CUMULATIVE },
    [XICS_ICS_STAT_LSI_EVENTS] = { "xics-ics-lsi-events",
                                   STATS_TYPE_CUMULATIVE },
    [XICS_ICS_STAT_RESEND_PASSES] = { "xics-ics-resend-passes",
                                      STATS_TYPE_CUMULATIVE },
    [XICS_ICS_STAT_RESEND_SCANNED] = { "xics-ics-resend-scanned",
                                       STATS_TYPE_CUMULATIVE },
    [XICS_ICS_STAT_RESENT] = { "xics-ics-resent", STATS_TYPE_CUMULATIVE },
};

void xics_icp_stats_register(ICPState *icp)
{
    icp->stats.group = irq_stats_register(OBJECT(icp->cs),
                                          STATS_TARGET_IRQ_VCPU,
                                          xics_icp_stat_defs,
                                          icp->stats.count,
                                          XICS_ICP_STAT__MAX);
}

void xics_icp_stats_unregister(ICPState *icp)
{
    irq_stats_unregister(icp->stats.group);
    icp->stats.group = NULL;
}

void xics_ics_stats_register(ICSState *ics)
{
    ics->stats.group = irq_stats_register(OBJECT(ics),
                                          STATS_TARGET_IRQ_DEVICE,
                                          xics_ics_stat_defs,
                                          ics->stats.count,
                                          XICS_ICS_STAT__MAX);
}
