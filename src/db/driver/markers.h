/*
 * db/driver/markers.h — the dialect's numbered markers (?N) rewritten
 * into positional '?' with a map, for drivers whose client library
 * binds by position only (libodbc.c).
 *
 * Layer: the drivers' floor (src/db/driver/); pure text, no library.
 */
#ifndef SKED_DB_DRIVER_MARKERS_H
#define SKED_DB_DRIVER_MARKERS_H

/* ?N → ? with map[k] = the 0-based parameter index of the k-th marker.
 * Quoted literals, quoted identifiers and comments are copied as they
 * are. A bare '?' takes the number after the largest seen so far, as in
 * SQLite. *out and *map are the caller's to free. SKED_OK, or
 * SKED_ENOMEM. */
int sked__odbc_rewrite(const char *sql, char **out, int **map, int *nmarks)
        __attribute__((warn_unused_result));

#endif /* SKED_DB_DRIVER_MARKERS_H */
