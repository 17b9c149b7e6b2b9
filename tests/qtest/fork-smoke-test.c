/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Smoke test of the fork's identity: each binary, on the machines the
 * fork cares about, starts under qtest and reports the fork in
 * query-version's "package" and in -version.  Registered through
 * tests/qtest/fork/meson.build for x86_64 and ppc64.
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "qobject/qdict.h"

#define FORK_NAME "qemu-irq-fork"

static void check_query_version(const char *args)
{
    QTestState *qts = qtest_init(args);
    QDict *resp, *ret, *qemu;
    const char *package;

    resp = qtest_qmp(qts, "{ 'execute': 'query-version' }");
    g_assert(resp);
    ret = qdict_get_qdict(resp, "return");
    g_assert(ret);

    package = qdict_get_str(ret, "package");
    g_assert_nonnull(strstr(package, FORK_NAME));

    qemu = qdict_get_qdict(ret, "qemu");
    g_assert_cmpint(qdict_get_int(qemu, "major"), ==, 10);
    g_assert_cmpint(qdict_get_int(qemu, "minor"), ==, 0);

    qobject_unref(resp);
    qtest_quit(qts);
}

static void test_version_machine(const void *data)
{
    check_query_version(data);
}

static void test_version_option(void)
{
    const char *binary = g_getenv("QTEST_QEMU_BINARY");
    g_autofree char *out = NULL;
    g_autoptr(GError) err = NULL;
    char *argv[] = { (char *)binary, (char *)"-version", NULL };
    int status;

    g_assert_nonnull(binary);
    g_assert_true(g_spawn_sync(NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &out, NULL, &status, &err));
    g_assert_no_error(err);
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    g_assert_nonnull(strstr(out, "QEMU emulator version 10.0"));
    g_assert_nonnull(strstr(out, FORK_NAME));
}

int main(int argc, char **argv)
{
    const char *arch = qtest_get_arch();

    g_test_init(&argc, &argv, NULL);

    qtest_add_data_func("/fork/version/none", "-M none",
                        test_version_machine);
    if (g_str_equal(arch, "ppc64")) {
        qtest_add_data_func("/fork/version/pseries-xics",
                            "-M pseries,ic-mode=xics", test_version_machine);
    } else if (g_str_equal(arch, "x86_64")) {
        qtest_add_data_func("/fork/version/q35", "-M q35",
                            test_version_machine);
    }
    qtest_add_func("/fork/version/option", test_version_option);

    return g_test_run();
}
