/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests of the /proc/interrupts parser behind the host-wide
 * counters of the "irq" stats provider (stats/proc-interrupts.c), on
 * fixtures in the formats of Intel and AMD hosts.
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "system/proc-interrupts.h"

static GPtrArray *parse_ok(const char *text)
{
    Error *err = NULL;
    GPtrArray *c = proc_interrupts_parse(text, &err);

    g_assert_null(err);
    g_assert_nonnull(c);
    return c;
}

/* Value of counter @name; fails the test when it is absent. */
static uint64_t get(GPtrArray *c, const char *name)
{
    for (guint i = 0; i < c->len; i++) {
        HostIrqCounter *h = g_ptr_array_index(c, i);
        if (g_str_equal(h->name, name)) {
            return h->value;
        }
    }
    g_test_message("counter %s absent", name);
    g_assert_not_reached();
}

static bool has(GPtrArray *c, const char *name)
{
    for (guint i = 0; i < c->len; i++) {
        HostIrqCounter *h = g_ptr_array_index(c, i);
        if (g_str_equal(h->name, name)) {
            return true;
        }
    }
    return false;
}

static const char intel_host[] =
"            CPU0       CPU1       CPU2       CPU3      \x20\n"
"   0:         39          0          0          0  IR-IO-APIC    2-edge      timer\n"
"   9:          0          4          0          0  IR-IO-APIC    9-fasteoi   acpi\n"
" 120:          0          0          0          0  DMAR-MSI    0-edge      dmar0\n"
" 124:          0     123456          0          0  IR-PCI-MSIX-0000:03:00.0    0-edge      vfio-msix[0](0000:03:00.0)\n"
" NMI:         12         11         10          9   Non-maskable interrupts\n"
" LOC:    1234567    2345678    3456789    4567890   Local timer interrupts\n"
" PIN:        100        200        300        400   Posted-interrupt notification event\n"
" NPI:          0          0          0          0   Nested posted-interrupt event\n"
" PIW:          5          6          7          8   Posted-interrupt wakeup event\n"
" ERR:          0\n"
" MIS:          0\n";

static void test_intel(void)
{
    g_autoptr(GPtrArray) c = parse_ok(intel_host);

    g_assert_cmpuint(get(c, "host-posted-intr-notifications"), ==, 1000);
    g_assert_cmpuint(get(c, "host-nested-posted-intr-notifications"), ==, 0);
    g_assert_cmpuint(get(c, "host-posted-intr-wakeups"), ==, 26);
    /* No PMN row (no posted_msi): absent, not zero. */
    g_assert_false(has(c, "host-posted-msi-notifications"));
    g_assert_false(has(c, "host-amdvi-ga-log-interrupts"));
    g_assert_false(has(c, "host-amdvi-shared-interrupts"));
    g_assert_cmpuint(c->len, ==, 3);
}

static const char intel_posted_msi[] =
"           CPU0       CPU1\n"
" PIN:          1          2   Posted-interrupt notification event\n"
" PMN:       4000         20   Posted MSI notification event\n";

static void test_intel_posted_msi(void)
{
    g_autoptr(GPtrArray) c = parse_ok(intel_posted_msi);

    g_assert_cmpuint(get(c, "host-posted-intr-notifications"), ==, 3);
    g_assert_cmpuint(get(c, "host-posted-msi-notifications"), ==, 4020);
    g_assert_false(has(c, "host-posted-intr-wakeups"));
}

/* AMD, x2APIC interrupt capability: one line per IOMMU and kind. */
static const char amd_x2apic[] =
"            CPU0       CPU1       CPU2       CPU3\n"
"  25:          3          0          0          0  AMD-Vi-MSI   0-edge      AMD-Vi0-Evt\n"
"  26:          0          0          0          0  AMD-Vi-MSI   1-edge      AMD-Vi0-PPR\n"
"  27:         10          0          5          0  AMD-Vi-MSI   2-edge      AMD-Vi0-GA\n"
"  28:          1          0          0          0  AMD-Vi-MSI   3-edge      AMD-Vi1-Evt\n"
"  29:          0          7          0          0  AMD-Vi-MSI   4-edge      AMD-Vi1-GA\n"
"  40:          0          0          0      99999  IR-PCI-MSIX-0000:41:00.0    0-edge      vfio-msix[0](0000:41:00.0)\n"
" LOC:       1000       1000       1000       1000   Local timer interrupts\n";

static void test_amd_x2apic(void)
{
    g_autoptr(GPtrArray) c = parse_ok(amd_x2apic);

    g_assert_cmpuint(get(c, "host-amdvi-ga-log-interrupts"), ==, 22);
    g_assert_cmpuint(get(c, "host-amdvi0-ga-log-interrupts"), ==, 15);
    g_assert_cmpuint(get(c, "host-amdvi1-ga-log-interrupts"), ==, 7);
    /* Event-log and PPR lines are not GA-log interrupts. */
    g_assert_false(has(c, "host-amdvi-shared-interrupts"));
    /* AMD hosts have no PIN row. */
    g_assert_false(has(c, "host-posted-intr-notifications"));
    g_assert_cmpuint(c->len, ==, 3);
}

/* AMD in MSI mode: event, PPR and GA-log share one "AMD-Vi" line. */
static const char amd_msi[] =
"           CPU0       CPU1      \x20\n"
"  24:         42          0  PCI-MSI 16384-edge      AMD-Vi\n"
"  25:          0          8  PCI-MSI 32768-edge      AMD-Vi\n"
"  26:          1          1  IR-PCI-MSI 524288-edge      ahci[0000:00:11.0]\n";

static void test_amd_msi_shared(void)
{
    g_autoptr(GPtrArray) c = parse_ok(amd_msi);

    g_assert_cmpuint(get(c, "host-amdvi-shared-interrupts"), ==, 50);
    /* Not misattributed to the GA log. */
    g_assert_false(has(c, "host-amdvi-ga-log-interrupts"));
    g_assert_cmpuint(c->len, ==, 1);
}

static void test_missing_rows(void)
{
    g_autoptr(GPtrArray) c = parse_ok(
        "   CPU0\n"
        "  0:   5   IO-APIC   2-edge   timer\n"
        " LOC:   7   Local timer interrupts\n");

    g_assert_cmpuint(c->len, ==, 0);
}

static void test_odd_widths(void)
{
    /* Tabs, wide numbers, short rows, trailing blanks, a shared action. */
    g_autoptr(GPtrArray) c = parse_ok(
        "\n"
        "\t CPU0\t\tCPU1   CPU2\n"
        " PIN:\t18446744073709551615   1   \tPosted-interrupt notification event\n"
        " PIW:   3\n"
        " NPI:   1   2   3   4   Nested posted-interrupt event\n"
        "  30:  2  2  2  AMD-Vi-MSI  2-edge  AMD-Vi0-GA, other-handler\n"
        "  31:  1  1  IR-PCI-MSI 2048-edge  AMD-Vi7-GA  \x20\n");

    /* Saturates instead of wrapping. */
    g_assert_cmpuint(get(c, "host-posted-intr-notifications"), ==,
                     UINT64_MAX);
    /* Fewer columns than CPUs: what is there counts. */
    g_assert_cmpuint(get(c, "host-posted-intr-wakeups"), ==, 3);
    /* A number past the last CPU column belongs to the description. */
    g_assert_cmpuint(get(c, "host-nested-posted-intr-notifications"), ==, 6);
    g_assert_cmpuint(get(c, "host-amdvi0-ga-log-interrupts"), ==, 6);
    g_assert_cmpuint(get(c, "host-amdvi7-ga-log-interrupts"), ==, 2);
    g_assert_cmpuint(get(c, "host-amdvi-ga-log-interrupts"), ==, 8);
    g_assert_false(has(c, "host-amdvi1-ga-log-interrupts"));
}

static void test_garbage(void)
{
    g_autoptr(GPtrArray) c = parse_ok(
        "  CPU0  CPU1\n"
        "garbage without colon 12 34\n"
        " PIN: abc def\n"
        ":\n"
        " PIW: -5 7\n"
        "  40: 1x 2 AMD-Vi0-GA\n"
        "\x01\x02\x7f: 3\n"
        "  41:  4  4  chip 1-edge AMD-Vi-GA AMD-Vi99999-GA AMD-Vi0-GAx\n"
        " NPI: 9 9\n");

    /* Rows without counts give nothing; the good row still counts. */
    g_assert_false(has(c, "host-posted-intr-notifications"));
    g_assert_false(has(c, "host-posted-intr-wakeups"));
    g_assert_false(has(c, "host-amdvi-ga-log-interrupts"));
    g_assert_cmpuint(get(c, "host-nested-posted-intr-notifications"), ==, 18);
    g_assert_cmpuint(c->len, ==, 1);
}

static void test_no_header(void)
{
    Error *err = NULL;

    g_assert_null(proc_interrupts_parse("", &err));
    g_assert_nonnull(err);
    error_free(err);
    err = NULL;
    g_assert_null(proc_interrupts_parse(" PIN: 1 2 Posted\n", &err));
    g_assert_nonnull(err);
    error_free(err);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/proc-interrupts/intel", test_intel);
    g_test_add_func("/proc-interrupts/intel-posted-msi",
                    test_intel_posted_msi);
    g_test_add_func("/proc-interrupts/amd-x2apic", test_amd_x2apic);
    g_test_add_func("/proc-interrupts/amd-msi-shared", test_amd_msi_shared);
    g_test_add_func("/proc-interrupts/missing-rows", test_missing_rows);
    g_test_add_func("/proc-interrupts/odd-widths", test_odd_widths);
    g_test_add_func("/proc-interrupts/garbage", test_garbage);
    g_test_add_func("/proc-interrupts/no-header", test_no_header);
    return g_test_run();
}
