import { runServiceProcess } from '@efs/runtime';
import { gateway } from './module.ts';

await runServiceProcess(gateway);
