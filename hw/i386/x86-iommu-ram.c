/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Atomic access of the x86 IOMMU models to their tables in guest RAM
 * (see x86-iommu-ram.h).  Used by the AMD IOMMU's GA mode
 * (amd_iommu-ga.c) and the Intel IOMMU's interrupt posting
 * (intel_iommu-posted.c); built with CONFIG_X86_IOMMU.
 */

#include "qemu/osdep.h"
#include "qemu/atomic128.h"
#include "qemu/rcu.h"
#include "exec/address-spaces.h"
#include "exec/memory.h"
#include "x86-iommu-ram.h"

static bool plain_ram(hwaddr addr, hwaddr size, bool is_write,
                      MemoryRegion **mr_out, hwaddr *xlat_out)
{
    hwaddr xlat, len = size;
    MemoryRegion *mr;

    mr = address_space_translate(&address_space_memory, addr, &xlat, &len,
                                 is_write, MEMTXATTRS_UNSPECIFIED);
    if (!memory_region_is_ram(mr) || memory_region_is_rom(mr) ||
        memory_region_is_ram_device(mr) || len < size) {
        return false;
    }
    *mr_out = mr;
    *xlat_out = xlat;
    return true;
}

/*
 * Without a 128-bit atomic load: four 32-bit loads (hosts of any word
 * size), repeated until two rounds agree, so that a guest's cmpxchg16b
 * between them is not taken for an entry.  A guest rewriting the entry
 * without pause gets the DMA read's answer after a few rounds.  This is
 * a heuristic, not an atomic read: on such a host TCG's cmpxchg16b is
 * two stores, and a host thread preempted between them for two rounds
 * could show a torn entry.  x86_64 and aarch64 hosts have the atomic
 * load (with x86_64's cmpxchg16b form, the read is a locked write of
 * the same value).
 */
#define READ128_ROUNDS 8

static bool read128_stable(const uint32_t *ptr, uint64_t le[2])
{
    uint32_t w[4], prev[4];
    int i, j;

    for (j = 0; j < 4; j++) {
        prev[j] = qatomic_read(&ptr[j]);
    }
    for (i = 0; i < READ128_ROUNDS; i++) {
        smp_rmb();              /* the next round reads the RAM again */
        for (j = 0; j < 4; j++) {
            w[j] = qatomic_read(&ptr[j]);
        }
        if (!memcmp(w, prev, sizeof(w))) {
            memcpy(le, w, sizeof(w));   /* bytes in memory order */
            return true;
        }
        memcpy(prev, w, sizeof(w));
    }
    return false;
}

bool x86_iommu_ram_read128(hwaddr addr, uint64_t le[2])
{
    MemoryRegion *mr;
    hwaddr xlat;
    Int128 *ptr;
    Int128 v;

    if (addr & 15) {
        return false;
    }
    RCU_READ_LOCK_GUARD();
    if (!plain_ram(addr, 16, false, &mr, &xlat)) {
        return false;
    }
    ptr = memory_region_get_ram_ptr(mr) + xlat;
    if ((uintptr_t)ptr & 15) {
        return false;           /* the host mapping must be aligned too */
    }
    if (!HAVE_ATOMIC128_RW) {
        return read128_stable((const uint32_t *)ptr, le);
    }
    /* One 16-byte load: a guest's cmpxchg16b is seen whole or not at all */
    v = atomic16_read_rw(ptr);
    /* Bytes in memory order: getlo() is bytes 8-15 on big-endian hosts */
    memcpy(le, &v, sizeof(v));
    return true;
}

void *x86_iommu_ram_map(hwaddr addr, hwaddr size, bool is_write)
{
    MemoryRegion *mr;
    hwaddr xlat, len = size;
    void *ptr;

    RCU_READ_LOCK_GUARD();
    if (!plain_ram(addr, size, is_write, &mr, &xlat)) {
        return NULL;
    }
    /* Mapped RAM is the guest's own memory, never a bounce buffer. */
    ptr = address_space_map(&address_space_memory, addr, &len, is_write,
                            MEMTXATTRS_UNSPECIFIED);
    if (ptr && len != size) {
        address_space_unmap(&address_space_memory, ptr, len, is_write, 0);
        return NULL;
    }
    return ptr;
}

void x86_iommu_ram_unmap(void *ptr, hwaddr size, bool is_write)
{
    address_space_unmap(&address_space_memory, ptr, size, is_write,
                        is_write ? size : 0);
}
