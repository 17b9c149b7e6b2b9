/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * x-query-kvm-apicv in a build without KVM: KVM is not in use.
 * (target/i386/kvm/apicv-negotiate.c is the real one.)
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/qapi-commands-kvm-apicv-target.h"

KvmApicvInfo *qmp_x_query_kvm_apicv(Error **errp)
{
    KvmApicvInfo *info = g_new0(KvmApicvInfo, 1);

    info->kvm = false;
    return info;
}
