// Times the real AgentOS package's writing tools on one brain, an op at a time, on request:
// the process stays open, so its writes can alternate with another program's one by one.
//
// usage: node agentos_ops_serve.mjs <brain path> <brainId> <json file {"adds": [text...],
//        "updates": [{"traceId", "content"}...], "deletes": [traceId...]}>
// It prints "ready", then for each line read from stdin, "<op> <n>", the time in µs of one
// call of the tool on the n-th item of its list: "add" (`memory_add`, as
// agentos_tools_bench.mjs adds), "update" (`memory_update`), "delete" (`memory_delete`);
// and ends at end of input. The caller sets AGENTOS_NODE_MODULES to the `npm install
// --prefix` folder holding the package.
import { readFileSync } from 'node:fs';
import readline from 'node:readline';

import { openTools, scriptArguments } from './agentos_tools.mjs';

const [brainPath, brainId, workPath] = scriptArguments('agentos_ops_serve.mjs', 'WORK');
const work = JSON.parse(readFileSync(workPath, 'utf8'));
const { tools, context } = await openTools(brainPath, brainId);

const CALLS = {
  add: (n) => ['memory_add', { content: work.adds[n], type: 'semantic' }],
  update: (n) => ['memory_update', work.updates[n]],
  delete: (n) => ['memory_delete', { traceId: work.deletes[n] }],
};

process.stdout.write('ready\n');
for await (const line of readline.createInterface({ input: process.stdin })) {
  const [op, index] = line.split(' ');
  const [name, args] = CALLS[op](Number(index));
  const start = process.hrtime.bigint();
  const result = await tools[name].execute(args, context);
  const us = Number(process.hrtime.bigint() - start) / 1e3;
  if (!result.success) throw new Error(`${name} failed: ${result.error}`);
  if (result.output?.updated === false || result.output?.deleted === false) {
    throw new Error(`${name} found nothing: ${JSON.stringify(args)}`); // each op's trace is there
  }
  process.stdout.write(`${us}\n`);
}
process.exit(0); // the copy is thrown away: the package's brain is left unclosed
