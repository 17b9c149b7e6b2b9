/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Shared between the files of the "irq" stats provider: the registry
 * (irq-stats.c), the host-wide counters (irq-host-stats.c) and the KVM
 * tracepoint counters (irq-kvm-trace.c).
 */

#ifndef STATS_IRQ_STATS_INTERNAL_H
#define STATS_IRQ_STATS_INTERNAL_H

#include "qapi/qapi-types-stats.h"

StatsList *irq_stats_add_scalar(StatsList *list, const char *name,
                                uint64_t value);
StatsSchemaValueList *irq_stats_add_schema_value(StatsSchemaValueList *list,
                                                 const char *name,
                                                 StatsType type);

/* Target "host": /proc/interrupts and host-wide KVM tracepoints. */
bool irq_host_stat_name_known(const char *name);
void irq_host_stats_collect(StatsResultList **result, strList *names);
void irq_host_stats_schema(StatsSchemaList **result);
/* NULL when /proc/interrupts was read, else why not; @n: counters. */
const char *irq_host_stats_status(unsigned *n);

/* KVM tracepoints (irq-kvm-trace.c); a status is NULL when counting. */
void irq_kvm_trace_refresh(void);
bool irq_kvm_trace_ga_log(uint64_t *count);
const char *irq_kvm_trace_doorbell_status(void);
const char *irq_kvm_trace_ga_log_status(void);

#endif
