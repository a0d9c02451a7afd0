/* Tests server/conf/conf_files.c: a recording reads each file once and gives
 * the same bytes after; privsep_gather reads what a configuration names
 * (the helper's side, tested here with what it fills); pack and
 * unpack carry files, errors and roots across (a socketpair stands for the
 * helper's); what was received answers only for its own paths. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/conf/conf_files.h"
#include "server/conf/config.h"
#include "server/privsep.h"
#include "tests/unit/check_run.h"

static char dir[] = "/tmp/test_conf_files_XXXXXX";
static char cert[64], key[64], mime[64], root[64];

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
	snprintf(key, sizeof(key), "%s/key.pem", dir);
	snprintf(mime, sizeof(mime), "%s/mime.types", dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	put(cert, "CERT");
	put(key, "KEY");
	put(mime, "text/x-t t\n");
	ck_assert_int_eq(mkdir(root, 0700), 0);
}

static void teardown(void)
{
	unlink(cert);
	unlink(key);
	unlink(mime);
	rmdir(root);
	rmdir(dir);
	strcpy(dir, "/tmp/test_conf_files_XXXXXX");
}

START_TEST(test_record)
{
	struct conf_files cf;
	char *data;
	size_t len;

	conf_files_init(&cf);
	ck_assert_int_eq(conf_files_read(&cf, cert, &data, &len), 0);
	ck_assert_str_eq(data, "CERT");
	free(data);
	put(cert, "CHANGED");
	/* The same reading: asking again gives what was read first. */
	ck_assert_int_eq(conf_files_read(&cf, cert, &data, &len), 0);
	ck_assert_str_eq(data, "CERT");
	free(data);
	ck_assert_int_eq(conf_files_read(&cf, "/nonexistent/x", &data, &len), -ENOENT);
	ck_assert_uint_eq(cf.n, 2);
	conf_files_free(&cf);
	/* NULL: the disk, each time. */
	ck_assert_int_eq(conf_files_read(NULL, cert, &data, &len), 0);
	ck_assert_str_eq(data, "CHANGED");
	free(data);
}
END_TEST

START_TEST(test_gather_pack_unpack)
{
	struct config cfg;
	struct conf_files cf, got;
	int memfd, fds[CONF_FILES_MAX_DIRS], fd;
	size_t nfds;
	char *data;
	size_t len;
	struct stat a, b;

	config_defaults(&cfg);
	cfg.site.root = strdup(root);
	cfg.site.certs[0].cert_file = strdup(cert);
	cfg.site.certs[0].key_file = strdup(key);
	cfg.site.ncerts = 1;
	free(cfg.mime_types);
	cfg.mime_types = strdup(mime);
	cfg.ticket_key_files[0] = strdup("/nonexistent/ticket.key");
	cfg.nticket_key_files = 1;
	conf_files_init(&cf);
	privsep_gather(&cf, &cfg);
	ck_assert_uint_eq(cf.n, 5); /* root, cert, key, ticket key, mime types */
	ck_assert_int_eq(conf_files_pack(&cf, &memfd, fds, &nfds), 0);
	ck_assert_uint_eq(nfds, 1);
	/* As the socket does it: the receiver gets fds of its own. */
	fds[0] = dup(fds[0]);
	ck_assert_int_eq(conf_files_unpack(&got, memfd, fds, nfds), 0);

	ck_assert(got.received);
	ck_assert_int_eq(conf_files_read(&got, key, &data, &len), 0);
	ck_assert_str_eq(data, "KEY");
	free(data);
	ck_assert_int_eq(conf_files_read(&got, mime, &data, &len), 0);
	ck_assert_uint_eq(len, 11);
	free(data);
	ck_assert_int_eq(conf_files_read(&got, "/nonexistent/ticket.key", &data, &len), -ENOENT);
	/* Not named by the configuration: not read, and not read now. */
	ck_assert_int_eq(conf_files_read(&got, "/etc/passwd", &data, &len), -ENOMSG);
	ck_assert_int_eq(conf_files_open_dir(&got, "/etc"), -ENOMSG);
	fd = conf_files_open_dir(&got, root);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &a), 0);
	ck_assert_int_eq(stat(root, &b), 0);
	ck_assert(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	close(fd);
	conf_files_free(&got);
	conf_files_free(&cf);
	config_free(&cfg);
}
END_TEST

START_TEST(test_unpack_garbage)
{
	struct conf_files got;
	int p[2];
	FILE *f = tmpfile();

	ck_assert_ptr_nonnull(f);
	fputs("not a packed reading", f);
	fflush(f);
	ck_assert_int_eq(pipe(p), 0);
	close(p[1]);
	/* The fd given along is closed too. */
	ck_assert_int_eq(conf_files_unpack(&got, dup(fileno(f)), &p[0], 1), -EBADMSG);
	ck_assert_int_eq(close(p[0]), -1);
	conf_files_free(&got);
	fclose(f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("conf_files");
	TCase *tc = tcase_create("conf_files");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_record);
	tcase_add_test(tc, test_gather_pack_unpack);
	tcase_add_test(tc, test_unpack_garbage);
	suite_add_tcase(s, tc);
	return check_run(s);
}
