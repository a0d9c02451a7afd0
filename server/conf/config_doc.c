#include "server/conf/config_doc.h"

#include <string.h>

#include "server/conf/config_options.h"

/* Writes s as roff text: '\' as "\e", '-' as "\-" (groff would make a
 * hyphen of a bare '-', which does not paste into a shell), a newline as a
 * blank, a break point ("\:") after each ':' so that cipher lists can wrap,
 * and "\&" before a '.' or '\'' that would start a line and be read as a
 * request. */
static void roff(FILE *out, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", out);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", out);
		else if (*s == '-')
			fputs("\\-", out);
		else if (*s == '\n')
			fputc(' ', out);
		else if (*s == ':')
			fputs(":\\:", out);
		else
			fputc(*s, out);
	}
}

void config_doc_man_options(FILE *out)
{
	for (int g = 0; g < G_COUNT; g++) {
		fputs(".SS ", out);
		roff(out, config_group_name((enum opt_group)g));
		fputc('\n', out);
		for (size_t i = 0; i < config_noptions; i++) {
			const struct opt *o = &config_options[i];
			char buf[256];
			const char *note = config_option_note(o, buf);

			if (o->group != (enum opt_group)g)
				continue;
			fputs(".TP\n\\fB\\-\\-", out);
			roff(out, o->name);
			fputs("\\fR", out);
			if (o->value) {
				fputs(" \\fI", out);
				roff(out, o->value);
				fputs("\\fR", out);
			}
			fputc('\n', out);
			roff(out, o->help);
			fputc('\n', out);
			if (note) {
				fputs(".br\n", out);
				roff(out, note);
				fputc('\n', out);
			}
		}
	}
	fputs(".PP\n", out);
	roff(out, config_file_rules);
	fputc('\n', out);
}

enum { SAMPLE_WIDTH = 78 };

/* Writes text as "# " comment lines of at most SAMPLE_WIDTH columns,
 * broken at blanks (a word longer than a line gets a line of its own). */
static void comment(FILE *out, const char *text)
{
	size_t col = 0;

	for (text += strspn(text, " \n"); *text; text += strspn(text, " \n")) {
		size_t n = strcspn(text, " \n");

		if (col && col + 1 + n > SAMPLE_WIDTH) {
			fputc('\n', out);
			col = 0;
		}
		if (!col) {
			fputs("#", out);
			col = 1;
		}
		fprintf(out, " %.*s", (int)n, text);
		col += 1 + n;
		text += n;
	}
	if (col)
		fputc('\n', out);
}

void config_doc_sample(FILE *out)
{
	comment(out, "ktlsd.conf: the configuration of ktlsd(8), read with --config FILE "
	             "(the systemd unit passes this file).");
	fputs("#\n", out);
	comment(out, config_file_rules);
	fputs("#\n", out);
	comment(out, "Every key the file takes is below, commented out, with its default (or, "
	             "for a key without one, what its value is): remove the '#' to set it. "
	             "\"ktlsd --test-config --config FILE\" checks the result, and \"ktlsd "
	             "--help\" and the manual say the same: all three are made from one table.");
	for (int g = 0; g < G_COUNT; g++) {
		fprintf(out, "\n\n#### %s\n", config_group_name((enum opt_group)g));
		for (size_t i = 0; i < config_noptions; i++) {
			const struct opt *o = &config_options[i];
			char buf[256], range[64];

			if (o->group != (enum opt_group)g || o->cli_only)
				continue;
			fputc('\n', out);
			comment(out, o->help);
			if (o->type == T_UINT || o->type == T_MS || o->type == T_BYTES) {
				snprintf(buf, sizeof(buf), "From %s.",
				         config_option_range(o, range));
				comment(out, buf);
			}
			fprintf(out, "#%s %s\n", o->name, o->def ? o->def : o->value);
		}
	}
}
