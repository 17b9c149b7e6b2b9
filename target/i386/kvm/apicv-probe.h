/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What a KVM host offers for APIC virtualization (AMD AVIC / x2AVIC,
 * Intel APICv) and device posted interrupts, and what a VM's own
 * configuration makes KVM inhibit on that host's kernel.  KVM has no
 * capability for either, so this is derived from host files (module
 * parameters, /proc/cpuinfo, IOMMU sysfs, the kernel command line and
 * release) and KVM capabilities.
 *
 * Which configurations inhibit changed from kernel to kernel: the rules
 * are keyed by the host kernel's release, each with the Linux commit
 * that changed it (apicv-probe.c).  A rule that cannot be decided from
 * the host (unknown release, guest-dependent) gives a "possible"
 * inhibit, never a refusal.
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

/* A kernel release as one comparable number; 0 is unknown. */
#define APICV_KVER(major, minor)   ((major) * 1000 + (minor))

typedef struct KvmApicvHostFacts {
    ApicvVendor vendor;
    int kernel;                 /* APICV_KVER() of uname -r, 0 unknown */
    /* /proc/cpuinfo */
    HostFact cpu_avic, cpu_x2avic, cpu_x2avic_ext, cpu_x2apic, cpu_hypervisor;
    HostFact vmx_posted_intr, vmx_apicv;
    /* kvm_amd / kvm_intel module parameters */
    HostFact amd_avic, amd_force_avic, amd_ipiv, amd_device_posted;
    HostFact amd_nested;
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
/* "6.12.38+deb13-amd64" -> APICV_KVER(6, 12); 0 if unparsable */
int apicv_parse_kernel_release(const char *release);
/*
 * /sys/class/iommu/ivhdN/amd-iommu/features: the EFR alone on old
 * kernels, two fields (EFR and EFR2, in an order that changed between
 * releases) on newer ones.  Which field is the EFR is told by content.
 */
void apicv_parse_amd_iommu_features(KvmApicvHostFacts *f, const char *text);
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

/*
 * Highest vCPU (APIC) ID the host's AVIC table addresses, or -1 when
 * the host has no AVIC.  Before Linux 6.17 a vCPU above it cannot be
 * created at all (KVM_CREATE_VCPU fails).
 */
int apicv_avic_max_vcpu_id(const KvmApicvHostFacts *f);
/* The vCPU with @apic_id can be created (false with @errp set). */
bool apicv_check_vcpu_id(const KvmApicvHostFacts *f, uint32_t apic_id,
                         Error **errp);

/* The VM's configuration, as far as it matters for inhibits. */
typedef struct KvmApicvVmConfig {
    bool kernel_irqchip;        /* false: kernel-irqchip=off */
    bool pit_in_kernel;
    bool pit_reinject;          /* lost_tick_policy=delay */
    bool hyperv_synic;
    bool hv_avic;
    uint32_t max_apic_id;           /* of the vCPUs created */
    uint32_t max_possible_apic_id;  /* hotpluggable ones included */
    bool x2apic;
    bool sev;
    bool nested_svm;
} KvmApicvVmConfig;

typedef enum ApicvInhibit {
    APICV_INHIBIT_NO_IRQCHIP,
    APICV_INHIBIT_PIT_REINJECT,
    APICV_INHIBIT_HYPERV,
    APICV_INHIBIT_APIC_ID_TOO_BIG,
    APICV_INHIBIT_X2APIC_WITHOUT_X2AVIC,
    APICV_INHIBIT_SEV,
    APICV_INHIBIT_NESTED,
    APICV_INHIBIT__MAX,
} ApicvInhibit;

/* The name QAPI's KvmApicvInhibitReason gives it */
const char *apicv_inhibit_name(ApicvInhibit i);

/*
 * KVM's own name of bit @bit of its inhibit mask on host kernel release
 * @kernel, or NULL where the numbering is not known.
 */
const char *apicv_kvm_inhibit_bit_name(int kernel, int bit);

typedef enum ApicvLikelihood {
    APICV_INHIBIT_NONE,
    APICV_INHIBIT_CERTAIN,      /* KVM will inhibit */
    APICV_INHIBIT_POSSIBLE,     /* depends on the guest or an unknown */
} ApicvLikelihood;

typedef struct ApicvInhibitPrediction {
    ApicvLikelihood likelihood;
    char *detail;               /* the cause, as the user configured it */
    char *fix;                  /* how to avoid it */
    const char *rule;           /* the Linux rule (and commit) applied */
} ApicvInhibitPrediction;

typedef struct ApicvDecision {
    ApicvMode host_mode;
    ApicvMode mode;             /* expected: NONE when inhibited */
    ApicvInhibitPrediction inhibit[APICV_INHIBIT__MAX];
    HostFact device_posting;    /* this VM's device interrupts can be posted */
    char *device_posting_why;
} ApicvDecision;

/*
 * Predict what KVM does with @vm on host @f and check it against @req
 * (apicv=) and @req_posting (device-posted-irqs=).  The inhibits are
 * predicted whatever the host mode (KVM tracks them on every host).
 * "on" fails listing every certain inhibit with its fix (as hints);
 * "off" is refused where this VM would run with APIC virtualization,
 * since KVM has no per-VM switch; "auto" changes nothing.  Device
 * posting is the host's capability less what the VM prevents (no
 * in-kernel irqchip; on AMD, an inhibited AVIC).
 */
bool apicv_decide(const KvmApicvHostFacts *f, const KvmApicvVmConfig *vm,
                  OnOffAuto req, OnOffAuto req_posting, ApicvDecision *d,
                  Error **errp);
void apicv_decision_free(ApicvDecision *d);

#endif
