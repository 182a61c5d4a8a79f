// Writes to a brain with the real AgentOS package, as an agent would.
//
// usage: node agentos_writer.mjs <brain path> <brainId> <json list of operations>
//   {"op": "remember", "content", "scope", "scopeId"}       Memory.remember()
//   {"op": "tool", "name", "args", "userId"}                a createTools() tool (memory_update…)
//   {"op": "entity", "label", "type"}                       Memory.addEntity()
//   {"op": "relation", "id"?, "sourceId", "targetId", "type"}  Memory.addRelation() (an upsert)
// prints: [{"op", "id"?, "success"?, "output"?, "error"?}, ...]; exit 1 if one failed.
//
// The caller sets AGENTOS_NODE_MODULES to the `npm install --prefix` folder holding the package.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

function fail(message) {
  process.stderr.write(`agentos_writer: ${message}\n`);
  process.exit(2);
}

const [brainPath, brainId, opsJson] = process.argv.slice(2);
if (!brainPath || !brainId || opsJson === undefined) {
  fail('usage: node agentos_writer.mjs <brain path> <brainId> <json list of operations>');
}
if (!existsSync(brainPath)) fail(`brain file not found: ${brainPath}`);
const modulesDir = process.env.AGENTOS_NODE_MODULES;
if (!modulesDir) fail('AGENTOS_NODE_MODULES is not set');
const requireFromInstall = createRequire(path.resolve(modulesDir, 'package.json'));
const pkgJsonPath = requireFromInstall.resolve('@framers/agentos/package.json');
const pkg = requireFromInstall(pkgJsonPath);
const memoryEntry = path.join(path.dirname(pkgJsonPath), pkg.exports['./memory'].import);
const { Memory } = await import(pathToFileURL(memoryEntry).href);

const memory = await Memory.createSqlite({ path: brainPath, selfImprove: false }, { brainId });
const tools = memory.createTools({ includeReflect: false });
const results = [];
let failed = false;
for (const op of JSON.parse(opsJson)) {
  try {
    if (op.op === 'remember') {
      const trace = await memory.remember(op.content, { scope: op.scope, scopeId: op.scopeId });
      results.push({ op: op.op, id: trace.id });
    } else if (op.op === 'entity') {
      const entity = await memory.addEntity({ label: op.label, type: op.type });
      results.push({ op: op.op, id: entity.id });
    } else if (op.op === 'relation') {
      const { id, sourceId, targetId, type } = op;
      const relation = await memory.addRelation({ id, sourceId, targetId, type });
      results.push({ op: op.op, id: relation.id });
    } else if (op.op === 'tool') {
      const tool = tools.find((t) => t.name === op.name);
      if (!tool) throw new Error(`no tool ${op.name}`);
      const context = {
        gmiId: 'memgui-interop',
        personaId: 'memgui-interop',
        userContext: { userId: op.userId ?? 'memgui-interop' },
      };
      const result = await tool.execute(op.args, context);
      if (!result.success) failed = true;
      results.push({ op: op.name, success: result.success, output: result.output });
    } else {
      throw new Error(`unknown operation ${op.op}`);
    }
  } catch (err) {
    failed = true;
    results.push({ op: op.op, error: String(err?.stack ?? err) });
  }
}
await memory.close();
await new Promise((resolve) => process.stdout.write(`${JSON.stringify(results)}\n`, resolve));
process.exit(failed ? 1 : 0);
