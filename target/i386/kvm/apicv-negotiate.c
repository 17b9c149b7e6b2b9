/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Negotiation of APIC virtualization (AMD AVIC / x2AVIC, Intel APICv)
 * and device posted interrupts with KVM on x86, and its report.
 *
 *   -accel kvm,apicv=on|off|auto,device-posted-irqs=on|off|auto
 *
 * - kvm_apicv_accel_class_init(): the two options (default auto);
 * - kvm_apicv_kvm_init(), from kvm_arch_init(): probe the host
 *   (apicv-host.c, plus KVM capabilities); apicv=on on a host without
 *   APIC virtualization fails here.  Adjust what is safe before the
 *   devices exist: with auto on an AVIC host the in-kernel PIT gets
 *   lost_tick_policy=discard (a sugar property: an explicit -global
 *   still wins); device-posted-irqs=off keeps VFIO MSI/MSI-X out of KVM
 *   irqfd (x-no-kvm-msi/x-no-kvm-msix), so nothing can be posted;
 * - at machine-init-done: collect the VM's configuration (irqchip, PIT,
 *   CPU model, APIC IDs, SEV) and decide (apicv-probe.c); "on" that
 *   cannot be had stops QEMU before the guest runs, with the reason and
 *   the fix;
 * - qmp_query_kvm_apicv(): the outcome, and for each VFIO vector
 *   whether it goes through KVM irqfd.
 *
 * Hooked in target/i386/kvm/kvm.c.  apicv-negotiate-stub.c answers the
 * query when QEMU is built without KVM.
 */

#include "qemu/osdep.h"
#include <sys/utsname.h>
#include "qapi/error.h"
#include "qapi/qapi-commands-kvm-apicv-target.h"
#include "qapi/qapi-visit-common.h"
#include "qemu/error-report.h"
#include "qom/object.h"
#include "hw/boards.h"
#include "hw/qdev-properties.h"
#include "hw/timer/i8254.h"
#include "hw/vfio/pci.h"
#include "system/kvm.h"
#include "system/kvm_int.h"
#include "system/system.h"
#include "cpu.h"
#include "sev.h"
#include "apicv-probe.h"
#include "apicv-host.h"
#include "apicv-negotiate.h"

static struct {
    OnOffAuto requested;
    OnOffAuto requested_posting;
    bool decided;
    bool pit_discard_registered;
    KvmApicvHostFacts facts;
    KvmApicvVmConfig vm;
    ApicvDecision decision;
    Notifier machine_done;
} apicv = {
    .requested = ON_OFF_AUTO_AUTO,
    .requested_posting = ON_OFF_AUTO_AUTO,
};

static int get_apicv(Object *obj, Error **errp)
{
    return apicv.requested;
}

static void set_apicv(Object *obj, int value, Error **errp)
{
    apicv.requested = value;
}

static int get_posting(Object *obj, Error **errp)
{
    return apicv.requested_posting;
}

static void set_posting(Object *obj, int value, Error **errp)
{
    apicv.requested_posting = value;
}

void kvm_apicv_accel_class_init(ObjectClass *oc)
{
    object_class_property_add_enum(oc, "apicv", "OnOffAuto", &OnOffAuto_lookup,
                                   get_apicv, set_apicv);
    object_class_property_set_description(oc, "apicv",
        "APIC virtualization (AMD AVIC/x2AVIC, Intel APICv): on (fail if "
        "the host or the VM's configuration prevents it), off, auto "
        "(default: use it, avoid the inhibits that are safe to avoid)");
    object_class_property_add_enum(oc, "device-posted-irqs", "OnOffAuto",
                                   &OnOffAuto_lookup, get_posting,
                                   set_posting);
    object_class_property_set_description(oc, "device-posted-irqs",
        "Posting of device (VFIO) interrupts into the guest: on (fail if "
        "the host cannot), off (VFIO MSI/MSI-X stay out of KVM irqfd), auto "
        "(default)");
}

static void kvm_apicv_vm_config(KvmApicvVmConfig *vm)
{
    MachineState *ms = MACHINE(qdev_get_machine());
    MachineClass *mc = MACHINE_GET_CLASS(ms);
    Object *pit = object_resolve_path_type("", TYPE_KVM_I8254, NULL);

    memset(vm, 0, sizeof(*vm));
    vm->kernel_irqchip = kvm_irqchip_in_kernel();
    vm->pit_in_kernel = pit != NULL;
    if (pit) {
        int policy = object_property_get_enum(pit, "lost_tick_policy",
                                              "LostTickPolicy", NULL);

        /* unreadable: assume the default, re-injection */
        vm->pit_reinject = policy < 0 || policy == LOST_TICK_POLICY_DELAY;
    }
    /* Adjusting it was done (or not) before the PIT was created. */
    vm->pit_policy_fixed = true;

    if (first_cpu) {
        X86CPU *cpu = X86_CPU(first_cpu);
        CPUX86State *env = &cpu->env;

        vm->x2apic = env->features[FEAT_1_ECX] & CPUID_EXT_X2APIC;
        vm->hyperv_synic = hyperv_feat_enabled(cpu, HYPERV_FEAT_SYNIC);
        vm->hv_avic = hyperv_feat_enabled(cpu, HYPERV_FEAT_AVIC);
        vm->nested_svm = env->features[FEAT_8000_0001_ECX] & CPUID_EXT3_SVM;
    }
    /* Every possible vCPU, hotpluggable ones included */
    if (mc->possible_cpu_arch_ids) {
        const CPUArchIdList *ids = mc->possible_cpu_arch_ids(ms);

        for (int i = 0; i < ids->len; i++) {
            vm->max_apic_id = MAX(vm->max_apic_id, ids->cpus[i].arch_id);
        }
    }
    vm->sev = sev_enabled();
    /* BLOCKIRQ applies only while the gdbstub single-steps */
    vm->guest_debug_blockirq = false;
}

static void kvm_apicv_machine_done(Notifier *n, void *data)
{
    Error *err = NULL;

    kvm_apicv_vm_config(&apicv.vm);
    if (!apicv_decide(&apicv.facts, &apicv.vm, apicv.requested,
                      apicv.requested_posting, &apicv.decision, &err)) {
        /* Before the guest runs: nothing has started yet */
        error_report_err(err);
        exit(1);
    }
    apicv.decided = true;
}

int kvm_apicv_kvm_init(MachineState *ms, KVMState *s, Error **errp)
{
    g_autofree char *why = NULL;
    struct utsname u;
    ApicvMode host_mode;

    apicv_read_host_facts(&apicv.facts, "",
                          uname(&u) == 0 ? u.release : NULL);
    apicv.facts.cap_irqfd =
        kvm_check_extension(s, KVM_CAP_IRQFD) ? HOST_FACT_YES : HOST_FACT_NO;
    apicv.facts.cap_irq_routing = kvm_check_extension(s, KVM_CAP_IRQ_ROUTING) ?
                                  HOST_FACT_YES : HOST_FACT_NO;
    apicv.facts.cap_split_irqchip =
        kvm_check_extension(s, KVM_CAP_SPLIT_IRQCHIP) ? HOST_FACT_YES
                                                      : HOST_FACT_NO;
    apicv.facts.cap_x2apic_api = kvm_check_extension(s, KVM_CAP_X2APIC_API) ?
                                 HOST_FACT_YES : HOST_FACT_NO;
    apicv.facts.max_vcpu_id = kvm_check_extension(s, KVM_CAP_MAX_VCPU_ID);
    if (apicv.facts.max_vcpu_id <= 0) {
        apicv.facts.max_vcpu_id = -1;       /* not reported: unknown */
    }

    host_mode = apicv_host_mode(&apicv.facts, &why);
    if (apicv.requested == ON_OFF_AUTO_ON && host_mode == APICV_MODE_NONE) {
        error_setg(errp, "-accel kvm,apicv=on: the host offers no APIC "
                   "virtualization: %s", why);
        return -1;
    }
    if (apicv.requested == ON_OFF_AUTO_AUTO &&
        (host_mode == APICV_MODE_AVIC || host_mode == APICV_MODE_X2AVIC)) {
        /* A PIT re-injecting lost ticks inhibits AVIC */
        object_register_sugar_prop(TYPE_KVM_I8254, "lost_tick_policy",
                                   "discard", true);
        apicv.pit_discard_registered = true;
    }
    if (apicv.requested_posting == ON_OFF_AUTO_OFF) {
        /* Through QEMU, not KVM irqfd: nothing can be posted */
        object_register_sugar_prop(TYPE_VFIO_PCI, "x-no-kvm-msi", "on", true);
        object_register_sugar_prop(TYPE_VFIO_PCI, "x-no-kvm-msix", "on",
                                   true);
    }

    apicv.machine_done.notify = kvm_apicv_machine_done;
    qemu_add_machine_init_done_notifier(&apicv.machine_done);
    return 0;
}

static void add_host_fact(void *opaque, const char *name, const char *value)
{
    KvmApicvHostFactList ***tail = opaque;
    KvmApicvHostFact *f = g_new0(KvmApicvHostFact, 1);

    f->name = g_strdup(name);
    f->value = g_strdup(value);
    QAPI_LIST_APPEND(*tail, f);
}

static void add_vfio_vector(KvmApicvVfioVectorList ***tail, const char *path,
                            const char *kind, int vector, bool irqfd)
{
    KvmApicvVfioVector *v = g_new0(KvmApicvVfioVector, 1);

    v->device = g_strdup(path);
    v->kind = g_strdup(kind);
    v->vector = vector;
    v->kvm_irqfd = irqfd;
    QAPI_LIST_APPEND(*tail, v);
}

static int add_vfio_vectors(Object *obj, void *opaque)
{
    KvmApicvVfioVectorList ***tail = opaque;
    VFIOPCIDevice *vdev;
    g_autofree char *path = NULL;

    if (!object_dynamic_cast(obj, TYPE_VFIO_PCI)) {
        return 0;
    }
    vdev = VFIO_PCI(obj);
    path = object_get_canonical_path(obj);
    switch (vdev->interrupt) {
    case VFIO_INT_INTx:
        add_vfio_vector(tail, path, "intx", 0, vdev->intx.kvm_accel);
        break;
    case VFIO_INT_MSI:
    case VFIO_INT_MSIX:
        for (int i = 0; i < vdev->nr_vectors; i++) {
            if (vdev->msi_vectors[i].use) {
                add_vfio_vector(tail, path,
                                vdev->interrupt == VFIO_INT_MSI ? "msi"
                                                                : "msix",
                                i, vdev->msi_vectors[i].virq >= 0);
            }
        }
        break;
    default:
        break;
    }
    return 0;
}

static KvmApicvMode qapi_mode(ApicvMode mode)
{
    switch (mode) {
    case APICV_MODE_AVIC:
        return KVM_APICV_MODE_AVIC;
    case APICV_MODE_X2AVIC:
        return KVM_APICV_MODE_X2AVIC;
    case APICV_MODE_APICV:
        return KVM_APICV_MODE_APICV;
    default:
        return KVM_APICV_MODE_NONE;
    }
}

static const KvmApicvInhibitReason qapi_inhibit[APICV_INHIBIT__MAX] = {
    [APICV_INHIBIT_NO_IRQCHIP] = KVM_APICV_INHIBIT_REASON_NO_IRQCHIP,
    [APICV_INHIBIT_PIT_REINJECT] = KVM_APICV_INHIBIT_REASON_PIT_REINJECT,
    [APICV_INHIBIT_HYPERV] = KVM_APICV_INHIBIT_REASON_HYPERV,
    [APICV_INHIBIT_APIC_ID_TOO_BIG] = KVM_APICV_INHIBIT_REASON_APIC_ID_TOO_BIG,
    [APICV_INHIBIT_X2APIC_WITHOUT_X2AVIC] =
        KVM_APICV_INHIBIT_REASON_X2APIC_WITHOUT_X2AVIC,
    [APICV_INHIBIT_BLOCKIRQ] = KVM_APICV_INHIBIT_REASON_BLOCKIRQ,
    [APICV_INHIBIT_SEV] = KVM_APICV_INHIBIT_REASON_SEV,
    [APICV_INHIBIT_NESTED] = KVM_APICV_INHIBIT_REASON_NESTED,
};

KvmApicvInfo *qmp_query_kvm_apicv(Error **errp)
{
    KvmApicvInfo *info = g_new0(KvmApicvInfo, 1);
    const ApicvDecision *d = &apicv.decision;
    KvmApicvInhibitList **inhibits;
    KvmApicvHostFactList **facts;
    KvmApicvVfioVectorList **vectors;
    g_autofree char *host_why = NULL;

    info->kvm = kvm_enabled() && apicv.decided;
    if (!info->kvm) {
        return info;
    }

    info->has_requested = true;
    info->requested = apicv.requested;
    info->has_requested_device_posting = true;
    info->requested_device_posting = apicv.requested_posting;
    info->has_host_mode = true;
    info->host_mode = qapi_mode(apicv_host_mode(&apicv.facts, &host_why));
    info->host_detail = g_steal_pointer(&host_why);
    info->has_mode = true;
    info->mode = qapi_mode(d->mode);

    inhibits = &info->inhibits;
    for (int i = 0; i < APICV_INHIBIT__MAX; i++) {
        if (d->inhibited[i]) {
            KvmApicvInhibit *in = g_new0(KvmApicvInhibit, 1);

            in->reason = qapi_inhibit[i];
            in->detail = g_strdup(d->inhibit_reason[i]);
            QAPI_LIST_APPEND(inhibits, in);
        }
    }
    info->has_pit_discard = true;
    info->pit_discard = apicv.pit_discard_registered &&
                        apicv.vm.pit_in_kernel && !apicv.vm.pit_reinject;

    info->device_posting = g_strdup(d->device_posting == HOST_FACT_YES ? "on" :
                                    d->device_posting == HOST_FACT_NO ? "off" :
                                    "unknown");
    info->device_posting_detail = g_strdup(d->device_posting_why);

    facts = &info->host_facts;
    apicv_host_facts_foreach(&apicv.facts, add_host_fact, &facts);

    vectors = &info->vfio_vectors;
    object_child_foreach_recursive(object_get_root(), add_vfio_vectors,
                                   &vectors);
    return info;
}
