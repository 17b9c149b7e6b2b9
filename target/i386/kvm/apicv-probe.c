/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Host probe and decision table for KVM APIC virtualization (AVIC,
 * x2AVIC, APICv) and device posted interrupts: see apicv-probe.h.
 *
 * The inhibits mirror the reasons KVM itself uses to turn APIC
 * virtualization off for a VM (no in-kernel irqchip, PIT in reinject
 * mode with AVIC, Hyper-V SynIC / AutoEOI, APIC IDs beyond what
 * AVIC/x2AVIC address, SEV, nested SVM, an x2APIC guest on an AVIC-only
 * host), each under the kernel releases it holds for (ApicvRule).
 * Guest debugging (BLOCKIRQ) and the transient inhibits (IRQ window,
 * ExtINT, APIC ID or base changed by the guest) are not configuration
 * and not predicted: the tracepoint reader (apicv-trace.c) shows them.
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/host-utils.h"
#include "apicv-probe.h"

/* Extended feature register bits of the AMD IOMMU */
#define AMD_EFR_XT          (1ULL << 2)
#define AMD_EFR_GA          (1ULL << 7)
#define AMD_EFR_GAM_SHIFT   21
/* Intel VT-d capability register: posted interrupts */
#define INTEL_CAP_PI        (1ULL << 59)

void apicv_facts_init(KvmApicvHostFacts *f)
{
    HostFact *const all[] = {
        &f->cpu_avic, &f->cpu_x2avic, &f->cpu_x2avic_ext, &f->cpu_x2apic,
        &f->cpu_hypervisor, &f->amd_nested,
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
    f->kernel = 0;
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
                    /* Linux: "on" re-enables posting too */
                    f->cmdline_intremap_off = HOST_FACT_NO;
                    f->cmdline_nopost = HOST_FACT_NO;
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

int apicv_parse_kernel_release(const char *release)
{
    int major, minor;

    if (!release || sscanf(release, "%d.%d", &major, &minor) != 2 ||
        major < 2 || minor < 0 || minor > 999) {
        return 0;
    }
    return APICV_KVER(major, minor);
}

static bool parse_hex64(const char *text, uint64_t *v)
{
    char *end;

    errno = 0;
    *v = g_ascii_strtoull(text, &end, 16);
    return !errno && end != text && !*end;
}

void apicv_parse_amd_iommu_features(KvmApicvHostFacts *f, const char *text)
{
    g_autofree char *t = g_strstrip(g_strdup(text));
    g_auto(GStrv) fields = g_strsplit(t, ":", -1);
    uint64_t a, b, efr;

    f->amd_iommu = HOST_FACT_YES;
    if (g_strv_length(fields) == 1) {
        if (!parse_hex64(fields[0], &efr)) {
            return;
        }
    } else if (g_strv_length(fields) == 2 && parse_hex64(fields[0], &a) &&
               parse_hex64(fields[1], &b)) {
        /*
         * Linux printed "EFR2:EFR" at first and "EFR:EFR2" later.  The
         * EFR of an IOMMU that remaps interrupts has many feature bits
         * (prefetch, PPR, NX, GT, IA, HATS, ...); EFR2 has a few or none.
         */
        if (ctpop64(a) == ctpop64(b)) {
            return;         /* cannot tell which one is the EFR */
        }
        efr = ctpop64(a) > ctpop64(b) ? a : b;
    } else {
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

const char *apicv_inhibit_name(ApicvInhibit i)
{
    static const char *const names[] = {
        [APICV_INHIBIT_NO_IRQCHIP] = "no-irqchip",
        [APICV_INHIBIT_PIT_REINJECT] = "pit-reinject",
        [APICV_INHIBIT_HYPERV] = "hyperv",
        [APICV_INHIBIT_APIC_ID_TOO_BIG] = "apic-id-too-big",
        [APICV_INHIBIT_X2APIC_WITHOUT_X2AVIC] = "x2apic-without-x2avic",
        [APICV_INHIBIT_SEV] = "sev",
        [APICV_INHIBIT_NESTED] = "nested",
    };
    return names[i];
}

const char *apicv_kvm_inhibit_bit_name(int kernel, int bit)
{
    /* enum kvm_apicv_inhibit: renumbered in 5.19, 6.0 and about 6.3 */
    static const char *const v5_19[] = {
        "DISABLE", "HYPERV", "ABSENT", "BLOCKIRQ", "APIC_ID_MODIFIED",
        "APIC_BASE_MODIFIED", "NESTED", "IRQWIN", "PIT_REINJ", "X2APIC",
        "SEV",
    };
    static const char *const v6_0[] = {
        "DISABLE", "HYPERV", "ABSENT", "BLOCKIRQ", "APIC_ID_MODIFIED",
        "APIC_BASE_MODIFIED", "NESTED", "IRQWIN", "PIT_REINJ", "SEV",
    };
    static const char *const v6_5[] = {
        "DISABLED", "HYPERV", "ABSENT", "BLOCKIRQ", "PHYSICAL_ID_ALIASED",
        "APIC_ID_MODIFIED", "APIC_BASE_MODIFIED", "NESTED", "IRQWIN",
        "PIT_REINJ", "SEV", "LOGICAL_ID_ALIASED", "PHYSICAL_ID_TOO_BIG",
    };
    const char *const *names;
    int n;

    if (kernel >= APICV_KVER(6, 5)) {
        names = v6_5, n = ARRAY_SIZE(v6_5);
    } else if (kernel >= APICV_KVER(6, 0) && kernel <= APICV_KVER(6, 1)) {
        names = v6_0, n = ARRAY_SIZE(v6_0);
    } else if (kernel == APICV_KVER(5, 19)) {
        names = v5_19, n = ARRAY_SIZE(v5_19);
    } else {
        return NULL;        /* not read, or no kvm_apicv_inhibit_changed */
    }
    if (bit == 0 && kernel < APICV_KVER(6, 11)) {
        return "DISABLE";           /* renamed in 6.11 (f992572120fb) */
    }
    return bit >= 0 && bit < n ? names[bit] : NULL;
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

/*
 * The rules, each with the host kernels it holds for.  from/until are
 * APICV_KVER() bounds, until exclusive, 0 open.  Sources: Linux
 * arch/x86/kvm/{x86.c,i8254.c,hyperv.c,svm/avic.c,svm/svm.c,svm/sev.c}.
 */
typedef struct ApicvRule {
    int from, until;
    const char *text;
} ApicvRule;

/*
 * Nested SVM in CPUID (with kvm_amd.nested=1): a sticky VM-wide inhibit
 * (svm_vcpu_after_set_cpuid()) until f44509f849fe "KVM: x86: SVM: allow
 * AVIC to co-exist with a nested guest running" (5.19); since, only per
 * vCPU while it runs L2, which is not traced.
 */
static const ApicvRule rule_nested_vm_wide = {
    0, APICV_KVER(5, 19),
    "Linux before 5.19: nested SVM in the guest's CPUID inhibits AVIC "
    "VM-wide; since 5.19 (f44509f849fe) only per vCPU while it runs L2",
};
/*
 * x2APIC in the guest's CPUID: a sticky VM-wide inhibit until
 * 0e311d33bfbe "KVM: SVM: Introduce hybrid-AVIC mode" (6.0); 5.x never
 * uses x2AVIC, even on a CPU that has it.
 */
static const ApicvRule rule_x2apic = {
    0, APICV_KVER(6, 0),
    "Linux before 6.0: an x2APIC guest inhibits AVIC; since 6.0 "
    "(0e311d33bfbe, hybrid AVIC) x2APIC accesses trap and AVIC stays",
};
/*
 * Hyper-V: kvm_hv_activate_synic() inhibited for good until
 * 0f250a646382 "KVM: x86: hyper-v: Deactivate APICv only when AutoEOI
 * feature is in use" (5.15); since, only while a SINT uses AutoEOI.
 */
static const ApicvRule rule_hyperv_synic = {
    0, APICV_KVER(5, 15),
    "Linux before 5.15: activating Hyper-V SynIC inhibits APIC "
    "virtualization; since 5.15 (0f250a646382) only while a vCPU uses "
    "AutoEOI",
};
/*
 * avic_init_backing_page(): -EINVAL for a vCPU ID above the table until
 * 1aa6e256e46f "KVM: SVM: Inhibit AVIC if ID is too big instead of
 * rejecting vCPU creation" (6.17).
 */
static const ApicvRule rule_id_create_fails = {
    0, APICV_KVER(6, 17),
    "Linux before 6.17: KVM_CREATE_VCPU fails for a vCPU ID above the "
    "AVIC/x2AVIC table when AVIC is enabled; since 6.17 (1aa6e256e46f) "
    "AVIC is inhibited instead (PHYSICAL_ID_TOO_BIG)",
};
/* x2AVIC itself: 4d1d7942e36a (6.0); 4096 vCPUs: 940fc47cfb0d (6.19) */
static const ApicvRule rule_x2avic = {
    APICV_KVER(6, 0), 0, "Linux 6.0+ (4d1d7942e36a) uses x2AVIC",
};
static const ApicvRule rule_x2avic_4k = {
    APICV_KVER(6, 19), 0,
    "Linux 6.19+ (940fc47cfb0d) addresses 4096 vCPUs with X2AVIC_EXT",
};
/* SEV: kvm_set_apicv_inhibit(SEV) in sev_guest_init() since 5.19 */
static const ApicvRule rule_sev = {
    APICV_KVER(5, 19), 0,
    "Linux 5.19+: SEV guests run without AVIC (APICV_INHIBIT_REASON_SEV; "
    "5.18 not confirmed)",
};
static const ApicvRule rule_always = {
    0, 0, "all kernels",
};

/* YES if the host kernel is in [from, until), UNKNOWN if not known. */
static HostFact rule_applies(const KvmApicvHostFacts *f, const ApicvRule *r)
{
    if (!r->from && !r->until) {
        return HOST_FACT_YES;
    }
    if (!f->kernel) {
        return HOST_FACT_UNKNOWN;
    }
    return fact(f->kernel >= r->from && (!r->until || f->kernel < r->until));
}

ApicvMode apicv_host_mode(const KvmApicvHostFacts *f, char **why)
{
    *why = NULL;
    switch (f->vendor) {
    case APICV_VENDOR_AMD:
        /* kvm_amd reads back avic=N when the CPU lacks it: say why. */
        if (f->cpu_avic == HOST_FACT_NO && f->amd_force_avic != HOST_FACT_YES) {
            *why = g_strdup("the CPU has no AVIC (CPUID 0x8000000A EDX[13], "
                            "cpuinfo flag 'avic')");
            return APICV_MODE_NONE;
        }
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
        return f->cpu_x2avic == HOST_FACT_YES &&
               rule_applies(f, &rule_x2avic) != HOST_FACT_NO ?
               APICV_MODE_X2AVIC : APICV_MODE_AVIC;
    case APICV_VENDOR_INTEL:
        if (f->vmx_apicv == HOST_FACT_NO ||
            f->vmx_posted_intr == HOST_FACT_NO) {
            *why = g_strdup("the CPU lacks APIC virtualization or posted "
                            "interrupts (cpuinfo 'vmx flags' apicv, "
                            "posted_intr)");
            return APICV_MODE_NONE;
        }
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
        return APICV_MODE_APICV;
    default:
        *why = g_strdup("not an AMD or Intel host");
        return APICV_MODE_NONE;
    }
}

static HostFact amd_iommu_can_post(const KvmApicvHostFacts *f, char **why)
{
    if (f->amd_iommu != HOST_FACT_YES) {
        *why = g_strdup("no AMD IOMMU found in sysfs");
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
    /* drivers/iommu/amd: intremap=nopost clears IRQ_POSTING_CAP too */
    if (f->cmdline_nopost == HOST_FACT_YES) {
        *why = g_strdup("the host kernel was booted with intremap=nopost");
        return HOST_FACT_NO;
    }
    if (f->amd_ga == HOST_FACT_UNKNOWN ||
        f->amd_ga_vapic == HOST_FACT_UNKNOWN ||
        f->cmdline_amd_intr_vapic == HOST_FACT_UNKNOWN) {
        return HOST_FACT_UNKNOWN;
    }
    return HOST_FACT_YES;
}

static HostFact intel_iommu_can_post(const KvmApicvHostFacts *f, char **why)
{
    if (f->intel_iommu != HOST_FACT_YES) {
        *why = g_strdup("no Intel VT-d IOMMU found in sysfs");
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

HostFact apicv_host_device_posting(const KvmApicvHostFacts *f, char **why)
{
    bool amd = f->vendor == APICV_VENDOR_AMD;
    HostFact kvm_says = amd ? f->amd_device_posted : f->intel_device_posted;
    g_autofree char *mode_why = NULL;
    g_autofree char *iommu_why = NULL;
    HostFact iommu;

    *why = NULL;
    if (f->vendor == APICV_VENDOR_UNKNOWN) {
        *why = g_strdup("not an AMD or Intel host");
        return HOST_FACT_NO;
    }
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
    if (apicv_host_mode(f, &mode_why) == APICV_MODE_NONE) {
        *why = g_strdup_printf("posting needs APIC virtualization: %s",
                               mode_why);
        return HOST_FACT_NO;
    }
    iommu = amd ? amd_iommu_can_post(f, &iommu_why)
                : intel_iommu_can_post(f, &iommu_why);
    /*
     * Kernels with enable_device_posted_irqs (459074cff66f, Linux 6.16)
     * compute it from AVIC/APICv and the IOMMU's IRQ_POSTING_CAP: that
     * is the host's own verdict; explain a "no" with the facts seen.
     */
    if (kvm_says == HOST_FACT_NO) {
        *why = g_strdup_printf("KVM reports %s.enable_device_posted_irqs=N%s%s",
                               amd ? "kvm_amd" : "kvm_intel",
                               iommu_why ? ": " : " (disabled by the module "
                               "parameter, or the IOMMU lacks "
                               "IRQ_POSTING_CAP)",
                               iommu_why ? iommu_why : "");
        return HOST_FACT_NO;
    }
    if (kvm_says == HOST_FACT_YES) {
        return HOST_FACT_YES;
    }
    *why = g_steal_pointer(&iommu_why);
    return iommu;
}

/* Highest vCPU ID in the AVIC (xAPIC) and x2AVIC physical ID tables. */
#define AVIC_MAX_VCPU_ID        0xfe
#define X2AVIC_MAX_VCPU_ID      0x1ff
#define X2AVIC_4K_MAX_VCPU_ID   0xfff

int apicv_avic_max_vcpu_id(const KvmApicvHostFacts *f)
{
    g_autofree char *why = NULL;
    ApicvMode mode = apicv_host_mode(f, &why);

    if (mode != APICV_MODE_AVIC && mode != APICV_MODE_X2AVIC) {
        return -1;
    }
    /* x2avic_enabled is host-wide: the guest's x2APIC does not matter */
    if (mode == APICV_MODE_AVIC) {
        return AVIC_MAX_VCPU_ID;
    }
    return f->cpu_x2avic_ext == HOST_FACT_YES &&
           rule_applies(f, &rule_x2avic_4k) == HOST_FACT_YES ?
           X2AVIC_4K_MAX_VCPU_ID : X2AVIC_MAX_VCPU_ID;
}

bool apicv_check_vcpu_id(const KvmApicvHostFacts *f, uint32_t apic_id,
                         Error **errp)
{
    ERRP_GUARD();
    int max = apicv_avic_max_vcpu_id(f);

    if (max < 0 || apic_id <= max ||
        rule_applies(f, &rule_id_create_fails) != HOST_FACT_YES) {
        return true;
    }
    error_setg(errp, "KVM on this host cannot create a vCPU with APIC ID %u "
               "while AVIC is enabled (limit %d)", apic_id, max);
    error_append_hint(errp, "%s.\nUse fewer vCPUs (-smp), or load kvm_amd "
                      "with avic=0 on the host.\n", rule_id_create_fails.text);
    return false;
}

static void predict(ApicvDecision *d, ApicvInhibit i, HostFact applies,
                    const ApicvRule *rule, char *detail, char *fix)
{
    ApicvInhibitPrediction *p = &d->inhibit[i];

    if (applies == HOST_FACT_NO) {
        g_free(detail);
        g_free(fix);
        return;
    }
    p->likelihood = applies == HOST_FACT_YES ? APICV_INHIBIT_CERTAIN
                                             : APICV_INHIBIT_POSSIBLE;
    p->detail = detail;
    p->fix = fix;
    p->rule = rule->text;
}

/*
 * Inhibits the VM's configuration causes.  KVM computes them on every
 * host (its tracepoint shows them even with AVIC off), so they are
 * predicted for the vendor's rules, not only when the host has AVIC.
 */
static void find_inhibits(const KvmApicvHostFacts *f,
                          const KvmApicvVmConfig *vm, ApicvDecision *d)
{
    bool amd = f->vendor == APICV_VENDOR_AMD;

    if (!vm->kernel_irqchip) {
        predict(d, APICV_INHIBIT_NO_IRQCHIP, HOST_FACT_YES, &rule_always,
                g_strdup("kernel-irqchip=off: the local APIC is emulated "
                         "by QEMU"),
                g_strdup("use -M ...,kernel-irqchip=split or on"));
    }
    if (amd && vm->pit_in_kernel && vm->pit_reinject) {
        predict(d, APICV_INHIBIT_PIT_REINJECT, HOST_FACT_YES, &rule_always,
                g_strdup("the in-kernel PIT re-injects lost ticks "
                         "(lost_tick_policy=delay, the default)"),
                g_strdup("use -global kvm-pit.lost_tick_policy=discard "
                         "(libvirt: <timer name='pit' tickpolicy='discard'/>), "
                         "or -accel kvm,apicv-pit-discard=on, or "
                         "-M ...,kernel-irqchip=split"));
    }
    if (vm->hyperv_synic) {
        HostFact old = rule_applies(f, &rule_hyperv_synic);

        /* Since 5.15 hv-avic tells the guest not to use AutoEOI. */
        predict(d, APICV_INHIBIT_HYPERV,
                old == HOST_FACT_YES ? HOST_FACT_YES :
                old == HOST_FACT_NO && vm->hv_avic ? HOST_FACT_NO :
                HOST_FACT_UNKNOWN, &rule_hyperv_synic,
                g_strdup(old == HOST_FACT_YES ?
                         "Hyper-V SynIC (hv-synic) is exposed" :
                         "Hyper-V SynIC without hv-avic: the guest may use "
                         "AutoEOI"),
                g_strdup(old == HOST_FACT_YES ?
                         "drop hv-synic, or run the host on Linux 5.15+ "
                         "with hv-avic" : "add hv-avic to -cpu"));
    }
    if (amd) {
        int max = apicv_avic_max_vcpu_id(f);

        /*
         * Below 6.17 such a vCPU is refused at creation (see above), so
         * only one hot-plugged later can matter there; since, creating
         * it inhibits AVIC.
         */
        uint32_t id = MAX(vm->max_apic_id, vm->max_possible_apic_id);

        if (max >= 0 && id > max) {
            bool since = rule_applies(f, &rule_id_create_fails) ==
                         HOST_FACT_NO;

            predict(d, APICV_INHIBIT_APIC_ID_TOO_BIG,
                    since && vm->max_apic_id > max ?
                    HOST_FACT_YES : HOST_FACT_UNKNOWN, &rule_id_create_fails,
                    g_strdup_printf("APIC ID %u%s is above the %s limit of %d",
                                    id, vm->max_apic_id > max ? "" :
                                    " (a hot-pluggable vCPU)",
                                    max == AVIC_MAX_VCPU_ID ? "AVIC" :
                                    "x2AVIC", max),
                    g_strdup("use fewer vCPUs (-smp)"));
        }
        if (vm->x2apic) {
            predict(d, APICV_INHIBIT_X2APIC_WITHOUT_X2AVIC,
                    rule_applies(f, &rule_x2apic), &rule_x2apic,
                    g_strdup("the guest has x2APIC and the host kernel "
                             "does not use x2AVIC"),
                    g_strdup("run the host on Linux 6.0+, or use "
                             "-cpu ...,-x2apic"));
        }
        if (vm->sev) {
            HostFact applies = rule_applies(f, &rule_sev);

            if (f->kernel == APICV_KVER(5, 18)) {
                applies = HOST_FACT_UNKNOWN;
            }
            predict(d, APICV_INHIBIT_SEV, applies, &rule_sev,
                    g_strdup("SEV guests run without AVIC"),
                    g_strdup("drop the sev-guest object"));
        }
        if (vm->nested_svm && f->amd_nested != HOST_FACT_NO) {
            HostFact applies = rule_applies(f, &rule_nested_vm_wide);

            if (applies == HOST_FACT_YES &&
                f->amd_nested == HOST_FACT_UNKNOWN) {
                applies = HOST_FACT_UNKNOWN;
            }
            predict(d, APICV_INHIBIT_NESTED, applies, &rule_nested_vm_wide,
                    g_strdup("nested SVM is exposed to the guest (svm in "
                             "-cpu, e.g. -cpu host)"),
                    g_strdup("use -cpu ...,-svm, or run the host on Linux "
                             "5.19+"));
        }
    }
}

bool apicv_decide(const KvmApicvHostFacts *f, const KvmApicvVmConfig *vm,
                  OnOffAuto req, OnOffAuto req_posting, ApicvDecision *d,
                  Error **errp)
{
    g_autofree char *host_why = NULL;
    g_autofree char *post_why = NULL;
    bool certain = false;
    HostFact post;

    memset(d, 0, sizeof(*d));
    d->host_mode = apicv_host_mode(f, &host_why);
    find_inhibits(f, vm, d);
    for (int i = 0; i < APICV_INHIBIT__MAX; i++) {
        certain |= d->inhibit[i].likelihood == APICV_INHIBIT_CERTAIN;
    }
    d->mode = certain ? APICV_MODE_NONE : d->host_mode;
    if (d->mode == APICV_MODE_X2AVIC && !vm->x2apic) {
        d->mode = APICV_MODE_AVIC;
    }

    if (req == ON_OFF_AUTO_ON && d->host_mode == APICV_MODE_NONE) {
        error_setg(errp, "-accel kvm,apicv=on: the host offers no APIC "
                   "virtualization: %s", host_why);
        goto fail;
    }
    if (req == ON_OFF_AUTO_ON && certain) {
        g_autoptr(GString) names = g_string_new("");

        for (int i = 0; i < APICV_INHIBIT__MAX; i++) {
            if (d->inhibit[i].likelihood == APICV_INHIBIT_CERTAIN) {
                g_string_append_printf(names, "%s%s", names->len ? ", " : "",
                                       apicv_inhibit_name(i));
            }
        }
        error_setg(errp, "-accel kvm,apicv=on: KVM would inhibit %s for this "
                   "VM: %s", apicv_mode_name(d->host_mode), names->str);
        for (int i = 0; i < APICV_INHIBIT__MAX; i++) {
            const ApicvInhibitPrediction *p = &d->inhibit[i];

            if (p->likelihood == APICV_INHIBIT_CERTAIN) {
                error_append_hint(errp, "%s: %s (%s)\n", p->detail, p->fix,
                                  p->rule);
            }
        }
        goto fail;
    }
    if (req == ON_OFF_AUTO_OFF && d->mode != APICV_MODE_NONE) {
        const char *amd = f->vendor == APICV_VENDOR_AMD ? "kvm_amd avic=0"
                                                        : "kvm_intel "
                                                          "enable_apicv=0";

        error_setg(errp, "-accel kvm,apicv=off: KVM has no per-VM switch for "
                   "APIC virtualization, and this VM would run with %s",
                   apicv_mode_name(d->mode));
        error_append_hint(errp, "Turn it off host-wide (load %s), or for "
                          "this VM only with -M ...,kernel-irqchip=off (the "
                          "local APIC then emulated by QEMU), or use "
                          "apicv=auto.\n", amd);
        goto fail;
    }

    if (req_posting == ON_OFF_AUTO_OFF) {
        d->device_posting = HOST_FACT_NO;
        d->device_posting_why = g_strdup("device-posted-irqs=off: VFIO "
                                         "MSI/MSI-X are relayed by QEMU");
        return true;
    }
    post = apicv_host_device_posting(f, &post_why);
    /* What this VM's configuration leaves of the host's capability */
    if (post != HOST_FACT_NO && !vm->kernel_irqchip) {
        post = HOST_FACT_NO;
        g_free(post_why);
        post_why = g_strdup("kernel-irqchip=off: KVM posts only to an "
                            "in-kernel local APIC");
    } else if (post != HOST_FACT_NO && certain &&
               f->vendor == APICV_VENDOR_AMD) {
        /* avic_pi_update_irte() keeps remapped mode while inhibited */
        post = HOST_FACT_NO;
        g_free(post_why);
        post_why = g_strdup("AVIC is inhibited for this VM (see the "
                            "inhibits): KVM keeps its IRTEs in remapped mode");
    }
    if (post != HOST_FACT_YES && req_posting == ON_OFF_AUTO_ON) {
        error_setg(errp, "-accel kvm,device-posted-irqs=on: %s",
                   post_why ? post_why : "the host does not say whether it "
                   "can post device interrupts");
        goto fail;
    }
    d->device_posting = post;
    d->device_posting_why = g_steal_pointer(&post_why);
    return true;

fail:
    apicv_decision_free(d);
    return false;
}

void apicv_decision_free(ApicvDecision *d)
{
    for (int i = 0; i < APICV_INHIBIT__MAX; i++) {
        g_clear_pointer(&d->inhibit[i].detail, g_free);
        g_clear_pointer(&d->inhibit[i].fix, g_free);
    }
    g_clear_pointer(&d->device_posting_why, g_free);
}
