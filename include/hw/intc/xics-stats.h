/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Counters of the emulated XICS interrupt controller, reported by the
 * "irq" stats provider: per presenter (ICP) under target "irq-vcpu"
 * with the vCPU's path, per source controller (ICS) under target
 * "irq-device".  hw/intc/xics.c bumps them; hw/intc/xics-stats.c names
 * and registers them.  Stat64, so they may be bumped without the BQL.
 */

#ifndef HW_INTC_XICS_STATS_H
#define HW_INTC_XICS_STATS_H

#include "qemu/stats64.h"

typedef enum XicsIcpStat {
    XICS_ICP_STAT_PRESENTED,    /* interrupts raised to the vCPU */
    XICS_ICP_STAT_ACCEPTED,     /* H_XIRR/H_XIRR_X returning a source */
    XICS_ICP_STAT_EOIS,
    XICS_ICP_STAT_IPIS,         /* IPIs presented (MFRR below CPPR) */
    XICS_ICP_STAT_REJECTS,      /* sources this presenter rejected */
    XICS_ICP_STAT__MAX
} XicsIcpStat;

typedef enum XicsIcsStat {
    XICS_ICS_STAT_MSI_EVENTS,
    XICS_ICS_STAT_LSI_EVENTS,
    XICS_ICS_STAT_RESEND_PASSES,
    XICS_ICS_STAT_RESEND_SCANNED,  /* sources visited by resend passes */
    XICS_ICS_STAT_RESENT,          /* sources presented again */
    XICS_ICS_STAT__MAX
} XicsIcsStat;

typedef struct XicsIcpStats {
    Stat64 count[XICS_ICP_STAT__MAX];
    struct IrqStatsGroup *group;
} XicsIcpStats;

typedef struct XicsIcsStats {
    Stat64 count[XICS_ICS_STAT__MAX];
    struct IrqStatsGroup *group;
} XicsIcsStats;

struct ICPState;
struct ICSState;
void xics_icp_stats_register(struct ICPState *icp);
void xics_icp_stats_unregister(struct ICPState *icp);
void xics_ics_stats_register(struct ICSState *ics);

static inline void xics_icp_stat_inc(XicsIcpStats *st, XicsIcpStat stat)
{
    stat64_add(&st->count[stat], 1);
}

static inline void xics_ics_stat_add(XicsIcsStats *st, XicsIcsStat stat,
                                     uint64_t n)
{
    stat64_add(&st->count[stat], n);
}

#endif
