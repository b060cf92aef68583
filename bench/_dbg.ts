import { openWorld } from './world.ts';
import { ModeRunner } from './mode-runner.ts';
import { PgRunStore } from '../src/store/pg-run-store.ts';
const world = await openWorld({ scale: 0.1, seed: 1 });
const runner = new ModeRunner(world);
const store = new PgRunStore(world.db.db);
await store.createRun({ id: 'probe', conversation: { channel: 'b', key: 'probe' }, requester: { id: 'b', channel: 'b' }, request: 'x', at: new Date() });
async function probe(label: string) {
  const xs: number[] = [];
  for (let i = 0; i < 20; i++) { const t = performance.now(); await store.appendEvent('probe', 'p', { i }, new Date()); xs.push(performance.now() - t); await new Promise((r) => setTimeout(r, 20)); }
  xs.sort((a, b) => a - b);
  console.log(label.padEnd(30), 'p50', xs[10]!.toFixed(2), 'max', xs[19]!.toFixed(2));
}
try {
  await world.fake.flush();
  await probe('start');
  const task = world.tasks.find((t) => t.id === (process.env.TASK ?? 'large-titles-4'))!;
  for (let i = 0; i < 2; i++) { await runner.run('plan-execute', task, i, `k${i}`); await world.fake.flush(); }
  for (let j = 0; j < 8; j++) await probe(`after ${j}`);
} finally {
  runner.shutdown();
  await world.close();
}
