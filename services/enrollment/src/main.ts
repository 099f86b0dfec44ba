import { runServiceProcess } from '@efs/runtime';
import { enrollmentModule } from './module.ts';

await runServiceProcess(enrollmentModule);
