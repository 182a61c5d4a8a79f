// Opens a shared brain in PostgreSQL with the real AgentOS package (Memory.createPostgres, which
// is Brain.openPostgres), reports what AgentOS sees, and remembers what it is given.
//
// usage: node agentos_postgres.mjs <postgresql url> <brainId> <json queries> <json texts>
// prints: {"searches": [{"query", "success", "results": [...], "error"}],
//          "brain_traces": [{id, content}], "remembered": [id, ...]}
//
// The caller sets AGENTOS_NODE_MODULES to the `npm install --prefix` folder holding the package.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

function fail(message) {
  process.stderr.write(`agentos_postgres: ${message}\n`);
  process.exit(2);
}

const [url, brainId, queriesJson, textsJson] = process.argv.slice(2);
if (!url || !brainId || queriesJson === undefined || textsJson === undefined) {
  fail('usage: node agentos_postgres.mjs <postgresql url> <brainId> <json queries> <json texts>');
}
const queries = JSON.parse(queriesJson);
const texts = JSON.parse(textsJson);
const modulesDir = process.env.AGENTOS_NODE_MODULES;
if (!modulesDir) fail('AGENTOS_NODE_MODULES is not set');
const requireFromInstall = createRequire(path.resolve(modulesDir, 'package.json'));
const pkgJsonPath = requireFromInstall.resolve('@framers/agentos/package.json');
const pkg = requireFromInstall(pkgJsonPath);
const memoryEntry = path.join(path.dirname(pkgJsonPath), pkg.exports['./memory'].import);
const { Memory } = await import(pathToFileURL(memoryEntry).href);

// Offline: no embeddings provider, nothing reaches the network; selfImprove off.
const memory = await Memory.createPostgres(url, { brainId, selfImprove: false });
const context = {
  gmiId: 'memgui-interop',
  personaId: 'memgui-interop',
  userContext: { userId: 'memgui-interop' },
};
let exitCode = 0;
try {
  const tools = memory.createTools({ includeReflect: false });
  const search = tools.find((tool) => tool.name === 'memory_search');
  if (!search) fail('AgentOS createTools() has no memory_search tool');
  const searches = [];
  for (const query of queries) {
    const result = await search.execute({ query, limit: 100 }, context);
    searches.push({
      query,
      success: result.success,
      results: result.success ? result.output.results : [],
      error: result.success ? null : result.error,
    });
  }
  const recent = await memory.recentTraces(0, { limit: 100000, order: 'asc' });
  const remembered = [];
  for (const text of texts) {
    remembered.push((await memory.remember(text, {})).id);
  }
  const report = {
    searches,
    brain_traces: recent.map((trace) => ({ id: trace.id, content: trace.content })),
    remembered,
  };
  await new Promise((resolve) => process.stdout.write(`${JSON.stringify(report)}\n`, resolve));
} catch (err) {
  process.stderr.write(`agentos_postgres: ${err.stack ?? err}\n`);
  exitCode = 1;
} finally {
  await memory.close();
}
process.exit(exitCode);
