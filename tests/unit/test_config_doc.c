/* Tests server/conf/config_doc.c: the manual's OPTIONS section and the sample
 * config, both printed from the option table. Every option has its entry;
 * roff escapes what it must; the sample, its defaults uncommented, parses
 * back into exactly the defaults. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* open_memstream, asprintf */
#endif
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/conf/config.h"
#include "server/conf/config_doc.h"
#include "server/conf/config_options.h"
#include "tests/unit/check_run.h"

/* What f printed, as a string the caller frees. */
static char *capture(void (*f)(FILE *))
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(out);
	f(out);
	fclose(out);
	return text;
}

/* o->name with each '-' as roff's "\-". */
static void roff_name(const char *name, char *out, size_t n)
{
	size_t j = 0;

	for (; *name && j + 3 < n; name++) {
		if (*name == '-')
			out[j++] = '\\';
		out[j++] = *name;
	}
	out[j] = '\0';
}

START_TEST(test_man_has_every_option)
{
	char *man = capture(config_doc_man_options);

	for (size_t i = 0; i < config_noptions; i++) {
		char name[128], *want;

		roff_name(config_options[i].name, name, sizeof(name));
		ck_assert_int_gt(asprintf(&want, ".TP\n\\fB\\-\\-%s\\fR", name), 0);
		ck_assert_msg(strstr(man, want), "no entry for --%s", config_options[i].name);
		free(want);
	}
	for (int g = 0; g < G_COUNT; g++) {
		char *want;

		ck_assert_int_gt(asprintf(&want, ".SS %s\n", config_group_name((enum opt_group)g)),
		                 0);
		ck_assert_msg(strstr(man, want), "no heading %s", want);
		free(want);
	}
	free(man);
}
END_TEST

START_TEST(test_man_escapes)
{
	char *man = capture(config_doc_man_options);

	/* Every '-' is "\-", so options render as typed; no line starts a
	 * request by accident (a '.' or '\'' that is not ours). */
	for (const char *p = man; (p = strchr(p, '-')) != NULL; p++)
		ck_assert_msg(p > man && p[-1] == '\\', "a bare '-' at: %.40s", p);
	for (const char *line = man; *line; line = strchr(line, '\n') + 1) {
		if (*line == '\'')
			ck_abort_msg("a line starts with a quote: %.40s", line);
		if (*line == '.')
			ck_assert_msg(
			    strncmp(line, ".TP\n", 4) == 0 || strncmp(line, ".SS ", 4) == 0 ||
			        strncmp(line, ".br\n", 4) == 0 || strncmp(line, ".PP\n", 4) == 0,
			    "an unexpected request: %.40s", line);
		if (!strchr(line, '\n'))
			break;
	}
	/* Cipher lists may wrap after each ':'. */
	ck_assert(strstr(man, "TLS_AES_128_GCM_SHA256:\\:TLS_AES_256_GCM_SHA384"));
	free(man);
}
END_TEST

START_TEST(test_sample_has_every_file_key)
{
	char *sample = capture(config_doc_sample);

	for (size_t i = 0; i < config_noptions; i++) {
		const struct opt *o = &config_options[i];
		char *want;

		ck_assert_int_gt(asprintf(&want, "\n#%s %s\n", o->name, o->def ? o->def : o->value),
		                 0);
		if (o->cli_only)
			ck_assert_msg(!strstr(sample, want), "--%s is not a file key", o->name);
		else
			ck_assert_msg(strstr(sample, want), "no line for %s", o->name);
		free(want);
	}
	/* Comments fit 78 columns, but for a word longer than that. */
	for (const char *line = sample; *line;) {
		size_t len = strcspn(line, "\n");

		if (line[0] == '#' && line[1] == ' ')
			ck_assert_msg(len <= 78 || !memchr(line + 2, ' ', len - 2),
			              "too long: %.*s", (int)len, line);
		line += len + (line[len] == '\n');
	}
	free(sample);
}
END_TEST

/* The commented defaults, uncommented, parse into the defaults. */
START_TEST(test_sample_defaults_parse)
{
	char *sample = capture(config_doc_sample), path[] = "/tmp/ktlsd-test-doc-XXXXXX";
	struct config parsed, defaults;
	FILE *f;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < config_noptions; i++) {
		const struct opt *o = &config_options[i];
		char *line, *end;

		/* listen's default applies only without any listener. */
		if (o->cli_only || !o->def || o->type == T_LISTEN)
			continue;
		ck_assert_int_gt(asprintf(&line, "\n#%s ", o->name), 0);
		end = strstr(sample, line);
		ck_assert_ptr_nonnull(end);
		end += 2;
		fprintf(f, "%.*s\n", (int)strcspn(end, "\n"), end);
		free(line);
	}
	fclose(f);
	config_defaults(&parsed);
	ck_assert_int_eq(config_parse_file(&parsed, path, stderr), 0);
	config_defaults(&defaults);
	for (size_t i = 0; i < config_noptions; i++) {
		const struct opt *o = &config_options[i];
		const char *a, *b;

		switch (o->type) {
		case T_STRING:
		case T_PATH_OR:
		case T_PROTOCOLS:
			a = *(char **)((char *)&parsed + o->off);
			b = *(char **)((char *)&defaults + o->off);
			ck_assert_msg(a == b || (a && b && strcmp(a, b) == 0), "%s differs",
			              o->name);
			break;
		case T_UINT:
		case T_MS:
		case T_BYTES:
			ck_assert_uint_eq(*(unsigned *)((char *)&parsed + o->off),
			                  *(unsigned *)((char *)&defaults + o->off));
			break;
		case T_BOOL:
			ck_assert_int_eq(*(bool *)((char *)&parsed + o->off),
			                 *(bool *)((char *)&defaults + o->off));
			break;
		case T_TRISTATE:
		case T_ENUM:
			ck_assert_int_eq(*(int *)((char *)&parsed + o->off),
			                 *(int *)((char *)&defaults + o->off));
			break;
		default:
			break;
		}
	}
	config_free(&parsed);
	config_free(&defaults);
	unlink(path);
	free(sample);
}
END_TEST

static Suite *config_doc_suite(void)
{
	Suite *s = suite_create("config_doc");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_man_has_every_option);
	tcase_add_test(tc, test_man_escapes);
	tcase_add_test(tc, test_sample_has_every_file_key);
	tcase_add_test(tc, test_sample_defaults_parse);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(config_doc_suite());
}
