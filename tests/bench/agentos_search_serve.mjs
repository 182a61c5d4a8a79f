// Times the real AgentOS package's search on one brain, a query at a time, on request: the
// process stays open, so its searches can alternate with another program's one by one.
//
// usage: node agentos_search_serve.mjs <brain path> <brainId> <json file: [query, ...]>
// It prints "ready", then for each line read from stdin, "<kind> <n>", the time in µs of
// one search for the n-th query:
//   "tool <n>": `memory_search` (limit 10);
//   "statement <n>": the statement that tool runs, prepared once, through better-sqlite3
//                    on the same connection;
// and ends at end of input. The caller sets AGENTOS_NODE_MODULES to the `npm install
// --prefix` folder holding the package.
import { readFileSync } from 'node:fs';
import readline from 'node:readline';

import { openTools, requireFromInstall, scriptArguments } from './agentos_tools.mjs';

const [brainPath, brainId, queriesPath] = scriptArguments('agentos_search_serve.mjs', 'QUERIES');
const queries = JSON.parse(readFileSync(queriesPath, 'utf8'));
const { tools, context } = await openTools(brainPath, brainId);
const Database = requireFromInstall()('better-sqlite3');
const db = new Database(brainPath, { readonly: true });
// MemorySearchTool's statement for a search with no type or scope (limit 10).
const statement = db.prepare(`
  SELECT mt.id, mt.content, mt.type, mt.scope, mt.strength, mt.tags
  FROM memory_traces_fts fts JOIN memory_traces mt ON mt.rowid = fts.rowid
  WHERE memory_traces_fts MATCH ? AND mt.deleted = 0
  ORDER BY fts.rank LIMIT ?`);

async function toolOnce(query) {
  const start = process.hrtime.bigint();
  const result = await tools.memory_search.execute({ query, limit: 10 }, context);
  const us = Number(process.hrtime.bigint() - start) / 1e3;
  if (!result.success) throw new Error(`memory_search failed: ${result.error}`);
  return us;
}

function statementOnce(query) {
  const start = process.hrtime.bigint();
  statement.all(query, 10);
  return Number(process.hrtime.bigint() - start) / 1e3;
}

process.stdout.write('ready\n');
for await (const line of readline.createInterface({ input: process.stdin })) {
  const [kind, index] = line.split(' ');
  const query = queries[Number(index)];
  const us = kind === 'tool' ? await toolOnce(query) : statementOnce(query);
  process.stdout.write(`${us}\n`);
}
db.close();
process.exit(0); // the copy is thrown away: the package's brain is left unclosed
