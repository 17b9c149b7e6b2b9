/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Negotiation of APIC virtualization (AMD AVIC / x2AVIC, Intel APICv)
 * and device posted interrupts with KVM on x86, and its report.
 *
 *   -accel kvm,apicv=on|off|auto,device-posted-irqs=on|off|auto
 *
 *   -accel kvm,apicv-pit-discard=on,x-apicv-observe=on
 *
 * - kvm_apicv_accel_class_init(): the options (default auto, off);
 * - kvm_apicv_kvm_init(), from kvm_arch_init(): start reading KVM's
 *   tracepoints (apicv-trace.c), probe the host (apicv-host.c, plus KVM
 *   capabilities); apicv=on on a host without APIC virtualization fails
 *   here.  Only what was asked for is adjusted before the devices
 *   exist: apicv-pit-discard=on gives the in-kernel PIT
 *   lost_tick_policy=discard (a sugar property: an explicit -global
 *   still wins); device-posted-irqs=off keeps VFIO MSI/MSI-X out of KVM
 *   irqfd (x-no-kvm-msi/x-no-kvm-msix), so nothing can be posted;
 * - kvm_apicv_check_vcpu(), from kvm_cpu_realizefn(): a vCPU the host
 *   kernel would refuse to create (APIC ID above the AVIC table before
 *   Linux 6.17) fails with the reason instead of KVM_CREATE_VCPU's
 *   EINVAL;
 * - at machine-init-done: collect the VM's configuration (irqchip, PIT,
 *   CPU model, APIC IDs, SEV) and decide (apicv-probe.c); what cannot
 *   be had stops QEMU before the guest runs, with every cause and fix;
 * - qmp_x_query_kvm_apicv(): the prediction beside what KVM's
 *   tracepoints say, and for each VFIO vector whether it can be posted
 *   and where KVM posts it.
 *
 * Hooked in target/i386/kvm/kvm.c and kvm-cpu.c.  apicv-negotiate-stub.c
 * answers the query when QEMU is built without KVM.
 */

#include "qemu/osdep.h"
#include <sys/utsname.h>
#include "qapi/error.h"
#include "qapi/qapi-commands-kvm-apicv-target.h"
#include "qapi/qapi-visit-common.h"
#include "qemu/error-report.h"
#include "qemu/timer.h"
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
#include "host-cpu.h"
#include "apicv-probe.h"
#include "apicv-host.h"
#include "apicv-negotiate.h"
#include "apicv-trace.h"
#include "hw/pci/msix.h"
#include "qapi/util.h"
#include "trace.h"

static struct {
    OnOffAuto requested;
    OnOffAuto requested_posting;
    bool pit_discard;               /* apicv-pit-discard=on */
    bool observe;                   /* x-apicv-observe */
    bool decided;
    bool host_may_run_avic;
    KvmApicvHostFacts facts;
    KvmApicvVmConfig vm;
    ApicvDecision decision;
    Notifier machine_done;
    QEMUTimer *drain_timer;
} apicv = {
    .requested = ON_OFF_AUTO_AUTO,
    .requested_posting = ON_OFF_AUTO_AUTO,
    .observe = true,
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

static bool get_pit_discard(Object *obj, Error **errp)
{
    return apicv.pit_discard;
}

static void set_pit_discard(Object *obj, bool value, Error **errp)
{
    apicv.pit_discard = value;
}

static bool get_observe(Object *obj, Error **errp)
{
    return apicv.observe;
}

static void set_observe(Object *obj, bool value, Error **errp)
{
    apicv.observe = value;
}

void kvm_apicv_accel_class_init(ObjectClass *oc)
{
    object_class_property_add_enum(oc, "apicv", "OnOffAuto", &OnOffAuto_lookup,
                                   get_apicv, set_apicv);
    object_class_property_set_description(oc, "apicv",
        "APIC virtualization (AMD AVIC/x2AVIC, Intel APICv): on (fail if "
        "the host or the VM's configuration prevents it, naming the fixes), "
        "off (only where the host does not enable it: KVM has no per-VM "
        "switch), auto (default: report, change nothing)");
    object_class_property_add_enum(oc, "device-posted-irqs", "OnOffAuto",
                                   &OnOffAuto_lookup, get_posting,
                                   set_posting);
    object_class_property_set_description(oc, "device-posted-irqs",
        "Posting of device (VFIO) interrupts into the guest: on (fail if "
        "the host cannot), off (VFIO MSI/MSI-X stay out of KVM irqfd), auto "
        "(default)");
    object_class_property_add_bool(oc, "apicv-pit-discard", get_pit_discard,
                                   set_pit_discard);
    object_class_property_set_description(oc, "apicv-pit-discard",
        "Give the in-kernel PIT lost_tick_policy=discard, which avoids "
        "AVIC's PIT-reinject inhibit (guest-visible: lost PIT ticks are "
        "dropped); an explicit -global kvm-pit.lost_tick_policy wins; "
        "default off");
    object_class_property_add_bool(oc, "x-apicv-observe", get_observe,
                                   set_observe);
    object_class_property_set_description(oc, "x-apicv-observe",
        "Read KVM's APICv inhibit and IRTE tracepoints for "
        "x-query-kvm-apicv (needs root or CAP_PERFMON); default on");
}

/* The in-kernel PIT's lost_tick_policy: a qdev property, read as text. */
static bool pit_reinjects(Object *pit)
{
    g_autofree char *policy = object_property_get_str(pit, "lost_tick_policy",
                                                      NULL);

    /* unreadable: the default, re-injection */
    return !policy || qapi_enum_parse(&LostTickPolicy_lookup, policy,
                                      LOST_TICK_POLICY_DELAY, NULL) ==
                      LOST_TICK_POLICY_DELAY;
}

static void kvm_apicv_vm_config(KvmApicvVmConfig *vm)
{
    MachineState *ms = MACHINE(qdev_get_machine());
    MachineClass *mc = MACHINE_GET_CLASS(ms);
    Object *pit = object_resolve_path_type("", TYPE_KVM_I8254, NULL);
    CPUState *cs;

    memset(vm, 0, sizeof(*vm));
    vm->kernel_irqchip = kvm_irqchip_in_kernel();
    vm->pit_in_kernel = pit != NULL;
    vm->pit_reinject = pit && pit_reinjects(pit);

    if (first_cpu) {
        X86CPU *cpu = X86_CPU(first_cpu);
        CPUX86State *env = &cpu->env;

        vm->x2apic = env->features[FEAT_1_ECX] & CPUID_EXT_X2APIC;
        vm->hyperv_synic = hyperv_feat_enabled(cpu, HYPERV_FEAT_SYNIC);
        vm->hv_avic = hyperv_feat_enabled(cpu, HYPERV_FEAT_AVIC);
        vm->nested_svm = env->features[FEAT_8000_0001_ECX] & CPUID_EXT3_SVM;
    }
    CPU_FOREACH(cs) {
        vm->max_apic_id = MAX(vm->max_apic_id, X86_CPU(cs)->apic_id);
    }
    /* Every possible vCPU, hotpluggable ones included */
    if (mc->possible_cpu_arch_ids) {
        const CPUArchIdList *ids = mc->possible_cpu_arch_ids(ms);

        for (int i = 0; i < ids->len; i++) {
            vm->max_possible_apic_id = MAX(vm->max_possible_apic_id,
                                           ids->cpus[i].arch_id);
        }
    }
    vm->sev = sev_enabled();
}

/* Drain the tracepoint rings now and then: bursts must not overflow. */
static void kvm_apicv_drain(void *opaque)
{
    const char *why;

    apicv_trace_poll(&why);
    timer_mod(apicv.drain_timer, qemu_clock_get_ms(QEMU_CLOCK_REALTIME) + 500);
}

static void kvm_apicv_machine_done(Notifier *n, void *data)
{
    Error *err = NULL;
    const char *why;

    if (!kvm_enabled()) {
        /* KVM failed after kvm_arch_init(); another accelerator runs */
        apicv_trace_stop();
        return;
    }
    if (apicv_trace_poll(&why)->available) {
        apicv.drain_timer = timer_new_ms(QEMU_CLOCK_REALTIME, kvm_apicv_drain,
                                         NULL);
        kvm_apicv_drain(NULL);
    }
    kvm_apicv_vm_config(&apicv.vm);
    if (!apicv_decide(&apicv.facts, &apicv.vm, apicv.requested,
                      apicv.requested_posting, &apicv.decision, &err)) {
        /* Before the guest runs: nothing has started yet */
        error_report_err(err);
        exit(1);
    }
    apicv.decided = true;
    trace_kvm_apicv_decided(OnOffAuto_str(apicv.requested),
                            apicv_mode_name(apicv.decision.host_mode),
                            apicv_mode_name(apicv.decision.mode));
}

int kvm_apicv_kvm_init(MachineState *ms, KVMState *s, Error **errp)
{
    g_autofree char *why = NULL;
    struct utsname u;
    ApicvMode host_mode;
    uint32_t eax, ebx, ecx, edx;
    char vendor[CPUID_VENDOR_SZ + 1];

    /* Before the irqchip, the PIT and the vCPUs: their events count */
    if (apicv.observe) {
        apicv_trace_start();
    }

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
    /* X2AVIC_EXT (4096 vCPUs) is not in /proc/cpuinfo: CPUID 0x8000000A */
    host_cpuid(0x80000000, 0, &eax, &ebx, &ecx, &edx);
    if (eax >= 0x8000000a) {
        host_cpuid(0x8000000a, 0, &eax, &ebx, &ecx, &edx);
        apicv.facts.cpu_x2avic_ext = ecx & (1U << 6) ? HOST_FACT_YES
                                                     : HOST_FACT_NO;
    }
    apicv.facts.max_vcpu_id = kvm_check_extension(s, KVM_CAP_MAX_VCPU_ID);
    if (apicv.facts.max_vcpu_id <= 0) {
        apicv.facts.max_vcpu_id = -1;       /* not reported: unknown */
    }

    host_mode = apicv_host_mode(&apicv.facts, &why);
    /*
     * For kvm.c's ExtINT workaround: an AMD host whose kvm_amd runs AVIC,
     * or one whose kvm_amd parameters cannot be read (a container
     * without /sys/module): wrongly on, it only delays an interrupt
     * window; wrongly off, a Linux 7.3 host can livelock the guest.
     */
    host_cpu_vendor_fms(vendor, NULL, NULL, NULL);
    apicv.host_may_run_avic =
        (!strcmp(vendor, CPUID_VENDOR_AMD) ||
         !strcmp(vendor, CPUID_VENDOR_HYGON)) &&
        (host_mode == APICV_MODE_AVIC || host_mode == APICV_MODE_X2AVIC ||
         apicv.facts.amd_avic == HOST_FACT_UNKNOWN);
    if (apicv.requested == ON_OFF_AUTO_ON && host_mode == APICV_MODE_NONE) {
        /* reported at the -accel option's location */
        error_setg(errp, "apicv=on: the host offers no APIC virtualization: "
                   "%s", why);
        return -EINVAL;
    }
    if (apicv.pit_discard) {
        /*
         * On every host alike, so that the guest sees the same PIT
         * wherever it migrates; a sugar property: -global still wins.
         */
        object_register_sugar_prop(TYPE_KVM_I8254, "lost_tick_policy",
                                   "discard", true);
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

bool kvm_apicv_host_may_run_avic(void)
{
    return apicv.host_may_run_avic;
}

bool kvm_apicv_check_vcpu(X86CPU *cpu, Error **errp)
{
    const char *why;

    /*
     * Creating a vCPU fires a handful of inhibit changes: drain them
     * now, so that a few hundred vCPUs do not overflow the ring.
     */
    apicv_trace_poll(&why);
    /* AVIC's vCPU set-up runs only with the local APIC in the kernel */
    return !kvm_irqchip_in_kernel() ||
           apicv_check_vcpu_id(&apicv.facts, cpu->apic_id, errp);
}

static void add_host_fact(void *opaque, const char *name, const char *value)
{
    KvmApicvHostFactList ***tail = opaque;
    KvmApicvHostFact *f = g_new0(KvmApicvHostFact, 1);

    f->name = g_strdup(name);
    f->value = g_strdup(value);
    QAPI_LIST_APPEND(*tail, f);
}

typedef struct VectorWalk {
    KvmApicvVfioVectorList **tail;
    const ApicvObserved *obs;
    bool host_posts;
} VectorWalk;

static void add_vfio_vector(VectorWalk *w, const char *path,
                            KvmApicvVectorKind kind, int vector, int virq,
                            bool masked)
{
    KvmApicvVfioVector *v = g_new0(KvmApicvVfioVector, 1);

    v->device = g_strdup(path);
    v->kind = kind;
    v->vector = vector;
    v->kvm_irqfd = virq >= 0;
    v->masked = masked;
    /* VFIO never posts INTx; a masked vector has no live IRTE */
    v->can_post = kind != KVM_APICV_VECTOR_KIND_INTX && virq >= 0 &&
                  !masked && w->host_posts;
    if (kind != KVM_APICV_VECTOR_KIND_INTX && virq >= 0) {
        v->has_gsi = true;
        v->gsi = virq;
    }
    for (guint i = 0; v->has_gsi && w->obs && i < w->obs->irtes->len; i++) {
        const ApicvObservedIrte *e = &g_array_index(w->obs->irtes,
                                                    ApicvObservedIrte, i);

        if (e->gsi == virq) {
            v->has_irte_vcpu = e->set && e->vcpu >= 0;
            v->irte_vcpu = e->vcpu;
        }
    }
    QAPI_LIST_APPEND(w->tail, v);
}

static int add_vfio_vectors(Object *obj, void *opaque)
{
    VectorWalk *w = opaque;
    VFIOPCIDevice *vdev;
    g_autofree char *path = NULL;

    if (!object_dynamic_cast(obj, TYPE_VFIO_PCI)) {
        return 0;
    }
    vdev = VFIO_PCI(obj);
    path = object_get_canonical_path(obj);
    switch (vdev->interrupt) {
    case VFIO_INT_INTx:
        add_vfio_vector(w, path, KVM_APICV_VECTOR_KIND_INTX, 0,
                        vdev->intx.kvm_accel ? 0 : -1, false);
        break;
    case VFIO_INT_MSI:
    case VFIO_INT_MSIX:
        for (int i = 0; i < vdev->nr_vectors; i++) {
            VFIOMSIVector *mv = &vdev->msi_vectors[i];

            if (!mv->use) {
                continue;
            }
            add_vfio_vector(w, path,
                            vdev->interrupt == VFIO_INT_MSI ?
                            KVM_APICV_VECTOR_KIND_MSI :
                            KVM_APICV_VECTOR_KIND_MSIX, i, mv->virq,
                            vdev->interrupt == VFIO_INT_MSIX &&
                            msix_is_masked(&vdev->pdev, i));
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
    [APICV_INHIBIT_SEV] = KVM_APICV_INHIBIT_REASON_SEV,
    [APICV_INHIBIT_NESTED] = KVM_APICV_INHIBIT_REASON_NESTED,
};

static KvmApicvObserved *observed(const ApicvObserved *obs, const char *why)
{
    KvmApicvObserved *o = g_new0(KvmApicvObserved, 1);
    KvmApicvIrteUpdateList **irtes;
    strList **names;

    o->available = obs->available;
    o->detail = g_strdup(why);
    if (!obs->available) {
        return o;
    }
    o->has_inhibit_events = o->has_lost_events = true;
    o->inhibit_events = obs->inhibit_events;
    o->lost_events = obs->lost_events;
    if (obs->has_inhibits) {
        o->has_inhibits = o->has_inhibit_mask = true;
        o->inhibit_mask = obs->inhibits;
        names = &o->inhibits;
        for (int bit = 0; bit < 64; bit++) {
            const char *name = apicv_trace_reason_name(bit, apicv.facts.kernel);

            if (obs->inhibits & BIT_ULL(bit)) {
                QAPI_LIST_APPEND(names, name ? g_strdup(name) :
                                 g_strdup_printf("bit%d", bit));
            }
        }
    }
    o->has_irte_updates = true;
    irtes = &o->irte_updates;
    for (guint i = 0; i < obs->irtes->len; i++) {
        const ApicvObservedIrte *e = &g_array_index(obs->irtes,
                                                    ApicvObservedIrte, i);
        KvmApicvIrteUpdate *u = g_new0(KvmApicvIrteUpdate, 1);

        u->host_irq = e->host_irq;
        u->gsi = e->gsi;
        u->set = e->set;
        u->has_vcpu = e->set && e->vcpu >= 0;
        u->vcpu = e->vcpu;
        u->vector = e->vector;
        QAPI_LIST_APPEND(irtes, u);
    }
    return o;
}

KvmApicvInfo *qmp_x_query_kvm_apicv(Error **errp)
{
    KvmApicvInfo *info = g_new0(KvmApicvInfo, 1);
    const ApicvDecision *d = &apicv.decision;
    const ApicvObserved *obs;
    const char *obs_why;
    KvmApicvInhibitList **inhibits;
    KvmApicvHostFactList **facts;
    VectorWalk walk;
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

    info->has_inhibits = true;
    inhibits = &info->inhibits;
    for (int i = 0; i < APICV_INHIBIT__MAX; i++) {
        const ApicvInhibitPrediction *p = &d->inhibit[i];
        KvmApicvInhibit *in;

        if (p->likelihood == APICV_INHIBIT_NONE) {
            continue;
        }
        in = g_new0(KvmApicvInhibit, 1);
        in->reason = qapi_inhibit[i];
        in->likelihood = p->likelihood == APICV_INHIBIT_CERTAIN ?
                         KVM_APICV_LIKELIHOOD_CERTAIN :
                         KVM_APICV_LIKELIHOOD_POSSIBLE;
        in->detail = g_strdup(p->detail);
        in->fix = g_strdup(p->fix);
        in->rule = g_strdup(p->rule);
        QAPI_LIST_APPEND(inhibits, in);
    }
    info->has_pit_discard = true;
    info->pit_discard = apicv.pit_discard && apicv.vm.pit_in_kernel &&
                        !apicv.vm.pit_reinject;

    info->has_device_posting = true;
    info->device_posting = d->device_posting == HOST_FACT_YES ?
                           KVM_APICV_DEVICE_POSTING_ON :
                           d->device_posting == HOST_FACT_NO ?
                           KVM_APICV_DEVICE_POSTING_OFF :
                           KVM_APICV_DEVICE_POSTING_UNKNOWN;
    info->device_posting_detail = g_strdup(d->device_posting_why);

    info->has_host_facts = true;
    facts = &info->host_facts;
    apicv_host_facts_foreach(&apicv.facts, add_host_fact, &facts);

    obs = apicv_trace_poll(&obs_why);
    info->observed = observed(obs, obs_why);

    info->has_vfio_vectors = true;
    walk.tail = &info->vfio_vectors;
    walk.obs = obs->available ? obs : NULL;
    walk.host_posts = d->device_posting == HOST_FACT_YES;
    object_child_foreach_recursive(object_get_root(), add_vfio_vectors,
                                   &walk);
    return info;
}
