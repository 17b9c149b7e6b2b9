/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * HMP "info kvm-apicv": x-query-kvm-apicv in words.
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/qapi-commands-kvm-apicv-target.h"
#include "qapi/qapi-visit-common.h"
#include "monitor/monitor.h"
#include "monitor/hmp-target.h"

void hmp_info_kvm_apicv(Monitor *mon, const QDict *qdict)
{
    g_autoptr(KvmApicvInfo) info = qmp_x_query_kvm_apicv(NULL);

    if (!info->kvm) {
        monitor_printf(mon, "KVM is not in use: no APIC virtualization or "
                       "device posted interrupts to negotiate\n");
        return;
    }
    monitor_printf(mon, "apicv=%s: host offers %s, VM expected to run with "
                   "%s\n", OnOffAuto_str(info->requested),
                   KvmApicvMode_str(info->host_mode),
                   KvmApicvMode_str(info->mode));
    if (info->host_detail) {
        monitor_printf(mon, "  host: %s\n", info->host_detail);
    }
    for (KvmApicvInhibitList *l = info->inhibits; l; l = l->next) {
        monitor_printf(mon, "  inhibit %s (%s): %s; fix: %s\n    rule: %s\n",
                       KvmApicvInhibitReason_str(l->value->reason),
                       KvmApicvLikelihood_str(l->value->likelihood),
                       l->value->detail, l->value->fix, l->value->rule);
    }
    if (info->pit_discard) {
        monitor_printf(mon, "  in-kernel PIT set to lost_tick_policy=discard "
                       "(apicv-pit-discard=on)\n");
    }
    monitor_printf(mon, "device-posted-irqs=%s: this VM %s%s%s\n",
                   OnOffAuto_str(info->requested_device_posting),
                   KvmApicvDevicePosting_str(info->device_posting),
                   info->device_posting_detail ? ": " : "",
                   info->device_posting_detail ?
                   info->device_posting_detail : "");
    for (KvmApicvVfioVectorList *l = info->vfio_vectors; l; l = l->next) {
        KvmApicvVfioVector *v = l->value;

        monitor_printf(mon, "  %s %s %" PRId64 ": %s%s%s", v->device,
                       KvmApicvVectorKind_str(v->kind), v->vector,
                       v->kvm_irqfd ? "KVM irqfd" : "through QEMU",
                       v->masked ? ", masked" : "",
                       v->can_post ? ", can be posted" : "");
        if (v->has_irte_vcpu) {
            monitor_printf(mon, ", IRTE set to post to vCPU %" PRId64,
                           v->irte_vcpu);
        }
        monitor_printf(mon, "\n");
    }
    if (!info->observed->available) {
        monitor_printf(mon, "observed: not available: %s\n",
                       info->observed->detail);
    } else {
        KvmApicvObserved *o = info->observed;
        strList *name;

        monitor_printf(mon, "observed (KVM tracepoints): %" PRId64
                       " inhibit changes, %" PRId64 " lost events\n",
                       o->inhibit_events, o->lost_events);
        if (o->has_inhibit_mask) {
            monitor_printf(mon, "  inhibits now: 0x%" PRIx64, o->inhibit_mask);
            for (name = o->inhibits; name; name = name->next) {
                monitor_printf(mon, " %s", name->value);
            }
            monitor_printf(mon, "\n");
        }
        for (KvmApicvIrteUpdateList *l = o->irte_updates; l; l = l->next) {
            KvmApicvIrteUpdate *u = l->value;

            monitor_printf(mon, "  host IRQ %" PRId64 " gsi %" PRId64
                           " vector %" PRId64 ": %s", u->host_irq, u->gsi,
                           u->vector, u->set ? "set to post" : "remapped");
            if (u->has_vcpu) {
                monitor_printf(mon, " to vCPU %" PRId64, u->vcpu);
            }
            monitor_printf(mon, "\n");
        }
    }
    monitor_printf(mon, "host probe:");
    for (KvmApicvHostFactList *l = info->host_facts; l; l = l->next) {
        monitor_printf(mon, " %s=%s", l->value->name, l->value->value);
    }
    monitor_printf(mon, "\n");
}
