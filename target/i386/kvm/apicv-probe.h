/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What a KVM host offers for APIC virtualization (AMD AVIC / x2AVIC,
 * Intel APICv) and device posted interrupts, and what a VM's own
 * configuration would inhibit.  KVM has no capability for either, so
 * this is derived from host files (module parameters, /proc/cpuinfo,
 * IOMMU sysfs, the kernel command line) and KVM capabilities.
 *
 * Pure functions over a snapshot of those facts (KvmApicvHostFacts), so
 * they are unit-tested on fixtures in the real file formats
 * (tests/unit/test-apicv-probe.c).  A fact that cannot be read is
 * "unknown", never "no".  target/i386/kvm/apicv-probe.c.
 */

#ifndef TARGET_I386_KVM_APICV_PROBE_H
#define TARGET_I386_KVM_APICV_PROBE_H

#include "qapi/qapi-types-common.h"

typedef enum HostFact {
    HOST_FACT_UNKNOWN = -1,
    HOST_FACT_NO = 0,
    HOST_FACT_YES = 1,
} HostFact;

typedef enum ApicvVendor {
    APICV_VENDOR_UNKNOWN,
    APICV_VENDOR_AMD,
    APICV_VENDOR_INTEL,
} ApicvVendor;

typedef struct KvmApicvHostFacts {
    ApicvVendor vendor;
    /* /proc/cpuinfo */
    HostFact cpu_avic, cpu_x2avic, cpu_x2apic, cpu_hypervisor;
    HostFact vmx_posted_intr, vmx_apicv;
    /* kvm_amd / kvm_intel module parameters */
    HostFact amd_avic, amd_force_avic, amd_ipiv, amd_device_posted;
    HostFact intel_apicv, intel_ipiv, intel_device_posted;
    /* IOMMU */
    HostFact amd_iommu, amd_ga, amd_ga_vapic, amd_xt;
    HostFact intel_iommu, intel_pi;
    /* kernel command line */
    HostFact cmdline_intremap_off, cmdline_nopost, cmdline_amd_intr_vapic;
    HostFact cmdline_posted_msi;
    /* KVM capabilities */
    HostFact cap_irqfd, cap_irq_routing, cap_split_irqchip, cap_x2apic_api;
    int max_vcpu_id;            /* -1 unknown */
} KvmApicvHostFacts;

void apicv_facts_init(KvmApicvHostFacts *f);

/* Parsers of the host files; each only fills what it finds. */
void apicv_parse_cpuinfo(KvmApicvHostFacts *f, const char *text);
HostFact apicv_parse_bool_param(const char *text);
void apicv_parse_cmdline(KvmApicvHostFacts *f, const char *text);
/*
 * /sys/class/iommu/ivhdN/amd-iommu/features: "EFR" on old kernels,
 * "EFR2:EFR" on Linux 5.19 to 6.3 and "EFR:EFR2" since 6.4, so the
 * kernel release (e.g. "6.1.0-57-amd64") is needed to read two fields.
 */
void apicv_parse_amd_iommu_features(KvmApicvHostFacts *f, const char *text,
                                    const char *kernel_release);
/* /sys/class/iommu/dmarN/intel-iommu/cap (hex): bit 59 posted interrupts */
void apicv_parse_intel_iommu_cap(KvmApicvHostFacts *f, const char *text);

typedef enum ApicvMode {
    APICV_MODE_NONE,
    APICV_MODE_AVIC,
    APICV_MODE_X2AVIC,
    APICV_MODE_APICV,
} ApicvMode;

const char *apicv_mode_name(ApicvMode mode);

/* What the host offers; @why says what is missing when it is NONE. */
ApicvMode apicv_host_mode(const KvmApicvHostFacts *f, char **why);
/* Device posted interrupts: YES, NO (with @why) or UNKNOWN. */
HostFact apicv_host_device_posting(const KvmApicvHostFacts *f, char **why);

/* The VM's configuration, as far as it matters for inhibits. */
typedef struct KvmApicvVmConfig {
    bool kernel_irqchip;        /* false: kernel-irqchip=off */
    bool pit_in_kernel;
    bool pit_reinject;          /* lost_tick_policy=delay */
    bool pit_policy_fixed;      /* auto may not change it (any more) */
    bool hyperv_synic;
    bool hv_avic;
    uint32_t max_apic_id;
    bool x2apic;
    bool guest_debug_blockirq;
    bool sev;
    bool nested_svm;
} KvmApicvVmConfig;

typedef enum ApicvInhibit {
    APICV_INHIBIT_NO_IRQCHIP,
    APICV_INHIBIT_PIT_REINJECT,
    APICV_INHIBIT_HYPERV,
    APICV_INHIBIT_APIC_ID_TOO_BIG,
    APICV_INHIBIT_X2APIC_WITHOUT_X2AVIC,
    APICV_INHIBIT_BLOCKIRQ,
    APICV_INHIBIT_SEV,
    APICV_INHIBIT_NESTED,
    APICV_INHIBIT__MAX,
} ApicvInhibit;

typedef struct ApicvDecision {
    ApicvMode host_mode;
    ApicvMode mode;             /* negotiated: NONE when inhibited */
    bool inhibited[APICV_INHIBIT__MAX];
    char *inhibit_reason[APICV_INHIBIT__MAX];
    /*
     * auto: switch the in-kernel PIT to lost_tick_policy=discard
     * (unless the VM's pit_policy_fixed says it cannot be changed)
     */
    bool set_pit_discard;
    HostFact device_posting;
    char *device_posting_why;
} ApicvDecision;

/*
 * Decide for @req (apic virtualization) and @req_posting (device posted
 * interrupts).  "auto" adjusts what is safe (set_pit_discard) and
 * reports the rest; "on" fails with an error naming the missing host
 * feature or the inhibiting option, and the fix.
 */
bool apicv_decide(const KvmApicvHostFacts *f, const KvmApicvVmConfig *vm,
                  OnOffAuto req, OnOffAuto req_posting, ApicvDecision *d,
                  Error **errp);
void apicv_decision_free(ApicvDecision *d);

#endif
