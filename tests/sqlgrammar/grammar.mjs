// tests/sqlgrammar/grammar.mjs — sked's statements read by a grammar sked
// did not write: node-sql-parser's (npm), for the dialects of the engines
// that cannot run where sked is built.
//
// Layer: tests (build; no database). Reads `sked-sql --run DIALECT`
// (every statement the dialect runs, per-call tokens filled) and
// `sked-sql --schema DIALECT` (the schema steps, cut at each ';' as
// schema.c cuts them) on stdin, parses each with the grammar of
// node-sql-parser's DATABASE option, and fails on every statement the
// grammar rejects unless gaps.txt lists it (statement id and why the
// grammar, not sked, is wrong). A listed gap that parses fails too, so
// the list cannot go stale. Filter fragments are parsed joined to the
// head and tail the model joins them to.
//
//   node grammar.mjs DATABASE GAPS_FILE < statements
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const [db, gapsFile] = process.argv.slice(2);

// one function per grammar: null when the statement parses, else the
// grammar's first complaint
let parseOne;
if (db === 'plsql') {
	// Oracle: the PL/SQL grammar of antlr/grammars-v4, as antlr4ts-sql
	// ships it built (antlr4ts first: loaded the other way round its
	// modules require each other before they are defined)
	require('antlr4ts');
	const { antlr4tsSQL, SQLDialect } = require('antlr4ts-sql');
	const plsql = new antlr4tsSQL(SQLDialect.PLSQL);
	const { PredictionMode } = require('antlr4ts/atn/PredictionMode');
	// SLL first (fast), full LL only where SLL finds an error: the
	// two-stage parse ANTLR recommends, same answers, far less time
	const attempt = (text, mode) => {
		const errs = [];
		const listener = {
			syntaxError: (_r, _sym, line, col, msg) =>
				errs.push(`${line}:${col} ${msg.slice(0, 200)}`),
		};
		const parser = plsql.getParser(plsql.getTokens(text, [listener]), [listener]);
		parser.interpreter.setPredictionMode(mode);
		plsql.getParseTree(parser);
		return errs.length ? errs[0] : null;
	};
	parseOne = (sql) => {
		// the grammar reads a script: each statement ends with ';'
		const text = /;\s*$/.test(sql) ? sql : sql + ';';
		return attempt(text, PredictionMode.SLL) && attempt(text, PredictionMode.LL);
	};
} else {
	const { Parser } = require(`node-sql-parser/build/${db}`);
	const parser = new Parser();
	parseOne = (sql) => {
		try {
			parser.astify(sql, { database: db });
			return null;
		} catch (e) {
			return String(e.message || e).split('\n')[0];
		}
	};
}

// gaps.txt: "DATABASE ID MODE reason…" lines; '#' starts a comment.
// MODE says what of the statement the grammar still reads, which must
// then parse: the rest of a gap is checked, not skipped.
const MODES = {
	// the OUTPUT list (up to VALUES, SELECT, WHERE or the end)
	'strip-output': (s) => s.replace(/ OUTPUT (?:inserted|deleted)\..*?(?= VALUES | SELECT | WHERE |$)/, ''),
	// the statement inside BEGIN TRY … END TRY
	'try-body': (s) => (s.match(/BEGIN TRY (.*?); END TRY/) || [null, ''])[1],
	// a system function @@NAME, as a constant
	'at-var': (s) => s.replace(/@@[A-Z]+/g, '0'),
};
const gaps = new Map();
for (const line of readFileSync(gapsFile, 'utf8').split('\n')) {
	const t = line.replace(/#.*/, '').trim();
	if (!t) continue;
	const [gdb, id, mode, ...why] = t.split(/\s+/);
	if (!MODES[mode]) {
		console.error(`grammar: ${gapsFile}: unknown mode '${mode}' for ${id}`);
		process.exit(1);
	}
	if (gdb === db) gaps.set(id, { mode, why: why.join(' ') });
}

// "-- DIALECT NAME (N)" (statements) or "-- DIALECT schema step N"
const input = readFileSync(0, 'utf8');
const stmts = new Map();
let name = null;
let body = [];
const flush = () => {
	if (name === null) return;
	const text = body.join('\n').trim().replace(/;\s*$/, '');
	if (name.startsWith('step ')) {
		// schema.c's cut: at each ';' outside quotes (no ';' in sked's
		// own quoted texts), comments dropped
		const clean = text.replace(/--[^\n]*/g, '');
		clean.split(';').map((s) => s.trim()).filter(Boolean)
			.forEach((s, i) => stmts.set(`${name.replace(' ', '')}.${i + 1}`, s));
	} else {
		stmts.set(name, text);
	}
	body = [];
};
for (const line of input.split('\n')) {
	const m = line.match(/^-- \S+ (?:schema (step \d+)|([A-Z0-9_]+) \(\d+\))$/);
	if (m) {
		flush();
		name = m[1] || m[2];
	} else {
		body.push(line);
	}
}
flush();
if (stmts.size === 0) {
	console.error('grammar: no statements on stdin');
	process.exit(1);
}

// fragments, as queue.c and admin.c join them
const FRAG = /^AND_/;
const joined = new Map();
for (const [id, s] of stmts) {
	if (FRAG.test(id) || ['LIST_TAIL', 'LIST_BOTH_MID', 'LIST_BOTH_TAIL'].includes(id))
		continue;
	let t = s;
	if (id === 'LIST_HEAD' || id === 'LIST_DONE_HEAD' || id === 'PICK_LIVE' ||
	    id === 'PICK_DONE')
		t = s + ' ' + (stmts.get('AND_QUEUE') || '') + ' ' + (stmts.get('LIST_TAIL') || '');
	else if (id === 'LIST_BOTH_HEAD')
		t = [s, stmts.get('AND_KIND'), stmts.get('LIST_BOTH_MID'),
			stmts.get('AND_KIND'), stmts.get('LIST_BOTH_TAIL')].join(' ');
	joined.set(id, t);
}
for (const [id, s] of stmts)
	if (FRAG.test(id)) {
		const head = stmts.get('LIST_HEAD');
		if (head) joined.set(id, head + ' ' + s + ' ' + (stmts.get('LIST_TAIL') || ''));
	}

// parameters: T-SQL names them @pN; the others take '?'
// Parameters: T-SQL names them @pN. Normalised, and said so in gaps.txt:
// node-sql-parser's T-SQL grammar takes only a constant row count after
// FETCH NEXT (T-SQL takes any expression there), so that one is 10.
const params = (s) => {
	// Oracle's own bind syntax (its ODBC driver turns '?' into these)
	if (db === 'plsql') return s.replace(/\?(\d+)/g, ':$1');
	if (db !== 'transactsql') return s.replace(/\?\d+/g, '?');
	return s.replace(/FETCH NEXT \?\d+ ROWS/g, 'FETCH NEXT 10 ROWS')
		.replace(/\?(\d+)/g, '@p$1');
};

const parses = (s) => parseOne(params(s));
let bad = 0, ok = 0, known = 0;
for (const [id, s] of joined) {
	const err = parses(s);
	const gap = gaps.get(id);
	if (err && gap) {
		const rest = MODES[gap.mode](s);
		const err2 = rest ? parses(rest) : 'nothing left to read';
		if (err2) {
			bad++;
			console.log(`REJECTED ${id} even as a known gap (${gap.mode}): ${err2}\n    ${rest.slice(0, 400)}`);
		} else {
			known++;
			console.log(`known gap ${id} (${gap.mode}; the rest parses): ${gap.why}`);
		}
	} else if (err) {
		bad++;
		console.log(`REJECTED ${id}: ${err}\n    ${s.slice(0, 400)}`);
	} else if (gap) {
		bad++;
		console.log(`LISTED AS A GAP BUT PARSES ${id}: take it off ${gapsFile}`);
	} else {
		ok++;
	}
}
for (const id of gaps.keys())
	if (!joined.has(id)) {
		bad++;
		console.log(`LISTED AS A GAP BUT NO SUCH STATEMENT ${id}`);
	}
console.log(`${db}: ${ok} parsed, ${known} known grammar gaps, ${bad} failures`);
process.exit(bad ? 1 : 0);
