/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Host file reader of the APIC virtualization probe:
 * target/i386/kvm/apicv-host.c.
 */

#ifndef TARGET_I386_KVM_APICV_HOST_H
#define TARGET_I386_KVM_APICV_HOST_H

#include "apicv-probe.h"

/* Fill @f from the files under @root ("" for this host). */
void apicv_read_host_facts(KvmApicvHostFacts *f, const char *root,
                           const char *kernel_release);

/* Combine a fact of two IOMMUs: NO wins, then UNKNOWN. */
HostFact apicv_fact_and(HostFact a, HostFact b);
const char *apicv_fact_name(HostFact v);

/* Every fact as a name and "yes"/"no"/"unknown" (or a number). */
typedef void ApicvHostFactFn(void *opaque, const char *name,
                             const char *value);
void apicv_host_facts_foreach(const KvmApicvHostFacts *f,
                              ApicvHostFactFn *fn, void *opaque);

#endif
