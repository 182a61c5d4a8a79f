// Reads and writes the knowledge graph of a shared brain in PostgreSQL with the real AgentOS
// package (Memory.createPostgres, its SqlKnowledgeGraph): what AgentOS sees around a node
// memgui wrote, and the entities and relation AgentOS adds next to it.
//
// usage: node agentos_pg_graph.mjs <postgresql url> <brainId> <node id memgui wrote>
// prints: {"unpatched_read_error": text, "neighbourhood": {"entities": [{id, label, type}],
//          "relations": [{id, sourceId, targetId, type, weight}]},
//          "added": {"entity": id, "other": id, "relation": id}}
//
// AgentOS 0.9.164 reads a graph row's BIGINT created_at as node-postgres returns it, a string,
// and `new Date("1764…")` is invalid: on Postgres its SqlKnowledgeGraph cannot read any row,
// its own included. The script first records that failure, then asks node-postgres (the
// driver AgentOS loads) to return BIGINT as a number, as on SQLite, and reads again.
//
// The caller sets AGENTOS_NODE_MODULES to the `npm install --prefix` folder holding the package.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

function fail(message) {
  process.stderr.write(`agentos_pg_graph: ${message}\n`);
  process.exit(2);
}

const [url, brainId, nodeId] = process.argv.slice(2);
if (!url || !brainId || !nodeId) {
  fail('usage: node agentos_pg_graph.mjs <postgresql url> <brainId> <node id>');
}
const modulesDir = process.env.AGENTOS_NODE_MODULES;
if (!modulesDir) fail('AGENTOS_NODE_MODULES is not set');
const requireFromInstall = createRequire(path.resolve(modulesDir, 'package.json'));
const pkgJsonPath = requireFromInstall.resolve('@framers/agentos/package.json');
const pkg = requireFromInstall(pkgJsonPath);
const memoryEntry = path.join(path.dirname(pkgJsonPath), pkg.exports['./memory'].import);
const { Memory } = await import(pathToFileURL(memoryEntry).href);

// Offline: no embeddings provider, nothing reaches the network; selfImprove off.
const memory = await Memory.createPostgres(url, { brainId, selfImprove: false, graph: true });
let exitCode = 0;
try {
  let unpatchedReadError = null;
  try {
    await memory.graph.getNeighborhood(nodeId, 2);
  } catch (err) {
    unpatchedReadError = String(err);
  }
  const pg = requireFromInstall('pg');
  pg.types.setTypeParser(20, (text) => Number(text)); // int8: epoch milliseconds fit exactly
  const around = await memory.graph.getNeighborhood(nodeId, 2);
  const neighbourhood = {
    entities: around.entities.map((e) => ({ id: e.id, label: e.label, type: e.type })),
    relations: around.relations.map((r) => ({
      id: r.id,
      sourceId: r.sourceId,
      targetId: r.targetId,
      type: r.type,
      weight: r.weight,
    })),
  };
  const entity = await memory.addEntity({ label: 'Staging database', type: 'system' });
  const other = await memory.addEntity({ label: 'Port 5433', type: 'concept' });
  const relation = await memory.addRelation({
    sourceId: entity.id,
    targetId: nodeId,
    type: 'runs_on',
    weight: 0.75,
  });
  await memory.addRelation({ sourceId: entity.id, targetId: other.id, type: 'listens_on' });
  const report = {
    unpatched_read_error: unpatchedReadError,
    neighbourhood,
    added: { entity: entity.id, other: other.id, relation: relation.id },
  };
  await new Promise((resolve) => process.stdout.write(`${JSON.stringify(report)}\n`, resolve));
} catch (err) {
  process.stderr.write(`agentos_pg_graph: ${err.stack ?? err}\n`);
  exitCode = 1;
} finally {
  await memory.close();
}
process.exit(exitCode);
