/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * HMP "info irq-stats": where the "irq" stats provider gets its numbers
 * and, for each source it cannot use, why (no KVM, no tracefs, no
 * permission, no /proc/interrupts).  The numbers themselves are in
 * "info stats irq-device|irq-vcpu|host".
 */

#include "qemu/osdep.h"
#include "monitor/hmp.h"
#include "monitor/monitor.h"
#include "system/irq-stats.h"
#include "irq-stats-internal.h"

static void print_source(Monitor *mon, const char *what, const char *why)
{
    monitor_printf(mon, "  %-44s %s%s\n", what, why ? "not counted: " :
                   "counting", why ? why : "");
}

void hmp_info_irq_stats(Monitor *mon, const QDict *qdict)
{
    g_autoptr(StatsResultList) host = NULL;
    const char *host_why;
    unsigned n;

    irq_kvm_trace_refresh();
    /* The host status is that of the last read: read now. */
    irq_host_stats_collect(&host, NULL);
    monitor_printf(mon, "irq stats provider (query-stats, provider 'irq'):\n");
    monitor_printf(mon, "  %-44s %u group(s)\n", "devices (target irq-device)",
                   irq_stats_group_count(STATS_TARGET_IRQ_DEVICE));
    monitor_printf(mon, "  %-44s %u group(s)\n", "vCPUs (target irq-vcpu)",
                   irq_stats_group_count(STATS_TARGET_IRQ_VCPU));
    host_why = irq_host_stats_status(&n);
    if (host_why) {
        print_source(mon, "/proc/interrupts (target host)", host_why);
    } else {
        monitor_printf(mon, "  %-44s counting, %u counter(s) on this host\n",
                       "/proc/interrupts (target host)", n);
    }
    print_source(mon, "kvm:kvm_avic_doorbell (target irq-vcpu)",
                 irq_kvm_trace_doorbell_status());
    print_source(mon, "kvm:kvm_avic_ga_log (target host)",
                 irq_kvm_trace_ga_log_status());
}
