import { runServiceProcess } from '@efs/runtime';
import { programCatalog } from './module.ts';

await runServiceProcess(programCatalog);
