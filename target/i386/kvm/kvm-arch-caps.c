/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * IA32_ARCH_CAPABILITIES that the vCPU's KVM accepts.  With -cpu host
 * QEMU gives the guest the value KVM reports for the feature MSR; some
 * KVM implementations (kvm_pvm, a software KVM) then refuse that very
 * value in KVM_SET_MSRS, and QEMU aborted while setting up the vCPU.
 * Called from kvm_init_msrs() (target/i386/kvm/kvm.c): the value is
 * tried as it is (one ioctl on every usual host); if KVM refuses it,
 * the bits it accepts one by one are kept, with a warning.
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "cpu.h"
#include "system/kvm.h"
#include "kvm-arch-caps.h"

static bool arch_caps_accepted(X86CPU *cpu, uint64_t value)
{
    struct {
        struct kvm_msrs info;
        struct kvm_msr_entry entry;
    } msrs = {
        .info.nmsrs = 1,
        .entry.index = MSR_IA32_ARCH_CAPABILITIES,
        .entry.data = value,
    };

    return kvm_vcpu_ioctl(CPU(cpu), KVM_SET_MSRS, &msrs) == 1;
}

uint64_t kvm_arch_caps_settable(X86CPU *cpu, uint64_t value)
{
    uint64_t kept = 0;

    if (arch_caps_accepted(cpu, value)) {
        return value;
    }
    for (int bit = 0; bit < 64; bit++) {
        if ((value & BIT_ULL(bit)) &&
            arch_caps_accepted(cpu, kept | BIT_ULL(bit))) {
            kept |= BIT_ULL(bit);
        }
    }
    warn_report_once("KVM refuses IA32_ARCH_CAPABILITIES 0x%" PRIx64
                     ", which it reports as supported; the guest gets 0x%"
                     PRIx64, value, kept);
    return kept;
}
