/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Reads the host files the APIC virtualization probe needs
 * (target/i386/kvm/apicv-probe.h) into a KvmApicvHostFacts snapshot:
 * /proc/cpuinfo, /proc/cmdline, the kernel release, kvm_amd / kvm_intel
 * module parameters and the IOMMUs in /sys/class/iommu.  @root is
 * prepended to every path ("" on a real host; a fixture tree in the
 * unit tests).  A file that is missing or unreadable leaves its facts
 * unknown.  KVM capabilities are filled in by the caller
 * (apicv-negotiate.c), which has the KVM state.
 */

#include "qemu/osdep.h"
#include "apicv-probe.h"
#include "apicv-host.h"

static char *read_host_file(const char *root, const char *path)
{
    g_autofree char *full = g_strconcat(root, path, NULL);
    char *text = NULL;

    if (!g_file_get_contents(full, &text, NULL, NULL)) {
        return NULL;
    }
    return text;
}

static HostFact read_param(const char *root, const char *module,
                           const char *param)
{
    g_autofree char *path = g_strdup_printf("/sys/module/%s/parameters/%s",
                                            module, param);
    g_autofree char *text = read_host_file(root, path);

    return text ? apicv_parse_bool_param(text) : HOST_FACT_UNKNOWN;
}

/* Every IOMMU in /sys/class/iommu: all must agree for a "yes". */
static void read_iommus(KvmApicvHostFacts *f, const char *root)
{
    g_autofree char *dir_path = g_strconcat(root, "/sys/class/iommu", NULL);
    g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
    const char *name;

    if (!dir) {
        return;
    }
    while ((name = g_dir_read_name(dir))) {
        g_autofree char *amd = g_strdup_printf("/sys/class/iommu/%s/"
                                               "amd-iommu/features", name);
        g_autofree char *intel = g_strdup_printf("/sys/class/iommu/%s/"
                                                 "intel-iommu/cap", name);
        g_autofree char *text = read_host_file(root, amd);
        KvmApicvHostFacts one;

        apicv_facts_init(&one);
        if (text) {
            bool first = f->amd_iommu != HOST_FACT_YES;

            apicv_parse_amd_iommu_features(&one, text);
            f->amd_iommu = HOST_FACT_YES;
            f->amd_ga = first ? one.amd_ga : apicv_fact_and(f->amd_ga,
                                                            one.amd_ga);
            f->amd_ga_vapic = first ? one.amd_ga_vapic :
                              apicv_fact_and(f->amd_ga_vapic, one.amd_ga_vapic);
            f->amd_xt = first ? one.amd_xt : apicv_fact_and(f->amd_xt,
                                                            one.amd_xt);
            continue;
        }
        text = read_host_file(root, intel);
        if (text) {
            bool first = f->intel_iommu != HOST_FACT_YES;

            apicv_parse_intel_iommu_cap(&one, text);
            f->intel_iommu = HOST_FACT_YES;
            f->intel_pi = first ? one.intel_pi : apicv_fact_and(f->intel_pi,
                                                                one.intel_pi);
        }
    }
}

void apicv_read_host_facts(KvmApicvHostFacts *f, const char *root,
                           const char *kernel_release)
{
    g_autofree char *cpuinfo = read_host_file(root, "/proc/cpuinfo");
    g_autofree char *cmdline = read_host_file(root, "/proc/cmdline");

    apicv_facts_init(f);
    f->kernel = apicv_parse_kernel_release(kernel_release);
    if (cpuinfo) {
        apicv_parse_cpuinfo(f, cpuinfo);
    }
    if (cmdline) {
        apicv_parse_cmdline(f, cmdline);
    }

    f->amd_avic = read_param(root, "kvm_amd", "avic");
    f->amd_force_avic = read_param(root, "kvm_amd", "force_avic");
    f->amd_nested = read_param(root, "kvm_amd", "nested");
    f->amd_ipiv = read_param(root, "kvm_amd", "enable_ipiv");
    f->amd_device_posted = read_param(root, "kvm_amd",
                                      "enable_device_posted_irqs");
    f->intel_apicv = read_param(root, "kvm_intel", "enable_apicv");
    f->intel_ipiv = read_param(root, "kvm_intel", "enable_ipiv");
    f->intel_device_posted = read_param(root, "kvm_intel",
                                        "enable_device_posted_irqs");

    read_iommus(f, root);
}

HostFact apicv_fact_and(HostFact a, HostFact b)
{
    /* every IOMMU must say yes; a no wins over an unknown */
    if (a == HOST_FACT_NO || b == HOST_FACT_NO) {
        return HOST_FACT_NO;
    }
    return a == HOST_FACT_YES && b == HOST_FACT_YES ? HOST_FACT_YES
                                                    : HOST_FACT_UNKNOWN;
}

const char *apicv_fact_name(HostFact v)
{
    return v == HOST_FACT_YES ? "yes" : v == HOST_FACT_NO ? "no" : "unknown";
}

void apicv_host_facts_foreach(const KvmApicvHostFacts *f,
                              ApicvHostFactFn *fn, void *opaque)
{
    static const struct {
        const char *name;
        size_t offset;
    } facts[] = {
#define FACT(n, field) { n, offsetof(KvmApicvHostFacts, field) }
        FACT("cpu.avic", cpu_avic),
        FACT("cpu.x2avic", cpu_x2avic),
        FACT("cpu.x2avic_ext", cpu_x2avic_ext),
        FACT("cpu.x2apic", cpu_x2apic),
        FACT("cpu.hypervisor", cpu_hypervisor),
        FACT("cpu.vmx-posted-intr", vmx_posted_intr),
        FACT("cpu.vmx-apicv", vmx_apicv),
        FACT("kvm_amd.avic", amd_avic),
        FACT("kvm_amd.force_avic", amd_force_avic),
        FACT("kvm_amd.nested", amd_nested),
        FACT("kvm_amd.enable_ipiv", amd_ipiv),
        FACT("kvm_amd.enable_device_posted_irqs", amd_device_posted),
        FACT("kvm_intel.enable_apicv", intel_apicv),
        FACT("kvm_intel.enable_ipiv", intel_ipiv),
        FACT("kvm_intel.enable_device_posted_irqs", intel_device_posted),
        FACT("amd-iommu", amd_iommu),
        FACT("amd-iommu.ga", amd_ga),
        FACT("amd-iommu.ga-vapic", amd_ga_vapic),
        FACT("amd-iommu.xt", amd_xt),
        FACT("intel-iommu", intel_iommu),
        FACT("intel-iommu.posted-interrupts", intel_pi),
        FACT("cmdline.intremap-off", cmdline_intremap_off),
        FACT("cmdline.intremap-nopost", cmdline_nopost),
        FACT("cmdline.amd_iommu_intr-vapic", cmdline_amd_intr_vapic),
        FACT("cmdline.intremap-posted_msi", cmdline_posted_msi),
        FACT("cap.irqfd", cap_irqfd),
        FACT("cap.irq-routing", cap_irq_routing),
        FACT("cap.split-irqchip", cap_split_irqchip),
        FACT("cap.x2apic-api", cap_x2apic_api),
#undef FACT
    };
    g_autofree char *max = f->max_vcpu_id < 0 ? g_strdup("unknown") :
                           g_strdup_printf("%d", f->max_vcpu_id);

    g_autofree char *kernel = f->kernel ?
        g_strdup_printf("%d.%d", f->kernel / 1000, f->kernel % 1000) :
        g_strdup("unknown");

    fn(opaque, "vendor", f->vendor == APICV_VENDOR_AMD ? "amd" :
                         f->vendor == APICV_VENDOR_INTEL ? "intel" : "unknown");
    fn(opaque, "kernel", kernel);
    for (size_t i = 0; i < ARRAY_SIZE(facts); i++) {
        const HostFact *v = (const void *)((const char *)f + facts[i].offset);

        fn(opaque, facts[i].name, apicv_fact_name(*v));
    }
    fn(opaque, "cap.max-vcpu-id", max);
}
