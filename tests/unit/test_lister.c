/* Tests server/http/lister.c: jobs go to the listing thread and come back
 * through a real io_uring, with what serving would show of a folder. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "server/http/lister.h"
#include "tests/unit/check_run.h"

static char top[64];
static int root_fd = -1;

static void put_file(const char *path, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", top, path);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* root/: d/ (a folder), f.txt, .dot, in -> f.txt, out -> ../outside,
 * loop -> loop, fifo, sock; and outside/ beside root/. */
static void setup(void)
{
	char p[256];

	strcpy(top, "/tmp/test_lister.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	snprintf(p, sizeof(p), "%s/root", top);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/root/d", top);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	put_file("root/f.txt", "12345");
	put_file("root/.dot", "x");
	put_file("outside", "secret");
	snprintf(p, sizeof(p), "%s/root/in", top);
	ck_assert_int_eq(symlink("f.txt", p), 0);
	snprintf(p, sizeof(p), "%s/root/out", top);
	ck_assert_int_eq(symlink("../outside", p), 0);
	snprintf(p, sizeof(p), "%s/root/loop", top);
	ck_assert_int_eq(symlink("loop", p), 0);
	snprintf(p, sizeof(p), "%s/root/fifo", top);
	ck_assert_int_eq(mkfifo(p, 0644), 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/root/sock", top);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	close(s);
	snprintf(p, sizeof(p), "%s/root", top);
	root_fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(root_fd, 0);
}

static void teardown(void)
{
	char cmd[128];

	close(root_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	ck_assert_int_eq(system(cmd), 0);
}

static int back;

static void done(struct lister_job *job)
{
	(void)job;
	back++;
}

/* Submits a job and runs the ring until it is back: its listing (or ""). */
static char *run_max(struct lister *l, struct io_uring *ring, const char *rel, bool dotfiles,
		     unsigned max_entries, struct lister_job **out)
{
	struct lister_job *job = lister_job_new(root_fd, rel, dotfiles, max_entries, AUTOINDEX_JSON);
	ck_assert_ptr_nonnull(job);
	job->done = done;
	back = 0;
	ck_assert_int_eq(lister_submit(l, job), 0);
	while (!back) {
		struct io_uring_cqe *cqe;
		ck_assert_int_eq(io_uring_submit_and_wait(ring, 1) >= 0, 1);
		ck_assert_int_eq(io_uring_peek_cqe(ring, &cqe), 0);
		struct ring_op *op = io_uring_cqe_get_data(cqe);
		int res = cqe->res;
		io_uring_cqe_seen(ring, cqe);
		op->complete(op, res, 0);
	}
	char *text = calloc(1, job->size + 1);
	if (job->status == 0)
		ck_assert_int_eq(pread(job->fd, text, job->size, 0), (ssize_t)job->size);
	*out = job;
	return text;
}

static char *run(struct lister *l, struct io_uring *ring, const char *rel, bool dotfiles,
                 struct lister_job **out)
{
	return run_max(l, ring, rel, dotfiles, 1000, out);
}

START_TEST(test_listing)
{
	struct io_uring ring;
	struct lister l = {0};
	struct lister_job *job;

	ck_assert_int_eq(io_uring_queue_init(8, &ring, 0), 0);
	lister_init(&l, &ring);

	char *s = run(&l, &ring, ".", false, &job);
	ck_assert_int_eq(job->status, 0);
	ck_assert_ptr_nonnull(strstr(s, "{\"name\":\"d\",\"href\":\"d/\",\"type\":\"directory\""));
	ck_assert_ptr_nonnull(
	    strstr(s, "{\"name\":\"f.txt\",\"href\":\"f.txt\",\"type\":\"file\",\"size\":5,"));
	ck_assert_ptr_nonnull(
	    strstr(s, "{\"name\":\"in\",\"href\":\"in\",\"type\":\"file\",\"size\":5,"));
	ck_assert_ptr_null(strstr(s, ".dot"));
	ck_assert_ptr_null(strstr(s, "out"));
	ck_assert_ptr_null(strstr(s, "loop"));
	ck_assert_ptr_null(strstr(s, "fifo"));
	ck_assert_ptr_null(strstr(s, "sock"));
	ck_assert(strstr(s, "\"d\"") < strstr(s, "\"f.txt\"")); /* folders first */
	free(s);
	lister_job_free(job);

	s = run(&l, &ring, ".", true, &job);
	ck_assert_ptr_nonnull(strstr(s, "\"name\":\".dot\""));
	free(s);
	lister_job_free(job);

	s = run(&l, &ring, "d", false, &job);
	ck_assert_int_eq(job->status, 0);
	ck_assert_str_eq(s, "[\n]\n");
	free(s);
	lister_job_free(job);

	s = run(&l, &ring, "missing", false, &job);
	ck_assert_int_eq(job->status, 404);
	ck_assert_int_eq(job->fd, -1);
	free(s);
	lister_job_free(job);

	s = run(&l, &ring, "f.txt", false, &job); /* a file since it was resolved */
	ck_assert_int_eq(job->status, 404);
	free(s);
	lister_job_free(job);

	s = run(&l, &ring, "out", false, &job); /* out of the root */
	ck_assert_int_eq(job->status, 403);
	free(s);
	lister_job_free(job);

	/* Cancelling a job that was never submitted is harmless, and it
	 * stays the caller's to free: nothing is asserted here, ASan and
	 * valgrind see a double free or a leak. */
	job = lister_job_new(root_fd, ".", false, 1000, AUTOINDEX_HTML);
	lister_cancel(job);
	lister_job_free(job); /* never submitted: the caller's to free */

	lister_stop(&l);
	io_uring_queue_exit(&ring);
}
END_TEST

/* A folder over --autoindex-max-entries is a 500; while it stays as it
 * was, asking again answers from what the thread remembers (no read, no
 * log line), for that limit and any lower one; once an entry comes or
 * goes it is read again. */
START_TEST(test_too_many)
{
	struct io_uring ring;
	struct lister l = {0};
	struct lister_job *job;
	struct stat st;
	char *s;

	ck_assert_int_eq(io_uring_queue_init(8, &ring, 0), 0);
	lister_init(&l, &ring);
	ck_assert_int_eq(fstat(root_fd, &st), 0);

	/* d, f.txt, in: three entries shown. */
	s = run_max(&l, &ring, ".", false, 3, &job);
	ck_assert_int_eq(job->status, 0);
	free(s);
	lister_job_free(job);
	ck_assert_uint_eq(l.too_big[0].max_entries, 0); /* nothing remembered */

	s = run_max(&l, &ring, ".", false, 2, &job);
	ck_assert_int_eq(job->status, 500);
	ck_assert_int_eq(job->fd, -1);
	free(s);
	lister_job_free(job);
	ck_assert_uint_eq(l.too_big[0].ino, (uint64_t)st.st_ino);
	ck_assert_uint_eq(l.too_big[0].max_entries, 2);
	ck_assert_uint_eq(l.too_big_next, 1);

	/* Again, and under a lower limit: known, not read (no new slot). */
	for (unsigned max = 2; max >= 1; max--) {
		s = run_max(&l, &ring, ".", false, max, &job);
		ck_assert_int_eq(job->status, 500);
		free(s);
		lister_job_free(job);
	}
	ck_assert_uint_eq(l.too_big_next, 1);
	/* A higher limit is no answer of the slot's: read, and listed. */
	s = run_max(&l, &ring, ".", false, 3, &job);
	ck_assert_int_eq(job->status, 0);
	free(s);
	lister_job_free(job);

	/* An entry more changes the folder's mtime: read again. */
	struct timespec later = {.tv_sec = st.st_mtim.tv_sec + 1, .tv_nsec = 0};
	put_file("root/g.txt", "g");
	ck_assert_int_eq(futimens(root_fd, (struct timespec[2]){later, later}), 0);
	s = run_max(&l, &ring, ".", false, 2, &job);
	ck_assert_int_eq(job->status, 500);
	free(s);
	lister_job_free(job);
	ck_assert_uint_eq(l.too_big_next, 2);
	s = run_max(&l, &ring, ".", false, 4, &job);
	ck_assert_int_eq(job->status, 0);
	ck_assert_ptr_nonnull(strstr(s, "\"g.txt\""));
	free(s);
	lister_job_free(job);

	lister_stop(&l);
	io_uring_queue_exit(&ring);
}
END_TEST

START_TEST(test_queue_limit)
{
	struct io_uring ring;
	struct lister l = {0};
	struct lister_job *jobs[LISTER_MAX_JOBS + 1];

	ck_assert_int_eq(io_uring_queue_init(8, &ring, 0), 0);
	lister_init(&l, &ring);
	back = 0;
	for (int i = 0; i <= LISTER_MAX_JOBS; i++) {
		jobs[i] = lister_job_new(root_fd, ".", false, 1000, AUTOINDEX_HTML);
		jobs[i]->done = done;
		int rc = lister_submit(&l, jobs[i]);
		ck_assert_int_eq(rc, i < LISTER_MAX_JOBS ? 0 : -EAGAIN);
	}
	lister_job_free(jobs[LISTER_MAX_JOBS]);
	while (back < LISTER_MAX_JOBS) {
		struct io_uring_cqe *cqe;
		ck_assert_int_eq(io_uring_submit_and_wait(&ring, 1) >= 0, 1);
		ck_assert_int_eq(io_uring_peek_cqe(&ring, &cqe), 0);
		struct ring_op *op = io_uring_cqe_get_data(cqe);
		io_uring_cqe_seen(&ring, cqe);
		op->complete(op, 0, 0);
	}
	for (int i = 0; i < LISTER_MAX_JOBS; i++) {
		ck_assert_int_eq(jobs[i]->status, 0);
		lister_job_free(jobs[i]);
	}
	/* Room again. */
	jobs[0] = lister_job_new(root_fd, ".", false, 1000, AUTOINDEX_HTML);
	jobs[0]->done = done;
	ck_assert_int_eq(lister_submit(&l, jobs[0]), 0);
	lister_stop(&l); /* the thread finishes it; it is never taken back */
	io_uring_queue_exit(&ring);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lister");
	TCase *tc = tcase_create("lister");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_listing);
	tcase_add_test(tc, test_queue_limit);
	tcase_add_test(tc, test_too_many);
	suite_add_tcase(s, tc);

	return check_run(s);
}
