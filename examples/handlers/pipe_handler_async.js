#!/usr/bin/env node
// A sked pipe: handler in Node.js that runs several tasks at once, no npm
// packages.
//
// Run it as
// `sked worker --concurrency 8 --handler email=pipe:examples/handlers/pipe_handler_async.js`.
// Its hello announces a window: sked keeps up to that many tasks in flight
// on this one process and matches the answers by id, in any order. On
// {"cancel": ID} (a timeout, a cancel, a lost lease) stop that task and
// answer it within 2 s, or the process is killed with every task it has in
// flight. Logs go to stderr. Put your work in handle().
'use strict';
const readline = require('node:readline');

const WINDOW = Number(process.env.PIPE_WINDOW || 8);

async function handle(task, signal) {
  if (task.payload === 'fail') throw new Error('asked to fail');
  // an HTTP call, a query, …: pass signal on so that a cancel stops it
  await new Promise((resolve, reject) => {
    const t = setTimeout(resolve, 10);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      reject(new Error('cancelled'));
    });
  });
  process.stderr.write(`task ${task.id} attempt ${task.attempt}\n`);
  return undefined; // or a result: a string, or any JSON value
}

function send(msg) {
  process.stdout.write(JSON.stringify(msg) + '\n');
}

const running = new Map();

async function run(task) {
  const ac = new AbortController();
  running.set(task.id, ac);
  let answer;
  try {
    const result = await handle(task, ac.signal);
    answer = { id: task.id, ok: true };
    if (result !== undefined) answer.result = result;
  } catch (e) {
    answer = { id: task.id, ok: false, error: String(e.message || e) };
  }
  running.delete(task.id);
  send(answer);
}

send({ hello: 'pipe_handler_async.js', version: 1, window: WINDOW });
const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on('line', (line) => {
  const msg = JSON.parse(line);
  if (msg.cancel !== undefined) {
    const ac = running.get(msg.cancel);
    if (ac) ac.abort();
    return;
  }
  if (msg.id === undefined) return; // sked's hello, or a later message
  run(msg);
});
