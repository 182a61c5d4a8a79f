// The real AgentOS package's memory tools on a brain, for the benchmark scripts beside this
// file: the package from the `npm install --prefix` folder AGENTOS_NODE_MODULES names (the
// interop tests' install), its `Memory` facade on the brain, and the tools it makes.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// The script's three arguments (brain path, brain id, a JSON file), or its usage and exit 2.
export function scriptArguments(script, third) {
  const [brainPath, brainId, file] = process.argv.slice(2);
  if (!brainPath || !brainId || !file || !process.env.AGENTOS_NODE_MODULES) {
    process.stderr.write(`usage: AGENTOS_NODE_MODULES=… node ${script} BRAIN ID ${third}\n`);
    process.exit(2);
  }
  return [brainPath, brainId, file];
}

export function requireFromInstall() {
  return createRequire(path.resolve(process.env.AGENTOS_NODE_MODULES, 'package.json'));
}

// {memory, tools: {name: tool}, context}: AgentOS's tools on the brain, as its agents get them.
export async function openTools(brainPath, brainId) {
  const fromInstall = requireFromInstall();
  const pkgJsonPath = fromInstall.resolve('@framers/agentos/package.json');
  const pkg = fromInstall(pkgJsonPath);
  const memoryEntry = path.join(path.dirname(pkgJsonPath), pkg.exports['./memory'].import);
  const { Memory } = await import(pathToFileURL(memoryEntry).href);
  const memory = await Memory.createSqlite({ path: brainPath, selfImprove: false }, { brainId });
  const tools = Object.fromEntries(
    memory.createTools({ includeReflect: false }).map((t) => [t.name, t]),
  );
  const context = { gmiId: 'bench', personaId: 'bench', userContext: { userId: 'bench' } };
  return { memory, tools, context };
}
