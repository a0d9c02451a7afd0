/* A reload (SIGHUP): what only a restart can change keeps its running
 * value, and says so. */
#include <string.h>

#include "server/conf/config-int.h"
#include "server/conf/config.h"
#include "server/conf/config_value.h"

/* Same address and options: a listener whose proxy-protocol changes is a
 * different one (the workers read it when they bind). */
static bool listen_same(const struct config_listen *a, const struct config_listen *b)
{
	return a->addrlen == b->addrlen && memcmp(&a->addr, &b->addr, a->addrlen) == 0 &&
	       a->proxy_protocol == b->proxy_protocol;
}

/* The first address of list a that list b lacks, or NULL. Order does not
 * matter: each worker binds every address whatever its place. */
static const struct config_listen *listen_missing(const struct config_listen *a, size_t na,
						  const struct config_listen *b, size_t nb)
{
	for (size_t i = 0; i < na; i++) {
		size_t j = 0;

		while (j < nb && !listen_same(&a[i], &b[j]))
			j++;
		if (j == nb)
			return &a[i];
	}
	return NULL;
}

static bool str_same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* A listener list as one line: "127.0.0.1:8443 [::1]:8443", or "none". */
static void listen_text(const struct config_listen *l, size_t n, char *out, size_t cap)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && used < cap; i++)
		used += (size_t)snprintf(out + used, cap - used, "%s%s", i ? " " : "", l[i].text);
	if (n == 0)
		snprintf(out, cap, "none");
}

size_t config_keep_fixed(const struct config *old, struct config *new,
			 void (*say)(void *ctx, const char *line), void *ctx)
{
	static const struct {
		const char *name;
		size_t off;
		const char *unset; /* what NULL means */
	} fixed[] = {
	    {"user", OFF(user), "none"},
	    {"pid-file", OFF(pid_file), "none"},
	    {"error-log", OFF(error_log), "stderr"},
	    {"access-log", OFF(access_log), "off"},
	};
	const struct {
		const char *name;
		const struct config_listen *old;
		struct config_listen *new;
		size_t nold, *nnew, max;
	} lists[] = {
	    {"listen", old->listen, new->listen, old->nlisten, &new->nlisten, CONFIG_MAX_LISTEN},
	    {"listen-plain", old->listen_plain, new->listen_plain, old->nlisten_plain,
	     &new->nlisten_plain, CONFIG_MAX_LISTEN},
	    {"status-listen", &old->status_listen, &new->status_listen, old->nstatus_listen,
	     &new->nstatus_listen, 1},
	};
	char line[1024], was[400], now[400];
	size_t kept = 0;

	for (size_t i = 0; i < ARRAY_SIZE(lists); i++) {
		if (!listen_missing(lists[i].old, lists[i].nold, lists[i].new, *lists[i].nnew) &&
		    !listen_missing(lists[i].new, *lists[i].nnew, lists[i].old, lists[i].nold))
			continue;
		listen_text(lists[i].old, lists[i].nold, was, sizeof(was));
		listen_text(lists[i].new, *lists[i].nnew, now, sizeof(now));
		snprintf(line, sizeof(line), "--%s stays %s until a restart (the configuration says %s)",
			 lists[i].name, was, now);
		memcpy(lists[i].new, lists[i].old, lists[i].max * sizeof(*lists[i].old));
		*lists[i].nnew = lists[i].nold;
		say(ctx, line);
		kept++;
	}
	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++) {
		const char *a = *FIELD(old, fixed[i].off, char *const);
		const char *b = *FIELD(new, fixed[i].off, char *const);

		if (str_same(a, b))
			continue;
		snprintf(line, sizeof(line), "--%s stays %s until a restart (the configuration says %s)",
			 fixed[i].name, a ? a : fixed[i].unset, b ? b : fixed[i].unset);
		config_set_string(new, fixed[i].off, a ? config_value_strdup(a) : NULL);
		say(ctx, line);
		kept++;
	}
	if (old->workers != new->workers) {
		snprintf(line, sizeof(line), "--workers stays %u until a restart (the configuration "
					     "says %u)",
			 old->workers, new->workers);
		new->workers = old->workers;
		say(ctx, line);
		kept++;
	}
	return kept;
}
