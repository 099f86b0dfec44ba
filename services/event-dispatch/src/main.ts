import { runServiceProcess } from '@efs/runtime';
import { dispatchModule } from './module.ts';

await runServiceProcess(dispatchModule);
