/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * QMP tests of the "irq" stats provider (stats/irq-stats.c): schemas,
 * per-device and per-vCPU counters that rise when the device works,
 * the names, provider and vCPU filters, unknown names rejected, the
 * host-wide target against the host's own /proc/interrupts, HMP
 * "info stats", and the shape libvirt relies on (nothing of ours in
 * the "vm" and "vcpu" targets, every stat name unique).
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "qobject/qdict.h"
#include "qobject/qlist.h"
#include "qobject/qnum.h"
#include "qobject/qjson.h"
#include "qapi/error.h"
#include "hw/pci/pci_regs.h"
#include "irq-stats-qtest.h"

#define IOMMU_PATH "/machine/peripheral/iommu0"
#define EDU_DEVFN QPCI_DEVFN(4, 0)
#define EDU_RAISE_IRQ 0x60
#define MSI_VECTOR 0x41

/* query-stats for @target with optional extra JSON @args; returns list. */
static QList *query_stats(QTestState *qts, const char *target,
                          const char *args)
{
    g_autofree char *json = g_strdup_printf("{ 'target': '%s' %s }", target,
                                            args ? args : "");
    QObject *arguments = qobject_from_json(json, &error_abort);
    QDict *resp = qtest_qmp(qts, "{ 'execute': 'query-stats', "
                            "'arguments': %p }", arguments);
    QList *ret;

    g_assert(qdict_haskey(resp, "return"));
    ret = qobject_ref(qdict_get_qlist(resp, "return"));
    qobject_unref(resp);
    return ret;
}

static int count_provider(QList *results, const char *provider)
{
    QListEntry *e;
    int n = 0;

    QLIST_FOREACH_ENTRY(results, e) {
        QDict *r = qobject_to(QDict, qlist_entry_obj(e));
        if (g_str_equal(qdict_get_str(r, "provider"), provider)) {
            n++;
        }
    }
    return n;
}

/* Stats list of the irq result for @path (NULL: the one without). */
static QList *result_stats(QList *results, const char *path)
{
    QListEntry *e;

    QLIST_FOREACH_ENTRY(results, e) {
        QDict *r = qobject_to(QDict, qlist_entry_obj(e));
        const char *p = qdict_get_try_str(r, "qom-path");

        if (!g_str_equal(qdict_get_str(r, "provider"), "irq")) {
            continue;
        }
        if ((path && p && g_str_equal(p, path)) || (!path && !p)) {
            return qdict_get_qlist(r, "stats");
        }
    }
    return NULL;
}

static bool stat_value(QList *stats, const char *name, uint64_t *value)
{
    QListEntry *e;

    QLIST_FOREACH_ENTRY(stats, e) {
        QDict *s = qobject_to(QDict, qlist_entry_obj(e));
        if (g_str_equal(qdict_get_str(s, "name"), name)) {
            *value = qnum_get_uint(qobject_to(QNum, qdict_get(s, "value")));
            return true;
        }
    }
    return false;
}

/* Every stat name appears once across all providers and targets. */
static void check_schemas_unique(QTestState *qts)
{
    QDict *resp = qtest_qmp(qts, "{ 'execute': 'query-stats-schemas' }");
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    QListEntry *e, *f;

    g_assert(qdict_haskey(resp, "return"));
    QLIST_FOREACH_ENTRY(qdict_get_qlist(resp, "return"), e) {
        QDict *schema = qobject_to(QDict, qlist_entry_obj(e));
        const char *provider = qdict_get_str(schema, "provider");
        const char *target = qdict_get_str(schema, "target");

        if (g_str_equal(provider, "irq")) {
            /* Never in the targets libvirt reads as a whole. */
            g_assert_cmpstr(target, !=, "vm");
            g_assert_cmpstr(target, !=, "vcpu");
        }
        QLIST_FOREACH_ENTRY(qdict_get_qlist(schema, "stats"), f) {
            QDict *v = qobject_to(QDict, qlist_entry_obj(f));
            const char *name = qdict_get_str(v, "name");

            g_assert_false(g_hash_table_contains(seen, name));
            g_hash_table_add(seen, (gpointer)name);
        }
    }
    qobject_unref(resp);
}

static bool schema_has(QTestState *qts, const char *target, const char *name)
{
    QDict *resp = qtest_qmp(qts, "{ 'execute': 'query-stats-schemas', "
                            "'arguments': { 'provider': 'irq' } }");
    QListEntry *e, *f;
    bool found = false;

    QLIST_FOREACH_ENTRY(qdict_get_qlist(resp, "return"), e) {
        QDict *schema = qobject_to(QDict, qlist_entry_obj(e));

        g_assert_cmpstr(qdict_get_str(schema, "provider"), ==, "irq");
        if (!g_str_equal(qdict_get_str(schema, "target"), target)) {
            continue;
        }
        QLIST_FOREACH_ENTRY(qdict_get_qlist(schema, "stats"), f) {
            QDict *v = qobject_to(QDict, qlist_entry_obj(f));
            if (g_str_equal(qdict_get_str(v, "name"), name)) {
                g_assert_cmpstr(qdict_get_str(v, "type"), ==, "cumulative");
                found = true;
            }
        }
    }
    qobject_unref(resp);
    return found;
}

/* Nothing of ours where libvirt reads "vm" and "vcpu" results. */
static void check_libvirt_targets(QTestState *qts)
{
    QList *vm = query_stats(qts, "vm", NULL);
    QList *vcpu = query_stats(qts, "vcpu", NULL);

    g_assert_cmpint(count_provider(vm, "irq"), ==, 0);
    g_assert_cmpint(count_provider(vcpu, "irq"), ==, 0);
    qobject_unref(vm);
    qobject_unref(vcpu);
}

static void test_machine_none(void)
{
    QTestState *qts = qtest_init("-M none");
    QList *res = query_stats(qts, "irq-device", NULL);

    g_assert_cmpint(count_provider(res, "irq"), ==, 0);
    qobject_unref(res);
    res = query_stats(qts, "irq-vcpu", NULL);
    g_assert_cmpint(count_provider(res, "irq"), ==, 0);
    qobject_unref(res);
    check_schemas_unique(qts);
    check_libvirt_targets(qts);
    qtest_quit(qts);
}

/* Host rows of /proc/interrupts, as the test reads them itself. */
static bool host_has_row(const char *text, const char *label)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

    for (char **l = lines; *l; l++) {
        g_autofree char *t = g_strstrip(g_strdup(*l));
        g_autofree char *prefix = g_strdup_printf("%s:", label);
        if (g_str_has_prefix(t, prefix)) {
            return true;
        }
    }
    return false;
}

static void test_host(void)
{
    static const struct {
        const char *label, *name;
    } rows[] = {
        { "PIN", "host-posted-intr-notifications" },
        { "NPI", "host-nested-posted-intr-notifications" },
        { "PIW", "host-posted-intr-wakeups" },
        { "PMN", "host-posted-msi-notifications" },
    };
    g_autofree char *text = NULL;
    QTestState *qts;
    QList *res, *stats;
    uint64_t v;
    bool any = false;

    if (!g_file_get_contents("/proc/interrupts", &text, NULL, NULL)) {
        g_test_skip("no /proc/interrupts on this host");
        return;
    }
    qts = qtest_init("-M none");
    res = query_stats(qts, "host", NULL);
    stats = result_stats(res, NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        bool row = host_has_row(text, rows[i].label);

        any |= row;
        /* A row the host has is a counter; one it lacks is absent. */
        g_assert_true(!stats ? !row :
                      stat_value(stats, rows[i].name, &v) == row);
    }
    if (any) {
        g_assert_cmpint(qlist_size(stats), >, 0);
    }
    qobject_unref(res);

    /* The names filter narrows the host result too. */
    if (any) {
        res = query_stats(qts, "host", ", 'providers': [ { 'provider': "
                          "'irq', 'names': [ 'host-posted-intr-wakeups' ] } ]");
        stats = result_stats(res, NULL);
        if (host_has_row(text, "PIW")) {
            g_assert_cmpint(qlist_size(stats), ==, 1);
        } else {
            g_assert_null(stats);
        }
        qobject_unref(res);
    }
    qtest_quit(qts);
}

static void test_unknown_name(void)
{
    QTestState *qts = qtest_init("-M none");
    QDict *resp;

    resp = qtest_qmp(qts, "{ 'execute': 'query-stats', 'arguments': { "
                     "'target': 'irq-device', 'providers': [ { "
                     "'provider': 'irq', 'names': [ 'no-such-stat' ] } ] } }");
    g_assert(qdict_haskey(resp, "error"));
    g_assert_nonnull(strstr(qdict_get_str(qdict_get_qdict(resp, "error"),
                                          "desc"), "no-such-stat"));
    qobject_unref(resp);

    resp = qtest_qmp(qts, "{ 'execute': 'query-stats', 'arguments': { "
                     "'target': 'no-such-target' } }");
    g_assert(qdict_haskey(resp, "error"));
    qobject_unref(resp);
    qtest_quit(qts);
}

/* Raise one MSI from the edu device, as a driver would program it. */
static void edu_raise_msi(QTestState *qts)
{
    QPCIBus *bus = qpci_new_pc(qts, NULL);
    QPCIDevice *dev = qpci_device_find(bus, EDU_DEVFN);
    QPCIBar bar;
    uint8_t cap;
    uint16_t ctrl;

    g_assert_nonnull(dev);
    qpci_device_enable(dev);
    bar = qpci_iomap(dev, 0, NULL);
    cap = qpci_find_capability(dev, PCI_CAP_ID_MSI, 0);
    g_assert_cmpint(cap, !=, 0);
    ctrl = qpci_config_readw(dev, cap + PCI_MSI_FLAGS);
    g_assert_true(ctrl & PCI_MSI_FLAGS_64BIT);
    qpci_config_writel(dev, cap + PCI_MSI_ADDRESS_LO, 0xfee00000);
    qpci_config_writel(dev, cap + PCI_MSI_ADDRESS_HI, 0);
    qpci_config_writew(dev, cap + PCI_MSI_DATA_64, MSI_VECTOR);
    qpci_config_writew(dev, cap + PCI_MSI_FLAGS, ctrl | PCI_MSI_FLAGS_ENABLE);

    qpci_io_writel(dev, bar, EDU_RAISE_IRQ, 1);

    qpci_iounmap(dev, bar);
    g_free(dev);
    qpci_free_pc(bus);
}

static QTestState *start_q35(void)
{
    return qtest_init("-M q35 -smp 2 "
                      "-device amd-iommu,intremap=on,id=iommu0 "
                      "-device edu,addr=04.0");
}

static void test_device_counter_rises(void)
{
    QTestState *qts = start_q35();
    g_autofree char *cpu0 = irq_stats_cpu_path(qts, 0);
    g_autofree char *cpu1 = irq_stats_cpu_path(qts, 1);
    uint64_t remapped, faults, apic0, apic1;

    g_assert_true(schema_has(qts, "irq-device", "amdvi-remapped-interrupts"));
    g_assert_true(schema_has(qts, "irq-device", "amdvi-ir-faults"));
    g_assert_true(schema_has(qts, "irq-vcpu", "apic-interrupt-requests"));
    g_assert_false(schema_has(qts, "irq-vcpu", "amdvi-ir-faults"));

    remapped = irq_stat(qts, "irq-device", IOMMU_PATH,
                        "amdvi-remapped-interrupts");
    faults = irq_stat(qts, "irq-device", IOMMU_PATH, "amdvi-ir-faults");
    apic0 = irq_stat(qts, "irq-vcpu", cpu0, "apic-interrupt-requests");
    apic1 = irq_stat(qts, "irq-vcpu", cpu1, "apic-interrupt-requests");

    edu_raise_msi(qts);

    /* The MSI went through the IOMMU's remapping stage to CPU 0. */
    g_assert_cmpuint(irq_stat(qts, "irq-device", IOMMU_PATH,
                              "amdvi-remapped-interrupts"), ==, remapped + 1);
    g_assert_cmpuint(irq_stat(qts, "irq-device", IOMMU_PATH,
                              "amdvi-ir-faults"), ==, faults);
    g_assert_cmpuint(irq_stat(qts, "irq-vcpu", cpu0,
                              "apic-interrupt-requests"), ==, apic0 + 1);
    g_assert_cmpuint(irq_stat(qts, "irq-vcpu", cpu1,
                              "apic-interrupt-requests"), ==, apic1);

    check_schemas_unique(qts);
    check_libvirt_targets(qts);
    qtest_quit(qts);
}

static void test_filters(void)
{
    QTestState *qts = start_q35();
    g_autofree char *cpu1 = irq_stats_cpu_path(qts, 1);
    QList *res, *stats;
    QDict *r;
    uint64_t v;


    /* names: only what was asked for. */
    res = query_stats(qts, "irq-device", ", 'providers': [ { 'provider': "
                      "'irq', 'names': [ 'amdvi-ir-faults' ] } ]");
    stats = result_stats(res, IOMMU_PATH);
    g_assert_nonnull(stats);
    g_assert_cmpint(qlist_size(stats), ==, 1);
    g_assert_true(stat_value(stats, "amdvi-ir-faults", &v));
    qobject_unref(res);

    /* An empty names list asks for nothing. */
    res = query_stats(qts, "irq-device", ", 'providers': [ { 'provider': "
                      "'irq', 'names': [ ] } ]");
    g_assert_cmpint(count_provider(res, "irq"), ==, 0);
    qobject_unref(res);

    /* Another provider only: nothing of ours. */
    res = query_stats(qts, "irq-device",
                      ", 'providers': [ { 'provider': 'kvm' } ]");
    g_assert_cmpint(count_provider(res, "irq"), ==, 0);
    qobject_unref(res);

    /* vCPU filter: only the vCPU named, with its canonical path. */
    res = query_stats(qts, "irq-vcpu", NULL);
    g_assert_cmpint(count_provider(res, "irq"), ==, 2);
    qobject_unref(res);
    {
        g_autofree char *arg = g_strdup_printf(", 'vcpus': [ '%s' ]", cpu1);
        res = query_stats(qts, "irq-vcpu", arg);
    }
    g_assert_cmpint(qlist_size(res), ==, 1);
    r = qobject_to(QDict, qlist_peek(res));
    g_assert_cmpstr(qdict_get_str(r, "qom-path"), ==, cpu1);
    qobject_unref(res);
    res = query_stats(qts, "irq-vcpu", ", 'vcpus': [ ]");
    g_assert_cmpint(qlist_size(res), ==, 0);
    qobject_unref(res);
    qtest_quit(qts);
}

static void test_hmp(void)
{
    QTestState *qts = start_q35();
    g_autofree char *cpu0 = irq_stats_cpu_path(qts, 0);
    g_autofree char *out = NULL, *out_vcpu = NULL;
    g_autofree char *want = NULL, *want_vcpu = NULL;

    edu_raise_msi(qts);
    want = g_strdup_printf("amdvi-remapped-interrupts (cumulative): %" PRIu64,
                           irq_stat(qts, "irq-device", IOMMU_PATH,
                                    "amdvi-remapped-interrupts"));
    want_vcpu = g_strdup_printf("apic-interrupt-requests (cumulative): %"
                                PRIu64, irq_stat(qts, "irq-vcpu", cpu0,
                                                 "apic-interrupt-requests"));
    out = qtest_hmp(qts, "info stats irq-device");
    g_assert_nonnull(strstr(out, IOMMU_PATH));
    g_assert_nonnull(strstr(out, want));
    /* HMP's current CPU is CPU 0. */
    out_vcpu = qtest_hmp(qts, "info stats irq-vcpu * irq");
    g_assert_nonnull(strstr(out_vcpu, want_vcpu));
    g_free(out);
    /* The sources, and why the KVM ones are not counted under qtest. */
    out = qtest_hmp(qts, "info irq-stats");
    g_assert_nonnull(strstr(out, "devices (target irq-device)"));
    g_assert_nonnull(strstr(out, "kvm:kvm_avic_doorbell"));
    g_assert_nonnull(strstr(out, "not counted: KVM is not in use"));
    qtest_quit(qts);
}

static void test_pseries(void)
{
    QTestState *qts = qtest_init("-M pseries,ic-mode=xics");

    check_schemas_unique(qts);
    check_libvirt_targets(qts);
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    const char *arch = qtest_get_arch();

    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/irq-stats/none", test_machine_none);
    qtest_add_func("/irq-stats/host", test_host);
    qtest_add_func("/irq-stats/unknown-name", test_unknown_name);
    if (g_str_equal(arch, "x86_64")) {
        qtest_add_func("/irq-stats/amd-iommu/counter-rises",
                       test_device_counter_rises);
        qtest_add_func("/irq-stats/amd-iommu/filters", test_filters);
        qtest_add_func("/irq-stats/amd-iommu/hmp", test_hmp);
    } else if (g_str_equal(arch, "ppc64")) {
        qtest_add_func("/irq-stats/pseries", test_pseries);
    }
    return g_test_run();
}
