/**
 * Loaded into a measured process with `--import` (bench/allocations.ts): the first SIGUSR2 starts
 * V8's sampling heap profiler, counting the objects the garbage collector has already taken back
 * too (what a request allocates, not only what it keeps); the second writes the profile to
 * EFS_HEAP_SAMPLING_FILE and stops it.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const file = process.env.EFS_HEAP_SAMPLING_FILE;
if (!file) throw new Error('bench/heapSampling.ts needs EFS_HEAP_SAMPLING_FILE');
const session = new Session();
session.connect();
let sampling = false;
process.on('SIGUSR2', () => {
  if (!sampling) {
    sampling = true;
    session.post('HeapProfiler.enable', () =>
      session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }),
    );
    return;
  }
  session.post('HeapProfiler.stopSampling', (err, result) => {
    if (err) throw err;
    writeFileSync(file, JSON.stringify(result.profile));
    sampling = false;
  });
});
