/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The southbridge function of the emulated AMD IOMMU's platform:
 * hw/i386/amd_iommu-sb.c.
 */

#ifndef HW_I386_AMD_IOMMU_SB_H
#define HW_I386_AMD_IOMMU_SB_H

/* Add the function at 00:14.0 of @bus; false with @errp if it is taken. */
bool amdvi_southbridge_create(PCIBus *bus, Error **errp);

#endif
