// examples/api/enqueue.mjs — enqueue a task through sked's JSON API from
// Node.js (18 or later: fetch is built in), then read it back.
//
//   SKED_API_URL=http://127.0.0.1:8420 SKED_API_TOKEN=... \
//     node enqueue.mjs send-mail '{"to": "ada@example.com"}'
//
// The dashboard serves the API when started with --api-token
// (docs/api.md). Exit 0, or 1 with the API's error message.
const base = process.env.SKED_API_URL ?? "http://127.0.0.1:8420";
const token = process.env.SKED_API_TOKEN;
const [kind, payload = "null"] = process.argv.slice(2);
if (!token || !kind) {
  console.error("usage: SKED_API_TOKEN=... node enqueue.mjs KIND [JSON]");
  process.exit(64);
}

async function api(method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body ? { "Content-Type": "application/json" } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const answer = await res.json();
  if (!res.ok) {
    // every refusal: {"error": {"code": SYSEXITS, "message": "..."}}
    console.error(`sked: ${answer.error.message}`);
    process.exit(1);
  }
  return answer;
}

const { id } = await api("POST", "/api/tasks", {
  kind,
  payload: JSON.parse(payload),
  in: "1s",
  max_attempts: 3,
});
const task = await api("GET", `/api/tasks/${id}`);
console.log(`${id} ${task.status} ${task.payload}`);
