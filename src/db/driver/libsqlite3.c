/*
 * db/driver/libsqlite3.c — the SQLite driver (libsqlite3), the embedded
 * default.
 *
 * Layer: a driver behind db.c. It opens the file named by a sqlite: URL in
 * WAL mode with a busy timeout, keeps prepared statements per cache slot,
 * binds parameters and copies rows into a sked_res. It maps SQLite's
 * result codes to the seam's error kinds; everything about tasks lives
 * above it.
 *
 * Settings, chosen for a task table shared by several processes on one
 * host: journal_mode=WAL (readers never block the one writer),
 * synchronous=NORMAL (durable across process crashes; a power loss may
 * drop the last commits, which WAL keeps consistent), and a busy handler
 * of its own that waits for a lock up to 10 s (SKED_SQLITE_BUSY_MS
 * overrides) in short steps, so that concurrent writers queue rather than
 * fail and hand the lock on quickly. Checkpoints are paced per process
 * (lite_wal) and the WAL's changes wake idle workers of other processes
 * (lite_socket). Statements without a slot (texts built per call, such
 * as a batch's IN lists, and BEGIN/COMMIT) are kept prepared by their
 * text (dyn_find), since a batch's statements recur with the batch size.
 */
#include "db/driver/driver.h"
#include "db/driver/errmap.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/inotify.h>
#endif

#include <sqlite3.h>

#include "util/url.h"

/* Texts without a slot, kept prepared. A batch's statements are built
 * per call with as many markers as the batch has tasks (the ended rows'
 * copy, the drop, the IN lists), so the same few texts come back with
 * every batch of the same size, and preparing them cost a third of a
 * SQLite drain's instructions (docs/performance.md, "SQLite's
 * instructions per task"); with the batch lists padded to a few sizes
 * (sked__dialect_pad) a drain needs a dozen or so. The least recently
 * used goes first; a program larger than a quarter of DYN_BYTES is not
 * kept. 1 MB a connection: the largest batch statement (the copy of
 * 124 ended rows into the done table, 8 markers a row, about 150 kB
 * prepared) must fit, or every batch of a drain with a prefetch of
 * hundreds prepares it again, and SQLite's parser looks each ?N up in a
 * list, quadratic in the markers. With 512 kB a drain at --prefetch 512
 * cost 164,000 instructions per task, with 1 MB 111,000. A 20,000-task
 * drain keeps about 600 kB; the worker's RSS did not grow measurably. */
#define DYN_MAX   32
#define DYN_BYTES (1024 * 1024)

typedef struct dyn {
	sqlite3_stmt *st;
	uint64_t hash; /* of the text (FNV-1a) */
	size_t len;    /* the text's length */
	int bytes;     /* the prepared program's memory */
	uint64_t used; /* tick of its last use */
} dyn;

typedef struct lite {
	sqlite3 *db;
	sqlite3_stmt *slot[SKED_STMT_SLOTS];
	dyn dyn[DYN_MAX];
	int ndyn;
	long dyn_bytes;
	uint64_t tick;
	int64_t busy_ns;       /* give up waiting for a lock after this */
	int64_t busy_since_ns; /* when the current wait began */
	int in_restart;        /* a RESTART checkpoint waits: briefly */
	int change_fd;         /* inotify on the WAL; -1: none yet */
	int change_failed;     /* no WAL to watch: do not try again */
} lite;

static int64_t
mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Called by SQLite while another connection (of this process or another)
 * holds the lock it needs; returns 0 to give up with SQLITE_BUSY.
 * SQLite's own busy timeout sleeps 1, 2, 5, 10 … 100 ms between tries,
 * so a writer that finds the lock taken for 50 µs waits milliseconds and
 * processes sharing a file mostly sleep. This one sleeps 50 µs, doubling
 * every fourth try up to 1 ms: a lock held for a short write transaction
 * changes hands within a few tens of microseconds. (Yielding instead of
 * sleeping spent more CPU for no more throughput.) */
/* Checkpoints. SQLite's own policy checkpoints after every commit that
 * leaves 1000 pages or more in the WAL. With several processes on one
 * file some connection nearly always reads, so the WAL seldom starts over
 * and stays above the mark: then every commit of every process runs a
 * checkpoint of its own, with two fsyncs, and the writers spend their
 * time syncing. Here one commit per process and CKPT_EVERY_NS copies the
 * WAL into the database (PASSIVE: it waits for nobody), and once the WAL
 * holds CKPT_RESTART_PAGES a RESTART checkpoint waits for the readers so
 * that the next writer starts the WAL over, which bounds its size. It
 * holds other writers off while it waits, so it waits CKPT_WAIT_NS at
 * most (a long reader makes it give up, to try again later). */
#define CKPT_PAGES         1000
#define CKPT_RESTART_PAGES 4000
#define CKPT_EVERY_NS      (20 * 1000000LL)
#define CKPT_WAIT_NS       (5 * 1000000LL)

/* One pace for all of the process's connections, whatever their file: a
 * commit that falls inside another's 20 ms leaves its checkpoint to a
 * later commit (or to the last connection's close). */
static atomic_llong ckpt_last_ns;

static int
lite_wal(void *arg, sqlite3 *db, const char *name, int pages)
{
	lite *l = arg;
	if (pages < CKPT_PAGES)
		return SQLITE_OK;
	long long now = mono_ns(), last = atomic_load(&ckpt_last_ns);
	if (now - last < CKPT_EVERY_NS ||
	    !atomic_compare_exchange_strong(&ckpt_last_ns, &last, now))
		return SQLITE_OK;
	/* a checkpoint that cannot finish now is tried again later; the
	 * commit it follows is durable either way */
	l->in_restart = pages >= CKPT_RESTART_PAGES;
	(void)sqlite3_wal_checkpoint_v2(db, name,
	                                l->in_restart
	                                        ? SQLITE_CHECKPOINT_RESTART
	                                        : SQLITE_CHECKPOINT_PASSIVE,
	                                NULL, NULL);
	l->in_restart = 0;
	return SQLITE_OK;
}

static int
lite_busy(void *arg, int count)
{
	lite *l = arg;
	int64_t now = mono_ns();
	if (count == 0)
		l->busy_since_ns = now;
	else if (now - l->busy_since_ns >=
	         (l->in_restart ? CKPT_WAIT_NS : l->busy_ns))
		return 0;
	int shift = count / 4;
	long us = 50L << (shift > 5 ? 5 : shift);
	struct timespec d = {0, (us > 1000 ? 1000 : us) * 1000};
	nanosleep(&d, NULL);
	return 1;
}

static void
set_err(sked_dberr *e, sqlite3 *db, int rc, const char *what)
{
	int ext = db ? sqlite3_extended_errcode(db) : rc;
	const char *msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
	e->native = ext;
	e->kind = sked__errmap_sqlite(rc, ext, msg);
	snprintf(e->msg, sizeof e->msg, "sqlite: %s%s%s", what ? what : "",
	         what ? ": " : "", msg);
}

static void
lite_close(void *conn)
{
	lite *l = conn;
	if (!l)
		return;
	for (int i = 0; i < SKED_STMT_SLOTS; i++)
		sqlite3_finalize(l->slot[i]);
	for (int i = 0; i < l->ndyn; i++)
		sqlite3_finalize(l->dyn[i].st);
	if (l->change_fd >= 0)
		close(l->change_fd);
	sqlite3_close_v2(l->db);
	free(l);
}

static int
pragma(lite *l, const char *sql, sked_dberr *e)
{
	char *msg = NULL;
	int rc = sqlite3_exec(l->db, sql, NULL, NULL, &msg);
	sqlite3_free(msg);
	if (rc != SQLITE_OK) {
		set_err(e, l->db, rc, "cannot set up the database");
		return SKED_EDB;
	}
	return SKED_OK;
}

static int
lite_connect(const char *url, void **conn, sked_dberr *e)
{
	sked_url u;
	char err[256];
	if (sked__url_parse(url, &u, err, sizeof err) != SKED_OK) {
		e->kind = SKED_DBE_CONNECT;
		snprintf(e->msg, sizeof e->msg, "%s", err);
		return SKED_EURL;
	}
	lite *l = calloc(1, sizeof *l);
	if (l)
		l->change_fd = -1;
	if (!l) {
		sked__url_free(&u);
		e->kind = SKED_DBE_NOMEM;
		snprintf(e->msg, sizeof e->msg, "out of memory");
		return SKED_ENOMEM;
	}
	int rc = sqlite3_open_v2(u.path, &l->db,
	                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	                                 SQLITE_OPEN_NOMUTEX,
	                         NULL);
	if (rc != SQLITE_OK) {
		char what[300];
		snprintf(what, sizeof what, "cannot open '%s'", u.path);
		set_err(e, l->db, rc, what);
		e->kind = rc == SQLITE_READONLY ? SKED_DBE_READONLY
		                                : SKED_DBE_CONNECT;
		sked__url_free(&u);
		lite_close(l);
		return SKED_EUNAVAILABLE;
	}
	sqlite3_extended_result_codes(l->db, 1);
	l->busy_ns = (int64_t)sked__sqlite_busy_ms() * 1000000;
	if (l->busy_ns > 0)
		sqlite3_busy_handler(l->db, lite_busy, l);
	sqlite3_wal_hook(l->db, lite_wal, l);
	/* journal_mode answers with a row; sqlite3_exec discards it. A file
	 * in a folder we cannot write fails here, naming the file. */
	int bad = 0;
	for (const char *const *pr = sked__sqlite_pragmas; *pr && !bad; pr++)
		bad = pragma(l, *pr, e) != SKED_OK;
	if (bad) {
		char what[300];
		snprintf(what, sizeof what, "cannot use '%s'", u.path);
		set_err(e, l->db, sqlite3_errcode(l->db), what);
		if (e->kind != SKED_DBE_READONLY)
			e->kind = SKED_DBE_CONNECT;
		sked__url_free(&u);
		lite_close(l);
		return SKED_EUNAVAILABLE;
	}
	sked__url_free(&u);
	*conn = l;
	return SKED_OK;
}

static int
lite_server(void *conn, char *product, size_t plen, char *version, size_t vlen,
            sked_dberr *e)
{
	snprintf(product, plen, "SQLite");
	snprintf(version, vlen, "%s", sqlite3_libversion());
	return SKED_OK;
}

/* The kept statement of text sql (len bytes, hash h), or NULL. */
static sqlite3_stmt *
dyn_find(lite *l, const char *sql, size_t len, uint64_t h)
{
	for (int i = 0; i < l->ndyn; i++) {
		dyn *d = &l->dyn[i];
		if (d->hash == h && d->len == len &&
		    memcmp(sqlite3_sql(d->st), sql, len) == 0) {
			d->used = ++l->tick;
			return d->st;
		}
	}
	return NULL;
}

/* Keep st (just prepared from a text of len bytes, hash h); 0 when it
 * is not kept (too large), and the caller finalizes it after use. */
static int
dyn_keep(lite *l, sqlite3_stmt *st, size_t len, uint64_t h)
{
	int bytes = sqlite3_stmt_status(st, SQLITE_STMTSTATUS_MEMUSED, 0);
	if (bytes > DYN_BYTES / 4)
		return 0;
	while (l->ndyn > 0 &&
	       (l->ndyn == DYN_MAX || l->dyn_bytes + bytes > DYN_BYTES)) {
		int old = 0;
		for (int i = 1; i < l->ndyn; i++)
			if (l->dyn[i].used < l->dyn[old].used)
				old = i;
		sqlite3_finalize(l->dyn[old].st);
		l->dyn_bytes -= l->dyn[old].bytes;
		l->dyn[old] = l->dyn[--l->ndyn];
	}
	l->dyn[l->ndyn++] = (dyn){.st = st,
	                          .hash = h,
	                          .len = len,
	                          .bytes = bytes,
	                          .used = ++l->tick};
	l->dyn_bytes += bytes;
	return 1;
}

static atomic_llong text_prepares;

long long
sked__sqlite_text_prepares(void)
{
	return atomic_load(&text_prepares);
}

static uint64_t
text_hash(const char *s, size_t *len)
{
	uint64_t h = 14695981039346656037ULL;
	const unsigned char *p = (const unsigned char *)s;
	for (; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	*len = (size_t)(p - (const unsigned char *)s);
	return h;
}

static int
lite_exec(void *conn, int slot, const char *sql, const sked_val *p, int np,
          sked_res *res, int64_t *affected, int64_t *last_id, sked_dberr *e)
{
	lite *l = conn;
	sqlite3_stmt *st = NULL;
	int rc, keep = 1; /* keep: st stays prepared after this call */
	if (slot >= 0 && slot < SKED_STMT_SLOTS && l->slot[slot]) {
		st = l->slot[slot];
	} else if (slot >= 0 && slot < SKED_STMT_SLOTS) {
		rc = sqlite3_prepare_v3(l->db, sql, -1,
		                        SQLITE_PREPARE_PERSISTENT, &st, NULL);
		if (rc != SQLITE_OK) {
			set_err(e, l->db, rc, NULL);
			return SKED_EDB;
		}
		l->slot[slot] = st;
	} else {
		size_t len;
		uint64_t h = text_hash(sql, &len);
		if (!(st = dyn_find(l, sql, len, h))) {
			atomic_fetch_add(&text_prepares, 1);
			rc = sqlite3_prepare_v3(l->db, sql, (int)len + 1,
			                        SQLITE_PREPARE_PERSISTENT, &st,
			                        NULL);
			if (rc != SQLITE_OK) {
				set_err(e, l->db, rc, NULL);
				return SKED_EDB;
			}
			/* an empty text (a comment) prepares no statement,
			 * which fails below as it always has */
			keep = st && dyn_keep(l, st, len, h);
		}
	}
	for (int i = 0; i < np; i++) {
		switch (p[i].type) {
		case SKED_VNULL:
			rc = sqlite3_bind_null(st, i + 1);
			break;
		case SKED_VINT:
			rc = sqlite3_bind_int64(st, i + 1, p[i].i);
			break;
		case SKED_VTEXT:
			rc = sqlite3_bind_text64(st, i + 1, p[i].s, p[i].len,
			                         SQLITE_STATIC, SQLITE_UTF8);
			break;
		default:
			rc = SQLITE_MISUSE;
		}
		if (rc != SQLITE_OK) {
			set_err(e, l->db, rc, "bind");
			goto fail;
		}
	}
	int ncols = sqlite3_column_count(st);
	if (res && ncols > 0 && sked__res_begin(res, ncols) != SKED_OK)
		goto nomem;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!res)
			continue;
		for (int c = 0; c < ncols; c++) {
			const char *t = NULL;
			size_t n = 0;
			if (sqlite3_column_type(st, c) != SQLITE_NULL) {
				t = (const char *)sqlite3_column_text(st, c);
				n = (size_t)sqlite3_column_bytes(st, c);
				if (!t)
					goto nomem;
			}
			if (sked__res_add(res, t, n) != SKED_OK)
				goto nomem;
		}
	}
	if (rc != SQLITE_DONE) {
		set_err(e, l->db, rc, NULL);
		goto fail;
	}
	*affected = sqlite3_changes64(l->db);
	if (last_id)
		*last_id = sqlite3_last_insert_rowid(l->db);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (!keep)
		sqlite3_finalize(st);
	return SKED_OK;
nomem:
	e->kind = SKED_DBE_NOMEM;
	snprintf(e->msg, sizeof e->msg, "sqlite: out of memory");
fail:
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (!keep)
		sqlite3_finalize(st);
	return SKED_EDB;
}

/* Wake-ups across processes. SQLite sends no notifications, but every
 * commit of every connection appends to the file's WAL, so an inotify
 * watch on it (IN_MODIFY) makes an fd that turns readable when any
 * process may have added work: the worker polls it beside its own wake
 * fd and sleeps its full poll interval only when nothing was written.
 * An empty claim writes nothing to the WAL, so idle workers woken by a
 * commit do not wake each other in turn. Where there is no inotify (or
 * no WAL: a memory database) there is no fd and the worker polls. */
static int
lite_socket(void *conn)
{
	lite *l = conn;
	if (l->change_fd >= 0 || l->change_failed)
		return l->change_fd;
	l->change_failed = 1;
#ifdef __linux__
	const char *file = sqlite3_db_filename(l->db, "main");
	if (!file || !*file)
		return -1;
	char wal[4096];
	if (snprintf(wal, sizeof wal, "%s-wal", file) >= (int)sizeof wal)
		return -1;
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0)
		return -1;
	if (inotify_add_watch(fd, wal, IN_MODIFY) < 0) {
		close(fd);
		return -1;
	}
	l->change_fd = fd;
	l->change_failed = 0;
#endif
	return l->change_fd;
}

/* The watch says only that something committed: no payload, fn is not
 * called (the worker wakes for any commit). */
static int
lite_drain_notify(void *conn, sked_dberr *e, sked_note_fn fn, void *arg)
{
	lite *l = conn;
	(void)e;
	(void)fn;
	(void)arg;
	int n = 0;
	char buf[4096];
	while (l->change_fd >= 0 && read(l->change_fd, buf, sizeof buf) > 0)
		n++;
	return n;
}

const sked_driver sked__driver_sqlite = {
        .name = "sqlite",
        .connect = lite_connect,
        .close = lite_close,
        .server = lite_server,
        .exec = lite_exec,
        .socket = lite_socket,
        .drain_notify = lite_drain_notify,
        /* exec clears every binding after each run */
        .unbound_null = 1,
};
