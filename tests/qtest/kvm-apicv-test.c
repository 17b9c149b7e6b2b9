/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * qtests of the KVM APIC virtualization negotiation that run without
 * KVM (target/i386/kvm/apicv-negotiate.c): the kvm accelerator's
 * apicv / device-posted-irqs options (introspection, and the errors
 * for bad values), and x-query-kvm-apicv / "info kvm-apicv" answering
 * that KVM is not in use.  The decisions themselves are unit-tested on
 * host fixtures (tests/unit/test-apicv-probe.c, test-apicv-host.c).
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "qobject/qdict.h"
#include "qobject/qlist.h"
#include "qobject/qstring.h"

/* The options exist on the kvm accelerator, as OnOffAuto. */
static void test_options_introspect(void)
{
    QTestState *qts = qtest_init("-M q35");
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'qom-list-properties', "
                           "'arguments': { 'typename': 'kvm-accel' } }");
    QList *props = qdict_get_qlist(rsp, "return");
    const QListEntry *e;
    int found = 0;

    g_assert_nonnull(props);
    QLIST_FOREACH_ENTRY(props, e) {
        QDict *p = qobject_to(QDict, qlist_entry_obj(e));
        const char *name = qdict_get_str(p, "name");

        if (g_str_equal(name, "apicv") ||
            g_str_equal(name, "device-posted-irqs")) {
            g_assert_cmpstr(qdict_get_str(p, "type"), ==, "OnOffAuto");
            g_assert_nonnull(strstr(qdict_get_str(p, "description"),
                                    "auto"));
            found++;
        } else if (g_str_equal(name, "apicv-pit-discard")) {
            g_assert_cmpstr(qdict_get_str(p, "type"), ==, "bool");
            g_assert_nonnull(strstr(qdict_get_str(p, "description"),
                                    "guest-visible"));
            found++;
        }
    }
    g_assert_cmpint(found, ==, 3);
    qobject_unref(rsp);
    qtest_quit(qts);
}

/*
 * A bad value stops QEMU with an error naming the option.  QEMU is run
 * directly: it exits before it would connect to a qtest socket.
 */
static void test_bad_value(gconstpointer opaque)
{
    const char *arg = opaque;
    g_autofree char *accel = g_strdup_printf("kvm,%s", arg);
    const char *argv[] = {
        getenv("QTEST_QEMU_BINARY"), "-M", "q35", "-accel", accel,
        "-display", "none", "-nodefaults", NULL,
    };
    g_autofree char *err = NULL;
    g_autoptr(GError) gerr = NULL;
    int status;

    g_assert_nonnull(argv[0]);
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL,
                               G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                               &err, &status, &gerr));
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    g_assert_nonnull(strstr(err, strstr(arg, "apicv=") ?
                            "Parameter 'apicv' does not accept value" :
                            "Parameter 'device-posted-irqs' does not accept "
                            "value"));
}

/* Under qtest (no KVM) the query answers, it does not fail. */
static void test_query_without_kvm(void)
{
    QTestState *qts = qtest_init("-M q35");
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'x-query-kvm-apicv' }");
    QDict *ret = qdict_get_qdict(rsp, "return");
    g_autofree char *hmp = NULL;

    g_assert_nonnull(ret);
    g_assert_false(qdict_get_bool(ret, "kvm"));
    /* nothing else to say without KVM */
    g_assert_cmpint(qdict_size(ret), ==, 1);
    qobject_unref(rsp);

    hmp = qtest_hmp(qts, "info kvm-apicv");
    g_assert_nonnull(strstr(hmp, "KVM is not in use"));
    qtest_quit(qts);
}

/* The command is introspectable and carries the "unstable" feature. */
static void test_query_unstable(void)
{
    QTestState *qts = qtest_init("-M q35");
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'query-qmp-schema' }");
    QList *schema = qdict_get_qlist(rsp, "return");
    const QListEntry *e;
    bool found = false;

    QLIST_FOREACH_ENTRY(schema, e) {
        QDict *ent = qobject_to(QDict, qlist_entry_obj(e));
        QList *features;
        const QListEntry *f;

        if (!g_str_equal(qdict_get_str(ent, "name"), "x-query-kvm-apicv")) {
            continue;
        }
        features = qdict_get_qlist(ent, "features");
        g_assert_nonnull(features);
        QLIST_FOREACH_ENTRY(features, f) {
            QString *s = qobject_to(QString, qlist_entry_obj(f));

            found |= g_str_equal(qstring_get_str(s), "unstable");
        }
    }
    g_assert_true(found);
    qobject_unref(rsp);
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("kvm-apicv/options-introspect", test_options_introspect);
    qtest_add_data_func("kvm-apicv/bad-value/apicv", "apicv=maybe",
                        test_bad_value);
    qtest_add_data_func("kvm-apicv/bad-value/device-posted-irqs",
                        "device-posted-irqs=yes-please", test_bad_value);
    qtest_add_func("kvm-apicv/query-without-kvm", test_query_without_kvm);
    qtest_add_func("kvm-apicv/query-unstable", test_query_unstable);
    return g_test_run();
}
