/* --user, and the one privilege kept after it. ktlsd starts as root to bind
 * low ports and read root-only keys, then runs as USER. A reload must read
 * the configuration, certificates and keys again, and a key is rightly
 * root-only (0600 root), so the signal thread keeps CAP_DAC_READ_SEARCH
 * (read any file) in its permitted set and raises it only while a reload
 * reads; worker threads give up every capability when they start. */
#ifndef KTLSD_SERVER_PRIVS_H
#define KTLSD_SERVER_PRIVS_H

/* Runs the process as user (and its groups), keeping only
 * CAP_DAC_READ_SEARCH, not in effect. Before any other thread exists:
 * threads started later inherit that set. 0, or -errno after logging why. */
int privs_drop(const char *user);

/* Around a reload's file reads on the signal thread: the kept capability
 * in effect, then not. No-ops when none was kept (never dropped, or
 * running as a user from the start). */
void privs_read_begin(void);
void privs_read_end(void);

/* A worker thread: no capability at all from now on. */
void privs_thread_forget(void);

#endif
