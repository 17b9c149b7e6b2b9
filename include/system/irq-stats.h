/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Interrupt-delivery counters: the "irq" provider of query-stats.
 *
 * Devices and vCPU-side models register a group of named counters with
 * their QOM owner; query-stats reports them for the targets
 * "irq-device" (qom-path of the device) and "irq-vcpu" (canonical path
 * of the vCPU), and host-wide counters for the target "host".  The
 * counters are Stat64, so hot paths bump them without the BQL.
 * Registration and queries run under the BQL.  See stats/irq-stats.c.
 */

#ifndef SYSTEM_IRQ_STATS_H
#define SYSTEM_IRQ_STATS_H

#include "qemu/stats64.h"
#include "qom/object.h"
#include "qapi/qapi-types-stats.h"

/*
 * One counter of a group.  @name must be unique among all statistics of
 * all providers (libvirt keys its schema table by name alone), so it
 * starts with the name of the model that owns it, e.g. "amdvi-",
 * "xics-icp-".
 */
typedef struct IrqStatDef {
    const char *name;
    StatsType type;             /* cumulative or instant */
} IrqStatDef;

typedef struct IrqStatsGroup IrqStatsGroup;

/*
 * Register @n counters, described by @defs and stored in @values (owned
 * by the caller and valid until irq_stats_unregister), for @owner.
 * @target is STATS_TARGET_IRQ_DEVICE or STATS_TARGET_IRQ_VCPU (then
 * @owner is the CPU).  A name may be registered by many owners, always
 * for the same target.
 */
IrqStatsGroup *irq_stats_register(Object *owner, StatsTarget target,
                                  const IrqStatDef *defs, Stat64 *values,
                                  unsigned n);
void irq_stats_unregister(IrqStatsGroup *group);

/* Number of groups registered now for @target (for HMP). */
unsigned irq_stats_group_count(StatsTarget target);

#endif
