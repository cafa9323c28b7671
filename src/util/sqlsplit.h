/*
 * sqlsplit.h — one statement at a time out of a text of several.
 *
 * Layer: util (pure text, nothing of sked's). The one splitter of SQL
 * text: the MySQL and MariaDB drivers' text path (db/driver/libmariadb.c,
 * db/driver/libodbc.c) runs the dialect's multi-statement session
 * settings one by one, and schema.c runs a schema step's statements one
 * by one. Only sked's own constant texts come here, never a user's
 * values (those are bound parameters).
 *
 * One rule set, for every caller. A statement ends at a ';' that is
 * outside:
 *   '…', "…" and `…`   a quote ends at its own character; a doubled one
 *                      ('it''s') stays inside, and in '…' and "…" a
 *                      backslash takes the next character with it
 *                      (MySQL's default, PostgreSQL's E'…');
 *   $tag$…$tag$        PostgreSQL's dollar quoting ($$…$$ too), where the
 *                      '$' does not continue a word (a$b, $1 are no tag);
 *   -- … newline       a comment to the end of the line;
 *   / * … * /          a comment (not nested).
 * An unclosed quote or comment runs to the end of the text. Blanks at
 * either end of a statement are left out; a piece between two ';' that
 * holds only blanks and comments is no statement. Comments inside or
 * before a statement stay with it.
 */
#ifndef SKED_SQLSPLIT_H
#define SKED_SQLSPLIT_H

/* The next statement of the text at *at: 1 with [*b, *e) its text and
 * *at moved past it and its ';'; 0 when no statement is left (*at then
 * points at the text's end). */
int sked__sql_next(const char **at, const char **b, const char **e);

#endif /* SKED_SQLSPLIT_H */
