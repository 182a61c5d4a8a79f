// Opens a brain with the real AgentOS package and reports what AgentOS itself sees.
//
// usage: node agentos_probe.mjs <brain path> <brainId> <json list of queries>
// prints: {"searches": [{"query", "success", "results": [{id, content, ...}], "error"}],
//          "health": {...}, "brain_traces": [{id, content}], "tool_names": [...]}
//
// Opening a brain with AgentOS writes to it (brain_meta rows, WAL), so callers run this on a copy.
// The caller sets AGENTOS_NODE_MODULES to the `npm install --prefix` folder holding the package.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

function fail(message) {
  process.stderr.write(`agentos_probe: ${message}\n`);
  process.exit(2);
}

const [brainPath, brainId, queriesJson] = process.argv.slice(2);
if (!brainPath || !brainId || queriesJson === undefined) {
  fail('usage: node agentos_probe.mjs <brain path> <brainId> <json list of queries>');
}
let queries;
try {
  queries = JSON.parse(queriesJson);
} catch (err) {
  fail(`queries must be a JSON list of strings: ${err.message}`);
}
if (!Array.isArray(queries) || !queries.every((q) => typeof q === 'string')) {
  fail('queries must be a JSON list of strings');
}
// AgentOS would create a missing file and report an empty brain; a typo must not look like that.
if (!existsSync(brainPath)) fail(`brain file not found: ${brainPath}`);

// ESM ignores NODE_PATH, so resolve the package's entry point from the install folder by hand.
const modulesDir = process.env.AGENTOS_NODE_MODULES;
if (!modulesDir) fail('AGENTOS_NODE_MODULES is not set');
const requireFromInstall = createRequire(path.resolve(modulesDir, 'package.json'));
let memoryEntry;
try {
  // The package is ESM-only with an "exports" map; resolve its package.json and follow the map.
  const pkgJsonPath = requireFromInstall.resolve('@framers/agentos/package.json');
  const pkg = requireFromInstall(pkgJsonPath);
  memoryEntry = path.join(path.dirname(pkgJsonPath), pkg.exports['./memory'].import);
} catch (err) {
  fail(`cannot find @framers/agentos under ${modulesDir}: ${err.message}`);
}
const { Memory } = await import(pathToFileURL(memoryEntry).href);

// Offline: no `embed` function and no embeddings provider, so nothing reaches the network;
// selfImprove off so no consolidation or feedback machinery runs. brainId is passed because
// AgentOS would otherwise derive it from the file name.
const memory = await Memory.createSqlite(
  { path: brainPath, selfImprove: false },
  { brainId },
);

// The context only matters for scoped searches; these searches are unscoped.
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
  // recentTraces filters by brain_id, so this shows which live traces AgentOS counts as this brain's.
  const recent = await memory.recentTraces(0, { limit: 100000, order: 'asc' });
  const report = {
    searches,
    health: await memory.health(),
    brain_traces: recent.map((trace) => ({ id: trace.id, content: trace.content })),
    tool_names: tools.map((tool) => tool.name),
  };
  // Wait for the write to flush: stdout may be an asynchronous pipe and we exit right after.
  await new Promise((resolve) => process.stdout.write(`${JSON.stringify(report)}\n`, resolve));
} catch (err) {
  process.stderr.write(`agentos_probe: ${err.stack ?? err}\n`);
  exitCode = 1;
} finally {
  await memory.close();
}
process.exit(exitCode);
