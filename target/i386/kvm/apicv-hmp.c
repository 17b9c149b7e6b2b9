/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * HMP "info kvm-apicv": query-kvm-apicv in words.
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/qapi-commands-kvm-apicv-target.h"
#include "qapi/qapi-visit-common.h"
#include "monitor/monitor.h"
#include "monitor/hmp-target.h"

void hmp_info_kvm_apicv(Monitor *mon, const QDict *qdict)
{
    g_autoptr(KvmApicvInfo) info = qmp_query_kvm_apicv(NULL);

    if (!info->kvm) {
        monitor_printf(mon, "KVM is not in use: no APIC virtualization or "
                       "device posted interrupts to negotiate\n");
        return;
    }
    monitor_printf(mon, "apicv=%s: host offers %s, VM runs with %s\n",
                   OnOffAuto_str(info->requested),
                   KvmApicvMode_str(info->host_mode),
                   KvmApicvMode_str(info->mode));
    if (info->host_detail) {
        monitor_printf(mon, "  host: %s\n", info->host_detail);
    }
    for (KvmApicvInhibitList *l = info->inhibits; l; l = l->next) {
        monitor_printf(mon, "  inhibit %s: %s\n",
                       KvmApicvInhibitReason_str(l->value->reason),
                       l->value->detail);
    }
    if (info->pit_discard) {
        monitor_printf(mon, "  in-kernel PIT set to lost_tick_policy=discard "
                       "(avoids the pit-reinject inhibit)\n");
    }
    monitor_printf(mon, "device-posted-irqs=%s: %s%s%s\n",
                   OnOffAuto_str(info->requested_device_posting),
                   info->device_posting,
                   info->device_posting_detail ? ": " : "",
                   info->device_posting_detail ?
                   info->device_posting_detail : "");
    for (KvmApicvVfioVectorList *l = info->vfio_vectors; l; l = l->next) {
        monitor_printf(mon, "  %s %s %" PRId64 ": %s\n", l->value->device,
                       l->value->kind, l->value->vector,
                       l->value->kvm_irqfd ? "KVM irqfd (can be posted)"
                                           : "through QEMU");
    }
    monitor_printf(mon, "host probe:");
    for (KvmApicvHostFactList *l = info->host_facts; l; l = l->next) {
        monitor_printf(mon, " %s=%s", l->value->name, l->value->value);
    }
    monitor_printf(mon, "\n");
}
