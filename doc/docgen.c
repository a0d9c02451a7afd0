/* Build tool: the parts of ktlsd's documentation made from its option table
 * (server/conf/config_doc.h), so that they cannot drift from --help.
 *
 *   docgen man TEMPLATE   prints ktlsd(8): TEMPLATE, whose line "@OPTIONS@"
 *                         becomes the options and whose @VERSION@,
 *                         @SYSCONFDIR@ and @PKGDATADIR@ become this build's
 *   docgen conf           prints the sample ktlsd.conf
 *
 * Exits 0, or 1 after a message on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/conf/config_doc.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#ifndef PKGDATADIR
#define PKGDATADIR "/usr/local/share/ktlsd"
#endif

/* Writes line with each @NAME@ of ours replaced. */
static void substitute(const char *line, FILE *out)
{
	static const struct {
		const char *name, *value;
	} vars[] = {{"@VERSION@", PACKAGE_VERSION},
		    {"@SYSCONFDIR@", SYSCONFDIR},
		    {"@PKGDATADIR@", PKGDATADIR}};

	while (*line) {
		size_t i, n = sizeof(vars) / sizeof(vars[0]);

		for (i = 0; i < n; i++)
			if (strncmp(line, vars[i].name, strlen(vars[i].name)) == 0)
				break;
		if (i < n) {
			fputs(vars[i].value, out);
			line += strlen(vars[i].name);
		} else {
			fputc(*line++, out);
		}
	}
}

static int man(const char *template)
{
	FILE *in = fopen(template, "r");
	char *line = NULL;
	size_t cap = 0;
	int options = 0;

	if (!in) {
		perror(template);
		return 1;
	}
	while (getline(&line, &cap, in) >= 0) {
		if (strcmp(line, "@OPTIONS@\n") == 0) {
			config_doc_man_options(stdout);
			options++;
		} else {
			substitute(line, stdout);
		}
	}
	free(line);
	fclose(in);
	if (options != 1) {
		fprintf(stderr, "%s: wants one line \"@OPTIONS@\", has %d\n", template, options);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc == 3 && strcmp(argv[1], "man") == 0)
		rc = man(argv[2]);
	else if (argc == 2 && strcmp(argv[1], "conf") == 0)
		rc = (config_doc_sample(stdout), 0);
	else {
		fputs("usage: docgen man TEMPLATE | docgen conf\n", stderr);
		return 1;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("docgen: stdout");
		return 1;
	}
	return rc;
}
