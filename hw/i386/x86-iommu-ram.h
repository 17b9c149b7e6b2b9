/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Atomic access of the x86 IOMMU models to their tables in guest RAM
 * (x86-iommu-ram.c): a 128-bit IRTE read in one load, as a guest
 * rewrites it with cmpxchg16b, and a host mapping of a small structure
 * (a vAPIC backing page word, a posted-interrupt descriptor) for
 * read-modify-writes that are atomic against the guest's vCPUs.
 */

#ifndef HW_I386_X86_IOMMU_RAM_H
#define HW_I386_X86_IOMMU_RAM_H

#include "exec/hwaddr.h"

/*
 * Read the 16 bytes at @addr of guest RAM as one entry, in one atomic
 * load (or, on hosts without 128-bit atomics, 64-bit loads repeated
 * until they agree) into @le[0] (bytes 0-7) and @le[1] (bytes 8-15),
 * little-endian as in memory.  False (and @le undefined) if @addr is
 * not 16-byte aligned or not plain RAM, or the entry never held still;
 * the caller then reads with DMA.
 */
bool x86_iommu_ram_read128(hwaddr addr, uint64_t le[2]);

/*
 * The host address of @size bytes at @addr, if all of them are plain
 * guest RAM (not ROM, not MMIO, not a RAM device), else NULL.  Release
 * with x86_iommu_ram_unmap(); when @is_write, that marks the bytes
 * dirty and drops translated code there, as a DMA write does.
 */
void *x86_iommu_ram_map(hwaddr addr, hwaddr size, bool is_write);
void x86_iommu_ram_unmap(void *ptr, hwaddr size, bool is_write);

#endif
