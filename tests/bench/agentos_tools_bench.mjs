// Times the real AgentOS package's memory tools on a brain, in process (no transport).
//
// usage: node agentos_tools_bench.mjs <brain path> <brainId> <json {"adds": [...], "queries": [...],
//        "updates": [{"traceId", "content"}...] (optional), "deletes": [traceId...] (optional)}>
// prints: {"memory_add": [seconds...], "memory_search": [...], "memory_update": [...],
//          "memory_delete": [...], "hits": n}
//
// The caller sets AGENTOS_NODE_MODULES to the `npm install --prefix` folder holding the package.
import { readFileSync } from 'node:fs';

import { openTools, scriptArguments } from './agentos_tools.mjs';

const [brainPath, brainId, workPath] = scriptArguments('agentos_tools_bench.mjs', 'WORK');
const work = JSON.parse(readFileSync(workPath, 'utf8'));
const { memory, tools, context } = await openTools(brainPath, brainId);

async function timed(name, argsList) {
  const out = [];
  let hits = 0;
  for (const args of argsList) {
    const start = process.hrtime.bigint();
    const result = await tools[name].execute(args, context);
    out.push(Number(process.hrtime.bigint() - start) / 1e9);
    if (!result.success) throw new Error(`${name} failed: ${result.error}`);
    hits += result.output?.results?.length ?? 0;
  }
  return [out, hits];
}

const [adds] = await timed('memory_add', work.adds.map((content) => ({ content, type: 'semantic' })));
const [searches, hits] = await timed(
  'memory_search',
  work.queries.map((query) => ({ query, limit: 10 })),
);
// Optional: {"updates": [{"traceId", "content"}...], "deletes": [traceId...]}, after the rest.
const [updates] = await timed('memory_update', work.updates ?? []);
const [deletes] = await timed(
  'memory_delete',
  (work.deletes ?? []).map((traceId) => ({ traceId })),
);
await memory.close();
process.stdout.write(
  JSON.stringify({
    memory_add: adds,
    memory_search: searches,
    memory_update: updates,
    memory_delete: deletes,
    hits,
  }),
);
