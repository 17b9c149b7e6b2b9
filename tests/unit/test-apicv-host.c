/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests of the host file reader of the APIC virtualization probe
 * (target/i386/kvm/apicv-host.c): fixture trees laid out like a real
 * host's /proc and /sys, with the files' real formats, read through
 * the root prefix.  Missing files must read as "unknown".
 */

#include "qemu/osdep.h"
#include "target/i386/kvm/apicv-probe.h"
#include "target/i386/kvm/apicv-host.h"

static void put(const char *root, const char *path, const char *text)
{
    g_autofree char *full = g_strconcat(root, path, NULL);
    g_autofree char *dir = g_path_get_dirname(full);

    g_assert_cmpint(g_mkdir_with_parents(dir, 0700), ==, 0);
    g_assert_true(g_file_set_contents(full, text, -1, NULL));
}

static char *fixture_root(void)
{
    return g_dir_make_tmp("apicv-host-XXXXXX", NULL);
}

static void rm_tree(const char *path)
{
    g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
    const char *name;

    while (dir && (name = g_dir_read_name(dir))) {
        g_autofree char *child = g_build_filename(path, name, NULL);

        if (g_file_test(child, G_FILE_TEST_IS_DIR)) {
            rm_tree(child);
        } else {
            unlink(child);
        }
    }
    rmdir(path);
}

#define ZEN4_CPUINFO \
    "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n" \
    "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep x2apic svm " \
    "npt lbrv svm_lock nrip_save avic v_vmsave_vmload vgif x2avic\n\n"

/* Zen 4 with two IOMMUs, Linux 6.5 ("EFR:EFR2" order) */
static void test_zen4_two_iommus(void)
{
    g_autofree char *root = fixture_root();
    KvmApicvHostFacts f;
    g_autofree char *why = NULL;

    put(root, "/proc/cpuinfo", ZEN4_CPUINFO);
    put(root, "/proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet\n");
    put(root, "/sys/module/kvm_amd/parameters/avic", "Y\n");
    put(root, "/sys/module/kvm_amd/parameters/force_avic", "N\n");
    put(root, "/sys/module/kvm_amd/parameters/enable_ipiv", "Y\n");
    /* Linux 6.5: "EFR:EFR2"; GASup (bit 7), GAMSup=1, XTSup (bit 2) */
    put(root, "/sys/class/iommu/ivhd0/amd-iommu/features",
        "246577efa2254afe:0\n");
    put(root, "/sys/class/iommu/ivhd1/amd-iommu/features",
        "246577efa2254afe:0\n");

    apicv_read_host_facts(&f, root, "6.5.0-35-generic");
    g_assert_cmpint(f.kernel, ==, APICV_KVER(6, 5));
    g_assert_cmpint(f.vendor, ==, APICV_VENDOR_AMD);
    g_assert_cmpint(f.cpu_avic, ==, HOST_FACT_YES);
    g_assert_cmpint(f.cpu_x2avic, ==, HOST_FACT_YES);
    g_assert_cmpint(f.amd_avic, ==, HOST_FACT_YES);
    g_assert_cmpint(f.amd_force_avic, ==, HOST_FACT_NO);
    g_assert_cmpint(f.amd_ipiv, ==, HOST_FACT_YES);
    /* not in this kernel: unknown, not "no" */
    g_assert_cmpint(f.amd_device_posted, ==, HOST_FACT_UNKNOWN);
    g_assert_cmpint(f.intel_apicv, ==, HOST_FACT_UNKNOWN);
    g_assert_cmpint(f.amd_iommu, ==, HOST_FACT_YES);
    g_assert_cmpint(f.amd_ga, ==, HOST_FACT_YES);
    g_assert_cmpint(f.amd_ga_vapic, ==, HOST_FACT_YES);
    g_assert_cmpint(f.amd_xt, ==, HOST_FACT_YES);
    g_assert_cmpint(f.intel_iommu, ==, HOST_FACT_UNKNOWN);
    g_assert_cmpint(f.cmdline_amd_intr_vapic, ==, HOST_FACT_YES);
    g_assert_cmpint(apicv_host_mode(&f, &why), ==, APICV_MODE_X2AVIC);
    rm_tree(root);
}

/* One IOMMU without guest vAPIC mode lowers the host-wide fact. */
static void test_amd_iommus_disagree(void)
{
    g_autofree char *root = fixture_root();
    KvmApicvHostFacts f;

    put(root, "/proc/cpuinfo", ZEN4_CPUINFO);
    put(root, "/sys/class/iommu/ivhd0/amd-iommu/features",
        "246577efa2254afe:0\n");
    /* GASup (bit 7) clear */
    put(root, "/sys/class/iommu/ivhd1/amd-iommu/features",
        "58f77ef2229456e:0\n");
    apicv_read_host_facts(&f, root, "6.8.0");
    g_assert_cmpint(f.amd_iommu, ==, HOST_FACT_YES);
    g_assert_cmpint(f.amd_ga, ==, HOST_FACT_NO);
    rm_tree(root);
}

static void test_intel_nopost(void)
{
    g_autofree char *root = fixture_root();
    KvmApicvHostFacts f;
    g_autofree char *why = NULL;

    put(root, "/proc/cpuinfo",
        "processor\t: 0\nvendor_id\t: GenuineIntel\n"
        "flags\t\t: fpu vme x2apic vmx\n"
        "vmx flags\t: vnmi preemption_timer posted_intr invvpid ept_x_only "
        "flexpriority apicv tsc_offset vtpr mtf vapic ept vpid "
        "unrestricted_guest vapic_reg vid ple shadow_vmcs ept_mode_based_exec "
        "tsc_scaling\n\n");
    put(root, "/proc/cmdline", "root=/dev/nvme0n1p2 intel_iommu=on "
        "intremap=on,nopost\n");
    put(root, "/sys/module/kvm_intel/parameters/enable_apicv", "Y\n");
    put(root, "/sys/module/kvm_intel/parameters/enable_ipiv", "Y\n");
    put(root, "/sys/class/iommu/dmar0/intel-iommu/cap", "19ed008c40780c66\n");
    put(root, "/sys/class/iommu/dmar1/intel-iommu/cap", "d2008c40660462\n");

    apicv_read_host_facts(&f, root, "6.1.0-57-amd64");
    g_assert_cmpint(f.vendor, ==, APICV_VENDOR_INTEL);
    g_assert_cmpint(f.vmx_apicv, ==, HOST_FACT_YES);
    g_assert_cmpint(f.vmx_posted_intr, ==, HOST_FACT_YES);
    g_assert_cmpint(f.intel_apicv, ==, HOST_FACT_YES);
    g_assert_cmpint(f.intel_iommu, ==, HOST_FACT_YES);
    /* dmar1 has no PI (bit 59): the host cannot post through it */
    g_assert_cmpint(f.intel_pi, ==, HOST_FACT_NO);
    g_assert_cmpint(f.cmdline_nopost, ==, HOST_FACT_YES);
    g_assert_cmpint(apicv_host_mode(&f, &why), ==, APICV_MODE_APICV);
    g_clear_pointer(&why, g_free);
    g_assert_cmpint(apicv_host_device_posting(&f, &why), ==, HOST_FACT_NO);
    g_assert_nonnull(why);
    rm_tree(root);
}

static void collect_fact(void *opaque, const char *name, const char *value)
{
    g_string_append_printf(opaque, "%s=%s;", name, value);
}

/* Nothing readable: everything unknown, and said so. */
static void test_empty_host(void)
{
    g_autofree char *root = fixture_root();
    KvmApicvHostFacts f;
    g_autofree char *why = NULL;
    GString *all = g_string_new(NULL);

    apicv_read_host_facts(&f, root, NULL);
    g_assert_cmpint(f.vendor, ==, APICV_VENDOR_UNKNOWN);
    g_assert_cmpint(f.cpu_avic, ==, HOST_FACT_UNKNOWN);
    g_assert_cmpint(f.amd_avic, ==, HOST_FACT_UNKNOWN);
    g_assert_cmpint(f.amd_iommu, ==, HOST_FACT_UNKNOWN);
    g_assert_cmpint(f.cmdline_nopost, ==, HOST_FACT_UNKNOWN);
    g_assert_cmpint(apicv_host_mode(&f, &why), ==, APICV_MODE_NONE);
    g_assert_nonnull(why);

    apicv_host_facts_foreach(&f, collect_fact, all);
    g_assert_nonnull(strstr(all->str, "vendor=unknown;"));
    g_assert_nonnull(strstr(all->str, "kernel=unknown;"));
    g_assert_nonnull(strstr(all->str, "kvm_amd.avic=unknown;"));
    g_assert_nonnull(strstr(all->str, "cap.max-vcpu-id=unknown;"));
    g_string_free(all, true);
    rm_tree(root);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/apicv-host/zen4-two-iommus", test_zen4_two_iommus);
    g_test_add_func("/apicv-host/amd-iommus-disagree",
                    test_amd_iommus_disagree);
    g_test_add_func("/apicv-host/intel-nopost", test_intel_nopost);
    g_test_add_func("/apicv-host/empty-host", test_empty_host);
    return g_test_run();
}
