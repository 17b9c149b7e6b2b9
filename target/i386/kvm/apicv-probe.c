/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Host probe and decision table for KVM APIC virtualization (AVIC,
 * x2AVIC, APICv) and device posted interrupts: see apicv-probe.h.
 *
 * The inhibits mirror the reasons KVM itself uses to turn APIC
 * virtualization off for a VM (no in-kernel irqchip, PIT in reinject
 * mode with AVIC, Hyper-V SynIC without AutoEOI deprecation, APIC IDs
 * beyond what AVIC/x2AVIC address, guest debug BLOCKIRQ, SEV, nested,
 * an x2APIC guest on an AVIC-only host).
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "apicv-probe.h"

/* Highest physical APIC ID AVIC (xAPIC) and x2AVIC can address. */
#define AVIC_MAX_APIC_ID    0xfe
#define X2AVIC_MAX_APIC_ID  0x1ff

/* Extended feature register bits of the AMD IOMMU */
#define AMD_EFR_XT          (1ULL << 2)
#define AMD_EFR_GA          (1ULL << 7)
#define AMD_EFR_GAM_SHIFT   21
/* Intel VT-d capability register: posted interrupts */
#define INTEL_CAP_PI        (1ULL << 59)

void apicv_facts_init(KvmApicvHostFacts *f)
{
    HostFact *const all[] = {
        &f->cpu_avic, &f->cpu_x2avic, &f->cpu_x2apic, &f->cpu_hypervisor,
        &f->vmx_posted_intr, &f->vmx_apicv,
        &f->amd_avic, &f->amd_force_avic, &f->amd_ipiv,
        &f->amd_device_posted, &f->intel_apicv, &f->intel_ipiv,
        &f->intel_device_posted, &f->amd_iommu, &f->amd_ga,
        &f->amd_ga_vapic, &f->amd_xt, &f->intel_iommu, &f->intel_pi,
        &f->cmdline_intremap_off, &f->cmdline_nopost,
        &f->cmdline_amd_intr_vapic, &f->cmdline_posted_msi,
        &f->cap_irqfd, &f->cap_irq_routing, &f->cap_split_irqchip,
        &f->cap_x2apic_api,
    };

    f->vendor = APICV_VENDOR_UNKNOWN;
    for (size_t i = 0; i < ARRAY_SIZE(all); i++) {
        *all[i] = HOST_FACT_UNKNOWN;
    }
    f->max_vcpu_id = -1;
}

static HostFact fact(bool b)
{
    return b ? HOST_FACT_YES : HOST_FACT_NO;
}

static bool has_word(char **words, const char *w)
{
    for (; *words; words++) {
        if (g_str_equal(*words, w)) {
            return true;
        }
    }
    return false;
}

/* "key : value" of the first processor block; NULL if absent. */
static char *cpuinfo_value(const char *text, const char *key)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

    for (char **l = lines; *l; l++) {
        char *colon = strchr(*l, ':');
        g_autofree char *k = NULL;

        if (!colon) {
            continue;
        }
        k = g_strstrip(g_strndup(*l, colon - *l));
        if (g_str_equal(k, key)) {
            return g_strstrip(g_strdup(colon + 1));
        }
    }
    return NULL;
}

void apicv_parse_cpuinfo(KvmApicvHostFacts *f, const char *text)
{
    g_autofree char *vendor = cpuinfo_value(text, "vendor_id");
    g_autofree char *flags = cpuinfo_value(text, "flags");
    g_autofree char *vmx = cpuinfo_value(text, "vmx flags");

    if (vendor) {
        f->vendor = g_str_equal(vendor, "AuthenticAMD") ||
                    g_str_equal(vendor, "HygonGenuine") ? APICV_VENDOR_AMD :
                    g_str_equal(vendor, "GenuineIntel") ? APICV_VENDOR_INTEL :
                    APICV_VENDOR_UNKNOWN;
    }
    if (flags) {
        g_auto(GStrv) w = g_strsplit_set(flags, " \t", -1);

        f->cpu_avic = fact(has_word(w, "avic"));
        f->cpu_x2avic = fact(has_word(w, "x2avic"));
        f->cpu_x2apic = fact(has_word(w, "x2apic"));
        f->cpu_hypervisor = fact(has_word(w, "hypervisor"));
    }
    /* Kernels before 5.x print no "vmx flags": those stay unknown. */
    if (vmx) {
        g_auto(GStrv) w = g_strsplit_set(vmx, " \t", -1);

        f->vmx_posted_intr = fact(has_word(w, "posted_intr"));
        f->vmx_apicv = fact(has_word(w, "apicv"));
    }
}

HostFact apicv_parse_bool_param(const char *text)
{
    g_autofree char *t = g_strstrip(g_strdup(text ? text : ""));

    if (g_str_equal(t, "Y") || g_str_equal(t, "1")) {
        return HOST_FACT_YES;
    }
    if (g_str_equal(t, "N") || g_str_equal(t, "0")) {
        return HOST_FACT_NO;
    }
    return HOST_FACT_UNKNOWN;
}

void apicv_parse_cmdline(KvmApicvHostFacts *f, const char *text)
{
    g_auto(GStrv) args = g_strsplit_set(text, " \t\n", -1);

    f->cmdline_intremap_off = HOST_FACT_NO;
    f->cmdline_nopost = HOST_FACT_NO;
    f->cmdline_posted_msi = HOST_FACT_NO;
    f->cmdline_amd_intr_vapic = HOST_FACT_YES;     /* the default */
    for (char **a = args; *a; a++) {
        if (g_str_has_prefix(*a, "intremap=")) {
            g_auto(GStrv) opts = g_strsplit(*a + strlen("intremap="), ",", -1);

            for (char **o = opts; *o; o++) {
                if (g_str_equal(*o, "off")) {
                    f->cmdline_intremap_off = HOST_FACT_YES;
                } else if (g_str_equal(*o, "on")) {
                    f->cmdline_intremap_off = HOST_FACT_NO;
                } else if (g_str_equal(*o, "nopost")) {
                    f->cmdline_nopost = HOST_FACT_YES;
                } else if (g_str_equal(*o, "posted_msi")) {
                    f->cmdline_posted_msi = HOST_FACT_YES;
                }
            }
        } else if (g_str_has_prefix(*a, "amd_iommu_intr=")) {
            f->cmdline_amd_intr_vapic =
                fact(g_str_equal(*a + strlen("amd_iommu_intr="), "vapic"));
        } else if (g_str_equal(*a, "amd_iommu=off") ||
                   g_str_equal(*a, "intel_iommu=off")) {
            f->cmdline_intremap_off = HOST_FACT_YES;
        }
    }
}

void apicv_parse_amd_iommu_features(KvmApicvHostFacts *f, const char *text,
                                    const char *kernel_release)
{
    g_autofree char *t = g_strstrip(g_strdup(text));
    g_auto(GStrv) fields = g_strsplit(t, ":", -1);
    const char *efr_text;
    int major, minor;
    uint64_t efr;
    char *end;

    f->amd_iommu = HOST_FACT_YES;
    if (g_strv_length(fields) == 1) {
        efr_text = fields[0];
    } else if (g_strv_length(fields) == 2 && kernel_release &&
               sscanf(kernel_release, "%d.%d", &major, &minor) == 2) {
        /* "EFR2:EFR" before Linux 6.4, "EFR:EFR2" since. */
        efr_text = major > 6 || (major == 6 && minor >= 4) ? fields[0]
                                                           : fields[1];
    } else {
        return;             /* cannot tell which field is the EFR */
    }
    errno = 0;
    efr = g_ascii_strtoull(efr_text, &end, 16);
    if (errno || end == efr_text || *end) {
        return;
    }
    f->amd_ga = fact(efr & AMD_EFR_GA);
    f->amd_ga_vapic = fact(((efr >> AMD_EFR_GAM_SHIFT) & 7) == 1);
    f->amd_xt = fact(efr & AMD_EFR_XT);
}

void apicv_parse_intel_iommu_cap(KvmApicvHostFacts *f, const char *text)
{
    g_autofree char *t = g_strstrip(g_strdup(text));
    uint64_t cap;
    char *end;

    f->intel_iommu = HOST_FACT_YES;
    errno = 0;
    cap = g_ascii_strtoull(t, &end, 16);
    if (errno || end == t || *end) {
        return;
    }
    f->intel_pi = fact(cap & INTEL_CAP_PI);
}

const char *apicv_mode_name(ApicvMode mode)
{
    static const char *const names[] = {
        [APICV_MODE_NONE] = "none",
        [APICV_MODE_AVIC] = "avic",
        [APICV_MODE_X2AVIC] = "x2avic",
        [APICV_MODE_APICV] = "apicv",
    };
    return names[mode];
}

ApicvMode apicv_host_mode(const KvmApicvHostFacts *f, char **why)
{
    *why = NULL;
    switch (f->vendor) {
    case APICV_VENDOR_AMD:
        if (f->amd_avic == HOST_FACT_UNKNOWN) {
            *why = g_strdup("kvm_amd is not loaded (no "
                            "/sys/module/kvm_amd/parameters/avic)");
            return APICV_MODE_NONE;
        }
        if (f->amd_avic == HOST_FACT_NO) {
            *why = g_strdup("AVIC is disabled in KVM: load kvm_amd with "
                            "avic=1");
            return APICV_MODE_NONE;
        }
        if (f->cpu_avic == HOST_FACT_NO && f->amd_force_avic != HOST_FACT_YES) {
            *why = g_strdup("the CPU has no AVIC (CPUID 0x8000000A EDX[13], "
                            "cpuinfo flag 'avic')");
            return APICV_MODE_NONE;
        }
        return f->cpu_x2avic == HOST_FACT_YES ? APICV_MODE_X2AVIC
                                              : APICV_MODE_AVIC;
    case APICV_VENDOR_INTEL:
        if (f->intel_apicv == HOST_FACT_UNKNOWN) {
            *why = g_strdup("kvm_intel is not loaded (no "
                            "/sys/module/kvm_intel/parameters/enable_apicv)");
            return APICV_MODE_NONE;
        }
        if (f->intel_apicv == HOST_FACT_NO) {
            *why = g_strdup("APICv is disabled in KVM: load kvm_intel with "
                            "enable_apicv=1");
            return APICV_MODE_NONE;
        }
        if (f->vmx_apicv == HOST_FACT_NO ||
            f->vmx_posted_intr == HOST_FACT_NO) {
            *why = g_strdup("the CPU lacks APIC virtualization or posted "
                            "interrupts (cpuinfo 'vmx flags' apicv, "
                            "posted_intr)");
            return APICV_MODE_NONE;
        }
        return APICV_MODE_APICV;
    default:
        *why = g_strdup("not an AMD or Intel host");
        return APICV_MODE_NONE;
    }
}

HostFact apicv_host_device_posting(const KvmApicvHostFacts *f, char **why)
{
    *why = NULL;
    if (f->cap_irqfd == HOST_FACT_NO || f->cap_irq_routing == HOST_FACT_NO) {
        *why = g_strdup("KVM lacks KVM_CAP_IRQFD / KVM_CAP_IRQ_ROUTING, so "
                        "device interrupts go through QEMU");
        return HOST_FACT_NO;
    }
    if (f->cmdline_intremap_off == HOST_FACT_YES) {
        *why = g_strdup("interrupt remapping is off on the host kernel "
                        "command line (intremap=off / *_iommu=off)");
        return HOST_FACT_NO;
    }
    if (f->vendor == APICV_VENDOR_AMD) {
        if (f->amd_iommu == HOST_FACT_UNKNOWN) {
            *why = g_strdup("no AMD IOMMU found in sysfs");
            return HOST_FACT_NO;
        }
        if (f->amd_device_posted == HOST_FACT_NO) {
            *why = g_strdup("disabled in KVM: load kvm_amd with "
                            "enable_device_posted_irqs=1");
            return HOST_FACT_NO;
        }
        if (f->amd_ga == HOST_FACT_NO || f->amd_ga_vapic == HOST_FACT_NO) {
            *why = g_strdup("the AMD IOMMU has no guest vAPIC mode (EFR "
                            "GASup / GAMSup)");
            return HOST_FACT_NO;
        }
        if (f->cmdline_amd_intr_vapic == HOST_FACT_NO) {
            *why = g_strdup("the host uses amd_iommu_intr=legacy*: boot it "
                            "with amd_iommu_intr=vapic");
            return HOST_FACT_NO;
        }
        if (f->amd_ga == HOST_FACT_UNKNOWN ||
            f->cmdline_amd_intr_vapic == HOST_FACT_UNKNOWN) {
            return HOST_FACT_UNKNOWN;
        }
        return HOST_FACT_YES;
    }
    if (f->vendor == APICV_VENDOR_INTEL) {
        if (f->intel_iommu == HOST_FACT_UNKNOWN) {
            *why = g_strdup("no Intel VT-d IOMMU found in sysfs");
            return HOST_FACT_NO;
        }
        if (f->intel_device_posted == HOST_FACT_NO) {
            *why = g_strdup("disabled in KVM: load kvm_intel with "
                            "enable_device_posted_irqs=1");
            return HOST_FACT_NO;
        }
        if (f->intel_pi == HOST_FACT_NO) {
            *why = g_strdup("the VT-d IOMMU has no posted interrupts "
                            "(capability bit 59)");
            return HOST_FACT_NO;
        }
        if (f->cmdline_nopost == HOST_FACT_YES) {
            *why = g_strdup("the host kernel was booted with intremap=nopost");
            return HOST_FACT_NO;
        }
        if (f->intel_pi == HOST_FACT_UNKNOWN ||
            f->cmdline_nopost == HOST_FACT_UNKNOWN) {
            return HOST_FACT_UNKNOWN;
        }
        return HOST_FACT_YES;
    }
    *why = g_strdup("not an AMD or Intel host");
    return HOST_FACT_NO;
}

static void inhibit(ApicvDecision *d, ApicvInhibit i, char *reason)
{
    d->inhibited[i] = true;
    d->inhibit_reason[i] = reason;
}

/* Inhibits the VM's configuration causes on a host offering @mode. */
static void find_inhibits(const KvmApicvHostFacts *f,
                          const KvmApicvVmConfig *vm, ApicvMode mode,
                          ApicvDecision *d)
{
    bool amd = mode == APICV_MODE_AVIC || mode == APICV_MODE_X2AVIC;

    if (!vm->kernel_irqchip) {
        inhibit(d, APICV_INHIBIT_NO_IRQCHIP, g_strdup(
            "kernel-irqchip=off: APIC virtualization needs the in-kernel "
            "local APIC; use kernel-irqchip=split or on"));
    }
    if (amd && vm->pit_in_kernel && vm->pit_reinject) {
        inhibit(d, APICV_INHIBIT_PIT_REINJECT, g_strdup(
            "the in-kernel PIT in reinject mode inhibits AVIC; use "
            "-global kvm-pit.lost_tick_policy=discard"));
    }
    if (vm->hyperv_synic && !vm->hv_avic) {
        inhibit(d, APICV_INHIBIT_HYPERV, g_strdup(
            "Hyper-V SynIC (hv-synic) without hv-avic inhibits APIC "
            "virtualization; add hv-avic to -cpu"));
    }
    if (amd) {
        uint32_t limit = mode == APICV_MODE_X2AVIC && vm->x2apic ?
                         X2AVIC_MAX_APIC_ID : AVIC_MAX_APIC_ID;

        if (vm->max_apic_id > limit) {
            inhibit(d, APICV_INHIBIT_APIC_ID_TOO_BIG, g_strdup_printf(
                "APIC ID %u is above the %s limit of %u; use fewer vCPUs "
                "(-smp)%s", vm->max_apic_id,
                limit == AVIC_MAX_APIC_ID ? "AVIC" : "x2AVIC", limit,
                mode == APICV_MODE_X2AVIC && !vm->x2apic ?
                " or give the guest x2APIC (-cpu ...,+x2apic)" : ""));
        }
        if (mode == APICV_MODE_AVIC && vm->x2apic) {
            inhibit(d, APICV_INHIBIT_X2APIC_WITHOUT_X2AVIC, g_strdup(
                "an x2APIC guest inhibits AVIC on a host without x2AVIC; "
                "use -cpu ...,-x2apic"));
        }
        if (vm->sev) {
            inhibit(d, APICV_INHIBIT_SEV, g_strdup(
                "SEV guests run without AVIC; drop the SEV object"));
        }
        if (vm->nested_svm) {
            inhibit(d, APICV_INHIBIT_NESTED, g_strdup(
                "nested SVM is exposed (-cpu ...,+svm): AVIC is inhibited "
                "while a nested guest runs; use -cpu ...,-svm"));
        }
    }
    if (vm->guest_debug_blockirq) {
        inhibit(d, APICV_INHIBIT_BLOCKIRQ, g_strdup(
            "guest debugging with BLOCKIRQ (single-step from the gdbstub) "
            "inhibits APIC virtualization"));
    }
    (void)f;
}

bool apicv_decide(const KvmApicvHostFacts *f, const KvmApicvVmConfig *vm,
                  OnOffAuto req, OnOffAuto req_posting, ApicvDecision *d,
                  Error **errp)
{
    g_autofree char *host_why = NULL;
    g_autofree char *post_why = NULL;
    HostFact post;
    bool any = false;

    memset(d, 0, sizeof(*d));
    d->host_mode = apicv_host_mode(f, &host_why);
    d->mode = APICV_MODE_NONE;

    if (req != ON_OFF_AUTO_OFF) {
        if (d->host_mode == APICV_MODE_NONE) {
            if (req == ON_OFF_AUTO_ON) {
                error_setg(errp, "-accel kvm,apicv=on: the host offers no "
                           "APIC virtualization: %s", host_why);
                return false;
            }
        } else {
            find_inhibits(f, vm, d->host_mode, d);
            if (req == ON_OFF_AUTO_AUTO && !vm->pit_policy_fixed &&
                d->inhibited[APICV_INHIBIT_PIT_REINJECT]) {
                /* Safe to adjust: the guest loses no ticks it relies on. */
                d->inhibited[APICV_INHIBIT_PIT_REINJECT] = false;
                g_clear_pointer(&d->inhibit_reason[APICV_INHIBIT_PIT_REINJECT],
                                g_free);
                d->set_pit_discard = true;
            }
            for (int i = 0; i < APICV_INHIBIT__MAX; i++) {
                if (d->inhibited[i] && req == ON_OFF_AUTO_ON) {
                    error_setg(errp, "-accel kvm,apicv=on: %s",
                               d->inhibit_reason[i]);
                    apicv_decision_free(d);
                    return false;
                }
                any |= d->inhibited[i];
            }
            if (!any) {
                d->mode = d->host_mode == APICV_MODE_X2AVIC && !vm->x2apic ?
                          APICV_MODE_AVIC : d->host_mode;
            }
        }
    }

    if (req_posting == ON_OFF_AUTO_OFF) {
        d->device_posting = HOST_FACT_NO;
        d->device_posting_why = g_strdup("device-posted-irqs=off");
        return true;
    }
    post = apicv_host_device_posting(f, &post_why);
    if (post != HOST_FACT_NO && d->mode == APICV_MODE_NONE) {
        post = HOST_FACT_NO;
        post_why = g_strdup("posted interrupts need APIC virtualization, "
                            "which this VM does not get");
    }
    if (post != HOST_FACT_YES && req_posting == ON_OFF_AUTO_ON) {
        error_setg(errp, "-accel kvm,device-posted-irqs=on: %s",
                   post_why ? post_why : "the host does not say whether it "
                   "can post device interrupts");
        apicv_decision_free(d);
        return false;
    }
    d->device_posting = post;
    d->device_posting_why = g_steal_pointer(&post_why);
    return true;
}

void apicv_decision_free(ApicvDecision *d)
{
    for (int i = 0; i < APICV_INHIBIT__MAX; i++) {
        g_clear_pointer(&d->inhibit_reason[i], g_free);
    }
    g_clear_pointer(&d->device_posting_why, g_free);
}
