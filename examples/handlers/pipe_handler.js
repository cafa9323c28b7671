#!/usr/bin/env node
// A sked pipe: handler in Node.js, no npm packages.
//
// Run it as `sked worker --handler email=pipe:examples/handlers/pipe_handler.js`.
// One task per line on stdin, one answer per line on stdout; lines without
// "id" are ignored. Logs go to stderr. Put your work in handle(); it may be
// async, since sked sends the next task only after this one's answer.
'use strict';
const readline = require('node:readline');

async function handle(task) {
  if (task.payload === 'fail') throw new Error('asked to fail');
  process.stderr.write(`task ${task.id} attempt ${task.attempt}\n`);
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on('line', async (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  rl.pause();
  let answer;
  try {
    await handle(msg);
    answer = { id: msg.id, ok: true };
  } catch (e) {
    answer = { id: msg.id, ok: false, error: String(e.message || e) };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
  rl.resume();
});
