/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The southbridge function of the emulated AMD IOMMU's platform: a PCI
 * function at 00:14.0 with the class of an SMBus controller, as AMD's
 * FCH SMBus controller has.
 *
 * The IVRS table names 00:14.0 as the device ID of the southbridge
 * IOAPIC (the one with GSI 0), as on AMD platforms, and the IOMMU
 * model tags that IOAPIC's interrupts with it.  Linux up to 6.19 takes
 * the ID on trust; later kernels (the "dynamically verify Southbridge
 * IOAPIC via PCI config space" change) read the class of the function
 * at that ID and accept only an SMBus controller or an ISA bridge.  On
 * q35 nothing is at 00:14.0, so they disabled interrupt remapping
 * ("No southbridge IOAPIC found").  With intremap=on and x-southbridge=on
 * the IOMMU adds this function; it has no BARs and no function beyond
 * its identity.  Off by default: it is a device the guest sees, which
 * stock QEMU does not have.
 *
 * amd_iommu.c calls amdvi_southbridge_create() from its realize.
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pci.h"
#include "hw/pci/pci_ids.h"
#include "migration/vmstate.h"
#include "amd_iommu.h"
#include "amd_iommu-sb.h"

#define TYPE_AMDVI_SOUTHBRIDGE "amd-iommu-southbridge"

/*
 * Not a real FCH SMBus ID (1022:790b): Linux's i2c-piix4 and sp5100_tco
 * bind that one and poke FCH registers that are not there.  Linux's
 * check reads only the class; a QEMU vendor ID no driver claims.
 */
#define AMDVI_SB_DEVICE_ID      0x00fe
#define AMDVI_SB_DEVFN          PCI_DEVFN(0x14, 0)

typedef struct AMDVISouthbridge {
    PCIDevice dev;
} AMDVISouthbridge;

static const VMStateDescription vmstate_amdvi_sb = {
    .name = "amd-iommu-southbridge",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(dev, AMDVISouthbridge),
        VMSTATE_END_OF_LIST()
    }
};

static void amdvi_sb_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->vendor_id = PCI_VENDOR_ID_REDHAT;
    k->device_id = AMDVI_SB_DEVICE_ID;
    k->class_id = PCI_CLASS_SERIAL_SMBUS;
    dc->desc = "AMD IOMMU platform: southbridge (SMBus) function";
    dc->vmsd = &vmstate_amdvi_sb;
    /* created by amd-iommu, at the address its IVRS names */
    dc->user_creatable = false;
    dc->hotpluggable = false;
}

static const TypeInfo amdvi_sb_info = {
    .name = TYPE_AMDVI_SOUTHBRIDGE,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(AMDVISouthbridge),
    .class_init = amdvi_sb_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_CONVENTIONAL_PCI_DEVICE },
        { },
    },
};

bool amdvi_southbridge_create(PCIBus *bus, Error **errp)
{
    PCIDevice *dev;

    if (pci_find_device(bus, 0, AMDVI_SB_DEVFN)) {
        error_setg(errp, "amd-iommu: 00:14.0 is in use, but x-southbridge=on "
                   "needs it for the southbridge IOAPIC's device ID");
        error_append_hint(errp, "Move that device to another slot, or leave "
                          "x-southbridge off on amd-iommu (Linux 7.x then "
                          "keeps interrupt remapping off).\n");
        return false;
    }
    dev = pci_new(AMDVI_SB_DEVFN, TYPE_AMDVI_SOUTHBRIDGE);
    return pci_realize_and_unref(dev, bus, errp);
}

static void amdvi_sb_register_types(void)
{
    type_register_static(&amdvi_sb_info);
}

type_init(amdvi_sb_register_types)
