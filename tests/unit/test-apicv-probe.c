/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests of the KVM APIC virtualization / device posting probe and
 * decision table (target/i386/kvm/apicv-probe.c) on fixture hosts in
 * the real file formats: AMD Zen 4 (AVIC + x2AVIC), Zen 2 (AVIC only),
 * AMD with avic=0, Intel with APICv and VT-d posted interrupts, Intel
 * booted with intremap=nopost, a host without IOMMU, and a nested guest
 * used as a host; each with VM configurations hitting each inhibit,
 * and the kernel-release rules on both sides of the Linux commit that
 * changed each (named in the test).
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
    f->kernel = apicv_parse_kernel_release(release);
    apicv_parse_cpuinfo(f, cpuinfo);
    f->amd_avic = apicv_parse_bool_param(avic);
    f->amd_force_avic = apicv_parse_bool_param("N\n");
    f->amd_ipiv = apicv_parse_bool_param("Y\n");
    f->amd_nested = apicv_parse_bool_param("1\n");
    if (features) {
        apicv_parse_amd_iommu_features(f, features);
    }
    apicv_parse_cmdline(f, "BOOT_IMAGE=/vmlinuz-6.8.0 root=/dev/sda1 ro "
                        "quiet iommu=pt\n");
}

static void zen4(KvmApicvHostFacts *f, const char *release)
{
    amd_host(f, zen4_cpuinfo, "Y\n", ZEN4_EFR ":0\n", release);
}

static void zen2(KvmApicvHostFacts *f, const char *release)
{
    /* Linux 6.1 prints EFR2 first. */
    amd_host(f, zen2_cpuinfo, "1\n", "0:" ZEN2_EFR "\n", release);
}

static void intel(KvmApicvHostFacts *f, const char *cmdline)
{
    apicv_facts_init(f);
    f->kernel = apicv_parse_kernel_release("6.12.38+deb13-amd64");
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

/* The likelihood of inhibit @i for @vm on @f (auto never fails). */
static ApicvLikelihood predicted(const KvmApicvHostFacts *f,
                                 const KvmApicvVmConfig *vm, ApicvInhibit i)
{
    ApicvDecision d;
    ApicvLikelihood l;

    decide_ok(f, vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_AUTO, &d);
    l = d.inhibit[i].likelihood;
    if (l != APICV_INHIBIT_NONE) {
        g_assert_nonnull(d.inhibit[i].detail);
        g_assert_nonnull(d.inhibit[i].fix);
        g_assert_nonnull(d.inhibit[i].rule);
    }
    apicv_decision_free(&d);
    return l;
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

    g_assert_cmpint(apicv_parse_kernel_release("6.12.38+deb13-amd64"), ==,
                    APICV_KVER(6, 12));
    g_assert_cmpint(apicv_parse_kernel_release("7.3.0-1-amd64"), ==,
                    APICV_KVER(7, 3));
    g_assert_cmpint(apicv_parse_kernel_release("5.10.0-33-amd64"), ==,
                    APICV_KVER(5, 10));
    g_assert_cmpint(apicv_parse_kernel_release("weird"), ==, 0);
    g_assert_cmpint(apicv_parse_kernel_release(NULL), ==, 0);
    g_assert_cmpint(APICV_KVER(5, 19), >, APICV_KVER(5, 6));
    g_assert_cmpint(APICV_KVER(6, 0), >, APICV_KVER(5, 19));

    /* KVM's inhibit bits were renumbered between releases */
    g_assert_cmpstr(apicv_kvm_inhibit_bit_name(APICV_KVER(6, 12), 9), ==,
                    "PIT_REINJ");
    g_assert_cmpstr(apicv_kvm_inhibit_bit_name(APICV_KVER(6, 1), 8), ==,
                    "PIT_REINJ");
    g_assert_cmpstr(apicv_kvm_inhibit_bit_name(APICV_KVER(5, 19), 9), ==,
                    "X2APIC");
    g_assert_cmpstr(apicv_kvm_inhibit_bit_name(APICV_KVER(7, 3), 12), ==,
                    "PHYSICAL_ID_TOO_BIG");
    g_assert_null(apicv_kvm_inhibit_bit_name(APICV_KVER(6, 3), 9));
    g_assert_cmpstr(apicv_kvm_inhibit_bit_name(APICV_KVER(6, 8), 0), ==,
                    "DISABLE");
    g_assert_cmpstr(apicv_kvm_inhibit_bit_name(APICV_KVER(6, 12), 0), ==,
                    "DISABLED");
    g_assert_null(apicv_kvm_inhibit_bit_name(APICV_KVER(6, 12), 40));

    zen4(&f, "6.8.0-45-generic");
    g_assert_cmpint(f.vendor, ==, APICV_VENDOR_AMD);
    g_assert_cmpint(f.cpu_avic, ==, HOST_FACT_YES);
    g_assert_cmpint(f.cpu_x2avic, ==, HOST_FACT_YES);
    g_assert_cmpint(f.amd_ga, ==, HOST_FACT_YES);
    g_assert_cmpint(f.amd_ga_vapic, ==, HOST_FACT_YES);
    g_assert_cmpint(f.amd_xt, ==, HOST_FACT_YES);
    /* Intel facts stay unknown on an AMD host. */
    g_assert_cmpint(f.vmx_apicv, ==, HOST_FACT_UNKNOWN);
    g_assert_cmpint(f.intel_iommu, ==, HOST_FACT_UNKNOWN);

    /* The EFR is told from EFR2 by content, in either order. */
    apicv_facts_init(&f);
    apicv_parse_amd_iommu_features(&f, "0:" ZEN2_EFR);
    g_assert_cmpint(f.amd_ga_vapic, ==, HOST_FACT_YES);
    apicv_facts_init(&f);
    apicv_parse_amd_iommu_features(&f, ZEN2_EFR ":0");
    g_assert_cmpint(f.amd_ga_vapic, ==, HOST_FACT_YES);
    apicv_facts_init(&f);
    apicv_parse_amd_iommu_features(&f, NO_GA_EFR ":1f");
    g_assert_cmpint(f.amd_ga, ==, HOST_FACT_NO);
    apicv_facts_init(&f);
    apicv_parse_amd_iommu_features(&f, ZEN2_EFR "\n");
    g_assert_cmpint(f.amd_ga, ==, HOST_FACT_YES);
    /* as many bits in both: cannot tell */
    apicv_facts_init(&f);
    apicv_parse_amd_iommu_features(&f, "3:c");
    g_assert_cmpint(f.amd_iommu, ==, HOST_FACT_YES);
    g_assert_cmpint(f.amd_ga, ==, HOST_FACT_UNKNOWN);
    apicv_facts_init(&f);
    apicv_parse_amd_iommu_features(&f, NO_GA_EFR);
    g_assert_cmpint(f.amd_ga, ==, HOST_FACT_NO);
    apicv_parse_amd_iommu_features(&f, "zz");
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

    zen4(&f, "6.12.38+deb13-amd64");
    /* auto: reports the PIT inhibit, changes nothing. */
    decide_ok(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_AUTO, &d);
    g_assert_cmpint(d.host_mode, ==, APICV_MODE_X2AVIC);
    g_assert_cmpint(d.mode, ==, APICV_MODE_NONE);
    g_assert_cmpint(d.inhibit[APICV_INHIBIT_PIT_REINJECT].likelihood, ==,
                    APICV_INHIBIT_CERTAIN);
    g_assert_nonnull(strstr(d.inhibit[APICV_INHIBIT_PIT_REINJECT].fix,
                            "lost_tick_policy=discard"));
    /* AVIC inhibited: KVM keeps this VM's IRTEs in remapped mode */
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_NO);
    g_assert_nonnull(strstr(d.device_posting_why, "AVIC is inhibited"));
    apicv_decision_free(&d);
    decide_fails(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_ON,
                 "AVIC is inhibited");
    /* on: refused, naming the inhibit. */
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, "pit-reinject");
    vm.pit_reinject = false;
    decide_ok(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_ON, &d);
    g_assert_cmpint(d.mode, ==, APICV_MODE_X2AVIC);
    apicv_decision_free(&d);

    /* xAPIC guest on an x2AVIC host: AVIC. */
    vm.x2apic = false;
    decide_ok(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, &d);
    g_assert_cmpint(d.mode, ==, APICV_MODE_AVIC);
    apicv_decision_free(&d);

    /* off: KVM has no per-VM switch; the host-wide one is named. */
    decide_fails(&f, &vm, ON_OFF_AUTO_OFF, ON_OFF_AUTO_AUTO,
                 "no per-VM switch");
    /* ... but where this VM runs without it anyway, off is true */
    vm.pit_reinject = true;
    decide_ok(&f, &vm, ON_OFF_AUTO_OFF, ON_OFF_AUTO_AUTO, &d);
    g_assert_cmpint(d.mode, ==, APICV_MODE_NONE);
    apicv_decision_free(&d);
    vm.pit_reinject = false;
    vm.kernel_irqchip = false;
    decide_ok(&f, &vm, ON_OFF_AUTO_OFF, ON_OFF_AUTO_AUTO, &d);
    /* and without an in-kernel APIC nothing is posted, on any vendor */
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_NO);
    g_assert_nonnull(strstr(d.device_posting_why, "kernel-irqchip=off"));
    apicv_decision_free(&d);
    vm.kernel_irqchip = true;

    /* on lists every certain inhibit, not only the first. */
    vm = default_vm();
    vm.sev = true;
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO,
                 "pit-reinject, sev");

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

    zen4(&f, "6.12.38+deb13-amd64");

    vm = clean_vm();
    vm.kernel_irqchip = false;
    decide_ok(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_AUTO, &d);
    g_assert_cmpint(d.inhibit[APICV_INHIBIT_NO_IRQCHIP].likelihood, ==,
                    APICV_INHIBIT_CERTAIN);
    g_assert_cmpint(d.mode, ==, APICV_MODE_NONE);
    apicv_decision_free(&d);
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, "no-irqchip");

    vm = clean_vm();
    vm.sev = true;
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_OFF, "sev");
    /* SEV inhibits AVIC since 5.19; 5.18 not confirmed */
    vm.x2apic = false;
    zen4(&f, "5.15.0");
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_SEV), ==,
                    APICV_INHIBIT_NONE);
    zen4(&f, "5.18.0");
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_SEV), ==,
                    APICV_INHIBIT_POSSIBLE);
    zen4(&f, "5.19.0");
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_SEV), ==,
                    APICV_INHIBIT_CERTAIN);
    zen4(&f, "6.12.38+deb13-amd64");

    /* Intel: the PIT does not matter (AMD-only inhibit) */
    intel(&f, "ro\n");
    vm = default_vm();
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_PIT_REINJECT), ==,
                    APICV_INHIBIT_NONE);
    /* a split irqchip has no in-kernel PIT */
    zen4(&f, "6.12.0");
    vm.pit_in_kernel = false;
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_PIT_REINJECT), ==,
                    APICV_INHIBIT_NONE);
}

/*
 * Nested SVM: VM-wide 5.6-5.18; f44509f849fe (5.19) made it per vCPU
 * while L2 runs.
 */
static void test_rule_nested_f44509f849fe(void)
{
    KvmApicvHostFacts f;
    KvmApicvVmConfig vm = clean_vm();

    vm.nested_svm = true;
    zen4(&f, "5.15.0-100-generic");
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_NESTED), ==,
                    APICV_INHIBIT_CERTAIN);
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, "nested");
    zen4(&f, "5.18.19");
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_NESTED), ==,
                    APICV_INHIBIT_CERTAIN);
    /* only with kvm_amd.nested=1 */
    f.amd_nested = HOST_FACT_NO;
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_NESTED), ==,
                    APICV_INHIBIT_NONE);
    zen4(&f, "5.19.0");
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_NESTED), ==,
                    APICV_INHIBIT_NONE);
    zen4(&f, "6.12.38+deb13-amd64");
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_NESTED), ==,
                    APICV_INHIBIT_NONE);
    /* -cpu host on a current AMD host: accepted with apicv=on */
    {
        ApicvDecision d;

        decide_ok(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, &d);
        g_assert_cmpint(d.mode, ==, APICV_MODE_X2AVIC);
        apicv_decision_free(&d);
    }
    /* unknown release: possible, never a refusal */
    zen4(&f, NULL);
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_NESTED), ==,
                    APICV_INHIBIT_POSSIBLE);
    {
        ApicvDecision d;

        decide_ok(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, &d);
        apicv_decision_free(&d);
    }
}

/* x2APIC guest: inhibit until hybrid AVIC (0e311d33bfbe, 6.0) */
static void test_rule_x2apic_hybrid_avic(void)
{
    KvmApicvHostFacts f;
    KvmApicvVmConfig vm = clean_vm();
    ApicvDecision d;

    zen2(&f, "5.15.0-1-amd64");
    g_assert_cmpint(apicv_host_mode(&f, &(char *){ NULL }), ==,
                    APICV_MODE_AVIC);
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_X2APIC_WITHOUT_X2AVIC),
                    ==, APICV_INHIBIT_CERTAIN);
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO,
                 "x2apic-without-x2avic");
    zen2(&f, "5.19.17");
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_X2APIC_WITHOUT_X2AVIC),
                    ==, APICV_INHIBIT_CERTAIN);
    /* 6.0+: default VMs on Zen 2/3 keep AVIC */
    zen2(&f, "6.0.0");
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_X2APIC_WITHOUT_X2AVIC),
                    ==, APICV_INHIBIT_NONE);
    zen2(&f, "6.1.0-57-amd64");
    decide_ok(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, &d);
    g_assert_cmpint(d.mode, ==, APICV_MODE_AVIC);
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_YES);
    apicv_decision_free(&d);
    /* 5.x does not use x2AVIC even where the CPU has it */
    zen4(&f, "5.15.0");
    g_assert_cmpint(apicv_host_mode(&f, &(char *){ NULL }), ==,
                    APICV_MODE_AVIC);
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_X2APIC_WITHOUT_X2AVIC),
                    ==, APICV_INHIBIT_CERTAIN);
    zen4(&f, "6.0.0");
    g_assert_cmpint(apicv_host_mode(&f, &(char *){ NULL }), ==,
                    APICV_MODE_X2AVIC);
    /* an xAPIC guest never had it */
    zen2(&f, "5.15.0");
    vm.x2apic = false;
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_X2APIC_WITHOUT_X2AVIC),
                    ==, APICV_INHIBIT_NONE);
}

/* Hyper-V SynIC: VM-wide before 5.15, AutoEOI only since 0f250a646382 */
static void test_rule_hyperv_autoeoi_0f250a646382(void)
{
    KvmApicvHostFacts f;
    KvmApicvVmConfig vm = clean_vm();

    vm.hyperv_synic = true;
    vm.x2apic = false;      /* no x2APIC inhibit on the 5.x hosts */
    zen4(&f, "5.10.0-33-amd64");
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_HYPERV), ==,
                    APICV_INHIBIT_CERTAIN);
    vm.hv_avic = true;      /* too old to care */
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_HYPERV), ==,
                    APICV_INHIBIT_CERTAIN);
    zen4(&f, "5.14.21");
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_HYPERV), ==,
                    APICV_INHIBIT_CERTAIN);
    zen4(&f, "5.15.0");
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_HYPERV), ==,
                    APICV_INHIBIT_NONE);
    /* without hv-avic it is up to the guest: possible, no refusal */
    vm.hv_avic = false;
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_HYPERV), ==,
                    APICV_INHIBIT_POSSIBLE);
    {
        ApicvDecision d;

        decide_ok(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, &d);
        g_assert_nonnull(strstr(d.inhibit[APICV_INHIBIT_HYPERV].fix,
                                "hv-avic"));
        apicv_decision_free(&d);
    }
}

/*
 * APIC IDs above the AVIC table: KVM_CREATE_VCPU fails before 6.17,
 * inhibit since.  x2avic_enabled is host-wide: limit 0x1ff on an x2AVIC
 * host whatever the guest, 0xfe on an AVIC-only host.
 */
static void test_rule_apic_id_too_big(void)
{
    KvmApicvHostFacts f;
    KvmApicvVmConfig vm = clean_vm();
    Error *err = NULL;

    zen4(&f, "6.12.38+deb13-amd64");
    g_assert_cmpint(apicv_avic_max_vcpu_id(&f), ==, 0x1ff);
    g_assert_true(apicv_check_vcpu_id(&f, 0x1ff, &error_abort));
    g_assert_false(apicv_check_vcpu_id(&f, 0x200, &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "APIC ID 512"));
    error_free(err);
    err = NULL;

    zen2(&f, "6.1.0-57-amd64");
    g_assert_cmpint(apicv_avic_max_vcpu_id(&f), ==, 0xfe);
    g_assert_true(apicv_check_vcpu_id(&f, 0xfe, &error_abort));
    g_assert_false(apicv_check_vcpu_id(&f, 0xff, &err));
    error_free(err);
    err = NULL;

    /* 5.x: xAPIC table only, even on an x2AVIC CPU (id >= 255) */
    zen4(&f, "5.15.0");
    g_assert_cmpint(apicv_avic_max_vcpu_id(&f), ==, 0xfe);
    g_assert_false(apicv_check_vcpu_id(&f, 255, &err));
    error_free(err);
    err = NULL;
    /*
     * 6.19+ with X2AVIC_EXT: 4096 vCPUs.  /proc/cpuinfo does not show it:
     * apicv-negotiate.c reads CPUID 0x8000000A ECX[6] into the fact.
     */
    amd_host(&f, zen4_cpuinfo, "Y\n", NULL, "6.19.0");
    f.cpu_x2avic_ext = HOST_FACT_YES;
    g_assert_cmpint(apicv_avic_max_vcpu_id(&f), ==, 0xfff);
    zen4(&f, "6.19.0");
    g_assert_cmpint(apicv_avic_max_vcpu_id(&f), ==, 0x1ff);

    /* 7.3 (test bed): vCPU 255 in xAVIC mode inhibits */
    zen2(&f, "7.3.4+deb13-amd64");
    g_assert_cmpint(apicv_avic_max_vcpu_id(&f), ==, 0xfe);
    vm.max_apic_id = 0xff;
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_APIC_ID_TOO_BIG), ==,
                    APICV_INHIBIT_CERTAIN);
    vm = clean_vm();

    /* AVIC off: no limit from it */
    amd_host(&f, zen4_cpuinfo, "N\n", NULL, "6.12.0");
    g_assert_cmpint(apicv_avic_max_vcpu_id(&f), ==, -1);
    g_assert_true(apicv_check_vcpu_id(&f, 4000, &error_abort));
    /* Intel: none */
    intel(&f, "ro\n");
    g_assert_true(apicv_check_vcpu_id(&f, 4000, &error_abort));

    /* since 6.17 the vCPU is created and AVIC inhibited */
    zen4(&f, "6.17.0");
    g_assert_true(apicv_check_vcpu_id(&f, 0x200, &error_abort));
    /* only a hot-pluggable one: possible */
    vm.max_possible_apic_id = 0x200;
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_APIC_ID_TOO_BIG), ==,
                    APICV_INHIBIT_POSSIBLE);
    vm.max_apic_id = 0x200;
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_APIC_ID_TOO_BIG), ==,
                    APICV_INHIBIT_CERTAIN);
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO,
                 "apic-id-too-big");
    /* unknown release: creation not refused, inhibit possible */
    zen4(&f, NULL);
    g_assert_true(apicv_check_vcpu_id(&f, 0x200, &error_abort));
    g_assert_cmpint(predicted(&f, &vm, APICV_INHIBIT_APIC_ID_TOO_BIG), ==,
                    APICV_INHIBIT_POSSIBLE);
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
    /* KVM still tracks the inhibit: predicted for the tracepoint */
    g_assert_cmpint(d.inhibit[APICV_INHIBIT_PIT_REINJECT].likelihood, ==,
                    APICV_INHIBIT_CERTAIN);
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_NO);
    apicv_decision_free(&d);
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, "avic=1");
    decide_fails(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_ON,
                 "device-posted-irqs=on");
    /* off is what the host does anyway */
    decide_ok(&f, &vm, ON_OFF_AUTO_OFF, ON_OFF_AUTO_OFF, &d);
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_NO);
    apicv_decision_free(&d);
    /* kvm_amd not loaded: unknown, said so. */
    amd_host(&f, zen4_cpuinfo, NULL, ZEN4_EFR ":0\n", "6.8.0");
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, "not loaded");
}

/* Kernels with enable_device_posted_irqs give their own verdict. */
static void test_device_posting(void)
{
    KvmApicvHostFacts f;
    KvmApicvVmConfig vm = clean_vm();
    ApicvDecision d;

    zen4(&f, "7.3.0-1-amd64");
    f.amd_device_posted = HOST_FACT_YES;
    decide_ok(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_ON, &d);
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_YES);
    apicv_decision_free(&d);
    /* N with a cause we can see: the cause is named */
    apicv_parse_cmdline(&f, "ro intremap=nopost\n");
    f.amd_device_posted = HOST_FACT_NO;
    decide_fails(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_ON, "nopost");
    /* N without one: the parameter is named */
    apicv_parse_cmdline(&f, "ro\n");
    decide_fails(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_ON,
                 "enable_device_posted_irqs=N");
    /* intremap=nopost disables posting on AMD too (older kernels) */
    zen4(&f, "6.12.0");
    apicv_parse_cmdline(&f, "ro intremap=nopost\n");
    decide_ok(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_AUTO, &d);
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_NO);
    apicv_decision_free(&d);
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
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_YES);
    apicv_decision_free(&d);
    /* Large APIC IDs and nested are fine for APICv. */
    vm.max_apic_id = 1000;
    vm.nested_svm = true;
    decide_ok(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, &d);
    apicv_decision_free(&d);
    decide_fails(&f, &vm, ON_OFF_AUTO_OFF, ON_OFF_AUTO_AUTO,
                 "no per-VM switch");

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
    KvmApicvVmConfig vm = clean_vm();
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

    /* An L1 under an L0 without AVIC: kvm_amd reads back avic=N */
    amd_host(&f, nested_cpuinfo, "N\n", NULL, "6.12.38+deb13-amd64");
    g_assert_cmpint(f.cpu_hypervisor, ==, HOST_FACT_YES);
    decide_ok(&f, &vm, ON_OFF_AUTO_AUTO, ON_OFF_AUTO_AUTO, &d);
    g_assert_cmpint(d.mode, ==, APICV_MODE_NONE);
    g_assert_cmpint(d.device_posting, ==, HOST_FACT_NO);
    apicv_decision_free(&d);
    /* the CPU is the reason, not the module parameter */
    decide_fails(&f, &vm, ON_OFF_AUTO_ON, ON_OFF_AUTO_AUTO, "has no AVIC");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/apicv-probe/parsers", test_parsers);
    g_test_add_func("/apicv-probe/zen4", test_zen4);
    g_test_add_func("/apicv-probe/inhibits", test_inhibits);
    g_test_add_func("/apicv-probe/rule/nested-5.19-f44509f849fe",
                    test_rule_nested_f44509f849fe);
    g_test_add_func("/apicv-probe/rule/x2apic-hybrid-avic-6.0-0e311d33bfbe",
                    test_rule_x2apic_hybrid_avic);
    g_test_add_func("/apicv-probe/rule/hyperv-autoeoi-5.15-0f250a646382",
                    test_rule_hyperv_autoeoi_0f250a646382);
    g_test_add_func("/apicv-probe/rule/apic-id-too-big-6.17-1aa6e256e46f",
                    test_rule_apic_id_too_big);
    g_test_add_func("/apicv-probe/amd-avic-off", test_amd_avic_off);
    g_test_add_func("/apicv-probe/device-posting", test_device_posting);
    g_test_add_func("/apicv-probe/intel", test_intel);
    g_test_add_func("/apicv-probe/no-iommu", test_no_iommu);
    g_test_add_func("/apicv-probe/nested-host", test_nested_host);
    return g_test_run();
}
