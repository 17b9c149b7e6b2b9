/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * IA32_ARCH_CAPABILITIES that the vCPU's KVM accepts:
 * target/i386/kvm/kvm-arch-caps.c.
 */

#ifndef TARGET_I386_KVM_ARCH_CAPS_H
#define TARGET_I386_KVM_ARCH_CAPS_H

/* @value, or the part of it KVM accepts for @cpu (with a warning). */
uint64_t kvm_arch_caps_settable(X86CPU *cpu, uint64_t value);

#endif
