/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests of the KVM APIC virtualization / device posting probe and
 * decision table (target/i386/kvm/apicv-probe.c) on fixture hosts in
 * the real file formats: AMD Zen 4 (AVIC + x2AVIC), Zen 2 (AVIC only),
 * AMD with avic=0, Intel with APICv and VT-d posted interrupts, Intel
 * booted with intremap=nopost, a host without IOMMU, and a nested guest
 * used as a host; each with VM configurations hitting each inhibit.
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "target/i386/kvm/apicv-probe.h"

static const char zen4_cpuinfo[] =
    "processor\t: 0\n"
    "vendor_id\t: AuthenticAMD\n"
    "cpu family\t: 25\n"
    "model name\t: AMD EPYC 9654 96-Core Processor\n"
    "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca "
    "cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx mmxext "
    "fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl nonstop_tsc "
    "cpuid extd_apicid aperfmperf rapl pni pclmulqdq monitor ssse3 fma "
    "cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c "
    "rdrand lahf_lm cmp_legacy svm extapic cr8_legacy abm sse4a "
    "misalignsse 3dnowprefetch osvw ibs skinit wdt tce topoext "
    "perfctr_core npt lbrv svm_lock nrip_save tsc_scale vmcb_clean "
    "flushbyasid decodeassists pausefilter pfthreshold avic "
    "v_vmsave_vmload vgif x2avic v_spec_ctrl vnmi avx512_vnni\n"
    "bugs\t\t: sysret_ss_attrs spectre_v1 spectre_v2\n"
    "\n"
    "processor\t: 1\n"
    "vendor_id\t: AuthenticAMD\n";

static const char zen2_cpuinfo[] =
    "processor\t: 0\n"
    "vendor_id\t: AuthenticAMD\n"
    "model name\t: AMD EPYC 7702 64-Core Processor\n"
    "flags\t\t: fpu vme de pse tsc msr pae x2apic svm extapic npt lbrv "
    "svm_lock nrip_save tsc_scale vmcb_clean flushbyasid decodeassists "
    "pausefilter pfthreshold avic v_vmsave_vmload vgif\n";

static const char nested_cpuinfo[] =
    "processor\t: 0\n"
    "vendor_id\t: AuthenticAMD\n"
    "flags\t\t: fpu vme de pse tsc msr pae x2apic hypervisor svm npt "
    "nrip_save\n";

static const char intel_cpuinfo[] =
    "processor\t: 0\n"
    "vendor_id\t: GenuineIntel\n"
    "model name\t: Intel(R) Xeon(R) Platinum 8480+\n"
    "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic x2apic vmx\n"
    "vmx flags\t: vnmi preemption_timer posted_intr invvpid ept_x_only "
    "ept_ad ept_1gb flexpriority apicv tsc_offset vtpr mtf vapic ept vpid "
    "unrestricted_guest vapic_reg vid ple shadow_vmcs pml ipi_virt\n";

/* EFR values: GASup (bit 7), GAMSup=1 (23:21), XTSup (bit 2). */
#define ZEN4_EFR  "246577efa2254afe"
#define ZEN2_EFR  "58f77ef22294ade"
#define NO_GA_EFR "58f77ef2229456e"

static void amd_host(KvmApicvHostFacts *f, const char *cpuinfo,
                     const char *avic, const char *features,
                     const char *release)
{
    apicv_facts_init(f);
    apicv_parse_cpuinfo(f, cpuinfo);
    f->amd_avic = apicv_parse_bool_param(avic);
    f->amd_force_avic = apicv_parse_bool_param("N\n");
    f->amd_ipiv = apicv_parse_bool_param("Y\n");
    if (features) {
        apicv_parse_amd_iommu_features(f, features, release);
    }
    apicv_parse_cmdline(f, "BOOT_IMAGE=/vmlinuz-6.8.0 root=/dev/sda1 ro "
                        "quiet iommu=pt\n");
}

static void zen4(KvmApicvHostFacts *f)
{
    amd_host(f, zen4_cpuinfo, "Y\n", ZEN4_EFR ":0\n", "6.8.0-45-generic");
}

static void zen2(KvmApicvHostFacts *f)
{
    /* Linux 6.1 prints EFR2 first. */
    amd_host(f, zen2_cpuinfo, "1\n", "0:" ZEN2_EFR "\n", "6.1.0-57-amd64");
}

static void intel(KvmApicvHostFacts *f, const char *cmdline)
{
    apicv_facts_init(f);
    apicv_parse_cpuinfo(f, intel_cpuinfo);
    f->intel_apicv = apicv_parse_bool_param("Y\n");
    f->intel_ipiv = apicv_parse_bool_param("Y\n");
    apicv_parse_intel_iommu_cap(f, "19e2008c40660462\n");
    apicv_parse_cmdline(f, cmdline);
}

static KvmApicvVmConfig default_vm(void)
{
    /* What -accel kvm -M q35 -smp 4 gives: in-kernel PIT, reinject. */
    return (KvmApicvVmConfig) {
        .kernel_irqchip = true, .pit_in_kernel = true, .pit_reinject = true,
        .max_apic_id = 3, .x2apic = true,
    };
}

/* A VM that inhibits nothing: PIT in discard mode. */
static KvmApicvVmConfig clean_vm(void)
{
    KvmApicvVmConfig vm = default_vm();

    vm.pit_reinject = false;
    return vm;
}

static void decide_ok(const KvmApicvHostFacts *f, const KvmApicvVmConfig *vm,
                      OnOffAuto req, OnOffAuto post, ApicvDecision *d)
{
    Error *err = NULL;

    g_assert_true(apicv_decide(f, vm, req, post, d, &err));
    g_assert_null(err);
}

/* apicv_decide fails and the error contains @needle. */
static void decide_fails(const KvmApicvHostFacts *f,
                         const KvmApicvVmConfig *vm, OnOffAuto req,
                         OnOffAuto post, const char *needle)
{
    ApicvDecision d;
    Error *err = NULL;

    g_assert_false(apicv_decide(f, vm, req, post, &d, &err));
    g_assert_nonnull(err);
    if (!strstr(error_get_pretty(err), needle)) {
        g_test_message("error '%s' lacks '%s'", error_get_pretty(err),
                       needle);
        g_assert_not_reached();
    }
    error_free(err);
}

static void test_parsers(void)
{
    KvmApicvHostFacts f;

    g_assert_cmpint(apicv_parse_bool_param("Y\n"), ==, HOST_FACT_YES);
    g_assert_cmpint(apicv_parse_bool_param("1"), ==, HOST_FACT_YES);
    g_assert_cmpint(apicv_parse_bool_param("N\n"), ==, HOST_FACT_NO);
    g_assert_cmpint(apicv_parse_bool_param("0\n"), ==, HOST_FACT_NO);
    g_assert_cmpint(apicv_parse_bool_param("maybe"), ==, HOST_FACT_UNKNOWN);
    g_assert_cmpint(apicv_parse_bool_param(NULL), ==, HOST_FACT_UNKNOWN);

    zen4(&f);
    g_assert_cmpint(f.vendor, ==, APICV_VENDOR_AMD);
    g_assert_cmpint(f.cpu_avic, ==, HOST_FACT_YES);
    g_assert_cmpint(f.cpu_x2avic, ==, HOST_FACT_YES);
    g_assert_cmpint(f.amd_ga, ==, HOST_FACT_YES);
    g_assert_cmpint(f.amd_ga_vapic, ==, HOST_FACT_YES);
    g_assert_cmpint(f.amd_xt, ==, HOST_FACT_YES);
    /* Intel facts stay unknown on an AMD host. */
    g_assert_cmpint(f.vmx_apicv, ==, HOST_FACT_UNKNOWN);
    g_assert_cmpint(f.intel_iommu, ==, HOST_FACT_UNKNOWN);

    /* Field order by kernel release; single field on old kernels. */
    apicv_facts_init(&f);
    apicv_parse_amd_iommu_features(&f, "0:" ZEN2_EFR, "6.3.13");
    g_assert_cmpint(f.amd_ga_vapic, ==, HOST_FACT_YES);
    apicv_facts_init(&f);
    apicv_parse_amd_iommu_features(&f, ZEN2_EFR ":0", "6.4.0");
    g_assert_cmpint(f.amd_ga_vapic, ==, HOST_FACT_YES);
    apicv_facts_init(&f);
    apicv_parse_amd_iommu_features(&f, ZEN2_EFR ":0", "6.1.0");
    g_assert_cmpint(f.amd_ga, ==, HOST_FACT_NO);   /* read EFR2 = 0 */
    apicv_facts_init(&f);
    apicv_parse_amd_iommu_features(&f, ZEN2_EFR "\n", "5.10.0");
    g_assert_cmpint(f.amd_ga, ==, HOST_FACT_YES);
    apicv_facts_init(&f);
    apicv_parse_amd_iommu_features(&f, "0:" ZEN2_EFR, "unknown");
    g_assert_cmpint(f.amd_iommu, ==, HOST_FACT_YES);
    g_assert_cmpint(f.amd_ga, ==, HOST_FACT_UNKNOWN);
    apicv_facts_init(&f);
    apicv_parse_amd_iommu_features(&f, NO_GA_EFR, NULL);
    g_assert_cmpint(f.amd_ga, ==, HOST_FACT_NO);
    apicv_parse_amd_iommu_features(&f, "zz", NULL);
    g_assert_cmpint(f.amd_ga, ==, HOST_FACT_NO);    /* garbage: untouched */

    intel(&f, "ro quiet intremap=on,nopost\n");
    g_assert_cmpint(f.vendor, ==, APICV_VENDOR_INTEL);
    g_assert_cmpint(f.vmx_posted_intr, ==, HOST_FACT_YES);
    g_assert_cmpint(f.vmx_apicv, ==, HOST_FACT_YES);
    g_assert_cmpint(f.intel_pi, ==, HOST_FACT_YES);
    g_assert_cmpint(f.cmdline_nopost, ==, HOST_FACT_YES);
    g_assert_cmpint(f.cmdline_intremap_off, ==, HOST_FACT_NO);
    apicv_parse_cmdline(&f, "intremap=off amd_iommu_intr=legacy_ga");
    g_assert_cmpint(f.cmdline_intremap_off, ==, HOST_FACT_YES);
    g_assert_cmpint(f.cmdline_amd_intr_vapic, ==, HOST_FACT_NO);
    apicv_parse_cmdline(&f, "intremap=posted_msi");
    g_assert_cmpint(f.cmdline_posted_msi, ==, HOST_FACT_YES);
    apicv_parse_intel_iommu_cap(&f, "d2008c40660462");
    g_assert_cmpint(f.intel_pi, ==, HOST_FACT_NO);
}

static void test_zen4(void)
{
    KvmApicvHostFacts f;
    KvmApicvVmConfig vm = default_vm();
    ApicvDecision d;

    zen4(&f);
    /* auto: PIT switched to discard, x2AVIC, devices posted. */
    decide_ok(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_AUTO, &d);
    g_assert_cmpint(d.host_mode, ==, APICV_MODE_X2AVIC);
    g_assert_cmpint(d.mode, ==, APICV_MODE_X2AVIC);
    g_assert_true(d.set_pit_discard);
    g_assert_false(d.inhibited[APICV_INHIBIT_PIT_REINJECT]);
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_YES);
    apicv_decision_free(&d);
    /* auto, but the PIT policy was fixed (an explicit -global): reported */
    vm.pit_policy_fixed = true;
    decide_ok(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_AUTO, &d);
    g_assert_false(d.set_pit_discard);
    g_assert_true(d.inhibited[APICV_INHIBIT_PIT_REINJECT]);
    g_assert_nonnull(strstr(d.inhibit_reason[APICV_INHIBIT_PIT_REINJECT],
                            "lost_tick_policy=discard"));
    g_assert_cmpint(d.mode, ==, APICV_MODE_NONE);
    apicv_decision_free(&d);
    vm.pit_policy_fixed = false;
    /* on: PIT reinject refused with the fix. */
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO,
                 "lost_tick_policy=discard");
    vm.pit_reinject = false;
    decide_ok(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_ON, &d);
    g_assert_cmpint(d.mode, ==, APICV_MODE_X2AVIC);
    apicv_decision_free(&d);

    /* xAPIC guest on an x2AVIC host: AVIC. */
    vm.x2apic = false;
    decide_ok(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, &d);
    g_assert_cmpint(d.mode, ==, APICV_MODE_AVIC);
    apicv_decision_free(&d);

    /* APIC IDs: x2AVIC reaches 0x1ff with x2APIC, AVIC 0xfe. */
    vm.max_apic_id = 300;
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, "+x2apic");
    vm.x2apic = true;
    decide_ok(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, &d);
    apicv_decision_free(&d);
    vm.max_apic_id = 600;
    decide_ok(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_AUTO, &d);
    g_assert_true(d.inhibited[APICV_INHIBIT_APIC_ID_TOO_BIG]);
    g_assert_cmpint(d.mode, ==, APICV_MODE_NONE);
    /* No APIC virtualization: no posting either. */
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_NO);
    apicv_decision_free(&d);
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, "x2AVIC limit");

    /* A KVM without irqfd routing cannot post device interrupts. */
    vm = clean_vm();
    f.cap_irqfd = HOST_FACT_NO;
    decide_ok(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_AUTO, &d);
    g_assert_cmpint(d.mode, ==, APICV_MODE_X2AVIC);
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_NO);
    g_assert_nonnull(strstr(d.device_posting_why, "KVM_CAP_IRQFD"));
    apicv_decision_free(&d);
    decide_fails(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_ON, "KVM_CAP_IRQFD");
}

static void test_inhibits(void)
{
    KvmApicvHostFacts f;
    KvmApicvVmConfig vm;
    ApicvDecision d;

    zen4(&f);

    vm = clean_vm();
    vm.kernel_irqchip = false;
    decide_ok(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_AUTO, &d);
    g_assert_true(d.inhibited[APICV_INHIBIT_NO_IRQCHIP]);
    g_assert_cmpint(d.mode, ==, APICV_MODE_NONE);
    apicv_decision_free(&d);
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO,
                 "kernel-irqchip=split");

    vm = clean_vm();
    vm.hyperv_synic = true;
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, "hv-avic");
    vm.hv_avic = true;
    vm.pit_reinject = false;
    decide_ok(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, &d);
    apicv_decision_free(&d);

    vm = clean_vm();
    vm.guest_debug_blockirq = true;
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_OFF, "BLOCKIRQ");
    vm = clean_vm();
    vm.sev = true;
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_OFF, "SEV");
    vm = clean_vm();
    vm.nested_svm = true;
    decide_ok(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_AUTO, &d);
    g_assert_true(d.inhibited[APICV_INHIBIT_NESTED]);
    apicv_decision_free(&d);
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_OFF, "-svm");

    /* off changes nothing and asks for nothing. */
    decide_ok(&f, &vm, ON_OFF_AUTO_OFF, ON_OFF_AUTO_OFF, &d);
    g_assert_cmpint(d.mode, ==, APICV_MODE_NONE);
    g_assert_false(d.set_pit_discard);
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_NO);
    apicv_decision_free(&d);
}

static void test_zen2(void)
{
    KvmApicvHostFacts f;
    KvmApicvVmConfig vm = clean_vm();
    ApicvDecision d;

    zen2(&f);
    g_assert_cmpint(apicv_host_mode(&f, &(char *){ NULL }), ==,
                    APICV_MODE_AVIC);
    /* An x2APIC guest inhibits AVIC without x2AVIC. */
    decide_ok(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_AUTO, &d);
    g_assert_true(d.inhibited[APICV_INHIBIT_X2APIC_WITHOUT_X2AVIC]);
    g_assert_cmpint(d.mode, ==, APICV_MODE_NONE);
    apicv_decision_free(&d);
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, "-x2apic");
    vm.x2apic = false;
    decide_ok(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_AUTO, &d);
    g_assert_cmpint(d.mode, ==, APICV_MODE_AVIC);
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_YES);
    apicv_decision_free(&d);
    vm.max_apic_id = 255;
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, "AVIC limit");
}

static void test_amd_avic_off(void)
{
    KvmApicvHostFacts f;
    KvmApicvVmConfig vm = default_vm();
    ApicvDecision d;

    amd_host(&f, zen4_cpuinfo, "N\n", ZEN4_EFR ":0\n", "6.8.0");
    decide_ok(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_AUTO, &d);
    g_assert_cmpint(d.host_mode, ==, APICV_MODE_NONE);
    g_assert_cmpint(d.mode, ==, APICV_MODE_NONE);
    g_assert_false(d.set_pit_discard);      /* nothing to gain */
    apicv_decision_free(&d);
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, "avic=1");
    decide_fails(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_ON,
                 "device-posted-irqs=on");
    /* kvm_amd not loaded: unknown, said so. */
    amd_host(&f, zen4_cpuinfo, NULL, ZEN4_EFR ":0\n", "6.8.0");
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, "not loaded");
}

static void test_intel(void)
{
    KvmApicvHostFacts f;
    KvmApicvVmConfig vm = default_vm();
    ApicvDecision d;

    intel(&f, "BOOT_IMAGE=/vmlinuz ro intel_iommu=on\n");
    /* The PIT in reinject mode does not inhibit APICv. */
    decide_ok(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_ON, &d);
    g_assert_cmpint(d.mode, ==, APICV_MODE_APICV);
    g_assert_false(d.set_pit_discard);
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_YES);
    apicv_decision_free(&d);
    /* Large APIC IDs are fine for APICv. */
    vm.max_apic_id = 1000;
    decide_ok(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, &d);
    apicv_decision_free(&d);

    intel(&f, "BOOT_IMAGE=/vmlinuz ro intremap=nopost\n");
    decide_ok(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_AUTO, &d);
    g_assert_cmpint(d.mode, ==, APICV_MODE_APICV);
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_NO);
    g_assert_nonnull(strstr(d.device_posting_why, "nopost"));
    apicv_decision_free(&d);
    decide_fails(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_ON, "nopost");
}

static void test_no_iommu(void)
{
    KvmApicvHostFacts f;
    KvmApicvVmConfig vm = default_vm();
    ApicvDecision d;

    amd_host(&f, zen4_cpuinfo, "Y\n", NULL, "6.8.0");
    decide_ok(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_AUTO, &d);
    g_assert_cmpint(d.mode, ==, APICV_MODE_X2AVIC);
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_NO);
    g_assert_nonnull(strstr(d.device_posting_why, "no AMD IOMMU"));
    apicv_decision_free(&d);
    decide_fails(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_ON, "no AMD IOMMU");
}

static void test_nested_host(void)
{
    KvmApicvHostFacts f;
    KvmApicvVmConfig vm = default_vm();
    ApicvDecision d;

    /* An L1 guest used as a host: KVM loaded, no AVIC from L0. */
    amd_host(&f, nested_cpuinfo, "Y\n", NULL, "6.1.0");
    g_assert_cmpint(f.cpu_hypervisor, ==, HOST_FACT_YES);
    decide_ok(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_AUTO, &d);
    g_assert_cmpint(d.mode, ==, APICV_MODE_NONE);
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_NO);
    apicv_decision_free(&d);
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, "no AVIC");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/apicv-probe/parsers", test_parsers);
    g_test_add_func("/apicv-probe/zen4", test_zen4);
    g_test_add_func("/apicv-probe/inhibits", test_inhibits);
    g_test_add_func("/apicv-probe/zen2", test_zen2);
    g_test_add_func("/apicv-probe/amd-avic-off", test_amd_avic_off);
    g_test_add_func("/apicv-probe/intel", test_intel);
    g_test_add_func("/apicv-probe/no-iommu", test_no_iommu);
    g_test_add_func("/apicv-probe/nested-host", test_nested_host);
    return g_test_run();
}
