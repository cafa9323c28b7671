// tests/openapi/validate.mjs SPEC [ANSWERS] — docs/openapi.yaml is a valid
// OpenAPI 3 document (swagger-parser: the document's own schema and its
// $refs); with ANSWERS, the file tests/integration/t_api.sh wrote (one
// line per request: METHOD PATH STATUS BODYFILE), every answer matches
// the document: the operation declares that status and the body fits its
// schema, a refusal is the one error shape, and every operation of the
// document was answered with success at least once. Exit 0, or 1 with a
// line per problem.
import SwaggerParser from "@apidevtools/swagger-parser";
import { readFileSync } from "node:fs";

const [specPath, answersPath] = process.argv.slice(2);
let api;
try {
  api = await SwaggerParser.validate(specPath);
} catch (e) {
  console.error(`FAIL: ${specPath}: ${e.message}`);
  process.exit(1);
}
console.log(`${specPath}: a valid OpenAPI ${api.openapi} document, ` +
            `${Object.keys(api.paths).length} paths`);
if (!answersPath) process.exit(0);

const problems = [];
const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

// the subset of OpenAPI 3.0 schemas the document uses
function check(s, v, at) {
  if (v === null) {
    if (s.nullable || !("type" in s || "allOf" in s)) return;
    if (s.allOf && s.allOf.some((x) => x.nullable)) return;
    problems.push(`${at}: null where the document says not nullable`);
    return;
  }
  for (const sub of s.allOf || []) check(sub, v, at);
  if (s.enum && !s.enum.includes(v))
    problems.push(`${at}: ${JSON.stringify(v)} is not one of ${s.enum}`);
  const t = s.type;
  const is = {
    object: typeof v === "object" && !Array.isArray(v),
    array: Array.isArray(v),
    string: typeof v === "string",
    integer: Number.isInteger(v),
    number: typeof v === "number",
    boolean: typeof v === "boolean",
  };
  if (t && !is[t]) {
    problems.push(`${at}: ${JSON.stringify(v)} is not a ${t}`);
    return;
  }
  if (t === "string" && s.format === "date-time" && !iso.test(v))
    problems.push(`${at}: '${v}' is not an ISO-8601 time`);
  if (t === "integer" && s.minimum !== undefined && v < s.minimum)
    problems.push(`${at}: ${v} is below ${s.minimum}`);
  if (t === "array") v.forEach((x, i) => check(s.items, x, `${at}[${i}]`));
  if (t === "object" || s.properties) {
    for (const r of s.required || [])
      if (!(r in v)) problems.push(`${at}: no '${r}'`);
    for (const [k, x] of Object.entries(v)) {
      if (s.properties && k in s.properties)
        check(s.properties[k], x, `${at}.${k}`);
      else if (s.additionalProperties === false)
        problems.push(`${at}: '${k}' is not in the document`);
    }
  }
}

// the document's operation for a concrete path: exact paths first
function operation(method, path) {
  const m = method.toLowerCase();
  if (api.paths[path]) return [path, api.paths[path][m]];
  for (const [tpl, item] of Object.entries(api.paths)) {
    const re = new RegExp("^" + tpl.replace(/\{[^}]+\}/g, "[^/]+") + "$");
    if (re.test(path)) return [tpl, item[m]];
  }
  return [null, undefined];
}

const errorSchema = api.components.schemas.Error;
const answered = new Set();
const lines = readFileSync(answersPath, "utf8").split("\n").filter(Boolean);
for (const line of lines) {
  const [method, rawPath, status, file] = line.split(" ");
  const path = rawPath.split("?")[0];
  const where = `${method} ${rawPath} ${status}`;
  let body;
  try {
    body = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    problems.push(`${where}: the answer is not JSON: ${e.message}`);
    continue;
  }
  const [tpl, op] = operation(method === "HEAD" ? "GET" : method, path);
  if (!op) {
    // no such operation: it must be a refusal in the one shape
    if (Number(status) < 400)
      problems.push(`${where}: success on an operation not in the document`);
    check(errorSchema, body, where);
    continue;
  }
  const resp = op.responses[status];
  if (!resp) {
    problems.push(`${where}: ${tpl} ${method} does not declare ${status}`);
    continue;
  }
  const schema = resp.content?.["application/json"]?.schema;
  if (schema) check(schema, body, where);
  if (Number(status) < 300) answered.add(`${method} ${tpl}`);
}
for (const [tpl, item] of Object.entries(api.paths))
  for (const m of Object.keys(item))
    if (["get", "post", "put", "delete", "patch"].includes(m) &&
        !answered.has(`${m.toUpperCase()} ${tpl}`))
      problems.push(`${m.toUpperCase()} ${tpl}: never answered with success ` +
                    "by the test");
for (const p of problems) console.error(`FAIL: ${p}`);
console.log(`${lines.length} answers checked against ${specPath}` +
            (problems.length ? `, ${problems.length} problems` : ", all fit"));
process.exit(problems.length ? 1 : 0);
