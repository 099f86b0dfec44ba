import { runServiceProcess } from '@efs/runtime';
import { commissioningModule } from './module.ts';

await runServiceProcess(commissioningModule);
